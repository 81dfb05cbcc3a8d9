"""The cluster controller (pkg/controllers/cluster/cluster_controller.go): the health
monitor, the taints that follow the Ready condition, the execution space and the finalizer.

Per Cluster, as upstream today:

- Health monitor. Push clusters get Ready from the cluster status controller's probes and
  are never timed out here. A Pull cluster's heartbeats are the renewals of its Lease in
  `karmada-cluster` and the changes of its Ready condition; once none has been seen for
  cluster-monitor-grace-period (cluster-startup-grace-period while it never reported
  Ready), Ready becomes Unknown: reason ClusterStatusUnknown, or ClusterStatusNeverUpdated
  when there was no Ready at all. Upstream polls every cluster-monitor-period and so acts
  up to one period after the grace period ran out; here each cluster's deadline is a timer
  and Ready turns Unknown at the deadline itself. A cluster no member backs that the hub
  can reach (`reachable` is False: reported externally) is never timed out.
- NoSchedule taints by Ready: `cluster.karmada.io/not-ready` for False (and for a cluster
  that has no Ready yet), `cluster.karmada.io/unreachable` for Unknown, each replacing the
  other and both removed on True. Taints are added with timeAdded. Other taints are left
  as they are, NoExecute ones too: since v1.14 Karmada adds NoExecute only through
  ClusterTaintPolicy or by hand. A NoExecute taint without timeAdded gets one (upstream's
  API server does it on write; here also for writes that bypass admission).
- The older generation (v1.13, seeds 002 and 004), only with failover-eviction-timeout set:
  with the Failover gate on, a cluster Ready=False for that long (since the controller saw
  it turn False) also gets the NoExecute not-ready taint, one Ready=Unknown that long since
  its last heartbeat the NoExecute unreachable taint, each replacing the other; Ready=True
  removes both (processTaintBaseEviction, removed upstream by 2496cf3c0).
- Execution space: the namespace `karmada-es-<cluster>` is created when the cluster joins.
  When the Cluster is deleted, the space goes with its Works (the Works first, then the
  Namespace: what Kubernetes' namespace controller does for a terminating namespace; a
  Pull cluster that is not Ready has its Works' execution finalizer removed first), and
  once it is gone and no binding is scheduled to the cluster any more, the
  `karmada.io/cluster-controller` finalizer is released; until then it looks again every
  10 s (CleanupCheckInterval). The terminating taint of v1.13 is gone since v1.14.

Events as upstream: TaintClusterSucceed / TaintClusterFailed on each taint change,
CreateExecutionSpaceSucceed / Failed, RemoveExecutionSpaceSucceed / Failed.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from fleetwarden.api.core import NO_EXECUTE, NO_SCHEDULE, Lease, Taint
from fleetwarden.api.errors import AlreadyExists, NotFound, StatusError
from fleetwarden.api.karmada.cluster import (
    SYNC_MODE_PULL,
    TAINT_CLUSTER_NOT_READY,
    TAINT_CLUSTER_UNREACHABLE,
    Cluster,
)
from fleetwarden.api.karmada.well_known import EXECUTION_CONTROLLER_FINALIZER
from fleetwarden.api.meta import Condition, find_condition, parse_time
from fleetwarden.api.registry import REGISTRY
from fleetwarden.controllers.karmada.names import (
    NAMESPACE_KARMADA_CLUSTER,
    generate_execution_space_name,
)
from fleetwarden.controllers.karmada.work import (
    CLUSTER,
    CLUSTER_RESOURCE_BINDING,
    RESOURCE_BINDING,
    WORK,
)
from fleetwarden.runtime.clock import Clock
from fleetwarden.runtime.events import NORMAL, WARNING
from fleetwarden.runtime.finalizers import remove_finalizer
from fleetwarden.runtime.informer import by_target_cluster
from fleetwarden.runtime.manager import DONE, Context, Controller, Result, Watches, requeue_after
from fleetwarden.runtime.status import update_status_if_changed
from fleetwarden.semantics.cluster_health import READY, is_cluster_ready

CLUSTER_CONTROLLER = "cluster-controller"
CLUSTER_CONTROLLER_FINALIZER = "karmada.io/cluster-controller"
KARMADA_SYSTEM_LABEL = "karmada.io/system"
# How often a deleted cluster's cleanup is looked at again (CleanupCheckInterval).
CLEANUP_CHECK_INTERVAL = timedelta(seconds=10)

NAMESPACE = REGISTRY.info("v1", "Namespace")
LEASE = REGISTRY.info("coordination.k8s.io/v1", "Lease")

# Event reasons (pkg/events).
CREATE_EXECUTION_SPACE_FAILED = "CreateExecutionSpaceFailed"
CREATE_EXECUTION_SPACE_SUCCEED = "CreateExecutionSpaceSucceed"
REMOVE_EXECUTION_SPACE_FAILED = "RemoveExecutionSpaceFailed"
REMOVE_EXECUTION_SPACE_SUCCEED = "RemoveExecutionSpaceSucceed"
TAINT_CLUSTER_FAILED = "TaintClusterFailed"
TAINT_CLUSTER_SUCCEED = "TaintClusterSucceed"

# The Ready condition the monitor writes when heartbeats stop.
STATUS_UNKNOWN_REASON = "ClusterStatusUnknown"
STATUS_UNKNOWN_MESSAGE = "Cluster status controller stopped posting cluster status."
STATUS_NEVER_UPDATED_REASON = "ClusterStatusNeverUpdated"
STATUS_NEVER_UPDATED_MESSAGE = "Cluster status controller never posted cluster status."

NOT_READY_TAINT_FOR_SCHED = Taint(key=TAINT_CLUSTER_NOT_READY, effect=NO_SCHEDULE)
UNREACHABLE_TAINT_FOR_SCHED = Taint(key=TAINT_CLUSTER_UNREACHABLE, effect=NO_SCHEDULE)
# v1.13's taints for taint-based eviction.
NOT_READY_TAINT = Taint(key=TAINT_CLUSTER_NOT_READY, effect=NO_EXECUTE)
UNREACHABLE_TAINT = Taint(key=TAINT_CLUSTER_UNREACHABLE, effect=NO_EXECUTE)

Reachable = Callable[[str], bool]


# --- taints (pkg/util/helper/taint.go) ---------------------------------------------------------


def taint_exists(taints: Iterable[Taint], taint: Taint) -> bool:
    """TaintExists: a taint with the same key and effect (Taint.MatchTaint; value aside)."""
    return any(t.key == taint.key and t.effect == taint.effect for t in taints)


def set_current_cluster_taints(
    taints: Sequence[Taint], to_add: Iterable[Taint], to_remove: Iterable[Taint], now: datetime
) -> list[Taint]:
    """SetCurrentClusterTaints: `taints` without those to remove, then those to add that are
    missing, stamped with timeAdded `now`; unchanged (same order) when nothing is to do."""
    adding = [t for t in to_add if not taint_exists(taints, t)]
    removing = [t for t in to_remove if taint_exists(taints, t)]
    if not adding and not removing:
        return list(taints)
    kept = [t for t in taints if not taint_exists(removing, t)]
    return kept + [t.model_copy(update={"time_added": now}) for t in adding]


def stamp_no_execute_taints(taints: Sequence[Taint], now: datetime) -> list[Taint]:
    """mutateClusterTaints: timeAdded on each NoExecute taint that has none."""
    return [
        t.model_copy(update={"time_added": now})
        if t.effect == NO_EXECUTE and t.time_added is None
        else t
        for t in taints
    ]


def generate_taints_message(taints: Sequence[Taint]) -> str:
    """GenerateTaintsMessage, as the TaintClusterSucceed Events word the taints."""
    if not taints:
        return "cluster now does not have taints"
    parts = [
        f"{{Key:{t.key},Value:{t.value},Effect:{t.effect}}}"
        if t.value
        else f"{{Key:{t.key},Effect:{t.effect}}}"
        for t in taints
    ]
    return f"cluster now has taints([{','.join(parts)}])"


def taints_for_ready(ready: Condition | None) -> tuple[list[Taint], list[Taint]]:
    """taintClusterByCondition: the NoSchedule taints to add and to remove for Ready."""
    if ready is None:  # a new cluster, not reported yet
        return [NOT_READY_TAINT_FOR_SCHED], []
    if ready.status == "False":
        return [NOT_READY_TAINT_FOR_SCHED], [UNREACHABLE_TAINT_FOR_SCHED]
    if ready.status == "Unknown":
        return [UNREACHABLE_TAINT_FOR_SCHED], [NOT_READY_TAINT_FOR_SCHED]
    if ready.status == "True":
        return [], [NOT_READY_TAINT_FOR_SCHED, UNREACHABLE_TAINT_FOR_SCHED]
    return [], []


def unknown_ready_condition(ready: Condition | None, now: datetime) -> Condition | None:
    """The Ready condition the monitor posts once heartbeats stopped; None when Ready is
    Unknown already (nothing to change)."""
    if ready is None:
        return Condition(
            type=READY, status="Unknown", reason=STATUS_NEVER_UPDATED_REASON,
            message=STATUS_NEVER_UPDATED_MESSAGE, last_transition_time=now,
        )  # fmt: skip
    if ready.status == "Unknown":
        return None
    return ready.model_copy(
        update={
            "status": "Unknown",
            "reason": STATUS_UNKNOWN_REASON,
            "message": STATUS_UNKNOWN_MESSAGE,
            "last_transition_time": now,
        }
    )


# --- the controller ------------------------------------------------------------------------------


@dataclass
class ClusterHealth:
    """clusterHealthData: what the monitor last saw of a cluster, and when (local time)."""

    uid: str
    probe: datetime  # probeTimestamp: the last heartbeat seen
    ready: dict[str, Any] | None  # the Ready condition last seen, as written
    ready_transition: datetime  # v1.13's readyTransitionTimestamp
    renew_time: datetime | None = None  # the Lease's renewTime last seen
    # The resourceVersion of the Cluster last looked at: an unchanged one (a Lease renewal
    # woke us) needs neither its Ready compared again nor its taints and space synced.
    observed: str | None = None
    synced: str | None = None
    eviction_due: datetime | None = None  # what that sync left pending


def _wire(condition: Condition | None) -> dict[str, Any] | None:
    return condition.to_dict() if condition is not None else None


def _earliest(now: datetime, dues: Iterable[datetime | None]) -> Result:
    future = [due for due in dues if due is not None and due > now]
    return requeue_after(min(future) - now) if future else DONE


@dataclass
class ClusterController:
    reachable: Reachable
    # clusterHealthMap: kept in memory, as upstream does; a restart starts every clock anew.
    health: dict[str, ClusterHealth] = field(default_factory=dict)
    # The manager's clock, learnt from the first reconcile (see _renewed).
    _clock: Clock | None = None

    def controller(self) -> Controller:
        return Controller(
            name=CLUSTER_CONTROLLER,
            watches=[Watches(CLUSTER), Watches(LEASE, stored_keys=self._renewed)],
            reconcile=self.reconcile,
        )

    def _renewed(self, lease: Mapping[str, Any]) -> list[str]:
        """A Pull cluster's Lease renewal is a heartbeat, seen when the informer hears it
        (tryUpdateClusterHealth's probeTimestamp). The monitor already looks again when
        the grace period after the last heartbeat would run out, so a renewal of a cluster
        it watches moves that instant on and wakes nothing: one reconcile per grace
        period, not per renewal. A Lease of a cluster not looked at yet wakes it. Read as
        stored: the fleet's every renewal need not be decoded."""
        meta = lease.get("metadata") or {}
        name = meta.get("name")
        if meta.get("namespace") != NAMESPACE_KARMADA_CLUSTER or not isinstance(name, str):
            return []
        health = self.health.get(name)
        if health is None or self._clock is None:
            return [name]
        value = (lease.get("spec") or {}).get("renewTime")
        if value is None:
            return []  # no heartbeat
        try:
            renewed = parse_time(value)
        except ValueError:
            return [name]  # the reconcile reads it decoded, and passes over it
        if health.renew_time is None or health.renew_time < renewed:
            health.renew_time, health.probe = renewed, self._clock.now()
        return []

    def reconcile(self, key: str, ctx: Context) -> Result:
        self._clock = ctx.clock
        cluster = ctx.cache.informer(CLUSTER).get(key)
        if not isinstance(cluster, Cluster):
            self.health.pop(key, None)
            return DONE
        now = ctx.clock.now()
        health = self._observe(cluster, ctx, now)
        posted, monitor_due = self._monitor(cluster, health, ctx, now)
        if posted:
            return DONE  # the status write brings the cluster back here at once
        if cluster.metadata.deletion_timestamp is not None:
            return _earliest(now, [monitor_due, self._remove_cluster(cluster, ctx, now)])
        rv = cluster.metadata.resource_version
        due = health.eviction_due
        if health.synced != rv or (due is not None and due <= now):
            health.synced = None  # until the sync went through
            health.eviction_due = self._sync_cluster(cluster, health, ctx, now)
            health.synced = rv
        return _earliest(now, [monitor_due, health.eviction_due])

    # health monitor (tryUpdateClusterHealth) --------------------------------------------------

    def _observe(self, cluster: Cluster, ctx: Context, now: datetime) -> ClusterHealth:
        """Steps 1 to 4: a changed Ready condition or a renewed Lease is a heartbeat."""
        uid, rv = cluster.metadata.uid or "", cluster.metadata.resource_version
        saved = self.health.get(cluster.name)
        if saved is None or saved.uid != uid:
            ready = _wire(find_condition(cluster.status.conditions, READY))
            if ready is None:  # never reported: count from the cluster's creation
                since = cluster.metadata.creation_timestamp or now
                saved = ClusterHealth(uid, probe=since, ready=None, ready_transition=since)
            else:
                saved = ClusterHealth(uid, probe=now, ready=ready, ready_transition=now)
        elif saved.observed != rv:
            ready = _wire(find_condition(cluster.status.conditions, READY))
            if ready is None:
                saved.ready = None
            elif ready != saved.ready:
                same_transition = saved.ready is not None and saved.ready.get(
                    "lastTransitionTime"
                ) == ready.get("lastTransitionTime")
                saved.ready_transition = saved.ready_transition if same_transition else now
                saved.probe, saved.ready = now, ready
        saved.observed = rv
        if cluster.spec.sync_mode == SYNC_MODE_PULL:
            lease = ctx.cache.informer(LEASE).get(cluster.name, NAMESPACE_KARMADA_CLUSTER)
            renewed = lease.spec.renew_time if isinstance(lease, Lease) else None
            if renewed is not None and (saved.renew_time is None or saved.renew_time < renewed):
                saved.renew_time, saved.probe = renewed, now
        self.health[cluster.name] = saved
        return saved

    def _monitor(
        self, cluster: Cluster, health: ClusterHealth, ctx: Context, now: datetime
    ) -> tuple[bool, datetime | None]:
        """Step 5: post Ready=Unknown once a Pull cluster's heartbeats stopped for the grace
        period. Whether the status was written, and else when to look again."""
        if cluster.spec.sync_mode != SYNC_MODE_PULL or not self.reachable(cluster.name):
            return False, None
        ready = find_condition(cluster.status.conditions, READY)
        s = ctx.settings
        grace = s.cluster_startup_grace_period if ready is None else s.cluster_monitor_grace_period
        due = health.probe + grace
        if now < due:
            return False, due
        unknown = unknown_ready_condition(ready, now)
        if unknown is None:
            return False, None
        conditions = list(cluster.status.conditions or [])
        if ready is None:
            conditions.append(unknown)
        else:
            conditions[conditions.index(ready)] = unknown
        status = cluster.status.model_copy(update={"conditions": conditions})
        update_status_if_changed(ctx.store, cluster, status)
        # Our own write is no heartbeat; the probe time stays.
        health.ready, health.ready_transition = _wire(unknown), now
        return True, None

    # syncCluster ------------------------------------------------------------------------------

    def _sync_cluster(
        self, cluster: Cluster, health: ClusterHealth, ctx: Context, now: datetime
    ) -> datetime | None:
        """The execution space, the taints and the finalizer; when the NoExecute taint of the
        older generation is due, if it is pending."""
        self._create_execution_space(cluster, ctx)
        ready = find_condition(cluster.status.conditions, READY)
        current = list(cluster.spec.taints or [])
        taints = set_current_cluster_taints(current, *taints_for_ready(ready), now)
        due: datetime | None = None
        if ctx.settings.failover_eviction_timeout is not None and ready is not None:
            to_add, to_remove, due = self._eviction_taints(ready, health, ctx, now)
            taints = set_current_cluster_taints(taints, to_add, to_remove, now)
        taints = stamp_no_execute_taints(taints, now)
        self._update(cluster, current, taints, ctx)
        return due

    def _eviction_taints(
        self, ready: Condition, health: ClusterHealth, ctx: Context, now: datetime
    ) -> tuple[list[Taint], list[Taint], datetime | None]:
        """processTaintBaseEviction (v1.13): the NoExecute taints to add and remove, and
        when the pending one is due."""
        timeout = ctx.settings.failover_eviction_timeout
        assert timeout is not None
        if ready.status == "True":
            return [], [NOT_READY_TAINT, UNREACHABLE_TAINT], None
        if ready.status == "False":
            since, taint, other = health.ready_transition, NOT_READY_TAINT, UNREACHABLE_TAINT
        elif ready.status == "Unknown":
            since, taint, other = health.probe, UNREACHABLE_TAINT, NOT_READY_TAINT
        else:
            return [], [], None
        if not ctx.settings.gate("Failover"):
            return [], [], None
        due = since + timeout
        if now < due:
            return [], [], due
        return [taint], [other], None

    def _update(
        self, cluster: Cluster, current: list[Taint], taints: list[Taint], ctx: Context
    ) -> None:
        """updateClusterTaints and ensureFinalizer, in one write."""
        finalizers = list(cluster.metadata.finalizers or [])
        add_finalizer = CLUSTER_CONTROLLER_FINALIZER not in finalizers
        retaint = [t.to_dict() for t in taints] != [t.to_dict() for t in current]
        if not add_finalizer and not retaint:
            return
        patch: dict[str, Any] = {"metadata": {"resourceVersion": cluster.metadata.resource_version}}
        if add_finalizer:
            patch["metadata"]["finalizers"] = [*finalizers, CLUSTER_CONTROLLER_FINALIZER]
        if retaint:
            patch["spec"] = {"taints": [t.to_dict() for t in taints] or None}
        try:
            stored = ctx.store.patch(CLUSTER, cluster.name, "", patch)
        except StatusError as exc:
            if retaint:
                ctx.recorder.event(cluster, WARNING, TAINT_CLUSTER_FAILED, exc.message)
            raise
        if retaint:
            message = f"Taint cluster succeed: {generate_taints_message(taints)}."
            ctx.recorder.event(REGISTRY.decode(stored), NORMAL, TAINT_CLUSTER_SUCCEED, message)

    def _create_execution_space(self, cluster: Cluster, ctx: Context) -> None:
        """createExecutionSpace: `karmada-es-<cluster>`, when it does not exist."""
        name = generate_execution_space_name(cluster.name)
        if ctx.cache.informer(NAMESPACE).get(name) is not None:
            return
        namespace = {
            "apiVersion": NAMESPACE.api_version,
            "kind": NAMESPACE.kind,
            "metadata": {"name": name, "labels": {KARMADA_SYSTEM_LABEL: "true"}},
        }
        try:
            ctx.store.create(namespace)
        except AlreadyExists:
            return  # the cache had not seen it yet
        except StatusError as exc:
            ctx.recorder.event(cluster, WARNING, CREATE_EXECUTION_SPACE_FAILED, exc.message)
            raise
        message = f"Created execution space({name}) for cluster({cluster.name})."
        ctx.recorder.event(cluster, NORMAL, CREATE_EXECUTION_SPACE_SUCCEED, message)

    # removeCluster ----------------------------------------------------------------------------

    def _remove_cluster(self, cluster: Cluster, ctx: Context, now: datetime) -> datetime | None:
        """The execution space and its Works, then (no binding left on the cluster) the
        finalizer; when to look again while something remains."""
        try:
            remaining = _remove_execution_space(cluster, ctx)
        except StatusError as exc:
            ctx.recorder.event(cluster, WARNING, REMOVE_EXECUTION_SPACE_FAILED, exc.message)
            raise
        message = f"Removed execution space for cluster({cluster.name})."
        ctx.recorder.event(cluster, NORMAL, REMOVE_EXECUTION_SPACE_SUCCEED, message)
        if remaining or _scheduled_to(cluster.name, ctx):
            return now + CLEANUP_CHECK_INTERVAL
        remove_finalizer(ctx.store, cluster, CLUSTER_CONTROLLER_FINALIZER)
        return None


def _remove_execution_space(cluster: Cluster, ctx: Context) -> bool:
    """removeExecutionSpace, and the namespace deletion's cascade: the Works go first (a Pull
    cluster that is not Ready cannot remove its workloads, so their finalizers are dropped),
    the Namespace once none is left. Whether the space still exists."""
    space = generate_execution_space_name(cluster.name)
    works = ctx.cache.informer(WORK).list(space)
    if cluster.spec.sync_mode == SYNC_MODE_PULL and not is_cluster_ready(cluster):
        for work in works:
            remove_finalizer(ctx.store, work, EXECUTION_CONTROLLER_FINALIZER)
    for work in works:
        if work.metadata.deletion_timestamp is None:
            with contextlib.suppress(NotFound):
                ctx.store.delete(WORK, work.name, space)
    if ctx.cache.informer(WORK).list(space):
        return True
    if ctx.cache.informer(NAMESPACE).get(space) is not None:
        with contextlib.suppress(NotFound):
            ctx.store.delete(NAMESPACE, space)
    return False


def _scheduled_to(name: str, ctx: Context) -> bool:
    """isTargetClusterRemoved, negated: a binding still has the cluster in spec.clusters."""
    return any(
        name in by_target_cluster(binding)
        for scope in (RESOURCE_BINDING, CLUSTER_RESOURCE_BINDING)
        for binding in ctx.cache.informer(scope.info).list()
    )


def cluster_controller(reachable: Reachable) -> Controller:
    """The cluster controller (karmada-controller-manager's `cluster`). `reachable(name)`
    tells whether the hub reaches something behind the cluster (a member it probes, or one
    that renews a Lease); clusters it does not reach are reported externally and never
    timed out."""
    return ClusterController(reachable).controller()
