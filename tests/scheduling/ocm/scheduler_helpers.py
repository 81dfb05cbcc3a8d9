"""Builders for the placement scheduler's tests, after upstream's helpers/testing/builders.go."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from fleetwarden.api.meta import format_time
from fleetwarden.api.ocm.cluster import ManagedCluster
from fleetwarden.api.ocm.placement import (
    PLACEMENT_LABEL,
    AddOnPlacementScore,
    Placement,
    PlacementDecision,
)
from fleetwarden.scheduling.ocm import ListHandle

# Upstream's fakeTime.
NOW = datetime(2022, 1, 1, tzinfo=UTC)
NAMESPACE = "test"
PLACEMENT = "test"


def cluster(
    name: str,
    *,
    labels: dict[str, str] | None = None,
    claims: dict[str, str] | None = None,
    taints: list[dict[str, Any]] | None = None,
    allocatable: dict[str, str] | None = None,
    capacity: dict[str, str] | None = None,
) -> ManagedCluster:
    return ManagedCluster.model_validate(
        {
            "metadata": {"name": name, "labels": labels or {}},
            "spec": {"hubAcceptsClient": True, "taints": taints or []},
            "status": {
                "clusterClaims": [{"name": k, "value": v} for k, v in (claims or {}).items()],
                "allocatable": allocatable or {},
                "capacity": capacity or {},
            },
        }
    )


def with_resource(name: str, resource: str, allocatable: str, capacity: str) -> ManagedCluster:
    """WithResource: one resource's allocatable and capacity."""
    return cluster(name, allocatable={resource: allocatable}, capacity={resource: capacity})


def taint(
    key: str, effect: str, value: str | None = None, added: datetime | None = None
) -> dict[str, Any]:
    """A taint; no timeAdded stands for upstream's zero metav1.Time{}."""
    out: dict[str, Any] = {"key": key, "effect": effect}
    if value is not None:
        out["value"] = value
    if added is not None:
        out["timeAdded"] = format_time(added)
    return out


def placement(spec: dict[str, Any] | None = None, name: str = PLACEMENT) -> Placement:
    return Placement.model_validate(
        {"metadata": {"name": name, "namespace": NAMESPACE}, "spec": spec or {}}
    )


def decision(name: str, owner: str | None, *clusters: str) -> PlacementDecision:
    """A PlacementDecision listing clusters, labelled as `owner`'s (no label when None)."""
    labels = {} if owner is None else {PLACEMENT_LABEL: owner}
    return PlacementDecision.model_validate(
        {
            "metadata": {"name": name, "namespace": NAMESPACE, "labels": labels},
            "status": {"decisions": [{"clusterName": c, "reason": ""} for c in clusters]},
        }
    )


def addon_score(
    cluster_name: str, name: str, scores: dict[str, int], valid_until: datetime | None = None
) -> AddOnPlacementScore:
    status: dict[str, Any] = {"scores": [{"name": k, "value": v} for k, v in scores.items()]}
    if valid_until is not None:
        status["validUntil"] = format_time(valid_until)
    return AddOnPlacementScore.model_validate(
        {"metadata": {"name": name, "namespace": cluster_name}, "status": status}
    )


def handle(*objects: PlacementDecision | AddOnPlacementScore) -> ListHandle:
    return ListHandle(
        decisions=[o for o in objects if isinstance(o, PlacementDecision)],
        scores=[o for o in objects if isinstance(o, AddOnPlacementScore)],
    )
