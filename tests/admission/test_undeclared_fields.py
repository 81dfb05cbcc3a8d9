"""Fields a Karmada or OCM kind's schema does not declare are pruned before they are stored,
as the CRDs' structural schemas prune them; free-form parts of the objects are kept whole."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from fleetwarden.admission import default_chain

NOW = datetime(2026, 1, 2, tzinfo=UTC)
CHAIN = default_chain()


def review(obj: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    request = CHAIN.review(obj, now=NOW)
    return request.obj.to_dict(), request.pruned


def test_a_clusters_unknown_fields_are_pruned_and_recorded() -> None:
    cluster = {
        "apiVersion": "cluster.karmada.io/v1alpha1", "kind": "Cluster",
        "metadata": {"name": "member1", "managedFields": [{"manager": "kubectl"}]},
        "spec": {"syncMode": "Push", "colour": "blue",
                 "taints": [{"key": "k", "effect": "NoSchedule", "since": "today"}]},
        "extra": 1,
    }  # fmt: skip
    stored, pruned = review(cluster)
    assert pruned == ["spec.taints[0].since", "spec.colour", "extra"]
    assert "colour" not in stored["spec"] and "extra" not in stored
    assert stored["spec"]["taints"] == [{"key": "k", "effect": "NoSchedule"}]
    assert stored["metadata"]["managedFields"] == [{"manager": "kubectl"}]  # the server's own


def test_what_is_declared_stays_whole() -> None:
    manifest = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"},
                "anything": {"goes": True}}  # fmt: skip
    work = {
        "apiVersion": "work.karmada.io/v1alpha1", "kind": "Work",
        "metadata": {"name": "w", "namespace": "karmada-es-member1"},
        "spec": {"workload": {"manifests": [manifest]}},
        "status": {"manifestStatuses": [{"identifier": {"ordinal": 0, "version": "v1",
                   "kind": "ConfigMap", "resource": "configmaps", "name": "c"},
                   "status": {"free": {"form": 1}}, "health": "Healthy"}]},
    }  # fmt: skip
    stored, pruned = review(work)
    assert pruned == []
    assert stored["spec"]["workload"]["manifests"][0]["anything"] == {"goes": True}
    assert stored["status"] == work["status"]


def test_an_ocm_placements_unknown_fields_are_pruned() -> None:
    placement = {
        "apiVersion": "cluster.open-cluster-management.io/v1beta1", "kind": "Placement",
        "metadata": {"name": "p", "namespace": "default"},
        "spec": {"numberOfClusters": 1, "tolerations": [{"key": "k", "operator": "Exists",
                 "colour": "red"}], "spreadPolicy": {}},
    }  # fmt: skip
    stored, pruned = review(placement)
    assert pruned == ["spec.tolerations[0].colour"]
    assert stored["spec"]["tolerations"] == [{"key": "k", "operator": "Exists"}]
