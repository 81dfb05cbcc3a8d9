"""Builders for scheduler tests: clusters, binding specs, snapshots, cluster details."""

from __future__ import annotations

from typing import Any

from fleetwarden.api.karmada.cluster import Cluster
from fleetwarden.api.karmada.policy import Placement
from fleetwarden.api.karmada.work import ResourceBindingSpec, ResourceBindingStatus
from fleetwarden.scheduling.karmada.framework import ClusterInfo, Snapshot
from fleetwarden.scheduling.karmada.spread import ClusterDetail

DEPLOYMENT_API = {
    "groupVersion": "apps/v1",
    "resources": [{"name": "deployments", "kind": "Deployment"}],
}


def cluster(
    name: str,
    *,
    labels: dict[str, str] | None = None,
    region: str | None = None,
    zones: list[str] | None = None,
    provider: str | None = None,
    taints: list[dict[str, Any]] | None = None,
    apis: list[dict[str, Any]] | None = None,
    complete: bool = True,
    allocatable: dict[str, Any] | None = None,
    allocated: dict[str, Any] | None = None,
    deleting: bool = False,
    version: int = 1,
) -> Cluster:
    spec: dict[str, Any] = {"syncMode": "Push"}
    for key, value in (
        ("region", region),
        ("zones", zones),
        ("provider", provider),
        ("taints", taints),
    ):
        if value is not None:
            spec[key] = value
    status: dict[str, Any] = {
        "apiEnablements": [DEPLOYMENT_API] if apis is None else apis,
        "conditions": [
            {"type": "CompleteAPIEnablements", "status": "True" if complete else "False"}
        ],
    }
    if allocatable is not None:
        status["resourceSummary"] = {"allocatable": allocatable, "allocated": allocated or {}}
    meta: dict[str, Any] = {"name": name, "labels": labels or {}, "resourceVersion": str(version)}
    if deleting:
        meta["deletionTimestamp"] = "2025-01-01T00:00:00Z"
    return Cluster.model_validate(
        {
            "apiVersion": "cluster.karmada.io/v1alpha1",
            "kind": "Cluster",
            "metadata": meta,
            "spec": spec,
            "status": status,
        }
    )


def pods(name: str, count: int, **kw: Any) -> Cluster:
    """A cluster with room for `count` pods and nothing else to count."""
    return cluster(name, allocatable={"pods": str(count)}, **kw)


def snapshot(*clusters: Cluster, version: int = 1) -> Snapshot:
    return Snapshot.of((ClusterInfo.of(c) for c in clusters), version)


def spec(
    placement: dict[str, Any] | None = None,
    *,
    replicas: int | None = None,
    clusters: list[tuple[str, int]] | None = None,
    evicting: list[str] | None = None,
    requirements: dict[str, Any] | None = None,
    kind: str = "Deployment",
    api_version: str = "apps/v1",
    uid: str = "",
) -> ResourceBindingSpec:
    data: dict[str, Any] = {
        "resource": {
            "apiVersion": api_version,
            "kind": kind,
            "namespace": "default",
            "name": "app",
            "uid": uid,
        },
        "placement": placement or {},
    }
    if replicas is not None:
        data["replicas"] = replicas
    if clusters is not None:
        data["clusters"] = [{"name": n, "replicas": r} for n, r in clusters]
    if evicting:
        data["gracefulEvictionTasks"] = [
            {"fromCluster": n, "reason": "TaintUntolerated", "producer": "TaintManager"}
            for n in evicting
        ]
    if requirements is not None:
        data["replicaRequirements"] = {"resourceRequest": requirements}
    return ResourceBindingSpec.model_validate(data)


def status(affinity_name: str | None = None) -> ResourceBindingStatus:
    return ResourceBindingStatus(scheduler_observed_affinity_name=affinity_name)


def detail(
    name: str,
    *,
    score: int = 0,
    available: int = 0,
    allocatable: int | None = None,
    region: str | None = None,
    order: int = 0,
) -> ClusterDetail:
    info = ClusterInfo.of(cluster(name, region=region))
    return ClusterDetail(
        name,
        info,
        score=score,
        overflow_order=order,
        available_replicas=available,
        allocatable_replicas=available if allocatable is None else allocatable,
    )


def placement(data: dict[str, Any]) -> Placement:
    return Placement.model_validate(data)


DIVIDED_STATIC = {"replicaSchedulingType": "Divided", "replicaDivisionPreference": "Weighted"}
DYNAMIC = {
    "replicaSchedulingType": "Divided",
    "replicaDivisionPreference": "Weighted",
    "weightPreference": {"dynamicWeight": "AvailableReplicas"},
}
AGGREGATED = {"replicaSchedulingType": "Divided", "replicaDivisionPreference": "Aggregated"}
DUPLICATED = {"replicaSchedulingType": "Duplicated"}


def weights(*pairs: tuple[str, int]) -> dict[str, Any]:
    """A Weighted strategy with a staticWeightList of clusterNames entries."""
    return {
        **DIVIDED_STATIC,
        "weightPreference": {
            "staticWeightList": [
                {"targetCluster": {"clusterNames": [n]}, "weight": w} for n, w in pairs
            ]
        },
    }


# Seed 002's examples: Duplicated over member1/2/3/5 in two groups; Divided 1:2.
SEED_DUPLICATED = {
    "clusterAffinity": {"clusterNames": ["member1", "member2", "member3", "member5"]},
    "spreadConstraints": [{"spreadByField": "cluster", "maxGroups": 2, "minGroups": 2}],
    "replicaScheduling": {"replicaSchedulingType": "Duplicated"},
}
SEED_DIVIDED = {
    "clusterAffinity": {"clusterNames": ["member1", "member2"]},
    "replicaScheduling": weights(("member1", 1), ("member2", 2)),
}
