"""kube-scheduler's filters, scores and message; the node lifecycle's taints; admission's
default tolerations; karmada-scheduler-estimator's count."""

from __future__ import annotations

from fleetwarden.api.core import NodeSelector, Taint, Toleration
from fleetwarden.semantics.pod_scheduling import (
    NodeInfo,
    PodNeeds,
    condition_taints,
    default_tolerations,
    filter_node,
    fit_error,
    max_replicas,
    resource_amounts,
    select_node,
)

GPU = Taint(key="dedicated", value="gpu", effect="NoSchedule")


def node(name: str, *taints: Taint, cpu: str = "4", pods: str = "110", **labels: str) -> NodeInfo:
    allocatable = resource_amounts({"cpu": cpu, "memory": "16Gi", "pods": pods})
    return NodeInfo.of(name, labels, taints, False, allocatable)


def test_the_message_counts_each_reason_sorted_as_kube_scheduler_words_it() -> None:
    nodes = [node("gpu-0", GPU), node("w-0", cpu="1"), node("w-1", cpu="1")]
    pod = PodNeeds(resource_amounts({"cpu": "2"}))
    assert select_node(pod, nodes) == (
        "0/3 nodes are available: 1 node(s) had untolerated taint {dedicated: gpu}, "
        "2 Insufficient cpu."
    )


def test_a_tolerated_taint_lets_the_pod_in_and_requests_are_counted() -> None:
    pod = PodNeeds(resource_amounts({"cpu": "3"}), (Toleration(key="dedicated", value="gpu"),))
    gpu = node("gpu-0", GPU)
    chosen = select_node(pod, [gpu])
    assert chosen is gpu
    gpu.add(pod.requests)
    assert filter_node(pod, gpu) == ["Insufficient cpu"]


def test_unschedulable_nodes_selector_affinity_and_pod_count() -> None:
    cordoned = NodeInfo.of("c", {}, (), True, resource_amounts({"cpu": "4", "pods": "1"}))
    assert filter_node(PodNeeds({}), cordoned) == ["node(s) were unschedulable"]
    tolerant = PodNeeds(
        {}, (Toleration(key="node.kubernetes.io/unschedulable", operator="Exists"),)
    )
    assert filter_node(tolerant, cordoned) == []
    cordoned.add({})
    assert filter_node(tolerant, cordoned) == ["Too many pods"]
    ssd = PodNeeds({}, node_selector={"disktype": "ssd"})
    assert filter_node(ssd, node("a")) == ["node(s) didn't match Pod's node affinity/selector"]
    assert filter_node(ssd, node("b", disktype="ssd")) == []
    by_name = NodeSelector.model_validate(
        {
            "nodeSelectorTerms": [
                {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["b"]}]}
            ]
        }
    )
    assert filter_node(PodNeeds({}, affinity=by_name), node("a")) != []
    assert filter_node(PodNeeds({}, affinity=by_name), node("b")) == []


def test_prefer_no_schedule_only_scores() -> None:
    prefer = Taint(key="disktype", value="ssd", effect="PreferNoSchedule")
    tainted, plain = node("a", prefer), node("b")
    assert select_node(PodNeeds({}), [tainted, plain]) is plain
    assert select_node(PodNeeds({}), [tainted]) is tainted
    tolerant = PodNeeds({}, (Toleration(key="disktype", operator="Exists"),))
    assert select_node(tolerant, [tainted, plain]) is tainted  # tie: the first


def test_fit_error_sorts_with_the_counts() -> None:
    assert fit_error(3, [["b"], ["a"], ["b"]]) == "0/3 nodes are available: 1 a, 2 b."


def test_condition_taints() -> None:
    assert condition_taints({"Ready": "False"}, False) == [
        ("node.kubernetes.io/not-ready", "NoSchedule"),
        ("node.kubernetes.io/not-ready", "NoExecute"),
    ]
    assert condition_taints({"Ready": "Unknown", "MemoryPressure": "True"}, True) == [
        ("node.kubernetes.io/unreachable", "NoSchedule"),
        ("node.kubernetes.io/unreachable", "NoExecute"),
        ("node.kubernetes.io/memory-pressure", "NoSchedule"),
        ("node.kubernetes.io/unschedulable", "NoSchedule"),
    ]
    assert condition_taints({"Ready": "True"}, False) == []


def _keys(tolerations: list[Toleration]) -> list[tuple[str | None, str | None, int | None]]:
    return [(t.key, t.effect, t.toleration_seconds) for t in tolerations]


def test_default_toleration_seconds_unless_the_pod_has_them() -> None:
    assert _keys(default_tolerations([])) == [
        ("node.kubernetes.io/not-ready", "NoExecute", 300),
        ("node.kubernetes.io/unreachable", "NoExecute", 300),
    ]
    own = Toleration(key="node.kubernetes.io/unreachable", operator="Exists",
                     effect="NoExecute", toleration_seconds=6000)  # fmt: skip
    assert _keys(default_tolerations([own])) == [
        ("node.kubernetes.io/unreachable", "NoExecute", 6000),
        ("node.kubernetes.io/not-ready", "NoExecute", 300),
    ]
    assert default_tolerations([Toleration(operator="Exists")]) == [Toleration(operator="Exists")]


def test_daemon_set_pods_stay_and_replace_a_timed_toleration() -> None:
    timed = Toleration(key="node.kubernetes.io/not-ready", operator="Exists",
                       effect="NoExecute", toleration_seconds=10)  # fmt: skip
    keys = _keys(default_tolerations([timed], daemon=True, host_network=True))
    assert keys == [
        ("node.kubernetes.io/not-ready", "NoExecute", None),
        ("node.kubernetes.io/unreachable", "NoExecute", None),
        ("node.kubernetes.io/disk-pressure", "NoSchedule", None),
        ("node.kubernetes.io/memory-pressure", "NoSchedule", None),
        ("node.kubernetes.io/pid-pressure", "NoSchedule", None),
        ("node.kubernetes.io/unschedulable", "NoSchedule", None),
        ("node.kubernetes.io/network-unavailable", "NoSchedule", None),
    ]


def test_the_estimator_counts_only_tolerated_matching_nodes_by_fit() -> None:
    nodes = [node("gpu-0", GPU, cpu="8", gpu="yes"), node("w-0", cpu="4"), node("w-1", cpu="3")]
    nodes[1].add(resource_amounts({"cpu": "1"}))
    assert max_replicas(PodNeeds(resource_amounts({"cpu": "1"})), nodes) == 3 + 3
    gpu_pod = PodNeeds(resource_amounts({"cpu": "1"}), (Toleration(key="dedicated",
                       operator="Exists"),), node_selector={"gpu": "yes"})  # fmt: skip
    assert max_replicas(gpu_pod, nodes) == 8
    few_pods = node("p", pods="2")
    assert max_replicas(PodNeeds({}), [few_pods]) == 2
    cordoned = NodeInfo.of("c", {}, (), True, resource_amounts({"cpu": "4", "pods": "9"}))
    assert max_replicas(PodNeeds({}), [cordoned]) == 0
