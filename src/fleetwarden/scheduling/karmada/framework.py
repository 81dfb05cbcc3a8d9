"""The scheduling framework: clusters as plugins see them, filter and score plugins, errors.

As upstream's pkg/scheduler/framework: a filter plugin says why a cluster does not fit a
binding (nothing when it fits), a score plugin ranks the clusters that fit. Two choices make
10,000 bindings over 1,000 clusters cheap:

- A plugin reads a binding through its ScheduleUnit, what the bindings of one policy share
  (placement, resource kind, observed affinity term, clusters being evicted).
  `plugin.filter(unit)` compiles the unit once and returns the check run on each cluster;
  the framework keeps every cluster's verdict per unit until some cluster changes.
- What differs from binding to binding, the clusters of its current result, enters in one
  place: a plugin that `spares_scheduled` lets those clusters pass, as upstream's
  TaintToleration and APIEnablement skip "the cluster already in the scheduling result".
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Container, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol, Self

from fleetwarden.api.karmada.cluster import CONDITION_COMPLETE_API_ENABLEMENTS, Cluster
from fleetwarden.api.karmada.policy import Placement
from fleetwarden.api.karmada.work import ResourceBindingSpec
from fleetwarden.api.meta import find_condition
from fleetwarden.semantics.tolerations import ClusterTaints, cluster_taints

# framework.MinClusterScore and MaxClusterScore: the range a score plugin gives.
MIN_CLUSTER_SCORE = 0
MAX_CLUSTER_SCORE = 100

# cluster.APIEnablement's answers.
API_ENABLED = "APIEnabled"
API_DISABLED = "APIDisabled"
API_UNKNOWN = "APIUnknown"


@dataclass(frozen=True, slots=True, eq=False)
class ClusterInfo:
    """A cluster as plugins read it, worked out once per resourceVersion. The Cluster is the
    informer's shared object: never change it."""

    name: str
    cluster: Cluster
    taints: ClusterTaints
    # (groupVersion, kind) of every API the cluster serves, from status.apiEnablements.
    api_resources: frozenset[tuple[str, str]]
    complete_api_enablements: bool

    @classmethod
    def of(cls, cluster: Cluster) -> ClusterInfo:
        status = cluster.status
        complete = find_condition(status.conditions, CONDITION_COMPLETE_API_ENABLEMENTS)
        return cls(
            name=cluster.metadata.name,
            cluster=cluster,
            taints=cluster_taints(cluster.spec.taints),
            api_resources=frozenset(
                (enablement.group_version, resource.kind)
                for enablement in status.api_enablements or ()
                for resource in enablement.resources or ()
            ),
            complete_api_enablements=complete is not None and complete.status == "True",
        )

    @property
    def deleting(self) -> bool:
        return self.cluster.metadata.deletion_timestamp is not None

    def api_enablement(self, api_version: str, kind: str) -> str:
        """Cluster.APIEnablement: listed is enabled; unlisted is disabled only when the list
        is known to be complete (CompleteAPIEnablements=True), unknown otherwise."""
        if (api_version, kind) in self.api_resources:
            return API_ENABLED
        return API_DISABLED if self.complete_api_enablements else API_UNKNOWN


@dataclass(frozen=True, slots=True)
class Snapshot:
    """The clusters one scheduling pass sees (upstream's cache.Snapshot); `version` changes
    whenever any cluster does, and keys everything worked out from the clusters."""

    version: int
    clusters: tuple[ClusterInfo, ...]
    by_name: Mapping[str, ClusterInfo]

    @classmethod
    def of(cls, clusters: Iterable[ClusterInfo], version: int = 0) -> Snapshot:
        ordered = tuple(sorted(clusters, key=lambda c: c.name))
        return cls(version, ordered, {c.name: c for c in ordered})


@dataclass(frozen=True, slots=True)
class ScheduleUnit:
    """What filter plugins read of a binding: what the bindings of one policy share.

    Two bindings with equal units get equal verdicts on every cluster, except for the
    clusters already in their results (see FilterPlugin.spares_scheduled).
    """

    placement: Placement = field(compare=False)
    # The placement as JSON: what tells units apart.
    placement_key: str
    api_version: str
    kind: str
    # status.schedulerObservingAffinityName: the clusterAffinities term being tried.
    affinity_name: str
    # ResourceBindingSpec.IsWorkload: replicas, replica requirements or components.
    is_workload: bool
    # Clusters named in spec.gracefulEvictionTasks.
    evicting: frozenset[str]

    @classmethod
    def of(cls, spec: ResourceBindingSpec, affinity_name: str) -> ScheduleUnit:
        placement = spec.placement or Placement()
        return cls(
            placement=placement,
            placement_key=placement.model_dump_json(by_alias=True, exclude_unset=True),
            api_version=spec.resource.api_version,
            kind=spec.resource.kind,
            affinity_name=affinity_name,
            is_workload=is_workload(spec),
            evicting=frozenset(t.from_cluster for t in spec.graceful_eviction_tasks or ()),
        )


def is_workload(spec: ResourceBindingSpec) -> bool:
    """ResourceBindingSpec.IsWorkload."""
    return bool(spec.replicas) or spec.replica_requirements is not None or bool(spec.components)


# A compiled filter: why the cluster does not fit, or None when it does.
Filter = Callable[[ClusterInfo], str | None]


class FilterPlugin(Protocol):
    name: str
    # Whether a cluster already in the binding's result passes whatever this plugin finds.
    spares_scheduled: bool

    def filter(self, unit: ScheduleUnit) -> Filter: ...


class ScorePlugin(Protocol):
    name: str

    def score(
        self, unit: ScheduleUnit, scheduled: Collection[str], feasible: Container[str]
    ) -> Mapping[str, int]:
        """Scores of the feasible clusters; a cluster left out scores MIN_CLUSTER_SCORE."""
        ...


@dataclass(frozen=True, slots=True)
class Feasibility:
    """The clusters that fit a binding, and why each other one does not (the Diagnosis)."""

    # Fit every binding of the unit (shared: never change it).
    shared: Sequence[ClusterInfo]
    # Fit this binding only: clusters of its result that plugins spare.
    spared: Sequence[ClusterInfo]
    failures: Mapping[str, str]
    snapshot: Snapshot

    @property
    def clusters(self) -> list[ClusterInfo]:
        return [*self.shared, *self.spared]

    def __contains__(self, name: object) -> bool:
        cluster = self.snapshot.by_name.get(name) if isinstance(name, str) else None
        return cluster is not None and not cluster.deleting and name not in self.failures


class _Verdicts:
    """Every cluster's verdict for one unit."""

    __slots__ = ("_unspared", "_unspared_memo", "failures", "passing")

    def __init__(
        self, filters: Sequence[tuple[FilterPlugin, Filter]], clusters: Iterable[ClusterInfo]
    ) -> None:
        self.passing: list[ClusterInfo] = []
        self.failures: dict[str, str] = {}
        checks = [check for _, check in filters]
        for cluster in clusters:
            # A deleting cluster is never a candidate, nor a failure to report.
            if cluster.deleting:
                continue
            reason = _first_failure(checks, cluster)
            if reason is None:
                self.passing.append(cluster)
            else:
                self.failures[cluster.name] = reason
        self._unspared = [check for plugin, check in filters if not plugin.spares_scheduled]
        self._unspared_memo: dict[str, str | None] = {}

    def failure_if_scheduled(self, cluster: ClusterInfo) -> str | None:
        """The verdict for a cluster already in the binding's result."""
        try:
            return self._unspared_memo[cluster.name]
        except KeyError:
            reason = self._unspared_memo[cluster.name] = _first_failure(self._unspared, cluster)
            return reason


def _first_failure(checks: Sequence[Filter], cluster: ClusterInfo) -> str | None:
    for check in checks:
        reason = check(cluster)
        if reason is not None:
            return reason
    return None


class Framework:
    """Runs filter plugins (in order; the first reason found is the cluster's) and score
    plugins (their scores summed) for one binding at a time."""

    def __init__(
        self,
        filters: Sequence[FilterPlugin],
        scores: Sequence[ScorePlugin],
        *,
        cache_limit: int = 4096,
    ) -> None:
        self.filters, self.scores = tuple(filters), tuple(scores)
        self._cache_limit = cache_limit
        self._version: int | None = None
        self._verdicts: dict[ScheduleUnit, _Verdicts] = {}

    def find_feasible(
        self, unit: ScheduleUnit, scheduled: Collection[str], snapshot: Snapshot
    ) -> Feasibility:
        """findClustersThatFit: deleting clusters are skipped, every other one filtered."""
        verdicts = self._verdicts_for(unit, snapshot)
        spared = [
            cluster
            for name in scheduled
            if name in verdicts.failures
            and verdicts.failure_if_scheduled(cluster := snapshot.by_name[name]) is None
        ]
        if not spared:
            return Feasibility(verdicts.passing, (), verdicts.failures, snapshot)
        spared_names = {c.name for c in spared}
        failures = {n: r for n, r in verdicts.failures.items() if n not in spared_names}
        return Feasibility(verdicts.passing, spared, failures, snapshot)

    def score(
        self, unit: ScheduleUnit, scheduled: Collection[str], feasible: Container[str]
    ) -> dict[str, int]:
        """The summed scores of the clusters that score above the minimum."""
        total: dict[str, int] = {}
        for plugin in self.scores:
            for name, value in plugin.score(unit, scheduled, feasible).items():
                total[name] = total.get(name, MIN_CLUSTER_SCORE) + value
        return total

    def _verdicts_for(self, unit: ScheduleUnit, snapshot: Snapshot) -> _Verdicts:
        if self._version != snapshot.version or len(self._verdicts) >= self._cache_limit:
            self._verdicts.clear()
            self._version = snapshot.version
        verdicts = self._verdicts.get(unit)
        if verdicts is None:
            filters = [(plugin, plugin.filter(unit)) for plugin in self.filters]
            verdicts = self._verdicts[unit] = _Verdicts(filters, snapshot.clusters)
        return verdicts


# --- errors --------------------------------------------------------------------------------------


class ScheduleError(Exception):
    """A scheduling attempt that failed; str() is upstream's message (SchedulerError)."""

    def wrap(self, context: str) -> Self:
        """fmt.Errorf("context: %w", err): the same kind of error, its message prefixed."""
        wrapped = type(self).__new__(type(self))
        wrapped.__dict__.update(self.__dict__)
        wrapped.args = (f"{context}: {self}",)
        return wrapped


class UnschedulableError(ScheduleError):
    """framework.UnschedulableError: not enough room, tried again later (Unschedulable)."""


class FitError(ScheduleError):
    """framework.FitError: no cluster fits (NoClusterFit)."""

    def __init__(self, num_all_clusters: int, failures: Mapping[str, str]) -> None:
        super().__init__(fit_error_message(num_all_clusters, failures))
        self.num_all_clusters = num_all_clusters
        self.failures = dict(failures)


def fit_error_message(num_all_clusters: int, failures: Mapping[str, str]) -> str:
    """FitError.Error: `0/5 clusters are available: 2 <reason>, 3 <reason>.`, the counts
    sorted as text, as upstream sorts its histogram."""
    if num_all_clusters == 0 or not failures:
        histogram = ["no cluster exists"]
    else:
        counts: dict[str, int] = {}
        for reason in failures.values():
            counts[reason] = counts.get(reason, 0) + 1
        histogram = sorted(f"{count} {reason}" for reason, count in counts.items())
    return f"0/{num_all_clusters} clusters are available: {', '.join(histogram)}."
