"""A region's disruption state and the pace of evictions from it: kube's node lifecycle
controller's rules for zones (ComputeZoneState, setLimiterInZone, ReducedQPSFunc,
HealthyQPSFunc, handleDisruption), applied to the clusters of a region.

A cluster is in the region its `spec.region` names; clusters without one form one region
(named ""). A cluster is healthy when its Ready condition is True, not Ready when it is
False or Unknown. One with no Ready condition yet is joining and not counted: a kubelet
registers its Node with a Ready condition, whereas karmada-agent creates its Cluster first
and reports its status after, and a first cluster joining would otherwise put the hub in
its all-regions-down mode for a moment (a Pull cluster that never reports gets
Ready=Unknown from the cluster controller after cluster-startup-grace-period, and counts
from then).
"""

from __future__ import annotations

from collections.abc import Iterable
from enum import StrEnum

from fleetwarden.api.karmada.cluster import Cluster
from fleetwarden.api.meta import find_condition
from fleetwarden.semantics.cluster_health import READY

# The region of the clusters that name none (nodetopology.GetZoneKey's "" for a node
# without zone labels).
NO_REGION = ""


class RegionState(StrEnum):
    NORMAL = "Normal"
    PARTIAL_DISRUPTION = "PartialDisruption"
    FULL_DISRUPTION = "FullDisruption"


class Pace(StrEnum):
    """How evictions from a region's clusters go."""

    NORMAL = "Normal"  # resource-eviction-rate, in the eviction queue shared as upstream's
    SLOWED = "Slowed"  # secondary-resource-eviction-rate, in a queue of the region's own
    STOPPED = "Stopped"  # none until the state changes


def region_of(cluster: Cluster) -> str:
    return cluster.spec.region or NO_REGION


def region_state(ready: int, not_ready: int, threshold: float) -> RegionState:
    """ComputeZoneState: FullDisruption when no cluster is Ready; PartialDisruption when
    more than two are not Ready and they are at least `threshold` of the region; Normal
    otherwise (a region of two, or two clusters down, never slows evictions)."""
    if ready == 0 and not_ready > 0:
        return RegionState.FULL_DISRUPTION
    if not_ready > 2 and not_ready / (ready + not_ready) >= threshold:
        return RegionState.PARTIAL_DISRUPTION
    return RegionState.NORMAL


def region_pace(
    state: RegionState, size: int, large_threshold: int, *, hub_disrupted: bool
) -> Pace:
    """setLimiterInZone, and handleDisruption's stop when every zone is fully disrupted
    (the hub, not the fleet, is then taken to be cut off)."""
    if hub_disrupted:
        return Pace.STOPPED
    if state == RegionState.PARTIAL_DISRUPTION:
        return Pace.SLOWED if size > large_threshold else Pace.STOPPED
    return Pace.NORMAL  # Normal, and FullDisruption: a region really lost is evicted from


def hub_disrupted(states: Iterable[RegionState]) -> bool:
    """handleDisruption's allAreFullyDisrupted: every region (at least one) in
    FullDisruption."""
    seen = list(states)
    return bool(seen) and all(s == RegionState.FULL_DISRUPTION for s in seen)


def count_by_region(clusters: Iterable[Cluster]) -> dict[str, tuple[int, int]]:
    """Each region's (Ready, not Ready) clusters, those that reported a Ready condition."""
    counts: dict[str, tuple[int, int]] = {}
    for cluster in clusters:
        condition = find_condition(cluster.status.conditions, READY)
        if condition is None:
            continue
        ready, not_ready = counts.get(region_of(cluster), (0, 0))
        if condition.status == "True":
            ready += 1
        else:
            not_ready += 1
        counts[region_of(cluster)] = (ready, not_ready)
    return counts
