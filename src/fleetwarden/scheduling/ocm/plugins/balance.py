"""Balance (plugins/balance): spreads decisions over the clusters. A cluster no other
placement has chosen scores the maximum; otherwise, with `count` the decision entries naming
it outside this placement and `most` the highest such count of any cluster,
2 × trunc(100 × (0.5 − count / most)), so the busiest cluster scores −100.

Upstream walks every PlacementDecision of the hub for each placement; the same counts come
from the Handle's `decision_counts()` less this placement's own entries.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import repeat

from fleetwarden.api.ocm.cluster import ManagedCluster
from fleetwarden.scheduling.ocm.framework import MAX_CLUSTER_SCORE, ScheduleContext, ScoreResult

NAME = "Balance"


def balance_score(count: int, most: int) -> int:
    """The score of a cluster with `count` decisions when the busiest has `most` (> 0)."""
    return 2 * int(MAX_CLUSTER_SCORE * (0.5 - count / most))


class Balance:
    name = NAME

    def score(
        self, ctx: ScheduleContext, clusters: Sequence[ManagedCluster], names: Sequence[str]
    ) -> ScoreResult:
        counts = ctx.handle.decision_counts()
        if own := ctx.current_decisions:
            counts = dict(counts)
            for cluster, entries in own.items():
                if cluster in counts:
                    counts[cluster] -= entries
        most = max(counts.values(), default=0)
        if most <= 0:
            return ScoreResult(dict.fromkeys(names, MAX_CLUSTER_SCORE))
        # Few distinct counts: work each score out once.
        table = {n: balance_score(n, most) for n in {0, *counts.values()}}
        scores = map(table.__getitem__, map(counts.get, names, repeat(0)))
        return ScoreResult(dict(zip(names, scores, strict=True)))
