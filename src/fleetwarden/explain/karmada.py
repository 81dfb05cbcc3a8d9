"""Why a Karmada workload is where it is: its (Cluster)ResourceBinding against every Cluster.

Nothing here decides anything itself; it asks the hub's own code:
- each karmada-scheduler filter plugin (scheduling/karmada/plugins), in the order the
  scheduler runs them, for its verdict on each cluster in its own words; the framework for
  which clusters fit and how they score; the generic scheduler for what it would choose now;
- the taint manager's rule (`no_execute_eviction`) for NoExecute taints the workload
  tolerates only for a while, or not at all;
- the graceful eviction controller's assessment (`retirement`) for what each eviction task
  waits for, and why a retired one was retired.

Karmada keeps no record of a retired eviction task but the Event it records then
(EvictWorkloadFromClusterSucceed, on the binding and its template). The Event names the
binding's resourceVersion the controller judged; while the hub still holds that version
(its watch history), the task is read from it, and the controller's assessment replayed at
the Event's time says why it went.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from fleetwarden.api.errors import StatusError
from fleetwarden.api.karmada.cluster import CONDITION_READY, Cluster
from fleetwarden.api.karmada.policy import (
    PURGE_MODE_DIRECTLY,
    REPLICA_SCHEDULING_DIVIDED,
    SPREAD_BY_FIELD_CLUSTER,
    SPREAD_BY_FIELD_REGION,
)
from fleetwarden.api.karmada.well_known import (
    CLUSTER_PROPAGATION_POLICY_ANNOTATION,
    PROPAGATION_POLICY_NAME_ANNOTATION,
    PROPAGATION_POLICY_NAMESPACE_ANNOTATION,
)
from fleetwarden.api.karmada.work import (
    CONDITION_SCHEDULED,
    RESOURCE_HEALTHY,
    ClusterResourceBinding,
    GracefulEvictionTask,
    ResourceBinding,
)
from fleetwarden.api.kinds import KindInfo
from fleetwarden.api.meta import find_condition, format_time, parse_time
from fleetwarden.api.registry import REGISTRY
from fleetwarden.controllers.karmada.eviction import (
    EVICT_WORKLOAD_FROM_CLUSTER_FAILED,
    EVICT_WORKLOAD_FROM_CLUSTER_SUCCEED,
    InvalidPlacement,
    applied_placement,
)
from fleetwarden.controllers.karmada.graceful_eviction import (
    RETIRED_HEALTHY,
    RETIRED_SUPPRESSION_LIFTED,
    RETIRED_TIMED_OUT,
    assessment_of,
    retirement,
    task_timeout,
)
from fleetwarden.controllers.karmada.names import (
    EXECUTION_SPACE_PREFIX,
    generate_binding_name,
)
from fleetwarden.controllers.karmada.work import CLUSTER_RESOURCE_BINDING, RESOURCE_BINDING
from fleetwarden.explain.model import ClusterVerdict, EvictionTask, Explanation, Verdict
from fleetwarden.explain.source import Obj, Source, read_error
from fleetwarden.scheduling.karmada.framework import (
    ClusterInfo,
    ScheduleError,
    ScheduleUnit,
    Snapshot,
)
from fleetwarden.scheduling.karmada.generic_scheduler import GenericScheduler
from fleetwarden.scheduling.karmada.plugins import in_tree_framework
from fleetwarden.scheduling.karmada.scheduler import (
    REASON_NO_CLUSTER_FIT,
    REASON_UNSCHEDULABLE,
    schedule_reason,
)
from fleetwarden.scheduling.karmada.spread import spread_ignored
from fleetwarden.semantics.durations import format_duration
from fleetwarden.semantics.tolerations import no_execute_eviction, taint_to_string

CLUSTER = REGISTRY.info("cluster.karmada.io/v1alpha1", "Cluster")
WORK = REGISTRY.info("work.karmada.io/v1alpha1", "Work")

Binding = ResourceBinding | ClusterResourceBinding
_EVICTED = re.compile(r"^Evict from cluster (?P<cluster>.+) (?:succeed|failed)\.$")


@dataclass(frozen=True)
class Options:
    # karmada-controller-manager's --graceful-eviction-timeout: not in the API, so given.
    graceful_eviction_timeout: timedelta = timedelta(minutes=10)


def is_binding(info: KindInfo) -> bool:
    return any(
        (info.group, info.kind) == (scope.info.group, scope.info.kind)
        for scope in (RESOURCE_BINDING, CLUSTER_RESOURCE_BINDING)
    )


def find_binding(source: Source, info: KindInfo, template: Mapping[str, Any]) -> Obj | None:
    """The binding the detector made for a resource template: `<name>-<kind>` in the
    template's namespace (a ClusterResourceBinding for a cluster-scoped template), or
    whichever binding's spec.resource names it."""
    meta = template.get("metadata") or {}
    name, namespace = str(meta.get("name", "")), str(meta.get("namespace") or "")
    scope = RESOURCE_BINDING if info.namespaced else CLUSTER_RESOURCE_BINDING
    found = source.get(scope.info, generate_binding_name(info.kind, name), namespace)
    if found is not None and _refers_to(found, info, name, namespace):
        return found
    for binding in source.list(scope.info, namespace or None):
        if _refers_to(binding, info, name, namespace):
            return binding
    return None


def _refers_to(binding: Mapping[str, Any], info: KindInfo, name: str, namespace: str) -> bool:
    resource = (binding.get("spec") or {}).get("resource") or {}
    return (
        resource.get("kind") == info.kind
        and resource.get("name") == name
        and (resource.get("namespace") or "") == namespace
        and str(resource.get("apiVersion", "")).rpartition("/")[0] == info.group
    )


def explain_unbound(source: Source, subject: str, template: Mapping[str, Any]) -> Explanation:
    """A resource template no binding was made for."""
    ex = Explanation(subject, source.where, source.now())
    annotations = (template.get("metadata") or {}).get("annotations") or {}
    policy = _policy_of(annotations)
    ex.facts.append(("Binding", "<none>"))
    if policy:
        ex.facts.append(("Policy", policy))
        ex.waiting.append(
            f"the resource detector: {policy} claims this template, but no binding exists yet"
        )
    else:
        ex.waiting.append(
            "a PropagationPolicy or ClusterPropagationPolicy: none claims this template, so "
            "the resource detector makes no binding and nothing is scheduled"
        )
    return ex


def explain_binding(
    source: Source,
    binding_wire: Obj,
    options: Options,
    *,
    subject: str | None = None,
) -> Explanation:
    binding = REGISTRY.decode(binding_wire)
    assert isinstance(binding, ResourceBinding | ClusterResourceBinding)
    now = source.now()
    ex = Explanation(subject or _name(binding), source.where, now)
    infos = [ClusterInfo.of(_cluster(c)) for c in source.list(CLUSTER)]
    snapshot = Snapshot.of(infos)
    _Binding(source, binding, snapshot, options, ex).explain()
    return ex


def _cluster(wire: Obj) -> Cluster:
    cluster = REGISTRY.decode(wire)
    assert isinstance(cluster, Cluster)
    return cluster


def _name(obj: Any) -> str:
    meta = obj.metadata
    return (
        f"{obj.kind} {meta.namespace}/{meta.name}" if meta.namespace else f"{obj.kind} {meta.name}"
    )


def _policy_of(annotations: Mapping[str, str]) -> str:
    if annotations.get(PROPAGATION_POLICY_NAME_ANNOTATION):
        namespace = annotations.get(PROPAGATION_POLICY_NAMESPACE_ANNOTATION, "")
        return f"PropagationPolicy {namespace}/{annotations[PROPAGATION_POLICY_NAME_ANNOTATION]}"
    if annotations.get(CLUSTER_PROPAGATION_POLICY_ANNOTATION):
        return f"ClusterPropagationPolicy {annotations[CLUSTER_PROPAGATION_POLICY_ANNOTATION]}"
    return ""


def _targets(targets: Sequence[Any]) -> str:
    return (
        ", ".join(f"{t.name}({t.replicas})" if t.replicas else str(t.name) for t in targets)
        or "<none>"
    )


class _Binding:
    """One explanation of one binding."""

    def __init__(
        self,
        source: Source,
        binding: Binding,
        snapshot: Snapshot,
        options: Options,
        ex: Explanation,
    ) -> None:
        self.source, self.binding, self.snapshot = source, binding, snapshot
        self.options, self.ex = options, ex
        self.now = ex.now
        self.scope = (
            RESOURCE_BINDING if isinstance(binding, ResourceBinding) else CLUSTER_RESOURCE_BINDING
        )
        spec = binding.spec
        self.scheduled = {t.name: t.replicas for t in spec.clusters or ()}
        self.health = {item.cluster_name: item for item in binding.status.aggregated_status or ()}

    def explain(self) -> None:
        self.facts()
        if self.binding.spec.placement is None:
            self.ex.waiting.append("a placement: the binding has none, so it is not scheduled")
            return
        answer = self.clusters()
        self.scheduler_waits(answer)
        self.health_waits()
        self.evictions()
        self.taint_manager()
        self.works()
        if not self.ex.waiting:
            self.ex.waiting.append(
                "nothing: the workload runs where it is scheduled"
                + (", as far as what could be read says (see Notes)" if self.ex.notes else "")
            )

    # --- what the binding is ---------------------------------------------------------------------

    def facts(self) -> None:
        binding, facts = self.binding, self.ex.facts
        resource = binding.spec.resource
        template = "/".join(p for p in (resource.namespace, resource.name) if p)
        facts.append(("Resource template", f"{resource.kind} {template}"))
        facts.append(("Binding", _name(binding)))
        policy = _policy_of(binding.metadata.annotations or {})
        if policy:
            facts.append(("Policy", policy))
        placement = binding.spec.placement
        if placement is not None:
            facts.append(("Placement", json.dumps(placement.to_dict(), separators=(",", ":"))))
        if binding.spec.replicas is not None:
            facts.append(("Replicas", str(binding.spec.replicas)))
        observed = binding.status.scheduler_observed_affinity_name
        if observed:
            facts.append(("Affinity term", observed))
        condition = find_condition(binding.status.conditions, CONDITION_SCHEDULED)
        if condition is not None:
            when = condition.last_transition_time
            since = f" (since {format_time(when)})" if when else ""
            text = f"{condition.status} {condition.reason}: {condition.message}{since}"
            facts.append(("Scheduled", text))
        facts.append(
            (
                "Generation",
                f"{binding.metadata.generation}, observed by the scheduler: "
                f"{binding.status.scheduler_observed_generation}",
            )
        )
        facts.append(("Result", _targets(binding.spec.clusters or ())))

    # --- each cluster ----------------------------------------------------------------------------

    def clusters(self) -> list[Any] | ScheduleError:
        """Every cluster's verdicts; what the scheduler would choose now."""
        binding, snapshot = self.binding, self.snapshot
        spec = binding.spec
        unit = ScheduleUnit.of(spec, binding.status.scheduler_observed_affinity_name or "")
        framework = in_tree_framework()
        checks = [(plugin, plugin.filter(unit)) for plugin in framework.filters]
        feasibility = framework.find_feasible(unit, self.scheduled, snapshot)
        # Each score plugin's scores (the framework sums them).
        scores = {
            plugin.name: plugin.score(unit, self.scheduled, feasibility)
            for plugin in framework.scores
        }
        answer: list[Any] | ScheduleError
        try:
            answer = GenericScheduler(framework).schedule(spec, binding.status, snapshot)
        except ScheduleError as err:
            answer = err
        if not isinstance(answer, ScheduleError):
            chosen = {t.name: t.replicas for t in answer}
            if chosen != {n: r or 0 for n, r in self.scheduled.items()}:
                self.ex.facts.append(("Scheduler now", _targets(answer)))
        else:
            chosen = {}
            self.ex.facts.append(("Scheduler now", str(answer)))
        for info in snapshot.clusters:
            name = info.name
            replicas = self.scheduled.get(name)
            verdict = ClusterVerdict(name, name in self.scheduled, replicas)
            self.ex.clusters.append(verdict)
            ready = find_condition(info.cluster.status.conditions, CONDITION_READY)
            if ready is not None and ready.status != "True":
                verdict.notes.append(f"Ready={ready.status} ({ready.reason or ''})")
            if info.deleting:
                verdict.why = "being deleted: the scheduler considers it no more"
                continue
            for plugin, check in checks:
                reason = check(info)
                spared = reason is not None and plugin.spares_scheduled and verdict.selected
                verdict.verdicts.append(
                    Verdict(plugin.name, reason is None or spared, reason or "", spared)
                )
            if name in feasibility:
                verdict.scores = {plugin: given.get(name, 0) for plugin, given in scores.items()}
            verdict.why = self.why(verdict, name in feasibility, chosen, answer)
        return answer

    def why(
        self,
        verdict: ClusterVerdict,
        fits: bool,
        chosen: Mapping[str, int | None],
        answer: list[Any] | ScheduleError,
    ) -> str:
        name = verdict.name
        if not fits:
            if verdict.selected:
                return (
                    "in the result, but no longer fits: the scheduler takes it out when it "
                    "next schedules the binding"
                )
            return "does not fit"
        if verdict.selected:
            return "selected"
        if name in chosen:
            reason = schedule_reason(self.binding, self.snapshot)
            if reason is None:
                return (
                    "fits, and the scheduler would choose it now; it schedules this binding "
                    "again when its placement or replicas change or a reschedule is triggered"
                )
            return f"fits; the scheduler chooses it on its next pass ({reason})"
        if isinstance(answer, ScheduleError):
            return f"fits, but scheduling fails: {answer}"
        placement = self.binding.spec.placement
        assert placement is not None
        constraints = placement.spread_constraints or []
        if constraints and not spread_ignored(placement):
            spread = ", ".join(
                f"{c.spread_by_field or c.spread_by_label} "
                f"minGroups={c.min_groups or 0} maxGroups={c.max_groups or 0}"
                for c in constraints
                if c.spread_by_field in (SPREAD_BY_FIELD_CLUSTER, SPREAD_BY_FIELD_REGION)
                or c.spread_by_label
            )
            return (
                f"fits, but not chosen: spreadConstraints ({spread}) let the scheduler "
                f"choose {', '.join(chosen) or 'none'}, ranked first by score, then "
                "available replicas, then name"
            )
        if placement.replica_scheduling_type() == REPLICA_SCHEDULING_DIVIDED:
            return "fits, but the replica division gives it no replicas"
        return "fits, but not chosen"

    # --- what it waits for -----------------------------------------------------------------------

    def scheduler_waits(self, answer: list[Any] | ScheduleError) -> None:
        binding, waiting = self.binding, self.ex.waiting
        condition = find_condition(binding.status.conditions, CONDITION_SCHEDULED)
        if condition is None:
            waiting.append("the scheduler: the binding has not been scheduled yet")
        elif condition.status != "True":
            retry = {
                REASON_NO_CLUSTER_FIT: "tried again when a cluster changes",
                REASON_UNSCHEDULABLE: "tried again within 5m",
            }.get(condition.reason or "", "retried with backoff")
            waiting.append(f"the scheduler: {condition.reason}: {condition.message} ({retry})")
        observed = binding.status.scheduler_observed_generation
        if observed != binding.metadata.generation:
            waiting.append(
                f"the scheduler to observe generation {binding.metadata.generation} "
                f"(it has observed {observed})"
            )

    def health_waits(self) -> None:
        for name in self.scheduled:
            item = self.health.get(name)
            if item is None:
                self.ex.waiting.append(f"{name} to report the workload (no status from it yet)")
            elif item.applied is False:
                self.ex.waiting.append(
                    f"{name} to apply the workload: {item.applied_message or 'not applied'}"
                )
            elif item.health != RESOURCE_HEALTHY:
                self.ex.waiting.append(
                    f"{name} to report the workload Healthy (it is {item.health or 'Unknown'})"
                )
            for verdict in self.ex.clusters:
                if verdict.name == name and item is not None:
                    applied = "applied" if item.applied else "not applied"
                    verdict.notes.append(f"{applied}, {item.health or 'health Unknown'}")

    def _unhealthy(self) -> list[str]:
        """The clusters of the result not reporting the workload Healthy, with what they say."""
        unhealthy = []
        for name in self.scheduled:
            item = self.health.get(name)
            state = "no status yet" if item is None else (item.health or "Unknown")
            if item is None or item.health != RESOURCE_HEALTHY:
                unhealthy.append(f"{name} ({state})")
        return unhealthy

    def _timeout_text(self, task: GracefulEvictionTask) -> str:
        timeout = task_timeout(task, self.options.graceful_eviction_timeout)
        if task.grace_period_seconds is not None:
            return f"gracePeriodSeconds {task.grace_period_seconds}"
        return f"graceful-eviction-timeout {format_duration(timeout)}"

    def evictions(self) -> None:
        self.retired_tasks()
        timeout = self.options.graceful_eviction_timeout
        option = assessment_of(self.binding, timeout)
        for task in self.binding.spec.graceful_eviction_tasks or ():
            record = _task_record(task, "waiting")
            created = task.creation_timestamp
            if created is None:
                record.why = (
                    "to be stamped: the graceful eviction controller gives it its "
                    "creationTimestamp on its first pass"
                )
            elif task.suppress_deletion:
                record.why = "a user to set suppressDeletion to false (kept until then)"
            else:
                decided = retirement(task, self.now, option)
                expiry = created + task_timeout(task, timeout)
                if decided is not None:
                    record.why = (
                        f"the graceful eviction controller's next pass, which retires it: "
                        f"{self._retired_words(decided, task, option)}"
                    )
                elif not option.has_scheduled:
                    record.why = (
                        "the scheduler to observe the binding's generation; then the workload "
                        f"to be Healthy on every cluster of the result, since "
                        f"{format_time(created)}, or until {format_time(expiry)} "
                        f"({self._timeout_text(task)})"
                    )
                else:
                    record.why = (
                        f"the workload to be Healthy on {', '.join(self._unhealthy())}, "
                        f"since {format_time(created)}, or until {format_time(expiry)} "
                        f"({self._timeout_text(task)})"
                    )
            self.ex.evictions.append(record)
            for verdict in self.ex.clusters:
                if verdict.name == task.from_cluster:
                    verdict.notes.append(_kept(task))
            self.ex.waiting.append(
                f"the graceful eviction of {task.from_cluster} ({task.producer}, "
                f"{task.reason}): {record.why}"
            )

    def _retired_words(self, decided: str, task: GracefulEvictionTask, option: Any) -> str:
        if decided == RETIRED_SUPPRESSION_LIFTED:
            return "suppressDeletion was set to false"
        if decided == RETIRED_TIMED_OUT:
            return f"timed out ({self._timeout_text(task)})"
        if decided == RETIRED_HEALTHY:
            healthy = ", ".join(t.name for t in option.schedule_result) or "none"
            return f"the workload was Healthy on every cluster of the result ({healthy})"
        return decided

    def retired_tasks(self) -> None:
        """The tasks retired before now: Karmada's Events, and the binding as it was."""
        try:
            events = self.source.events(self.binding.to_dict())
        except StatusError as exc:
            self.ex.notes.append(f"the binding's Events could not be read: {read_error(exc)}")
            return
        records = []
        for event in events:
            reason = event.get("reason")
            if reason not in (
                EVICT_WORKLOAD_FROM_CLUSTER_SUCCEED,
                EVICT_WORKLOAD_FROM_CLUSTER_FAILED,
            ):
                continue
            match = _EVICTED.match(str(event.get("message", "")))
            if match is None:
                continue
            first = event.get("firstTimestamp") or event.get("eventTime")
            last = event.get("lastTimestamp") or first
            record = EvictionTask(
                match["cluster"],
                "retired" if reason == EVICT_WORKLOAD_FROM_CLUSTER_SUCCEED else "failed",
                retired=parse_time(first) if first else None,
                count=int(event.get("count") or 1),
            )
            if reason == EVICT_WORKLOAD_FROM_CLUSTER_FAILED:
                record.why = (
                    "the eviction could not be written to the binding "
                    f"(Event {reason}: {event.get('message')})"
                )
            else:
                self._retired_from_history(record, event)
            if record.count > 1 and last:
                record.why += f"; {record.count} times, the last at {format_time(parse_time(last))}"
            records.append(record)
        records.sort(key=lambda r: (r.retired or self.now, r.cluster))
        self.ex.evictions.extend(records)

    def _retired_from_history(self, record: EvictionTask, event: Mapping[str, Any]) -> None:
        """The task as the binding held it when the controller retired it, if the hub still
        holds that version; why the controller retired it."""
        involved = event.get("involvedObject") or {}
        version = str(involved.get("resourceVersion") or "")
        meta = self.binding.metadata
        then = None
        refused = False
        try:
            if version:
                then = self.source.version_at(
                    self.scope.info, meta.name, meta.namespace or "", version
                )
        except StatusError as exc:
            refused = True
            note = f"the binding's earlier versions could not be read: {read_error(exc)}"
            if note not in self.ex.notes:
                self.ex.notes.append(note)
        old = REGISTRY.decode(then) if then is not None else None
        task = None
        if isinstance(old, ResourceBinding | ClusterResourceBinding):
            task = next(
                (
                    t
                    for t in old.spec.graceful_eviction_tasks or ()
                    if t.from_cluster == record.cluster
                ),
                None,
            )
        if task is None or not isinstance(old, ResourceBinding | ClusterResourceBinding):
            if refused:
                gone = "the binding as it was then could not be read (see Notes)"
            elif self.source.history:
                gone = "the hub no longer holds the binding as it was then"
            else:
                gone = "a dump holds no earlier versions of the binding"
            record.why = (
                f"retired (Event {EVICT_WORKLOAD_FROM_CLUSTER_SUCCEED}); {gone}, so the "
                "task's producer, reason and creation are not known (Karmada records only "
                "the Event)"
            )
            return
        filled = _task_record(task, "retired")
        record.producer, record.reason, record.message = (
            filled.producer,
            filled.reason,
            filled.message,
        )
        record.purge_mode, record.replicas, record.created = (
            filled.purge_mode,
            filled.replicas,
            filled.created,
        )
        option = assessment_of(old, self.options.graceful_eviction_timeout)
        decided = (
            retirement(task, record.retired, option)
            if task.creation_timestamp is not None and record.retired is not None
            else None
        )
        record.why = (
            self._retired_words(decided, task, option)
            if decided is not None
            else f"retired (Event {EVICT_WORKLOAD_FROM_CLUSTER_SUCCEED})"
        )

    def taint_manager(self) -> None:
        """NoExecute taints on the clusters of the result: the taint manager's verdict, by the
        tolerations the binding was scheduled with (the applied placement)."""
        try:
            placement = applied_placement(self.binding)
        except InvalidPlacement as exc:
            self.ex.notes.append(str(exc))
            return
        tolerations = placement.cluster_tolerations if placement is not None else None
        for name in self.scheduled:
            info = self.snapshot.by_name.get(name)
            if info is None:
                self.ex.waiting.append(f"{name}: no such cluster on the hub")
                continue
            verdict = no_execute_eviction(info.cluster.spec.taints, tolerations, self.now)
            cluster_verdict = next(v for v in self.ex.clusters if v.name == name)
            if verdict.evict_now:
                taints = (
                    ", ".join(f"{{{taint_to_string(t)}}}" for t in verdict.untolerated)
                    or "NoExecute taints whose tolerationSeconds ran out"
                )
                text = (
                    f"the taint manager to evict it from {name}: {taints} "
                    "(it acts with the Failover gate and enable-no-execute-taint-eviction, "
                    "paced by resource-eviction-rate)"
                )
                cluster_verdict.notes.append(f"untolerated NoExecute: {taints}")
                self.ex.waiting.append(text)
            elif verdict.evict_after is not None:
                until = format_time(self.now + verdict.evict_after)
                cluster_verdict.notes.append(f"NoExecute taints tolerated until {until}")
                self.ex.waiting.append(
                    f"the tolerationSeconds on {name} to run out at {until}: then the taint "
                    f"manager evicts the workload from {name}, unless the taints are gone"
                )

    def works(self) -> None:
        """Works being deleted: the execution controller holds a Work's deletion until its
        cluster is Ready."""
        binding_id = self.scope.binding_id(self.binding)
        if not binding_id:
            return
        try:
            works = self.source.list(
                WORK, None, label_selector=f"{self.scope.permanent_id_label}={binding_id}"
            )
        except StatusError as exc:
            self.ex.notes.append(f"the binding's Works could not be read: {read_error(exc)}")
            return
        for work in works:
            meta = work.get("metadata") or {}
            deleting = meta.get("deletionTimestamp")
            namespace = str(meta.get("namespace", ""))
            if not deleting or not namespace.startswith(EXECUTION_SPACE_PREFIX):
                continue
            cluster = namespace.removeprefix(EXECUTION_SPACE_PREFIX)
            info = self.snapshot.by_name.get(cluster)
            ready = info is not None and _ready(info.cluster)
            where = f"the Work {namespace}/{meta.get('name')}"
            if ready:
                self.ex.waiting.append(
                    f"{cluster} to remove the workload: {where} is being deleted since {deleting}"
                )
            else:
                self.ex.waiting.append(
                    f"{cluster} to be Ready again: {where} is being deleted since {deleting}, "
                    "and the execution controller keeps it until the workload is removed there"
                )


def _ready(cluster: Cluster) -> bool:
    condition = find_condition(cluster.status.conditions, CONDITION_READY)
    return condition is not None and condition.status == "True"


def _kept(task: GracefulEvictionTask) -> str:
    """What becomes of the evicted cluster's Work while its task waits (the binding
    controller's existing_clusters)."""
    if task.purge_mode == PURGE_MODE_DIRECTLY:
        return "being evicted (purge mode Directly): its Work is deleted at once"
    mode = task.purge_mode or "unset"
    return f"being evicted (purge mode {mode}): its Work stays while the task waits"


def _task_record(task: GracefulEvictionTask, state: str) -> EvictionTask:
    return EvictionTask(
        task.from_cluster,
        state,
        producer=task.producer,
        reason=task.reason,
        message=task.message or "",
        purge_mode=task.purge_mode or "",
        replicas=task.replicas,
        created=task.creation_timestamp,
    )
