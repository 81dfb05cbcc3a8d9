"""PlacementDecisions (scheduling_controller.go: generatePlacementDecisionsAndStatus, bind):
how a Placement's selected clusters are grouped, sliced and written.

Groups: each of spec.decisionStrategy.groupStrategy.decisionGroups takes, in order, the
selected clusters its groupClusterSelector matches that no earlier group took; the rest form
groups named "". Every group is cut into groups of clustersPerDecisionGroup (a number, or a
percentage of the selected clusters rounded up; all of them when unset, zero or too large),
and each group's clusters are sorted by name. No cluster selected still makes one empty group.

Slices: a group's clusters go to PlacementDecisions of at most 100 (maxNumOfClusterDecisions),
named `<placement>-decision-<n>` with n counting from 1 across the groups in order, labelled
with the placement, the group's index and name, and owned by the Placement (so deleting it
deletes them).

Writes, as upstream's patcher makes them: a missing PlacementDecision is created (Event
DecisionCreate), then its status written when its decisions differ (DecisionUpdate, and
ScoreUpdate with the prioritizer scores), and its labels set to the three above if they
differ (no Event). Those of the placement no longer wanted are deleted (DecisionDelete).
Nothing is written when nothing changed. Events are recorded on the Placement.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from fleetwarden.api.errors import NotFound
from fleetwarden.api.meta import IntOrString, Resource
from fleetwarden.api.ocm.cluster import ManagedCluster
from fleetwarden.api.ocm.placement import (
    DECISION_GROUP_INDEX_LABEL,
    DECISION_GROUP_NAME_LABEL,
    PLACEMENT_LABEL,
    DecisionGroupStatus,
    GroupClusterSelector,
    GroupStrategy,
    Placement,
    PlacementDecision,
)
from fleetwarden.runtime.events import NORMAL, WARNING
from fleetwarden.runtime.informer import Informer
from fleetwarden.runtime.manager import Context
from fleetwarden.scheduling.ocm.framework import Code, Status
from fleetwarden.scheduling.ocm.kinds import PLACEMENT, PLACEMENT_DECISION
from fleetwarden.scheduling.ocm.plugins.predicate import ClusterSelector
from fleetwarden.semantics.selectors import SelectorError

MAX_NUM_OF_CLUSTER_DECISIONS = 100
# An Event message has at most 1024 characters; upstream keeps some room.
MAX_EVENT_MESSAGE_LENGTH = 1000

# Event reasons.
DECISION_CREATE = "DecisionCreate"
DECISION_UPDATE = "DecisionUpdate"
DECISION_DELETE = "DecisionDelete"
SCORE_UPDATE = "ScoreUpdate"

# The decisionsByPlacement index: `<namespace>/<placement>` of a PlacementDecision's label.
BY_PLACEMENT = "ocm-placement/decisions-by-placement"


def by_placement(obj: Resource) -> list[str]:
    """Index PlacementDecisions by the placement they are labelled with."""
    if not isinstance(obj, PlacementDecision):
        return []
    name = (obj.metadata.labels or {}).get(PLACEMENT_LABEL)
    return [] if name is None else [f"{obj.metadata.namespace}/{name}"]


def decision_name(placement: str, index: int) -> str:
    """The name of a placement's index-th PlacementDecision, counting from 1."""
    return f"{placement}-decision-{index}"


@dataclass(frozen=True, slots=True)
class DecisionGroup:
    """clusterDecisionGroup: a group's name and its clusters, sorted by name."""

    name: str
    clusters: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Decision:
    """One PlacementDecision as it should be."""

    name: str
    group_index: int
    group_name: str
    clusters: tuple[str, ...]

    def labels(self, placement: str) -> dict[str, str]:
        return {
            PLACEMENT_LABEL: placement,
            DECISION_GROUP_NAME_LABEL: self.group_name,
            DECISION_GROUP_INDEX_LABEL: str(self.group_index),
        }

    def status(self) -> dict[str, Any]:
        return {"decisions": [{"clusterName": c, "reason": ""} for c in self.clusters]}


# --- what ----------------------------------------------------------------------------------------


def group_length(value: IntOrString | None, total: int) -> tuple[int, Status]:
    """calculateLength: how many clusters a group holds at most, of `total` selected."""
    length = total
    if isinstance(value, int):
        length = value
    elif isinstance(value, str):
        percentage = _percentage(value)
        if percentage is None:
            return total, Status.misconfigured(
                "", f"{value} invalid type: string is not a percentage"
            )
        length = math.ceil(percentage / 100 * total)
    if length <= 0 or length > total:
        length = total
    return length, Status()


def _percentage(text: str) -> float | None:
    if not text.endswith("%"):
        return None
    try:
        value = float(text[:-1])
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def decision_groups(
    strategy: GroupStrategy | None, clusters: Sequence[ManagedCluster]
) -> tuple[list[DecisionGroup], Status]:
    """generateDecisionGroups: the selected clusters grouped by the placement's group
    strategy. On a Misconfigured status, the groups made before the fault."""
    strategy = strategy or GroupStrategy()
    groups: list[DecisionGroup] = []
    length, status = group_length(strategy.clusters_per_decision_group, len(clusters))
    if status.is_error():
        return groups, status
    remaining = {c.metadata.name for c in clusters}
    for group in strategy.decision_groups or ():
        selector = group.group_cluster_selector or GroupClusterSelector()
        try:
            matcher = ClusterSelector.of_selectors(selector.label_selector, selector.claim_selector)
        except SelectorError as err:
            return groups, Status.misconfigured("", str(err))
        matched = [
            c.metadata.name for c in clusters if c.metadata.name in remaining and matcher.matches(c)
        ]
        remaining.difference_update(matched)
        groups += _divide(group.group_name, matched, length)
    groups += _divide("", remaining, length)
    return groups or [DecisionGroup("", ())], Status()


def _divide(name: str, clusters: Iterable[str], length: int) -> list[DecisionGroup]:
    """divideDecisionGroups: the clusters by name, in groups of `length`."""
    ordered = sorted(clusters)
    step = max(length, 1)  # 0 only when no cluster is selected
    return [DecisionGroup(name, tuple(ordered[i : i + step])) for i in range(0, len(ordered), step)]


def placement_decisions(
    placement: str, groups: Sequence[DecisionGroup]
) -> tuple[list[Decision], list[DecisionGroupStatus]]:
    """generateDecision for each group: the PlacementDecisions and status.decisionGroups."""
    decisions: list[Decision] = []
    statuses: list[DecisionGroupStatus] = []
    for group_index, group in enumerate(groups):
        slices = [
            group.clusters[i : i + MAX_NUM_OF_CLUSTER_DECISIONS]
            for i in range(0, len(group.clusters), MAX_NUM_OF_CLUSTER_DECISIONS)
        ] or [()]
        names = [decision_name(placement, len(decisions) + 1 + i) for i in range(len(slices))]
        decisions += [
            Decision(name, group_index, group.name, clusters)
            for name, clusters in zip(names, slices, strict=True)
        ]
        statuses.append(
            DecisionGroupStatus(
                decision_group_index=group_index,
                decision_group_name=group.name,
                decisions=names,
                cluster_count=len(group.clusters),
            )
        )
    return decisions, statuses


# --- writes --------------------------------------------------------------------------------------


@dataclass
class Binder:
    """bind: one pass writing a placement's PlacementDecisions."""

    ctx: Context
    placement: Placement
    scores: Mapping[str, int]
    status: Status

    def bind(self, decisions: Sequence[Decision]) -> None:
        """Create or update the wanted PlacementDecisions, then delete the others."""
        for decision in decisions:
            self.create_or_update(decision)
        wanted = {d.name for d in decisions}
        meta = self.placement.metadata
        informer = self.ctx.cache.informer(PLACEMENT_DECISION)
        for existing in decisions_by_placement(informer, meta.namespace, meta.name):
            name = existing.metadata.name
            if name in wanted:
                continue
            try:
                self.ctx.store.delete(PLACEMENT_DECISION, name, meta.namespace)
            except NotFound:
                continue
            self.event(NORMAL, DECISION_DELETE, name, "deleted")

    def create_or_update(self, decision: Decision) -> None:
        """createOrUpdatePlacementDecision: its status, then its labels. (Upstream leaves the
        labels after a status write to the sync that write queues; that sync is an echo here,
        so both are written in this one, the second with the first's resourceVersion.)"""
        namespace = self.placement.metadata.namespace
        informer = self.ctx.cache.informer(PLACEMENT_DECISION)
        existing = informer.get(decision.name, namespace)
        if isinstance(existing, PlacementDecision):
            wire = existing.to_dict()
        else:
            wire = self.create(decision)
        status = decision.status()
        if _decisions(wire) != status["decisions"]:
            wire["status"] = status
            wire = self.ctx.store.update(wire, subresource="status")
            self.record_update(decision.name)
        labels = decision.labels(self.placement.metadata.name)
        current = wire["metadata"].get("labels") or {}
        if current != labels:
            patch = {key: None for key in current.keys() - labels.keys()} | labels
            metadata = {"resourceVersion": wire["metadata"]["resourceVersion"], "labels": patch}
            self.ctx.store.patch(
                PLACEMENT_DECISION, decision.name, namespace, {"metadata": metadata}
            )

    def create(self, decision: Decision) -> dict[str, Any]:
        """The PlacementDecision created, as the store returns it."""
        meta = self.placement.metadata
        owner = {
            "apiVersion": PLACEMENT.api_version,
            "kind": PLACEMENT.kind,
            "name": meta.name,
            "uid": meta.uid,
            "controller": True,
            "blockOwnerDeletion": True,
        }
        created = self.ctx.store.create(
            {
                "apiVersion": PLACEMENT_DECISION.api_version,
                "kind": PLACEMENT_DECISION.kind,
                "metadata": {
                    "name": decision.name,
                    "namespace": meta.namespace,
                    "labels": decision.labels(meta.name),
                    "ownerReferences": [owner],
                },
            }
        )
        self.event(NORMAL, DECISION_CREATE, decision.name, "created")
        return created

    def record_update(self, name: str) -> None:
        """recordDecisionEvents: DecisionUpdate (Warning with the scheduler's warning), then
        ScoreUpdate with the scores when there are any."""
        if self.status.code is Code.WARNING:
            suffix = f": {self.status.message()} in plugin {self.status.plugin}"
            self.event(WARNING, DECISION_UPDATE, name, "updated", suffix)
        else:
            self.event(NORMAL, DECISION_UPDATE, name, "updated")
        if self.scores:
            self.ctx.recorder.event(self.placement, NORMAL, SCORE_UPDATE, score_text(self.scores))

    def event(self, type_: str, reason: str, name: str, verb: str, suffix: str = "") -> None:
        meta = self.placement.metadata
        message = (
            f"Decision {name} is {verb} with placement {meta.name} "
            f"in namespace {meta.namespace}{suffix}"
        )
        self.ctx.recorder.event(self.placement, type_, reason, message)


def _decisions(wire: Mapping[str, Any]) -> list[Any]:
    """status.decisions, absent read as empty (apimachinery's semantic equality)."""
    return list((wire.get("status") or {}).get("decisions") or [])


def score_text(scores: Mapping[str, int]) -> str:
    """The ScoreUpdate message: `name:score ` by cluster name, cut with "......" past 1000
    characters."""
    text = ""
    for name in sorted(scores):
        item = f"{name}:{scores[name]} "
        if len(text) + len(item) > MAX_EVENT_MESSAGE_LENGTH:
            return text + "......"
        text += item
    return text


def decisions_by_placement(
    informer: Informer, namespace: str, placement: str
) -> list[PlacementDecision]:
    """The PlacementDecisions labelled with the placement, by name (the BY_PLACEMENT index)."""
    found = informer.by_index(BY_PLACEMENT, f"{namespace}/{placement}")
    return [d for d in found if isinstance(d, PlacementDecision)]
