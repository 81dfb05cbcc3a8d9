"""The hub's lease controllers (pkg/registration/hub/lease): a ManagedCluster's availability
from its agent's lease renewals, and whether the agent's clock agrees with the hub's.

The registration agent renews the Lease `managed-cluster-lease` in the cluster's namespace
every leaseDurationSeconds (60 when unset) once the hub accepted the cluster. The lease
controller, as upstream:

- looks only at clusters that were accepted at some point (a HubAcceptedManagedCluster
  condition, True or False): a cluster never accepted is left alone;
- creates the Lease when it is missing (labelled with the cluster's name, renewTime now),
  which starts the count; a deleting cluster without a Lease is marked at once instead;
- once the Lease was last renewed 5 × leaseDurationSeconds ago (LeaseDurationTimes), sets
  ManagedClusterConditionAvailable to Unknown (ManagedClusterLeaseUpdateStopped, "Registration
  agent stopped updating its lease.") unless it is Unknown already, with a Warning Event
  AvailableUnknown in the cluster's namespace;
- looks again at the very instant the Lease would expire, as upstream does today (no
  periodic sweep), and a grace period after marking a cluster. A renewal is seen through
  the Lease's events; the agent itself reports Available=True again.

The clock sync controller acts on renewals only (a Lease update that changes renewTime):
ManagedClusterConditionClockSynced is True when the hub's clock and the renewTime are less
than the grace period apart (or the cluster is annotated
`registration.open-cluster-management.io/skip-clock-sync-check: "true"`), else False.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from fleetwarden.admission.golang import go_quote
from fleetwarden.api.core import Lease
from fleetwarden.api.errors import AlreadyExists
from fleetwarden.api.meta import Condition, Resource, find_condition, format_micro_time
from fleetwarden.api.ocm.cluster import (
    CLUSTER_NAME_LABEL,
    CONDITION_AVAILABLE,
    CONDITION_CLOCK_SYNCED,
    CONDITION_HUB_ACCEPTED,
    DEFAULT_LEASE_DURATION_SECONDS,
    ManagedCluster,
)
from fleetwarden.api.registry import REGISTRY
from fleetwarden.controllers.ocm.managed_cluster import (
    MANAGED_CLUSTER,
)
from fleetwarden.runtime.events import NORMAL, WARNING
from fleetwarden.runtime.manager import DONE, Context, Controller, Result, Watches, requeue_after
from fleetwarden.runtime.status import set_condition_if_changed

LEASE_CONTROLLER = "ManagedClusterLeaseController"
CLOCK_SYNC_CONTROLLER = "ClockSyncController"
LEASE = REGISTRY.info("coordination.k8s.io/v1", "Lease")
LEASE_NAME = "managed-cluster-lease"
LEASE_DURATION_TIMES = 5
SKIP_CLOCK_SYNC_CHECK = "registration.open-cluster-management.io/skip-clock-sync-check"

LEASE_UPDATE_STOPPED = Condition(
    type=CONDITION_AVAILABLE, status="Unknown", reason="ManagedClusterLeaseUpdateStopped",
    message="Registration agent stopped updating its lease.",
)  # fmt: skip
CLOCK_SYNCED = Condition(
    type=CONDITION_CLOCK_SYNCED, status="True", reason="ManagedClusterClockSynced",
    message="The clock of the managed cluster is synced with the hub.",
)  # fmt: skip
CLOCK_OUT_OF_SYNC = Condition(
    type=CONDITION_CLOCK_SYNCED, status="False", reason="ManagedClusterClockOutOfSync",
    message="The clock of hub and agent is out of sync. "
    "This may cause the Unknown status and affect agent functionalities.",
)  # fmt: skip


def grace_period(cluster: ManagedCluster) -> timedelta:
    """LeaseDurationTimes lease durations; an unset or zero duration counts as 60 s."""
    seconds = cluster.spec.lease_duration_seconds or DEFAULT_LEASE_DURATION_SECONDS
    return timedelta(seconds=LEASE_DURATION_TIMES * seconds)


def lease_cluster(lease: Resource) -> list[str]:
    """A `managed-cluster-lease` concerns the cluster its cluster-name label names."""
    cluster = (lease.metadata.labels or {}).get(CLUSTER_NAME_LABEL)
    return [cluster] if cluster and lease.name == LEASE_NAME else []


def _cluster_lease(cluster: ManagedCluster, ctx: Context) -> Lease | None:
    lease = ctx.cache.informer(LEASE).get(LEASE_NAME, cluster.name)
    return lease if isinstance(lease, Lease) else None


# --- the lease controller --------------------------------------------------------------------


def reconcile_lease(key: str, ctx: Context) -> Result:
    cluster = ctx.cache.informer(MANAGED_CLUSTER).get(key)
    if not isinstance(cluster, ManagedCluster):
        return DONE
    if find_condition(cluster.status.conditions, CONDITION_HUB_ACCEPTED) is None:
        return DONE  # never accepted
    return _check_lease(cluster, ctx)


def _check_lease(cluster: ManagedCluster, ctx: Context) -> Result:
    lease = _cluster_lease(cluster, ctx)
    if lease is None:
        if cluster.metadata.deletion_timestamp is not None:
            _mark_lease_stopped(cluster, ctx)
        else:
            _create_lease(cluster, ctx)
        return DONE
    now, grace = ctx.clock.now(), grace_period(cluster)
    renewed = lease.spec.renew_time
    expiry = renewed + grace if renewed is not None else now
    if now < expiry:
        return requeue_after(expiry - now)
    _mark_lease_stopped(cluster, ctx)
    return requeue_after(grace)


def _create_lease(cluster: ManagedCluster, ctx: Context) -> None:
    lease = {
        "apiVersion": LEASE.api_version,
        "kind": LEASE.kind,
        "metadata": {
            "name": LEASE_NAME,
            "namespace": cluster.name,
            "labels": {CLUSTER_NAME_LABEL: cluster.name},
        },
        "spec": {"holderIdentity": LEASE_NAME, "renewTime": format_micro_time(ctx.clock.now())},
    }
    # AlreadyExists: the cache had not seen it yet, and its event brings the cluster back.
    with contextlib.suppress(AlreadyExists):
        ctx.store.create(lease)


def _mark_lease_stopped(cluster: ManagedCluster, ctx: Context) -> None:
    available = find_condition(cluster.status.conditions, CONDITION_AVAILABLE)
    if available is not None and available.status == "Unknown":
        return
    if set_condition_if_changed(ctx.store, cluster, LEASE_UPDATE_STOPPED, ctx.clock.now()):
        message = (
            f"The {cluster.name} is successfully imported. However, the connection check "
            "from the managed cluster to the hub cluster has failed"
        )
        ctx.recorder.event(_in_own_namespace(cluster), WARNING, "AvailableUnknown", message)


def _in_own_namespace(cluster: ManagedCluster) -> ManagedCluster:
    """The cluster as upstream refers to it in Events it records in the cluster's namespace."""
    metadata = cluster.metadata.model_copy(update={"namespace": cluster.name})
    return cluster.model_copy(update={"metadata": metadata})


def lease_controller(backed: Callable[[str], bool] = lambda _: True) -> Controller:
    """The hub's ManagedClusterLeaseController. `backed(name)` tells whether an agent stands
    behind the cluster; one that is reported externally (a scenario's) is never timed out."""

    def reconcile(key: str, ctx: Context) -> Result:
        return reconcile_lease(key, ctx) if backed(key) else DONE

    return Controller(
        name=LEASE_CONTROLLER,
        watches=[Watches(MANAGED_CLUSTER), Watches(LEASE, lease_cluster)],
        reconcile=reconcile,
    )


# --- the clock sync controller ---------------------------------------------------------------


def clock_synced(cluster: ManagedCluster, renewed: datetime, now: datetime) -> bool:
    if (cluster.metadata.annotations or {}).get(SKIP_CLOCK_SYNC_CHECK) == "true":
        return True
    grace = grace_period(cluster)
    return now - renewed < grace and renewed - now < grace


@dataclass
class ClockSyncController:
    # The renewTime last seen per cluster: upstream hears only Lease updates that renew.
    renewals: dict[str, datetime | None] = field(default_factory=dict)

    def reconcile(self, key: str, ctx: Context) -> Result:
        lease = ctx.cache.informer(LEASE).get(LEASE_NAME, key)
        if not isinstance(lease, Lease):
            self.renewals.pop(key, None)
            return DONE
        renewed = lease.spec.renew_time
        first_seen = key not in self.renewals
        previous = self.renewals.get(key)
        self.renewals[key] = renewed
        if first_seen or renewed is None or renewed == previous:
            return DONE  # added, or changed without a renewal
        cluster = ctx.cache.informer(MANAGED_CLUSTER).get(key)
        if isinstance(cluster, ManagedCluster):
            synced = clock_synced(cluster, renewed, ctx.clock.now())
            _set_clock_synced(cluster, synced, ctx)
        return DONE


def _set_clock_synced(cluster: ManagedCluster, synced: bool, ctx: Context) -> None:
    wanted = CLOCK_SYNCED if synced else CLOCK_OUT_OF_SYNC
    current = find_condition(cluster.status.conditions, CONDITION_CLOCK_SYNCED)
    if current is not None and current.status == wanted.status:
        return
    if set_condition_if_changed(ctx.store, cluster, wanted, ctx.clock.now()):
        name = go_quote(cluster.name)
        message = f"update managed cluster {name} clock synced condition to {wanted.status}."
        ctx.recorder.event(cluster, NORMAL, "ManagedClusterClockSyncedConditionUpdated", message)


def clock_sync_controller() -> Controller:
    """The hub's ClockSyncController."""
    return Controller(
        name=CLOCK_SYNC_CONTROLLER,
        watches=[Watches(LEASE, lease_cluster)],
        reconcile=ClockSyncController().reconcile,
    )
