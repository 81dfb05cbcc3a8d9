"""The taint manager: upstream's cases (taint_manager_test.go, binding_types_helper_test.go
GracefulEvictCluster) on the controller alone, then failovers through the whole hub, each
checked just before and just after its instant."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest
from failover_harness import FAILOVER, FailoverHub, toleration
from hub_harness import CLUSTER, CRB, EVENT, RB

from fleetwarden.api.karmada import policy
from fleetwarden.api.karmada.work import ResourceBindingSpec
from fleetwarden.api.meta import format_time
from fleetwarden.controllers.karmada.eviction import (
    POLICY_PLACEMENT_ANNOTATION,
    TaskOptions,
    graceful_evict_cluster,
    purge_mode,
)
from fleetwarden.controllers.karmada.taint_manager import (
    EvictionPacer,
    eviction_interval,
    taint_manager_controller,
)
from fleetwarden.members.simulated import MemberState
from fleetwarden.runtime.clock import VirtualClock
from fleetwarden.runtime.manager import ControllerManager, VirtualDriver
from fleetwarden.runtime.settings import FlagValue, PurgeMode, Settings
from fleetwarden.store import MemoryStore

S = timedelta(seconds=1)
Obj = dict[str, Any]

# The applied placement of upstream's cases: tolerates unreachable for 30 s.
UNREACHABLE_30S = (
    '{"clusterAffinity":{"clusterNames":["member1","member2"]},"clusterTolerations":[{"key":'
    '"cluster.karmada.io/unreachable","operator":"Exists","effect":"NoExecute",'
    '"tolerationSeconds":30}]}'
)
BOTH_30S = (
    '{"clusterAffinity":{"clusterNames":["member1","member2"]},"clusterTolerations":[{"key":'
    '"cluster.karmada.io/not-ready","operator":"Exists","effect":"NoExecute",'
    '"tolerationSeconds":30},{"key":"cluster.karmada.io/unreachable","operator":"Exists",'
    '"effect":"NoExecute","tolerationSeconds":30}]}'
)
NOT_READY = {"key": "cluster.karmada.io/not-ready", "effect": "NoExecute"}
GRACEFUL_TASK = {
    "fromCluster": "test-cluster",
    "purgeMode": "Gracefully",
    "replicas": 1,
    "reason": "TaintUntolerated",
    "producer": "TaintManager",
}


# --- GracefulEvictCluster (binding_types_helper_test.go) --------------------------------------


def _spec(clusters: list[tuple[str, int]], tasks: list[Obj] | None = None) -> ResourceBindingSpec:
    wire: Obj = {"clusters": [{"name": n, **({"replicas": r} if r else {})} for n, r in clusters]}
    if tasks is not None:
        wire["gracefulEvictionTasks"] = tasks
    return ResourceBindingSpec.model_validate(wire)


def _options(mode: str, message: str = "graceful eviction") -> TaskOptions:
    return TaskOptions(mode, "TaintManager", "TaintUntolerated", message)


def _task(cluster: str, mode: str, replicas: int, message: str = "graceful eviction") -> Obj:
    return {
        "fromCluster": cluster, "purgeMode": mode, "replicas": replicas,
        "reason": "TaintUntolerated", "message": message, "producer": "TaintManager",
    }  # fmt: skip


THREE = [("m1", 1), ("m2", 2), ("m3", 3)]


@pytest.mark.parametrize(
    ("spec", "cluster", "mode", "clusters", "tasks"),
    [
        pytest.param(_spec([("m1", 0), ("m2", 0), ("m3", 0)]), "non-exist", "", ["m1", "m2", "m3"],
                     None, id="cluster not exist should do nothing"),
        pytest.param(_spec(THREE), "m1", "Directly", ["m2", "m3"],
                     [_task("m1", "Directly", 1)], id="evict cluster from head"),
        pytest.param(_spec(THREE), "m2", "Never", ["m1", "m3"], [_task("m2", "Never", 2)],
                     id="remove cluster from middle"),
        pytest.param(_spec(THREE), "m3", "Gracefully", ["m1", "m2"],
                     [_task("m3", "Gracefully", 3)], id="remove cluster from tail"),
        pytest.param(_spec(THREE, [{"fromCluster": "original-cluster"}]), "m3", "Gracefully",
                     ["m1", "m2"], [{"fromCluster": "original-cluster"},
                                    _task("m3", "Gracefully", 3)],
                     id="eviction task should be appended to non-empty tasks"),
        pytest.param(_spec([]), "", "", [], None, id="remove cluster from empty list"),
    ],
)  # fmt: skip
def test_graceful_evict_cluster(
    spec: ResourceBindingSpec, cluster: str, mode: str, clusters: list[str], tasks: Any
) -> None:
    graceful_evict_cluster(spec, cluster, _options(mode))
    assert [t.name for t in spec.clusters or []] == clusters
    wire = spec.to_dict().get("gracefulEvictionTasks")
    assert wire == tasks


def test_same_eviction_task_is_not_appended_twice() -> None:
    first = {**_task("m1", "", 1, "graceful eviction v1")}
    del first["purgeMode"]
    spec = _spec([("m1", 1), ("m2", 2)], [first])
    assert graceful_evict_cluster(spec, "m1", _options("Gracefully", "graceful eviction v2"))
    assert [t.name for t in spec.clusters or []] == ["m2"]
    assert spec.to_dict()["gracefulEvictionTasks"] == [first]


def test_a_cluster_without_replicas_makes_a_task_without_them() -> None:
    spec = _spec([("m1", 0)])
    graceful_evict_cluster(
        spec, "m1", TaskOptions("Gracefully", "TaintManager", "TaintUntolerated")
    )
    assert spec.to_dict()["gracefulEvictionTasks"] == [
        {"fromCluster": "m1", "purgeMode": "Gracefully", "reason": "TaintUntolerated",
         "producer": "TaintManager"}
    ]  # fmt: skip


# --- getPurgeMode (Test_getPurgeMode) ---------------------------------------------------------


def _failover(cluster: Obj | None) -> policy.FailoverBehavior:
    wire = {} if cluster is None else {"cluster": cluster}
    return policy.FailoverBehavior.model_validate(wire)


@pytest.mark.parametrize(
    ("flag", "failover", "expected"),
    [
        pytest.param(PurgeMode.GRACEFULLY, None, "Gracefully", id="no failover, flag default"),
        pytest.param(PurgeMode.DIRECTLY, None, "Directly", id="no failover, flag Directly"),
        pytest.param(PurgeMode.DIRECTLY, _failover(None), "Directly",
                     id="failover without cluster falls back to the flag"),
        pytest.param(PurgeMode.DIRECTLY, _failover({}), "Gracefully",
                     id="cluster failover without purgeMode is Gracefully"),
        pytest.param(PurgeMode.GRACEFULLY, _failover({"purgeMode": "Directly"}), "Directly",
                     id="the policy's Directly wins"),
        pytest.param(PurgeMode.DIRECTLY, _failover({"purgeMode": "Gracefully"}), "Gracefully",
                     id="the policy's Gracefully wins"),
    ],
)  # fmt: skip
def test_purge_mode(
    flag: PurgeMode, failover: policy.FailoverBehavior | None, expected: str
) -> None:
    assert purge_mode(failover, flag) == expected


# --- pacing -----------------------------------------------------------------------------------


def test_eviction_interval_is_one_over_the_rate() -> None:
    assert eviction_interval(Settings()) == 2 * S  # the default 0.5/s
    assert eviction_interval(Settings(resource_eviction_rate=0)) == 1800 * S
    # Never closer than the rate limiter's base delay, the default limiter's part.
    assert eviction_interval(Settings(resource_eviction_rate=1e6)) == timedelta(milliseconds=5)


def test_pacer_hands_out_slots_in_order_and_keeps_reservations() -> None:
    pacer, now, zero = EvictionPacer(), VirtualClock().now(), timedelta(0)
    assert pacer.wait("a", now, 2 * S) == zero
    assert pacer.wait("a", now, 2 * S) == zero  # free until spent: a failed write may retry
    pacer.spend("a", now, 2 * S, 1)
    assert pacer.wait("b", now, 2 * S) == 2 * S
    assert pacer.wait("c", now, 2 * S) == 4 * S
    assert pacer.wait("b", now + S, 2 * S) == S  # its reservation, not a new slot
    pacer.release("c")  # needs none any more: the slot stays spent
    assert pacer.wait("d", now + S, 2 * S) == 5 * S
    assert pacer.wait("b", now + 2 * S, 2 * S) == zero
    pacer.spend("b", now + 2 * S, 2 * S, 2)  # two clusters in one write: a slot more
    assert pacer.wait("e", now + 2 * S, 2 * S) == 8 * S


# --- the controller alone (syncBindingEviction, needEviction, enqueueBinding) ------------------


class Alone:
    """The taint manager alone over a store: bindings and clusters as others leave them."""

    def __init__(self, flags: dict[str, FlagValue] | None = None) -> None:
        self.clock = VirtualClock()
        uids = itertools.count(1)
        self.store = MemoryStore(now=self.clock.now, new_uid=lambda: f"uid-{next(uids)}")
        manager = ControllerManager(self.store, self.clock, Settings.from_flags(flags or FAILOVER))
        manager.add(taint_manager_controller())
        self.driver = VirtualDriver(manager)

    def cluster(self, name: str, *taints: Obj) -> None:
        self.store.create(
            {"apiVersion": CLUSTER.api_version, "kind": "Cluster", "metadata": {"name": name},
             "spec": {"syncMode": "Push", **({"taints": list(taints)} if taints else {})}}
        )  # fmt: skip

    def binding(self, placement: str | None, name: str = "test-rb", crb: bool = False) -> None:
        meta: Obj = {"name": name}
        if not crb:
            meta["namespace"] = "default"
        if placement is not None:
            meta["annotations"] = {POLICY_PLACEMENT_ANNOTATION: placement}
        info = CRB if crb else RB
        self.store.create(
            {"apiVersion": info.api_version, "kind": info.kind, "metadata": meta,
             "spec": {"resource": {"apiVersion": "apps/v1", "kind": "Deployment",
                                   "namespace": "default", "name": "nginx"},
                      "clusters": [{"name": "test-cluster", "replicas": 1}]}}
        )  # fmt: skip

    def spec(self, name: str = "test-rb", crb: bool = False) -> Obj:
        if crb:
            return self.store.get(CRB, name)["spec"]  # type: ignore[no-any-return]
        return self.store.get(RB, name, "default")["spec"]  # type: ignore[no-any-return]

    def run(self, seconds: float) -> None:
        self.driver.run_until(self.clock.now() + timedelta(seconds=seconds))


@pytest.fixture
def alone() -> Iterator[Alone]:
    hub = Alone()
    with hub.driver:
        yield hub


def _added(hub: Alone, seconds: int) -> str:
    return format_time(hub.clock.now() + seconds * S)


@pytest.mark.parametrize("crb", [False, True], ids=["ResourceBinding", "ClusterResourceBinding"])
def test_binding_without_tolerations_is_evicted(alone: Alone, crb: bool) -> None:
    """rb/crb without tolerations: a not-ready NoExecute taint it does not tolerate."""
    alone.binding(UNREACHABLE_30S, crb=crb)
    alone.cluster("test-cluster", NOT_READY)
    alone.driver.settle()
    assert alone.spec(crb=crb) == {
        "resource": {"apiVersion": "apps/v1", "kind": "Deployment", "namespace": "default",
                     "name": "nginx"},
        "gracefulEvictionTasks": [GRACEFUL_TASK],
    }  # fmt: skip


@pytest.mark.parametrize("crb", [False, True], ids=["ResourceBinding", "ClusterResourceBinding"])
def test_binding_with_tolerations_stays(alone: Alone, crb: bool) -> None:
    """rb/crb with tolerations: the taint has no timeAdded, so its 30 s never start."""
    alone.binding(BOTH_30S, crb=crb)
    alone.cluster("test-cluster", NOT_READY)
    alone.run(3600)
    assert alone.spec(crb=crb)["clusters"] == [{"name": "test-cluster", "replicas": 1}]
    assert "gracefulEvictionTasks" not in alone.spec(crb=crb)


def test_binding_on_a_cluster_that_does_not_exist_stays(alone: Alone) -> None:
    alone.binding(BOTH_30S, crb=True)
    alone.driver.settle()
    assert alone.spec(crb=True)["clusters"] == [{"name": "test-cluster", "replicas": 1}]


@pytest.mark.parametrize(
    "placement",
    [None, "invalid-json", ""],
    ids=["placement annotation not exist", "invalid JSON", "placement is empty"],
)
def test_no_eviction_without_an_applied_placement(alone: Alone, placement: str | None) -> None:
    """needEviction fails without a placement to read tolerations from: nothing is evicted."""
    alone.binding(placement)
    alone.cluster("test-cluster", {"key": "test-key", "effect": "NoExecute"})
    alone.run(60)
    assert alone.spec()["clusters"] == [{"name": "test-cluster", "replicas": 1}]


def _tolerating(*tolerations: Obj) -> str:
    import json

    return json.dumps(
        {"clusterAffinity": {"clusterNames": ["test-cluster"]}, "clusterTolerations": tolerations}
    )


@pytest.mark.parametrize(
    ("tolerations", "taints", "evicted_after"),
    [
        pytest.param([], [("test-key", -1)], 0, id="taint not tolerated: immediate"),
        pytest.param([toleration("test-key", 0)], [("test-key", -1)], 0,
                     id="tolerated for zero seconds: immediate"),
        pytest.param([toleration("test-key", 60)], [("test-key", -1)], 59,
                     id="tolerated for 60 s, added 1 s ago: after 59 s"),
        pytest.param([toleration("test-key")], [("test-key", -1)], None,
                     id="tolerated forever: never"),
        pytest.param([toleration("tolerated-key", 30)],
                     [("tolerated-key", 1), ("not-tolerated-key", -1)], 0,
                     id="one of two taints not tolerated: immediate"),
        pytest.param([toleration("test-key", 1)], [("test-key", -2)], 0,
                     id="toleration ran out: immediate"),
        pytest.param([toleration("key1"), toleration("key2")], [("key1", -1), ("key2", -1)],
                     None, id="both tolerated forever: never"),
        pytest.param([toleration("key1"), toleration("key2", 120)],
                     [("key1", -1), ("key2", -1)], 119,
                     id="one tolerated for 120 s: after 119 s"),
    ],
)  # fmt: skip
def test_need_eviction(
    alone: Alone, tolerations: list[Obj], taints: list[tuple[str, int]], evicted_after: int | None
) -> None:
    """needEvictionWithCurrentTime and enqueueBinding: when the binding leaves the cluster,
    checked a second before and at the instant."""
    alone.run(10)  # so that a taint may be added before now
    alone.cluster(
        "test-cluster",
        *({"key": k, "effect": "NoExecute", "timeAdded": _added(alone, s)} for k, s in taints),
    )
    alone.binding(_tolerating(*tolerations))
    alone.driver.settle()
    if evicted_after is None:
        alone.run(24 * 3600)
        assert alone.spec()["clusters"], "tolerated forever"
        return
    if evicted_after:
        alone.run(evicted_after - 1)
        assert alone.spec()["clusters"], "still tolerated a second before"
        alone.run(1)
    assert "clusters" not in alone.spec()
    assert alone.spec()["gracefulEvictionTasks"][0]["fromCluster"] == "test-cluster"


def test_only_no_execute_taints_count(alone: Alone) -> None:
    alone.cluster("test-cluster", {"key": "test-key", "effect": "NoSchedule"})
    alone.binding(_tolerating())
    alone.run(60)
    assert alone.spec()["clusters"]


def test_a_cluster_tainted_later_evicts_the_bindings_on_it(alone: Alone) -> None:
    """syncCluster: the bindings on a cluster that gets a NoExecute taint are looked at,
    each evicted by its own tolerations (infinite, finite, none; a CRB too)."""
    alone.cluster("test-cluster")
    maintenance = "cluster.karmada.io/maintenance"
    alone.binding(_tolerating(toleration(maintenance)), name="infinite-rb")
    alone.binding(_tolerating(toleration(maintenance, 142)), name="finite-rb")
    alone.binding(_tolerating(), name="no-toleration-rb")
    alone.binding(_tolerating(), name="no-toleration-crb", crb=True)
    alone.run(5)
    taint = {"key": maintenance, "effect": "NoExecute", "timeAdded": _added(alone, 0)}
    cluster = alone.store.get(CLUSTER, "test-cluster")
    cluster["spec"]["taints"] = [taint]
    alone.store.update(cluster)
    alone.driver.settle()

    def placed() -> set[str]:
        rbs = {
            b["metadata"]["name"] for b in alone.store.list(RB).items if b["spec"].get("clusters")
        }
        crbs = {
            b["metadata"]["name"] for b in alone.store.list(CRB).items if b["spec"].get("clusters")
        }
        return rbs | crbs

    assert placed() == {"infinite-rb", "finite-rb"}
    alone.run(141)
    assert placed() == {"infinite-rb", "finite-rb"}
    alone.run(1)
    assert placed() == {"infinite-rb"}
    alone.run(24 * 3600)
    assert placed() == {"infinite-rb"}


def test_a_taint_removed_before_its_time_evicts_nothing(alone: Alone) -> None:
    alone.cluster("test-cluster")
    alone.binding(_tolerating(toleration("test-key", 60)))
    taint = {"key": "test-key", "effect": "NoExecute", "timeAdded": _added(alone, 0)}
    cluster = alone.store.get(CLUSTER, "test-cluster")
    cluster["spec"]["taints"] = [taint]
    cluster = alone.store.update(cluster)
    alone.run(59)
    cluster["spec"]["taints"] = []
    alone.store.update(cluster)
    alone.run(3600)  # the timer set for 60 s fires and finds no taint
    assert alone.spec()["clusters"]


def test_failed_update_records_an_event(alone: Alone) -> None:
    """EmitClusterEvictionEventForResourceBinding with an error: on the binding and its
    template, and the eviction is retried."""
    alone.binding(UNREACHABLE_30S)
    alone.cluster("test-cluster", NOT_READY)
    real_update = alone.store.update
    failures = iter([True])

    def update(obj: Any, **kwargs: Any) -> Any:
        if obj.get("kind") == "ResourceBinding" and next(failures, False):
            from fleetwarden.api.errors import Conflict

            raise Conflict("resourcebindings", "work.karmada.io", "test-rb", "stale")
        return real_update(obj, **kwargs)

    alone.store.update = update  # type: ignore[method-assign]
    alone.driver.settle()
    events = alone.store.list(EVENT).items
    assert sorted(
        (e["involvedObject"]["kind"], e["type"], e["reason"], e["message"]) for e in events
    ) == [
        ("Deployment", "Warning", "EvictWorkloadFromClusterFailed",
         "Evict from cluster test-cluster failed."),
        ("ResourceBinding", "Warning", "EvictWorkloadFromClusterFailed",
         "Evict from cluster test-cluster failed."),
    ]  # fmt: skip
    alone.run(1)  # the retry
    assert alone.spec()["gracefulEvictionTasks"] == [GRACEFUL_TASK]


@pytest.mark.parametrize(
    "flags",
    [
        {"enable-no-execute-taint-eviction": True},
        {"feature-gates": "Failover=true"},
        {**FAILOVER, "enable-taint-manager": False},
    ],
    ids=["Failover gate off", "no-execute eviction off", "taint manager off"],
)
def test_nothing_happens_unless_enabled(flags: dict[str, FlagValue]) -> None:
    hub = Alone(flags)
    with hub.driver:
        hub.binding(_tolerating())
        hub.cluster("test-cluster", NOT_READY)
        hub.run(3600)
        assert hub.spec()["clusters"]


# --- through the whole hub ------------------------------------------------------------------

MAINTENANCE = "example.io/maintenance"
UNREACHABLE = "cluster.karmada.io/unreachable"


def _hub(members: Any = ("m1", "m2"), **flags: FlagValue) -> FailoverHub:
    return FailoverHub(members, {**FAILOVER, **flags})


def test_toleration_of_300s_moves_the_workload_at_300s() -> None:
    hub = _hub()
    hub.propagate("nginx", ["m1", "m2"], max_groups=1, tolerations=[toleration(UNREACHABLE, 300)])
    assert hub.targets("nginx") == {"m1": 2}
    hub.run(20)
    hub.taint("m1", UNREACHABLE)
    added = hub.now()
    hub.run_to(added + 290 * S)
    assert hub.targets("nginx") == {"m1": 2}  # still there at 290 s
    hub.run_to(added + 299 * S)
    assert hub.targets("nginx") == {"m1": 2}
    assert hub.tasks("nginx") == []
    hub.run_to(added + 300 * S)
    assert hub.targets("nginx") == {"m2": 2}
    hub.run_to(added + 310 * S)
    assert hub.targets("nginx") == {"m2": 2}  # moved by 310 s
    assert hub.work_clusters("nginx") == {"m2": "live"}


def test_an_untolerated_taint_evicts_at_once() -> None:
    hub = _hub()
    hub.propagate("nginx", ["m1", "m2"], max_groups=1)
    hub.run(20)
    hub.taint("m1", MAINTENANCE)
    assert hub.targets("nginx") == {"m2": 2}


def test_a_taint_removed_before_expiry_evicts_nothing() -> None:
    hub = _hub()
    hub.propagate("nginx", ["m1", "m2"], max_groups=1, tolerations=[toleration(MAINTENANCE, 300)])
    hub.taint("m1", MAINTENANCE)
    added = hub.now()
    hub.run_to(added + 299 * S)
    hub.untaint("m1", MAINTENANCE)
    hub.run_to(added + 3600 * S)
    assert hub.targets("nginx") == {"m1": 2}
    assert hub.work_clusters("nginx") == {"m1": "live"}


def test_a_tolerated_forever_taint_never_evicts() -> None:
    hub = _hub()
    hub.propagate("nginx", ["m1", "m2"], max_groups=1, tolerations=[toleration(MAINTENANCE)])
    hub.taint("m1", MAINTENANCE)
    hub.run(24 * 3600)
    assert hub.targets("nginx") == {"m1": 2}


def test_gracefully_keeps_the_old_work_until_the_new_cluster_is_healthy() -> None:
    members = {"m1": MemberState(), "m2": MemberState(workload_ready_after=45 * S)}
    hub = _hub(members)
    hub.propagate("nginx", ["m1", "m2"], max_groups=1)
    hub.run(20)
    hub.fail("m1")
    evicted = hub.now()
    assert hub.targets("nginx") == {"m2": 2}
    assert hub.evicting("nginx") == ["m1"]
    assert hub.work_clusters("nginx") == {"m1": "live", "m2": "live"}
    hub.run_to(evicted + 44 * S)
    assert hub.healthy_on("nginx")["m2"] != "Healthy"
    assert hub.evicting("nginx") == ["m1"]
    assert hub.work_clusters("nginx") == {"m1": "live", "m2": "live"}
    hub.run_to(evicted + 45 * S)
    assert hub.healthy_on("nginx")["m2"] == "Healthy"
    assert hub.evicting("nginx") == []
    # Deleted; the unreachable member holds the execution controller's finalizer.
    assert hub.work_clusters("nginx") == {"m1": "deleting", "m2": "live"}
    assert [e["message"] for e in hub.events("EvictWorkloadFromClusterSucceed")] == [
        "Evict from cluster m1 succeed.",
        "Evict from cluster m1 succeed.",
    ]


def test_directly_removes_the_old_work_before_the_new_one() -> None:
    """Directly (the policy's purgeMode): the old Work goes first; the new one is written
    only once the old one is gone. A reachable member lets it go at once."""
    hub = _hub(("m1", "m2"))
    hub.propagate("nginx", ["m1", "m2"], max_groups=1, purge_mode="Directly")
    hub.run(20)
    seen: list[dict[str, str]] = []
    hub.store.subscribe(lambda event: seen.append(hub.work_clusters("nginx")))
    hub.taint("m1", MAINTENANCE)
    assert hub.work_clusters("nginx") == {"m2": "live"}
    assert {"m1": "deleting"} in seen, "the old Work was deleted first"
    assert [s for s in seen if "m1" in s and "m2" in s] == [], "never old and new at once"
    evicted = hub.events("EvictWorkloadFromClusterSucceed")
    assert [e["involvedObject"]["kind"] for e in evicted] == ["ResourceBinding", "Deployment"]


def test_directly_withholds_the_new_work_until_the_task_times_out() -> None:
    """The unreachable member keeps the old Work (its finalizer): no new Work until the
    task times out after graceful-eviction-timeout (10 minutes)."""
    hub = _hub(("m1", "m2"), **{"no-execute-taint-eviction-purge-mode": "Directly"})
    hub.propagate("nginx", ["m1", "m2"], max_groups=1)
    hub.run(20)
    hub.fail("m1")
    evicted = hub.now()
    assert hub.targets("nginx") == {"m2": 2}
    assert hub.work_clusters("nginx") == {"m1": "deleting"}
    hub.run_to(evicted + 599 * S)
    assert hub.work_clusters("nginx") == {"m1": "deleting"}
    assert hub.evicting("nginx") == ["m1"]
    hub.run_to(evicted + 600 * S)
    assert hub.evicting("nginx") == []
    hub.run_to(evicted + 605 * S)  # the binding controller looks every 5 s
    assert hub.work_clusters("nginx") == {"m1": "deleting", "m2": "live"}


def test_evictions_are_paced_by_the_resource_eviction_rate() -> None:
    hub = _hub(("m1", "m2"), **{"resource-eviction-rate": 0.25})
    for name in ("first", "second", "third"):
        hub.propagate(name, ["m1", "m2"], max_groups=1)
    assert {n: list(hub.targets(n)) for n in ("first", "second", "third")} == {
        "first": ["m1"], "second": ["m1"], "third": ["m1"],
    }  # fmt: skip
    hub.taint("m1", MAINTENANCE)
    tainted = hub.now()

    def on_m1() -> list[str]:
        return [n for n in ("first", "second", "third") if "m1" in hub.targets(n)]

    assert len(on_m1()) == 2  # one at once
    hub.run_to(tainted + timedelta(seconds=3.999))
    assert len(on_m1()) == 2
    hub.run_to(tainted + 4 * S)  # 1/rate later
    assert len(on_m1()) == 1
    hub.run_to(tainted + timedelta(seconds=7.999))
    assert len(on_m1()) == 1
    hub.run_to(tainted + 8 * S)
    assert on_m1() == []


def test_a_cluster_resource_binding_fails_over_too() -> None:
    hub = _hub()
    hub.propagate_cluster_role(["m1", "m2"])
    name = "reader-clusterrole"
    assert list(hub.targets(name)) == ["m1"]
    hub.taint("m1", MAINTENANCE)
    assert list(hub.targets(name)) == ["m2"]
    assert hub.evicting(name) == []  # a ClusterRole is healthy at once
    assert hub.work_clusters(name) == {"m2": "live"}


@pytest.mark.parametrize(
    "flags",
    [
        {"feature-gates": "Failover=false"},
        {"enable-no-execute-taint-eviction": False},
        {"enable-taint-manager": False},
    ],
    ids=["Failover gate off", "no-execute eviction off", "taint manager off"],
)
def test_gates_off_nothing_moves(flags: dict[str, FlagValue]) -> None:
    hub = _hub(**flags)
    hub.propagate("nginx", ["m1", "m2"], max_groups=1)
    hub.taint("m1", MAINTENANCE)
    hub.run(3600)
    assert hub.targets("nginx") == {"m1": 2}
    assert hub.tasks("nginx") == []
