"""A simulated member with nodes keeps every object a Work applies, not only its workloads:
created and updated as an API server writes them, listed with the member's objects, and
removed when the Work no longer lists them or goes (unless it preserves them)."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from fleetwarden.api.karmada.work import Work
from fleetwarden.members.inside.nodes import NodeSpec
from fleetwarden.members.simulated import MemberState, SimulatedCluster

from .test_member_nodes import T0, workload

LATER = T0 + timedelta(minutes=1)


def config_map(data: dict[str, str], **labels: str) -> dict[str, Any]:
    metadata = {"name": "settings", "namespace": "default", "labels": labels}
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": metadata, "data": data}


SERVICE = {"apiVersion": "v1", "kind": "Service",
           "metadata": {"name": "web", "namespace": "default"},
           "spec": {"selector": {"app": "web"}, "ports": [{"port": 80}]}}  # fmt: skip
CLAIM = {"apiVersion": "v1", "kind": "PersistentVolumeClaim",
         "metadata": {"name": "data", "namespace": "default"},
         "spec": {"accessModes": ["ReadWriteOnce"],
                  "resources": {"requests": {"storage": "1Gi"}}}}  # fmt: skip
ACCOUNT = {"apiVersion": "v1", "kind": "ServiceAccount",
           "metadata": {"name": "web", "namespace": "default"}}  # fmt: skip
WIDGET = {"apiVersion": "example.io/v1", "kind": "Widget",
          "metadata": {"name": "w", "namespace": "default"}, "spec": {"replicas": 3}}  # fmt: skip


def work(*manifests: dict[str, Any], uid: str = "w1", preserve: bool = False) -> Work:
    return Work.model_validate({
        "apiVersion": "work.karmada.io/v1alpha1", "kind": "Work",
        "metadata": {"name": "web", "namespace": "karmada-es-member1", "uid": uid,
                     "generation": 1},
        "spec": {"workload": {"manifests": list(manifests)},
                 "preserveResourcesOnDeletion": preserve},
    })  # fmt: skip


def member() -> SimulatedCluster:
    cluster = SimulatedCluster(MemberState(nodes=(NodeSpec("a"),)), api_enablements=[])
    cluster.sync(T0)
    return cluster


def listed(cluster: SimulatedCluster, kind: str) -> dict[str, dict[str, Any]]:
    assert cluster.kube is not None
    return {o["metadata"]["name"]: o for o in cluster.kube.objects(LATER) if o["kind"] == kind}


def test_every_manifest_of_a_work_is_created_inside_the_member() -> None:
    cluster = member()
    applied = cluster.apply(
        work(config_map({"mode": "fast"}), SERVICE, CLAIM, ACCOUNT, WIDGET,
             workload("Deployment", "web", 1)),
        T0,
    )  # fmt: skip

    settings = listed(cluster, "ConfigMap")["settings"]
    assert settings["data"] == {"mode": "fast"}
    metadata = settings["metadata"]
    assert (metadata["creationTimestamp"], metadata["generation"]) == ("2025-01-01T00:00:00Z", 1)
    assert metadata["uid"] and metadata["resourceVersion"]
    assert "status" not in settings  # a ConfigMap has none
    # Each its own identity, as an API server gives them.
    stored = [listed(cluster, kind) for kind in ("ConfigMap", "Service", "ServiceAccount")]
    uids = {o["metadata"]["uid"] for objects in stored for o in objects.values()}
    versions = {o["metadata"]["resourceVersion"] for objects in stored for o in objects.values()}
    assert len(uids) == len(versions) == 3

    service = listed(cluster, "Service")["web"]
    assert (service["spec"]["clusterIP"], service["spec"]["clusterIPs"]) == (
        "10.96.0.2", ["10.96.0.2"])  # fmt: skip
    assert service["status"] == {"loadBalancer": {}}
    assert listed(cluster, "PersistentVolumeClaim")["data"]["status"] == {"phase": "Pending"}
    # A custom resource: no controller runs it, so no status, whatever its spec says.
    assert "status" not in listed(cluster, "Widget")["w"]
    # The workload runs as before, beside them.
    assert [p["spec"]["nodeName"] for p in listed(cluster, "Pod").values()] == ["a"]
    # What the agent reads back, for the Work's status, is the member's object.
    kinds = ["ConfigMap", "Service", "PersistentVolumeClaim", "ServiceAccount", "Widget"]
    assert [o and o["kind"] for o in applied.objects] == [*kinds, "Deployment"]
    assert applied.objects[1] == service


def test_an_object_is_updated_in_place_and_its_generation_moves_with_its_content() -> None:
    cluster = member()
    cluster.apply(work(config_map({"mode": "fast"}), SERVICE), T0)
    before = listed(cluster, "ConfigMap")["settings"]["metadata"]
    ip = listed(cluster, "Service")["web"]["spec"]["clusterIP"]

    cluster.apply(work(config_map({"mode": "fast"}), SERVICE), LATER)  # the same: no write
    assert listed(cluster, "ConfigMap")["settings"]["metadata"] == before

    cluster.apply(work(config_map({"mode": "fast"}, tier="gold"), SERVICE), LATER)
    relabelled = listed(cluster, "ConfigMap")["settings"]["metadata"]
    assert relabelled["labels"] == {"tier": "gold"}
    assert relabelled["generation"] == 1  # metadata alone does not move it
    assert int(relabelled["resourceVersion"]) > int(before["resourceVersion"])

    ports = {**SERVICE["spec"], "ports": [{"port": 8080}]}  # type: ignore[dict-item]
    cluster.apply(work(config_map({"mode": "safe"}), {**SERVICE, "spec": ports}), LATER)
    changed = listed(cluster, "ConfigMap")["settings"]
    assert changed["data"] == {"mode": "safe"}
    assert changed["metadata"]["generation"] == 2
    assert {k: changed["metadata"][k] for k in ("uid", "creationTimestamp")} == {
        k: before[k] for k in ("uid", "creationTimestamp")
    }
    # The Service keeps the cluster IP it was given, which the manifest does not set.
    service = listed(cluster, "Service")["web"]
    assert (service["spec"]["clusterIP"], service["spec"]["ports"]) == (ip, [{"port": 8080}])


def test_objects_go_when_the_work_stops_listing_them_or_goes() -> None:
    cluster = member()
    cluster.apply(work(config_map({"mode": "fast"}), SERVICE, workload("Deployment", "web", 1)), T0)
    cluster.apply(work(SERVICE, workload("Deployment", "web", 1)), LATER)
    assert listed(cluster, "ConfigMap") == {}
    assert set(listed(cluster, "Service")) == {"web"}

    assert cluster.delete_workload(work(SERVICE))
    assert listed(cluster, "Service") == {} and listed(cluster, "Deployment") == {}


def test_a_work_gone_by_hand_takes_its_objects_unless_it_preserves_them_or_another_lists_them(
) -> None:  # fmt: skip
    cluster = member()
    cluster.apply(work(config_map({"mode": "fast"}), uid="plain"), T0)
    cluster.apply(work(SERVICE, uid="kept", preserve=True), T0)
    cluster.prune_workloads(live={"kept"})
    assert listed(cluster, "ConfigMap") == {}
    cluster.prune_workloads(live=())
    assert set(listed(cluster, "Service")) == {"web"}  # preserveResourcesOnDeletion

    # A Work deleted and made again (a new uid) keeps what it still lists.
    cluster.apply(work(ACCOUNT, uid="old"), T0)
    cluster.apply(work(ACCOUNT, uid="new"), LATER)
    cluster.prune_workloads(live={"new"})
    assert set(listed(cluster, "ServiceAccount")) == {"web"}


def test_a_manifest_without_a_name_is_refused_and_the_others_applied() -> None:
    cluster = member()
    nameless = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"namespace": "default"}}
    applied = cluster.apply(work(nameless, SERVICE), T0)
    assert applied.failures == [
        'ConfigMap "" is invalid: metadata.name: Required value: name or generateName is required'
    ]
    assert applied.objects[0] is None and set(listed(cluster, "Service")) == {"web"}
