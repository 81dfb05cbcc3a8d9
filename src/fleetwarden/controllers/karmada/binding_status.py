"""The binding status controllers: what the members report in each Work, aggregated into its
binding's status (pkg/controllers/status rb_status_controller.go and crb_status_controller.go;
helper.AggregateResourceBindingWorkStatus in pkg/util/helper/workstatus.go).

status.aggregatedStatus holds one item per cluster with a Work that is not being deleted,
sorted by cluster: `applied` from the Work's Applied condition (its message when not True),
and the template's manifest status and health as reflected by the member (health Unknown
until there is one). FullyApplied is True when every cluster that should have a Work (the
scheduled ones and those still being evicted gracefully) has one applied. The Scheduled
condition stays as the scheduler wrote it; AggregateStatusSucceed when the status changed.

Upstream's event filters let a binding through when it is scheduled (status.lastScheduledTime)
and its template revision changed, and a Work when its status changed or it was deleted; a
Work's creation does not count. Each controller keeps what it last saw of each binding to
the same effect, so that, as upstream, scheduling alone writes no status: the members'
first reports do. The template's own status is then summed from the members' (for a
Deployment: replicas, ready, updated, available), with an Event on it too.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from fleetwarden.api.karmada.work import (
    CONDITION_FULLY_APPLIED,
    CONDITION_WORK_APPLIED,
    RESOURCE_UNKNOWN,
    ManifestStatus,
    ObjectReference,
    ResourceBindingSpec,
    ResourceBindingStatus,
    Work,
    WorkStatus,
)
from fleetwarden.api.kinds import split_api_version
from fleetwarden.api.meta import Condition, Resource, find_condition
from fleetwarden.controllers.karmada.work import (
    CLUSTER_RESOURCE_BINDING,
    RESOURCE_BINDING,
    WORK,
    Binding,
    BindingScope,
    cluster_of,
    existing_clusters,
    resource_template,
)
from fleetwarden.runtime.events import NORMAL
from fleetwarden.runtime.informer import split_key
from fleetwarden.runtime.manager import DONE, Context, Controller, Result, Watches
from fleetwarden.runtime.status import update_status_if_changed
from fleetwarden.semantics.conditions import set_status_condition
from fleetwarden.semantics.resource_interpreter import aggregate_status

RB_STATUS_CONTROLLER = "resource-binding-status-controller"
CRB_STATUS_CONTROLLER = "cluster-resource-binding-status-controller"

AGGREGATE_STATUS_SUCCEED = "AggregateStatusSucceed"
FULLY_APPLIED_SUCCESS_REASON = "FullyAppliedSuccess"
FULLY_APPLIED_FAILED_REASON = "FullyAppliedFailed"
FULLY_APPLIED_SUCCESS_MESSAGE = "All works have been successfully applied"
FULLY_APPLIED_FAILED_MESSAGE = "Failed to apply all works, see status.aggregatedStatus for details"


class ManifestNotFound(Exception):
    """GetManifestIndex: a Work without the binding's resource template."""


@dataclass(frozen=True)
class _Seen:
    """What upstream's event filters compare: the template revision the binding names, and
    the status of each of its Works that has one (a Work without status has not been
    reported on: its creation does not count)."""

    template_revision: str | None
    reported: dict[tuple[str, str], WorkStatus]

    @classmethod
    def of(cls, binding: Binding, works: Iterable[Resource]) -> _Seen:
        reported = {
            (w.namespace, w.name): w.status
            for w in works
            if isinstance(w, Work) and (w.status.conditions or w.status.manifest_statuses)
        }
        return cls(binding.spec.resource.resource_version, reported)

    def passes(self, last: _Seen | None, scheduled: bool) -> bool:
        """bindingPredicateFn and workPredicateFn: a binding first seen (created, or after a
        restart) once scheduled; then a changed template revision once scheduled; any
        reported Work status that changed, appeared or went."""
        if last is None:
            return scheduled or bool(self.reported)
        revised = scheduled and self.template_revision != last.template_revision
        return revised or self.reported != last.reported


@dataclass
class BindingStatusController:
    name: str
    scope: BindingScope
    seen: dict[str, _Seen] = field(default_factory=dict)

    def controller(self) -> Controller:
        return Controller(
            name=self.name,
            watches=[Watches(self.scope.info), Watches(WORK, self.scope.binding_keys)],
            reconcile=self.reconcile,
            indexers={WORK: {self.scope.work_index: self.scope.index_func}},
        )

    def reconcile(self, key: str, ctx: Context) -> Result:
        namespace, name = split_key(key)
        binding = ctx.cache.informer(self.scope.info).get(name, namespace)
        if binding is None or binding.metadata.deletion_timestamp is not None:
            self.seen.pop(key, None)
            return DONE
        assert isinstance(binding, Binding)
        works = ctx.cache.informer(WORK).by_index(
            self.scope.work_index, self.scope.binding_id(binding)
        )
        seen = _Seen.of(binding, works)
        scheduled = binding.status.last_scheduled_time is not None
        if seen.passes(self.seen.get(key), scheduled):
            self._aggregate(binding, works, ctx)
        self.seen[key] = seen  # after aggregating: a failed attempt is retried
        return DONE

    def _aggregate(self, binding: Binding, works: list[Resource], ctx: Context) -> None:
        """AggregateResourceBindingWorkStatus."""
        items = aggregated_status(works, binding.spec.resource)
        wire = binding.status.to_dict()
        wire.pop("aggregatedStatus", None)  # omitempty
        if items:
            wire["aggregatedStatus"] = items
        conditions = set_status_condition(
            binding.status.conditions,
            fully_applied_condition(binding.spec, items),
            ctx.clock.now(),
        )
        wire["conditions"] = [condition.to_dict() for condition in conditions]
        status = ResourceBindingStatus.model_validate(wire)
        if update_status_if_changed(ctx.store, binding, status):
            message = f"Update {self.scope.describe(binding)} with AggregatedStatus successfully."
            ctx.recorder.event(binding, NORMAL, AGGREGATE_STATUS_SUCCEED, message)
        _update_resource_status(binding, items, ctx)


def _update_resource_status(binding: Binding, items: list[dict[str, Any]], ctx: Context) -> None:
    """updateResourceStatus: the template's own status, summed from the members'."""
    template = resource_template(binding, ctx.cache)
    if template is None:
        return
    wire = template.to_dict()
    status = aggregate_status(wire, items)
    if status is None:
        return
    wire["status"] = status
    ctx.store.update(wire, subresource="status")
    message = "Update Resource with AggregatedStatus successfully."
    ctx.recorder.event(template, NORMAL, AGGREGATE_STATUS_SUCCEED, message)


def aggregated_status(works: Iterable[Resource], ref: ObjectReference) -> list[dict[str, Any]]:
    """assembleWorkStatus: AggregatedStatusItems on the wire (Go's omitempty), by cluster."""
    items = [
        _item(w, ref) for w in works if isinstance(w, Work) and not w.metadata.deletion_timestamp
    ]
    return sorted(items, key=lambda item: str(item["clusterName"]))


def _item(work: Work, ref: ObjectReference) -> dict[str, Any]:
    ordinal = manifest_index(work, ref)
    item: dict[str, Any] = {"clusterName": cluster_of(work) or "", "health": RESOURCE_UNKNOWN}
    applied = find_condition(work.status.conditions, CONDITION_WORK_APPLIED)
    if applied is None or applied.status != "True":
        item["appliedMessage"] = applied.message if applied else ""
    else:
        item["applied"] = True
        reported = _manifest_status(work, ordinal, ref)
        if reported is not None:
            item["status"], item["health"] = reported.status, reported.health
    return {key: value for key, value in item.items() if value not in (None, "")}


def _manifest_status(work: Work, ordinal: int, ref: ObjectReference) -> ManifestStatus | None:
    """The status reported for the template's manifest (equalIdentifier)."""
    group, version = split_api_version(ref.api_version)
    wanted = (ordinal, group, version, ref.kind, ref.namespace or "", ref.name)
    for reported in work.status.manifest_statuses or []:
        i = reported.identifier
        if (i.ordinal, i.group or "", i.version, i.kind, i.namespace or "", i.name) == wanted:
            return reported
    return None


def manifest_index(work: Work, ref: ObjectReference) -> int:
    """GetManifestIndex: where the binding's resource template sits in the Work."""
    for index, manifest in enumerate(work.spec.workload.manifests or []):
        metadata = manifest.get("metadata") or {}
        found = (
            manifest.get("apiVersion"),
            manifest.get("kind"),
            metadata.get("namespace", ""),
            metadata.get("name"),
        )
        if found == (ref.api_version, ref.kind, ref.namespace or "", ref.name):
            return index
    raise ManifestNotFound(f"no such manifest exist in Work {work.namespace}/{work.name}")


def fully_applied_condition(spec: ResourceBindingSpec, items: list[dict[str, Any]]) -> Condition:
    """generateFullyAppliedCondition."""
    clusters = existing_clusters(spec)
    applied = (
        bool(clusters)
        and len(clusters) == len(items)
        and all(item.get("applied") and item["clusterName"] in clusters for item in items)
    )
    if applied:
        return Condition(
            type=CONDITION_FULLY_APPLIED, status="True",
            reason=FULLY_APPLIED_SUCCESS_REASON, message=FULLY_APPLIED_SUCCESS_MESSAGE,
        )  # fmt: skip
    return Condition(
        type=CONDITION_FULLY_APPLIED, status="False",
        reason=FULLY_APPLIED_FAILED_REASON, message=FULLY_APPLIED_FAILED_MESSAGE,
    )  # fmt: skip


def resource_binding_status_controller() -> Controller:
    """karmada-controller-manager's `bindingStatus` controller for ResourceBindings."""
    return BindingStatusController(RB_STATUS_CONTROLLER, RESOURCE_BINDING).controller()


def cluster_resource_binding_status_controller() -> Controller:
    """karmada-controller-manager's `bindingStatus` controller for ClusterResourceBindings."""
    return BindingStatusController(CRB_STATUS_CONTROLLER, CLUSTER_RESOURCE_BINDING).controller()
