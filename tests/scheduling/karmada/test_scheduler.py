"""karmada-scheduler as a controller: a ControllerManager and VirtualDriver over a MemoryStore."""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest

from fleetwarden.api.registry import REGISTRY
from fleetwarden.runtime.clock import VirtualClock
from fleetwarden.runtime.manager import ControllerManager, VirtualDriver
from fleetwarden.runtime.settings import Settings
from fleetwarden.scheduling.karmada import scheduler_controller
from fleetwarden.scheduling.karmada.scheduler import (
    POLICY_PLACEMENT_ANNOTATION,
    placement_changed,
    placement_json,
    replicas_changed,
)
from fleetwarden.store import MemoryStore

from .helpers import DYNAMIC, SEED_DIVIDED, SEED_DUPLICATED, placement, spec, weights

CLUSTER = REGISTRY.info("cluster.karmada.io/v1alpha1", "Cluster")
RB = REGISTRY.info("work.karmada.io/v1alpha2", "ResourceBinding")
CRB = REGISTRY.info("work.karmada.io/v1alpha2", "ClusterResourceBinding")
EVENT = REGISTRY.info("v1", "Event")
PP_LABEL = {"propagationpolicy.karmada.io/permanent-id": "pp-1"}
NOT_READY = {"key": "cluster.karmada.io/not-ready", "effect": "NoSchedule"}
APPS = [{"groupVersion": "apps/v1", "resources": [{"name": "deployments", "kind": "Deployment"}]}]


class Hub:
    """A store, the scheduler in a manager, and helpers to write what other controllers do."""

    def __init__(self, settings: Settings | None = None) -> None:
        self.clock = VirtualClock()
        uids = itertools.count(1)
        self.store = MemoryStore(now=self.clock.now, new_uid=lambda: f"uid-{next(uids)}")
        manager = ControllerManager(self.store, self.clock, settings)
        manager.add(scheduler_controller())
        self.driver = VirtualDriver(manager)

    def cluster(
        self,
        name: str,
        *,
        labels: dict[str, str] | None = None,
        taints: list[Any] | None = None,
        pods: int = 100,
    ) -> None:
        stored = self.store.create({
            "apiVersion": "cluster.karmada.io/v1alpha1", "kind": "Cluster",
            "metadata": {"name": name, "labels": labels or {}},
            "spec": {"syncMode": "Push", **({"taints": taints} if taints else {})},
        })  # fmt: skip
        stored["status"] = {
            "apiEnablements": APPS,
            "conditions": [{"type": "CompleteAPIEnablements", "status": "True", "reason": "Complete",
                            "message": "", "lastTransitionTime": "2025-01-01T00:00:00Z"}],
            "resourceSummary": {"allocatable": {"pods": str(pods)}},
        }  # fmt: skip
        self.store.update(stored, subresource="status")

    def edit_cluster(self, name: str, **spec_or_labels: Any) -> None:
        obj = self.store.get(CLUSTER, name)
        if "labels" in spec_or_labels:
            obj["metadata"]["labels"] = spec_or_labels.pop("labels")
        obj["spec"].update(spec_or_labels)
        self.store.update(obj)

    def binding(
        self, name: str, placement: dict[str, Any], replicas: int = 2, **extra: Any
    ) -> None:
        meta = {"name": name, "namespace": "default", "labels": extra.pop("labels", PP_LABEL)}
        meta.update(extra.pop("meta", {}))
        self.store.create({
            "apiVersion": "work.karmada.io/v1alpha2", "kind": "ResourceBinding", "metadata": meta,
            "spec": {
                "resource": {"apiVersion": "apps/v1", "kind": "Deployment", "namespace": "default",
                             "name": name, "uid": f"template-{name}"},
                "replicas": replicas, "placement": placement, **extra,
            },
        })  # fmt: skip

    def get(self, name: str) -> dict[str, Any]:
        return self.store.get(RB, name, "default")

    def edit(self, name: str, **spec: Any) -> None:
        obj = self.get(name)
        obj["spec"].update(spec)
        self.store.update(obj)

    def evict(self, name: str, cluster: str) -> None:
        """What the taint manager does: the cluster leaves the result for an eviction task."""
        obj = self.get(name)
        obj["spec"]["clusters"] = [c for c in obj["spec"]["clusters"] if c["name"] != cluster]
        obj["spec"]["gracefulEvictionTasks"] = [
            {"fromCluster": cluster, "reason": "TaintUntolerated", "producer": "TaintManager"}
        ]
        self.store.update(obj)

    def targets(self, name: str) -> dict[str, int]:
        return {
            c["name"]: c.get("replicas", 0) for c in self.get(name)["spec"].get("clusters") or []
        }

    def scheduled(self, name: str) -> dict[str, Any]:
        conditions = self.get(name).get("status", {}).get("conditions") or []
        return next(c for c in conditions if c["type"] == "Scheduled")

    def events(self, kind: str = "ResourceBinding") -> list[tuple[str, str, str]]:
        items = self.store.list(EVENT).items
        return [
            (e["type"], e["reason"], e["message"])
            for e in items
            if e["involvedObject"]["kind"] == kind
        ]


@pytest.fixture
def hub() -> Iterator[Hub]:
    h = Hub()
    with h.driver:
        yield h


def members(hub: Hub, count: int = 5) -> None:
    for i in range(1, count + 1):
        hub.cluster(f"member{i}")


def test_seed_duplicated(hub: Hub) -> None:
    members(hub)
    hub.binding("nginx", SEED_DUPLICATED, replicas=2)
    hub.driver.settle()
    assert hub.targets("nginx") == {"member1": 2, "member2": 2}
    rb = hub.get("nginx")
    assert rb["status"]["schedulerObservedGeneration"] == rb["metadata"]["generation"]
    assert rb["metadata"]["annotations"][POLICY_PLACEMENT_ANNOTATION] == placement_json(
        placement(SEED_DUPLICATED)
    )
    assert hub.scheduled("nginx")["reason"] == "Success"
    success = (
        "Normal",
        "ScheduleBindingSucceed",
        "Binding has been scheduled successfully. Result: {member1:2, member2:2}",
    )
    assert hub.events() == [success] and hub.events("Deployment") == [success]

    hub.edit_cluster("member2", taints=[NOT_READY])
    hub.evict("nginx", "member2")
    hub.driver.settle()
    # member1 keeps its workload; member3 or member5 (names break the tie) joins it.
    assert hub.targets("nginx") == {"member1": 2, "member3": 2}


def test_seed_divided(hub: Hub) -> None:
    members(hub, 2)
    hub.binding("nginx", SEED_DIVIDED, replicas=3)
    hub.driver.settle()
    assert hub.targets("nginx") == {"member1": 1, "member2": 2}
    hub.edit_cluster("member1", taints=[NOT_READY])
    hub.evict("nginx", "member1")
    hub.driver.settle()
    assert hub.targets("nginx") == {"member2": 3}


def test_no_cluster_fits(hub: Hub) -> None:
    hub.cluster("member1", taints=[{"key": "gpu", "value": "true", "effect": "NoSchedule"}])
    hub.cluster("member2", taints=[{"key": "gpu", "value": "true", "effect": "NoSchedule"}])
    hub.cluster("member3")
    hub.binding("nginx", {"clusterAffinity": {"clusterNames": ["member1", "member2"]}})
    hub.driver.settle()
    message = (
        "0/3 clusters are available: 1 cluster(s) did not match the placement cluster affinity constraint, "
        "2 cluster(s) had untolerated taint {gpu=true:NoSchedule}."
    )
    assert hub.scheduled("nginx") | {"lastTransitionTime": None} == {
        "type": "Scheduled", "status": "False", "reason": "NoClusterFit", "message": message,
        "lastTransitionTime": None,
    }  # fmt: skip
    assert hub.targets("nginx") == {}
    assert hub.events() == [("Warning", "ScheduleBindingFailed", message)]
    assert hub.driver.next_timer() is None  # final: not retried


def test_no_cluster_fits_clears_the_result(hub: Hub) -> None:
    members(hub, 2)
    hub.binding("nginx", {"clusterAffinity": {"clusterNames": ["member1"]}})
    hub.driver.settle()
    assert hub.targets("nginx") == {"member1": 2}
    hub.edit("nginx", placement={"clusterAffinity": {"clusterNames": ["member9"]}})
    hub.driver.settle()
    assert hub.targets("nginx") == {} and hub.scheduled("nginx")["reason"] == "NoClusterFit"


def test_unschedulable_waits_and_retries(hub: Hub) -> None:
    hub.cluster("member1", pods=2)
    hub.binding("nginx", {"replicaScheduling": DYNAMIC}, replicas=5)
    hub.driver.settle()
    condition = hub.scheduled("nginx")
    assert (condition["reason"], condition["message"]) == (
        "Unschedulable",
        "failed to assign replicas: failed to scale up: Clusters available replicas 2 are not enough to schedule.",
    )
    assert hub.driver.next_timer() == hub.clock.now() + timedelta(minutes=5)


def test_cluster_affinities_fall_back_in_order_and_stay(hub: Hub) -> None:
    hub.cluster("member1", taints=[NOT_READY])
    hub.cluster("member2")
    affinities = {"clusterAffinities": [
        {"affinityName": "primary", "clusterNames": ["member1"]},
        {"affinityName": "backup", "clusterNames": ["member2"]},
    ]}  # fmt: skip
    hub.binding("nginx", affinities)
    hub.driver.settle()
    assert hub.targets("nginx") == {"member2": 2}
    assert hub.get("nginx")["status"]["schedulerObservingAffinityName"] == "backup"
    assert hub.events()[0] == (
        "Warning", "ScheduleBindingFailed",
        "failed to schedule ResourceBinding(default/nginx) with clusterAffiliates index(0): "
        "0/2 clusters are available: 1 cluster(s) did not match the placement cluster affinity constraint, "
        "1 cluster(s) had untolerated taint {cluster.karmada.io/not-ready:NoSchedule}.",
    )  # fmt: skip
    # member1 recovers: scheduling starts again from the observed term, which still fits.
    hub.edit_cluster("member1", taints=[])
    hub.driver.settle()
    assert hub.targets("nginx") == {"member2": 2}


def test_cluster_label_change_reschedules_duplicated(hub: Hub) -> None:
    hub.cluster("member1", labels={"env": "prod"})
    hub.cluster("member2")
    hub.binding("nginx", {"clusterAffinity": {"labelSelector": {"matchLabels": {"env": "prod"}}}})
    hub.driver.settle()
    assert hub.targets("nginx") == {"member1": 2}
    hub.edit_cluster("member2", labels={"env": "prod"})
    hub.driver.settle()
    assert hub.targets("nginx") == {"member1": 2, "member2": 2}


def test_status_updates_do_not_reschedule(hub: Hub) -> None:
    members(hub, 2)
    hub.binding("nginx", SEED_DIVIDED, replicas=3)
    hub.driver.settle()
    before = hub.get("nginx")
    hub.clock.advance(timedelta(minutes=1))
    before["status"]["aggregatedStatus"] = [{"clusterName": "member1", "applied": True}]
    hub.store.update(before, subresource="status")
    hub.edit_cluster("member2")  # nothing changes
    hub.driver.settle()
    after = hub.get("nginx")
    assert after["status"]["lastScheduledTime"] == before["status"]["lastScheduledTime"]
    assert len(hub.events()) == 1


@pytest.mark.parametrize(
    "extra",
    [
        pytest.param({"labels": {}}, id="no policy label"),
        pytest.param({"schedulerName": "other-scheduler"}, id="another scheduler"),
        pytest.param({"suspension": {"scheduling": True}}, id="scheduling suspended"),
    ],
)
def test_bindings_not_ours_are_left_alone(hub: Hub, extra: dict[str, Any]) -> None:
    members(hub, 1)
    hub.binding("nginx", {}, **extra)
    hub.driver.settle()
    assert hub.targets("nginx") == {} and "status" not in hub.get("nginx")


def test_placement_change_and_scale(hub: Hub) -> None:
    members(hub, 2)
    hub.binding("nginx", SEED_DIVIDED, replicas=3)
    hub.driver.settle()
    hub.edit(
        "nginx",
        placement={**SEED_DIVIDED, "replicaScheduling": weights(("member1", 1), ("member2", 1))},
    )
    hub.driver.settle()
    assert hub.targets("nginx") == {"member1": 2, "member2": 1}
    hub.edit("nginx", replicas=4)
    hub.driver.settle()
    assert hub.targets("nginx") == {"member1": 2, "member2": 2}
    rb = hub.get("nginx")
    assert rb["status"]["schedulerObservedGeneration"] == rb["metadata"]["generation"]


def test_dynamic_scale_keeps_assignments_steady(hub: Hub) -> None:
    hub.cluster("member1", pods=10)
    hub.cluster("member2", pods=30)
    hub.binding("nginx", {"replicaScheduling": DYNAMIC}, replicas=4)
    hub.driver.settle()
    assert hub.targets("nginx") == {"member1": 1, "member2": 3}
    hub.edit("nginx", replicas=8)
    hub.driver.settle()
    assert hub.targets("nginx") == {"member1": 2, "member2": 6}
    hub.edit("nginx", replicas=4)
    hub.driver.settle()
    assert hub.targets("nginx") == {"member1": 1, "member2": 3}


def test_deleting_binding_is_skipped(hub: Hub) -> None:
    members(hub, 1)
    hub.binding("nginx", {}, meta={"finalizers": ["karmada.io/binding-controller"]})
    hub.driver.settle()
    hub.store.delete(RB, "nginx", "default")
    hub.driver.settle()
    assert hub.events()[-1] == (
        "Warning",
        "ScheduleBindingFailed",
        "skip schedule deleting resourceBinding: default/nginx",
    )


def test_cluster_resource_binding(hub: Hub) -> None:
    members(hub, 2)
    hub.store.create({
        "apiVersion": "work.karmada.io/v1alpha2", "kind": "ClusterResourceBinding",
        "metadata": {"name": "reader", "labels": {"clusterpropagationpolicy.karmada.io/permanent-id": "c"}},
        "spec": {"resource": {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "name": "reader"},
                 "placement": {"clusterAffinity": {"clusterNames": ["member2"]}}},
    })  # fmt: skip
    hub.driver.settle()
    crb = hub.store.get(CRB, "reader")
    assert crb["spec"].get("clusters") is None  # member2 lacks the ClusterRole API
    assert hub.events("ClusterResourceBinding") == [
        ("Warning", "ScheduleBindingFailed", "0/2 clusters are available: 1 cluster(s) did not have the API resource, "
         "1 cluster(s) did not match the placement cluster affinity constraint.")
    ]  # fmt: skip


# --- helpers (helper.go, util) ------------------------------------------------------------------


def test_placement_changed() -> None:
    base = placement(SEED_DUPLICATED)
    applied = placement_json(base)
    assert placement_changed(base, "", "")
    assert not placement_changed(base, applied, "")
    assert not placement_changed(base, "{not json", "")
    moved = placement(
        {**SEED_DUPLICATED, "clusterTolerations": [{"key": "k", "operator": "Exists"}]}
    )
    assert placement_changed(moved, applied, "")
    terms = {
        "clusterAffinities": [
            {"affinityName": "a", "clusterNames": ["m1"]},
            {"affinityName": "b", "clusterNames": ["m2"]},
        ]
    }
    changed_b = {
        "clusterAffinities": [
            {"affinityName": "a", "clusterNames": ["m1"]},
            {"affinityName": "b", "clusterNames": ["m3"]},
        ]
    }
    applied_terms = placement_json(placement(terms))
    assert not placement_changed(
        placement(changed_b), applied_terms, "a"
    )  # only another term changed
    assert placement_changed(placement(changed_b), applied_terms, "b")
    assert placement_changed(placement(changed_b), applied_terms, "")


@pytest.mark.parametrize(
    ("strategy", "replicas", "clusters", "changed"),
    [
        (None, 3, [("m1", 1)], False),
        ({"replicaSchedulingType": "Duplicated"}, 3, [("m1", 3), ("m2", 3)], False),
        ({"replicaSchedulingType": "Duplicated"}, 3, [("m1", 3), ("m2", 2)], True),
        ({"replicaSchedulingType": "Divided"}, 3, [("m1", 1), ("m2", 2)], False),
        ({"replicaSchedulingType": "Divided"}, 3, [("m2", 2)], True),
        ({"replicaSchedulingType": "Divided"}, 3, [], True),
    ],
)
def test_replicas_changed(
    strategy: dict[str, Any] | None, replicas: int, clusters: list[tuple[str, int]], changed: bool
) -> None:
    binding = spec(
        {"replicaScheduling": strategy} if strategy else {}, replicas=replicas, clusters=clusters
    )
    assert (
        replicas_changed(
            binding, binding.placement.replica_scheduling if binding.placement else None
        )
        is changed
    )


def _restarted(hub: Hub, *, resume: bool) -> VirtualDriver:
    """Another scheduler over the same store, a minute on: started afresh, or resuming the
    running one (what-if's restore)."""
    hub.clock.advance(timedelta(minutes=1))
    manager = ControllerManager(hub.store, hub.clock)
    manager.add(scheduler_controller())
    driver = VirtualDriver(manager)
    driver.start(resume=resume)
    return driver


def _binding_events(hub: Hub) -> Counter[str]:
    """How many times each reason was recorded on a ResourceBinding (Events and counts)."""
    counts: Counter[str] = Counter()
    for event in hub.store.list(EVENT).items:
        if event["involvedObject"]["kind"] == "ResourceBinding":
            counts[event["reason"]] += event.get("count", 1)
    return counts


@pytest.mark.parametrize("resume", [False, True], ids=["restarted", "resumed"])
def test_a_resumed_scheduler_knows_what_it_scheduled(hub: Hub, resume: bool) -> None:
    members(hub, 2)
    hub.cluster("small", labels={"size": "small"}, pods=1)
    hub.binding("nginx", SEED_DUPLICATED)
    hub.binding("big", {"clusterAffinity": {"clusterNames": ["small"]},
                        "replicaScheduling": DYNAMIC}, replicas=5)  # fmt: skip
    hub.driver.settle()
    hub.driver.stop()
    scheduled = hub.get("nginx")["status"]["lastScheduledTime"]
    assert hub.scheduled("big")["reason"] == "Unschedulable"
    before = _binding_events(hub)
    driver = _restarted(hub, resume=resume)
    driver.settle()
    # A restart schedules every Duplicated binding again (upstream's doScheduleBinding);
    # the running scheduler has nothing to do for one scheduled at its generation.
    moved = hub.get("nginx")["status"]["lastScheduledTime"] != scheduled
    assert moved is not resume
    after = _binding_events(hub)
    assert after["ScheduleBindingSucceed"] - before["ScheduleBindingSucceed"] == (not resume)
    # Either way the binding whose attempt failed is tried again at once.
    assert after["ScheduleBindingFailed"] > before["ScheduleBindingFailed"]
    hub.edit("nginx", replicas=3)  # a new generation is scheduled, resumed or not
    driver.settle()
    assert hub.targets("nginx") == {"member1": 3, "member2": 3}
    driver.stop()
