"""Karmada's cluster status rules: the Ready condition a probe gives, and the success and
failure thresholds that keep one flaky probe from flipping it (cluster_condition_cache.go).

Upstream runs these in the cluster status controller: on the hub for Push clusters, in
karmada-agent for Pull clusters. Both use these functions.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from fleetwarden.api.karmada.cluster import (
    APIEnablement,
    Cluster,
    ClusterStatus,
    ResourceSummary,
)
from fleetwarden.api.meta import Condition, find_condition
from fleetwarden.semantics.conditions import set_status_condition

READY = "Ready"
COMPLETE_API_ENABLEMENTS = "CompleteAPIEnablements"


def is_cluster_ready(cluster: Cluster) -> bool:
    """util.IsClusterReady."""
    ready = find_condition(cluster.status.conditions, READY)
    return ready is not None and ready.status == "True"


@dataclass(frozen=True)
class Probe:
    """What a health probe of a member's API server found."""

    online: bool
    healthy: bool


def observed_ready_condition(probe: Probe) -> Condition:
    """generateReadyCondition."""
    if not probe.online:
        return Condition(
            type=READY, status="False", reason="ClusterNotReachable",
            message="cluster is not reachable",
        )  # fmt: skip
    if not probe.healthy:
        return Condition(
            type=READY, status="False", reason="ClusterNotReady",
            message="cluster is reachable but health endpoint responded without ok",
        )  # fmt: skip
    return Condition(
        type=READY, status="True", reason="ClusterReady",
        message="cluster is healthy and ready to accept workloads",
    )  # fmt: skip


def api_enablements_condition(complete: bool) -> Condition:
    if complete:
        return Condition(
            type=COMPLETE_API_ENABLEMENTS, status="True", reason="Complete",
            message="collected complete APIEnablements from the cluster",
        )  # fmt: skip
    return Condition(
        type=COMPLETE_API_ENABLEMENTS, status="False", reason="Empty",
        message="collected empty APIEnablements from the cluster",
    )  # fmt: skip


@dataclass(frozen=True)
class ThresholdState:
    """The last observed Ready status of one cluster and since when it was observed."""

    status: str
    since: datetime | None


def threshold_adjusted_ready_condition(
    saved: ThresholdState | None,
    current: list[Condition] | None,
    observed: Condition,
    now: datetime,
    success_threshold: timedelta,
    failure_threshold: timedelta,
) -> tuple[Condition, ThresholdState]:
    """The Ready condition to report, and the state to keep for the next probe.

    A change between True and not-True is reported only once it has lasted the threshold
    (success towards True, failure away from it); Unknown to False passes at once.
    """
    if saved is None:
        return observed, ThresholdState(observed.status, None)
    reported = find_condition(current, READY)
    if reported is None:
        return observed, saved
    if saved.status != observed.status:
        saved = ThresholdState(observed.status, now)
    threshold = success_threshold if observed.status == "True" else failure_threshold
    crossing = (observed.status == "True") != (reported.status == "True")
    since = saved.since or datetime.min.replace(tzinfo=now.tzinfo)
    if crossing and now < since + threshold:
        return reported, saved
    return observed, saved


@dataclass(frozen=True)
class MemberReport:
    """What a reachable member tells about itself besides its health."""

    kubernetes_version: str
    api_enablements: list[APIEnablement]
    allocatable: dict[str, str]
    # What its pods request: bound (allocated) and pending (allocating); None when unknown.
    allocated: dict[str, str] | None = None
    allocating: dict[str, str] | None = None


def collect_cluster_status(
    current: ClusterStatus,
    probe: Probe,
    report: MemberReport,
    saved: ThresholdState | None,
    now: datetime,
    success_threshold: timedelta,
    failure_threshold: timedelta,
) -> tuple[ClusterStatus, ThresholdState]:
    """One run of the cluster status controller: the status to write, the state to keep.

    An offline member changes only the Ready condition; an online one also reports its
    version, enabled APIs and resources.
    """
    ready, state = threshold_adjusted_ready_condition(
        saved, current.conditions, observed_ready_condition(probe), now,
        success_threshold, failure_threshold,
    )  # fmt: skip
    status = current.model_copy()
    conditions = current.conditions
    if probe.online:
        status.kubernetes_version = report.kubernetes_version
        status.api_enablements = report.api_enablements
        summary: dict[str, Any] = {"allocatable": dict(report.allocatable)}
        # What pods request, where the member tells it (unset, not null, otherwise).
        if report.allocated:
            summary["allocated"] = dict(report.allocated)
        if report.allocating:
            summary["allocating"] = dict(report.allocating)
        status.resource_summary = ResourceSummary.model_validate(summary)
        complete = api_enablements_condition(bool(report.api_enablements))
        conditions = set_status_condition(conditions, complete, now)
    status.conditions = set_status_condition(conditions, ready, now)
    return status, state
