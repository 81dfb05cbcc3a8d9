"""Placement scheduling (controllers/scheduling/schedule.go): which of the candidate clusters
(those of the cluster sets bound to its namespace, found by the controller) a Placement
selects, and how they rank.

1. Filters, Predicate then TaintToleration, narrow the candidates. A Misconfigured or Error
   status stops scheduling there: nothing is selected.
2. Weights: prioritizerPolicy.mode Additive (or unset) starts from the defaults, Balance and
   Steady at weight 1, which configurations override; Exact takes the configurations alone.
   Configurations are keyed as upstream keys them: a built-in by its name (a later one
   overrides an earlier), each AddOn coordinate on its own. An unset type is BuiltIn and an
   unset weight 1, the CRD's defaults.
3. Every prioritizer of non-zero weight scores the clusters left; a cluster's final score is
   the sum of weight × score.
4. Clusters rank by final score, highest first, then by name; the first numberOfClusters
   (all when unset) are the decisions.

requeue_after says when to schedule again although nothing changed: the earliest instant a
selected cluster's toleration runs out, or a prioritizer's score changes by itself (an
AddOnPlacementScore reaching its validUntil).

spreadPolicy is in the v1beta1 API, but upstream's scheduler does not read it, nor does this.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from itertools import repeat
from operator import mul

from fleetwarden.api.ocm.cluster import ManagedCluster
from fleetwarden.api.ocm.placement import (
    MODE_ADDITIVE,
    MODE_EXACT,
    SCORE_BUILT_IN,
    Placement,
    PrioritizerPolicy,
    ScoreCoordinate,
)
from fleetwarden.scheduling.ocm.framework import (
    Code,
    Handle,
    Prioritizer,
    ScheduleContext,
    Status,
)
from fleetwarden.scheduling.ocm.plugins import BUILT_IN_PRIORITIZERS, FILTERS, AddOn
from fleetwarden.scheduling.ocm.plugins.balance import NAME as BALANCE
from fleetwarden.scheduling.ocm.plugins.steady import NAME as STEADY

# What Additive mode starts from; every other prioritizer weighs 0 unless configured.
DEFAULT_WEIGHTS = {BALANCE: 1, STEADY: 1}


@dataclass(slots=True)
class FilterRecord:
    """The clusters left after the filters named (comma-separated, in the order they ran)."""

    name: str
    clusters: list[ManagedCluster]

    @property
    def cluster_names(self) -> list[str]:
        return [c.metadata.name for c in self.clusters]


@dataclass(slots=True)
class PrioritizerResult:
    name: str
    weight: int
    scores: dict[str, int]


@dataclass(slots=True)
class ScheduleResult:
    # The selected clusters' names, best first.
    decisions: list[str] = field(default_factory=list)
    # The final score of every cluster that passed the filters.
    prioritizer_scores: dict[str, int] = field(default_factory=dict)
    # How many of numberOfClusters could not be selected.
    num_unscheduled: int = 0
    requeue_after: timedelta | None = None
    filter_results: list[FilterRecord] = field(default_factory=list)
    prioritizer_results: list[PrioritizerResult] = field(default_factory=list)


def schedule(
    handle: Handle, placement: Placement, clusters: Sequence[ManagedCluster], now: datetime
) -> tuple[ScheduleResult, Status]:
    """Schedule `placement` over the candidate `clusters` at `now` (pluginScheduler.Schedule)."""
    ctx = ScheduleContext(handle, placement, now)
    result = ScheduleResult()
    feasible, expiries, final = _filter(ctx, list(clusters), result)
    if final.is_error():
        return result, final
    prioritizers, status = _prioritizers(placement.spec.prioritizer_policy or PrioritizerPolicy())
    if status.is_error():
        return result, status
    requeue_times, status = _score(ctx, feasible, prioritizers, result)
    if status.is_error():
        return result, status
    _select(result, placement.spec.number_of_clusters)
    if expiries:
        selected = set(result.decisions)
        requeue_times += [t for name, t in expiries.items() if name in selected]
    if requeue_times:
        result.requeue_after = min(requeue_times) - now
    return result, _noticed(final, status)


def _noticed(current: Status, new: Status) -> Status:
    """The status a pass ends with: the last Warning, else Success."""
    return new if new.code is Code.WARNING else current


def _filter(
    ctx: ScheduleContext, clusters: list[ManagedCluster], result: ScheduleResult
) -> tuple[list[ManagedCluster], dict[str, datetime], Status]:
    """Run the filters in turn, recording what each leaves: the clusters left, when kept
    ones stop passing, and the status."""
    status, expiries = Status(), {}
    pipeline: list[str] = []
    for plugin in FILTERS:
        filtered = plugin.filter(ctx, clusters)
        if filtered.status.is_error():
            return [], {}, filtered.status
        status = _noticed(status, filtered.status)
        clusters, pipeline = filtered.clusters, [*pipeline, plugin.name]
        expiries.update(filtered.expiries)
        result.filter_results.append(FilterRecord(",".join(pipeline), clusters))
    return clusters, expiries, status


def _score(
    ctx: ScheduleContext,
    clusters: list[ManagedCluster],
    prioritizers: Sequence[tuple[Prioritizer, int]],
    result: ScheduleResult,
) -> tuple[list[datetime], Status]:
    """Sum each cluster's weighted scores into result.prioritizer_scores; return when scores
    change by themselves, and the status."""
    names = [c.metadata.name for c in clusters]
    totals = result.prioritizer_scores = dict.fromkeys(names, 0)
    status, requeue_times = Status(), []
    for prioritizer, weight in prioritizers:
        scored = prioritizer.score(ctx, clusters, names)
        if scored.status.is_error():
            return [], scored.status
        status = _noticed(status, scored.status)
        if not result.prioritizer_results:  # this runs per cluster: copy the first in C
            totals.update(_weighted(scored.scores, weight))
        else:
            _add(totals, scored.scores, weight)
        result.prioritizer_results.append(
            PrioritizerResult(prioritizer.name, weight, scored.scores)
        )
        if scored.requeue_time is not None:
            requeue_times.append(scored.requeue_time)
    return requeue_times, status


def _weighted(scores: dict[str, int], weight: int) -> dict[str, int]:
    if weight == 1:
        return scores
    return dict(zip(scores, map(mul, scores.values(), repeat(weight)), strict=True))


def _add(totals: dict[str, int], scores: dict[str, int], weight: int) -> None:
    """totals[name] += weight × score, skipping zeros: Steady's scores mostly are."""
    for name, value in scores.items():
        if value:
            totals[name] += value * weight


def _select(result: ScheduleResult, wanted: int | None) -> None:
    """Rank by final score, highest first, ties by name; keep the first `wanted` (all when
    None) as the decisions."""
    ranked = sorted(result.prioritizer_scores)
    ranked.sort(key=result.prioritizer_scores.__getitem__, reverse=True)  # stable
    if wanted is None:
        result.decisions = ranked
        return
    result.decisions = ranked[: max(wanted, 0)]
    result.num_unscheduled = max(wanted - len(result.decisions), 0)


# A prioritizer as upstream's weight map keys it: (type, builtIn, which AddOn coordinate).
_Key = tuple[str, str, int | None]


def _weights(policy: PrioritizerPolicy) -> tuple[dict[_Key, tuple[ScoreCoordinate, int]], Status]:
    """getWeights: each prioritizer's coordinate and weight, by mode."""
    weights: dict[_Key, tuple[ScoreCoordinate, int]] = {}
    mode = policy.mode or ""
    if mode in ("", MODE_ADDITIVE):
        for name, weight in DEFAULT_WEIGHTS.items():
            weights[SCORE_BUILT_IN, name, None] = (
                ScoreCoordinate(type=SCORE_BUILT_IN, built_in=name),
                weight,
            )
    elif mode != MODE_EXACT:
        return {}, Status.misconfigured("", f"incorrect prioritizer policy mode: {mode}")
    for i, config in enumerate(policy.configurations or ()):
        coordinate = config.score_coordinate
        if coordinate is None:
            return {}, Status.misconfigured("", "scoreCoordinate field is required")
        # Upstream keys by value, but an addOn by pointer: each AddOn coordinate is its own.
        key = (
            coordinate.type or SCORE_BUILT_IN,
            coordinate.built_in or "",
            None if coordinate.add_on is None else i,
        )
        weights[key] = (coordinate, 1 if config.weight is None else config.weight)
    return weights, Status()


def _prioritizers(policy: PrioritizerPolicy) -> tuple[list[tuple[Prioritizer, int]], Status]:
    """getPrioritizers: the prioritizers of non-zero weight, with their weights."""
    weights, status = _weights(policy)
    if status.is_error():
        return [], status
    chosen: list[tuple[Prioritizer, int]] = []
    for (kind, built_in, _), (coordinate, weight) in weights.items():
        if weight == 0:
            continue
        prioritizer: Prioritizer | None
        if kind == SCORE_BUILT_IN:
            prioritizer = BUILT_IN_PRIORITIZERS.get(built_in)
            if prioritizer is None:
                return [], Status.misconfigured("", f"incorrect builtin prioritizer: {built_in}")
        elif coordinate.add_on is None:
            return [], Status.misconfigured("", "addOn should not be empty")
        else:
            prioritizer = AddOn(coordinate.add_on.resource_name, coordinate.add_on.score_name)
        chosen.append((prioritizer, weight))
    return chosen, Status()
