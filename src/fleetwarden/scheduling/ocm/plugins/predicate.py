"""Predicate (plugins/predicate, helpers/clusters.go): a cluster passes when it matches any of
the placement's predicates; a predicate matches when its labelSelector matches the cluster's
labels and its claimSelector the cluster's status.clusterClaims (name → value).

An absent selector, or one with no terms, matches every cluster (the fields are values, not
pointers, upstream). A selector apimachinery refuses makes the placement Misconfigured with
apimachinery's message, once there are clusters to filter.

celSelector: every CEL expression must hold too, in OCM's CEL environment (scheduling/ocm/
cel.py); one that does not compile makes the placement Misconfigured with upstream's
`compilation failed: ...`; an empty celExpressions list matches, as upstream.

Matching works a requirement at a time over all the clusters left, asking each requirement
once per distinct label value: a fleet has many clusters but few distinct values per key.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from fleetwarden.api.meta import LabelSelector
from fleetwarden.api.ocm.cluster import ManagedCluster
from fleetwarden.api.ocm.placement import ClusterClaimSelector, ClusterPredicate
from fleetwarden.scheduling.ocm.cel import CelSelector, Scores
from fleetwarden.scheduling.ocm.framework import (
    FilterResult,
    ScheduleContext,
    Status,
    per_cluster,
)
from fleetwarden.semantics.cel import CelError
from fleetwarden.semantics.selectors import (
    Requirement,
    SelectorError,
    label_selector_as_selector,
)

NAME = "Predicate"

Labels = Mapping[str, str]


def cluster_claims(cluster: ManagedCluster) -> dict[str, str]:
    """helpers.GetClusterClaims: status.clusterClaims as name → value."""
    return {c.name or "": c.value or "" for c in cluster.status.cluster_claims or ()}


# The map of each cluster, made once however many placements look: callers do not change it.
_claims_of = per_cluster(cluster_claims)


@dataclass(frozen=True, slots=True)
class ClusterSelector:
    """helpers.ClusterSelector: label and claim requirements, all of which must hold."""

    labels: tuple[Requirement, ...]
    claims: tuple[Requirement, ...]
    cel: CelSelector | None = None

    @classmethod
    def of_selectors(
        cls, label_selector: LabelSelector | None, claim_selector: ClusterClaimSelector | None
    ) -> ClusterSelector:
        """helpers.NewClusterSelector: a labelSelector on labels and a claimSelector on
        cluster claims, an absent one matching everything (upstream's fields are values).
        Raises SelectorError for a selector apimachinery refuses."""
        claims = claim_selector.match_expressions if claim_selector else None
        return cls(
            label_selector_as_selector(label_selector or LabelSelector()).requirements,
            label_selector_as_selector(LabelSelector(match_expressions=claims)).requirements,
        )

    @classmethod
    def of(cls, predicate: ClusterPredicate) -> ClusterSelector:
        """Raises SelectorError with the message the placement is misconfigured with."""
        selector = predicate.required_cluster_selector
        if selector is None:
            return cls((), ())
        compiled = cls.of_selectors(selector.label_selector, selector.claim_selector)
        expressions = selector.cel_selector.cel_expressions if selector.cel_selector else None
        if not expressions:
            return compiled
        try:
            return replace(compiled, cel=CelSelector.compile(expressions))
        except CelError as err:
            raise SelectorError(str(err)) from None

    @property
    def everything(self) -> bool:
        return not self.labels and not self.claims and self.cel is None

    def matches(self, cluster: ManagedCluster) -> bool:
        """Whether the cluster's labels and cluster claims satisfy every requirement."""
        labels = cluster.metadata.labels or {}
        if not all(r.matches(labels) for r in self.labels):
            return False
        if not self.claims:
            return True
        claims = _claims_of(cluster)
        return all(r.matches(claims) for r in self.claims)


# A requirement's key, and the clusters (by index) to look up: their values for that key.
Values = Callable[[str, list[int]], list[str | None]]


def _narrow(
    indices: list[int], values_of: Values, requirements: Sequence[Requirement]
) -> list[int]:
    """The indices whose values satisfy every requirement. A requirement reads only its key's
    value, so it is asked once per distinct value."""
    for requirement in requirements:
        key = requirement.key
        values = values_of(key, indices)
        passing = {v for v in set(values) if requirement.matches({} if v is None else {key: v})}
        indices = [i for i, v in zip(indices, values, strict=True) if v in passing]
    return indices


def _claim_values(clusters: list[ManagedCluster]) -> Values:
    """Each cluster's claim of that name, as cluster_claims has it."""

    def values_of(key: str, indices: list[int]) -> list[str | None]:
        return [_claims_of(clusters[i]).get(key) for i in indices]

    return values_of


def _matching(
    selectors: Sequence[ClusterSelector], clusters: list[ManagedCluster], scores: Scores
) -> list[ManagedCluster]:
    """The clusters any selector matches, in their order."""
    if any(s.everything for s in selectors):
        return clusters
    labels: list[Labels] = []
    if any(s.labels for s in selectors):
        labels = [c.metadata.labels or {} for c in clusters]

    def label_values(key: str, indices: list[int]) -> list[str | None]:
        return [labels[i].get(key) for i in indices]

    claim_values = _claim_values(clusters)
    everyone = range(len(clusters))
    matched: set[int] = set()
    for selector in selectors:
        left = [i for i in everyone if i not in matched] if matched else list(everyone)
        left = _narrow(left, label_values, selector.labels)
        left = _narrow(left, claim_values, selector.claims)
        if selector.cel is not None:
            cel = selector.cel
            left = [i for i in left if cel.matches(clusters[i].to_dict(), scores)]
        matched.update(left)
    return [clusters[i] for i in sorted(matched)]


class Predicate:
    name = NAME

    def filter(self, ctx: ScheduleContext, clusters: list[ManagedCluster]) -> FilterResult:
        predicates = ctx.placement.spec.predicates
        if not predicates or not clusters:
            return FilterResult(clusters)
        try:
            selectors = [ClusterSelector.of(p) for p in predicates]
        except SelectorError as err:
            return FilterResult([], Status.misconfigured(self.name, str(err)))
        return FilterResult(_matching(selectors, clusters, functools.partial(_scores, ctx)))


def _scores(ctx: ScheduleContext, cluster: str, name: str) -> list[dict[str, Any]] | None:
    """The items of the cluster's AddOnPlacementScore of that name, for `scores(...)`."""
    score = ctx.handle.addon_placement_score(cluster, name)
    if score is None:
        return None
    return [{"name": s.name, "value": s.value} for s in score.status.scores or []]
