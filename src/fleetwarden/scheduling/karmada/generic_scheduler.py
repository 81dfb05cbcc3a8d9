"""One scheduling pass for one binding (core/generic_scheduler.go, common.go, util.go):
filter, score, select under spread constraints, assign replicas.

Errors as upstream's: FitError when no cluster fits at all; UnschedulableError when there is
not room enough; ScheduleError otherwise, its message prefixed by the step that failed
("failed to select clusters: ...", "failed to assign replicas: ...").
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from datetime import datetime

from fleetwarden.api.karmada.cluster import Cluster
from fleetwarden.api.karmada.policy import Placement
from fleetwarden.api.karmada.work import (
    ReplicaRequirements,
    ResourceBindingSpec,
    ResourceBindingStatus,
)
from fleetwarden.runtime.metrics import STEP_FILTER, STEP_SCORE
from fleetwarden.scheduling.karmada.assignment import AssignRequest, assign_workload_replicas
from fleetwarden.scheduling.karmada.estimator import (
    MAX_INT32,
    AccurateEstimator,
    GeneralEstimator,
    requirements_key,
)
from fleetwarden.scheduling.karmada.framework import (
    MIN_CLUSTER_SCORE,
    ClusterInfo,
    Feasibility,
    FitError,
    Framework,
    ScheduleError,
    ScheduleUnit,
    Snapshot,
)
from fleetwarden.scheduling.karmada.plugins import in_tree_framework
from fleetwarden.scheduling.karmada.plugins.cluster_affinity import observed_term, overflow_order
from fleetwarden.scheduling.karmada.spread import ClusterDetail, select_best_clusters, sort_key
from fleetwarden.scheduling.karmada.webster import Target


def reschedule_required(triggered_at: datetime | None, last_scheduled: datetime | None) -> bool:
    """util.RescheduleRequired: spec.rescheduleTriggeredAt is after the last schedule (and
    there was one: a first schedule still on its way answers the trigger anyway)."""
    return triggered_at is not None and last_scheduled is not None and triggered_at > last_scheduled


def enable_overflow(placement: Placement, affinity_name: str) -> bool:
    """enableOverflow: the observed clusterAffinities term has overflowAffinities."""
    if placement.cluster_affinity is not None or not affinity_name:
        return False
    term = observed_term(placement, affinity_name)
    return term is not None and term.overflow_affinities is not None


@dataclass(frozen=True)
class _Demand:
    """What a binding asks of a cluster's room: its replicas and their requirements."""

    replicas: int
    # Estimated at all: calAvailableReplicas skips a non-workload (no replicas).
    estimated: bool
    requirements: ReplicaRequirements | None
    requirements_key: str

    @classmethod
    def of(cls, spec: ResourceBindingSpec) -> _Demand:
        replicas, requirements = spec.replicas or 0, spec.replica_requirements
        return cls(
            replicas,
            bool(replicas or spec.components),
            requirements,
            requirements_key(requirements),
        )


@dataclass
class _Shared:
    """What the bindings of one unit and demand share: the sorted details of the clusters
    that fit them all, and the clusters chosen among those per replica count."""

    details: list[ClusterDetail]
    # Some cluster has no bound, and counts the binding's own replicas as its room.
    replicas: int | None
    chosen: dict[int, list[ClusterDetail] | ScheduleError] = field(default_factory=dict)


class GenericScheduler:
    """genericScheduler.Schedule. What does not depend on a binding's own result is worked
    out once per snapshot and shared by the bindings alike (see framework.ScheduleUnit)."""

    def __init__(
        self,
        framework: Framework | None = None,
        estimator: GeneralEstimator | None = None,
        *,
        accurate: AccurateEstimator | None = None,
        cache_limit: int = 4096,
    ) -> None:
        self.framework = framework or in_tree_framework()
        self.estimator = estimator or GeneralEstimator()
        self.accurate = accurate
        # Whether this call asks the accurate estimators (--enable-scheduler-estimator).
        self._accurate_on = False
        self._cache_limit = cache_limit
        self._version: int | None = None
        self._shared: dict[tuple[ScheduleUnit, str, bool], _Shared] = {}

    def schedule(
        self,
        spec: ResourceBindingSpec,
        status: ResourceBindingStatus,
        snapshot: Snapshot,
        *,
        empty_workload_propagation: bool = False,
        scheduler_estimator: bool = False,
        step: Callable[[str], AbstractContextManager[None]] = lambda _: nullcontext(),
    ) -> list[Target]:
        """The clusters for the binding and their replicas (the SuggestedClusters);
        `scheduler_estimator` asks the accurate estimators too; `step(name)` is entered
        around the Filter and Score steps (to time them)."""
        if self._accurate_on != scheduler_estimator:
            self._shared.clear()
        self._accurate_on = scheduler_estimator and self.accurate is not None
        unit = ScheduleUnit.of(spec, status.scheduler_observed_affinity_name or "")
        scheduled = {t.name: t.replicas or 0 for t in spec.clusters or ()}
        with step(STEP_FILTER):
            feasibility = self.framework.find_feasible(unit, scheduled, snapshot)
        if not feasibility.clusters:
            raise FitError(len(snapshot.clusters), feasibility.failures)
        with step(STEP_SCORE):
            scores = self.framework.score(unit, scheduled, feasibility)
        demand = _Demand.of(spec)
        shared = self._shared_for(unit, demand, feasibility)
        own = {name for name in (*scheduled, *scores) if name in feasibility}
        try:
            if own:
                details = self._details(unit, demand, feasibility, shared, own, scores, scheduled)
                selected = select_best_clusters(unit.placement, details, demand.replicas)
            else:
                selected = self._choose(unit.placement, shared, demand.replicas)
        except ScheduleError as err:
            raise err.wrap("failed to select clusters") from None
        try:
            targets = assign_replicas(selected, spec, status)
        except ScheduleError as err:
            raise err.wrap("failed to assign replicas") from None
        if empty_workload_propagation:
            chosen = {t.name for t in targets}
            targets += [Target(c.name, 0) for c in selected if c.name not in chosen]
        return targets

    def _choose(self, placement: Placement, shared: _Shared, replicas: int) -> list[ClusterDetail]:
        """The choice for a binding with no clusters of its own: the same for every binding
        of the unit with as many replicas."""
        chosen = shared.chosen.get(replicas)
        if chosen is None:
            try:
                chosen = select_best_clusters(placement, shared.details, replicas)
            except ScheduleError as err:
                chosen = err
            shared.chosen[replicas] = chosen
        if isinstance(chosen, ScheduleError):
            raise chosen
        return chosen

    def _details(
        self,
        unit: ScheduleUnit,
        demand: _Demand,
        feasibility: Feasibility,
        shared: _Shared,
        own: set[str],
        scores: Mapping[str, int],
        scheduled: Mapping[str, int],
    ) -> list[ClusterDetail]:
        """GroupClustersWithScore's sorted clusters: the shared details of the clusters
        outside the binding's result, merged with those of the clusters in it (or scored)."""
        order = overflow_order(unit)
        by_name = feasibility.snapshot.by_name
        mine = sorted(
            (self._detail(by_name[name], demand, order, scores, scheduled) for name in own),
            key=sort_key,
        )
        others = (d for d in shared.details if d.name not in own)
        return list(heapq.merge(mine, others, key=sort_key))

    def _shared_for(self, unit: ScheduleUnit, demand: _Demand, feasibility: Feasibility) -> _Shared:
        version = feasibility.snapshot.version
        if self._version != version or len(self._shared) >= self._cache_limit:
            self._shared.clear()
            self._version = version
        key = (unit, demand.requirements_key, demand.estimated)
        shared = self._shared.get(key)
        if shared is None or shared.replicas not in (None, demand.replicas):
            order = overflow_order(unit)
            details = [self._detail(c, demand, order, {}, {}) for c in feasibility.shared]
            unbounded = any(self._unbounded(c, demand) for c in feasibility.shared)
            shared = self._shared[key] = _Shared(
                sorted(details, key=sort_key), demand.replicas if unbounded else None
            )
        return shared

    def _detail(
        self,
        cluster: ClusterInfo,
        demand: _Demand,
        order: Callable[[Cluster], int],
        scores: Mapping[str, int],
        scheduled: Mapping[str, int],
    ) -> ClusterDetail:
        """A cluster's ClusterDetailInfo; its room is calAvailableReplicas: the estimate,
        or the binding's replicas when there is no bound (or nothing to estimate)."""
        estimate = self._estimate(cluster, demand)
        allocatable = demand.replicas if estimate is None or estimate >= MAX_INT32 else estimate
        return ClusterDetail(
            cluster.name,
            cluster,
            score=scores.get(cluster.name, MIN_CLUSTER_SCORE),
            overflow_order=order(cluster.cluster),
            available_replicas=allocatable + scheduled.get(cluster.name, 0),
            allocatable_replicas=allocatable,
        )

    def _unbounded(self, cluster: ClusterInfo, demand: _Demand) -> bool:
        estimate = self._estimate(cluster, demand)
        return estimate is None or estimate >= MAX_INT32

    def _estimate(self, cluster: ClusterInfo, demand: _Demand) -> int | None:
        if not demand.estimated:
            return None
        general = self.estimator.max_available_replicas(
            cluster.name,
            cluster.cluster.metadata.resource_version or "",
            cluster.cluster.status.resource_summary,
            demand.requirements,
            demand.requirements_key,
        )
        if self._accurate_on and self.accurate is not None:
            accurate = self.accurate(cluster.name, demand.requirements)
            if accurate is not None:
                return min(general, accurate)
        return general


def assign_replicas(
    clusters: Sequence[ClusterDetail], spec: ResourceBindingSpec, status: ResourceBindingStatus
) -> list[Target]:
    """AssignReplicas: a workload's replicas by its strategy; anything else (a ConfigMap, a
    Service) goes to every chosen cluster."""
    if not clusters:
        raise ScheduleError("no clusters available to schedule")
    placement = spec.placement or Placement()
    replicas = spec.replicas or 0
    if (replicas > 0 or spec.replica_requirements is not None) and len(spec.components or ()) <= 1:
        affinity_name = status.scheduler_observed_affinity_name or ""
        request = AssignRequest(
            replicas=replicas,
            placement=placement,
            scheduled=[Target(t.name, t.replicas or 0) for t in spec.clusters or ()],
            uid=spec.resource.uid or "",
            fresh=reschedule_required(spec.reschedule_triggered_at, status.last_scheduled_time),
            overflow=enable_overflow(placement, affinity_name),
        )
        return assign_workload_replicas(clusters, request)
    return [Target(c.name, 0) for c in clusters]
