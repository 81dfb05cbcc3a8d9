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
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from fleetwarden.api.core import NO_EXECUTE, Taint
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


def eviction_interval(settings: Settings) -> timedelta:
    """How far apart two evictions of one queue are: 1/resource-eviction-rate."""
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


# A cluster's NoExecute taints as the taint manager compares them.
_TaintSet = tuple[tuple[str, str, datetime | None], ...]


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
    # The NoExecute taints of each cluster last seen, to enqueue its bindings on a change.
    _seen: dict[str, _TaintSet] = field(default_factory=dict)
    # The manager's cache, learnt from the first reconcile (see _on_cluster).
    _cache: Cache | None = None

    def controller(self) -> Controller:
        return Controller(
            name=TAINT_MANAGER,
            watches=[
                Watches(RESOURCE_BINDING.info),
                Watches(CLUSTER_RESOURCE_BINDING.info),
                Watches(CLUSTER, self._on_cluster),
            ],
            reconcile=self.reconcile,
            indexers={scope.info: {name: by_target_cluster} for scope, name in _INDEXES},
        )

    def _on_cluster(self, obj: Resource) -> list[str]:
        """The bindings on a cluster whose NoExecute taints changed (timeAdded included).

        They are looked up in the manager's cache, known from the first reconcile: until
        then every binding is queued anyway (each is announced as added when listed).
        """
        if not isinstance(obj, Cluster):
            return []
        name = obj.metadata.name
        taints = tuple((t.key, t.value or "", t.time_added) for t in _no_execute(obj.spec.taints))
        if self._seen.get(name) == taints:
            return []
        self._seen[name] = taints
        cache = self._cache
        if cache is None:
            return []
        return [
            object_key(binding)
            for scope, index in _INDEXES
            for binding in cache.informer(scope.info).by_index(index, name)
        ]

    def reconcile(self, key: str, ctx: Context) -> Result:
        self._cache = ctx.cache
        if not taint_manager_active(ctx.settings):
            return DONE
        namespace, name = split_key(key)
        scope = RESOURCE_BINDING if namespace else CLUSTER_RESOURCE_BINDING
        pacer = self.pacers[scope.info.kind]
        binding = ctx.cache.informer(scope.info).get(name, namespace)
        result = self._sync(key, binding, scope, pacer, ctx)
        if key not in pacer.reserved:
            _queue(ctx, scope).track(key, scope.info.kind)  # not waiting (any more)
        return result

    def _sync(
        self,
        key: str,
        binding: Resource | None,
        scope: BindingScope,
        pacer: EvictionPacer,
        ctx: Context,
    ) -> Result:
        """syncBindingEviction for every cluster of the binding."""
        if not isinstance(binding, Binding) or binding.metadata.deletion_timestamp is not None:
            pacer.release(key)
            return DONE
        clusters = ctx.cache.informer(CLUSTER)
        tainted: list[tuple[str, list[Taint]]] = []
        for target in binding.spec.clusters or ():
            cluster = clusters.get(target.name)
            if isinstance(cluster, Cluster) and (taints := _no_execute(cluster.spec.taints)):
                tainted.append((target.name, taints))
        if not tainted:
            pacer.release(key)
            return DONE
        try:
            placement = applied_placement(binding)
        except InvalidPlacement as exc:
            logger.error("%s: %s", TAINT_MANAGER, exc)
            placement = None
        if placement is None:
            # Not scheduled by a placement yet (upstream retries with backoff): the
            # scheduler's write of the annotation brings the binding back here.
            pacer.release(key)
            return DONE
        now = ctx.clock.now()
        due: list[str] = []
        later: list[timedelta] = []
        for cluster_name, taints in tainted:
            verdict = no_execute_eviction(taints, placement.cluster_tolerations, now)
            if verdict.evict_now:
                due.append(cluster_name)
            elif verdict.evict_after is not None:
                later.append(verdict.evict_after)
        next_look = requeue_after(min(later)) if later else DONE
        if not due:
            pacer.release(key)
            return next_look
        interval = eviction_interval(ctx.settings)
        wait = pacer.wait(key, now, interval)
        if wait > _ZERO:
            _queue(ctx, scope).track(key, scope.info.kind, due)
            return requeue_after(wait)
        with ctx.metrics.eviction_processing(_QUEUES[scope.info.kind], ctx.clock):
            self._evict(binding, scope, due, ctx)
        pacer.spend(key, now, interval, len(due))
        return next_look

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


def _queue(ctx: Context, scope: BindingScope) -> EvictionQueue:
    return ctx.metrics.eviction_queue(_QUEUES[scope.info.kind])


def taint_manager_controller() -> Controller:
    """karmada-controller-manager's taint manager (under the `cluster` controller), for
    ResourceBindings and ClusterResourceBindings alike."""
    return TaintManager().controller()
