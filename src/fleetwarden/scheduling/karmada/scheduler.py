"""karmada-scheduler (pkg/scheduler/scheduler.go, event_handler.go, helper.go): places each
ResourceBinding and ClusterResourceBinding on clusters by writing spec.clusters.

When: a binding is scheduled when it is first seen, when its spec changes (generation), and
when a cluster it may go to changes its labels or spec, or starts deleting; its own status
updates and other clusters' status updates do not count, as upstream's event handlers skip
them. Then, as doScheduleBinding decides, a binding is (re)scheduled when its placement
differs from the applied one (annotation policy.karmada.io/applied-placement), when its
replicas differ from the sum of its result (a cluster evicted from a Divided result, a
scale), when spec.rescheduleTriggeredAt is newer than the last schedule, always when it
is Duplicated or not a workload, and when a cluster of its result is deleting. Otherwise
only status.schedulerObservedGeneration catches up.

clusterAffinities: the terms are tried in order from the one observed in
status.schedulerObservingAffinityName (the first after a triggered reschedule); the first
term that schedules becomes the observed one.

Outcome: the Scheduled condition (Success; NoClusterFit when no cluster fits, which clears
the result and is not retried; Unschedulable when room is short; SchedulerError otherwise),
and Events ScheduleBindingSucceed / ScheduleBindingFailed on the binding and its resource
template. Failures are retried with the priority queue's backoff (1 s doubling to 10 s;
5 minutes for Unschedulable), or the rate limiter with PriorityBasedScheduling off.
"""

from __future__ import annotations

import json
import logging
import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from pydantic import ValidationError

from fleetwarden.api.core import Unstructured
from fleetwarden.api.karmada.cluster import Cluster
from fleetwarden.api.karmada.policy import (
    CLUSTER_PROPAGATION_POLICY_PERMANENT_ID_LABEL,
    PROPAGATION_POLICY_PERMANENT_ID_LABEL,
    REPLICA_SCHEDULING_DIVIDED,
    REPLICA_SCHEDULING_DUPLICATED,
    ClusterAffinity,
    ClusterAffinityTerm,
    Placement,
    ReplicaSchedulingStrategy,
)
from fleetwarden.api.karmada.well_known import BINDING_MANAGED_BY_LABEL
from fleetwarden.api.karmada.work import (
    CONDITION_SCHEDULED,
    ClusterResourceBinding,
    ResourceBinding,
    ResourceBindingSpec,
    TargetCluster,
)
from fleetwarden.api.meta import Condition, Model, ObjectMeta, find_condition
from fleetwarden.api.registry import REGISTRY
from fleetwarden.runtime.events import NORMAL, WARNING
from fleetwarden.runtime.informer import Cache, split_key
from fleetwarden.runtime.manager import (
    DONE,
    REQUEUE,
    Context,
    Controller,
    Result,
    Watches,
    requeue_after,
)
from fleetwarden.runtime.metrics import RECONCILE_SCHEDULE, SCALE_SCHEDULE, seconds_since
from fleetwarden.scheduling.karmada.cache import ClusterCache
from fleetwarden.scheduling.karmada.estimator import AccurateEstimator
from fleetwarden.scheduling.karmada.framework import (
    FitError,
    ScheduleError,
    Snapshot,
    UnschedulableError,
    is_workload,
)
from fleetwarden.scheduling.karmada.generic_scheduler import GenericScheduler, reschedule_required
from fleetwarden.scheduling.karmada.plugins.cluster_affinity import CompiledAffinity
from fleetwarden.scheduling.karmada.webster import Target
from fleetwarden.semantics.conditions import set_status_condition

logger = logging.getLogger(__name__)

RESOURCE_BINDING = REGISTRY.info("work.karmada.io/v1alpha2", "ResourceBinding")
CLUSTER_RESOURCE_BINDING = REGISTRY.info("work.karmada.io/v1alpha2", "ClusterResourceBinding")
CLUSTER = REGISTRY.info("cluster.karmada.io/v1alpha1", "Cluster")

DEFAULT_SCHEDULER = "default-scheduler"
POLICY_PLACEMENT_ANNOTATION = "policy.karmada.io/applied-placement"

SUCCESSFUL_SCHEDULING_MESSAGE = "Binding has been scheduled successfully."
# Scheduled condition reasons.
REASON_SUCCESS = "Success"
REASON_SCHEDULER_ERROR = "SchedulerError"
REASON_NO_CLUSTER_FIT = "NoClusterFit"
REASON_UNSCHEDULABLE = "Unschedulable"
# Event reasons.
EVENT_SCHEDULE_BINDING_SUCCEED = "ScheduleBindingSucceed"
EVENT_SCHEDULE_BINDING_FAILED = "ScheduleBindingFailed"

# The priority queue's backoff (internal/queue): how soon a failed binding is tried again.
INITIAL_BACKOFF = timedelta(seconds=1)
MAX_BACKOFF = timedelta(seconds=10)
MAX_DOUBLINGS = math.ceil(math.log2(MAX_BACKOFF / INITIAL_BACKOFF))
MAX_IN_UNSCHEDULABLE = timedelta(minutes=5)
# The reason to schedule that is a ScaleSchedule in upstream's metrics.
REPLICAS_CHANGED = "replicas scaled down or scaled up"

Binding = ResourceBinding | ClusterResourceBinding


def scheduler_controller(
    scheduler_name: str = DEFAULT_SCHEDULER, estimator: AccurateEstimator | None = None
) -> Controller:
    """karmada-scheduler as a controller of the hub's manager; `estimator` reaches the
    members' scheduler-estimators (asked with --enable-scheduler-estimator)."""
    return Scheduler(scheduler_name, GenericScheduler(accurate=estimator)).controller()


@dataclass
class Scheduler:
    scheduler_name: str = DEFAULT_SCHEDULER
    algorithm: GenericScheduler = field(default_factory=GenericScheduler)
    clusters: ClusterCache = field(default_factory=ClusterCache)
    # What upstream keeps in its queue, as level-triggered state: the (uid, generation) of
    # each binding last handled, the bindings a cluster change concerns since, and the
    # attempts of those that keep failing.
    _handled: dict[str, tuple[str | None, int | None]] = field(default_factory=dict)
    _cluster_changed: set[str] = field(default_factory=set)
    _attempts: dict[str, int] = field(default_factory=dict)
    # The last version of each cluster seen, to tell which changes matter (updateCluster).
    _seen: dict[str, Cluster] = field(default_factory=dict)
    # The manager's cache, learnt from the first reconcile (see _on_cluster).
    _cache: Cache | None = None
    # The compiled affinity of each distinct affinity the bindings index holds (see
    # _affinity_index), so a cluster change is matched once per distinct affinity.
    _compiled: dict[str, CompiledAffinity] = field(default_factory=dict)
    # The index value of each binding at its last resourceVersion (the informer asks again
    # for the old object when it replaces it).
    _indexed: dict[str, tuple[str | None, list[str]]] = field(default_factory=dict)

    @property
    def _index(self) -> str:
        return f"{self.scheduler_name}/enqueue-affinity"

    def controller(self) -> Controller:
        return Controller(
            name=self.scheduler_name,
            watches=[
                Watches(RESOURCE_BINDING),
                Watches(CLUSTER_RESOURCE_BINDING),
                Watches(CLUSTER, self._on_cluster),
            ],
            reconcile=self.reconcile,
            resume=self.resume,
            indexers={
                RESOURCE_BINDING: {self._index: self._affinity_index},
                CLUSTER_RESOURCE_BINDING: {self._index: self._affinity_index},
            },
        )

    # --- when ------------------------------------------------------------------------------------

    def resume(self, cache: Cache) -> None:
        """A running scheduler handled every binding its status says it scheduled at the
        binding's generation: it schedules one again only when the binding's generation
        moves or a cluster change concerns it (a restart schedules every binding it is
        handed, Duplicated ones included). One whose last attempt failed waits for a
        retry, as upstream's queue holds it, so it is scheduled at once."""
        self._cache = cache
        for info in (RESOURCE_BINDING, CLUSTER_RESOURCE_BINDING):
            for binding in cache.informer(info).list():
                if not isinstance(binding, ResourceBinding | ClusterResourceBinding):
                    continue
                meta, status = binding.metadata, binding.status
                scheduled = find_condition(status.conditions, CONDITION_SCHEDULED)
                if (
                    self._responsible(binding)
                    and status.scheduler_observed_generation == meta.generation
                    and scheduled is not None
                    and scheduled.status == "True"
                ):
                    self.handled(_key(binding), meta.uid, meta.generation)

    def reconcile(self, key: str, ctx: Context) -> Result:
        self._cache = ctx.cache
        namespace, name = split_key(key)
        info = RESOURCE_BINDING if namespace else CLUSTER_RESOURCE_BINDING
        binding = ctx.cache.informer(info).get(name, namespace)
        if not isinstance(binding, ResourceBinding | ClusterResourceBinding) or not (
            self._responsible(binding)
        ):
            self._forget(key)
            return DONE
        cluster_changed = key in self._cluster_changed
        self._cluster_changed.discard(key)
        meta = binding.metadata
        if not cluster_changed and self._handled.get(key) == (meta.uid, meta.generation):
            return DONE
        result = _Pass(self, ctx, key, binding).run()
        if result is DONE:
            self._attempts.pop(key, None)
        elif cluster_changed:
            self._cluster_changed.add(key)
        return result

    def _responsible(self, binding: Binding) -> bool:
        """resourceBindingEventFilter: this scheduler's, not suspended, made from a policy."""
        spec, labels = binding.spec, binding.metadata.labels or {}
        if (spec.scheduler_name or DEFAULT_SCHEDULER) != self.scheduler_name:
            return False
        if spec.suspension is not None and spec.suspension.scheduling:
            return False
        return any(
            labels.get(label)
            for label in (
                PROPAGATION_POLICY_PERMANENT_ID_LABEL,
                CLUSTER_PROPAGATION_POLICY_PERMANENT_ID_LABEL,
                BINDING_MANAGED_BY_LABEL,
            )
        )

    def handled(self, key: str, uid: str | None, generation: int | None) -> None:
        """The binding needs nothing more until it (its generation) or a cluster changes."""
        self._handled[key] = (uid, generation)

    def retry(self, key: str, ctx: Context, err: ScheduleError | None) -> Result:
        """handleErr: Unschedulable waits, other errors back off."""
        if not ctx.settings.gate("PriorityBasedScheduling"):
            return REQUEUE
        if isinstance(err, UnschedulableError):
            return requeue_after(MAX_IN_UNSCHEDULABLE)
        attempts = self._attempts[key] = self._attempts.get(key, 0) + 1
        # Doubled until the cap, no further: 2**attempts outgrows timedelta after an hour.
        doublings = min(attempts - 1, MAX_DOUBLINGS)
        return requeue_after(min(INITIAL_BACKOFF * 2**doublings, MAX_BACKOFF))

    def _forget(self, key: str) -> None:
        self._handled.pop(key, None)
        self._attempts.pop(key, None)
        self._cluster_changed.discard(key)
        self._indexed.pop(key, None)

    def _on_cluster(self, cluster: Any) -> list[str]:
        """updateCluster: a cluster's new labels or spec, or its deletion, concern the
        bindings whose affinity it matches (before or after). A new cluster concerns none.

        The bindings are looked up in the manager's cache, known from the first reconcile:
        until then no binding has been handled, so every one is scheduled when reconciled.
        """
        self.clusters.invalidate()
        if not isinstance(cluster, Cluster):
            return []
        name = cluster.metadata.name
        previous = self._seen.get(name)
        if previous is not None and _version(cluster) <= _version(previous):
            return []
        self._seen[name] = cluster
        if previous is None or self._cache is None:
            return []
        if previous.metadata.deletion_timestamp is None and cluster.metadata.deletion_timestamp:
            changed = [cluster]
        elif (previous.metadata.labels or {}) != (cluster.metadata.labels or {}) or (
            previous.metadata.generation != cluster.metadata.generation
        ):
            changed = [previous, cluster]
        else:
            return []
        keys = sorted(self._affected(self._cache, changed))
        self._cluster_changed.update(keys)
        return keys

    def _affinity_index(self, obj: Any) -> list[str]:
        """The affinity (as JSON) a cluster change is matched against, ANY to enqueue the
        binding on every cluster change, nothing when the scheduler ignores it."""
        if not isinstance(obj, ResourceBinding | ClusterResourceBinding):
            return []
        key, version = _key(obj), obj.metadata.resource_version
        memo = self._indexed.get(key)
        if memo is not None and version is not None and memo[0] == version:
            return memo[1]
        values = self._index_values(obj)
        self._indexed[key] = (version, values)
        return values

    def _index_values(self, obj: Binding) -> list[str]:
        if not self._responsible(obj) or obj.spec.placement is None:
            return []
        affinity = _enqueue_affinity(obj)
        if affinity is None:
            return [_ANY]
        text = affinity.model_dump_json()
        if text not in self._compiled:
            self._compiled[text] = CompiledAffinity(affinity)
        return [text]

    def _affected(self, cache: Cache, clusters: list[Cluster]) -> set[str]:
        """enqueueAffectedBindings: bindings whose observed affinity may match the cluster;
        each distinct affinity is matched once, through the bindings index."""
        keys: set[str] = set()
        for info in (RESOURCE_BINDING, CLUSTER_RESOURCE_BINDING):
            informer = cache.informer(info)
            for text in informer.index_values(self._index):
                if text != _ANY and not any(self._compiled[text].matches(c) for c in clusters):
                    continue
                keys.update(_key(b) for b in informer.by_index(self._index, text))  # type: ignore[arg-type]
        return keys


# The _affinity_index value of a binding enqueued on every cluster change.
_ANY = ""


def _version(obj: Cluster) -> int:
    return int(obj.metadata.resource_version or 0)


def _key(binding: Binding) -> str:
    meta = binding.metadata
    return f"{meta.namespace}/{meta.name}" if meta.namespace else meta.name


def _enqueue_affinity(binding: Binding) -> ClusterAffinity | None:
    """The affinity a cluster change is matched against; None to enqueue regardless (no
    affinity, or clusterAffinities not yet scheduled at this generation)."""
    placement = binding.spec.placement
    assert placement is not None
    if placement.cluster_affinities is None:
        return placement.cluster_affinity
    status, meta = binding.status, binding.metadata
    if status.scheduler_observed_generation != meta.generation:
        return None
    terms = placement.cluster_affinities
    return terms[affinity_index(terms, status.scheduler_observed_affinity_name)] if terms else None


def affinity_index(terms: list[ClusterAffinityTerm], observed: str | None) -> int:
    """getAffinityIndex: the observed term, or the first."""
    return next((i for i, t in enumerate(terms) if observed and t.affinity_name == observed), 0)


# --- whether -------------------------------------------------------------------------------------


def _wire(value: Model | list[Any] | None) -> Any:
    if value is None:
        return None
    if isinstance(value, list):
        return [v.to_dict() for v in value]
    return value.to_dict()


def placement_json(placement: Placement) -> str:
    """The applied-placement annotation: the placement as compact JSON."""
    return json.dumps(placement.to_dict(), separators=(",", ":"))


def placement_changed(placement: Placement, applied_text: str, observed_affinity: str) -> bool:
    """placementChanged: no applied placement yet, a change in anything but
    clusterAffinities, or in the clusterAffinities term being observed."""
    if not applied_text:
        return True
    try:
        applied = Placement.model_validate_json(applied_text)
    except ValidationError:
        logger.error("failed to unmarshal applied placement string: %s", applied_text)
        return False
    if placement.to_dict() == applied.to_dict():
        return False
    for name in ("cluster_affinity", "cluster_tolerations", "spread_constraints"):
        if _wire(getattr(placement, name)) != _wire(getattr(applied, name)):
            return True
    if _wire(placement.replica_scheduling) != _wire(applied.replica_scheduling):
        return True
    return _cluster_affinities_changed(
        placement.cluster_affinities, applied.cluster_affinities, observed_affinity
    )


def _cluster_affinities_changed(
    terms: list[ClusterAffinityTerm] | None,
    applied: list[ClusterAffinityTerm] | None,
    observed: str,
) -> bool:
    if not observed:
        return True
    term = next((t for t in terms or () if t.affinity_name == observed), None)
    applied_term = next((t for t in applied or () if t.affinity_name == observed), None)
    return term is None or applied_term is None or term.to_dict() != applied_term.to_dict()


def replicas_changed(spec: ResourceBindingSpec, strategy: ReplicaSchedulingStrategy | None) -> bool:
    """util.IsBindingReplicasChanged: a Duplicated result off the replicas, or a Divided
    result that does not add up to them."""
    if strategy is None:
        return False
    replicas = spec.replicas or 0
    targets = spec.clusters or []
    if strategy.replica_scheduling_type == REPLICA_SCHEDULING_DUPLICATED:
        return any((t.replicas or 0) != replicas for t in targets)
    if strategy.replica_scheduling_type == REPLICA_SCHEDULING_DIVIDED:
        return sum(t.replicas or 0 for t in targets) != replicas
    return False


def schedule_reason(binding: Binding, snapshot: Snapshot) -> str | None:
    """Why doScheduleBinding schedules the binding now, or None when it does not."""
    spec, status = binding.spec, binding.status
    placement = spec.placement
    assert placement is not None
    applied = (binding.metadata.annotations or {}).get(POLICY_PLACEMENT_ANNOTATION, "")
    if placement_changed(placement, applied, status.scheduler_observed_affinity_name or ""):
        return "placement changed"
    if replicas_changed(spec, placement.replica_scheduling):
        return REPLICAS_CHANGED
    if reschedule_required(spec.reschedule_triggered_at, status.last_scheduled_time):
        return "explicitly triggered reschedule"
    if (
        not is_workload(spec)
        or placement.replica_scheduling_type() == REPLICA_SCHEDULING_DUPLICATED
    ):
        return "scheduling type is duplicated"
    by_name = snapshot.by_name
    if any((c := by_name.get(t.name)) is not None and c.deleting for t in spec.clusters or ()):
        return "some scheduled clusters are deleted"
    return None


# --- how -----------------------------------------------------------------------------------------


def condition_for(err: ScheduleError | None) -> tuple[Condition, bool]:
    """getConditionByError: the Scheduled condition, and whether the outcome is final
    (not retried)."""
    if err is None:
        return _scheduled("True", REASON_SUCCESS, SUCCESSFUL_SCHEDULING_MESSAGE), True
    if isinstance(err, UnschedulableError):
        return _scheduled("False", REASON_UNSCHEDULABLE, str(err)), False
    if isinstance(err, FitError):
        return _scheduled("False", REASON_NO_CLUSTER_FIT, str(err)), True
    return _scheduled("False", REASON_SCHEDULER_ERROR, str(err)), False


def _scheduled(status: str, reason: str, message: str) -> Condition:
    return Condition(type=CONDITION_SCHEDULED, status=status, reason=reason, message=message)


def _describe(binding: Binding) -> str:
    meta = binding.metadata
    if isinstance(binding, ResourceBinding):
        return f"ResourceBinding({meta.namespace}/{meta.name})"
    return f"ClusterResourceBinding({meta.name})"


def targets_text(targets: Iterable[Target]) -> str:
    """targetClustersToString: `member1:1, member2:2`."""
    return ", ".join(f"{t.name}:{t.replicas}" for t in targets)


class _Pass:
    """One doScheduleBinding: decide, schedule, write the result, the status, the Events."""

    def __init__(self, scheduler: Scheduler, ctx: Context, key: str, binding: Binding) -> None:
        self.scheduler, self.ctx, self.key, self.binding = scheduler, ctx, key, binding
        # The binding as last written (wire form), once this pass has written it.
        self.written: dict[str, Any] | None = None
        self.failed = False  # whether the scheduling attempt ended in an error

    def run(self) -> Result:
        binding = self.binding
        if binding.metadata.deletion_timestamp is not None:
            kind = (
                "resourceBinding"
                if isinstance(binding, ResourceBinding)
                else ("clusterResourceBinding")
            )
            self.record(None, ScheduleError(f"skip schedule deleting {kind}: {self.key}"))
            return self.done()
        if binding.spec.placement is None:
            logger.error("failed to get placement from %s", _describe(binding))
            return self.scheduler.retry(self.key, self.ctx, None)
        start = self.ctx.clock.now()
        snapshot = self.scheduler.clusters.snapshot(self.ctx.cache.informer(CLUSTER))
        reason = schedule_reason(binding, snapshot)
        if reason is None:
            self.catch_up_generation()
            return self.done()
        logger.info("Start to schedule %s as %s", _describe(binding), reason)
        if binding.spec.placement.cluster_affinities is not None:
            result = self.with_cluster_affinities(snapshot, binding.spec.placement)
        else:
            result = self.with_cluster_affinity(snapshot)
        schedule_type = SCALE_SCHEDULE if reason == REPLICAS_CHANGED else RECONCILE_SCHEDULE
        seconds = seconds_since(self.ctx.clock, start)
        self.ctx.metrics.binding_schedule(schedule_type, seconds, failed=self.failed)
        return result

    def with_cluster_affinity(self, snapshot: Snapshot) -> Result:
        """scheduleResourceBindingWithClusterAffinity."""
        try:
            targets = self.schedule(snapshot, self.binding.status.scheduler_observed_affinity_name)
        except FitError as err:
            # No cluster fits: the result is cleared, not kept.
            self.write_result([])
            self.record(None, err)
            return self.finish(err)
        except ScheduleError as err:
            self.record(None, err)
            return self.finish(err)
        self.write_result(targets)
        self.record(targets, None)
        return self.finish(None)

    def with_cluster_affinities(self, snapshot: Snapshot, placement: Placement) -> Result:
        """scheduleResourceBindingWithClusterAffinities: term after term from the observed
        one; the first error is the one reported when every term fails."""
        terms = placement.cluster_affinities or []
        status = self.binding.status
        index = affinity_index(terms, status.scheduler_observed_affinity_name)
        if reschedule_required(
            self.binding.spec.reschedule_triggered_at, status.last_scheduled_time
        ):
            index = 0
        first: ScheduleError | None = None
        for i in range(index, len(terms)):
            try:
                targets = self.schedule(snapshot, terms[i].affinity_name)
            except ScheduleError as err:
                first = first or err
                # Upstream's wording, "Affiliates" and all.
                context = (
                    f"failed to schedule {_describe(self.binding)} "
                    f"with clusterAffiliates index({i})"
                )
                logger.error("%s: %s", context, err)
                self.record(None, err.wrap(context))
                continue
            self.write_result(targets)
            self.record(targets, None)
            return self.finish(None, affinity_name=terms[i].affinity_name)
        if isinstance(first, FitError):
            self.write_result([])
            self.record(None, first)
        return self.finish(first)

    def schedule(self, snapshot: Snapshot, affinity_name: str | None) -> list[Target]:
        status = self.binding.status.model_copy()
        status.scheduler_observed_affinity_name = affinity_name
        return self.scheduler.algorithm.schedule(
            self.binding.spec,
            status,
            snapshot,
            empty_workload_propagation=self.ctx.settings.enable_empty_workload_propagation,
            scheduler_estimator=self.ctx.settings.enable_scheduler_estimator,
            step=lambda name: self.ctx.metrics.schedule_step(name, self.ctx.clock),
        )

    # --- writes ----------------------------------------------------------------------------------

    def write_result(self, targets: list[Target]) -> None:
        """patchScheduleResultForResourceBinding: spec.clusters and the applied placement."""
        placement = self.binding.spec.placement
        assert placement is not None
        clusters = [_target_cluster(t).to_dict() for t in targets]
        obj = self.binding.to_dict()
        annotations = obj["metadata"].setdefault("annotations", {})
        current = (annotations.get(POLICY_PLACEMENT_ANNOTATION), obj["spec"].get("clusters"))
        annotations[POLICY_PLACEMENT_ANNOTATION] = placement_json(placement)
        if clusters:
            obj["spec"]["clusters"] = clusters
        else:
            obj["spec"].pop("clusters", None)
        if current == (annotations[POLICY_PLACEMENT_ANNOTATION], obj["spec"].get("clusters")):
            return
        self.written = self.ctx.store.update(obj)

    def finish(self, err: ScheduleError | None, affinity_name: str | None = None) -> Result:
        """patchBindingStatusCondition: the Scheduled condition; on success also the
        observed generation (the one this pass wrote), the time and the affinity term."""
        condition, final = condition_for(err)
        self.failed = err is not None
        now = self.ctx.clock.now()
        status = self.binding.status.model_copy()
        status.conditions = set_status_condition(status.conditions, condition, now)
        if err is None:
            status.scheduler_observed_generation = self._generation()
            status.last_scheduled_time = now
            if affinity_name is not None:
                status.scheduler_observed_affinity_name = affinity_name
        self.write_status(status.to_dict())
        if final:
            return self.done()
        return self.scheduler.retry(self.key, self.ctx, err)

    def catch_up_generation(self) -> None:
        if self.binding.status.scheduler_observed_generation == self.binding.metadata.generation:
            return
        status = self.binding.status.model_copy()
        status.scheduler_observed_generation = self.binding.metadata.generation
        self.write_status(status.to_dict())

    def write_status(self, status: dict[str, Any]) -> None:
        if status == self.binding.status.to_dict():
            return
        obj = self.written or self.binding.to_dict()
        obj["status"] = status
        self.written = self.ctx.store.update(obj, subresource="status")

    def _generation(self) -> int | None:
        if self.written is not None:
            generation = self.written["metadata"].get("generation")
            return generation if isinstance(generation, int) else None
        return self.binding.metadata.generation

    def done(self) -> Result:
        self.scheduler.handled(self.key, self.binding.metadata.uid, self._generation())
        return DONE

    def record(self, targets: list[Target] | None, err: ScheduleError | None) -> None:
        """recordScheduleResultEventFor(Cluster)ResourceBinding: on the binding and on the
        resource template."""
        resource = self.binding.spec.resource
        template = Unstructured(
            api_version=resource.api_version,
            kind=resource.kind,
            metadata=ObjectMeta(
                name=resource.name, namespace=resource.namespace or "", uid=resource.uid
            ),
        )
        if err is None:
            # Upstream's ClusterResourceBinding message has no colon after "Result".
            label = "Result:" if isinstance(self.binding, ResourceBinding) else "Result"
            type_, reason = NORMAL, EVENT_SCHEDULE_BINDING_SUCCEED
            message = f"{SUCCESSFUL_SCHEDULING_MESSAGE} {label} {{{targets_text(targets or [])}}}"
        else:
            type_, reason, message = WARNING, EVENT_SCHEDULE_BINDING_FAILED, str(err)
        for obj in (self.binding, template):
            self.ctx.recorder.event(obj, type_, reason, message)


def _target_cluster(target: Target) -> TargetCluster:
    """A TargetCluster as Go marshals it: replicas left out when 0."""
    if target.replicas:
        return TargetCluster(name=target.name, replicas=target.replicas)
    return TargetCluster(name=target.name)
