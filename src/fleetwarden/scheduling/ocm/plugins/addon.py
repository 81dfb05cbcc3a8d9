"""AddOn (plugins/addon): scores an add-on publishes. For the prioritizer
`AddOn/<resourceName>/<scoreName>`, a cluster scores the value named scoreName in the
AddOnPlacementScore resourceName of its namespace; 0 when there is none, and 0 when the
score's validUntil has passed, which turns the status into a Warning naming the expired
scores.

Upstream rescores only when something else wakes the placement; here a score that will
expire also says when, so the placement is scheduled again once it has.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta

from fleetwarden.api.ocm.cluster import ManagedCluster
from fleetwarden.api.ocm.placement import AddOnPlacementScore
from fleetwarden.scheduling.ocm.framework import Code, ScheduleContext, ScoreResult, Status

# A score is valid up to and including validUntil: it has expired one tick later.
_TICK = timedelta(microseconds=1)


def _value(score: AddOnPlacementScore, name: str) -> int:
    """The last item of that name, as upstream's loop leaves it; 0 when none."""
    return next((s.value for s in reversed(score.status.scores or ()) if s.name == name), 0)


class AddOn:
    def __init__(self, resource_name: str, score_name: str) -> None:
        self.name = f"AddOn/{resource_name}/{score_name}"
        self.resource_name = resource_name
        self.score_name = score_name

    def score(
        self, ctx: ScheduleContext, clusters: Sequence[ManagedCluster], names: Sequence[str]
    ) -> ScoreResult:
        scores: dict[str, int] = {}
        expired: list[str] = []
        expiries: list[datetime] = []
        for name in names:
            scores[name] = 0
            published = ctx.handle.addon_placement_score(name, self.resource_name)
            if published is None:
                continue
            valid_until = published.status.valid_until
            if valid_until is not None:
                if ctx.now > valid_until:
                    expired.append(f" {name}/{self.resource_name}")
                    continue
                expiries.append(valid_until + _TICK)
            scores[name] = _value(published, self.score_name)
        result = ScoreResult(scores, requeue_time=min(expiries, default=None))
        if expired:
            reason = f"AddOnPlacementScores{''.join(expired)} expired"
            result.status = Status(Code.WARNING, self.name, [reason])
        return result
