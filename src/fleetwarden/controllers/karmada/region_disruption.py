"""Fleet protection: each region's disruption state, as kube's node lifecycle controller
keeps each zone's (handleDisruption), so that the taint manager does not evict en masse
when much of the fleet fails at once. Not upstream Karmada: its eviction-queue proposal
(karmada#6777) names the settings, kube's zones give the rules (semantics/region_disruption).

On every change of a Cluster the controller counts each region's Ready and not-Ready
clusters, and from them its state (Normal, PartialDisruption, FullDisruption) and the pace
of evictions from it: the normal rate, the secondary rate (a large region partly down), or
none (a small one partly down; or every region fully down, when the hub takes its own
connectivity to have failed).

The states live in the ConfigMap `karmada-system/cluster-region-status` (as
cluster-autoscaler keeps its status in a ConfigMap): the taint manager reads the pace
there, `fleetwarden describe` a cluster's region there, and the states last written are
what a change is measured against, so a restarted or newly elected controller goes on where
the last left off. It is written first when a region leaves Normal: a fleet never disrupted
has none, exactly as upstream. Each change of a region's state, and the hub entering or
leaving its disruption mode, is an Event about that ConfigMap; the gauges
cluster_collector_region_size / _region_health / _unhealthy_clusters_in_region follow
node_collector_zone_*.

On leaving the hub's disruption mode kube resets every node's probe time and re-adds the
NoExecute taints it removed on entering, so that no toleration ran out while the hub was
blind; here the instant is recorded (`hubDisruption.lastTransitionTime`) and the taint
manager counts tolerationSeconds from no earlier than it.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from fleetwarden.api.karmada.cluster import Cluster
from fleetwarden.api.meta import Resource, format_time, parse_time
from fleetwarden.api.registry import REGISTRY
from fleetwarden.controllers.karmada.names import NAMESPACE_KARMADA_SYSTEM
from fleetwarden.controllers.karmada.work import CLUSTER
from fleetwarden.runtime.events import NORMAL, WARNING
from fleetwarden.runtime.manager import DONE, Context, Controller, Result, Watches
from fleetwarden.runtime.settings import Settings
from fleetwarden.semantics.region_disruption import (
    NO_REGION,
    Pace,
    RegionState,
    count_by_region,
    hub_disrupted,
    region_pace,
    region_state,
)

logger = logging.getLogger(__name__)

REGION_DISRUPTION = "region-disruption-controller"
CONFIG_MAP = REGISTRY.info("v1", "ConfigMap")
STATUS_NAME = "cluster-region-status"
STATUS_KEY = "status"
# The controller's one key: every region is looked at together, as handleDisruption does.
_KEY = "regions"

# Event reasons.
REGION_STATE_CHANGED = "RegionStateChanged"
HUB_DISRUPTION = "HubDisruption"
HUB_DISRUPTION_ENDED = "HubDisruptionEnded"


@dataclass(frozen=True)
class Region:
    state: RegionState
    clusters: int
    not_ready: int
    pace: Pace
    eviction_rate: float  # per second; 0 when stopped
    last_transition_time: datetime

    def to_wire(self) -> dict[str, Any]:
        return {
            "state": str(self.state), "clusters": self.clusters, "notReady": self.not_ready,
            "evictionPace": str(self.pace), "evictionRate": self.eviction_rate,
            "lastTransitionTime": format_time(self.last_transition_time),
        }  # fmt: skip

    @classmethod
    def from_wire(cls, wire: Mapping[str, Any]) -> Region:
        return cls(
            RegionState(wire["state"]), int(wire["clusters"]), int(wire["notReady"]),
            Pace(wire["evictionPace"]), float(wire["evictionRate"]),
            parse_time(wire["lastTransitionTime"]),
        )  # fmt: skip

    def summary(self) -> str:
        """`3 of 4 clusters not Ready; evictions slowed to 0.1/s`."""
        if self.pace == Pace.STOPPED:
            evictions = "stopped"
        elif self.pace == Pace.SLOWED:
            evictions = f"slowed to {self.eviction_rate:g}/s"
        else:
            evictions = f"at {self.eviction_rate:g}/s"
        return f"{self.not_ready} of {self.clusters} clusters not Ready; evictions {evictions}"


@dataclass(frozen=True)
class RegionStatus:
    """What the ConfigMap holds: each region, and whether the hub is in disruption mode
    (since when; or since when not)."""

    regions: dict[str, Region] = field(default_factory=dict)
    hub_disrupted: bool = False
    hub_transition_time: datetime | None = None

    def pace(self, region: str) -> Pace:
        """The pace of evictions from a region's clusters (one not seen yet: Normal)."""
        known = self.regions.get(region)
        if known is not None:
            return known.pace
        return Pace.STOPPED if self.hub_disrupted else Pace.NORMAL

    @property
    def resumed_at(self) -> datetime | None:
        """When the hub last left its disruption mode (None: never, or in it now)."""
        return None if self.hub_disrupted else self.hub_transition_time

    @property
    def quiet(self) -> bool:
        """Nothing disrupted now, and never before."""
        return self.hub_transition_time is None and all(
            r.state == RegionState.NORMAL for r in self.regions.values()
        )

    def to_data(self) -> dict[str, str]:
        hub: dict[str, Any] = {"disrupted": self.hub_disrupted}
        if self.hub_transition_time is not None:
            hub["lastTransitionTime"] = format_time(self.hub_transition_time)
        wire = {
            "hubDisruption": hub,
            "regions": {name: region.to_wire() for name, region in sorted(self.regions.items())},
        }
        return {STATUS_KEY: json.dumps(wire, indent=2, sort_keys=True) + "\n"}

    @classmethod
    def of(cls, obj: Resource | None) -> RegionStatus:
        """The status a ConfigMap holds; empty (every region Normal) without one, or when
        it does not parse (the controller writes it anew)."""
        return cls.from_data(obj.to_dict().get("data") if obj is not None else None)

    @classmethod
    def from_data(cls, data: Mapping[str, str] | None) -> RegionStatus:
        """The status from a ConfigMap's data (as `of`)."""
        text = (data or {}).get(STATUS_KEY)
        if text is None:
            return cls()
        try:
            wire = json.loads(text)
            hub = wire["hubDisruption"]
            since = hub.get("lastTransitionTime")
            return cls(
                {name: Region.from_wire(r) for name, r in wire["regions"].items()},
                bool(hub["disrupted"]),
                parse_time(since) if since else None,
            )
        except (ValueError, KeyError, TypeError, AttributeError):
            logger.warning(
                "%s/%s does not parse; taken as empty", NAMESPACE_KARMADA_SYSTEM, STATUS_NAME
            )
            return cls()


def stored_status(ctx: Context) -> Resource | None:
    return ctx.cache.informer(CONFIG_MAP).get(STATUS_NAME, NAMESPACE_KARMADA_SYSTEM)


def _status_keys(obj: Resource) -> list[str]:
    is_status = obj.namespace == NAMESPACE_KARMADA_SYSTEM and obj.name == STATUS_NAME
    return [_KEY] if is_status else []


def observe(
    previous: RegionStatus, counts: Mapping[str, tuple[int, int]], settings: Settings,
    now: datetime,
) -> RegionStatus:  # fmt: skip
    """The status now: each region's state and pace from its (Ready, not Ready) clusters."""
    states = {
        region: region_state(ready, down, settings.unhealthy_cluster_threshold)
        for region, (ready, down) in counts.items()
    }
    hub = hub_disrupted(states.values())
    regions = {}
    for region, state in states.items():
        ready, down = counts[region]
        before = previous.regions.get(region)
        since = before.last_transition_time if before and before.state == state else now
        pace = region_pace(
            state, ready + down, settings.large_cluster_num_threshold, hub_disrupted=hub
        )
        regions[region] = Region(state, ready + down, down, pace, _rate(pace, settings), since)
    hub_since = now if hub != previous.hub_disrupted else previous.hub_transition_time
    return RegionStatus(regions, hub, hub_since)


def _rate(pace: Pace, settings: Settings) -> float:
    if pace == Pace.STOPPED:
        return 0.0
    if pace == Pace.SLOWED:
        return settings.secondary_resource_eviction_rate
    return settings.resource_eviction_rate


def region_name(name: str) -> str:
    """A region as people read it: `""` for the clusters that name none."""
    return json.dumps(name) if name == NO_REGION else name


def describe_region(name: str, status: RegionStatus) -> str:
    """A cluster's region in a line, for `fleetwarden describe`: `eu-west: PartialDisruption
    since 2025-01-01T00:02:00Z: 3 of 4 clusters not Ready; evictions slowed to 0.1/s`."""
    region = status.regions.get(name)
    if region is None:
        return f"{region_name(name)}: {RegionState.NORMAL}"
    since = format_time(region.last_transition_time)
    return f"{region_name(name)}: {region.state} since {since}: {region.summary()}"


def region_disruption_controller() -> Controller:
    return Controller(
        name=REGION_DISRUPTION,
        watches=[
            Watches(CLUSTER, lambda _: [_KEY]),
            Watches(CONFIG_MAP, _status_keys),  # put back if someone edits it
        ],
        reconcile=_reconcile,
    )


def _reconcile(key: str, ctx: Context) -> Result:
    clusters = [c for c in ctx.cache.informer(CLUSTER).list() if isinstance(c, Cluster)]
    counts = count_by_region(clusters)
    ctx.metrics.observe_regions(counts)
    stored = stored_status(ctx)
    previous = RegionStatus.of(stored)
    status = observe(previous, counts, ctx.settings, ctx.clock.now())
    if stored is None and status.quiet:
        return DONE  # never disrupted: nothing to write, as upstream
    data = status.to_data()
    if stored is None:
        written = _create(data, ctx)
    elif (stored.to_dict().get("data") or {}) != data:
        written = _update(stored, data, ctx)
    else:
        return DONE
    _record(written, previous, status, ctx)
    return DONE


def _create(data: dict[str, str], ctx: Context) -> Resource:
    wire = {
        "apiVersion": CONFIG_MAP.api_version, "kind": CONFIG_MAP.kind,
        "metadata": {"name": STATUS_NAME, "namespace": NAMESPACE_KARMADA_SYSTEM},
        "data": data,
    }  # fmt: skip
    # AlreadyExists when the cache had not seen it yet: the retry reads it.
    return REGISTRY.decode(ctx.store.create(wire))


def _update(stored: Resource, data: dict[str, str], ctx: Context) -> Resource:
    wire = stored.to_dict()
    wire["data"] = data
    return REGISTRY.decode(ctx.store.update(wire))


def _record(obj: Resource, previous: RegionStatus, status: RegionStatus, ctx: Context) -> None:
    """An Event for each region whose state changed (a new one was Normal), then for the
    hub entering or leaving its disruption mode."""
    for name, region in sorted(status.regions.items()):
        before = previous.regions.get(name)
        was = before.state if before is not None else RegionState.NORMAL
        if region.state == was:
            continue
        type_ = NORMAL if region.state == RegionState.NORMAL else WARNING
        message = (
            f"Region {region_name(name)} is now {region.state} (was {was}): {region.summary()}."
        )
        ctx.recorder.event(obj, type_, REGION_STATE_CHANGED, message)
    if status.hub_disrupted and not previous.hub_disrupted:
        ctx.recorder.event(
            obj, WARNING, HUB_DISRUPTION,
            "Every region is fully disrupted: the hub takes its own connectivity to have "
            "failed and evicts nothing until a region has a Ready cluster again.",
        )  # fmt: skip
    elif previous.hub_disrupted and not status.hub_disrupted:
        ctx.recorder.event(
            obj, NORMAL, HUB_DISRUPTION_ENDED,
            "A region has Ready clusters again: evictions resume, and tolerationSeconds "
            "count from now.",
        )  # fmt: skip
