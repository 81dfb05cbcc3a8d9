"""Replica assignment (core/assignment.go, division_algorithm.go).

- Duplicated: every chosen cluster runs all the replicas.
- Divided, Weighted with static weights: the replicas divided by the weight of the best
  matching staticWeightList entry (every cluster weighs 1 without a list), afresh each time.
- Divided, Weighted by dynamic weight (AvailableReplicas), and Aggregated (as few clusters as
  possible, roomiest first): "steady" as upstream calls it. A first schedule or a scale-up
  adds only the new replicas, by room, on top of what runs (a cluster that left the choice
  gives its replicas back to be placed again); a scale-down takes replicas away in
  proportion to what each cluster runs. A reschedule asked for by spec.rescheduleTriggeredAt
  divides everything afresh.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace

from fleetwarden.api.karmada.policy import (
    REPLICA_DIVISION_AGGREGATED,
    REPLICA_DIVISION_WEIGHTED,
    REPLICA_SCHEDULING_DIVIDED,
    REPLICA_SCHEDULING_DUPLICATED,
    Placement,
    StaticClusterWeight,
)
from fleetwarden.scheduling.karmada.framework import ScheduleError, UnschedulableError
from fleetwarden.scheduling.karmada.plugins.cluster_affinity import CompiledAffinity
from fleetwarden.scheduling.karmada.spread import ClusterDetail
from fleetwarden.scheduling.karmada.webster import Target, spread_by_weights

DUPLICATED = "Duplicated"
AGGREGATED = "Aggregated"
STATIC_WEIGHT = "StaticWeight"
DYNAMIC_WEIGHT = "DynamicWeight"


@dataclass(frozen=True)
class AssignRequest:
    """What assignment reads of a binding."""

    replicas: int
    placement: Placement
    # spec.clusters: the previous result.
    scheduled: Sequence[Target] = ()
    # spec.resource.uid, for breaking ties between equal weights.
    uid: str = ""
    # util.RescheduleRequired: divide afresh, ignoring the previous result.
    fresh: bool = False
    # Overflow tiers apply (enableOverflow: a clusterAffinities term with overflowAffinities).
    overflow: bool = False


def strategy_type(placement: Placement) -> str | None:
    """newAssignState's strategy, or None for a combination upstream does not know."""
    scheduling_type = placement.replica_scheduling_type()
    if scheduling_type == REPLICA_SCHEDULING_DUPLICATED:
        return DUPLICATED
    strategy = placement.replica_scheduling
    if scheduling_type != REPLICA_SCHEDULING_DIVIDED or strategy is None:
        return None
    if strategy.replica_division_preference == REPLICA_DIVISION_AGGREGATED:
        return AGGREGATED
    if strategy.replica_division_preference == REPLICA_DIVISION_WEIGHTED:
        weights = strategy.weight_preference
        return DYNAMIC_WEIGHT if weights is not None and weights.dynamic_weight else STATIC_WEIGHT
    return None


def assign_workload_replicas(
    clusters: Sequence[ClusterDetail], request: AssignRequest
) -> list[Target]:
    """assignWorkloadReplicas: tier after tier when overflow applies, as many replicas in
    each as it has room for, until all are placed."""
    if not request.overflow:
        return assign_replicas_to_clusters(clusters, request)
    tiers: dict[int, list[ClusterDetail]] = {}
    for cluster in clusters:
        tiers.setdefault(cluster.overflow_order, []).append(cluster)
    results: list[Target] = []
    remaining = request.replicas
    for order in sorted(tiers):
        tier = tiers[order]
        replicas = min(remaining, sum(c.available_replicas for c in tier))
        results += assign_replicas_to_clusters(
            tier, replace(request, replicas=replicas, overflow=False)
        )
        remaining -= replicas
        if remaining <= 0:
            return results
    raise UnschedulableError("Clusters available replicas are not enough to schedule.")


def assign_replicas_to_clusters(
    clusters: Sequence[ClusterDetail], request: AssignRequest
) -> list[Target]:
    """assignReplicasToClusters: the strategy's result without clusters given 0 replicas."""
    strategy = strategy_type(request.placement)
    if strategy is None:
        scheduling = request.placement.replica_scheduling
        preference = scheduling.replica_division_preference if scheduling else None
        raise ScheduleError(
            "unsupported replica scheduling strategy, replicaSchedulingType: "
            f"{request.placement.replica_scheduling_type()}, replicaDivisionPreference: "
            f"{preference or ''}, please try another scheduling strategy"
        )
    targets = _STRATEGIES[strategy](clusters, request, strategy)
    return [t for t in targets if t.replicas > 0]


def _duplicated(
    clusters: Sequence[ClusterDetail], request: AssignRequest, strategy: str
) -> list[Target]:
    return [Target(c.name, request.replicas) for c in clusters]


def _static_weight(
    clusters: Sequence[ClusterDetail], request: AssignRequest, strategy: str
) -> list[Target]:
    """assignByStaticWeightStrategy: a cluster weighs the most of the entries that match it
    and takes no part without one; when none matches any (or there is no list), all weigh 1."""
    scheduling = request.placement.replica_scheduling
    preference = scheduling.weight_preference if scheduling else None
    weight_list = (preference.static_weight_list if preference else None) or []
    return spread_by_weights(
        request.replicas, static_weights(clusters, weight_list), uid=request.uid
    )


def static_weights(
    clusters: Sequence[ClusterDetail], weight_list: Sequence[StaticClusterWeight]
) -> list[tuple[str, int]]:
    """getStaticWeightInfoList."""
    rules = [(CompiledAffinity(w.target_cluster), w.weight) for w in weight_list]
    weights = [
        (c.name, max((w for rule, w in rules if rule.matches(c.cluster.cluster)), default=0))
        for c in clusters
    ]
    weights = [(name, weight) for name, weight in weights if weight > 0]
    return weights or [(c.name, 1) for c in clusters]


def _dynamic(
    clusters: Sequence[ClusterDetail], request: AssignRequest, strategy: str
) -> list[Target]:
    """assignByDynamicStrategy (dynamic weight and Aggregated)."""
    candidates = {c.name for c in clusters}
    # Replicas on clusters no longer chosen are placed again, as if scaled up.
    scheduled = [t for t in request.scheduled if t.name in candidates]
    assigned = sum(t.replicas for t in scheduled)
    division = _Division(strategy, request)
    if request.fresh:
        return division.fresh(clusters, scheduled)
    if assigned > request.replicas:
        return division.scale_down(scheduled)
    if assigned < request.replicas:
        return division.scale_up(clusters, scheduled, request.replicas - assigned)
    return scheduled


@dataclass(frozen=True)
class _Division:
    strategy: str
    request: AssignRequest

    def scale_down(self, scheduled: Sequence[Target]) -> list[Target]:
        """dynamicScaleDown: the previous result is the weight of what stays."""
        try:
            return self._divide(self.request.replicas, _by_room(scheduled), [])
        except ScheduleError as err:
            raise err.wrap("failed to scale down") from None

    def scale_up(
        self, clusters: Sequence[ClusterDetail], scheduled: Sequence[Target], extra: int
    ) -> list[Target]:
        """dynamicScaleUp: only the extra replicas are divided, by room left."""
        room = _by_room(Target(c.name, c.allocatable_replicas) for c in clusters)
        try:
            return self._divide(extra, room, scheduled)
        except ScheduleError as err:
            raise err.wrap("failed to scale up") from None

    def fresh(self, clusters: Sequence[ClusterDetail], scheduled: Sequence[Target]) -> list[Target]:
        """dynamicFreshScale: room counts what runs there already, as if first scheduled."""
        running = {t.name: t.replicas for t in scheduled}
        room = _by_room(
            Target(c.name, c.allocatable_replicas + running.get(c.name, 0)) for c in clusters
        )
        try:
            return self._divide(self.request.replicas, room, [])
        except ScheduleError as err:
            raise err.wrap("failed to do fresh scale") from None

    def _divide(
        self, replicas: int, room: list[Target], scheduled: Sequence[Target]
    ) -> list[Target]:
        """dynamicDivideReplicas: `replicas` more by room on top of `scheduled`."""
        available = sum(t.replicas for t in room)
        if available < replicas:
            raise UnschedulableError(
                f"Clusters available replicas {available} are not enough to schedule."
            )
        if self.strategy == AGGREGATED:
            room = _fewest(_running_first(room, scheduled), replicas)
        added = spread_by_weights(replicas, room, uid=self.request.uid)
        return merge_targets(scheduled, added)


def _by_room(targets: Iterable[Target]) -> list[Target]:
    """Roomiest first (TargetClustersList sorted); equal room keeps the given order."""
    return sorted(targets, key=lambda t: -t.replicas)


def _running_first(room: list[Target], scheduled: Sequence[Target]) -> list[Target]:
    """resortAvailableClusters: clusters running replicas first, to grow where it runs."""
    prior = {t.name for t in scheduled if t.replicas > 0}
    return [t for t in room if t.name in prior] + [t for t in room if t.name not in prior]


def _fewest(room: list[Target], replicas: int) -> list[Target]:
    """The fewest clusters, in order, with room for the replicas (Aggregated)."""
    total = 0
    for i, target in enumerate(room):
        total += target.replicas
        if total >= replicas:
            return room[: i + 1]
    return room


def merge_targets(old: Sequence[Target], new: Sequence[Target]) -> list[Target]:
    """util.MergeTargetClusters: replicas summed per cluster, new ones first."""
    if not old:
        return list(new)
    if not new:
        return list(old)
    previous = {t.name: t.replicas for t in old}
    merged = [Target(t.name, t.replicas + previous.pop(t.name, 0)) for t in new]
    return merged + [Target(name, replicas) for name, replicas in previous.items()]


_STRATEGIES: dict[str, Callable[[Sequence[ClusterDetail], AssignRequest, str], list[Target]]] = {
    DUPLICATED: _duplicated,
    AGGREGATED: _dynamic,
    STATIC_WEIGHT: _static_weight,
    DYNAMIC_WEIGHT: _dynamic,
}
