"""The scheduler's Handle over the controller manager's informer caches (upstream's
schedulerHandler over listers).

Balance counts every decision of the hub for each placement it scores; the counts are kept
here as PlacementDecisions come and go, so a count costs a copy, not a walk over them all.
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Mapping

from fleetwarden.api.meta import Resource
from fleetwarden.api.ocm.placement import AddOnPlacementScore, PlacementDecision
from fleetwarden.runtime.informer import Cache, EventHandler
from fleetwarden.scheduling.ocm.decisions import decisions_by_placement
from fleetwarden.scheduling.ocm.kinds import ADD_ON_PLACEMENT_SCORE, PLACEMENT_DECISION


class CacheHandle:
    """Handle reading the cache; its PlacementDecision informer needs the BY_PLACEMENT index."""

    def __init__(self, cache: Cache) -> None:
        self.cache = cache
        self._lock = threading.Lock()
        self._counts: Counter[str] = Counter()
        cache.informer(PLACEMENT_DECISION).add_event_handler(
            EventHandler(on_add=self._added, on_update=self._updated, on_delete=self._deleted)
        )

    def decisions(self, namespace: str, placement: str) -> list[PlacementDecision]:
        informer = self.cache.informer(PLACEMENT_DECISION)
        return decisions_by_placement(informer, namespace, placement)

    def decision_counts(self) -> Mapping[str, int]:
        with self._lock:
            return dict(self._counts)

    def addon_placement_score(self, cluster: str, name: str) -> AddOnPlacementScore | None:
        score = self.cache.informer(ADD_ON_PLACEMENT_SCORE).get(name, cluster)
        return score if isinstance(score, AddOnPlacementScore) else None

    def _added(self, obj: Resource) -> None:
        with self._lock:
            self._counts.update(_clusters_of(obj))

    def _updated(self, old: Resource, new: Resource) -> None:
        with self._lock:
            self._subtract(_clusters_of(old))
            self._counts.update(_clusters_of(new))

    def _deleted(self, obj: Resource) -> None:
        with self._lock:
            self._subtract(_clusters_of(obj))

    def _subtract(self, names: list[str]) -> None:
        """Count the names once less, forgetting clusters no decision names any more."""
        counts = self._counts
        for name in names:
            counts[name] -= 1
            if counts[name] <= 0:
                del counts[name]


def _clusters_of(obj: Resource) -> list[str]:
    if not isinstance(obj, PlacementDecision):
        return []
    return [d.cluster_name for d in obj.status.decisions or ()]
