"""Choosing clusters under spread constraints (core/spreadconstraint).

Clusters come sorted best first: overflow tier, then score, then available replicas, then
name. Without spread constraints every feasible cluster is chosen (static weights ignore
them too). By cluster: the best maxGroups, swapping in roomier clusters when a Divided
workload would not fit. By region: the best combination of regions that holds at least the
cluster constraint's minGroups clusters (a depth-first search over region counts), the best
cluster of each, then the best of the rest up to the cluster constraint's maxGroups.
Upstream groups by zone and provider too but selects by cluster and region only; a
placement spreading by label alone is refused as upstream refuses it.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from fleetwarden.api.karmada.policy import (
    REPLICA_DIVISION_WEIGHTED,
    REPLICA_SCHEDULING_DIVIDED,
    REPLICA_SCHEDULING_DUPLICATED,
    SPREAD_BY_FIELD_CLUSTER,
    SPREAD_BY_FIELD_REGION,
    Placement,
    SpreadConstraint,
)
from fleetwarden.scheduling.karmada.framework import ClusterInfo, ScheduleError

# weightUnit: a group's replica capacity counts a thousand times its clusters' mean score.
WEIGHT_UNIT = 1000


@dataclass(frozen=True, slots=True)
class ClusterDetail:
    """spreadconstraint.ClusterDetailInfo: a feasible cluster with what selection needs."""

    name: str
    cluster: ClusterInfo
    score: int = 0
    # 0 for the primary cluster affinity, i for the i-th overflow tier.
    overflow_order: int = 0
    # allocatable_replicas plus the replicas the binding has there already.
    available_replicas: int = 0
    allocatable_replicas: int = 0

    def __repr__(self) -> str:
        return (
            f"{self.name}(score={self.score}, availableReplicas={self.available_replicas}, "
            f"overflowOrder={self.overflow_order})"
        )


def sort_key(detail: ClusterDetail) -> tuple[int, int, int, str]:
    """sortClusters with the available-replicas comparison every caller adds."""
    return detail.overflow_order, -detail.score, -detail.available_replicas, detail.name


def spread_ignored(placement: Placement) -> bool:
    """shouldIgnoreSpreadConstraint: static weights decide on their own."""
    strategy = placement.replica_scheduling
    if strategy is None or strategy.replica_scheduling_type != REPLICA_SCHEDULING_DIVIDED:
        return False
    if strategy.replica_division_preference != REPLICA_DIVISION_WEIGHTED:
        return False
    weights = strategy.weight_preference
    return weights is None or (bool(weights.static_weight_list) and not weights.dynamic_weight)


def select_best_clusters(
    placement: Placement, clusters: Sequence[ClusterDetail], replicas: int
) -> list[ClusterDetail]:
    """SelectBestClusters. `clusters` sorted by sort_key; `replicas` to find room for."""
    constraints = placement.spread_constraints or []
    if not constraints or spread_ignored(placement):
        return list(clusters)
    duplicated = placement.replica_scheduling_type() == REPLICA_SCHEDULING_DUPLICATED
    by_field = {c.spread_by_field or "": c for c in constraints}
    if SPREAD_BY_FIELD_REGION in by_field:
        return _select_by_region(by_field, clusters, replicas, duplicated)
    if SPREAD_BY_FIELD_CLUSTER in by_field:
        need = None if duplicated else replicas
        return _select_by_cluster(by_field[SPREAD_BY_FIELD_CLUSTER], clusters, need)
    raise ScheduleError("just support cluster and region spread constraint")


def _select_by_cluster(
    constraint: SpreadConstraint, clusters: Sequence[ClusterDetail], replicas: int | None
) -> list[ClusterDetail]:
    """selectBestClustersByCluster; replicas None when room does not matter (Duplicated)."""
    if len(clusters) < (constraint.min_groups or 0):
        raise ScheduleError(
            "the number of feasible clusters is less than spreadConstraint.MinGroups"
        )
    count = min(len(clusters), constraint.max_groups or 0)
    if replicas is None:
        return list(clusters[:count])
    selected = _select_by_available_resource(clusters, count, replicas)
    if not selected:
        raise ScheduleError(f"no enough resource when selecting {count} clusters")
    return selected


def _select_by_available_resource(
    clusters: Sequence[ClusterDetail], count: int, replicas: int
) -> list[ClusterDetail]:
    """selectClustersByAvailableResource: while the best `count` lack room, replace them,
    worst first, by the roomiest of the others (when roomier)."""
    chosen, rest = list(clusters[:count]), list(clusters[count:])
    index = len(chosen) - 1
    while not _has_room(chosen, replicas) and index >= 0:
        roomiest = _roomiest(rest, above=chosen[index].available_replicas)
        if roomiest is not None:
            chosen[index], rest[roomiest] = rest[roomiest], chosen[index]
        index -= 1
    return chosen if _has_room(chosen, replicas) else []


def _has_room(clusters: Iterable[ClusterDetail], replicas: int) -> bool:
    return sum(c.available_replicas for c in clusters) >= replicas


def _roomiest(clusters: Sequence[ClusterDetail], above: int) -> int | None:
    """GetClusterWithMaxAvailableResource: the first with the most room, more than `above`."""
    best, most = None, above
    for i, cluster in enumerate(clusters):
        if cluster.available_replicas > most:
            best, most = i, cluster.available_replicas
    return best


# --- by region -----------------------------------------------------------------------------------


def _select_by_region(
    by_field: Mapping[str, SpreadConstraint],
    clusters: Sequence[ClusterDetail],
    replicas: int,
    duplicated: bool,
) -> list[ClusterDetail]:
    """selectBestClustersByRegion."""
    region_constraint = by_field[SPREAD_BY_FIELD_REGION]
    cluster_constraint = by_field.get(SPREAD_BY_FIELD_CLUSTER, SpreadConstraint())
    regions: dict[str, list[ClusterDetail]] = {}
    for detail in clusters:
        region = detail.cluster.cluster.spec.region
        if region:
            regions.setdefault(region, []).append(detail)
    if len(regions) < (region_constraint.min_groups or 0):
        raise ScheduleError("the number of feasible region is less than spreadConstraint.MinGroups")
    scorer = _GroupScorer(replicas, duplicated, by_field)
    groups = [
        Group(name, len(members), scorer.score(members, region_constraint.min_groups or 0))
        for name, members in regions.items()
    ]
    chosen = select_groups(
        groups,
        region_constraint.min_groups or 0,
        region_constraint.max_groups or 0,
        cluster_constraint.min_groups or 0,
    )
    if not chosen:
        raise ScheduleError(
            "the number of clusters is less than the cluster spreadConstraint.MinGroups"
        )
    selected = [regions[g.name][0] for g in chosen]
    candidates = [d for g in chosen for d in regions[g.name][1:]]
    count = min(len(candidates) + len(selected), cluster_constraint.max_groups or 0)
    rest = count - len(selected)
    if rest > 0:
        selected += sorted(candidates, key=sort_key)[:rest]
    return selected


@dataclass(frozen=True)
class _GroupScorer:
    """calcGroupScore: how well a group of clusters holds the workload."""

    replicas: int
    duplicated: bool
    by_field: Mapping[str, SpreadConstraint]

    def score(self, clusters: Sequence[ClusterDetail], min_groups: int) -> int:
        if self.duplicated:
            return self._duplicated(clusters)
        return self._divided(clusters, min_groups)

    def _duplicated(self, clusters: Sequence[ClusterDetail]) -> int:
        """Clusters with room for every replica count first, then their mean score."""
        valid = [c for c in clusters if c.available_replicas >= self.replicas]
        if not valid:
            return 0
        return len(valid) * WEIGHT_UNIT + sum(c.score for c in valid) // len(valid)

    def _divided(self, clusters: Sequence[ClusterDetail], min_groups: int) -> int:
        """Room for this group's share of the replicas (up to it) first, then the mean
        score of the best clusters needed to hold it."""
        target = math.ceil(self.replicas / max(min_groups, 1))
        cluster_constraint = self.by_field.get(SPREAD_BY_FIELD_CLUSTER)
        needed = max((cluster_constraint.min_groups or 0) if cluster_constraint else 0, min_groups)
        available = score = counted = 0
        for cluster in clusters:
            available += cluster.available_replicas
            score += cluster.score
            counted += 1
            if counted >= needed and available >= target:
                break
        if available < target:
            return available * WEIGHT_UNIT + score // len(clusters)
        return target * WEIGHT_UNIT + score // counted


@dataclass
class Group:
    """GroupInfo: a region, how many clusters it has (value) and its score (weight)."""

    name: str
    value: int
    weight: int


@dataclass
class _Path:
    """dfsPath: a combination of groups, numbered in the order the search found it."""

    id: int
    groups: list[Group]
    weight: int = field(init=False)
    value: int = field(init=False)

    def __post_init__(self) -> None:
        self.weight = sum(g.weight for g in self.groups)
        self.value = sum(g.value for g in self.groups)
        self.groups.sort(key=lambda g: (-g.weight, g.name))

    def has_prefix(self, other: _Path) -> bool:
        """matchSubPath: `other` is shorter and this path begins with its groups."""
        prefix = self.groups[: len(other.groups)]
        return len(other.groups) < len(self.groups) and [g.name for g in prefix] == [
            g.name for g in other.groups
        ]


def select_groups(
    groups: Sequence[Group], min_groups: int, max_groups: int, target: int
) -> list[Group]:
    """selectGroups: the best combination of min..max groups whose values reach target."""
    paths = _feasible_paths(groups, min_groups, max_groups, target)
    return _prioritize(paths).groups if paths else []


def _feasible_paths(
    groups: Sequence[Group], min_groups: int, max_groups: int, target: int
) -> list[_Path]:
    """findFeasiblePaths: depth first over groups sorted by value ascending (then weight
    descending, name), every path of min..max groups whose values sum to target or more."""
    ordered = sorted(groups, key=lambda g: (g.value, -g.weight, g.name))
    paths: list[_Path] = []
    path: list[Group] = []

    def visit(total: int, begin: int) -> None:
        if total >= target and min_groups <= len(path) <= max_groups:
            paths.append(_Path(len(paths) + 1, list(path)))
            return
        if len(path) >= max_groups:
            return
        for group in ordered[begin:]:
            begin += 1
            path.append(group)
            visit(total + group.value, begin)
            # Every group is needed to reach min_groups: no other combination to try.
            if len(ordered) == min_groups:
                break
            path.pop()

    visit(0, 0)
    return paths


def _prioritize(paths: list[_Path]) -> _Path:
    """prioritizePaths: highest weight, then value, then the first found; but a path that
    is the beginning of the best one (fewer groups, same leaders) is preferred to it."""
    ordered = sorted(paths, key=lambda p: (-p.weight, -p.value, p.id))
    best = ordered[0]
    for path in ordered[1:]:
        if best.has_prefix(path):
            best = path
    return best
