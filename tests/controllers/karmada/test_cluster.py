"""The cluster controller: the health monitor, the taints that follow Ready, the older
generation's NoExecute taints, the execution space and the finalizer.

Ported from upstream's cluster_controller_test.go and pkg/util/helper/taint_test.go, then
behaviour in virtual time with simulated members, each timer checked just before and just
after it fires.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable
from dataclasses import replace
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
import yaml

from fleetwarden.api.core import NO_EXECUTE, NO_SCHEDULE, Taint
from fleetwarden.api.errors import NotFound
from fleetwarden.api.meta import Condition, format_micro_time, format_time
from fleetwarden.api.registry import REGISTRY
from fleetwarden.controllers.karmada.cluster import (
    CLUSTER,
    NAMESPACE,
    NOT_READY_TAINT_FOR_SCHED,
    RESOURCE_BINDING,
    UNREACHABLE_TAINT_FOR_SCHED,
    WORK,
    ClusterController,
    cluster_controller,
    generate_taints_message,
    set_current_cluster_taints,
    taints_for_ready,
    unknown_ready_condition,
)
from fleetwarden.controllers.karmada.cluster_status import ClusterStatusController
from fleetwarden.controllers.karmada.cluster_taint_policy import cluster_taint_policy_controller
from fleetwarden.controllers.karmada.execution import execution_controller
from fleetwarden.members.simulated import MemberState, SimulatedFleet
from fleetwarden.runtime.clock import DEFAULT_EPOCH, VirtualClock
from fleetwarden.runtime.events import EVENT, EventRecorder
from fleetwarden.runtime.manager import DONE, Context, ControllerManager, VirtualDriver
from fleetwarden.runtime.settings import Settings
from fleetwarden.sim.runner import Report, Simulation
from fleetwarden.sim.scenario import parse
from fleetwarden.store import MemoryStore

LEASE = REGISTRY.info("coordination.k8s.io/v1", "Lease")

NOT_READY = "cluster.karmada.io/not-ready"
UNREACHABLE = "cluster.karmada.io/unreachable"
FINALIZER = "karmada.io/cluster-controller"
EXECUTION_FINALIZER = "karmada.io/execution-controller"
OLD_GENERATION = Settings.from_flags(
    {"failover-eviction-timeout": "5m", "feature-gates": "Failover=true"}
)
EXAMPLES = Path(__file__).parents[3] / "examples" / "scenarios"

Obj = dict[str, Any]


def at(seconds: float) -> str:
    return format_time(DEFAULT_EPOCH + timedelta(seconds=seconds))


def condition(type_: str, status: str, since: float = 0, reason: str = "Reported") -> Obj:
    return {
        "type": type_,
        "status": status,
        "reason": reason,
        "message": "",
        "lastTransitionTime": at(since),
    }


class Hub:
    """Simulated members, the cluster status controller, the cluster controller, the
    ClusterTaintPolicy controller and the execution controller, in virtual time."""

    def __init__(
        self,
        members: Iterable[str] = (),
        *,
        push: Iterable[str] = (),
        settings: Settings | None = None,
        reachable: Callable[[str], bool] | None = None,
    ) -> None:
        members, push = list(members), list(push)
        self.clock = VirtualClock()
        uids = itertools.count(1)
        self.store = MemoryStore(now=self.clock.now, new_uid=lambda: f"uid-{next(uids)}")
        self.fleet = SimulatedFleet({m: MemberState() for m in [*members, *push]}, [])
        self.settings = settings or Settings()
        self.manager = ControllerManager(self.store, self.clock, self.settings)
        for controller in (
            self.fleet.controller(),
            ClusterStatusController(self.fleet.probe, self.fleet.report).controller(),
            cluster_controller(reachable or (lambda name: self.fleet.probe(name) is not None)),
            cluster_taint_policy_controller(),
            execution_controller(self.fleet.delete_workload),
        ):
            self.manager.add(controller)
        self.driver = VirtualDriver(self.manager)
        for name in push:
            self.create_cluster(name, "Push")
        self.driver.start()
        self.settle()

    # time -----------------------------------------------------------------------------------

    def settle(self) -> None:
        self.driver.settle()

    def to(self, seconds: float) -> None:
        """Run every timer due by `seconds` after the epoch, at its instant."""
        self.driver.run_until(DEFAULT_EPOCH + timedelta(seconds=seconds))

    # writes ---------------------------------------------------------------------------------

    def create_cluster(self, name: str, sync_mode: str = "Push", **spec: Any) -> None:
        self.store.create(
            {
                "apiVersion": CLUSTER.api_version,
                "kind": "Cluster",
                "metadata": {"name": name},
                "spec": {"syncMode": sync_mode, **spec},
            }
        )

    def external(self, name: str, *conditions: Obj, sync_mode: str = "Push", **spec: Any) -> None:
        """A cluster no simulated member backs, reporting what we write."""
        self.create_cluster(name, sync_mode, **spec)
        if conditions:
            self.report(name, *conditions)
        self.settle()

    def report(self, name: str, *conditions: Obj) -> None:
        """Write the cluster's conditions (a status update), keeping those not named."""
        cluster = self.store.get(CLUSTER, name)
        given = {c["type"] for c in conditions}
        kept = [
            c
            for c in (cluster.get("status") or {}).get("conditions") or []
            if c["type"] not in given
        ]
        cluster["status"] = {"conditions": [*kept, *conditions]}
        self.store.update(cluster, subresource="status")
        self.settle()

    def ready(self, name: str, status: str) -> None:
        """Ready changes now."""
        since = (self.clock.now() - DEFAULT_EPOCH).total_seconds()
        self.report(name, condition("Ready", status, since))

    def member(self, name: str, **changes: Any) -> None:
        state = self.fleet.state(name)
        self.fleet.set_state(name, MemberState(**{**state.__dict__, **changes}))

    def set_taints(self, name: str, *taints: Obj) -> None:
        cluster = self.store.get(CLUSTER, name)
        cluster["spec"]["taints"] = list(taints)
        self.store.update(cluster)
        self.settle()

    def delete(self, name: str) -> None:
        self.store.delete(CLUSTER, name)
        self.settle()

    # reads ----------------------------------------------------------------------------------

    def cluster(self, name: str) -> Obj | None:
        try:
            return self.store.get(CLUSTER, name)
        except NotFound:
            return None

    def get(self, name: str) -> Obj:
        cluster = self.cluster(name)
        assert cluster is not None, f"no Cluster {name}"
        return cluster

    def ready_of(self, name: str) -> tuple[str, str] | None:
        for c in self.get(name).get("status", {}).get("conditions") or []:
            if c["type"] == "Ready":
                return c["status"], c["reason"]
        return None

    def taints(self, name: str) -> list[str]:
        return [f"{t['key']}:{t['effect']}" for t in self.get(name)["spec"].get("taints") or []]

    def time_added(self, name: str, key: str, effect: str) -> Any:
        taints = self.get(name)["spec"].get("taints") or []
        return next(t.get("timeAdded") for t in taints if (t["key"], t["effect"]) == (key, effect))

    def events(self, reason: str) -> list[Obj]:
        return [e for e in self.store.list(EVENT).items if e["reason"] == reason]

    def messages(self, reason: str) -> list[str]:
        return [e["message"] for e in self.events(reason)]


# --- pkg/util/helper/taint_test.go ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("taints", "to_add", "to_remove", "want"),
    [
        # ready condition from true to false
        ([], [NOT_READY_TAINT_FOR_SCHED], [UNREACHABLE_TAINT_FOR_SCHED], [NOT_READY]),
        # ready condition from true to unknown
        ([], [UNREACHABLE_TAINT_FOR_SCHED], [NOT_READY_TAINT_FOR_SCHED], [UNREACHABLE]),
        # ready condition from false to unknown
        ([NOT_READY_TAINT_FOR_SCHED], [UNREACHABLE_TAINT_FOR_SCHED], [NOT_READY_TAINT_FOR_SCHED],
         [UNREACHABLE]),
        # ready condition from false to true
        ([NOT_READY_TAINT_FOR_SCHED], [], [NOT_READY_TAINT_FOR_SCHED, UNREACHABLE_TAINT_FOR_SCHED],
         []),
        # ready condition from unknown to true
        ([UNREACHABLE_TAINT_FOR_SCHED], [],
         [NOT_READY_TAINT_FOR_SCHED, UNREACHABLE_TAINT_FOR_SCHED], []),
        # ready condition from unknown to false
        ([UNREACHABLE_TAINT_FOR_SCHED], [NOT_READY_TAINT_FOR_SCHED], [UNREACHABLE_TAINT_FOR_SCHED],
         [NOT_READY]),
        # nothing to add and nothing to remove
        ([UNREACHABLE_TAINT_FOR_SCHED], [UNREACHABLE_TAINT_FOR_SCHED], [NOT_READY_TAINT_FOR_SCHED],
         [UNREACHABLE]),
    ],
)  # fmt: skip
def test_set_current_cluster_taints(
    taints: list[Taint], to_add: list[Taint], to_remove: list[Taint], want: list[str]
) -> None:
    got = set_current_cluster_taints(taints, to_add, to_remove, DEFAULT_EPOCH)
    assert [t.key for t in got] == want
    assert all(t.effect == NO_SCHEDULE for t in got)


def test_set_current_cluster_taints_keeps_the_others_and_stamps_only_what_it_adds() -> None:
    now = DEFAULT_EPOCH + timedelta(minutes=1)
    user = Taint(key="dedicated", value="gpu", effect=NO_SCHEDULE)
    # Matching is by key and effect: a not-ready taint with a value counts as there.
    valued = Taint(key=NOT_READY, value="x", effect=NO_SCHEDULE, time_added=DEFAULT_EPOCH)
    got = set_current_cluster_taints([user, valued], [NOT_READY_TAINT_FOR_SCHED], [], now)
    assert got == [user, valued]
    got = set_current_cluster_taints(
        [valued, user], [UNREACHABLE_TAINT_FOR_SCHED], [NOT_READY_TAINT_FOR_SCHED], now
    )
    assert [t.to_dict() for t in got] == [
        user.to_dict(),
        {"key": UNREACHABLE, "effect": NO_SCHEDULE, "timeAdded": "2025-01-01T00:01:00Z"},
    ]


@pytest.mark.parametrize(
    ("taints", "expected"),
    [
        ([], "cluster now does not have taints"),
        ([Taint(key="key1", value="value1", effect=NO_SCHEDULE)],
         "cluster now has taints([{Key:key1,Value:value1,Effect:NoSchedule}])"),
        ([Taint(key="key1", value="value1", effect=NO_SCHEDULE),
          Taint(key="key2", value="", effect="PreferNoSchedule")],
         "cluster now has taints([{Key:key1,Value:value1,Effect:NoSchedule},"
         "{Key:key2,Effect:PreferNoSchedule}])"),
    ],
)  # fmt: skip
def test_generate_taints_message(taints: list[Taint], expected: str) -> None:
    assert generate_taints_message(taints) == expected


@pytest.mark.parametrize(
    ("status", "added", "removed"),
    [
        (None, [NOT_READY], []),
        ("False", [NOT_READY], [UNREACHABLE]),
        ("Unknown", [UNREACHABLE], [NOT_READY]),
        ("True", [], [NOT_READY, UNREACHABLE]),
    ],
)
def test_seed_000_table_of_the_taints_karmada_manages(
    status: str | None, added: list[str], removed: list[str]
) -> None:
    ready = None if status is None else Condition(type="Ready", status=status)
    to_add, to_remove = taints_for_ready(ready)
    assert [(t.key, t.effect) for t in to_add] == [(k, NO_SCHEDULE) for k in added]
    assert [(t.key, t.effect) for t in to_remove] == [(k, NO_SCHEDULE) for k in removed]


def test_the_unknown_ready_condition_the_monitor_posts() -> None:
    never = unknown_ready_condition(None, DEFAULT_EPOCH)
    assert never is not None
    assert never.to_dict() == {
        "type": "Ready",
        "status": "Unknown",
        "reason": "ClusterStatusNeverUpdated",
        "message": "Cluster status controller never posted cluster status.",
        "lastTransitionTime": "2025-01-01T00:00:00Z",
    }
    ready = Condition(type="Ready", status="True", reason="ClusterReady", message="ok")
    stopped = unknown_ready_condition(ready, DEFAULT_EPOCH)
    assert stopped is not None
    assert (stopped.status, stopped.reason, stopped.message) == (
        "Unknown",
        "ClusterStatusUnknown",
        "Cluster status controller stopped posting cluster status.",
    )
    assert unknown_ready_condition(stopped, DEFAULT_EPOCH) is None


# --- cluster_controller_test.go: TestController_Reconcile ---------------------------------------


@pytest.mark.parametrize(
    ("status", "taints", "want"),
    [
        ("cluster without status", [NOT_READY_TAINT_FOR_SCHED], [f"{NOT_READY}:NoSchedule"]),
        ("True", [NOT_READY_TAINT_FOR_SCHED], []),
        ("Unknown", [NOT_READY_TAINT_FOR_SCHED], [f"{UNREACHABLE}:NoSchedule"]),
        ("False", [UNREACHABLE_TAINT_FOR_SCHED], [f"{NOT_READY}:NoSchedule"]),
    ],
)
def test_reconcile_taints_by_the_ready_condition(
    status: str, taints: list[Taint], want: list[str]
) -> None:
    hub = Hub()
    conditions = [] if status == "cluster without status" else [condition("Ready", status)]
    hub.external("member1", *conditions, taints=[t.to_dict() for t in taints])
    assert hub.taints("member1") == want
    assert hub.get("member1")["metadata"]["finalizers"] == [FINALIZER]


def test_reconcile_of_a_cluster_that_is_not_there_is_done() -> None:
    hub = Hub()
    m = hub.manager
    ctx = Context(
        m.cache, hub.store, hub.clock, m.settings, EventRecorder(hub.store, hub.clock, "t")
    )
    assert ClusterController(lambda _: True).reconcile("test-cluster-noexist", ctx) == DONE


# --- cluster_controller_test.go: TestController_monitorClusterHealth ----------------------------


def test_a_pull_cluster_that_never_reports_is_unknown_after_the_startup_grace_period() -> None:
    """No Ready condition: tainted not-ready at once; cluster-startup-grace-period (60 s)
    after its creation, Ready=Unknown (ClusterStatusNeverUpdated) and the taint swapped."""
    hub = Hub(reachable=lambda _: True)
    hub.to(5)
    hub.external("member1", sync_mode="Pull")
    assert hub.taints("member1") == [f"{NOT_READY}:NoSchedule"]
    assert hub.time_added("member1", NOT_READY, NO_SCHEDULE) == at(5)
    hub.to(64)
    assert hub.ready_of("member1") is None
    hub.to(65)
    assert hub.ready_of("member1") == ("Unknown", "ClusterStatusNeverUpdated")
    assert hub.taints("member1") == [f"{UNREACHABLE}:NoSchedule"]


def test_a_pull_cluster_ready_without_a_lease_is_unknown_after_the_grace_period() -> None:
    """Ready=True seen first at 10 s and no Lease: Unknown at 50 s (monitor grace, 40 s)."""
    hub = Hub(reachable=lambda _: True)
    hub.to(10)
    hub.external("member1", condition("Ready", "True"), sync_mode="Pull")
    assert hub.taints("member1") == []
    hub.to(49)
    assert hub.ready_of("member1") == ("True", "Reported")
    hub.to(50)
    assert hub.ready_of("member1") == ("Unknown", "ClusterStatusUnknown")
    ready = next(c for c in hub.get("member1")["status"]["conditions"] if c["type"] == "Ready")
    assert ready["message"] == "Cluster status controller stopped posting cluster status."
    assert ready["lastTransitionTime"] == at(50)


def test_a_cluster_the_hub_does_not_reach_is_never_timed_out() -> None:
    hub = Hub()  # nothing backs member1: reported externally
    hub.external("member1", condition("Ready", "True"), sync_mode="Pull")
    hub.external("member2", sync_mode="Pull")
    hub.to(3600)
    assert hub.ready_of("member1") == ("True", "Reported")
    assert hub.ready_of("member2") is None
    assert hub.taints("member1") == []
    assert hub.taints("member2") == [f"{NOT_READY}:NoSchedule"]


# --- behaviour: Pull and Push members ----------------------------------------------------------


def test_pull_member_unreachable_is_unknown_grace_after_its_last_renewal_then_recovers() -> None:
    """The agent renews its Lease every 10 s; unreachable from 65 s, its last renewal is at
    60 s: Ready=Unknown and the unreachable taint at 100 s, not at 99 s. Back at 150 s, it
    reports again at its next loop (160 s): Ready=True and the taint removed."""
    hub = Hub(["member1", "member2"])
    assert hub.ready_of("member1") == ("True", "ClusterReady")
    assert hub.taints("member1") == []
    hub.to(65)
    hub.member("member1", reachable=False)
    hub.to(99)
    assert hub.ready_of("member1") == ("True", "ClusterReady")
    assert hub.taints("member1") == []
    hub.to(100)
    assert hub.ready_of("member1") == ("Unknown", "ClusterStatusUnknown")
    assert hub.taints("member1") == [f"{UNREACHABLE}:NoSchedule"]
    assert hub.time_added("member1", UNREACHABLE, NO_SCHEDULE) == at(100)
    assert hub.messages("TaintClusterSucceed") == [
        "Taint cluster succeed: cluster now has taints"
        "([{Key:cluster.karmada.io/unreachable,Effect:NoSchedule}])."
    ]
    hub.to(150)
    hub.member("member1", reachable=True)
    hub.to(159)
    assert hub.taints("member1") == [f"{UNREACHABLE}:NoSchedule"]
    hub.to(160)
    assert hub.ready_of("member1") == ("True", "ClusterReady")
    assert hub.taints("member1") == []
    assert hub.messages("TaintClusterSucceed")[-1] == (
        "Taint cluster succeed: cluster now does not have taints."
    )
    assert hub.ready_of("member2") == ("True", "ClusterReady")
    assert hub.taints("member2") == []


def test_lease_renewals_wake_the_monitor_once_per_grace_period_not_per_renewal() -> None:
    """A renewal moves the monitor's deadline on without a reconcile of its own: ten
    minutes of renewals every 10 s reach the cluster controller about once per 40 s grace
    period, and the deadline still follows the last renewal to the second (the test above)."""
    hub = Hub(["member1"])
    runner = next(r for r in hub.driver._runners if r.controller.name == "cluster-controller")
    keys: list[str] = []
    reconcile = runner.controller.reconcile
    runner.controller = replace(
        runner.controller, reconcile=lambda key, ctx: keys.append(key) or reconcile(key, ctx)
    )
    hub.to(600)
    assert hub.ready_of("member1") == ("True", "ClusterReady")
    assert hub.store.get(LEASE, "member1", "karmada-cluster")["spec"]["renewTime"] == (
        format_micro_time(DEFAULT_EPOCH + timedelta(seconds=600))
    )
    assert 600 / 40 <= len(keys) <= 600 / 30


def test_the_agent_renews_its_latest_lease_and_reads_it_again_when_another_wrote_it() -> None:
    """karmada-agent's lease controller updates the Lease it last wrote without reading it;
    when someone else wrote it meanwhile (a conflict) it reads it and renews that, and a
    Lease deleted is created again at the next renewal."""
    hub = Hub(["member1"])
    hub.to(25)
    lease = hub.store.get(LEASE, "member1", "karmada-cluster")
    lease["metadata"]["labels"] = {"touched": "by-hand"}
    hub.store.update(lease)
    hub.to(30)
    renewed = hub.store.get(LEASE, "member1", "karmada-cluster")
    assert renewed["metadata"]["labels"] == {"touched": "by-hand"}
    assert renewed["spec"]["renewTime"] == format_micro_time(DEFAULT_EPOCH + timedelta(seconds=30))
    hub.to(45)
    hub.store.delete(LEASE, "member1", "karmada-cluster")
    hub.to(50)
    again = hub.store.get(LEASE, "member1", "karmada-cluster")
    assert again["spec"]["renewTime"] == format_micro_time(DEFAULT_EPOCH + timedelta(seconds=50))
    assert [ref["name"] for ref in again["metadata"]["ownerReferences"]] == ["member1"]
    hub.to(120)
    assert hub.ready_of("member1") == ("True", "ClusterReady")


def test_pull_member_not_ready_is_tainted_not_ready_then_unreachable() -> None:
    """The agent sees its member not ready at 70 s and reports Ready=False once
    cluster-failure-threshold (30 s) has passed, at 100 s; when it then stops renewing,
    Ready=Unknown 40 s after its last renewal and the taints swap."""
    hub = Hub(["member1"])
    hub.to(65)
    hub.member("member1", ready=False)
    hub.to(99)
    assert hub.taints("member1") == []
    hub.to(100)
    assert hub.ready_of("member1") == ("False", "ClusterNotReady")
    assert hub.taints("member1") == [f"{NOT_READY}:NoSchedule"]
    hub.to(105)
    hub.member("member1", reachable=False)  # last renewal at 100 s
    hub.to(139)
    assert hub.taints("member1") == [f"{NOT_READY}:NoSchedule"]
    hub.to(140)
    assert hub.ready_of("member1") == ("Unknown", "ClusterStatusUnknown")
    assert hub.taints("member1") == [f"{UNREACHABLE}:NoSchedule"]


def test_push_member_unreachable_is_not_ready_from_probes_never_unknown() -> None:
    """Probed every 10 s: unreachable from 60 s, Ready=False once cluster-failure-threshold
    (30 s) has passed, at 100 s, with the not-ready taint; the monitor never times it out.
    Back at 3600 s, probed healthy from 3610 s, Ready=True 30 s later."""
    hub = Hub(push=["member1"])
    hub.to(60)
    hub.member("member1", reachable=False)
    hub.to(99)
    assert hub.taints("member1") == []
    hub.to(100)
    assert hub.ready_of("member1") == ("False", "ClusterNotReachable")
    assert hub.taints("member1") == [f"{NOT_READY}:NoSchedule"]
    hub.to(3600)
    assert hub.ready_of("member1") == ("False", "ClusterNotReachable")
    hub.member("member1", reachable=True)
    hub.to(3639)
    assert hub.taints("member1") == [f"{NOT_READY}:NoSchedule"]
    hub.to(3640)
    assert hub.ready_of("member1") == ("True", "ClusterReady")
    assert hub.taints("member1") == []


def test_ready_false_unknown_false_true_swaps_and_removes_the_taints() -> None:
    hub = Hub()
    hub.external("member1", condition("Ready", "True"))
    user = {"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}
    hub.set_taints("member1", user)
    steps = [
        ("False", ["dedicated:NoSchedule", f"{NOT_READY}:NoSchedule"]),
        ("Unknown", ["dedicated:NoSchedule", f"{UNREACHABLE}:NoSchedule"]),
        ("False", ["dedicated:NoSchedule", f"{NOT_READY}:NoSchedule"]),
        ("True", ["dedicated:NoSchedule"]),
    ]
    for status, want in steps:
        hub.ready("member1", status)
        assert hub.taints("member1") == want, status
    # One Event per change; the same message twice is one Event counted twice.
    assert sum(e["count"] for e in hub.events("TaintClusterSucceed")) == 4


def test_no_execute_taints_are_left_alone_by_default() -> None:
    """Since v1.14 the controller neither adds nor removes NoExecute taints."""
    hub = Hub()
    hub.external("member1", condition("Ready", "False"))
    hub.to(3600)
    assert hub.taints("member1") == [f"{NOT_READY}:NoSchedule"]
    hub.set_taints(
        "member1",
        {"key": NOT_READY, "effect": "NoSchedule"},
        {"key": NOT_READY, "effect": "NoExecute", "timeAdded": at(0)},
    )
    hub.ready("member1", "True")
    assert hub.taints("member1") == [f"{NOT_READY}:NoExecute"]


def test_a_no_execute_taint_without_time_added_gets_one() -> None:
    hub = Hub()
    hub.external("member1", condition("Ready", "True"))
    hub.to(42)
    hub.set_taints(
        "member1",
        {"key": "maintenance", "effect": "NoExecute"},
        {"key": "dedicated", "effect": "NoSchedule"},
    )
    assert hub.time_added("member1", "maintenance", NO_EXECUTE) == at(42)
    assert hub.time_added("member1", "dedicated", NO_SCHEDULE) is None


# --- the older generation (failover-eviction-timeout) --------------------------------------------


def test_old_generation_pull_member_unreachable_gets_no_execute_timeout_after_its_heartbeat() -> (
    None
):
    """v1.13: Unknown counts from the last heartbeat (the renewal at 60 s): NoExecute
    unreachable at 60 s + 5 m, not a second earlier; both taints go on recovery."""
    hub = Hub(["member1"], settings=OLD_GENERATION)
    hub.to(65)
    hub.member("member1", reachable=False)
    hub.to(100)
    assert hub.taints("member1") == [f"{UNREACHABLE}:NoSchedule"]
    hub.to(359)
    assert hub.taints("member1") == [f"{UNREACHABLE}:NoSchedule"]
    hub.to(360)
    assert hub.taints("member1") == [f"{UNREACHABLE}:NoSchedule", f"{UNREACHABLE}:NoExecute"]
    assert hub.time_added("member1", UNREACHABLE, NO_EXECUTE) == at(360)
    hub.member("member1", reachable=True)
    hub.to(370)
    assert hub.ready_of("member1") == ("True", "ClusterReady")
    assert hub.taints("member1") == []


def test_old_generation_not_ready_for_the_timeout_gets_no_execute_not_ready() -> None:
    """Ready=False seen at 10 s: NoExecute not-ready at 310 s. Unknown from 400 s: counted
    from that change, the unreachable one replaces it at 700 s. True removes everything."""
    hub = Hub(settings=OLD_GENERATION)
    hub.external("member1", condition("Ready", "True"))
    hub.to(10)
    hub.ready("member1", "False")
    hub.to(309)
    assert hub.taints("member1") == [f"{NOT_READY}:NoSchedule"]
    hub.to(310)
    assert hub.taints("member1") == [f"{NOT_READY}:NoSchedule", f"{NOT_READY}:NoExecute"]
    assert hub.time_added("member1", NOT_READY, NO_EXECUTE) == at(310)
    hub.to(400)
    hub.ready("member1", "Unknown")
    assert hub.taints("member1") == [f"{NOT_READY}:NoExecute", f"{UNREACHABLE}:NoSchedule"]
    hub.to(699)
    assert hub.taints("member1") == [f"{NOT_READY}:NoExecute", f"{UNREACHABLE}:NoSchedule"]
    hub.to(700)
    assert hub.taints("member1") == [f"{UNREACHABLE}:NoSchedule", f"{UNREACHABLE}:NoExecute"]
    hub.ready("member1", "True")
    assert hub.taints("member1") == []


def test_old_generation_needs_the_failover_gate_to_add_no_execute() -> None:
    settings = Settings.from_flags({"failover-eviction-timeout": "5m"})
    hub = Hub(settings=settings)
    hub.external("member1", condition("Ready", "False"))
    hub.to(3600)
    assert hub.taints("member1") == [f"{NOT_READY}:NoSchedule"]


def test_old_generation_recovery_before_the_timeout_adds_nothing() -> None:
    hub = Hub(settings=OLD_GENERATION)
    hub.external("member1", condition("Ready", "False"))
    hub.to(299)
    hub.ready("member1", "True")
    hub.to(3600)
    assert hub.taints("member1") == []
    assert len(hub.events("TaintClusterSucceed")) == 2


# --- execution space and finalizer ---------------------------------------------------------------


def work(cluster: str, name: str = "nginx") -> Obj:
    return {
        "apiVersion": WORK.api_version,
        "kind": "Work",
        "metadata": {
            "name": name,
            "namespace": f"karmada-es-{cluster}",
            "finalizers": [EXECUTION_FINALIZER],
        },
        "spec": {"workload": {"manifests": []}},
    }


def binding(*clusters: str) -> Obj:
    return {
        "apiVersion": RESOURCE_BINDING.info.api_version,
        "kind": "ResourceBinding",
        "metadata": {"name": "nginx-deployment", "namespace": "default"},
        "spec": {
            "resource": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "nginx"},
            "clusters": [{"name": c} for c in clusters],
        },
    }


def test_a_joining_cluster_gets_its_execution_space_and_the_finalizer() -> None:
    hub = Hub(["member1"])
    namespace = hub.store.get(NAMESPACE, "karmada-es-member1")
    assert namespace["metadata"]["labels"] == {"karmada.io/system": "true"}
    assert hub.get("member1")["metadata"]["finalizers"] == [FINALIZER]
    assert hub.messages("CreateExecutionSpaceSucceed") == [
        "Created execution space(karmada-es-member1) for cluster(member1)."
    ]


def test_a_deleted_cluster_goes_with_its_execution_space_once_no_binding_has_it() -> None:
    """Deleted at 20 s: its Work is deleted (the execution controller removes the workload,
    then the finalizer); at the next look (30 s) the namespace goes; the cluster waits for
    the binding to leave it (at 35 s) and goes at the look after (40 s), not before."""
    hub = Hub()
    hub.external("member1", condition("Ready", "True"))
    hub.external("member2", condition("Ready", "True"))
    hub.store.create(work("member1"))
    hub.store.create(binding("member1", "member2"))
    hub.to(20)
    hub.delete("member1")
    assert hub.store.list(WORK, "karmada-es-member1").items == []
    assert hub.messages("RemoveExecutionSpaceSucceed") == [
        "Removed execution space for cluster(member1)."
    ]
    hub.to(29)
    assert hub.store.list(NAMESPACE).items[0]["metadata"]["name"] == "karmada-es-member1"
    hub.to(30)
    assert [n["metadata"]["name"] for n in hub.store.list(NAMESPACE).items] == [
        "karmada-es-member2"
    ]
    rb = hub.store.get(RESOURCE_BINDING.info, "nginx-deployment", "default")
    rb["spec"]["clusters"] = [{"name": "member2"}]
    hub.to(35)
    hub.store.update(rb)
    hub.to(39)
    assert "deletionTimestamp" in hub.get("member1")["metadata"]
    hub.to(40)
    assert hub.cluster("member1") is None
    assert hub.taints("member2") == []


def test_a_deleted_pull_cluster_that_is_not_ready_drops_its_works_finalizers() -> None:
    hub = Hub()
    hub.external("member1", condition("Ready", "False"), sync_mode="Pull")
    hub.store.create(work("member1"))
    hub.settle()
    hub.delete("member1")
    assert hub.store.list(WORK).items == []
    assert hub.store.list(NAMESPACE).items == []
    assert hub.cluster("member1") is None


def test_an_unjoined_pull_cluster_whose_agent_is_gone_goes_once_it_is_unknown() -> None:
    """Unreachable from 65 s (last renewal at 60 s) and deleted at 70 s: its Work cannot be
    removed from the member, and the cluster is still Ready, so it waits; at 100 s the
    monitor posts Unknown, the Work's finalizer is dropped and the cluster goes."""
    hub = Hub(["member1"])
    hub.store.create(work("member1"))
    hub.to(65)
    hub.member("member1", reachable=False)
    hub.to(70)
    hub.delete("member1")
    hub.to(99)
    assert hub.store.list(WORK).items != []
    assert hub.cluster("member1") is not None
    hub.to(100)
    assert hub.store.list(WORK).items == []
    assert hub.cluster("member1") is None


def test_a_deleted_cluster_with_nothing_left_goes_at_once() -> None:
    hub = Hub()
    hub.external("member1", condition("Ready", "True"))
    hub.delete("member1")
    assert hub.cluster("member1") is None
    assert hub.store.list(NAMESPACE).items == []


# --- scenarios -----------------------------------------------------------------------------------


def simulate(path: Path) -> Report:
    return Simulation(parse(yaml.safe_load(path.read_text()), str(path))).run()


def example(name: str) -> Path:
    return EXAMPLES / name


def test_example_unreachable_member_taints() -> None:
    report = simulate(example("unreachable-member-taints.yaml"))
    assert report.failed == 0, [(o.path, o.at, o.actual) for o in report.outcomes if not o.passed]
