"""The ManifestWorkReplicaSet controller over Placements and their decisions as the
placement controller writes them. Cases after ocm pkg/work/hub/controllers/
manifestworkreplicasetcontroller/*_test.go and test/integration/work/
manifestworkreplicaset_test.go."""

from __future__ import annotations

import itertools
from typing import Any

from fleetwarden.admission import default_chain
from fleetwarden.api.errors import NotFound
from fleetwarden.api.registry import REGISTRY
from fleetwarden.controllers.ocm.manifest_work_replica_set import (
    MANIFEST_WORK,
    PLACEMENT,
    PLACEMENT_DECISION,
    REPLICA_SET,
    manifest_work_replica_set_controller,
)
from fleetwarden.runtime.clock import VirtualClock
from fleetwarden.runtime.manager import ControllerManager, VirtualDriver
from fleetwarden.store import MemoryStore

Obj = dict[str, Any]
NS = "default"
OWNER = "work.open-cluster-management.io/manifestworkreplicaset"
PLACEMENT_NAME = "work.open-cluster-management.io/placementname"


def config_map(version: str) -> Obj:
    return {"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "cm", "namespace": "default"}, "data": {"v": version}}  # fmt: skip


class Hub:
    def __init__(self) -> None:
        self.clock = VirtualClock()
        uids = itertools.count(1)
        self.store = MemoryStore(now=self.clock.now, new_uid=lambda: f"uid-{next(uids)}")
        manager = ControllerManager(self.store, self.clock)
        manager.add(manifest_work_replica_set_controller())
        self.driver = VirtualDriver(manager)
        self.driver.start()

    def placement(self, name: str, *clusters: str) -> None:
        """A Placement and its one decision, as the scheduler writes them."""
        placement = self.store.create({"apiVersion": PLACEMENT.api_version, "kind": "Placement",
                                        "metadata": {"name": name, "namespace": NS}, "spec": {}})  # fmt: skip
        status = {"numberOfSelectedClusters": len(clusters),
                  "decisionGroups": [{"decisionGroupIndex": 0, "decisionGroupName": "",
                                      "decisions": [f"{name}-decision-1"],
                                      "clustersCount": len(clusters)}]}  # fmt: skip
        self.store.update({**placement, "status": status}, subresource="status")
        labels = {"cluster.open-cluster-management.io/placement": name,
                  "cluster.open-cluster-management.io/decision-group-index": "0",
                  "cluster.open-cluster-management.io/decision-group-name": ""}  # fmt: skip
        decision = self.store.create(
            {"apiVersion": PLACEMENT_DECISION.api_version, "kind": "PlacementDecision",
             "metadata": {"name": f"{name}-decision-1", "namespace": NS, "labels": labels}}
        )  # fmt: skip
        self.decide(name, *clusters, current=decision)

    def decide(self, name: str, *clusters: str, current: Obj | None = None) -> None:
        decision = current or self.store.get(PLACEMENT_DECISION, f"{name}-decision-1", NS)
        decisions = [{"clusterName": c, "reason": ""} for c in clusters]
        self.store.update({**decision, "status": {"decisions": decisions}}, subresource="status")
        self.driver.settle()

    def replica_set(self, *placements: str, version: str = "1", **spec: Any) -> None:
        obj = {"apiVersion": REPLICA_SET.api_version, "kind": "ManifestWorkReplicaSet",
               "metadata": {"name": "mwrs", "namespace": NS},
               "spec": {"placementRefs": [{"name": p} for p in placements],
                        "manifestWorkTemplate": {"workload": {"manifests": [config_map(version)]}},
                        **spec}}  # fmt: skip
        try:
            current = self.store.get(REPLICA_SET, "mwrs", NS)
        except NotFound:
            self.store.create(default_chain().admit(obj, now=self.clock.now()).to_dict())
        else:
            given = {**current, "spec": obj["spec"]}
            old = REGISTRY.decode(current)
            self.store.update(default_chain().admit(given, old, now=self.clock.now()).to_dict())
        self.driver.settle()

    def works(self) -> list[Obj]:
        return list(self.store.list(MANIFEST_WORK).items)

    def status(self) -> Obj:
        return dict(self.store.get(REPLICA_SET, "mwrs", NS).get("status", {}))


def clusters(works: list[Obj]) -> list[str]:
    return sorted(w["metadata"]["namespace"] for w in works)


def reasons(status: Obj) -> dict[str, tuple[str, str]]:
    return {c["type"]: (c["status"], c["reason"]) for c in status.get("conditions", [])}


def test_one_work_per_decided_cluster_labelled_and_named_after_the_replica_set() -> None:
    hub = Hub()
    hub.placement("p1", "cluster1", "cluster2")
    hub.replica_set("p1")
    works = hub.works()
    assert clusters(works) == ["cluster1", "cluster2"]
    for work in works:
        assert work["metadata"]["name"].startswith("mwrs")
        assert work["metadata"]["labels"] == {OWNER: "default.mwrs", PLACEMENT_NAME: "p1"}
        assert work["spec"]["workload"]["manifests"] == [config_map("1")]
    status = hub.status()
    assert status["summary"]["total"] == 2
    assert status["placementSummary"] == [{
        "name": "p1", "availableDecisionGroups": "1 (2 / 2 clusters applied)",
        "summary": {"total": 2, "progressing": 0, "available": 0, "degraded": 0, "applied": 0},
    }]  # fmt: skip
    assert reasons(status) == {
        "PlacementVerified": ("True", "AsExpected"),
        "PlacementRolledOut": ("False", "Progressing"),
        "ManifestworkApplied": ("False", "NotAsExpected"),
    }


def test_a_cluster_leaving_the_decisions_loses_its_work() -> None:
    hub = Hub()
    hub.placement("p1", "cluster1", "cluster2")
    hub.replica_set("p1")
    hub.decide("p1", "cluster2", "cluster3")
    assert clusters(hub.works()) == ["cluster2", "cluster3"]


def test_a_placement_leaving_the_spec_loses_its_works() -> None:
    hub = Hub()
    hub.placement("p1", "cluster1")
    hub.placement("p2", "cluster2")
    hub.replica_set("p1", "p2")
    assert clusters(hub.works()) == ["cluster1", "cluster2"]
    hub.replica_set("p2")
    assert clusters(hub.works()) == ["cluster2"]


def test_a_new_template_updates_each_work_in_place() -> None:
    hub = Hub()
    hub.placement("p1", "cluster1")
    hub.replica_set("p1")
    (before,) = hub.works()
    hub.replica_set("p1", version="2")
    (after,) = hub.works()
    assert after["metadata"]["name"] == before["metadata"]["name"]
    assert after["metadata"]["generation"] == before["metadata"]["generation"] + 1
    assert after["spec"]["workload"]["manifests"] == [config_map("2")]


def test_a_missing_placement_or_no_decided_cluster_is_reported() -> None:
    hub = Hub()
    hub.replica_set("nowhere")
    assert reasons(hub.status())["PlacementVerified"] == ("False", "PlacementDecisionNotFound")
    assert hub.works() == []
    hub.placement("empty")
    hub.replica_set("empty")
    assert reasons(hub.status())["PlacementVerified"] == ("False", "PlacementDecisionEmpty")
    assert reasons(hub.status())["ManifestworkApplied"] == ("False", "PlacementDecisionEmpty")


def test_deleting_the_replica_set_deletes_its_works() -> None:
    hub = Hub()
    hub.placement("p1", "cluster1")
    hub.replica_set("p1")
    hub.store.delete(REPLICA_SET, "mwrs", NS)
    hub.driver.settle()
    assert hub.works() == []
    assert hub.store.list(REPLICA_SET, NS).items == []


def test_foreground_deletion_waits_for_the_works_to_be_gone() -> None:
    hub = Hub()
    hub.placement("p1", "cluster1")
    hub.replica_set("p1", cascadeDeletionPolicy="Foreground")
    (work,) = hub.works()
    held = {**work, "metadata": {**work["metadata"], "finalizers": ["agent/cleanup"]}}
    hub.store.update(held)  # as the work agent's finalizer holds it
    hub.store.delete(REPLICA_SET, "mwrs", NS)
    hub.driver.settle()
    (terminating,) = hub.works()
    assert terminating["metadata"]["deletionTimestamp"]
    assert hub.store.get(REPLICA_SET, "mwrs", NS)["metadata"]["deletionTimestamp"]
    hub.store.update({**terminating, "metadata": {**terminating["metadata"], "finalizers": []}})
    hub.driver.settle()
    assert hub.store.list(REPLICA_SET, NS).items == []
