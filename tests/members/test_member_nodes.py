"""Inside a simulated member with nodes: controllers, scheduler and taint eviction."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from fleetwarden.api.core import Taint
from fleetwarden.members.inside.cluster import MemberKube
from fleetwarden.members.inside.machines import MachineSetSpec, scale
from fleetwarden.members.inside.nodes import NodeSpec

T0 = datetime(2025, 1, 1, tzinfo=UTC)


def workload(kind: str, name: str, replicas: int = 2, **pod_spec: Any) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "template": {
            "metadata": {"labels": {"app": name}},
            "spec": {"containers": [{"name": "c"}], **pod_spec},
        }
    }
    if kind != "DaemonSet":
        spec["replicas" if kind != "Job" else "parallelism"] = replicas
    return {"apiVersion": "apps/v1", "kind": kind, "metadata": {"name": name,
            "namespace": "default"}, "spec": spec}  # fmt: skip


def pods(kube: MemberKube, now: datetime = T0) -> list[tuple[str, str | None]]:
    return sorted(
        (o["metadata"]["name"], o["spec"].get("nodeName"))
        for o in kube.objects(now)
        if o["kind"] == "Pod"
    )


def test_statefulset_pods_keep_their_names_and_move_when_their_node_goes() -> None:
    kube = MemberKube([NodeSpec("a"), NodeSpec("b")], T0)
    kube.apply(workload("StatefulSet", "db"), T0)
    assert pods(kube) == [("db-0", "a"), ("db-1", "b")]
    kube.set_nodes([NodeSpec("b")], T0 + timedelta(seconds=1))
    assert [name for name, _ in pods(kube)] == ["db-0", "db-1"]
    assert {node for _, node in pods(kube)} == {"b"}
    kube.apply(workload("StatefulSet", "db", 3), T0 + timedelta(seconds=2))
    kube.apply(workload("StatefulSet", "db", 1), T0 + timedelta(seconds=3))
    assert pods(kube) == [("db-0", "b")]


def test_a_tolerated_no_execute_taint_evicts_at_its_own_instant_even_when_synced_late() -> None:
    kube = MemberKube([NodeSpec("a"), NodeSpec("b", unschedulable=True)], T0)
    toleration = {"key": "k", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 60}
    key = kube.apply(workload("ReplicaSet", "web", 1, tolerations=[toleration]), T0)
    [(name, _)] = pods(kube)
    taints = (Taint(key="k", effect="NoExecute"), Taint(key="k", effect="NoSchedule"))
    kube.set_nodes([NodeSpec("a", taints=taints), NodeSpec("b")], T0)
    assert kube.next_change(T0) == T0 + timedelta(seconds=60)
    assert pods(kube, T0 + timedelta(seconds=59)) == [(name, "a")]
    # Synced only at 10m: evicted at 60 s, and its replacement made and bound to b then.
    [(other, node)] = pods(kube, T0 + timedelta(minutes=10))
    assert (other != name, node) == (True, "b")
    replacement = next(p for p in kube.pods.values())
    assert replacement.bound_at == T0 + timedelta(seconds=60)
    assert kube.workload_object(key, T0 + timedelta(minutes=10))["status"]["readyReplicas"] == 1


def test_job_parallelism_and_daemon_set_per_node_and_pod_ready_after() -> None:
    kube = MemberKube([NodeSpec("a"), NodeSpec("b", taints=(Taint(key="x", effect="NoSchedule"),))],
                      T0)  # fmt: skip
    kube.ready_after = timedelta(seconds=20)
    job = kube.apply(workload("Job", "batch", 3), T0)
    daemons = kube.apply(workload("DaemonSet", "agent"), T0)
    assert kube.workload_object(job, T0)["status"] == {"active": 3, "ready": 0}
    assert kube.workload_object(job, T0 + timedelta(seconds=20))["status"]["ready"] == 3
    status = kube.workload_object(daemons, T0)["status"]
    assert status["desiredNumberScheduled"] == 1  # b's NoSchedule taint is not tolerated


def test_resource_summary_from_nodes_and_pods() -> None:
    kube = MemberKube([NodeSpec("a", allocatable={"cpu": "2", "memory": "4Gi", "pods": "10"})], T0)
    kube.apply(
        workload(
            "ReplicaSet",
            "web",
            3,
            containers=[{"name": "c", "resources": {"requests": {"cpu": "800m", "memory": "1Gi"}}}],
        ),
        T0,
    )
    allocatable, allocated, allocating = kube.resource_summary()
    assert allocatable == {"cpu": "2", "memory": "4Gi", "pods": "10"}
    assert allocated == {"cpu": "1600m", "memory": "2Gi", "pods": "2"}
    assert allocating == {"cpu": "800m", "memory": "1Gi", "pods": "1"}


def test_a_machine_set_scales_its_nodes_and_only_new_machines_get_a_new_template() -> None:
    plain = MachineSetSpec("infra", 2, {"role": "infra"}, ())
    nodes, made = scale([NodeSpec("worker")], 0, plain)
    assert [(n.name, n.machine_set) for n in nodes] == [
        ("worker", None), ("infra-0", "infra"), ("infra-1", "infra")]  # fmt: skip
    tainted = MachineSetSpec("infra", 3, {"role": "infra"}, (Taint(key="k", effect="NoExecute"),))
    nodes, made = scale(nodes, made, tainted)
    assert [(n.name, len(n.taints)) for n in nodes[1:]] == [("infra-0", 0), ("infra-1", 0),
                                                             ("infra-2", 1)]  # fmt: skip
    nodes, made = scale(nodes, made, MachineSetSpec("infra", 1, {}, ()))
    assert ([n.name for n in nodes], made) == (["worker", "infra-0"], 3)


def test_an_unreachable_node_turns_unknown_after_the_grace_period_then_its_pods_go() -> None:
    kube = MemberKube([NodeSpec("a"), NodeSpec("b", unschedulable=True)], T0)
    kube.apply(workload("ReplicaSet", "web", 1), T0)
    kube.set_nodes([NodeSpec("a", reachable=False), NodeSpec("b")], T0)
    node = kube.nodes["a"]
    assert (node.ready_status, node.taints) == ("True", [])
    assert kube.next_change(T0) == T0 + timedelta(seconds=40)
    kube.sync(T0 + timedelta(seconds=40))
    assert node.ready_status == "Unknown"
    assert [(t.key, t.effect, t.time_added) for t in node.taints] == [
        ("node.kubernetes.io/unreachable", "NoSchedule", T0 + timedelta(seconds=40)),
        ("node.kubernetes.io/unreachable", "NoExecute", T0 + timedelta(seconds=40)),
    ]
    # The pod's default 300 s toleration of unreachable counts from the taint's timeAdded.
    assert pods(kube, T0 + timedelta(seconds=339))[0][1] == "a"
    assert pods(kube, T0 + timedelta(seconds=340))[0][1] == "b"
