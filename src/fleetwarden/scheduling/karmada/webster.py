"""Dividing replicas by weight: the Webster (Sainte-Laguë) method of pkg/util/helper
(webstermethod.go, Dispenser in binding.go).

Seat after seat goes to the party with the highest votes / (2·seats + 1). Ties go to the
party with fewer seats, then by name: ascending, or descending for a binding whose resource
uid hashes (FNV-1a, 32 bit) to an odd number, so that equal weights do not always favour
the same cluster across a fleet's workloads yet each workload's result stays stable.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterable, Mapping
from fractions import Fraction
from typing import NamedTuple


class Target(NamedTuple):
    """A cluster and the replicas it gets (workv1alpha2.TargetCluster)."""

    name: str
    replicas: int


def fnv32a(text: str) -> int:
    value = 0x811C9DC5
    for byte in text.encode():
        value = ((value ^ byte) * 0x01000193) & 0xFFFFFFFF
    return value


def names_descending(uid: str) -> bool:
    """tieBreakerByUID: which way equal parties are ordered by name for this resource."""
    return bool(uid) and fnv32a(uid) & 1 == 1


def allocate_webster_seats(
    new_seats: int,
    votes: Mapping[str, int],
    initial: Mapping[str, int],
    *,
    descending: bool = False,
) -> list[Target]:
    """AllocateWebsterSeats: every party (voted, or holding seats already with no votes)
    with its seats after `new_seats` more are given, ordered by name."""
    parties = {name: 0 for name in votes} | dict(initial)
    if not parties:
        return []
    names = sorted(parties)
    rank = {name: (-i if descending else i) for i, name in enumerate(names)}

    def entry(name: str, seats: int) -> tuple[Fraction, int, int, str]:
        priority = Fraction(-votes.get(name, 0), 2 * seats + 1)
        return priority, seats, rank[name], name

    heap = [entry(name, seats) for name, seats in parties.items()]
    heapq.heapify(heap)
    for _ in range(new_seats):
        _, seats, _, name = heap[0]
        heapq.heapreplace(heap, entry(name, seats + 1))
    seats_of = {name: seats for _, seats, _, name in heap}
    return [Target(name, seats_of[name]) for name in names]


def spread_by_weights(
    replicas: int,
    weights: Iterable[tuple[str, int]],
    initial: Iterable[Target] = (),
    *,
    uid: str = "",
) -> list[Target]:
    """Dispenser.AllocateByWeight: `replicas` more on top of `initial`, by weight; nothing
    changes when the weights sum to zero, or when there is nothing to add to a result."""
    initial = list(initial)
    votes = dict(weights)
    if sum(votes.values()) == 0 or (replicas == 0 and initial):
        return initial
    return allocate_webster_seats(
        replicas,
        votes,
        {t.name: t.replicas for t in initial},
        descending=names_descending(uid),
    )
