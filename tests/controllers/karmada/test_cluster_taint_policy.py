"""The ClusterTaintPolicy controller: taints from cluster conditions, Karmada's or a third
party's (seed 000).

Ported from upstream's clustertaintpolicy_controller_test.go and
clustertaintpolicy_race_test.go, then behaviour in virtual time beside the cluster
controller.
"""

from __future__ import annotations

import itertools
from datetime import timedelta
from typing import Any

import pytest
from test_cluster import Hub, at, condition, example, simulate

from fleetwarden.api.core import Taint
from fleetwarden.api.errors import Conflict
from fleetwarden.api.karmada.policy import MatchCondition
from fleetwarden.api.karmada.policy import Taint as PolicyTaint
from fleetwarden.api.meta import Condition
from fleetwarden.controllers.karmada.cluster import CLUSTER
from fleetwarden.controllers.karmada.cluster_taint_policy import (
    CLUSTER_TAINT_POLICY,
    ClusterTaintPolicyController,
    add_taints_on_cluster,
    condition_matches,
    remove_taints_from_cluster,
)
from fleetwarden.runtime.clock import DEFAULT_EPOCH, VirtualClock
from fleetwarden.runtime.events import EVENT, EventRecorder
from fleetwarden.runtime.informer import Cache
from fleetwarden.runtime.manager import Context
from fleetwarden.runtime.settings import Settings
from fleetwarden.store import MemoryStore

CTP = CLUSTER_TAINT_POLICY
FAILOVER = Settings.from_flags({"feature-gates": "Failover=true"})
NOW = DEFAULT_EPOCH + timedelta(hours=1)
MINUTE_AGO = NOW - timedelta(minutes=1)

Obj = dict[str, Any]


# --- clustertaintpolicy_controller_test.go -------------------------------------------------------


def conditions(*pairs: tuple[str, str]) -> list[Condition]:
    return [Condition(type=t, status=s) for t, s in pairs]


def match(type_: str, operator: str, *values: str) -> MatchCondition:
    return MatchCondition(condition_type=type_, operator=operator, status_values=list(values))


@pytest.mark.parametrize(
    ("cluster_conditions", "match_conditions", "expected"),
    [
        # empty match conditions
        (conditions(("Ready", "True")), [], False),
        # match: operator is In
        (conditions(("Ready", "True")), [match("Ready", "In", "True")], True),
        # don't match: operator is In
        (conditions(("Ready", "False")), [match("Ready", "In", "True")], False),
        # match: operator is NotIn
        (conditions(("Ready", "False")), [match("Ready", "NotIn", "True", "Unknown")], True),
        # don't match: operator is NotIn
        (conditions(("Ready", "False")), [match("Ready", "NotIn", "False")], False),
        # match: multiple conditions
        (conditions(("Ready", "Unknown"), ("NetworkReady", "False"), ("StorageReady", "True")),
         [match("Ready", "In", "False", "Unknown"), match("NetworkReady", "NotIn", "True")], True),
        # don't match: multiple conditions
        (conditions(("Ready", "True"), ("NetworkReady", "False"), ("StorageReady", "True")),
         [match("Ready", "In", "False", "Unknown"), match("NetworkReady", "NotIn", "True")],
         False),
        # a condition the cluster lacks matches neither In nor NotIn
        (conditions(("Ready", "True")), [match("SchedulerDown", "In", "True")], False),
        (conditions(("Ready", "True")), [match("SchedulerDown", "NotIn", "True")], False),
        # an operator it does not know matches nothing
        (conditions(("Ready", "True")), [match("Ready", "Exists", "True")], False),
    ],
)  # fmt: skip
def test_condition_matches(
    cluster_conditions: list[Condition], match_conditions: list[MatchCondition], expected: bool
) -> None:
    assert condition_matches(cluster_conditions, match_conditions) is expected


def taint(key: str, effect: str, value: str | None = None, added: Any = None) -> Taint:
    result = Taint(key=key, effect=effect, time_added=added)
    if value is not None:
        result.value = value
    return result


def policy_taint(key: str, effect: str, value: str | None = None) -> PolicyTaint:
    return PolicyTaint(key=key, effect=effect, value=value)


@pytest.mark.parametrize(
    ("taints", "to_add", "expected"),
    [
        # add new taint
        ([], [policy_taint("key1", "NoSchedule", "value1")],
         [taint("key1", "NoSchedule", "value1", NOW)]),
        # add the existing taint, don't update TimeAdded
        ([taint("key1", "NoSchedule", "value1", MINUTE_AGO)],
         [policy_taint("key1", "NoSchedule", "value1")],
         [taint("key1", "NoSchedule", "value1", MINUTE_AGO)]),
        # add multi taints
        ([taint("key2", "PreferNoSchedule", "value2", MINUTE_AGO)],
         [policy_taint("key1", "NoSchedule", "value1"), policy_taint("key3", "NoExecute", "value3")],
         [taint("key2", "PreferNoSchedule", "value2", MINUTE_AGO),
          taint("key1", "NoSchedule", "value1", NOW), taint("key3", "NoExecute", "value3", NOW)]),
    ],
)  # fmt: skip
def test_add_taints_on_cluster(
    taints: list[Taint], to_add: list[PolicyTaint], expected: list[Taint]
) -> None:
    result = add_taints_on_cluster(taints, to_add, NOW)
    assert [t.to_dict() for t in result] == [t.to_dict() for t in expected]


@pytest.mark.parametrize(
    ("taints", "to_remove", "expected"),
    [
        # remove a taint
        ([taint("key1", "NoSchedule", added=MINUTE_AGO)], [policy_taint("key1", "NoSchedule")],
         []),
        # remove multiple matched taints
        ([taint("key1", "NoSchedule", added=MINUTE_AGO), taint("key2", "NoExecute", added=NOW)],
         [policy_taint("key1", "NoSchedule"), policy_taint("key2", "NoExecute")], []),
        # no matched taints
        ([taint("key1", "NoSchedule", added=MINUTE_AGO)], [policy_taint("key2", "NoExecute")],
         [taint("key1", "NoSchedule", added=MINUTE_AGO)]),
    ],
)  # fmt: skip
def test_remove_taints_from_cluster(
    taints: list[Taint], to_remove: list[PolicyTaint], expected: list[Taint]
) -> None:
    result = remove_taints_from_cluster(taints, to_remove)
    assert [t.to_dict() for t in result] == [t.to_dict() for t in expected]


def ctp(
    name: str,
    *taints: Obj,
    add: list[Obj] | None = None,
    remove: list[Obj] | None = None,
    targets: Obj | None = None,
) -> Obj:
    spec: Obj = {"taints": list(taints)}
    if add is not None:
        spec["addOnConditions"] = add
    if remove is not None:
        spec["removeOnConditions"] = remove
    if targets is not None:
        spec["targetClusters"] = targets
    return {
        "apiVersion": CTP.api_version,
        "kind": CTP.kind,
        "metadata": {"name": name},
        "spec": spec,
    }


def on(type_: str, operator: str, *values: str) -> Obj:
    return {"conditionType": type_, "operator": operator, "statusValues": list(values)}


# clustertaintpolicy_race_test.go
def test_reconcile_patch_rejects_stale_data() -> None:
    """The write carries the resourceVersion read: a taint the cluster controller added in
    between makes it fail with a conflict (retried), never silently overwritten."""
    clock = VirtualClock(NOW)
    uids = itertools.count(1)
    store = MemoryStore(now=clock.now, new_uid=lambda: f"uid-{next(uids)}")
    store.create(
        {
            "apiVersion": CLUSTER.api_version, "kind": "Cluster", "metadata": {"name": "member1"},
            "spec": {"syncMode": "Push"},
        }
    )  # fmt: skip
    cluster = store.get(CLUSTER, "member1")
    cluster["status"] = {"conditions": [condition("Ready", "False")]}
    store.update(cluster, subresource="status")
    store.create(
        ctp(
            "test-policy",
            {"key": "custom/unhealthy", "value": "true", "effect": "NoSchedule"},
            add=[on("Ready", "In", "False")],
        )
    )
    cache = Cache(store)  # read now, never fed again: stale from here on
    cache.informer(CLUSTER)
    cache.informer(CTP)
    cache.sync()
    cluster = store.get(CLUSTER, "member1")
    cluster["spec"]["taints"] = [{"key": "cluster.karmada.io/not-ready", "effect": "NoSchedule"}]
    store.update(cluster)
    recorder = EventRecorder(store, clock, "cluster-taint-policy-controller")
    ctx = Context(cache, store, clock, FAILOVER, recorder)
    with pytest.raises(Conflict):
        ClusterTaintPolicyController().reconcile("member1", ctx)
    assert store.get(CLUSTER, "member1")["spec"]["taints"] == [
        {"key": "cluster.karmada.io/not-ready", "effect": "NoSchedule"}
    ]
    [event] = store.list(EVENT).items
    assert (event["type"], event["reason"]) == ("Warning", "TaintClusterFailed")


# --- behaviour -----------------------------------------------------------------------------------

SCHEDULER_DOWN = {"key": "scheduler-down", "effect": "NoSchedule"}


def scheduler_down(hub: Hub, cluster: str, status: str) -> None:
    hub.report(cluster, condition("SchedulerDown", status))


def policy_hub(*policies: Obj, settings: Settings = FAILOVER, clusters: int = 1) -> Hub:
    hub = Hub(settings=settings)
    for i in range(1, clusters + 1):
        hub.external(f"member{i}", condition("Ready", "True"))
    for policy in policies:
        hub.store.create(policy)
    hub.settle()
    return hub


SCHEDULER_POLICY = ctp(
    "scheduler-down",
    SCHEDULER_DOWN,
    add=[on("SchedulerDown", "In", "True")],
    remove=[on("SchedulerDown", "NotIn", "True")],
)


def test_a_third_party_condition_adds_and_removes_the_taint() -> None:
    hub = policy_hub(SCHEDULER_POLICY)
    assert hub.taints("member1") == []
    hub.to(30)
    scheduler_down(hub, "member1", "True")
    assert hub.taints("member1") == ["scheduler-down:NoSchedule"]
    assert hub.time_added("member1", "scheduler-down", "NoSchedule") == at(30)
    [event] = hub.events("TaintClusterSucceed")
    assert event["source"] == {"component": "cluster-taint-policy-controller"}
    assert event["message"] == (
        "Update Cluster(member1) with taints(cluster now has taints("
        "[{Key:scheduler-down,Effect:NoSchedule}])) succeed"
    )
    hub.to(60)
    scheduler_down(hub, "member1", "False")
    assert hub.taints("member1") == []


def test_without_the_failover_gate_nothing_happens() -> None:
    hub = policy_hub(SCHEDULER_POLICY, settings=Settings())
    scheduler_down(hub, "member1", "True")
    assert hub.taints("member1") == []


@pytest.mark.parametrize(
    ("targets", "tainted"),
    [
        (None, ["member1", "member2", "member3"]),
        ({"clusterNames": ["member1", "member3"]}, ["member1", "member3"]),
        ({"exclude": ["member2"]}, ["member1", "member3"]),
        ({"labelSelector": {"matchLabels": {"env": "prod"}}}, ["member2"]),
    ],
)
def test_target_clusters_is_a_cluster_affinity(targets: Obj | None, tainted: list[str]) -> None:
    policy = ctp("p", SCHEDULER_DOWN, add=[on("SchedulerDown", "In", "True")], targets=targets)
    hub = policy_hub(policy, clusters=3)
    cluster = hub.get("member2")
    cluster["metadata"]["labels"] = {"env": "prod"}
    hub.store.update(cluster)
    for name in ("member1", "member2", "member3"):
        scheduler_down(hub, name, "True")
    assert [n for n in ("member1", "member2", "member3") if hub.taints(n)] == tainted


def test_add_on_conditions_are_anded() -> None:
    policy = ctp(
        "p",
        {"key": "degraded", "effect": "NoSchedule"},
        add=[on("Ready", "NotIn", "True"), on("NetworkAvailable", "NotIn", "True")],
    )
    hub = policy_hub(policy)
    hub.ready("member1", "False")
    assert hub.taints("member1") == ["cluster.karmada.io/not-ready:NoSchedule"]
    hub.report("member1", condition("NetworkAvailable", "False"))
    assert hub.taints("member1") == [
        "cluster.karmada.io/not-ready:NoSchedule",
        "degraded:NoSchedule",
    ]


def test_removal_wins_when_add_and_remove_both_match() -> None:
    policy = ctp(
        "p",
        SCHEDULER_DOWN,
        add=[on("SchedulerDown", "In", "True")],
        remove=[on("SchedulerDown", "NotIn", "False")],
    )
    hub = policy_hub(policy)
    scheduler_down(hub, "member1", "True")
    assert hub.taints("member1") == []
    assert hub.events("TaintClusterSucceed") == []


def test_all_changes_to_one_cluster_go_in_one_write() -> None:
    """Two policies, one adding two taints and one removing another: one update."""
    first = ctp(
        "first",
        SCHEDULER_DOWN,
        {"key": "no-new-work", "effect": "NoExecute"},
        add=[on("SchedulerDown", "In", "True")],
    )
    second = ctp(
        "second",
        {"key": "scheduler-up", "effect": "NoSchedule"},
        remove=[on("SchedulerDown", "In", "True")],
    )
    hub = policy_hub(first, second)
    hub.set_taints("member1", {"key": "scheduler-up", "effect": "NoSchedule"})
    before = int(hub.get("member1")["metadata"]["resourceVersion"])
    hub.to(5)
    scheduler_down(hub, "member1", "True")
    cluster = hub.get("member1")
    assert int(cluster["metadata"]["resourceVersion"]) == before + 2  # status, then taints
    assert cluster["spec"]["taints"] == [
        {"key": "scheduler-down", "effect": "NoSchedule", "timeAdded": at(5)},
        {"key": "no-new-work", "effect": "NoExecute", "timeAdded": at(5)},
    ]
    assert hub.messages("TaintClusterSucceed") == [
        "Update Cluster(member1) with taints(cluster now has taints("
        "[{Key:scheduler-down,Effect:NoSchedule},{Key:no-new-work,Effect:NoExecute}])) succeed"
    ]


def test_policies_apply_oldest_first() -> None:
    """The older policy adds the taint, the newer removes it: removed; the other way, kept."""
    adds = ctp("adds", SCHEDULER_DOWN, add=[on("SchedulerDown", "In", "True")])
    removes = ctp("removes", SCHEDULER_DOWN, remove=[on("SchedulerDown", "In", "True")])
    for order, want in (((adds, removes), []), ((removes, adds), ["scheduler-down:NoSchedule"])):
        hub = policy_hub()
        for i, policy in enumerate(order):
            hub.to(i + 1)
            hub.store.create(policy)
        hub.settle()
        scheduler_down(hub, "member1", "True")
        assert hub.taints("member1") == want


def test_a_new_policy_and_a_new_cluster_are_looked_at() -> None:
    hub = policy_hub(clusters=0)
    hub.external("member1", condition("Ready", "True"), condition("SchedulerDown", "True"))
    hub.store.create(SCHEDULER_POLICY)
    hub.settle()
    assert hub.taints("member1") == ["scheduler-down:NoSchedule"]
    hub.external("member2", condition("Ready", "True"), condition("SchedulerDown", "True"))
    assert hub.taints("member2") == ["scheduler-down:NoSchedule"]


def test_deleting_a_policy_leaves_its_taints() -> None:
    hub = policy_hub(SCHEDULER_POLICY)
    scheduler_down(hub, "member1", "True")
    hub.store.delete(CTP, "scheduler-down")
    hub.settle()
    assert hub.taints("member1") == ["scheduler-down:NoSchedule"]
    scheduler_down(hub, "member1", "False")
    assert hub.taints("member1") == ["scheduler-down:NoSchedule"]


def test_changing_a_policys_taints_leaves_the_old_ones() -> None:
    hub = policy_hub(SCHEDULER_POLICY)
    scheduler_down(hub, "member1", "True")
    policy = hub.store.get(CTP, "scheduler-down")
    policy["spec"]["taints"] = [{"key": "scheduler-unhealthy", "effect": "NoSchedule"}]
    hub.store.update(policy)
    hub.settle()
    assert hub.taints("member1") == ["scheduler-down:NoSchedule", "scheduler-unhealthy:NoSchedule"]
    scheduler_down(hub, "member1", "False")
    assert hub.taints("member1") == ["scheduler-down:NoSchedule"]


def test_changing_a_policys_targets_leaves_the_taints_on_the_clusters_it_left() -> None:
    policy = ctp(
        "p",
        SCHEDULER_DOWN,
        add=[on("SchedulerDown", "In", "True")],
        remove=[on("SchedulerDown", "NotIn", "True")],
        targets={"clusterNames": ["member1"]},
    )
    hub = policy_hub(policy, clusters=2)
    scheduler_down(hub, "member1", "True")
    scheduler_down(hub, "member2", "True")
    assert (hub.taints("member1"), hub.taints("member2")) == (["scheduler-down:NoSchedule"], [])
    stored = hub.store.get(CTP, "p")
    stored["spec"]["targetClusters"] = {"clusterNames": ["member2"]}
    hub.store.update(stored)
    hub.settle()
    assert hub.taints("member2") == ["scheduler-down:NoSchedule"]
    scheduler_down(hub, "member1", "False")
    assert hub.taints("member1") == ["scheduler-down:NoSchedule"]


def test_a_taint_removed_by_hand_comes_back_only_when_the_conditions_change() -> None:
    """As upstream's predicates: the controller looks at a cluster when its conditions
    change, not when its taints do."""
    hub = policy_hub(SCHEDULER_POLICY)
    scheduler_down(hub, "member1", "True")
    hub.set_taints("member1")
    hub.to(3600)
    assert hub.taints("member1") == []
    hub.report("member1", condition("SchedulerDown", "True", since=3600))
    assert hub.taints("member1") == ["scheduler-down:NoSchedule"]


def test_policy_and_cluster_controller_taints_live_side_by_side() -> None:
    """The cluster controller's NoSchedule taint and a policy's NoExecute one for the same
    Ready condition (seed 000's not-ready example); both go when Ready is back."""
    policy = ctp(
        "not-ready",
        {"key": "cluster.karmada.io/not-ready", "effect": "NoExecute"},
        add=[on("Ready", "NotIn", "True")],
        remove=[on("Ready", "In", "True")],
    )
    hub = policy_hub(policy)
    hub.to(10)
    hub.ready("member1", "False")
    assert hub.taints("member1") == [
        "cluster.karmada.io/not-ready:NoSchedule",
        "cluster.karmada.io/not-ready:NoExecute",
    ]
    assert hub.time_added("member1", "cluster.karmada.io/not-ready", "NoExecute") == at(10)
    hub.ready("member1", "True")
    assert hub.taints("member1") == []


def test_example_cluster_taint_policy() -> None:
    report = simulate(example("cluster-taint-policy.yaml"))
    assert report.failed == 0, [(o.path, o.at, o.actual) for o in report.outcomes if not o.passed]
