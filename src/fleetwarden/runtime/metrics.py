"""A hub's Prometheus metrics, named, labelled and bucketed as upstream's are.

Each hub has a registry of its own (never prometheus_client's global one), so that tests,
simulations and hubs in one process do not count into each other. Reconcilers reach it as
`ctx.metrics` and time what they measure on `ctx.clock`, never on the wall clock: under the
virtual clock a reconcile takes no time at all.

Upstream's sources: Karmada pkg/metrics/cluster.go (cluster state, eviction queues) and
pkg/scheduler/metrics/metrics.go; OCM pkg/placement/controllers/metrics/metrics.go;
client-go's leader election, as k8s.io/component-base/metrics/prometheus/clientgo registers it.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager, suppress
from datetime import datetime

from prometheus_client import (
    GC_COLLECTOR,
    PLATFORM_COLLECTOR,
    PROCESS_COLLECTOR,
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    generate_latest,
)
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from fleetwarden.api.karmada.cluster import CONDITION_READY, Cluster
from fleetwarden.api.meta import Quantity, Resource, find_condition
from fleetwarden.runtime.clock import Clock
from fleetwarden.semantics.quantity import QuantityError, parse_quantity

# pkg/util/metrics: a result label's values.
RESULT_SUCCESS = "success"
RESULT_ERROR = "error"
# karmada-scheduler's results, schedule types and algorithm steps.
SCHEDULED = "scheduled"
RECONCILE_SCHEDULE = "ReconcileSchedule"
SCALE_SCHEDULE = "ScaleSchedule"
STEP_FILTER = "Filter"
STEP_SCORE = "Score"
# The taint manager's eviction workers.
BINDING_EVICTION = "binding-eviction"
CLUSTER_BINDING_EVICTION = "cluster-binding-eviction"
# OCM's one label value for every placement histogram.
PLACEMENT_SCHEDULING = "placement_scheduling"

MEMBER_CLUSTER = "member_cluster"
# The fleet protection's gauges, named after kube's node lifecycle controller's subsystem.
CLUSTER_COLLECTOR = "cluster_collector"


def exponential_buckets(start: float, factor: float, count: int) -> tuple[float, ...]:
    """prometheus.ExponentialBuckets."""
    return tuple(start * factor**i for i in range(count))


def seconds_since(clock: Clock, start: datetime) -> float:
    """utilmetrics.DurationInSeconds, on the given clock."""
    return (clock.now() - start).total_seconds()


class Metrics:
    """The metrics of one hub and the registry they are exposed from."""

    def __init__(self, *, process: bool = False) -> None:
        """`process` adds the process, platform and GC collectors (a hub's own process)."""
        r = self.registry = CollectorRegistry()
        if process:
            for collector in (PROCESS_COLLECTOR, PLATFORM_COLLECTOR, GC_COLLECTOR):
                r.register(collector)
        # karmada-controller-manager: cluster status and the taint manager's queues.
        self.cluster_sync_status_duration = Histogram(
            "cluster_sync_status_duration_seconds",
            "Duration in seconds for syncing the status of the cluster once.",
            [MEMBER_CLUSTER], registry=r,
        )  # fmt: skip
        self.eviction_queue_depth = Gauge(
            "eviction_queue_depth", "Current depth of the eviction queue", ["name"], registry=r
        )
        self.eviction_kind_total = Gauge(
            "eviction_kind_total",
            "Number of resources in the eviction queue by resource kind",
            [MEMBER_CLUSTER, "resource_kind"], registry=r,
        )  # fmt: skip
        self.eviction_processing_latency = Histogram(
            "eviction_processing_latency_seconds",
            "Latency of processing an eviction task in seconds",
            ["name"], buckets=exponential_buckets(0.001, 2, 15), registry=r,
        )  # fmt: skip
        self.eviction_processing_total = Counter(
            "eviction_processing_total", "Total number of evictions processed",
            ["name", "result"], registry=r,
        )  # fmt: skip
        # Fleet protection: each region's clusters, as kube's node_collector_zone_* gauges.
        self.region_size = Gauge(
            "region_size", "Gauge measuring number of registered Clusters per region.",
            ["region"], subsystem=CLUSTER_COLLECTOR, registry=r,
        )  # fmt: skip
        self.region_health = Gauge(
            "region_health", "Gauge measuring percentage of healthy clusters per region.",
            ["region"], subsystem=CLUSTER_COLLECTOR, registry=r,
        )  # fmt: skip
        self.unhealthy_clusters_in_region = Gauge(
            "unhealthy_clusters_in_region",
            "Gauge measuring number of not Ready Clusters per region.",
            ["region"], subsystem=CLUSTER_COLLECTOR, registry=r,
        )  # fmt: skip
        self._regions: set[str] = set()
        # karmada-scheduler
        self.schedule_attempts = Counter(
            "schedule_attempts_total",
            "Number of attempts to schedule a ResourceBinding or ClusterResourceBinding",
            ["result", "schedule_type"], subsystem="karmada_scheduler", registry=r,
        )  # fmt: skip
        self.e2e_scheduling_duration = Histogram(
            "e2e_scheduling_duration_seconds", "E2e scheduling latency in seconds",
            ["result", "schedule_type"], subsystem="karmada_scheduler",
            buckets=exponential_buckets(0.001, 2, 15), registry=r,
        )  # fmt: skip
        self.scheduling_algorithm_duration = Histogram(
            "scheduling_algorithm_duration_seconds",
            "Scheduling algorithm latency in seconds(exclude scale scheduler)",
            ["schedule_step"], subsystem="karmada_scheduler",
            buckets=exponential_buckets(0.001, 2, 15), registry=r,
        )  # fmt: skip
        # OCM placement controller
        self.placement_scheduling_duration = Histogram(
            "scheduling_duration_seconds", "How long in seconds it takes to schedule a placement.",
            ["name"], subsystem="scheduling", buckets=exponential_buckets(10e-7, 10, 10),
            registry=r,
        )  # fmt: skip
        self.placement_bind_duration = Histogram(
            "bind_duration_seconds",
            "How long in seconds it takes to bind a placement to placementDecisions.",
            ["name"], subsystem="scheduling", buckets=exponential_buckets(10e-7, 10, 10),
            registry=r,
        )  # fmt: skip
        # client-go's leader election (component-base's adapter): 1 on the lock's leader.
        self.leader_election_master_status = Gauge(
            "leader_election_master_status",
            "Gauge of if the reporting system is master of the relevant lease, 0 indicates "
            "backup, 1 indicates master. 'name' is the string used to identify the lease. "
            "Please make sure to group by name.",
            ["name"], registry=r,
        )  # fmt: skip
        # kube-apiserver's storage: etcd's latency, and the objects the watch cache holds.
        self.etcd_request_duration = Histogram(
            "etcd_request_duration_seconds",
            "Etcd request latency in seconds for each operation and object type.",
            ["operation", "type"], registry=r,
            buckets=(0.005, 0.025, 0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 1.25, 1.5, 2, 3, 4, 5,
                     6, 8, 10, 15, 20, 30, 45, 60),
        )  # fmt: skip
        self._eviction_queues: dict[str, EvictionQueue] = {}
        self._lock = threading.Lock()

    def watch_cache(self, size: Callable[[], int]) -> None:
        """Report how many objects the watch cache holds at each scrape."""
        gauge = Gauge(
            "watch_cache_capacity", "Total capacity of watch cache broken by resource type.",
            ["resource"], registry=self.registry,
        )  # fmt: skip
        gauge.labels("all").set_function(size)

    def observe_etcd(self, operation: str, seconds: float) -> None:
        self.etcd_request_duration.labels(operation, "all").observe(seconds)

    def expose(self) -> bytes:
        """The registry in Prometheus' text format."""
        return generate_latest(self.registry)

    # Karmada cluster status ----------------------------------------------------------------

    def watch_clusters(self, clusters: Callable[[], Iterable[Resource]]) -> None:
        """Report the state of the Clusters `clusters` lists (an informer's list, say) at
        each scrape: the gauges of RecordClusterStatus, for every cluster the hub knows,
        never for one deleted."""
        self.registry.register(_ClusterCollector(clusters))

    def observe_cluster_sync(self, cluster: str, seconds: float) -> None:
        """RecordClusterSyncStatusDuration."""
        self.cluster_sync_status_duration.labels(cluster).observe(seconds)

    def forget_cluster(self, cluster: str) -> None:
        """CleanupMetricsForCluster: the cluster is gone."""
        with suppress(KeyError):  # never synced here
            self.cluster_sync_status_duration.remove(cluster)

    # Karmada taint manager ----------------------------------------------------------------

    def eviction_queue(self, name: str) -> EvictionQueue:
        with self._lock:
            queue = self._eviction_queues.get(name)
            if queue is None:
                queue = self._eviction_queues[name] = EvictionQueue(name, self)
            return queue

    @contextmanager
    def eviction_processing(self, name: str, clock: Clock) -> Iterator[None]:
        """RecordEvictionProcessingMetrics around one eviction: an exception is an error."""
        start, result = clock.now(), RESULT_ERROR
        try:
            yield
            result = RESULT_SUCCESS
        finally:
            self.eviction_processing_latency.labels(name).observe(seconds_since(clock, start))
            self.eviction_processing_total.labels(name, result).inc()

    # fleet protection ------------------------------------------------------------------------

    def observe_regions(self, counts: Mapping[str, tuple[int, int]]) -> None:
        """handleDisruption's gauges from each region's (Ready, not Ready) clusters; a region
        gone reads as kube's zone gone: no cluster, 100 % healthy."""
        with self._lock:
            for region in self._regions - counts.keys():
                self._region(region, 0, 100.0, 0)
            for region, (ready, down) in counts.items():
                self._region(region, ready + down, 100 * ready / (ready + down), down)
            self._regions |= counts.keys()

    def _region(self, region: str, size: int, health: float, unhealthy: int) -> None:
        self.region_size.labels(region).set(size)
        self.region_health.labels(region).set(health)
        self.unhealthy_clusters_in_region.labels(region).set(unhealthy)

    # karmada-scheduler ----------------------------------------------------------------------

    def binding_schedule(self, schedule_type: str, seconds: float, *, failed: bool) -> None:
        """metrics.BindingSchedule: one scheduling attempt and how long it took."""
        result = RESULT_ERROR if failed else SCHEDULED
        self.e2e_scheduling_duration.labels(result, schedule_type).observe(seconds)
        self.schedule_attempts.labels(result, schedule_type).inc()

    @contextmanager
    def schedule_step(self, step: str, clock: Clock) -> Iterator[None]:
        """metrics.ScheduleStep around one step of the scheduling algorithm."""
        start = clock.now()
        try:
            yield
        finally:
            self.scheduling_algorithm_duration.labels(step).observe(seconds_since(clock, start))

    # OCM placement ----------------------------------------------------------------------------

    def observe_placement_scheduling(self, seconds: float) -> None:
        """ScheduleMetrics.StartBind: from the start of scheduling to the start of binding."""
        self.placement_scheduling_duration.labels(PLACEMENT_SCHEDULING).observe(seconds)

    def observe_placement_bind(self, seconds: float) -> None:
        """ScheduleMetrics.Done: from the start of binding to the decisions written."""
        self.placement_bind_duration.labels(PLACEMENT_SCHEDULING).observe(seconds)


class EvictionQueue:
    """One eviction queue's gauges: eviction_queue_depth counts the bindings waiting for an
    eviction slot, eviction_kind_total the clusters they wait to leave by binding kind."""

    def __init__(self, name: str, metrics: Metrics) -> None:
        self.name = name
        self._depth = metrics.eviction_queue_depth.labels(name)
        self._kinds = metrics.eviction_kind_total
        self._waiting: dict[str, tuple[str, tuple[str, ...]]] = {}
        self._lock = threading.Lock()
        self._depth.set(0)

    def track(self, key: str, kind: str, clusters: Iterable[str] = ()) -> None:
        """The clusters the binding `key` (of `kind`) now waits to be evicted from; none:
        it left the queue (evicted, or nothing to evict any more)."""
        waiting = (kind, tuple(clusters))
        with self._lock:
            old = self._waiting.get(key, (kind, ()))
            if old == waiting:
                return
            for cluster in old[1]:
                self._kinds.labels(cluster, old[0]).dec()
            for cluster in waiting[1]:
                self._kinds.labels(cluster, kind).inc()
            if waiting[1]:
                self._waiting[key] = waiting
            else:
                del self._waiting[key]
            self._depth.set(len(self._waiting))


class _ClusterCollector(Collector):
    """RecordClusterStatus's gauges, read from the clusters at each scrape."""

    def __init__(self, clusters: Callable[[], Iterable[Resource]]) -> None:
        self._clusters = clusters

    def collect(self) -> Iterable[Metric]:
        families = {
            name: GaugeMetricFamily(name, help_, labels=[MEMBER_CLUSTER])
            for name, help_ in _CLUSTER_GAUGES.items()
        }
        for cluster in self._clusters():
            if not isinstance(cluster, Cluster):
                continue
            for name, value in _cluster_values(cluster).items():
                families[name].add_metric([cluster.name], value)
        return families.values()


_CLUSTER_GAUGES = {
    "cluster_ready_state": "State of the cluster (1 if ready, 0 otherwise).",
    "cluster_node_number": "Number of nodes in the cluster.",
    "cluster_ready_node_number": "Number of ready nodes in the cluster.",
    "cluster_memory_allocatable_bytes": "Allocatable cluster memory resource in bytes.",
    "cluster_cpu_allocatable_number": "Number of allocatable CPU in the cluster.",
    "cluster_pod_allocatable_number": "Number of allocatable pods in the cluster.",
    "cluster_memory_allocated_bytes": "Allocated cluster memory resource in bytes.",
    "cluster_cpu_allocated_number": "Number of allocated CPU in the cluster.",
    "cluster_pod_allocated_number": "Number of allocated pods in the cluster.",
}
_RESOURCES = (("memory", "memory", "bytes"), ("cpu", "cpu", "number"), ("pods", "pod", "number"))


def _cluster_values(cluster: Cluster) -> dict[str, float]:
    status = cluster.status
    ready = find_condition(status.conditions, CONDITION_READY)
    values = {"cluster_ready_state": 1.0 if ready and ready.status == "True" else 0.0}
    nodes = status.node_summary
    if nodes is not None:
        values["cluster_node_number"] = float(nodes.total_num or 0)
        values["cluster_ready_node_number"] = float(nodes.ready_num or 0)
    summary = status.resource_summary
    if summary is not None:
        for which, quantities in (("allocatable", summary.allocatable),
                                  ("allocated", summary.allocated)):  # fmt: skip
            if quantities is not None:
                values.update(_resource_values(which, quantities))
    return values


def _resource_values(which: str, quantities: Mapping[str, Quantity]) -> dict[str, float]:
    """A resource absent counts 0, as Quantity's zero value does upstream."""
    values: dict[str, float] = {}
    for resource, metric, unit in _RESOURCES:
        try:
            amount = float(parse_quantity(quantities.get(resource, "0")))
        except QuantityError:
            continue  # admission refuses such a quantity; nothing to report
        values[f"cluster_{metric}_{which}_{unit}"] = amount
    return values
