"""ClusterAffinity (framework/plugins/clusteraffinity): the cluster must match the placement's
clusterAffinity, or the clusterAffinities term being tried (with its overflow tiers, for
workloads only: a Service or ConfigMap needs no room to overflow into)."""

from __future__ import annotations

from collections.abc import Callable

from fleetwarden.api.karmada.cluster import Cluster
from fleetwarden.api.karmada.policy import ClusterAffinity as Affinity
from fleetwarden.api.karmada.policy import ClusterAffinityTerm, Placement
from fleetwarden.scheduling.karmada.framework import ClusterInfo, Filter, ScheduleUnit
from fleetwarden.semantics.selectors import (
    EVERYTHING,
    NOTHING,
    PROVIDER_FIELD,
    REGION_FIELD,
    ZONE_FIELD,
    Selector,
    SelectorError,
    label_selector_as_selector,
    match_zones,
    node_selector_requirements_as_selector,
)

REASON = "cluster(s) did not match the placement cluster affinity constraint"


class CompiledAffinity:
    """util.ClusterMatches (semantics.affinity.cluster_matches) with its selectors parsed
    once, for matching cluster after cluster."""

    __slots__ = ("_exclude", "_fields", "_labels", "_names", "_zones")

    def __init__(self, affinity: Affinity) -> None:
        self._exclude = frozenset(affinity.exclude_clusters or ())
        self._names = frozenset(affinity.cluster_names or ())
        selector = affinity.label_selector
        # Karmada skips a nil labelSelector.
        self._labels = (
            EVERYTHING
            if selector is None
            else _selector(lambda: label_selector_as_selector(selector))
        )
        requirements = (
            affinity.field_selector.match_expressions or []
            if affinity.field_selector is not None
            else []
        )
        self._zones = [r for r in requirements if r.key == ZONE_FIELD]
        others = [r for r in requirements if r.key != ZONE_FIELD]
        self._fields = (
            _selector(lambda: node_selector_requirements_as_selector(others))
            if others
            else EVERYTHING
        )

    def matches(self, cluster: Cluster) -> bool:
        name, spec = cluster.metadata.name, cluster.spec
        if name in self._exclude or (self._names and name not in self._names):
            return False
        if not self._labels.matches(cluster.metadata.labels):
            return False
        if not all(match_zones(r, spec.zones) for r in self._zones):
            return False
        fields = {
            key: value
            for key, value in ((PROVIDER_FIELD, spec.provider), (REGION_FIELD, spec.region))
            if value
        }
        return self._fields.matches(fields)


def _selector(build: Callable[[], Selector]) -> Selector:
    """An invalid selector matches nothing, as ClusterMatches treats a conversion error."""
    try:
        return build()
    except SelectorError:
        return NOTHING


def observed_term(placement: Placement, affinity_name: str) -> ClusterAffinityTerm | None:
    """The clusterAffinities term named by status.schedulerObservingAffinityName."""
    return next(
        (t for t in placement.cluster_affinities or () if t.affinity_name == affinity_name), None
    )


def tiers(unit: ScheduleUnit) -> list[Affinity] | None:
    """The affinities a cluster may match, primary first; None when nothing constrains."""
    placement = unit.placement
    if placement.cluster_affinity is not None:
        return [placement.cluster_affinity]
    term = observed_term(placement, unit.affinity_name)
    if term is None:
        return None
    overflow = term.overflow_affinities or [] if unit.is_workload else []
    return [term, *overflow]


class ClusterAffinity:
    name = "ClusterAffinity"
    spares_scheduled = False

    def filter(self, unit: ScheduleUnit) -> Filter:
        affinities = tiers(unit)
        if affinities is None:
            return _fits
        compiled = [CompiledAffinity(a) for a in affinities]

        def check(cluster: ClusterInfo) -> str | None:
            return None if any(a.matches(cluster.cluster) for a in compiled) else REASON

        return check


def overflow_order(unit: ScheduleUnit) -> Callable[[Cluster], int]:
    """getClusterOverflowOrder: 0 for the primary affinity (and whenever there are no
    clusterAffinities), i for the i-th overflow tier, 1000 (last) when nothing matches."""
    placement = unit.placement
    if placement.cluster_affinity is not None or not placement.cluster_affinities:
        return lambda cluster: 0
    term = observed_term(placement, unit.affinity_name)
    compiled = (
        []
        if term is None
        else [CompiledAffinity(a) for a in (term, *(term.overflow_affinities or []))]
    )
    return lambda cluster: next((i for i, a in enumerate(compiled) if a.matches(cluster)), 1000)


def _fits(cluster: ClusterInfo) -> str | None:
    return None
