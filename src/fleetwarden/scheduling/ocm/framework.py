"""The placement scheduling framework: statuses, what plugins may read, plugin shapes.

As upstream's pkg/placement/controllers/framework and pkg/placement/plugins/interface.go:
filter plugins narrow the candidate clusters, prioritizers score the ones left in
[-100, 100]. Differences that keep scheduling cheap for many placements:

- A ScheduleContext carries what one scheduling pass shares: the handle, the placement, the
  instant, and this placement's current decisions, read once rather than by each plugin.
- Plugins say when their answer will change as part of their result (a toleration running
  out, an AddOnPlacementScore expiring) instead of in a second RequeueAfter pass.
- The Handle counts decisions per cluster (`decision_counts`), so Balance needs no walk over
  every PlacementDecision of the hub for each placement.
"""

from __future__ import annotations

import weakref
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from enum import IntEnum
from functools import cached_property, wraps
from typing import Protocol, TypeVar

from fleetwarden.api.ocm.cluster import ManagedCluster
from fleetwarden.api.ocm.placement import AddOnPlacementScore, Placement, PlacementDecision

_Derived = TypeVar("_Derived")

# plugins.MaxClusterScore and MinClusterScore: the range a prioritizer gives.
MAX_CLUSTER_SCORE = 100
MIN_CLUSTER_SCORE = -100


class Code(IntEnum):
    """framework.Code."""

    SUCCESS = 0
    # Schedulable, with something to notice (an expired AddOnPlacementScore).
    WARNING = 1
    # An internal plugin error.
    ERROR = 2
    # The placement asks for something that cannot be done (PlacementMisconfigured).
    MISCONFIGURED = 3


@dataclass(slots=True)
class Status:
    """framework.Status: a code, the plugin that set it ("" for the scheduler), reasons."""

    code: Code = Code.SUCCESS
    plugin: str = ""
    reasons: list[str] = field(default_factory=list)

    @classmethod
    def misconfigured(cls, plugin: str, reason: str) -> Status:
        return cls(Code.MISCONFIGURED, plugin, [reason])

    def ok(self) -> bool:
        """Success or Warning: the decisions are usable (upstream's !IsError())."""
        return self.code <= Code.WARNING

    def is_error(self) -> bool:
        """Error or Misconfigured: scheduling stopped and selected nothing."""
        return not self.ok()

    def is_misconfigured(self) -> bool:
        return self.code is Code.MISCONFIGURED

    def message(self) -> str:
        return ", ".join(self.reasons)


class Handle(Protocol):
    """What plugins may read of the hub; the scheduling controller implements it over its
    informer caches. Objects returned are shared: never change them."""

    def decisions(self, namespace: str, placement: str) -> list[PlacementDecision]:
        """The PlacementDecisions of one placement of `namespace` (labelled
        cluster.open-cluster-management.io/placement=<name>)."""
        ...

    def decision_counts(self) -> Mapping[str, int]:
        """For each cluster, how many decision entries name it across every PlacementDecision
        of every namespace (this placement's own included): what Balance counts."""
        ...

    def addon_placement_score(self, cluster: str, name: str) -> AddOnPlacementScore | None:
        """The AddOnPlacementScore `name` in namespace `cluster`, if any."""
        ...


@dataclass(eq=False)
class ScheduleContext:
    """What one scheduling pass of one placement shares between plugins."""

    handle: Handle
    placement: Placement
    now: datetime

    @cached_property
    def current_decisions(self) -> Counter[str]:
        """The clusters of this placement's PlacementDecisions, with how many entries name
        each (one, unless a decision lists a cluster twice)."""
        meta = self.placement.metadata
        return Counter(
            decision.cluster_name
            for placement_decision in self.handle.decisions(meta.namespace, meta.name)
            for decision in placement_decision.status.decisions or ()
        )


@dataclass(slots=True)
class FilterResult:
    """What a filter plugin keeps, in the order given; `expiries` holds, for kept clusters
    that will stop passing at some instant, that instant."""

    clusters: list[ManagedCluster]
    status: Status = field(default_factory=Status)
    expiries: dict[str, datetime] = field(default_factory=dict)


@dataclass(slots=True)
class ScoreResult:
    """A prioritizer's scores by cluster name (a cluster it cannot score is left out), and the
    earliest instant one of them will change by itself, if any."""

    scores: dict[str, int]
    status: Status = field(default_factory=Status)
    requeue_time: datetime | None = None


class FilterPlugin(Protocol):
    @property
    def name(self) -> str: ...

    def filter(self, ctx: ScheduleContext, clusters: list[ManagedCluster]) -> FilterResult: ...


class Prioritizer(Protocol):
    @property
    def name(self) -> str: ...

    def score(
        self, ctx: ScheduleContext, clusters: Sequence[ManagedCluster], names: Sequence[str]
    ) -> ScoreResult:
        """Score the clusters; names[i] is clusters[i]'s name."""
        ...


def per_cluster(
    derive: Callable[[ManagedCluster], _Derived],
) -> Callable[[ManagedCluster], _Derived]:
    """`derive`, worked out once per cluster object: every placement scheduled reads the
    same cached clusters, and a cached object is never changed in place (a changed cluster
    is a new object). A result is kept as long as its object lives, and no longer."""
    known: dict[int, tuple[weakref.ref[ManagedCluster], _Derived]] = {}

    @wraps(derive)
    def derived(cluster: ManagedCluster) -> _Derived:
        key = id(cluster)
        entry = known.get(key)
        if entry is not None and entry[0]() is cluster:
            return entry[1]
        result = derive(cluster)
        # Forgotten when the object goes, before its id can be another's.
        known[key] = (weakref.ref(cluster, lambda _: known.pop(key, None)), result)
        return result

    return derived
