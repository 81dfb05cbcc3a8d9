"""Fleet protection: each region's state as kube's ComputeZoneState has a zone's, the status
ConfigMap, its Events and gauges, and the taint manager's evictions paced by it (the
region disruption controller and the taint manager alone over a store, clusters' Ready
conditions written as their status controllers would)."""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterator
from datetime import datetime, timedelta
from typing import Any

import pytest
from failover_harness import FAILOVER, toleration
from hub_harness import CLUSTER, EVENT, RB

from fleetwarden.api.errors import NotFound
from fleetwarden.api.meta import format_time
from fleetwarden.controllers.karmada.eviction import POLICY_PLACEMENT_ANNOTATION
from fleetwarden.controllers.karmada.region_disruption import (
    CONFIG_MAP,
    STATUS_NAME,
    RegionStatus,
    describe_region,
    region_disruption_controller,
)
from fleetwarden.controllers.karmada.taint_manager import taint_manager_controller
from fleetwarden.runtime.clock import VirtualClock
from fleetwarden.runtime.manager import ControllerManager, VirtualDriver
from fleetwarden.runtime.metrics import Metrics
from fleetwarden.runtime.settings import FlagValue, Settings
from fleetwarden.semantics.region_disruption import (
    Pace,
    RegionState,
    hub_disrupted,
    region_pace,
    region_state,
)
from fleetwarden.store import MemoryStore

S = timedelta(seconds=1)
Obj = dict[str, Any]
NORMAL, PARTIAL, FULL = (
    RegionState.NORMAL,
    RegionState.PARTIAL_DISRUPTION,
    RegionState.FULL_DISRUPTION,
)
UNREACHABLE = "cluster.karmada.io/unreachable"


# --- ComputeZoneState, setLimiterInZone --------------------------------------------------------


@pytest.mark.parametrize(
    ("ready", "not_ready", "state"),
    [
        pytest.param(3, 0, NORMAL, id="all Ready"),
        pytest.param(0, 1, FULL, id="the one cluster not Ready"),
        pytest.param(0, 5, FULL, id="none Ready"),
        pytest.param(1, 2, NORMAL, id="two not Ready never slow: kube wants more than two"),
        pytest.param(1, 3, PARTIAL, id="three of four"),
        pytest.param(3, 3, NORMAL, id="half, under the 0.55 threshold"),
        pytest.param(9, 11, PARTIAL, id="exactly the threshold counts"),
        pytest.param(0, 0, NORMAL, id="no cluster"),
    ],
)  # fmt: skip
def test_region_state(ready: int, not_ready: int, state: RegionState) -> None:
    assert region_state(ready, not_ready, 0.55) == state


@pytest.mark.parametrize(
    ("state", "size", "hub", "pace"),
    [
        pytest.param(NORMAL, 4, False, Pace.NORMAL, id="normal"),
        pytest.param(FULL, 4, False, Pace.NORMAL, id="a region really lost: the normal rate"),
        pytest.param(PARTIAL, 11, False, Pace.SLOWED, id="large, partly down: secondary rate"),
        pytest.param(PARTIAL, 10, False, Pace.STOPPED, id="not larger than the threshold: none"),
        pytest.param(FULL, 4, True, Pace.STOPPED, id="every region down: none"),
    ],
)  # fmt: skip
def test_region_pace(state: RegionState, size: int, hub: bool, pace: Pace) -> None:
    assert region_pace(state, size, 10, hub_disrupted=hub) == pace


def test_hub_disrupted_only_when_every_region_is_fully_down() -> None:
    assert hub_disrupted([FULL, FULL])
    assert not hub_disrupted([FULL, PARTIAL])
    assert not hub_disrupted([])


# --- the controller and the taint manager over a store -----------------------------------------


class Fleet:
    """Clusters by region, the region disruption controller and the taint manager."""

    def __init__(self, flags: dict[str, FlagValue] | None = None) -> None:
        self.clock = VirtualClock()
        uids = itertools.count(1)
        self.store = MemoryStore(now=self.clock.now, new_uid=lambda: f"uid-{next(uids)}")
        self.metrics = Metrics()
        settings = Settings.from_flags({**FAILOVER, **(flags or {})})
        manager = ControllerManager(self.store, self.clock, settings, self.metrics)
        manager.add(region_disruption_controller())
        manager.add(taint_manager_controller())
        self.driver = VirtualDriver(manager)

    def clusters(self, region: str | None, *names: str) -> None:
        for name in names:
            spec: Obj = {"syncMode": "Push", **({"region": region} if region else {})}
            cluster = self.store.create(
                {"apiVersion": CLUSTER.api_version, "kind": "Cluster",
                 "metadata": {"name": name}, "spec": spec}
            )  # fmt: skip
            cluster["status"] = {"conditions": [_ready("True", self.clock.now())]}
            self.store.update(cluster, subresource="status")

    def ready(self, status: str, *names: str, taint: bool = True) -> None:
        """Ready turns `status`; a cluster not Ready is tainted unreachable:NoExecute (as a
        ClusterTaintPolicy would), a Ready one loses the taint."""
        now = self.clock.now()
        for name in names:
            cluster = self.store.get(CLUSTER, name)
            cluster.setdefault("status", {})["conditions"] = [_ready(status, now)]
            cluster = self.store.update(cluster, subresource="status")
            if taint:
                down = status != "True"
                cluster["spec"]["taints"] = (
                    [{"key": UNREACHABLE, "effect": "NoExecute", "timeAdded": format_time(now)}]
                    if down else None
                )  # fmt: skip
                self.store.update(cluster)
        self.driver.settle()

    def binding(self, name: str, clusters: list[str], *tolerations: Obj) -> None:
        placement = {"clusterAffinity": {"clusterNames": clusters},
                     "clusterTolerations": list(tolerations)}  # fmt: skip
        self.store.create(
            {"apiVersion": RB.api_version, "kind": RB.kind,
             "metadata": {"name": name, "namespace": "default",
                          "annotations": {POLICY_PLACEMENT_ANNOTATION: json.dumps(placement)}},
             "spec": {"resource": {"apiVersion": "apps/v1", "kind": "Deployment",
                                   "namespace": "default", "name": name},
                      "clusters": [{"name": c, "replicas": 1} for c in clusters]}}
        )  # fmt: skip

    def on(self, binding: str) -> list[str]:
        spec = self.store.get(RB, binding, "default")["spec"]
        return [c["name"] for c in spec.get("clusters") or []]

    def status(self) -> RegionStatus:
        try:
            stored = self.store.get(CONFIG_MAP, STATUS_NAME, "karmada-system")
        except NotFound:
            return RegionStatus()
        from fleetwarden.api.registry import REGISTRY

        return RegionStatus.of(REGISTRY.decode(stored))

    def events(self, reason: str) -> list[str]:
        items = self.store.list(EVENT).items
        return [e["message"] for e in items if e["reason"] == reason]

    def gauge(self, name: str, region: str) -> float | None:
        sample = f"cluster_collector_{name}"
        return self.metrics.registry.get_sample_value(sample, {"region": region})

    def run(self, seconds: float) -> None:
        self.driver.run_until(self.clock.now() + timedelta(seconds=seconds))


def _ready(status: str, now: datetime) -> Obj:
    return {"type": "Ready", "status": status, "reason": "Probe", "message": "",
            "lastTransitionTime": format_time(now)}  # fmt: skip


@pytest.fixture
def fleet() -> Iterator[Fleet]:
    hub = Fleet()
    hub.clusters("eu", "eu-1", "eu-2", "eu-3", "eu-4")
    hub.clusters("us", "us-1", "us-2")
    with hub.driver:
        hub.driver.settle()
        yield hub


def test_a_fleet_never_disrupted_has_no_status_but_its_gauges(fleet: Fleet) -> None:
    fleet.ready("False", "eu-1", "eu-2")  # two down: still Normal
    with pytest.raises(NotFound):
        fleet.store.get(CONFIG_MAP, STATUS_NAME, "karmada-system")
    assert fleet.events("RegionStateChanged") == []
    assert (fleet.gauge("region_size", "eu"), fleet.gauge("region_health", "eu"),
            fleet.gauge("unhealthy_clusters_in_region", "eu")) == (4, 50, 2)  # fmt: skip
    assert fleet.gauge("region_health", "us") == 100


def test_a_region_partly_down_is_recorded_with_an_event(fleet: Fleet) -> None:
    fleet.run(60)
    fleet.ready("Unknown", "eu-1", "eu-2", "eu-3")
    status = fleet.status()
    eu = status.regions["eu"]
    assert (eu.state, eu.clusters, eu.not_ready, eu.pace, eu.eviction_rate) == (
        PARTIAL, 4, 3, Pace.STOPPED, 0.0,
    )  # fmt: skip
    assert status.regions["us"].state == NORMAL
    assert fleet.events("RegionStateChanged") == [
        "Region eu is now PartialDisruption (was Normal): 3 of 4 clusters not Ready; "
        "evictions stopped."
    ]
    assert describe_region("eu", status) == (
        "eu: PartialDisruption since 2025-01-01T00:01:00Z: 3 of 4 clusters not Ready; "
        "evictions stopped"
    )
    assert describe_region("ap", status) == "ap: Normal"
    fleet.ready("True", "eu-3")
    assert fleet.status().regions["eu"].state == NORMAL
    assert fleet.events("RegionStateChanged")[-1] == (
        "Region eu is now Normal (was PartialDisruption): 2 of 4 clusters not Ready; "
        "evictions at 0.5/s."
    )


def test_every_region_down_then_one_back(fleet: Fleet) -> None:
    fleet.ready("Unknown", "eu-1", "eu-2", "eu-3", "eu-4", "us-1", "us-2")
    assert fleet.status().hub_disrupted
    assert fleet.status().pace("eu") == Pace.STOPPED
    assert fleet.status().pace("unseen") == Pace.STOPPED
    assert len(fleet.events("HubDisruption")) == 1
    fleet.run(30)
    fleet.ready("True", "us-1")
    status = fleet.status()
    assert not status.hub_disrupted
    assert status.resumed_at == fleet.clock.now()
    assert (status.regions["eu"].state, status.pace("eu")) == (FULL, Pace.NORMAL)
    assert fleet.events("HubDisruptionEnded") == [
        "A region has Ready clusters again: evictions resume, and tolerationSeconds count from now."
    ]


def test_the_status_is_put_back_and_a_new_controller_goes_on_from_it(fleet: Fleet) -> None:
    fleet.ready("Unknown", "eu-1", "eu-2", "eu-3")
    written = fleet.status()
    fleet.store.delete(CONFIG_MAP, STATUS_NAME, "karmada-system")
    fleet.driver.settle()
    # Written anew, and the region's change announced again: the last state was lost.
    assert fleet.status().regions["eu"].state == PARTIAL
    assert len(fleet.events("RegionStateChanged")) == 2
    again = Fleet()
    again.store, again.clock = fleet.store, fleet.clock
    manager = ControllerManager(fleet.store, fleet.clock, Settings.from_flags(FAILOVER))
    manager.add(region_disruption_controller())
    with VirtualDriver(manager) as driver:
        driver.settle()
    assert fleet.status().regions["eu"] == written.regions["eu"]
    assert len(fleet.events("RegionStateChanged")) == 2  # nothing changed: no Event


def test_a_region_gone_reads_as_kube_reads_a_zone_gone(fleet: Fleet) -> None:
    fleet.ready("Unknown", "us-1")
    for name in ("us-1", "us-2"):
        fleet.store.delete(CLUSTER, name)
    fleet.driver.settle()
    assert (fleet.gauge("region_size", "us"), fleet.gauge("region_health", "us"),
            fleet.gauge("unhealthy_clusters_in_region", "us")) == (0, 100, 0)  # fmt: skip


def test_a_cluster_that_has_not_reported_yet_is_not_counted() -> None:
    hub = Fleet()
    with hub.driver:
        hub.store.create(
            {"apiVersion": CLUSTER.api_version, "kind": "Cluster",
             "metadata": {"name": "joining"}, "spec": {"syncMode": "Pull", "region": "eu"}}
        )  # fmt: skip
        hub.driver.settle()
        # The only cluster, and not Ready: counted, it would make every region down.
        assert hub.status() == RegionStatus()
        assert hub.events("HubDisruption") == []
        assert hub.gauge("region_size", "eu") is None
        hub.ready("Unknown", "joining", taint=False)
        assert hub.status().hub_disrupted


def test_clusters_without_a_region_form_one() -> None:
    hub = Fleet()
    hub.clusters(None, "a", "b", "c", "d")
    with hub.driver:
        hub.ready("False", "a", "b", "c", taint=False)
        assert hub.status().regions[""].state == PARTIAL
        assert describe_region("", hub.status()).startswith('"": PartialDisruption since')


# --- the taint manager's pace ------------------------------------------------------------------


def test_a_large_region_partly_down_is_evicted_from_at_the_secondary_rate() -> None:
    hub = Fleet({"large-cluster-num-threshold": 3})
    hub.clusters("eu", "eu-1", "eu-2", "eu-3", "eu-4")
    hub.clusters("us", "us-1", "us-2")
    with hub.driver:
        for name in ("b1", "b2", "b3"):
            hub.binding(name, ["eu-1", "us-1"])
        hub.binding("on-us", ["us-2", "us-1"])
        hub.driver.settle()
        hub.ready("Unknown", "eu-1", "eu-2", "eu-3")
        # A Ready cluster's own NoExecute taint is evicted from as upstream, in the kind's
        # queue: the slowed region's queue is another.
        hub.ready("True", "us-2")
        taint = {"key": "maintenance", "effect": "NoExecute"}
        us2 = hub.store.get(CLUSTER, "us-2")
        us2["spec"]["taints"] = [taint]
        hub.store.update(us2)
        hub.driver.settle()
        assert [hub.on(b) for b in ("b1", "b2", "b3", "on-us")] == [
            ["us-1"], ["eu-1", "us-1"], ["eu-1", "us-1"], ["us-1"],
        ]  # fmt: skip
        hub.run(9)
        assert hub.on("b2") == ["eu-1", "us-1"]
        assert hub.metrics.registry.get_sample_value(
            "eviction_queue_depth", {"name": "binding-eviction"}
        ) == 2  # fmt: skip
        hub.run(1)
        assert (hub.on("b2"), hub.on("b3")) == (["us-1"], ["eu-1", "us-1"])
        hub.run(10)
        assert hub.on("b3") == ["us-1"]


def test_a_small_region_partly_down_waits_for_its_state_to_change(fleet: Fleet) -> None:
    fleet.binding("b1", ["eu-1", "us-1"])
    fleet.ready("Unknown", "eu-1", "eu-2", "eu-3")
    fleet.run(3600)
    assert fleet.on("b1") == ["eu-1", "us-1"]
    assert fleet.metrics.registry.get_sample_value(
        "eviction_kind_total", {"member_cluster": "eu-1", "resource_kind": "ResourceBinding"}
    ) == 1  # fmt: skip
    fleet.ready("True", "eu-3")  # two of four down: Normal
    assert fleet.on("b1") == ["us-1"]


def test_a_ready_clusters_own_taint_is_not_held_by_its_region() -> None:
    hub = Fleet()
    hub.clusters("eu", "eu-1", "eu-2", "eu-3", "eu-4", "eu-5")
    with hub.driver:
        hub.binding("b1", ["eu-1"])
        hub.ready("Unknown", "eu-1", "eu-2", "eu-3", "eu-4")
        hub.run(60)
        assert hub.on("b1") == ["eu-1"]
        hub.ready("True", "eu-1", taint=False)  # back, its NoExecute taint kept
        assert hub.status().regions["eu"].pace == Pace.STOPPED  # three of five still down
        assert hub.on("b1") == []


def test_after_every_region_was_down_tolerations_count_from_the_resumption(fleet: Fleet) -> None:
    fleet.binding("tolerant", ["eu-1", "us-2"], toleration(UNREACHABLE, 60))
    fleet.binding("intolerant", ["eu-2", "us-2"])
    fleet.ready("Unknown", "eu-1", "eu-2", "eu-3", "eu-4", "us-1", "us-2")
    fleet.run(600)
    assert (fleet.on("tolerant"), fleet.on("intolerant")) == (["eu-1", "us-2"], ["eu-2", "us-2"])
    fleet.ready("True", "us-2")
    assert fleet.on("intolerant") == ["us-2"]  # untolerated: at once
    fleet.run(59)
    assert fleet.on("tolerant") == ["eu-1", "us-2"]  # its taint is 10 minutes old
    fleet.run(1)
    assert fleet.on("tolerant") == ["us-2"]


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        ({"secondary-resource-eviction-rate": "-0.1"},
         'invalid value -0.1 for setting "secondary-resource-eviction-rate": must be '
         "non-negative"),
        ({"unhealthy-cluster-threshold": "1.5"},
         'invalid value 1.5 for setting "unhealthy-cluster-threshold": must be between 0 '
         "and 1"),
        ({"large-cluster-num-threshold": "-1"},
         'invalid value -1 for setting "large-cluster-num-threshold": must be non-negative'),
    ],
)  # fmt: skip
def test_settings_refused(flags: dict[str, FlagValue], message: str) -> None:
    from fleetwarden.runtime.settings import SettingsError

    with pytest.raises(SettingsError) as refused:
        Settings.from_flags(flags)
    assert str(refused.value) == message
    assert refused.value.setting == next(iter(flags))


def test_settings_defaults() -> None:
    s = Settings()
    assert (s.secondary_resource_eviction_rate, s.unhealthy_cluster_threshold,
            s.large_cluster_num_threshold) == (0.1, 0.55, 10)  # fmt: skip
