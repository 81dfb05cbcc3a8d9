"""The graceful eviction controllers: a binding's spec.gracefulEvictionTasks retired once
the workload runs healthy where it was moved, or once the task has waited long enough
(pkg/controllers/gracefuleviction: rb_ and crb_graceful_eviction_controller.go,
evictiontask.go).

Each pass (assessEvictionTasks), task by task:
- a task without creationTimestamp is stamped with now and kept;
- suppressDeletion true keeps it (the user decides), false retires it at once;
- it is retired when graceful-eviction-timeout (its own gracePeriodSeconds when given)
  has passed since creationTimestamp;
- it is retired when the scheduler has observed the binding's generation
  (status.schedulerObservedGeneration == metadata.generation) and every cluster of
  spec.clusters reports the workload Healthy in status.aggregatedStatus; before that the
  status may describe the placement the task was made from.

The tasks kept are written back (a merge patch carrying the resourceVersion read), and
each retired one records EvictWorkloadFromClusterSucceed on the binding and its template.
The binding controller then deletes the evicted cluster's Work. The binding is looked at
again at the earliest of graceful-eviction-timeout/10 and the first task's expiry (as the
issue and seed 004 give it; upstream today waits for the expiry alone), and whenever it
changes (a status turning Healthy changes it).

The exact instant: a retry is timed to land on a task's expiry, and virtual time lands
exactly there, where upstream's strict `now.After(creation + timeout)` is still false and
the retry computed next is zero: the task would wait for an unrelated change. Here a task
is past its timeout from that very instant on, so the retry that lands on it retires it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from fleetwarden.api.karmada.work import (
    RESOURCE_HEALTHY,
    AggregatedStatusItem,
    GracefulEvictionTask,
    TargetCluster,
)
from fleetwarden.controllers.karmada.eviction import emit_cluster_eviction_event
from fleetwarden.controllers.karmada.work import (
    CLUSTER_RESOURCE_BINDING,
    RESOURCE_BINDING,
    Binding,
    BindingScope,
)
from fleetwarden.runtime.informer import split_key
from fleetwarden.runtime.manager import (
    DONE,
    REQUEUE,
    Context,
    Controller,
    Result,
    Watches,
    requeue_after,
)

RB_GRACEFUL_EVICTION_CONTROLLER = "resource-binding-graceful-eviction-controller"
CRB_GRACEFUL_EVICTION_CONTROLLER = "cluster-resource-binding-graceful-eviction-controller"

_ZERO = timedelta(0)


@dataclass(frozen=True)
class Assessment:
    """assessmentOption: what a pass judges the tasks by."""

    timeout: timedelta  # graceful-eviction-timeout
    schedule_result: Sequence[TargetCluster]
    observed_status: Sequence[AggregatedStatusItem]
    has_scheduled: bool


def assessment_of(binding: Binding, timeout: timedelta) -> Assessment:
    """What syncBinding judges a binding's tasks by."""
    return Assessment(
        timeout=timeout,
        schedule_result=binding.spec.clusters or [],
        observed_status=binding.status.aggregated_status or [],
        has_scheduled=binding.status.scheduler_observed_generation == binding.metadata.generation,
    )


def task_timeout(task: GracefulEvictionTask, timeout: timedelta) -> timedelta:
    """The task's own gracePeriodSeconds, else graceful-eviction-timeout."""
    if task.grace_period_seconds is not None:
        return timedelta(seconds=task.grace_period_seconds)
    return timeout


def assess_eviction_tasks(
    tasks: Sequence[GracefulEvictionTask], now: datetime, option: Assessment
) -> tuple[list[GracefulEvictionTask], list[str]]:
    """assessEvictionTasks: the tasks kept, and the clusters of those retired."""
    kept: list[GracefulEvictionTask] = []
    evicted: list[str] = []
    for task in tasks:
        if task.creation_timestamp is None:
            # metav1.Time keeps whole seconds: stamp what will be stored.
            kept.append(task.model_copy(update={"creation_timestamp": now.replace(microsecond=0)}))
        elif _keep(task, now, option):
            kept.append(task)
        else:
            evicted.append(task.from_cluster)
    return kept, evicted


# Why assessSingleTask retires a task (upstream records only that it did: the Event
# EvictWorkloadFromClusterSucceed); `fleetwarden explain` words it.
RETIRED_SUPPRESSION_LIFTED = "SuppressionLifted"  # suppressDeletion set to false
RETIRED_TIMED_OUT = "TimedOut"  # graceful-eviction-timeout or gracePeriodSeconds passed
RETIRED_HEALTHY = "Healthy"  # the workload Healthy on every cluster of the result


def _keep(task: GracefulEvictionTask, now: datetime, option: Assessment) -> bool:
    """assessSingleTask."""
    return retirement(task, now, option) is None


def retirement(task: GracefulEvictionTask, now: datetime, option: Assessment) -> str | None:
    """assessSingleTask's decision for a stamped task: why it is retired now (one of the
    RETIRED_* reasons, in the order upstream tests them), or None when it is kept."""
    if task.suppress_deletion is not None:
        return None if task.suppress_deletion else RETIRED_SUPPRESSION_LIFTED
    assert task.creation_timestamp is not None
    if now >= task.creation_timestamp + task_timeout(task, option.timeout):
        return RETIRED_TIMED_OUT
    if option.has_scheduled and all_scheduled_healthy(option):
        return RETIRED_HEALTHY
    return None


def all_scheduled_healthy(option: Assessment) -> bool:
    """allScheduledResourceInHealthyState: every scheduled cluster reports Healthy."""
    health = {item.cluster_name: item.health for item in option.observed_status}
    return all(health.get(t.name) == RESOURCE_HEALTHY for t in option.schedule_result)


def next_retry(
    tasks: Sequence[GracefulEvictionTask], timeout: timedelta, now: datetime
) -> timedelta | None:
    """When to look again: the earlier of timeout/10 and the first expiry among tasks that
    can expire (not suppressDeletion ones, which the user retires); None without any."""
    expiries = [
        task.creation_timestamp + task_timeout(task, timeout)
        for task in tasks
        if task.suppress_deletion is None and task.creation_timestamp is not None
    ]
    if not expiries:
        return None
    return min(timeout / 10, min(expiries) - now)


@dataclass
class GracefulEvictionController:
    name: str
    scope: BindingScope

    def controller(self) -> Controller:
        return Controller(
            name=self.name, watches=[Watches(self.scope.info)], reconcile=self.reconcile
        )

    def reconcile(self, key: str, ctx: Context) -> Result:
        namespace, name = split_key(key)
        binding = ctx.cache.informer(self.scope.info).get(name, namespace)
        if not isinstance(binding, Binding) or binding.metadata.deletion_timestamp is not None:
            return DONE
        tasks = binding.spec.graceful_eviction_tasks or []
        if not tasks:
            return DONE
        now = ctx.clock.now()
        timeout = ctx.settings.graceful_eviction_timeout
        kept, evicted = assess_eviction_tasks(tasks, now, assessment_of(binding, timeout))
        wire = [task.to_dict() for task in kept]
        if wire != [task.to_dict() for task in tasks]:
            patch = {
                "metadata": {"resourceVersion": binding.metadata.resource_version},
                "spec": {"gracefulEvictionTasks": wire or None},
            }
            ctx.store.patch(self.scope.info, name, namespace, patch)
            for cluster in evicted:
                emit_cluster_eviction_event(ctx.recorder, binding, cluster, failed=False)
        retry = next_retry(kept, timeout, now)
        if retry is None:
            return DONE
        # Never zero: a task whose expiry is now (a gracePeriodSeconds of 0 just stamped)
        # is looked at again at once, not left for the next change.
        return requeue_after(retry) if retry > _ZERO else REQUEUE


def resource_binding_graceful_eviction_controller() -> Controller:
    return GracefulEvictionController(
        RB_GRACEFUL_EVICTION_CONTROLLER, RESOURCE_BINDING
    ).controller()


def cluster_resource_binding_graceful_eviction_controller() -> Controller:
    return GracefulEvictionController(
        CRB_GRACEFUL_EVICTION_CONTROLLER, CLUSTER_RESOURCE_BINDING
    ).controller()


def graceful_eviction_controllers() -> list[Controller]:
    """karmada-controller-manager's `gracefulEviction` controllers, RB then CRB."""
    return [
        resource_binding_graceful_eviction_controller(),
        cluster_resource_binding_graceful_eviction_controller(),
    ]
