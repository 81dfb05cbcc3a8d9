"""The general replica estimator (pkg/estimator/client/general.go): how many more replicas of a
workload a cluster has room for, by its status.resourceSummary.

available = allocatable - allocated - allocating, per resource the workload requests
(cpu in millicores, anything else in whole units, rounded up as resource.Quantity.Value
rounds), divided by the request; never more than the pods the cluster still allows.
A cluster without a resource summary has room for nothing.

The accurate estimator (karmada-scheduler-estimator, one per member, on with
--enable-scheduler-estimator) is an `AccurateEstimator` the hub is given: it counts on the
member's own nodes (semantics/pod_scheduling.max_replicas), and the scheduler takes the
smaller of the two answers, as calAvailableReplicas does.

Not here: the estimate by resource models (allocatableModelings, the
CustomizedClusterResourceModeling gate).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from fractions import Fraction

from fleetwarden.api.karmada.cluster import ResourceSummary
from fleetwarden.api.karmada.work import ReplicaRequirements
from fleetwarden.api.meta import Quantity
from fleetwarden.semantics.quantity import milli_value, parse_quantity, value

MAX_INT32 = 2**31 - 1

# A member's karmada-scheduler-estimator: the replicas it has room for, by cluster name and
# replica requirements; None where no estimator answers for the cluster (UnauthenticReplica).
AccurateEstimator = Callable[[str, ReplicaRequirements | None], int | None]


def _amounts(resources: Mapping[str, Quantity] | None) -> dict[str, Fraction]:
    return {name: parse_quantity(amount) for name, amount in (resources or {}).items()}


def _pods(resources: Mapping[str, Fraction]) -> int:
    return value(resources.get("pods", Fraction(0)))


class _Available:
    """allocatable - allocated - allocating of one cluster, per resource it lists."""

    __slots__ = ("allocatable", "pods", "remaining")

    def __init__(self, summary: ResourceSummary) -> None:
        allocatable = _amounts(summary.allocatable)
        allocated, allocating = _amounts(summary.allocated), _amounts(summary.allocating)
        self.allocatable = allocatable.keys()
        self.remaining = {
            name: amount - allocated.get(name, Fraction(0)) - allocating.get(name, Fraction(0))
            for name, amount in allocatable.items()
        }
        # getAllowedPodNumber: never below zero.
        self.pods = max(_pods(allocatable) - _pods(allocated) - _pods(allocating), 0)

    def replicas_for(self, requests: Mapping[str, Fraction]) -> int:
        """getMaximumReplicasBasedOnClusterSummary, within the pods allowed."""
        most = self.pods
        for name, request in requests.items():
            if value(request) <= 0:
                continue
            if name not in self.allocatable:
                return 0
            remaining = self.remaining[name]
            if value(remaining) <= 0:
                return 0
            if name == "cpu":
                most = min(most, milli_value(remaining) // milli_value(request))
            else:
                most = min(most, value(remaining) // value(request))
        return most


def requirements_key(requirements: ReplicaRequirements | None) -> str:
    return "" if requirements is None else requirements.model_dump_json()


class GeneralEstimator:
    """MaxAvailableReplicas per cluster and replica requirements, remembered per cluster
    resourceVersion (a fleet's workloads share few distinct requirements)."""

    def __init__(self, cache_limit: int = 65536) -> None:
        self._cache_limit = cache_limit
        self._available: dict[tuple[str, str], _Available | None] = {}
        self._requests: dict[str, dict[str, Fraction]] = {}
        self._estimates: dict[tuple[str, str, str], int] = {}

    def max_available_replicas(
        self, cluster: str, version: str, summary: ResourceSummary | None,
        requirements: ReplicaRequirements | None, requirements_key: str,
    ) -> int:  # fmt: skip
        """`requirements_key` tells requirements apart (requirements_key() gives it)."""
        key = (cluster, version, requirements_key)
        estimate = self._estimates.get(key)
        if estimate is None:
            if len(self._estimates) >= self._cache_limit:
                self._estimates.clear()
                self._available.clear()
            estimate = self._estimates[key] = self._estimate(
                (cluster, version), summary, requirements_key, requirements
            )
        return estimate

    def _estimate(
        self, cluster: tuple[str, str], summary: ResourceSummary | None,
        requirements_key: str, requirements: ReplicaRequirements | None,
    ) -> int:  # fmt: skip
        if cluster not in self._available:
            self._available[cluster] = None if summary is None else _Available(summary)
        available = self._available[cluster]
        if available is None or available.pods <= 0:
            return 0
        if requirements is None:
            return min(available.pods, MAX_INT32)
        if requirements_key not in self._requests:
            self._requests[requirements_key] = _amounts(requirements.resource_request)
        return min(available.replicas_for(self._requests[requirements_key]), MAX_INT32)
