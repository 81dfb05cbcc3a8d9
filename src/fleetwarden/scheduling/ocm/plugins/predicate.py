"""Predicate (plugins/predicate, helpers/clusters.go): a cluster passes when it matches any of
the placement's predicates; a predicate matches when its labelSelector matches the cluster's
labels and its claimSelector the cluster's status.clusterClaims (name → value).

An absent selector, or one with no terms, matches every cluster (the fields are values, not
pointers, upstream). A selector apimachinery refuses makes the placement Misconfigured with
apimachinery's message, once there are clusters to filter.

celSelector: upstream evaluates CEL expressions in an environment of its own (Kubernetes'
CEL libraries, `managedCluster.scores(...)`, cost budgets). No small pure-Python CEL library
reproduces that, so a predicate with CEL expressions makes the placement Misconfigured,
saying so; an empty celExpressions list matches, as upstream.

Matching works a requirement at a time over all the clusters left, asking each requirement
once per distinct label value: a fleet has many clusters but few distinct values per key.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from fleetwarden.api.errors import Path
from fleetwarden.api.meta import LabelSelector
from fleetwarden.api.ocm.cluster import ManagedCluster
from fleetwarden.api.ocm.placement import ClusterPredicate
from fleetwarden.scheduling.ocm.framework import FilterResult, ScheduleContext, Status
from fleetwarden.semantics.selectors import (
    Requirement,
    SelectorError,
    label_selector_as_selector,
)

NAME = "Predicate"
CEL_UNSUPPORTED = (
    "CEL selectors are not supported by fleetwarden; select with labelSelector or claimSelector"
)

Labels = Mapping[str, str]


def cluster_claims(cluster: ManagedCluster) -> dict[str, str]:
    """helpers.GetClusterClaims: status.clusterClaims as name → value."""
    return {c.name or "": c.value or "" for c in cluster.status.cluster_claims or ()}


@dataclass(frozen=True, slots=True)
class _ClusterSelector:
    """helpers.ClusterSelector: label and claim requirements, all of which must hold."""

    labels: tuple[Requirement, ...]
    claims: tuple[Requirement, ...]

    @classmethod
    def of(cls, predicate: ClusterPredicate, index: int) -> _ClusterSelector:
        """Raises SelectorError with the message the placement is misconfigured with."""
        selector = predicate.required_cluster_selector
        if selector is None:
            return cls((), ())
        claims = selector.claim_selector
        compiled = cls(
            label_selector_as_selector(selector.label_selector or LabelSelector()).requirements,
            label_selector_as_selector(
                LabelSelector(match_expressions=claims.match_expressions if claims else None)
            ).requirements,
        )
        cel = selector.cel_selector
        if cel is not None and cel.cel_expressions:
            path = Path("spec.predicates").index(index).child("requiredClusterSelector")
            raise SelectorError(str(path.child("celSelector").forbidden(CEL_UNSUPPORTED)))
        return compiled

    @property
    def everything(self) -> bool:
        return not self.labels and not self.claims


def _narrow(
    indices: list[int],
    maps: Sequence[Labels] | Mapping[int, Labels],
    requirements: Sequence[Requirement],
) -> list[int]:
    """The indices whose map satisfies every requirement. A requirement reads only its key's
    value, so it is asked once per distinct value."""
    for requirement in requirements:
        key = requirement.key
        values = [maps[i].get(key) for i in indices]
        passing = {v for v in set(values) if requirement.matches({} if v is None else {key: v})}
        indices = [i for i, v in zip(indices, values, strict=True) if v in passing]
    return indices


def _matching(
    selectors: Sequence[_ClusterSelector], clusters: list[ManagedCluster]
) -> list[ManagedCluster]:
    """The clusters any selector matches, in their order."""
    if any(s.everything for s in selectors):
        return clusters
    labels: list[Labels] = []
    if any(s.labels for s in selectors):
        labels = [c.metadata.labels or {} for c in clusters]
    # Claims cost a dict per cluster: made only for clusters whose labels matched.
    claims: dict[int, Labels] = {}
    matched: set[int] = set()
    for selector in selectors:
        left = _narrow(
            [i for i in range(len(clusters)) if i not in matched], labels, selector.labels
        )
        if selector.claims:
            for i in left:
                if i not in claims:
                    claims[i] = cluster_claims(clusters[i])
            left = _narrow(left, claims, selector.claims)
        matched.update(left)
    return [clusters[i] for i in sorted(matched)]


class Predicate:
    name = NAME

    def filter(self, ctx: ScheduleContext, clusters: list[ManagedCluster]) -> FilterResult:
        predicates = ctx.placement.spec.predicates
        if not predicates or not clusters:
            return FilterResult(clusters)
        try:
            selectors = [_ClusterSelector.of(p, i) for i, p in enumerate(predicates)]
        except SelectorError as err:
            return FilterResult([], Status.misconfigured(self.name, str(err)))
        return FilterResult(_matching(selectors, clusters))
