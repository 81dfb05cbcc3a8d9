"""A Handle over objects held in lists: for tests, benchmarks and scheduling outside the hub."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from functools import cached_property

from fleetwarden.api.ocm.placement import PLACEMENT_LABEL, AddOnPlacementScore, PlacementDecision


class ListHandle:
    """The hub as these objects; they are read, never changed, and must not change while the
    handle is in use (counts are worked out once)."""

    def __init__(
        self,
        decisions: Iterable[PlacementDecision] = (),
        scores: Iterable[AddOnPlacementScore] = (),
    ) -> None:
        self._decisions = list(decisions)
        self._by_placement: dict[tuple[str, str], list[PlacementDecision]] = {}
        for d in self._decisions:
            owner = (d.metadata.labels or {}).get(PLACEMENT_LABEL)
            if owner is not None:
                self._by_placement.setdefault((d.metadata.namespace, owner), []).append(d)
        self._scores = {(s.metadata.namespace, s.metadata.name): s for s in scores}

    def decisions(self, namespace: str, placement: str) -> list[PlacementDecision]:
        return list(self._by_placement.get((namespace, placement), ()))

    @cached_property
    def _counts(self) -> Counter[str]:
        return Counter(
            entry.cluster_name for d in self._decisions for entry in d.status.decisions or ()
        )

    def decision_counts(self) -> Mapping[str, int]:
        return self._counts

    def addon_placement_score(self, cluster: str, name: str) -> AddOnPlacementScore | None:
        return self._scores.get((cluster, name))
