"""The hub's metrics: upstream's names, labels and buckets, one registry per hub, filled by
the controllers as they work and served on /metrics."""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families

from fleetwarden.api.karmada.cluster import Cluster
from fleetwarden.cli.serving import Serving
from fleetwarden.cli.up import Hub
from fleetwarden.client.client import Client
from fleetwarden.runtime.clock import VirtualClock
from fleetwarden.runtime.metrics import Metrics
from fleetwarden.runtime.settings import Settings
from fleetwarden.sim.runner import EVENT, Simulation
from fleetwarden.sim.scenario import load

EXAMPLES = Path(__file__).parents[2] / "examples" / "scenarios"


def samples(metrics: Metrics) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """Every sample exposed, by name and sorted labels."""
    text = metrics.expose().decode()
    return {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
    }


def test_scheduling_attempts_are_counted_and_timed_by_result_and_schedule_type() -> None:
    metrics = Metrics()
    metrics.binding_schedule("ReconcileSchedule", 0.003, failed=False)
    metrics.binding_schedule("ScaleSchedule", 0.2, failed=True)
    got = samples(metrics)
    ok = (("result", "scheduled"), ("schedule_type", "ReconcileSchedule"))
    failed = (("result", "error"), ("schedule_type", "ScaleSchedule"))
    assert got[("karmada_scheduler_schedule_attempts_total", ok)] == 1
    assert got[("karmada_scheduler_schedule_attempts_total", failed)] == 1
    bucket = "karmada_scheduler_e2e_scheduling_duration_seconds_bucket"
    # ExponentialBuckets(0.001, 2, 15): 0.003 falls in le=0.004, not in le=0.002.
    assert got[(bucket, (("le", "0.002"), *ok))] == 0
    assert got[(bucket, (("le", "0.004"), *ok))] == 1


def test_an_eviction_is_timed_on_the_given_clock_and_counted_by_its_result() -> None:
    metrics, clock = Metrics(), VirtualClock()
    with metrics.eviction_processing("binding-eviction", clock):
        clock.advance(timedelta(milliseconds=3))
    with pytest.raises(RuntimeError), metrics.eviction_processing("binding-eviction", clock):
        raise RuntimeError("conflict")
    got = samples(metrics)
    for result in ("success", "error"):
        labels = (("name", "binding-eviction"), ("result", result))
        assert got[("eviction_processing_total", labels)] == 1
    latency = (("name", "binding-eviction"),)
    assert got[("eviction_processing_latency_seconds_sum", latency)] == pytest.approx(0.003)


def test_an_eviction_queue_counts_waiting_bindings_and_the_clusters_they_wait_to_leave() -> None:
    metrics = Metrics()
    queue = metrics.eviction_queue("binding-eviction")
    queue.track("default/a", "ResourceBinding", ["member1", "member2"])
    queue.track("default/b", "ResourceBinding", ["member1"])
    queue.track("default/a", "ResourceBinding", ["member2"])
    queue.track("default/b", "ResourceBinding")
    got = samples(metrics)
    assert got[("eviction_queue_depth", (("name", "binding-eviction"),))] == 1
    kind = "eviction_kind_total"
    rb = ("resource_kind", "ResourceBinding")
    assert got[(kind, (("member_cluster", "member1"), rb))] == 0
    assert got[(kind, (("member_cluster", "member2"), rb))] == 1


def test_cluster_gauges_are_read_from_the_clusters_at_each_scrape() -> None:
    metrics = Metrics()
    clusters: list[Cluster] = []
    metrics.watch_clusters(lambda: clusters)
    clusters.append(
        Cluster.model_validate(
            {
                "apiVersion": "cluster.karmada.io/v1alpha1",
                "kind": "Cluster",
                "metadata": {"name": "member1"},
                "status": {
                    "conditions": [{"type": "Ready", "status": "True", "reason": "ClusterReady"}],
                    "nodeSummary": {"totalNum": 3, "readyNum": 2},
                    "resourceSummary": {"allocatable": {"cpu": "1500m", "memory": "2Gi"}},
                },
            }
        )
    )
    got = samples(metrics)
    member1 = (("member_cluster", "member1"),)
    assert got[("cluster_ready_state", member1)] == 1
    assert got[("cluster_node_number", member1)] == 3
    assert got[("cluster_ready_node_number", member1)] == 2
    assert got[("cluster_cpu_allocatable_number", member1)] == 1.5
    assert got[("cluster_memory_allocatable_bytes", member1)] == 2 * 1024**3
    assert got[("cluster_pod_allocatable_number", member1)] == 0
    assert ("cluster_cpu_allocated_number", member1) not in got
    clusters.clear()
    assert ("cluster_ready_state", member1) not in samples(metrics)


def test_each_hub_counts_into_its_own_registry() -> None:
    one, two = Metrics(), Metrics()
    one.binding_schedule("ReconcileSchedule", 0.001, failed=False)
    ok = (("result", "scheduled"), ("schedule_type", "ReconcileSchedule"))
    assert samples(one)[("karmada_scheduler_schedule_attempts_total", ok)] == 1
    assert ("karmada_scheduler_schedule_attempts_total", ok) not in samples(two)


def test_a_graceful_failover_is_scheduled_evicted_and_timed_in_virtual_time() -> None:
    simulation = Simulation(load(str(EXAMPLES / "graceful-failover.yaml")))
    assert simulation.run().failed == 0
    got = samples(simulation.driver.manager.metrics)
    ok = (("result", "scheduled"), ("schedule_type", "ReconcileSchedule"))
    # One attempt per ScheduleBindingSucceed the scheduler recorded on the binding.
    succeeded = sum(
        event.get("count", 1)
        for event in simulation.store.list(EVENT).items
        if (event["reason"], event["involvedObject"]["kind"])
        == ("ScheduleBindingSucceed", "ResourceBinding")
    )
    assert got[("karmada_scheduler_schedule_attempts_total", ok)] == succeeded > 1
    algorithm = "karmada_scheduler_scheduling_algorithm_duration_seconds_count"
    assert got[(algorithm, (("schedule_step", "Filter"),))] == succeeded
    assert got[(algorithm, (("schedule_step", "Score"),))] == succeeded
    evicted = (("name", "binding-eviction"), ("result", "success"))
    assert got[("eviction_processing_total", evicted)] == 1
    # A reconcile takes no virtual time at all.
    assert got[("karmada_scheduler_e2e_scheduling_duration_seconds_sum", ok)] == 0
    assert got[("eviction_queue_depth", (("name", "binding-eviction"),))] == 0


def test_regions_are_gauged_as_kube_gauges_zones() -> None:
    simulation = Simulation(load(str(EXAMPLES / "fleet-protection-three-regions-partly-lost.yaml")))
    assert simulation.run().failed == 0
    got = samples(simulation.driver.manager.metrics)
    gauges = ("region_size", "region_health", "unhealthy_clusters_in_region")
    by_region = {
        region: tuple(got[(f"cluster_collector_{g}", (("region", region),))] for g in gauges)
        for region in ("eu-west", "ap-south", "us-west")
    }
    # At the end ap-south-2 is back: two of its four clusters are down.
    assert by_region == {"eu-west": (5, 40, 3), "ap-south": (4, 50, 2), "us-west": (4, 100, 0)}
    # The slowed regions' evictions are counted with the others.
    evicted = (("name", "binding-eviction"), ("result", "success"))
    assert got[("eviction_processing_total", evicted)] == 5


def test_the_hub_serves_its_metrics_with_the_clusters_it_knows(
    tmp_path: Path, admin_client: Callable[[Hub], Client]
) -> None:
    settings = Settings(cluster_status_update_frequency=timedelta(milliseconds=100))
    hub = Hub(tmp_path, Serving(port=0), settings)
    hub.start()
    try:
        client = admin_client(hub)
        client.create({"apiVersion": "cluster.karmada.io/v1alpha1", "kind": "Cluster",
                       "metadata": {"name": "member1"},
                       "spec": {"syncMode": "Push", "apiEndpoint": "http://127.0.0.1:9"}})  # fmt: skip
        deadline = time.monotonic() + 10
        while "cluster_sync_status_duration_seconds_count" not in (text := _scrape(client)):
            assert time.monotonic() < deadline, text
            time.sleep(0.05)
    finally:
        hub.stop()
    assert 'cluster_ready_state{member_cluster="member1"} 0.0' in text
    assert "process_cpu_seconds_total" in text


def _scrape(client: Client) -> str:
    response = client.get_raw("/metrics")
    assert response.headers["content-type"].startswith("text/plain")
    return response.text


def test_placements_are_timed_from_scheduling_to_bound_decisions() -> None:
    simulation = Simulation(load(str(EXAMPLES / "ocm-placement-taints.yaml")))
    assert simulation.run().failed == 0
    got = samples(simulation.driver.manager.metrics)
    name = (("name", "placement_scheduling"),)
    # OCM's names: subsystem "scheduling", then the metric's own name.
    scheduled = got[("scheduling_scheduling_duration_seconds_count", name)]
    assert scheduled == got[("scheduling_bind_duration_seconds_count", name)] > 0
