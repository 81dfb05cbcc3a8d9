"""The application failover controllers: a binding whose workload stays unhealthy in a cluster
for decisionConditions.tolerationSeconds is evicted from that cluster (pkg/controllers/
applicationfailover: rb_ and crb_application_failover_controller.go, common.go;
pkg/util/helper/failover.go).

Only bindings whose policy has spec.failover.application, with propagateDeps, a kind whose
health the resource interpreter knows, and an aggregated status are looked at. Each pass:
- a cluster whose aggregated status says Unhealthy (and that is not being evicted already)
  is remembered from the first pass that sees it so, and evicted once tolerationSeconds have
  passed since; a cluster reported Healthy or Unknown, or no longer scheduled, is forgotten;
- an eviction is a graceful eviction task (reason ApplicationFailure, the controller as
  producer) with the policy's purgeMode: Gracefully gives the task gracePeriodSeconds (and
  needs the GracefulEviction gate), Never suppresses the deletion; with the
  StatefulFailoverInjection gate, statePreservation's JSONPaths are read from the cluster's
  collected status into the task's preservedLabelState, which the binding controller puts
  on the workload in the cluster it moves to (`preserved_labels`);
- the binding is looked at again when the first remembered cluster's time runs out.

As upstream, the memory of when a cluster turned unhealthy is the controller's own: a
restart starts the count again.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from fleetwarden.api.karmada import policy
from fleetwarden.api.karmada.work import (
    EVICTION_REASON_APPLICATION_FAILURE,
    RESOURCE_HEALTHY,
    RESOURCE_UNHEALTHY,
    RESOURCE_UNKNOWN,
    AggregatedStatusItem,
    ResourceBindingSpec,
    TargetCluster,
)
from fleetwarden.controllers.karmada.eviction import (
    TaskOptions,
    graceful_evict_cluster,
    write_evicted,
)
from fleetwarden.controllers.karmada.work import (
    CLUSTER_RESOURCE_BINDING,
    RESOURCE_BINDING,
    Binding,
    BindingScope,
    target_clusters,
)
from fleetwarden.runtime.informer import split_key
from fleetwarden.runtime.manager import DONE, Context, Controller, Result, Watches, requeue_after
from fleetwarden.semantics.jsonpath import JSONPathError, compile_path
from fleetwarden.semantics.resource_interpreter import health_interpreted

RB_APPLICATION_FAILOVER_CONTROLLER = "resource-binding-application-failover-controller"
CRB_APPLICATION_FAILOVER_CONTROLLER = "cluster-resource-binding-application-failover-controller"


class FailoverError(ValueError):
    """A task that cannot be built; the message is upstream's."""


@dataclass
class ApplicationFailoverController:
    name: str
    scope: BindingScope
    # workloadUnhealthyMap: binding key -> cluster -> when it was first seen unhealthy.
    unhealthy_since: dict[str, dict[str, datetime]] = field(default_factory=dict)

    def controller(self) -> Controller:
        return Controller(
            name=self.name, watches=[Watches(self.scope.info)], reconcile=self.reconcile
        )

    def reconcile(self, key: str, ctx: Context) -> Result:
        namespace, name = split_key(key)
        binding = ctx.cache.informer(self.scope.info).get(name, namespace)
        application = _watched(binding) if isinstance(binding, Binding) else None
        if binding is None or application is None:
            self.unhealthy_since.pop(key, None)
            return DONE
        assert isinstance(binding, Binding)
        seconds = application.decision_conditions.toleration_seconds or 0
        unhealthy, others = _distinguish(binding.status.aggregated_status or [], binding.spec)
        retry, evict = self._detect(key, unhealthy, seconds, ctx.clock.now())
        if evict:
            self._evict(binding, application, evict, ctx)
        self._forget(key, {t.name for t in binding.spec.clusters or []} - set(evict), others)
        return requeue_after(retry) if retry > timedelta(0) else DONE

    def _detect(
        self, key: str, clusters: list[str], seconds: int, now: datetime
    ) -> tuple[timedelta, list[str]]:
        """detectFailure: the clusters past their toleration, and when to look again."""
        since = self.unhealthy_since.setdefault(key, {})
        tolerated = timedelta(seconds=seconds)
        retry: timedelta | None = None
        evict: list[str] = []
        for cluster in clusters:
            first = since.setdefault(cluster, now)
            left = first + tolerated - now
            # Evicted from the very instant its time runs out (upstream: the instant after),
            # so that the retry timed to land on it finds it due (see graceful_eviction).
            if first != now and left <= timedelta(0):
                evict.append(cluster)
            else:
                retry = left if retry is None else min(retry, left)
        return retry or timedelta(0), evict

    def _evict(
        self,
        binding: Binding,
        application: policy.ApplicationFailoverBehavior,
        clusters: list[str],
        ctx: Context,
    ) -> None:
        """evictBinding, then updateBinding: every cluster evicted in one write."""
        evicted = binding.model_copy(deep=True)
        before = [t.name for t in binding.spec.clusters or []]
        for cluster in clusters:
            options = self._task_options(application, binding, cluster, before, ctx)
            graceful_evict_cluster(evicted.spec, cluster, options)
        write_evicted(ctx, binding, evicted, clusters)

    def _task_options(
        self,
        application: policy.ApplicationFailoverBehavior,
        binding: Binding,
        cluster: str,
        before: list[str],
        ctx: Context,
    ) -> TaskOptions:
        """buildTaskOptions."""
        purge_mode = application.purge_mode or ""
        preserved: dict[str, str] | None = None
        rules = application.state_preservation.rules if application.state_preservation else []
        if ctx.settings.gate("StatefulFailoverInjection") and rules:
            status = _status_of(binding.status.aggregated_status or [], cluster)
            preserved = preserved_label_state(rules, status)
        grace: int | None = None
        if purge_mode == policy.PURGE_MODE_GRACEFULLY:
            if not ctx.settings.gate("GracefulEviction"):
                raise FailoverError(
                    f"GracefulEviction featureGate must be enabled when purgeMode is {purge_mode}"
                )
            grace = application.grace_period_seconds
        return TaskOptions(
            purge_mode=purge_mode,
            producer=self.name,
            reason=EVICTION_REASON_APPLICATION_FAILURE,
            grace_period_seconds=grace,
            suppress_deletion=True if purge_mode == policy.PURGE_MODE_NEVER else None,
            preserved_label_state=preserved,
            clusters_before_failover=before if preserved else None,
        )

    def _forget(self, key: str, scheduled: set[str], others: list[str]) -> None:
        """deleteIrrelevantClusters: clusters no longer scheduled, or no longer unhealthy."""
        since = self.unhealthy_since.get(key, {})
        for cluster in list(since):
            if cluster not in scheduled or cluster in others:
                del since[cluster]


def _watched(binding: Binding) -> policy.ApplicationFailoverBehavior | None:
    """bindingFilter (and the predicate on spec.failover.application): the binding's
    application failover behaviour if it is one to look at."""
    spec = binding.spec
    application = spec.failover.application if spec.failover is not None else None
    if (
        application is None
        or not binding.status.aggregated_status
        or not health_interpreted(spec.resource.api_version, spec.resource.kind)
        or not spec.propagate_deps
    ):
        return None
    return application


def _distinguish(
    items: list[AggregatedStatusItem], spec: ResourceBindingSpec
) -> tuple[list[str], list[str]]:
    """distinguishUnhealthyClustersWithOthers: the clusters reported Unhealthy (and not being
    evicted already), and those reported Healthy or Unknown."""
    evicting = {task.from_cluster for task in spec.graceful_eviction_tasks or []}
    unhealthy = [
        item.cluster_name
        for item in items
        if item.health == RESOURCE_UNHEALTHY and item.cluster_name not in evicting
    ]
    others = [i.cluster_name for i in items if i.health in (RESOURCE_HEALTHY, RESOURCE_UNKNOWN)]
    return unhealthy, others


def _status_of(items: list[AggregatedStatusItem], cluster: str) -> dict[str, Any]:
    status = next((item.status for item in items if item.cluster_name == cluster), None)
    if not status:
        raise FailoverError(
            f"the application status has not yet been collected from Cluster({cluster})"
        )
    return status


def preserved_label_state(
    rules: list[policy.StatePreservationRule], status: dict[str, Any]
) -> dict[str, str]:
    """BuildPreservedLabelState: each rule's JSONPath (missing keys an error) read from the
    workload's status, as kubectl's jsonpath prints it, under its alias."""
    state: dict[str, str] = {}
    for rule in rules:
        try:
            values = compile_path(rule.json_path).find(status)
        except JSONPathError as exc:
            raise FailoverError(str(exc)) from None
        if not values:
            raise FailoverError(
                f"failed to execute jsonpath {rule.json_path!r}: not found in the status"
            )
        state[rule.alias_label_name] = " ".join(_printed(value) for value in values)
    return state


def _printed(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def preserved_labels(spec: ResourceBindingSpec, target: TargetCluster) -> dict[str, str]:
    """injectReservedLabelState: the labels a workload moved by a failover carries into the
    one cluster it moves to, from the last eviction task (purged Directly) that preserved
    state, unless it was there before the failover."""
    if len(target_clusters(spec)) > 1 or not spec.graceful_eviction_tasks:
        return {}
    task = spec.graceful_eviction_tasks[-1]
    if task.purge_mode != policy.PURGE_MODE_DIRECTLY:
        return {}
    if target.name in (task.clusters_before_failover or []):
        return {}
    return dict(task.preserved_label_state or {})


def application_failover_controllers() -> list[Controller]:
    """The resource binding and cluster resource binding application failover controllers
    (karmada-controller-manager's `applicationFailover`)."""
    return [
        ApplicationFailoverController(RB_APPLICATION_FAILOVER_CONTROLLER, RESOURCE_BINDING)
        .controller(),
        ApplicationFailoverController(CRB_APPLICATION_FAILOVER_CONTROLLER, CLUSTER_RESOURCE_BINDING)
        .controller(),
    ]  # fmt: skip
