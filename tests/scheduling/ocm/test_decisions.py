"""PlacementDecisions: grouping, slicing and writing a placement's selected clusters.

Ported from upstream's scheduling_controller_test.go (TestBind, the group strategy cases)
and scheduling_controller_event_test.go, against a MemoryStore whose writes are watched.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Sequence
from typing import Any

import pytest

from fleetwarden.api.ocm.cluster import ManagedCluster
from fleetwarden.api.ocm.placement import (
    DECISION_GROUP_INDEX_LABEL,
    DECISION_GROUP_NAME_LABEL,
    PLACEMENT_LABEL,
    GroupStrategy,
    Placement,
    PlacementDecision,
)
from fleetwarden.api.registry import REGISTRY
from fleetwarden.runtime.clock import VirtualClock
from fleetwarden.runtime.events import EVENT, EventRecorder
from fleetwarden.runtime.informer import Cache
from fleetwarden.runtime.manager import Context
from fleetwarden.runtime.settings import Settings
from fleetwarden.scheduling.ocm.decisions import (
    BY_PLACEMENT,
    Binder,
    DecisionGroup,
    by_placement,
    decision_groups,
    group_length,
    placement_decisions,
    score_text,
)
from fleetwarden.scheduling.ocm.framework import Code, Status
from fleetwarden.scheduling.ocm.kinds import PLACEMENT, PLACEMENT_DECISION
from fleetwarden.store import MemoryStore
from fleetwarden.store.interface import WatchEvent

NAMESPACE = "ns1"
NAME = "placement1"

Obj = dict[str, Any]


def cluster(name: str, **labels: str) -> ManagedCluster:
    return ManagedCluster.model_validate({"metadata": {"name": name, "labels": labels}})


def new_clusters(count: int) -> list[ManagedCluster]:
    """newClusters: cluster1 ... cluster<count>."""
    return [cluster(f"cluster{i}") for i in range(1, count + 1)]


def selected(count: int) -> list[str]:
    """newSelectedClusters: the names of new_clusters(count), sorted as strings."""
    return sorted(f"cluster{i}" for i in range(1, count + 1))


def strategy(per_group: int | str | None = None, **groups: dict[str, str]) -> GroupStrategy:
    """A group strategy: decision groups by name, each selecting the given labels."""
    return GroupStrategy.model_validate(
        {
            "clustersPerDecisionGroup": per_group,
            "decisionGroups": [
                {"groupName": name, "groupClusterSelector": {"labelSelector": {"matchLabels": m}}}
                for name, m in groups.items()
            ],
        }
    )


# --- calculateLength, generateDecisionGroups, generateDecision ---------------------------------


@pytest.mark.parametrize(
    ("value", "total", "expected"),
    [
        (None, 7, 7),
        (2, 7, 2),
        (0, 7, 7),  # not positive: one group
        (9, 7, 7),  # more than there are
        ("25%", 3, 1),  # rounded up
        ("50%", 5, 3),
        ("100%", 4, 4),
        ("25%", 0, 0),
    ],
)
def test_group_length(value: int | str | None, total: int, expected: int) -> None:
    assert group_length(value, total) == (expected, Status())


@pytest.mark.parametrize("value", ["abc", "3", "x%"])
def test_group_length_of_a_string_not_a_percentage_is_misconfigured(value: str) -> None:
    length, status = group_length(value, 4)
    assert status == Status(
        Code.MISCONFIGURED, "", [f"{value} invalid type: string is not a percentage"]
    )
    assert length == 4


def groups_of(strategy: GroupStrategy | None, clusters: Sequence[ManagedCluster]) -> list[Any]:
    groups, status = decision_groups(strategy, clusters)
    assert status == Status()
    return [(g.name, list(g.clusters)) for g in groups]


def test_groups_take_matching_clusters_in_order_then_the_rest_by_name() -> None:
    clusters = [
        cluster("cluster4", cloud="Azure"),
        cluster("cluster1", cloud="Amazon"),
        cluster("cluster3", cloud="Azure"),
        cluster("cluster2", cloud="Amazon"),
        cluster("cluster5"),
    ]
    assert groups_of(
        strategy(None, group1={"cloud": "Amazon"}, group2={"cloud": "Azure"}), clusters
    ) == [
        ("group1", ["cluster1", "cluster2"]),
        ("group2", ["cluster3", "cluster4"]),
        ("", ["cluster5"]),
    ]


def test_a_cluster_goes_to_the_first_group_that_selects_it() -> None:
    clusters = [cluster("a", cloud="Azure", canary="true"), cluster("b", cloud="Azure")]
    assert groups_of(
        strategy(None, canary={"canary": "true"}, azure={"cloud": "Azure"}), clusters
    ) == [
        ("canary", ["a"]),
        ("azure", ["b"]),
    ]


def test_canary_group_strategy_splits_every_group_by_clusters_per_group() -> None:
    # "placement with canary group strategy"
    clusters = [
        cluster("cluster1", cloud="Amazon"),
        cluster("cluster2", cloud="Amazon"),
        cluster("cluster3", cloud="Azure"),
        cluster("cluster4", cloud="Azure"),
    ]
    assert groups_of(strategy(1, canary={"cloud": "Azure"}), clusters) == [
        ("canary", ["cluster3"]),
        ("canary", ["cluster4"]),
        ("", ["cluster1"]),
        ("", ["cluster2"]),
    ]


def test_no_cluster_makes_one_empty_group() -> None:
    assert groups_of(None, []) == [("", [])]
    assert groups_of(strategy("25%", canary={"cloud": "Azure"}), []) == [("", [])]


def test_an_absent_group_selector_selects_every_cluster() -> None:
    strategy_ = GroupStrategy.model_validate({"decisionGroups": [{"groupName": "all"}]})
    assert groups_of(strategy_, new_clusters(2)) == [("all", ["cluster1", "cluster2"])]


def test_a_group_selector_matches_cluster_claims() -> None:
    strategy_ = GroupStrategy.model_validate(
        {
            "decisionGroups": [
                {
                    "groupName": "west",
                    "groupClusterSelector": {
                        "claimSelector": {
                            "matchExpressions": [
                                {"key": "region.open-cluster-management.io", "operator": "In",
                                 "values": ["us-west-1"]}
                            ]
                        }
                    },
                }
            ]
        }
    )  # fmt: skip
    west = ManagedCluster.model_validate(
        {
            "metadata": {"name": "west"},
            "status": {
                "clusterClaims": [
                    {"name": "region.open-cluster-management.io", "value": "us-west-1"}
                ]
            },
        }
    )
    assert groups_of(strategy_, [cluster("east"), west]) == [("west", ["west"]), ("", ["east"])]


def test_a_bad_group_selector_is_misconfigured_keeping_the_groups_before_it() -> None:
    strategy_ = GroupStrategy.model_validate(
        {
            "decisionGroups": [
                {"groupName": "ok", "groupClusterSelector": {"labelSelector": {"matchLabels": {"a": "1"}}}},
                {"groupName": "bad", "groupClusterSelector": {"labelSelector": {
                    "matchExpressions": [{"key": "a", "operator": "Near"}]}}},
            ]
        }
    )  # fmt: skip
    groups, status = decision_groups(strategy_, [cluster("c1", a="1"), cluster("c2")])
    assert groups == [DecisionGroup("ok", ("c1",))]
    assert status == Status(
        Code.MISCONFIGURED, "", ['"Near" is not a valid label selector operator']
    )


def test_decisions_are_sliced_by_100_and_numbered_across_groups() -> None:
    groups = [DecisionGroup("canary", tuple(selected(150))), DecisionGroup("", ())]
    decisions, statuses = placement_decisions(NAME, groups)
    assert [(d.name, d.group_index, d.group_name, len(d.clusters)) for d in decisions] == [
        ("placement1-decision-1", 0, "canary", 100),
        ("placement1-decision-2", 0, "canary", 50),
        ("placement1-decision-3", 1, "", 0),
    ]
    assert [s.to_dict() for s in statuses] == [
        {"decisionGroupIndex": 0, "decisionGroupName": "canary",
         "decisions": ["placement1-decision-1", "placement1-decision-2"], "clusterCount": 150},
        {"decisionGroupIndex": 1, "decisionGroupName": "",
         "decisions": ["placement1-decision-3"], "clusterCount": 0},
    ]  # fmt: skip


def test_score_text_is_sorted_and_cut_at_1000_characters() -> None:
    assert score_text({"b": -3, "a": 10}) == "a:10 b:-3 "
    text = score_text({f"cluster{i:03}": 100 for i in range(200)})
    assert text.endswith("......")
    assert len(text) <= 1000 + len("......")
    assert text.startswith("cluster000:100 cluster001:100 ")


# --- bind ----------------------------------------------------------------------------------------


class Writes:
    """A MemoryStore with a cache of PlacementDecisions, and the PlacementDecision writes
    made since `start` as (verb, name)."""

    def __init__(self) -> None:
        self.clock = VirtualClock()
        uids = itertools.count(1)
        self.store = MemoryStore(now=self.clock.now, new_uid=lambda: f"uid-{next(uids)}")
        self.cache = Cache(self.store)
        self.cache.informer(PLACEMENT_DECISION).add_indexers({BY_PLACEMENT: by_placement})
        self.cache.sync()
        self.store.subscribe(self.cache.handle)
        self.actions: list[tuple[str, str]] | None = None
        self.store.subscribe(self._record)
        created = self.store.create(
            {"apiVersion": PLACEMENT.api_version, "kind": "Placement",
             "metadata": {"name": NAME, "namespace": NAMESPACE}, "spec": {}}
        )  # fmt: skip
        placement = REGISTRY.decode(created)
        assert isinstance(placement, Placement)
        self.placement = placement
        recorder = EventRecorder(self.store, self.clock, "placement-controller")
        self.ctx = Context(self.cache, self.store, self.clock, Settings(), recorder)

    def _record(self, event: WatchEvent) -> None:
        if self.actions is not None and event.collection.endswith("/placementdecisions"):
            verb = {"ADDED": "create", "MODIFIED": "update", "DELETED": "delete"}[event.type]
            self.actions.append((verb, event.object["metadata"]["name"]))

    def existing(
        self, index: int, clusters: Sequence[str], group: str = "", labels: bool = True
    ) -> None:
        """A PlacementDecision of the placement as upstream's builder makes it."""
        meta: Obj = {"name": f"{NAME}-decision-{index}", "namespace": NAMESPACE}
        if labels:
            meta["labels"] = {
                PLACEMENT_LABEL: NAME,
                DECISION_GROUP_NAME_LABEL: group,
                DECISION_GROUP_INDEX_LABEL: "0",
            }
        created = self.store.create(
            {
                "apiVersion": PLACEMENT_DECISION.api_version,
                "kind": "PlacementDecision",
                "metadata": meta,
            }
        )
        created["status"] = {"decisions": [{"clusterName": c, "reason": ""} for c in clusters]}
        self.store.update(created, subresource="status")

    def bind(
        self,
        clusters: Sequence[ManagedCluster],
        strategy_: GroupStrategy | None = None,
        scores: dict[str, int] | None = None,
        status: Status | None = None,
    ) -> list[tuple[str, str]]:
        groups, _ = decision_groups(strategy_, clusters)
        decisions, _ = placement_decisions(NAME, groups)
        self.actions = []
        Binder(self.ctx, self.placement, scores or {}, status or Status()).bind(decisions)
        return self.actions

    def decision(self, index: int) -> PlacementDecision:
        obj = REGISTRY.decode(
            self.store.get(PLACEMENT_DECISION, f"{NAME}-decision-{index}", NAMESPACE)
        )
        assert isinstance(obj, PlacementDecision)
        return obj

    def names(self) -> list[str]:
        return [pd["metadata"]["name"] for pd in self.store.list(PLACEMENT_DECISION).items]

    def decided(self, index: int) -> list[str]:
        return [d.cluster_name for d in self.decision(index).status.decisions or ()]

    def group_labels(self, index: int) -> tuple[str | None, str | None]:
        labels = self.decision(index).metadata.labels or {}
        return labels.get(DECISION_GROUP_INDEX_LABEL), labels.get(DECISION_GROUP_NAME_LABEL)

    def events(self) -> list[tuple[str, str, str]]:
        return [(e["type"], e["reason"], e["message"]) for e in self.store.list(EVENT).items]


@pytest.fixture
def writes() -> Iterator[Writes]:
    yield Writes()


def test_create_single_placement_decision(writes: Writes) -> None:
    # A created object has no status (the status subresource): it is written next.
    assert writes.bind(new_clusters(10)) == [
        ("create", "placement1-decision-1"),
        ("update", "placement1-decision-1"),
    ]
    assert writes.decided(1) == selected(10)
    assert writes.group_labels(1) == ("0", "")
    pd = writes.decision(1)
    assert (pd.metadata.labels or {})[PLACEMENT_LABEL] == NAME
    assert [o.to_dict() for o in pd.metadata.owner_references or ()] == [
        {"apiVersion": "cluster.open-cluster-management.io/v1beta1", "kind": "Placement",
         "name": NAME, "uid": writes.placement.metadata.uid, "controller": True,
         "blockOwnerDeletion": True}
    ]  # fmt: skip
    assert (pd.status.decisions or [])[0].to_dict() == {"clusterName": "cluster1", "reason": ""}


def test_create_multiple_placement_decisions(writes: Writes) -> None:
    writes.bind(new_clusters(101))
    assert writes.decided(1) == selected(101)[:100]
    assert writes.decided(2) == selected(101)[100:]
    assert writes.group_labels(1) == writes.group_labels(2) == ("0", "")


def test_create_empty_placement_decision(writes: Writes) -> None:
    assert writes.bind([]) == [("create", "placement1-decision-1")]
    assert writes.decided(1) == []


def test_create_placement_decisions_with_canary_group_strategy(writes: Writes) -> None:
    clusters = [
        cluster("cluster1", cloud="Amazon"),
        cluster("cluster2", cloud="Amazon"),
        cluster("cluster3", cloud="Azure"),
        cluster("cluster4", cloud="Azure"),
    ]
    writes.bind(clusters, strategy("25%", canary={"cloud": "Azure"}))
    assert [writes.decided(i) for i in range(1, 5)] == [
        ["cluster3"],
        ["cluster4"],
        ["cluster1"],
        ["cluster2"],
    ]
    assert [writes.group_labels(i) for i in range(1, 5)] == [
        ("0", "canary"), ("1", "canary"), ("2", ""), ("3", "")
    ]  # fmt: skip


def test_create_placement_decision_when_no_cluster_selected_by_canary_group(writes: Writes) -> None:
    clusters = [cluster(f"cluster{i}", cloud="Amazon") for i in (1, 2, 3)]
    writes.bind(clusters, strategy(None, canary={"cloud": "Azure"}))
    assert writes.decided(1) == selected(3)
    assert writes.group_labels(1) == ("0", "")
    assert writes.names() == ["placement1-decision-1"]


def test_create_placement_decisions_with_multiple_group_strategy(writes: Writes) -> None:
    clusters = [
        cluster("cluster1", cloud="Amazon"),
        cluster("cluster2", cloud="Amazon"),
        cluster("cluster3", cloud="Azure"),
    ]
    writes.bind(clusters, strategy(None, group1={"cloud": "Amazon"}, group2={"cloud": "Azure"}))
    assert [writes.decided(i) for i in (1, 2)] == [["cluster1", "cluster2"], ["cluster3"]]
    assert [writes.group_labels(i) for i in (1, 2)] == [("0", "group1"), ("1", "group2")]


def test_create_placement_decisions_with_only_clusters_per_group(writes: Writes) -> None:
    writes.bind(new_clusters(3), strategy("25%"))
    assert [writes.decided(i) for i in (1, 2, 3)] == [["cluster1"], ["cluster2"], ["cluster3"]]
    assert [writes.group_labels(i) for i in (1, 2, 3)] == [("0", ""), ("1", ""), ("2", "")]


def test_no_change_writes_nothing(writes: Writes) -> None:
    writes.existing(1, selected(128)[:100])
    writes.existing(2, selected(128)[100:])
    assert writes.bind(new_clusters(128)) == []
    assert writes.events() == []


def test_update_one_of_placement_decisions(writes: Writes) -> None:
    # The decisions are right, the group name label is not: only labels change.
    writes.existing(1, selected(128)[:100], group="fakegroup")
    assert writes.bind(new_clusters(128)) == [
        ("update", "placement1-decision-1"),
        ("create", "placement1-decision-2"),
        ("update", "placement1-decision-2"),
    ]
    assert writes.group_labels(1) == ("0", "")
    assert writes.decided(1) == selected(128)[:100]
    assert writes.decided(2) == selected(128)[100:]


def test_decisions_and_labels_both_wrong_are_both_written(writes: Writes) -> None:
    writes.existing(1, selected(3), group="old")
    assert writes.bind(new_clusters(2)) == [
        ("update", "placement1-decision-1"),
        ("update", "placement1-decision-1"),
    ]
    assert writes.decided(1) == selected(2)
    assert writes.group_labels(1) == ("0", "")


def test_labels_are_set_to_exactly_the_placement_and_group(writes: Writes) -> None:
    writes.existing(1, selected(1))
    pd = writes.store.get(PLACEMENT_DECISION, f"{NAME}-decision-1", NAMESPACE)
    pd["metadata"]["labels"]["extra"] = "x"
    writes.store.update(pd)
    writes.bind(new_clusters(1))
    assert writes.decision(1).metadata.labels == {
        PLACEMENT_LABEL: NAME, DECISION_GROUP_NAME_LABEL: "", DECISION_GROUP_INDEX_LABEL: "0"
    }  # fmt: skip


def test_delete_redundant_placement_decisions(writes: Writes) -> None:
    writes.existing(1, selected(128)[:100])
    writes.existing(2, selected(128)[100:])
    assert writes.bind(new_clusters(10)) == [
        ("update", "placement1-decision-1"),
        ("delete", "placement1-decision-2"),
    ]
    assert writes.decided(1) == selected(10)


def test_delete_all_placement_decisions_but_one_empty(writes: Writes) -> None:
    writes.existing(1, selected(128)[:100])
    writes.existing(2, selected(128)[100:])
    assert writes.bind([]) == [
        ("update", "placement1-decision-1"),
        ("delete", "placement1-decision-2"),
    ]
    assert writes.decided(1) == []


def test_decisions_of_other_placements_are_left_alone(writes: Writes) -> None:
    writes.existing(7, ["cluster9"], labels=False)
    other = writes.store.get(PLACEMENT_DECISION, f"{NAME}-decision-7", NAMESPACE)
    other["metadata"]["labels"] = {PLACEMENT_LABEL: "placement2"}
    writes.store.update(other)
    assert ("delete", "placement1-decision-7") not in writes.bind(new_clusters(1))
    assert writes.decided(7) == ["cluster9"]


# --- scheduling_controller_event_test.go ---------------------------------------------------------


def test_events_of_a_new_placement_decision(writes: Writes) -> None:
    # Upstream's fake client keeps the status given on create, so only DecisionCreate is seen
    # there; an API server drops it, and the status write that follows records the update.
    writes.bind([cluster("cluster1")], scores={"cluster1": 85})
    where = f"with placement {NAME} in namespace {NAMESPACE}"
    assert writes.events() == [
        ("Normal", "DecisionCreate", f"Decision placement1-decision-1 is created {where}"),
        ("Normal", "DecisionUpdate", f"Decision placement1-decision-1 is updated {where}"),
        ("Normal", "ScoreUpdate", "cluster1:85 "),
    ]


def test_events_when_decisions_change(writes: Writes) -> None:
    writes.existing(1, ["cluster1"])
    writes.bind([cluster("cluster1"), cluster("cluster2")], scores={"cluster1": 85, "cluster2": 92})
    assert [(t, r) for t, r, _ in writes.events()] == [
        ("Normal", "DecisionUpdate"),
        ("Normal", "ScoreUpdate"),
    ]
    assert writes.events()[1][2] == "cluster1:85 cluster2:92 "


def test_no_events_when_only_labels_change(writes: Writes) -> None:
    writes.existing(1, ["cluster1"], group="old")
    writes.bind([cluster("cluster1")], scores={"cluster1": 85})
    assert writes.group_labels(1) == ("0", "")
    assert writes.events() == []


def test_a_warning_status_makes_the_update_event_a_warning(writes: Writes) -> None:
    writes.existing(1, ["cluster1"])
    warning = Status(Code.WARNING, "TestPlugin", ["test warning"])
    writes.bind([cluster("cluster1"), cluster("cluster2")], scores={"cluster1": 85}, status=warning)
    assert writes.events()[0] == (
        "Warning",
        "DecisionUpdate",
        f"Decision placement1-decision-1 is updated with placement {NAME} in namespace "
        f"{NAMESPACE}: test warning in plugin TestPlugin",
    )
    assert writes.events()[1][1] == "ScoreUpdate"


def test_no_score_event_without_scores(writes: Writes) -> None:
    writes.existing(1, ["cluster1"])
    writes.bind([cluster("cluster2")])
    assert [r for _, r, _ in writes.events()] == ["DecisionUpdate"]


def test_deleting_a_decision_records_an_event(writes: Writes) -> None:
    writes.existing(1, ["cluster1"])
    writes.existing(2, ["cluster2"])
    writes.bind([cluster("cluster1")])
    assert writes.events() == [
        ("Normal", "DecisionDelete",
         f"Decision placement1-decision-2 is deleted with placement {NAME} in namespace {NAMESPACE}")
    ]  # fmt: skip
