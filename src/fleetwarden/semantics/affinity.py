"""Karmada's ClusterAffinity: which clusters a PropagationPolicy (or a ClusterTaintPolicy's
targetClusters) selects, as util.ClusterMatches decides (pkg/util/selector.go).

The functions read the typed models through small protocols, so they take a Cluster and a
ClusterAffinity from fleetwarden.api.karmada, or anything shaped like them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Protocol

from fleetwarden.api.meta import LabelSelector
from fleetwarden.semantics.selectors import (
    SelectorRequirement,
    cluster_fields_match,
    label_selector_matches,
)


class _ClusterMeta(Protocol):
    @property
    def name(self) -> str: ...
    @property
    def labels(self) -> Mapping[str, str] | None: ...


class _ClusterSpec(Protocol):
    @property
    def provider(self) -> str | None: ...
    @property
    def region(self) -> str | None: ...
    @property
    def zones(self) -> Sequence[str] | None: ...


class ClusterLike(Protocol):
    """What matching reads of a cluster.karmada.io Cluster."""

    @property
    def metadata(self) -> _ClusterMeta: ...
    @property
    def spec(self) -> _ClusterSpec: ...


class FieldSelectorLike(Protocol):
    @property
    def match_expressions(self) -> Sequence[SelectorRequirement] | None: ...


class ClusterAffinityLike(Protocol):
    """policy.karmada.io ClusterAffinity (exclude_clusters is `exclude` on the wire)."""

    @property
    def cluster_names(self) -> Sequence[str] | None: ...
    @property
    def exclude_clusters(self) -> Sequence[str] | None: ...
    @property
    def label_selector(self) -> LabelSelector | None: ...
    @property
    def field_selector(self) -> FieldSelectorLike | None: ...


def cluster_matches(cluster: ClusterLike, affinity: ClusterAffinityLike) -> bool:
    """util.ClusterMatches: not excluded, and every constraint that is set holds.

    exclude wins over everything; an unset labelSelector, fieldSelector or clusterNames
    does not constrain, so an empty affinity matches every cluster. A selector that does
    not convert (bad key, unknown operator) matches nothing.
    """
    name = cluster.metadata.name
    if name in (affinity.exclude_clusters or ()):
        return False
    if not label_selector_matches(
        affinity.label_selector, cluster.metadata.labels, nil_matches=True
    ):
        return False
    field_selector = affinity.field_selector
    if field_selector is not None and not cluster_fields_match(
        field_selector.match_expressions or (),
        provider=cluster.spec.provider,
        region=cluster.spec.region,
        zones=cluster.spec.zones,
    ):
        return False
    return cluster_names_match(name, affinity.cluster_names)


def cluster_names_match(name: str, cluster_names: Sequence[str] | None) -> bool:
    """util.ClusterNamesMatches: no names means any cluster."""
    return not cluster_names or name in cluster_names
