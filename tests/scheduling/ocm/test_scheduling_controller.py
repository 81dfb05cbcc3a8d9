"""The placement scheduling controller: candidates, status, PlacementDecisions, and which
events re-evaluate which Placements, with the real scheduler.

Ported from upstream's scheduling_controller_test.go, cluster_event_handler_test.go,
enqueue_test.go and test/integration/placement (placement_test.go, toleration_test.go), run
in virtual time; then batching, no-flap, toleration expiry and re-evaluation scope.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest

from fleetwarden.api.meta import Resource
from fleetwarden.api.ocm.placement import PLACEMENT_LABEL
from fleetwarden.api.registry import REGISTRY
from fleetwarden.runtime.clock import DEFAULT_EPOCH, RealClock
from fleetwarden.runtime.informer import Cache
from fleetwarden.runtime.manager import ControllerManager, RealDriver
from fleetwarden.scheduling.ocm.cache_handle import CacheHandle
from fleetwarden.scheduling.ocm.decisions import by_placement
from fleetwarden.scheduling.ocm.enqueue import (
    PLACEMENTS_BY_CLUSTER_SET_BINDING,
    PLACEMENTS_BY_SCORE,
    Enqueuer,
    index_placement_by_cluster_set_binding,
    index_placements_by_score,
)
from fleetwarden.scheduling.ocm.framework import Code, Status
from fleetwarden.scheduling.ocm.kinds import (
    ADD_ON_PLACEMENT_SCORE,
    MANAGED_CLUSTER,
    MANAGED_CLUSTER_SET,
    MANAGED_CLUSTER_SET_BINDING,
    PLACEMENT,
    PLACEMENT_DECISION,
)
from fleetwarden.scheduling.ocm.scheduling_controller import (
    ClusterSetError,
    available_clusters,
    misconfigured_condition,
    satisfied_condition,
    scheduling_controller,
)
from fleetwarden.semantics.cluster_sets import BY_CLUSTER_SET, by_cluster_set
from fleetwarden.store import MemoryStore

from .placement_hub import NAMESPACE, PlacementHub

Obj = dict[str, Any]
P = "placement1"
UNREACHABLE = "cluster.open-cluster-management.io/unreachable"


def group(index: int, name: str, decisions: list[str], count: int) -> Obj:
    return {
        "decisionGroupIndex": index,
        "decisionGroupName": name,
        "decisions": decisions,
        "clusterCount": count,
    }


def canary(per_group: int | str | None = None, **groups: dict[str, str]) -> Obj:
    strategy: Obj = {
        "decisionGroups": [
            {"groupName": n, "groupClusterSelector": {"labelSelector": {"matchLabels": m}}}
            for n, m in groups.items()
        ]
    }
    if per_group is not None:
        strategy["clustersPerDecisionGroup"] = per_group
    return {"decisionStrategy": {"groupStrategy": strategy}}


@pytest.fixture
def hub() -> PlacementHub:
    return PlacementHub()


# --- TestSchedulingController_sync ---------------------------------------------------------------


def test_placement_satisfied(hub: PlacementHub) -> None:
    hub.bind("clusterset1")
    hub.clusters("cluster", 3, "clusterset1")
    hub.placement(P)
    assert hub.decided(P) == ["cluster-1", "cluster-2", "cluster-3"]
    status = hub.status(P)
    assert status["numberOfSelectedClusters"] == 3
    assert status["decisionGroups"] == [group(0, "", ["placement1-decision-1"], 3)]
    assert hub.condition(P, "PlacementSatisfied") == {
        "type": "PlacementSatisfied",
        "status": "True",
        "reason": "AllDecisionsScheduled",
        "message": "All cluster decisions scheduled",
        "lastTransitionTime": "2025-01-01T00:00:00Z",
    }
    assert hub.condition(P, "PlacementMisconfigured") == {
        "type": "PlacementMisconfigured",
        "status": "False",
        "reason": "Succeedconfigured",
        "message": "Placement configurations check pass",
        "lastTransitionTime": "2025-01-01T00:00:00Z",
    }


def test_placement_unsatisfied(hub: PlacementHub) -> None:
    hub.bind("clusterset1")
    hub.clusters("cluster", 3, "clusterset1")
    hub.placement(P, {"numberOfClusters": 4})
    assert hub.status(P)["numberOfSelectedClusters"] == 3
    condition = hub.condition(P, "PlacementSatisfied")
    assert (condition["status"], condition["reason"], condition["message"]) == (
        "False",
        "NotAllDecisionsScheduled",
        "1 cluster decisions unscheduled",
    )


def test_placement_with_canary_group_strategy(hub: PlacementHub) -> None:
    hub.bind("clusterset1")
    for i, cloud in enumerate(["Amazon", "Amazon", "Azure", "Azure"], start=1):
        hub.cluster(f"cluster{i}", "clusterset1", {"cloud": cloud})
    hub.placement(P, canary(1, canary={"cloud": "Azure"}))
    assert hub.status(P)["decisionGroups"] == [
        group(0, "canary", ["placement1-decision-1"], 1),
        group(1, "canary", ["placement1-decision-2"], 1),
        group(2, "", ["placement1-decision-3"], 1),
        group(3, "", ["placement1-decision-4"], 1),
    ]
    assert hub.decided(P) == ["cluster3", "cluster4", "cluster1", "cluster2"]
    assert hub.satisfied(P) == ("True", "AllDecisionsScheduled")


def test_placement_with_multiple_group_strategy(hub: PlacementHub) -> None:
    hub.bind("clusterset1")
    for i, cloud in enumerate(["Amazon", "Amazon", "Azure"], start=1):
        hub.cluster(f"cluster{i}", "clusterset1", {"cloud": cloud})
    hub.placement(P, canary(None, group1={"cloud": "Amazon"}, group2={"cloud": "Azure"}))
    assert hub.status(P)["decisionGroups"] == [
        group(0, "group1", ["placement1-decision-1"], 2),
        group(1, "group2", ["placement1-decision-2"], 1),
    ]


def test_placement_with_only_clusters_per_decision_group(hub: PlacementHub) -> None:
    hub.bind("clusterset1")
    hub.clusters("cluster", 3, "clusterset1")
    hub.placement(P, canary("25%"))
    assert hub.status(P)["decisionGroups"] == [
        group(i, "", [f"placement1-decision-{i + 1}"], 1) for i in range(3)
    ]


def test_placement_missing_bindings(hub: PlacementHub) -> None:
    hub.placement(P)
    [pd] = hub.placement_decisions(P)
    assert (pd.get("status") or {}).get("decisions") is None  # created empty
    status = hub.status(P)
    assert status["numberOfSelectedClusters"] == 0
    assert status["decisionGroups"] == [group(0, "", ["placement1-decision-1"], 0)]
    condition = hub.condition(P, "PlacementSatisfied")
    assert (condition["status"], condition["reason"], condition["message"]) == (
        "False",
        "NoManagedClusterSetBindings",
        "No valid ManagedClusterSetBindings found in placement namespace",
    )


def test_placement_all_cluster_sets_empty(hub: PlacementHub) -> None:
    hub.bind("clusterset1")
    hub.placement(P)
    condition = hub.condition(P, "PlacementSatisfied")
    assert (condition["reason"], condition["message"]) == (
        "AllManagedClusterSetsEmpty",
        "All ManagedClusterSets [clusterset1] have no member ManagedCluster",
    )
    assert hub.status(P)["decisionGroups"] == [group(0, "", ["placement1-decision-1"], 0)]


def test_placement_no_intersection(hub: PlacementHub) -> None:
    hub.bind("clusterset1")
    hub.clusters("cluster", 1, "clusterset1")
    hub.placement(P, {"clusterSets": ["clusterset2", "clusterset3"]})
    condition = hub.condition(P, "PlacementSatisfied")
    assert (condition["reason"], condition["message"]) == (
        "NoIntersection",
        "None of ManagedClusterSets [clusterset2,clusterset3] is bound to placement namespace",
    )


def test_placement_no_cluster_matches(hub: PlacementHub) -> None:
    hub.bind("clusterset1")
    hub.clusters("cluster", 1, "clusterset1")
    predicate = {"requiredClusterSelector": {"labelSelector": {"matchLabels": {"a": "b"}}}}
    hub.placement(P, {"predicates": [predicate]})
    condition = hub.condition(P, "PlacementSatisfied")
    assert (condition["status"], condition["reason"], condition["message"]) == (
        "False",
        "NoManagedClusterMatched",
        "No ManagedCluster matches any of the cluster predicate",
    )
    assert hub.decided(P) == []


def test_placement_status_not_changed_writes_nothing(hub: PlacementHub) -> None:
    hub.bind("clusterset1")
    hub.clusters("cluster", 3, "clusterset1")
    hub.placement(P)
    before = hub.store.resource_version
    hub.reconcile(NAMESPACE, P)
    assert hub.store.resource_version == before


def test_disabled_placement_is_not_scheduled(hub: PlacementHub) -> None:
    hub.bind("clusterset1")
    hub.clusters("cluster", 3, "clusterset1")
    hub.store.create(
        {
            "apiVersion": PLACEMENT.api_version,
            "kind": "Placement",
            "metadata": {
                "name": P,
                "namespace": NAMESPACE,
                "annotations": {
                    "cluster.open-cluster-management.io/experimental-scheduling-disable": "true"
                },
            },
            "spec": {},
        }
    )
    before = hub.store.resource_version
    hub.settle()
    assert hub.store.resource_version == before
    assert hub.placement_decisions(P) == []


# --- TestGetValidManagedClusterSetBindings, TestGetValidManagedClusterSets ---------------------


def test_a_binding_counts_only_when_bound(hub: PlacementHub) -> None:
    hub.cluster_set("clusterset1")
    hub.binding("clusterset1", bound=False)
    hub.clusters("cluster", 2, "clusterset1")
    hub.placement(P)
    assert hub.satisfied(P) == ("False", "NoManagedClusterSetBindings")
    hub.set_bound("clusterset1", "True")
    assert hub.decided(P) == ["cluster-1", "cluster-2"]
    hub.set_bound("clusterset1", "False")
    assert hub.decided(P) == []
    assert hub.satisfied(P) == ("False", "NoManagedClusterSetBindings")


def test_a_binding_to_a_set_that_does_not_exist_does_not_count(hub: PlacementHub) -> None:
    hub.binding("clusterset1")  # Bound, as a stale status could still say
    hub.clusters("cluster", 1, "clusterset1")
    hub.placement(P)
    assert hub.satisfied(P) == ("False", "NoManagedClusterSetBindings")


def test_placement_cluster_sets_intersect_the_bound_ones(hub: PlacementHub) -> None:
    for name in ("clusterset1", "clusterset2", "clusterset3"):
        hub.cluster_set(name)
        hub.clusters(name, 1, name)
    hub.binding("clusterset2")
    hub.binding("clusterset3")
    hub.placement(P, {"clusterSets": ["clusterset1", "clusterset2"]})
    assert hub.decided(P) == ["clusterset2-1"]
    hub.placement("placement2")
    assert hub.decided("placement2") == ["clusterset2-1", "clusterset3-1"]


# --- TestGetAvailableClusters ----------------------------------------------------------------


def available(hub: PlacementHub, *cluster_sets: str) -> list[str]:
    return [c.metadata.name for c in available_clusters(hub.manager.cache, cluster_sets)]


def test_available_clusters(hub: PlacementHub) -> None:
    hub.cluster_set("clusterset1")
    hub.cluster_set("clusterset2")
    hub.cluster_set("openshift", {"matchLabels": {"vendor": "openShift"}})
    hub.cluster_set("global", {})
    hub.cluster("cluster1", "clusterset1")
    hub.cluster("cluster2", "clusterset2")
    hub.cluster("cluster3", labels={"vendor": "openShift"})
    hub.settle()
    assert available(hub) == []
    assert available(hub, "clusterset1", "clusterset2") == ["cluster1", "cluster2"]
    assert available(hub, "openshift") == ["cluster3"]
    assert available(hub, "global") == ["cluster1", "cluster2", "cluster3"]
    assert available(hub, "removed") == []


def test_available_clusters_leave_out_those_being_deleted(hub: PlacementHub) -> None:
    hub.cluster_set("clusterset1")
    hub.cluster("cluster1", "clusterset1")
    cluster = hub.store.get(MANAGED_CLUSTER, "cluster1")
    cluster["metadata"]["finalizers"] = ["test"]
    hub.store.update(cluster)
    hub.delete(MANAGED_CLUSTER, "cluster1")
    assert available(hub, "clusterset1") == []


def test_a_set_with_an_invalid_selector_type_stops_scheduling(hub: PlacementHub) -> None:
    hub.store.create(
        {
            "apiVersion": MANAGED_CLUSTER_SET.api_version,
            "kind": "ManagedClusterSet",
            "metadata": {"name": "clusterset1"},
            "spec": {"clusterSelector": {"selectorType": "errorType"}},
        }
    )
    hub.settle()
    with pytest.raises(ClusterSetError, match="selectorType is not right: errorType"):
        available(hub, "clusterset1")


# --- TestNewSatisfiedCondition, TestNewMisconfiguredCondition --------------------------------


@pytest.mark.parametrize(
    ("spec_sets", "eligible", "bindings", "available_", "feasible", "unscheduled", "expected"),
    [
        ([], [], 0, 0, 0, 5, ("False", "NoManagedClusterSetBindings")),
        (["clusterset1"], [], 1, 0, 0, 0, ("False", "NoIntersection")),
        ([], ["clusterset1"], 1, 0, 0, 0, ("False", "AllManagedClusterSetsEmpty")),
        ([], ["clusterset1"], 1, 1, 0, 0, ("False", "NoManagedClusterMatched")),
        ([], ["clusterset1"], 1, 1, 1, 0, ("True", "AllDecisionsScheduled")),
        ([], ["clusterset1"], 1, 1, 1, 1, ("False", "NotAllDecisionsScheduled")),
    ],
)
def test_satisfied_condition(
    spec_sets: list[str],
    eligible: list[str],
    bindings: int,
    available_: int,
    feasible: int,
    unscheduled: int,
    expected: tuple[str, str],
) -> None:
    condition = satisfied_condition(
        spec_sets, eligible, bindings, available_, feasible, unscheduled, Status()
    )
    assert (condition.status, condition.reason) == expected


def test_satisfied_condition_of_a_scheduling_error() -> None:
    condition = satisfied_condition([], ["s"], 1, 1, 1, 0, Status(Code.ERROR, "p", ["a", "b"]))
    assert (condition.status, condition.reason, condition.message) == (
        "False",
        "NotAllDecisionsScheduled",
        "a, b",
    )


@pytest.mark.parametrize(
    ("status", "expected"),
    [
        (Status(Code.SUCCESS, "plugin", ["reasons"]),
         ("False", "Succeedconfigured", "Placement configurations check pass")),
        (Status(Code.ERROR, "plugin", ["reasons"]),
         ("False", "Succeedconfigured", "Placement configurations check pass")),
        (Status(Code.MISCONFIGURED, "plugin", ["reasons"]),
         ("True", "Misconfigured", "plugin:reasons")),
    ],
)  # fmt: skip
def test_misconfigured_condition(status: Status, expected: tuple[str, str, str]) -> None:
    condition = misconfigured_condition(status)
    assert (condition.status, condition.reason, condition.message) == expected


# --- enqueue_test.go, cluster_event_handler_test.go --------------------------------------------


def cluster_obj(name: str, **labels: str) -> Obj:
    return {"apiVersion": MANAGED_CLUSTER.api_version, "kind": "ManagedCluster",
            "metadata": {"name": name, "labels": labels}}  # fmt: skip


def in_set(name: str, cluster_set: str, **labels: str) -> Obj:
    return cluster_obj(
        name, **{"cluster.open-cluster-management.io/clusterset": cluster_set}, **labels
    )


def set_obj(name: str, selector: Obj | None = None) -> Obj:
    spec = (
        {}
        if selector is None
        else {"clusterSelector": {"selectorType": "LabelSelector", "labelSelector": selector}}
    )
    return {"apiVersion": MANAGED_CLUSTER_SET.api_version, "kind": "ManagedClusterSet",
            "metadata": {"name": name}, "spec": spec}  # fmt: skip


def binding_obj(namespace: str, cluster_set: str, bound: bool = True) -> Obj:
    status = {"conditions": [{"type": "Bound", "status": "True" if bound else "False"}]}
    return {"apiVersion": MANAGED_CLUSTER_SET_BINDING.api_version, "kind": "ManagedClusterSetBinding",
            "metadata": {"name": cluster_set, "namespace": namespace},
            "spec": {"clusterSet": cluster_set}, "status": status}  # fmt: skip


def placement_obj(namespace: str, name: str, *cluster_sets: str, score: str | None = None) -> Obj:
    spec: Obj = {"clusterSets": list(cluster_sets)} if cluster_sets else {}
    if score is not None:
        coordinate = {"type": "AddOn", "addOn": {"resourceName": score, "scoreName": "cpu"}}
        spec["prioritizerPolicy"] = {
            "configurations": [{"scoreCoordinate": coordinate, "weight": 1}]
        }
    return {"apiVersion": PLACEMENT.api_version, "kind": "Placement",
            "metadata": {"name": name, "namespace": namespace}, "spec": spec}  # fmt: skip


def score_obj(cluster: str, name: str) -> Obj:
    return {"apiVersion": ADD_ON_PLACEMENT_SCORE.api_version, "kind": "AddOnPlacementScore",
            "metadata": {"name": name, "namespace": cluster}}  # fmt: skip


def enqueuer(*objects: Obj) -> Enqueuer:
    """An Enqueuer over a cache holding the objects (statuses included), indexed."""
    store = MemoryStore()
    for obj in objects:
        created = store.create(obj)
        if "status" in obj:
            created["status"] = obj["status"]
            store.update(created, subresource="status")
    cache = Cache(store)
    cache.informer(PLACEMENT).add_indexers(
        {
            PLACEMENTS_BY_CLUSTER_SET_BINDING: index_placement_by_cluster_set_binding,
            PLACEMENTS_BY_SCORE: index_placements_by_score,
        }
    )
    cache.informer(MANAGED_CLUSTER_SET_BINDING).add_indexers({BY_CLUSTER_SET: by_cluster_set})
    for info in (MANAGED_CLUSTER, MANAGED_CLUSTER_SET):
        cache.informer(info)
    cache.sync()
    return Enqueuer(cache)


def typed(obj: Obj) -> Resource:
    return REGISTRY.decode(obj)


def updated(e: Enqueuer, old: Obj, new: Obj) -> set[str]:
    """What the manager queues on an update: the keys of the old object and the new."""
    return {*e.cluster_keys(typed(old)), *e.cluster_keys(typed(new))}


# Three sets selecting one cluster: global (all), clusterset1 (cloud=Amazon), clusterset2.
MULTI_SET = [
    set_obj("global", {}),
    set_obj("clusterset1", {"matchLabels": {"cloud": "Amazon"}}),
    set_obj("clusterset2"),
    binding_obj("ns1", "global"),
    binding_obj("ns2", "clusterset1"),
    binding_obj("ns3", "clusterset2"),
    placement_obj("ns1", "placement1"),
    placement_obj("ns2", "placement2"),
    placement_obj("ns3", "placement3"),
]
ALL_THREE = {"ns1/placement1", "ns2/placement2", "ns3/placement3"}


def test_on_cluster_change() -> None:
    # clusterset does not exist
    e = enqueuer(binding_obj("ns1", "clusterset1"), placement_obj("ns1", "placement1"),
                 placement_obj("ns2", "placement2"))  # fmt: skip
    assert e.cluster_keys(typed(in_set("cluster1", "clusterset1"))) == []
    # clusterset exists: only placements naming it, or no set, in bound namespaces
    e = enqueuer(
        set_obj("clusterset1"), set_obj("clusterset2"),
        binding_obj("ns1", "clusterset1"), binding_obj("ns2", "clusterset1"),
        binding_obj("ns2", "clusterset2"),
        placement_obj("ns1", "placement1"), placement_obj("ns2", "placement2", "clusterset1"),
        placement_obj("ns2", "placement3", "clusterset2"),
    )  # fmt: skip
    cluster = typed(in_set("cluster1", "clusterset1"))
    assert e.cluster_keys(cluster) == ["ns1/placement1", "ns2/placement2"]
    # cluster belongs to multiple clustersets
    e = enqueuer(*MULTI_SET)
    assert (
        set(e.cluster_keys(typed(in_set("cluster1", "clusterset2", cloud="Amazon")))) == ALL_THREE
    )
    # a non-resource is nothing
    assert e.cluster_keys(typed(set_obj("x"))) == []


def test_a_binding_not_bound_does_not_expose_its_clusters() -> None:
    e = enqueuer(set_obj("clusterset1"), binding_obj("ns1", "clusterset1", bound=False),
                 placement_obj("ns1", "placement1"))  # fmt: skip
    assert e.cluster_keys(typed(in_set("cluster1", "clusterset1"))) == []


@pytest.mark.parametrize(
    ("old", "new", "objects", "expected"),
    [
        # cluster belongs to no clusterset
        (cluster_obj("cluster1", cloud="Google"), cluster_obj("cluster1", cloud="Amazon"),
         [set_obj("clusterset1"), binding_obj("ns1", "clusterset1"), placement_obj("ns1", "placement1")],
         set()),
        # cluster belongs to multiple clustersets
        (in_set("cluster1", "clusterset2", cloud="Amazon"), in_set("cluster1", "clusterset2", cloud="Google"),
         MULTI_SET, ALL_THREE),
        # assign a cluster to a clusterset
        (cluster_obj("cluster1", cloud="Amazon"), in_set("cluster1", "clusterset1", cloud="Amazon"),
         [set_obj("clusterset1"), binding_obj("ns1", "clusterset1"), placement_obj("ns1", "placement1")],
         {"ns1/placement1"}),
        # remove cluster from a clusterset
        (in_set("cluster1", "clusterset2", cloud="Amazon"), cluster_obj("cluster1"), MULTI_SET, ALL_THREE),
        # label change only
        (in_set("cluster1", "clusterset1", cloud="google"), in_set("cluster1", "clusterset1", cloud="Amazon"),
         [set_obj("clusterset1"), binding_obj("ns1", "clusterset1"), placement_obj("ns1", "placement1")],
         {"ns1/placement1"}),
        # move cluster from one clusterset to another
        (in_set("cluster1", "clusterset1"), in_set("cluster1", "clusterset2"),
         [set_obj("clusterset1"), set_obj("clusterset2"), binding_obj("ns1", "clusterset1"),
          binding_obj("ns2", "clusterset2"), placement_obj("ns1", "placement1"),
          placement_obj("ns2", "placement2")],
         {"ns1/placement1", "ns2/placement2"}),
    ],
)  # fmt: skip
def test_on_cluster_update(old: Obj, new: Obj, objects: list[Obj], expected: set[str]) -> None:
    assert updated(enqueuer(*objects), old, new) == expected


def test_on_cluster_delete() -> None:
    e = enqueuer(*MULTI_SET)
    assert (
        set(e.cluster_keys(typed(in_set("cluster1", "clusterset2", cloud="Amazon")))) == ALL_THREE
    )


@pytest.mark.parametrize(
    ("cluster_set", "objects", "expected"),
    [
        # enqueue placements in a namespace
        (set_obj("clusterset1"),
         [set_obj("clusterset1"), set_obj("clusterset2"), binding_obj("ns1", "clusterset1"),
          binding_obj("ns1", "clusterset2"), placement_obj("ns1", "placement1"),
          placement_obj("ns1", "placement2", "clusterset2")],
         ["ns1/placement1"]),
        # clusterset selector type is LegacyClusterSetLabel (the set itself being deleted)
        (set_obj("clusterset1"), [binding_obj("ns1", "clusterset1"), placement_obj("ns1", "placement1")],
         ["ns1/placement1"]),
        # clusterset selector type is LabelSelector
        (set_obj("clusterset1", {"matchLabels": {"cloud": "Amazon"}}),
         [binding_obj("ns1", "clusterset1"), placement_obj("ns1", "placement1")],
         ["ns1/placement1"]),
    ],
)  # fmt: skip
def test_enqueue_placements_by_cluster_set(
    cluster_set: Obj, objects: list[Obj], expected: list[str]
) -> None:
    assert enqueuer(*objects).cluster_set_keys(typed(cluster_set)) == expected


@pytest.mark.parametrize(
    ("binding", "objects", "expected"),
    [
        # enqueue placements by clusterSetBinding: its namespace, naming its set or none
        (binding_obj("ns1", "clusterset1"),
         [placement_obj("ns1", "placement1"), placement_obj("ns1", "placement2", "clusterset2"),
          placement_obj("ns2", "placement3", "clusterset1")],
         ["ns1/placement1"]),
        # on clustersetbinding change, Bound or not
        (binding_obj("ns1", "clusterset1", bound=False),
         [set_obj("clusterset1"), placement_obj("ns1", "placement1"), placement_obj("ns2", "placement2")],
         ["ns1/placement1"]),
    ],
)  # fmt: skip
def test_enqueue_placements_by_cluster_set_binding(
    binding: Obj, objects: list[Obj], expected: list[str]
) -> None:
    assert enqueuer(*objects).binding_keys(typed(binding)) == expected


@pytest.mark.parametrize(
    ("bindings", "expected"),
    [
        # enqueue score: placements using it in namespaces bound to a set of its cluster
        ([binding_obj("ns1", "clusterset1"), binding_obj("ns3", "clusterset1")],
         ["ns1/placement1", "ns3/placement3"]),
        # only enqueue score with filtered placement
        ([binding_obj("ns1", "clusterset2"), binding_obj("ns3", "clusterset1")], ["ns3/placement3"]),
    ],
)  # fmt: skip
def test_enqueue_placements_by_score(bindings: list[Obj], expected: list[str]) -> None:
    e = enqueuer(
        placement_obj("ns1", "placement1", score="score1"),
        placement_obj("ns2", "placement2", score="score2"),
        placement_obj("ns3", "placement3", score="score1"),
        in_set("cluster1", "clusterset1"),
        set_obj("clusterset1"),
        *bindings,
    )
    assert e.score_keys(typed(score_obj("cluster1", "score1"))) == expected
    assert e.score_keys(typed(score_obj("unknown-cluster", "score1"))) == []


def decision_obj(name: str, placement: str | None, *clusters: str) -> Obj:
    labels = {} if placement is None else {PLACEMENT_LABEL: placement}
    return {
        "apiVersion": PLACEMENT_DECISION.api_version,
        "kind": "PlacementDecision",
        "metadata": {"name": name, "namespace": NAMESPACE, "labels": labels},
        "status": {"decisions": [{"clusterName": c, "reason": ""} for c in clusters]},
    }


def test_a_placement_decision_concerns_the_placement_of_its_label() -> None:
    assert by_placement(typed(decision_obj("x-decision-1", "x"))) == [f"{NAMESPACE}/x"]
    assert by_placement(typed(decision_obj("y-decision-1", None))) == []


def write(hub: PlacementHub, obj: Obj) -> None:
    """Create or replace the object, status included."""
    info = REGISTRY.info(obj["apiVersion"], obj["kind"])
    meta = obj["metadata"]
    if hub.exists(info, meta["name"], meta.get("namespace", "")):
        current = hub.store.get(info, meta["name"], meta.get("namespace", ""))
        current["metadata"]["labels"] = meta.get("labels")
        stored = hub.store.update(current)
    else:
        stored = hub.store.create(obj)
    if "status" in obj:
        stored["status"] = obj["status"]
        hub.store.update(stored, subresource="status")
    hub.settle()


def test_the_cache_handle_serves_the_cache_and_counts_decisions(hub: PlacementHub) -> None:
    handle = CacheHandle(hub.manager.cache)
    write(hub, decision_obj("a", "x", "c1", "c2"))
    write(hub, decision_obj("b", "y", "c2"))
    write(hub, decision_obj("z", None, "c9"))
    assert handle.decision_counts() == {"c1": 1, "c2": 2, "c9": 1}
    write(hub, decision_obj("a", "x", "c3"))
    hub.delete(PLACEMENT_DECISION, "b", NAMESPACE)
    assert handle.decision_counts() == {"c3": 1, "c9": 1}
    names = [[d.metadata.name for d in found] for found in (
        handle.decisions(NAMESPACE, "x"), handle.decisions(NAMESPACE, "y"),
        handle.decisions("other", "x"),
    )]  # fmt: skip
    assert names == [["a"], [], []]
    hub.clusters("c", 2)
    write(hub, score_obj("c-1", "cpu") | {"status": {"scores": [{"name": "ratio", "value": 3}]}})
    score = handle.addon_placement_score("c-1", "cpu")
    assert score is not None and score.status.scores is not None
    assert score.status.scores[0].value == 3
    assert handle.addon_placement_score("c-2", "cpu") is None


# --- test/integration/placement/placement_test.go ----------------------------------------------


def test_recreates_placement_decisions_once_deleted(hub: PlacementHub) -> None:
    hub.bind("clusterset1")
    hub.clusters("cluster", 5, "clusterset1")
    hub.placement(P, {"numberOfClusters": 10})
    assert len(hub.decided(P)) == 5
    for pd in hub.placement_decisions(P):
        hub.store.delete(PLACEMENT_DECISION, pd["metadata"]["name"], NAMESPACE)
    hub.settle()
    assert len(hub.decided(P)) == 5
    assert hub.status(P)["decisionGroups"] == [group(0, "", ["placement1-decision-1"], 5)]


def test_reschedules_once_a_selected_cluster_is_terminating(hub: PlacementHub) -> None:
    hub.bind("clusterset1")
    hub.clusters("cluster", 5, "clusterset1")
    hub.placement(P, {"numberOfClusters": 10})
    hub.store.patch(MANAGED_CLUSTER, "cluster-1", "", {"metadata": {"finalizers": ["test"]}})
    hub.delete(MANAGED_CLUSTER, "cluster-1")
    assert hub.decided(P) == ["cluster-2", "cluster-3", "cluster-4", "cluster-5"]
    assert hub.status(P)["decisionGroups"] == [group(0, "", ["placement1-decision-1"], 4)]


def test_creates_multiple_placement_decisions(hub: PlacementHub) -> None:
    hub.bind("clusterset1")
    hub.clusters("cluster", 101, "clusterset1")
    hub.placement(P)
    assert len(hub.decided(P)) == 101
    assert [len(pd["status"]["decisions"]) for pd in hub.placement_decisions(P)] == [100, 1]
    assert hub.status(P)["decisionGroups"] == [
        group(0, "", ["placement1-decision-1", "placement1-decision-2"], 101)
    ]
    assert hub.satisfied(P) == ("True", "AllDecisionsScheduled")


def test_reschedules_once_spec_cluster_sets_change(hub: PlacementHub) -> None:
    hub.bind("clusterset1")
    hub.bind("clusterset2")
    hub.clusters("a", 2, "clusterset1")
    hub.clusters("b", 3, "clusterset2")
    hub.placement(P, {"numberOfClusters": 10})
    assert len(hub.decided(P)) == 5
    hub.patch_placement(P, {"clusterSets": ["clusterset1"]})
    assert hub.decided(P) == ["a-1", "a-2"]


@pytest.mark.parametrize(("before", "after"), [(10, 4), (5, 8)])
def test_reschedules_once_number_of_clusters_changes(
    hub: PlacementHub, before: int, after: int
) -> None:
    hub.bind("clusterset1")
    hub.clusters("cluster", 10 if before < after else 5, "clusterset1")
    hub.placement(P, {"numberOfClusters": before})
    hub.patch_placement(P, {"numberOfClusters": after})
    assert len(hub.decided(P)) == after
    assert hub.satisfied(P) == ("True", "AllDecisionsScheduled")


def test_schedules_once_misconfigured_is_fixed(hub: PlacementHub) -> None:
    hub.bind("clusterset1")
    hub.clusters("cluster", 1, "clusterset1")
    toleration = {"key": "key1", "operator": "Exists", "value": "value1"}
    hub.placement(P, {"numberOfClusters": 1, "tolerations": [toleration]})
    assert hub.decided(P) == []
    assert len(hub.placement_decisions(P)) == 1
    assert hub.condition(P, "PlacementMisconfigured")["status"] == "True"
    hub.patch_placement(P, {"tolerations": []})
    assert hub.decided(P) == ["cluster-1"]
    assert hub.condition(P, "PlacementMisconfigured")["status"] == "False"
    assert hub.satisfied(P) == ("True", "AllDecisionsScheduled")


def test_a_misconfigured_placement_is_retried_with_backoff(hub: PlacementHub) -> None:
    hub.bind("clusterset1")
    hub.clusters("cluster", 1, "clusterset1")
    hub.placement(P, {"tolerations": [{"operator": "Equal", "value": "v"}]})
    start = len(hub.history)
    hub.to(60)
    times = [t for t, _ in hub.history[start:]]
    gaps = [later - earlier for earlier, later in itertools.pairwise(times)]
    # The rate limiter's 5 ms doubling: a handful of retries, each wait twice the last.
    assert 5 <= len(times) <= 15
    assert all(b == 2 * a for a, b in itertools.pairwise(gaps))


def test_satisfied_once_new_clusters_are_added(hub: PlacementHub) -> None:
    hub.bind("clusterset1")
    hub.clusters("a", 5, "clusterset1")
    hub.placement(P, {"numberOfClusters": 10})
    assert hub.satisfied(P) == ("False", "NotAllDecisionsScheduled")
    hub.clusters("b", 5, "clusterset1")
    assert len(hub.decided(P)) == 10
    assert hub.satisfied(P) == ("True", "AllDecisionsScheduled")


def test_label_selector_set_clusters_added_and_deleted(hub: PlacementHub) -> None:
    hub.cluster_set("clusterset1", {"matchLabels": {"vendor": "openShift"}})
    hub.binding("clusterset1")
    hub.clusters("c1", 1, vendor="openShift")
    hub.placement(P, {"numberOfClusters": 2})
    assert hub.decided(P) == ["c1-1"]
    hub.clusters("c2", 1, vendor="openShift")
    assert hub.decided(P) == ["c1-1", "c2-1"]
    hub.delete(MANAGED_CLUSTER, "c1-1")
    assert hub.decided(P) == ["c2-1"]
    hub.delete(MANAGED_CLUSTER, "c2-1")
    assert hub.decided(P) == []


def test_decision_groups_follow_clusters_added_and_deleted(hub: PlacementHub) -> None:
    hub.cluster_set("global", {})
    hub.binding("global")
    canaries = hub.clusters("canary", 2, vendor="openShift")
    others = hub.clusters("other", 3)
    hub.placement(P, canary(2, canary={"vendor": "openShift"}))
    assert hub.status(P)["decisionGroups"] == [
        group(0, "canary", ["placement1-decision-1"], 2),
        group(1, "", ["placement1-decision-2"], 2),
        group(2, "", ["placement1-decision-3"], 1),
    ]
    hub.delete(MANAGED_CLUSTER, canaries[0])
    hub.delete(MANAGED_CLUSTER, others[0])
    assert hub.status(P)["decisionGroups"] == [
        group(0, "canary", ["placement1-decision-1"], 1),
        group(1, "", ["placement1-decision-2"], 2),
    ]
    assert [pd["metadata"]["name"] for pd in hub.placement_decisions(P)] == [
        "placement1-decision-1",
        "placement1-decision-2",
    ]
    hub.clusters("canary-new", 1, vendor="openShift")
    assert hub.status(P)["decisionGroups"] == [
        group(0, "canary", ["placement1-decision-1"], 2),
        group(1, "", ["placement1-decision-2"], 2),
    ]
    hub.clusters("other-new", 1)
    assert len(hub.status(P)["decisionGroups"]) == 3
    assert len(hub.decided(P)) == 5
    hub.delete(MANAGED_CLUSTER_SET, "global")
    assert hub.decided(P) == []
    assert hub.status(P)["decisionGroups"] == [group(0, "", ["placement1-decision-1"], 0)]


def test_schedules_once_a_new_cluster_set_is_bound(hub: PlacementHub) -> None:
    hub.bind("clusterset1")
    hub.clusters("a", 5, "clusterset1")
    hub.placement(P, {"numberOfClusters": 10})
    hub.bind("clusterset2")
    hub.clusters("b", 3, "clusterset2")
    assert len(hub.decided(P)) == 8
    assert hub.satisfied(P) == ("False", "NotAllDecisionsScheduled")


def test_schedules_once_a_cluster_set_is_deleted_and_added_back(hub: PlacementHub) -> None:
    hub.bind("clusterset1")
    hub.clusters("a", 5, "clusterset1")
    hub.placement(P, {"numberOfClusters": 10})
    hub.delete(MANAGED_CLUSTER_SET, "clusterset1")
    assert hub.decided(P) == []
    assert len(hub.placement_decisions(P)) == 1
    hub.cluster_set("clusterset1")
    assert len(hub.decided(P)) == 5


def test_schedules_once_a_binding_is_deleted_and_added_back(hub: PlacementHub) -> None:
    hub.bind("clusterset1")
    hub.clusters("a", 5, "clusterset1")
    hub.placement(P, {"numberOfClusters": 10})
    hub.delete(MANAGED_CLUSTER_SET_BINDING, "clusterset1", NAMESPACE)
    assert hub.decided(P) == []
    assert hub.satisfied(P) == ("False", "NoManagedClusterSetBindings")
    hub.binding("clusterset1")
    assert len(hub.decided(P)) == 5


def test_deleting_a_placement_deletes_its_decisions(hub: PlacementHub) -> None:
    hub.bind("clusterset1")
    hub.clusters("cluster", 150, "clusterset1")
    hub.placement(P)
    assert len(hub.placement_decisions(P)) == 2
    hub.delete(PLACEMENT, P, NAMESPACE)
    assert hub.placement_decisions(P) == []


def test_decision_events(hub: PlacementHub) -> None:
    hub.bind("clusterset1")
    hub.clusters("cluster", 2, "clusterset1")
    hub.placement(P)
    assert [e["reason"] for e in hub.events()] == [
        "DecisionCreate",
        "DecisionUpdate",
        "ScoreUpdate",
    ]
    [event] = hub.events("DecisionCreate")
    assert event["involvedObject"]["kind"] == "Placement"
    assert event["source"] == {"component": "placement-controller"}
    assert event["message"] == (
        f"Decision placement1-decision-1 is created with placement {P} in namespace {NAMESPACE}"
    )


# --- test/integration/placement/toleration_test.go ---------------------------------------------


def test_schedules_when_taint_and_toleration_match(hub: PlacementHub) -> None:
    hub.bind("clusterset1")
    names = hub.clusters("cluster", 3, "clusterset1")
    hub.taint(names[0], "key1", "NoSelect")
    hub.taint(names[1], "key2", "NoSelect")
    hub.taint(names[2], "key2", "NoSelect")
    obj = hub.store.get(MANAGED_CLUSTER, names[1])
    obj["spec"]["taints"][0]["value"] = "value2"
    hub.store.update(obj)
    tolerations = [
        {"key": "key1", "operator": "Exists"},
        {"key": "key2", "operator": "Equal", "value": "value2"},
    ]
    hub.placement(P, {"numberOfClusters": 3, "tolerations": tolerations})
    assert hub.decided(P) == names[:2]


def test_schedules_when_taint_and_toleration_effects_match(hub: PlacementHub) -> None:
    hub.bind("clusterset1")
    names = hub.clusters("cluster", 4, "clusterset1")
    hub.taint(names[0], "key1", "NoSelect")
    hub.taint(names[1], "key2", "NoSelectIfNew")
    hub.taint(names[2], "key3", "PreferNoSelect")
    tolerations = [
        {"key": "key1", "operator": "Exists", "effect": "PreferNoSelect"},
        {"key": "key2", "operator": "Exists", "effect": "NoSelect"},
        {"key": "key3", "operator": "Exists", "effect": "NoSelect"},
        {"key": "key4", "operator": "Exists", "effect": "NoSelect"},
    ]
    hub.placement(P, {"numberOfClusters": 4, "tolerations": tolerations})
    assert hub.decided(P) == names[2:]
    # NoSelectIfNew, not tolerated, on a cluster already decided: it stays.
    hub.taint(names[3], "key4", "NoSelectIfNew")
    assert hub.decided(P) == names[2:]


def test_reschedules_when_toleration_seconds_expire(hub: PlacementHub) -> None:
    added = DEFAULT_EPOCH
    hub.bind("clusterset1")
    names = hub.clusters("cluster", 4, "clusterset1")
    hub.taint(names[0], "key1", "NoSelect", added)
    hub.taint(names[1], "key2", "NoSelect", added)
    hub.taint(names[2], "key2", "NoSelect", added - timedelta(seconds=60))
    tolerations = [
        {"key": "key1", "operator": "Exists", "tolerationSeconds": 10},
        {"key": "key2", "operator": "Exists", "tolerationSeconds": 20},
    ]
    hub.placement(P, {"numberOfClusters": 4, "tolerations": tolerations})
    assert hub.decided(P) == [names[0], names[1], names[3]]
    hub.to(10)
    assert hub.decided(P) == [names[1], names[3]]
    hub.to(20)
    assert hub.decided(P) == [names[3]]
    hub.taint(names[3], "key3", "NoSelect", added - timedelta(seconds=60))
    assert hub.decided(P) == []


# --- batching, no-flap, expiry, scope ----------------------------------------------------------


def sizes(hub: PlacementHub) -> list[tuple[str, int]]:
    return [
        (pd["metadata"]["name"], len((pd.get("status") or {}).get("decisions") or []))
        for pd in hub.placement_decisions(P)
    ]


def test_batches_of_100_keep_their_names_as_the_fleet_grows_and_shrinks(hub: PlacementHub) -> None:
    hub.bind("clusterset1")
    hub.clusters("c", 100, "clusterset1")
    hub.placement(P)
    assert sizes(hub) == [("placement1-decision-1", 100)]
    uid = hub.placement_decisions(P)[0]["metadata"]["uid"]
    hub.cluster("c-101", "clusterset1")
    hub.settle()
    assert sizes(hub) == [("placement1-decision-1", 100), ("placement1-decision-2", 1)]
    for i in range(102, 251):
        hub.cluster(f"c-{i}", "clusterset1")
    hub.settle()
    assert sizes(hub) == [
        ("placement1-decision-1", 100),
        ("placement1-decision-2", 100),
        ("placement1-decision-3", 50),
    ]
    # Updated in place, never recreated; decisions sorted by name across the slices.
    assert hub.placement_decisions(P)[0]["metadata"]["uid"] == uid
    assert hub.decided(P) == sorted(hub.decided(P))
    for i in range(1, 151):
        hub.store.delete(MANAGED_CLUSTER, f"c-{i}")
    hub.settle()
    assert sizes(hub) == [("placement1-decision-1", 100)]
    assert hub.placement_decisions(P)[0]["metadata"]["uid"] == uid


def test_a_second_reconcile_writes_nothing(hub: PlacementHub) -> None:
    hub.bind("clusterset1")
    hub.clusters("c", 250, "clusterset1")
    hub.placement(P, {"numberOfClusters": 200, **canary("30%", canary={"cloud": "none"})})
    before = hub.store.resource_version
    hub.reconcile(NAMESPACE, P)
    hub.to(3600)
    assert hub.store.resource_version == before


def unreachable(hub: PlacementHub, cluster: str, seconds: float) -> None:
    hub.to(seconds)
    hub.taint(cluster, UNREACHABLE, "NoSelect", DEFAULT_EPOCH + timedelta(seconds=seconds))


def test_an_unreachable_cluster_is_dropped_when_toleration_seconds_run_out(
    hub: PlacementHub,
) -> None:
    hub.bind("clusterset1")
    hub.clusters("c", 3, "clusterset1")
    toleration = {"key": UNREACHABLE, "operator": "Exists", "tolerationSeconds": 300}
    hub.placement(P, {"tolerations": [toleration]})
    unreachable(hub, "c-2", 60)
    assert hub.decided(P) == ["c-1", "c-2", "c-3"]
    hub.driver.run_until(DEFAULT_EPOCH + timedelta(seconds=360) - timedelta(microseconds=1))
    assert hub.decided(P) == ["c-1", "c-2", "c-3"]
    hub.to(360)
    assert hub.decided(P) == ["c-1", "c-3"]
    # Nothing is due any more.
    assert hub.driver.next_timer() is None


def test_an_untolerated_unreachable_cluster_is_dropped_at_once(hub: PlacementHub) -> None:
    hub.bind("clusterset1")
    hub.clusters("c", 2, "clusterset1")
    hub.placement(P)
    unreachable(hub, "c-1", 30)
    assert hub.decided(P) == ["c-2"]


def build_fleet(hub: PlacementHub) -> None:
    """Sets east and west, each with clusters; ns-east binds east, ns-west west, ns-both
    both; placements in each, some naming a set."""
    for region in ("east", "west"):
        hub.cluster_set(region)
        hub.clusters(region, 3, region)
    hub.binding("east", "ns-east")
    hub.binding("west", "ns-west")
    hub.binding("east", "ns-both")
    hub.binding("west", "ns-both")
    for namespace in ("ns-east", "ns-west", "ns-both"):
        for i in range(3):
            hub.placement(f"p{i}", namespace=namespace)
    hub.placement("west-only", {"clusterSets": ["west"]}, namespace="ns-both")
    hub.placement("east-only", {"clusterSets": ["east"]}, namespace="ns-both")
    hub.placement("unbound", namespace="ns-none")


def test_a_tainted_cluster_re_evaluates_only_the_placements_that_can_see_it(
    hub: PlacementHub,
) -> None:
    build_fleet(hub)
    hub.reconciled.clear()
    hub.taint("east-2", "maintenance", "NoSelect")
    assert set(hub.reconciled.values()) == {1}  # its own writes do not queue it again
    assert set(hub.reconciled) == {
        "ns-east/p0", "ns-east/p1", "ns-east/p2",
        "ns-both/p0", "ns-both/p1", "ns-both/p2", "ns-both/east-only",
    }  # fmt: skip
    assert "east-2" not in hub.decided("p0", "ns-east")
    assert hub.decided("west-only", "ns-both") == ["west-1", "west-2", "west-3"]


def test_a_cluster_moving_sets_re_evaluates_the_placements_of_both(hub: PlacementHub) -> None:
    build_fleet(hub)
    hub.reconciled.clear()
    hub.label("east-1", **{"cluster.open-cluster-management.io/clusterset": "west"})
    assert {key.split("/")[0] for key in hub.reconciled} == {"ns-east", "ns-west", "ns-both"}
    assert "ns-none/unbound" not in hub.reconciled
    assert "east-1" in hub.decided("p0", "ns-west")
    assert "east-1" not in hub.decided("p0", "ns-east")


def test_an_unbound_namespace_hears_nothing_of_clusters(hub: PlacementHub) -> None:
    build_fleet(hub)
    hub.reconciled.clear()
    hub.set_bound("east", "False", "ns-east")
    assert set(hub.reconciled) == {"ns-east/p0", "ns-east/p1", "ns-east/p2"}
    assert hub.decided("p0", "ns-east") == []
    hub.reconciled.clear()
    hub.taint("east-3", "maintenance", "NoSelect")
    assert not {k for k in hub.reconciled if k.startswith("ns-east/")}


def test_balance_counts_the_decisions_of_other_placements(hub: PlacementHub) -> None:
    hub.bind("clusterset1")
    hub.clusters("c", 3, "clusterset1")
    balance_only = {
        "numberOfClusters": 1,
        "prioritizerPolicy": {
            "mode": "Exact",
            "configurations": [
                {"scoreCoordinate": {"type": "BuiltIn", "builtIn": "Balance"}, "weight": 1}
            ],
        },
    }
    for name in ("a", "b", "c"):
        hub.placement(name, balance_only)
    assert sorted(hub.decided(n)[0] for n in ("a", "b", "c")) == ["c-1", "c-2", "c-3"]


def test_under_the_real_driver(hub: PlacementHub) -> None:
    """Events come on the watch thread there: none is taken for the sync's own."""
    hub.driver.stop()
    store = hub.store
    hub.bind("clusterset1")
    hub.clusters("c", 3, "clusterset1")
    manager = ControllerManager(store, RealClock())
    manager.add(scheduling_controller())
    with RealDriver(manager):
        hub.placement(P)
        eventually(lambda: hub.decided(P) == ["c-1", "c-2", "c-3"])
        hub.patch_placement(P, {"numberOfClusters": 1})
        eventually(lambda: len(hub.decided(P)) == 1)
        [tainted] = hub.decided(P)
        hub.taint(tainted, "maintenance", "NoSelect")
        eventually(lambda: len(hub.decided(P)) == 1 and tainted not in hub.decided(P))


def eventually(check: Callable[[], bool], timeout: float = 5) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.01)
