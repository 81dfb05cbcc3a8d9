"""The taint manager: ResourceBindings and ClusterResourceBindings leave clusters whose
NoExecute taints they do not tolerate (pkg/controllers/cluster/taint_manager.go,
eviction_worker.go, dynamic_rate_limiter.go).

Active only as upstream registers and runs it: `enable-taint-manager` and the Failover
feature gate, and `enable-no-execute-taint-eviction` for it to act. For each binding on a
cluster (spec.clusters) with NoExecute taints, the tolerations it was scheduled with (the
applied-placement annotation's clusterTolerations, as upstream reads them) decide:

- a NoExecute taint no toleration matches, or a tolerationSeconds run out (counted from
  the taint's timeAdded; the very instant counts as run out): evict now;
- otherwise look again when the first tolerationSeconds runs out, and never when every
  matching toleration is without tolerationSeconds;
- no NoExecute taint left by then (or the binding gone from the cluster): nothing.

Evicting is GracefulEvictCluster in one update of the binding: the cluster leaves
spec.clusters and a task (producer TaintManager, reason TaintUntolerated, the replicas it
had, the purge mode) joins spec.gracefulEvictionTasks. The policy's
spec.failover.cluster.purgeMode wins over no-execute-taint-eviction-purge-mode. The
scheduler then places the replicas elsewhere, the binding controller keeps the old Work
(Gracefully) or deletes it before writing new ones (Directly), and the graceful eviction
controller retires the task, recording EvictWorkloadFromClusterSucceed; a failed update
records EvictWorkloadFromClusterFailed here, as upstream.

One controller for both kinds (keys `namespace/name` for a ResourceBinding, `name` for a
ClusterResourceBinding), level-triggered where upstream polls each tainted cluster every
10 s: a binding is looked at when it changes, when the NoExecute taints of a cluster it is
on change (the bindings are found by an index by target cluster), and at the instant its
first toleration runs out.

Pacing (resource-eviction-rate): each kind has its eviction queue, as upstream's
binding-eviction and cluster-binding-eviction workers, and an eviction takes one slot of
1/rate (1800 s when the rate is 0; never under rate-limiter-base-delay, the default
limiter's part of upstream's pacer); the first goes at once. A binding due while the
queue is busy reserves the next free slot and is requeued for that instant. Upstream
runs three workers per queue, each sleeping 1/rate after every item, which lets up to
three evictions through per interval; here the rate is the flag's documented one:
evictions per second.

Fleet protection (not upstream; region_disruption.py): an eviction from a cluster that is
not Ready goes at its region's pace as karmada-system/cluster-region-status has it: in the
kind's queue as above (a region Normal or fully down, and always without that status),
in a queue of the region's own at secondary-resource-eviction-rate (a large region partly
down), or not until the pace changes (a small one partly down, or every region fully
down). After every region was down, the tolerationSeconds of a not-Ready cluster's taints
count from the instant evictions resumed at the earliest.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from fleetwarden.api.core import NO_EXECUTE, Taint
from fleetwarden.api.karmada import policy
from fleetwarden.api.karmada.cluster import Cluster
from fleetwarden.api.karmada.work import (
    EVICTION_PRODUCER_TAINT_MANAGER,
    EVICTION_REASON_TAINT_UNTOLERATED,
)
from fleetwarden.api.meta import Resource
from fleetwarden.controllers.karmada.eviction import (
    InvalidPlacement,
    TaskOptions,
    applied_placement,
    graceful_evict_cluster,
    purge_mode,
    write_evicted,
)
from fleetwarden.controllers.karmada.names import NAMESPACE_KARMADA_SYSTEM
from fleetwarden.controllers.karmada.region_disruption import (
    CONFIG_MAP,
    STATUS_NAME,
    RegionStatus,
    stored_status,
)
from fleetwarden.controllers.karmada.work import (
    CLUSTER,
    CLUSTER_RESOURCE_BINDING,
    RESOURCE_BINDING,
    Binding,
    BindingScope,
)
from fleetwarden.runtime.informer import Cache, by_target_cluster, object_key, split_key
from fleetwarden.runtime.manager import DONE, Context, Controller, Result, Watches, requeue_after
from fleetwarden.runtime.metrics import BINDING_EVICTION, CLUSTER_BINDING_EVICTION, EvictionQueue
from fleetwarden.runtime.settings import Settings
from fleetwarden.semantics.cluster_health import is_cluster_ready
from fleetwarden.semantics.region_disruption import Pace, region_of
from fleetwarden.semantics.tolerations import no_execute_eviction

logger = logging.getLogger(__name__)

TAINT_MANAGER = "taint-manager"
# indexregistry's names for the bindings by the clusters of spec.clusters.
RB_INDEX_BY_CLUSTER = "ResourceBindingIndexByFieldCluster"
CRB_INDEX_BY_CLUSTER = "ClusterResourceBindingIndexByFieldCluster"
# maxEvictionDelay: the pace when resource-eviction-rate is 0.
MAX_EVICTION_DELAY = timedelta(seconds=1800)

_ZERO = timedelta(0)
# Upstream's eviction workers, whose metrics our pacers report under their names.
_QUEUES = {
    RESOURCE_BINDING.info.kind: BINDING_EVICTION,
    CLUSTER_RESOURCE_BINDING.info.kind: CLUSTER_BINDING_EVICTION,
}
_INDEXES = (
    (RESOURCE_BINDING, RB_INDEX_BY_CLUSTER),
    (CLUSTER_RESOURCE_BINDING, CRB_INDEX_BY_CLUSTER),
)


def taint_manager_active(settings: Settings) -> bool:
    """Whether the taint manager runs and acts: enable-taint-manager, the Failover gate
    (without both upstream does not register it) and enable-no-execute-taint-eviction."""
    return (
        settings.enable_taint_manager
        and settings.gate("Failover")
        and settings.enable_no_execute_taint_eviction
    )


def eviction_interval(settings: Settings, rate: float | None = None) -> timedelta:
    """How far apart two evictions of one queue are: 1/rate, resource-eviction-rate unless
    another is given."""
    if rate is None:
        rate = settings.resource_eviction_rate
    if rate <= 0:
        return MAX_EVICTION_DELAY
    return max(timedelta(seconds=1 / rate), settings.rate_limiter_base_delay)


@dataclass
class EvictionPacer:
    """One eviction queue's pacing: the instant its next slot is free, and the slots
    reserved by bindings that found it taken. A slot is spent by an eviction written (a
    failed write is retried in the slot it had, as upstream paces only items done)."""

    next_free: datetime | None = None
    reserved: dict[str, datetime] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def wait(self, key: str, now: datetime, interval: timedelta) -> timedelta:
        """How long the key must wait for its slot (reserving the next free one when the
        queue is taken); zero when it may evict now."""
        with self._lock:
            slot = self.reserved.get(key)
            if slot is None:
                if self.next_free is None or self.next_free <= now:
                    return _ZERO
                slot = self.reserved[key] = self.next_free
                self.next_free = slot + interval
            return max(slot - now, _ZERO)

    def spend(self, key: str, now: datetime, interval: timedelta, evictions: int) -> None:
        """The key evicted (from that many clusters in one write): each takes a slot."""
        with self._lock:
            if self.reserved.pop(key, None) is None:
                self.next_free = now + interval * evictions
            elif self.next_free is not None:
                self.next_free += interval * (evictions - 1)

    def release(self, key: str) -> None:
        """The key needs no slot any more (a reserved one stays spent)."""
        with self._lock:
            self.reserved.pop(key, None)


# A cluster's NoExecute taints as the taint manager compares them, and whether it is Ready
# (fleet protection paces evictions from a cluster not Ready by its region).
_TaintSet = tuple[tuple[tuple[str, str, datetime | None], ...], bool]
# What of the region status decides evictions: each region's pace, and when they resumed.
_Paces = tuple[tuple[tuple[str, Pace], ...], datetime | None]


def _no_execute(taints: Iterable[Taint] | None) -> list[Taint]:
    return [t for t in taints or () if t.effect == NO_EXECUTE]


@dataclass
class TaintManager:
    pacers: dict[str, EvictionPacer] = field(
        default_factory=lambda: {
            RESOURCE_BINDING.info.kind: EvictionPacer(),
            CLUSTER_RESOURCE_BINDING.info.kind: EvictionPacer(),
        }
    )
    # The queues of the regions whose evictions are slowed, by binding kind and region.
    region_pacers: dict[tuple[str, str], EvictionPacer] = field(default_factory=dict)
    # The NoExecute taints of each cluster last seen, to enqueue its bindings on a change.
    _seen: dict[str, _TaintSet] = field(default_factory=dict)
    # The paces last seen in the region status, likewise.
    _paces: _Paces = ((), None)
    # The manager's cache, learnt from the first reconcile (see _on_cluster).
    _cache: Cache | None = None
    # The region status last read, and the resourceVersion it was read at.
    _regions: tuple[str | None, RegionStatus] = (None, RegionStatus())

    def controller(self) -> Controller:
        return Controller(
            name=TAINT_MANAGER,
            watches=[
                Watches(RESOURCE_BINDING.info),
                Watches(CLUSTER_RESOURCE_BINDING.info),
                Watches(CLUSTER, self._on_cluster),
                Watches(CONFIG_MAP, self._on_region_status),
            ],
            reconcile=self.reconcile,
            indexers={scope.info: {name: by_target_cluster} for scope, name in _INDEXES},
        )

    def _on_cluster(self, obj: Resource) -> list[str]:
        """The bindings on a cluster whose NoExecute taints (timeAdded included) or, with
        some, Ready changed.

        They are looked up in the manager's cache, known from the first reconcile: until
        then every binding is queued anyway (each is announced as added when listed).
        """
        if not isinstance(obj, Cluster):
            return []
        name = obj.metadata.name
        no_execute = _no_execute(obj.spec.taints)
        taints = tuple((t.key, t.value or "", t.time_added) for t in no_execute)
        seen = (taints, bool(taints) and is_cluster_ready(obj))
        if self._seen.get(name) == seen:
            return []
        self._seen[name] = seen
        return self._bindings_on([name])

    def _on_region_status(self, obj: Resource) -> list[str]:
        """The bindings on every cluster with NoExecute taints, when the pace of evictions
        from a region or the instant evictions resumed changed (not on every count)."""
        if obj.namespace != NAMESPACE_KARMADA_SYSTEM or obj.name != STATUS_NAME:
            return []
        status = RegionStatus.of(obj)
        paces = (tuple((r, region.pace) for r, region in sorted(status.regions.items())),
                 status.resumed_at)  # fmt: skip
        if paces == self._paces:
            return []
        self._paces = paces
        return self._bindings_on([name for name, (taints, _) in self._seen.items() if taints])

    def _bindings_on(self, clusters: Iterable[str]) -> list[str]:
        cache = self._cache
        if cache is None:
            return []
        return [
            object_key(binding)
            for name in clusters
            for scope, index in _INDEXES
            for binding in cache.informer(scope.info).by_index(index, name)
        ]

    def reconcile(self, key: str, ctx: Context) -> Result:
        self._cache = ctx.cache
        if not taint_manager_active(ctx.settings):
            return DONE
        namespace, name = split_key(key)
        scope = RESOURCE_BINDING if namespace else CLUSTER_RESOURCE_BINDING
        binding = ctx.cache.informer(scope.info).get(name, namespace)
        result, waiting = self._sync(key, binding, scope, ctx)
        _queue(ctx, scope).track(key, scope.info.kind, waiting)
        return result

    def _sync(
        self, key: str, binding: Resource | None, scope: BindingScope, ctx: Context
    ) -> tuple[Result, list[str]]:
        """syncBindingEviction for every cluster of the binding: what to do next, and the
        clusters it waits to be evicted from."""
        kind = scope.info.kind
        if not isinstance(binding, Binding) or binding.metadata.deletion_timestamp is not None:
            self._release(key, kind)
            return DONE, []
        clusters = ctx.cache.informer(CLUSTER)
        tainted: list[tuple[Cluster, list[Taint]]] = []
        for target in binding.spec.clusters or ():
            cluster = clusters.get(target.name)
            if isinstance(cluster, Cluster) and (taints := _no_execute(cluster.spec.taints)):
                tainted.append((cluster, taints))
        placement = _placement(binding) if tainted else None
        if placement is None:
            # Not scheduled by a placement yet (upstream retries with backoff): the
            # scheduler's write of the annotation brings the binding back here.
            self._release(key, kind)
            return DONE, []
        now = ctx.clock.now()
        regions = self._region_status(ctx)
        due: list[Cluster] = []
        later: list[timedelta] = []
        for cluster, taints in tainted:
            if not is_cluster_ready(cluster):
                taints = _counted_from(taints, regions.resumed_at)
            verdict = no_execute_eviction(taints, placement.cluster_tolerations, now)
            if verdict.evict_now:
                due.append(cluster)
            elif verdict.evict_after is not None:
                later.append(verdict.evict_after)
        waiting: list[str] = []
        if due:
            waiting = self._evict_paced(key, binding, scope, due, regions, later, ctx)
        else:
            self._release(key, kind)
        return (requeue_after(min(later)) if later else DONE), waiting

    def _evict_paced(
        self,
        key: str,
        binding: Binding,
        scope: BindingScope,
        due: list[Cluster],
        regions: RegionStatus,
        later: list[timedelta],
        ctx: Context,
    ) -> list[str]:
        """Evict from the clusters due whose queues have a slot now; the others wait for
        theirs (added to `later`) or, where their region's evictions are stopped, for a
        change of its state. The clusters left waiting."""
        kind, now = scope.info.kind, ctx.clock.now()
        queues, waiting = _by_queue(due, regions)
        self._release(key, kind, keep=queues)
        ready: list[tuple[EvictionPacer, timedelta, list[str]]] = []
        for region, names in queues.items():
            pacer, interval = self._pacer(kind, region, ctx.settings)
            wait = pacer.wait(key, now, interval)
            if wait > _ZERO:
                later.append(wait)
                waiting.extend(names)
            else:
                ready.append((pacer, interval, names))
        if ready:
            with ctx.metrics.eviction_processing(_QUEUES[kind], ctx.clock):
                self._evict(binding, scope, [n for _, _, names in ready for n in names], ctx)
            for pacer, interval, names in ready:
                pacer.spend(key, now, interval, len(names))
        return waiting

    def _pacer(
        self, kind: str, region: str | None, settings: Settings
    ) -> tuple[EvictionPacer, timedelta]:
        """The kind's queue (region None) at resource-eviction-rate, or a slowed region's
        own at secondary-resource-eviction-rate."""
        if region is None:
            return self.pacers[kind], eviction_interval(settings)
        pacer = self.region_pacers.setdefault((kind, region), EvictionPacer())
        return pacer, eviction_interval(settings, settings.secondary_resource_eviction_rate)

    def _release(self, key: str, kind: str, keep: Iterable[str | None] = ()) -> None:
        """The key needs no slot in any queue of its kind but those kept."""
        kept = set(keep)
        if None not in kept:
            self.pacers[kind].release(key)
        for (of_kind, region), pacer in self.region_pacers.items():
            if of_kind == kind and region not in kept:
                pacer.release(key)

    def _region_status(self, ctx: Context) -> RegionStatus:
        """The region status in the cache, parsed once per resourceVersion."""
        stored = stored_status(ctx)
        version = stored.metadata.resource_version if stored is not None else None
        if self._regions[0] != version:
            self._regions = (version, RegionStatus.of(stored))
        return self._regions[1]

    def _evict(
        self, binding: Binding, scope: BindingScope, clusters: list[str], ctx: Context
    ) -> None:
        """GracefulEvictCluster for each cluster, in one update of the binding."""
        evicted = binding.model_copy(deep=True)
        options = TaskOptions(
            purge_mode=purge_mode(
                evicted.spec.failover, ctx.settings.no_execute_taint_eviction_purge_mode
            ),
            producer=EVICTION_PRODUCER_TAINT_MANAGER,
            reason=EVICTION_REASON_TAINT_UNTOLERATED,
        )
        for cluster in clusters:
            graceful_evict_cluster(evicted.spec, cluster, options)
        write_evicted(ctx, binding, evicted, clusters)
        for cluster in clusters:
            logger.info(
                "Evicted cluster %s from %s (purge mode %s)",
                cluster, scope.describe(binding), options.purge_mode,
            )  # fmt: skip


def _placement(binding: Binding) -> policy.Placement | None:
    try:
        return applied_placement(binding)
    except InvalidPlacement as exc:
        logger.error("%s: %s", TAINT_MANAGER, exc)
        return None


def _counted_from(taints: list[Taint], resumed: datetime | None) -> list[Taint]:
    """The taints of a cluster not Ready, their tolerationSeconds counted from no earlier
    than the instant evictions resumed after the hub's disruption mode."""
    if resumed is None:
        return taints
    return [
        t.model_copy(update={"time_added": resumed})
        if t.time_added is not None and t.time_added < resumed
        else t
        for t in taints
    ]


def _by_queue(
    due: list[Cluster], regions: RegionStatus
) -> tuple[dict[str | None, list[str]], list[str]]:
    """The clusters due by the queue they are evicted through: the kind's (None) for a
    Ready cluster and a region at the normal pace, its region's own for a slowed region;
    and those of regions whose evictions are stopped."""
    queues: dict[str | None, list[str]] = {}
    stopped: list[str] = []
    for cluster in due:
        region = region_of(cluster)
        pace = Pace.NORMAL if is_cluster_ready(cluster) else regions.pace(region)
        if pace == Pace.STOPPED:
            stopped.append(cluster.name)
        else:
            queues.setdefault(region if pace == Pace.SLOWED else None, []).append(cluster.name)
    return queues, stopped


def _queue(ctx: Context, scope: BindingScope) -> EvictionQueue:
    return ctx.metrics.eviction_queue(_QUEUES[scope.info.kind])


def taint_manager_controller() -> Controller:
    """karmada-controller-manager's taint manager (under the `cluster` controller), for
    ResourceBindings and ClusterResourceBindings alike."""
    return TaintManager().controller()
