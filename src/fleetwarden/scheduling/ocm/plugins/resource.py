"""ResourceAllocatableCPU and ResourceAllocatableMemory (plugins/resource): the more of the
resource a cluster has allocatable, the higher it scores. With `low` and `high` the least and
most allocatable among the clusters scored, a cluster scores
trunc(((allocatable − low) / (high − low) − 0.5) × 2 × 100), from −100 to 100; all score
100 when every cluster has as much.

A cluster scores only when its status has both allocatable and capacity for the resource;
the others are left out of the scores (upstream's getClusterResource).
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

from fleetwarden.api.ocm.cluster import ManagedCluster
from fleetwarden.scheduling.ocm.framework import (
    MAX_CLUSTER_SCORE,
    ScheduleContext,
    ScoreResult,
    per_cluster,
)
from fleetwarden.semantics.quantity import QuantityError, parse_quantity

# The built-in prioritizer names and the resource each one reads.
RESOURCE_ALLOCATABLE_CPU = "ResourceAllocatableCPU"
RESOURCE_ALLOCATABLE_MEMORY = "ResourceAllocatableMemory"
RESOURCES = {RESOURCE_ALLOCATABLE_CPU: "cpu", RESOURCE_ALLOCATABLE_MEMORY: "memory"}


def allocatable(cluster: ManagedCluster, resource: str) -> float | None:
    """Quantity.AsApproximateFloat64 of the cluster's allocatable resource, when the status
    reports both its allocatable and its capacity (a quantity that does not parse counts as
    unreported)."""
    status = cluster.status
    amount = (status.allocatable or {}).get(resource)
    if amount is None or resource not in (status.capacity or {}):
        return None
    return _approximate(amount)


@per_cluster  # every placement that scores by resources asks for every cluster's
def _amounts(cluster: ManagedCluster) -> dict[str, float | None]:
    return {resource: allocatable(cluster, resource) for resource in RESOURCES.values()}


@functools.lru_cache(maxsize=4096)  # a fleet repeats the same few amounts
def _approximate(amount: str | int | float) -> float | None:
    try:
        return float(parse_quantity(amount))
    except QuantityError:
        return None


class ResourceAllocatable:
    """The prioritizer named `name`, one of RESOURCES."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.resource = RESOURCES[name]

    def score(
        self, ctx: ScheduleContext, clusters: Sequence[ManagedCluster], names: Sequence[str]
    ) -> ScoreResult:
        amounts = {
            name: amount
            for name, cluster in zip(names, clusters, strict=True)
            if (amount := _amounts(cluster)[self.resource]) is not None
        }
        if not amounts:
            return ScoreResult({})
        low, high = min(amounts.values()), max(amounts.values())
        if high == low:
            return ScoreResult(dict.fromkeys(amounts, MAX_CLUSTER_SCORE))
        return ScoreResult(
            {
                name: int(((amount - low) / (high - low) - 0.5) * 2.0 * MAX_CLUSTER_SCORE)
                for name, amount in amounts.items()
            }
        )
