"""Steady (plugins/steady): keeps decisions where they are. A cluster already in this
placement's decisions scores the maximum, any other zero."""

from __future__ import annotations

from collections.abc import Sequence

from fleetwarden.api.ocm.cluster import ManagedCluster
from fleetwarden.scheduling.ocm.framework import MAX_CLUSTER_SCORE, ScheduleContext, ScoreResult

NAME = "Steady"


class Steady:
    name = NAME

    def score(
        self, ctx: ScheduleContext, clusters: Sequence[ManagedCluster], names: Sequence[str]
    ) -> ScoreResult:
        scores = dict.fromkeys(names, 0)
        for name in ctx.current_decisions:  # few, next to the candidates
            if name in scores:
                scores[name] = MAX_CLUSTER_SCORE
        return ScoreResult(scores)
