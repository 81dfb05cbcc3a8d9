"""OCM's work agent (klusterlet-work-agent): what a managed cluster does with the
ManifestWorks in its namespace on the hub.

For each ManifestWork not being deleted, in one pass (upstream splits it between the
finalizer, manifestwork, appliedmanifestwork and available-status controllers):

- the `cluster.open-cluster-management.io/manifest-work-cleanup` finalizer, and the
  AppliedManifestWork `<hub hash>-<work name>` on the member, which owns what is applied;
- each manifest applied, Namespaces and RBAC before the workloads, by its updateStrategy:
  Update writes the manifest (the member's own metadata kept), ServerSideApply merges it into
  the object, CreateOnly creates it when missing and otherwise only adds the owner,
  ReadOnly writes nothing. An object the work does not own (deleteOption Orphan, or a
  SelectivelyOrphan rule naming it) gets no owner reference from it, and loses one it had;
- status: per manifest Applied, Available (the object exists) and StatusFeedbackSynced with
  the feedback rules' values (WellKnownStatus for Deployment, DaemonSet, Job and Pod, or
  JSONPaths under the object) and whatever its conditionRules set (members/
  condition_rules.py); the work's Applied, Available and, per condition the rules set, that
  condition aggregated (Progressing True where any manifest is; others False where any is);
- the AppliedManifestWork's appliedResources, sorted; an object the work no longer lists is
  deleted from the member when the work owned it alone (another work's owner reference
  keeps it, with ours removed), and left when it does not own it.

A ManifestWork being deleted has its applied objects deleted (in the background) by the
same rule; once none is left (an object's finalizers may hold it a while), its
AppliedManifestWork goes, then its finalizer is released. Status is read again every
STATUS_SYNC_INTERVAL, the agent's default `--status-sync-interval`, as upstream polls. A
member that refuses the agent's bookkeeping or does not answer leaves the work as it is
until the next pass.

The member is a Spoke: a simulated one (members/simulated.py) or a real cluster through
the kubernetes client (members/kube.py), the same rules for both.

A manifest whose Complete condition is true is still updated (upstream leaves it alone).
ServerSideApply reports no conflicts: the simulated member tracks no field managers.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, NamedTuple, Protocol

from fleetwarden.api.errors import Conflict, NotFound
from fleetwarden.api.meta import Condition
from fleetwarden.api.ocm import work as workv1
from fleetwarden.api.ocm.work import (
    AppliedManifestResourceMeta,
    FeedbackValue,
    FieldValue,
    ManifestCondition,
    ManifestConfigOption,
    ManifestResourceMeta,
    ManifestWork,
    StatusFeedbackResult,
)
from fleetwarden.api.registry import REGISTRY
from fleetwarden.members.condition_rules import RULE_PREFIX, evaluate_rules
from fleetwarden.runtime.manager import Context
from fleetwarden.runtime.status import update_status_if_changed
from fleetwarden.semantics.conditions import set_status_condition
from fleetwarden.semantics.jsonpath import JSONPathError, compile_path

logger = logging.getLogger(__name__)

STATUS_SYNC_INTERVAL = timedelta(seconds=10)
# How soon a deleted work whose objects are still being deleted (their finalizers hold
# them) looks again; upstream backs off from 50 ms to a minute.
PENDING_DELETION_RECHECK = timedelta(seconds=1)
APPLIED_MANIFEST_WORK = workv1.APPLIED_MANIFEST_WORK_KIND.kind

# resourceApplyOrder: kinds applied first (lower rank); others after them, in spec order.
_APPLY_ORDER = {
    **dict.fromkeys(("PriorityClass", "Namespace", "CustomResourceDefinition",
                     "StorageClass", "PersistentVolume", "PodSecurityPolicy"), 0),
    **dict.fromkeys(("ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding"), 1),
    **dict.fromkeys(("NetworkPolicy", "ResourceQuota", "LimitRange",
                     "PodDisruptionBudget", "ServiceAccount"), 2),
    **dict.fromkeys(("Secret", "ConfigMap", "PersistentVolumeClaim"), 3),
    "Service": 4,
    **dict.fromkeys(("DaemonSet", "Pod", "ReplicationController", "ReplicaSet", "Deployment",
                     "HorizontalPodAutoscaler", "StatefulSet", "Job", "CronJob"), 5),
    **dict.fromkeys(("APIService", "MutatingWebhookConfiguration",
                     "ValidatingWebhookConfiguration", "ValidatingAdmissionPolicy",
                     "ValidatingAdmissionPolicyBinding"), 6),
}  # fmt: skip

# DefaultWellKnownStatusRule: (group, version, kind) -> (name, path).
_WELL_KNOWN_STATUS: dict[tuple[str, str, str], tuple[tuple[str, str], ...]] = {
    ("apps", "v1", "Deployment"): (
        ("ReadyReplicas", ".status.readyReplicas"),
        ("Replicas", ".status.replicas"),
        ("AvailableReplicas", ".status.availableReplicas"),
    ),
    ("apps", "v1", "DaemonSet"): (
        ("NumberReady", ".status.numberReady"),
        ("DesiredNumberScheduled", ".status.desiredNumberScheduled"),
        ("NumberAvailable", ".status.numberAvailable"),
    ),
    ("batch", "v1", "Job"): (
        ("JobComplete", '.status.conditions[?(@.type=="Complete")].status'),
        ("JobSucceeded", ".status.succeeded"),
    ),
    ("", "v1", "Pod"): (
        ("PodReady", '.status.conditions[?(@.type=="Ready")].status'),
        ("PodPhase", ".status.phase"),
    ),
}


class ObjectRef(NamedTuple):
    """An object on the member, by group, version, resource, namespace and name."""

    group: str
    version: str
    resource: str
    namespace: str
    name: str


class SpokeError(Exception):
    """The member refused a write: its API server's message."""


class Spoke(Protocol):
    """The member's API as the work agent uses it (its dynamic client); writes raise
    SpokeError when the member refuses them."""

    def get(self, ref: ObjectRef) -> dict[str, Any] | None:
        """The object as it is now (status included), or None."""
        ...

    def create(self, ref: ObjectRef, obj: dict[str, Any]) -> dict[str, Any]: ...

    def update(self, ref: ObjectRef, obj: dict[str, Any]) -> dict[str, Any]: ...

    def update_status(self, ref: ObjectRef, obj: dict[str, Any]) -> dict[str, Any]:
        """The object's status written (its status subresource)."""
        ...

    def delete(self, ref: ObjectRef) -> None:
        """Deleted in the background; an object with finalizers stays until they go."""
        ...


def hub_hash(hub_url: str) -> str:
    """The hub's hash that names AppliedManifestWorks: sha256 of its API server's URL."""
    return hashlib.sha256(hub_url.encode()).hexdigest()


def applied_ref(hub: str, work_name: str) -> ObjectRef:
    resource = workv1.APPLIED_MANIFEST_WORK_KIND.plural
    return ObjectRef(workv1.GROUP, workv1.VERSION, resource, "", f"{hub}-{work_name}")


@dataclass(frozen=True)
class _Result:
    meta: ManifestResourceMeta
    ref: ObjectRef | None
    error: str | None = None


def sync_manifest_works(
    spoke: Spoke, works: Iterable[ManifestWork], hub: str, ctx: Context, now: datetime
) -> list[datetime]:
    """Every ManifestWork of the cluster, applied or finalized; when to look again."""
    wakeups = []
    for work in works:
        try:
            wakeups += _sync_work(spoke, work, hub, ctx, now)
        except SpokeError as err:
            # The member refused the agent's bookkeeping, or did not answer: the work is
            # tried again at the agent's pace, its status left as it was.
            logger.info("ManifestWork %s/%s: %s", work.namespace, work.name, err)
            wakeups.append(now + STATUS_SYNC_INTERVAL)
    return wakeups


def _sync_work(
    spoke: Spoke, work: ManifestWork, hub: str, ctx: Context, now: datetime
) -> list[datetime]:
    if work.metadata.deletion_timestamp is not None:
        return _finalize(spoke, work, hub, ctx, now)
    if workv1.MANIFEST_WORK_FINALIZER not in (work.metadata.finalizers or []):
        # add_finalizer_controller: its update brings the work back for the rest.
        _set_finalizers(
            work, [*(work.metadata.finalizers or []), workv1.MANIFEST_WORK_FINALIZER], ctx
        )
        return []
    _sync(spoke, work, hub, ctx, now)
    return [now + STATUS_SYNC_INTERVAL]


def _set_finalizers(work: ManifestWork, finalizers: list[str], ctx: Context) -> None:
    obj = work.to_dict()
    obj["metadata"]["finalizers"] = finalizers
    # A conflict: a newer version is on its way, to be seen then; NotFound: it is gone.
    with contextlib.suppress(Conflict, NotFound):
        ctx.store.update(obj)


def _condition(
    type_: str, status: str, reason: str, message: str = "", generation: int | None = None
) -> Condition:
    condition = Condition(type=type_, status=status, reason=reason, message=message)
    if generation is not None:  # left out of the wire otherwise, as Go's omitempty does
        condition.observed_generation = generation
    return condition


def _sync(spoke: Spoke, work: ManifestWork, hub: str, ctx: Context, now: datetime) -> None:
    applied = _applied_manifest_work(spoke, work, hub)
    owner = _owner(applied)
    results = [_apply(spoke, work, i, m, owner) for i, m in _ordered(work)]
    results.sort(key=lambda r: r.meta.ordinal)
    _track_applied_resources(spoke, applied, results, owner)
    status = work.status.model_copy()
    status.resource_status = workv1.ManifestResourceStatus(
        manifests=[_manifest_condition(spoke, work, r, now) for r in results] or None
    )
    conditions = set_status_condition(status.conditions, _work_applied(work, results), now)
    manifests = status.resource_status.manifests or []
    for aggregated in [_work_available(work, manifests), *_work_rule_conditions(work, manifests)]:
        conditions = set_status_condition(conditions, aggregated, now)
    status.conditions = _current_rules(conditions, work.metadata.generation)
    update_status_if_changed(ctx.store, work, status)


def _ordered(work: ManifestWork) -> list[tuple[int, dict[str, Any]]]:
    """The manifests with their ordinals, in the order they are applied."""
    manifests = list(enumerate(work.spec.workload.manifests or []))
    return sorted(manifests, key=lambda m: _APPLY_ORDER.get(str(m[1].get("kind", "")), 1000))


def _resource_meta(ordinal: int, manifest: Mapping[str, Any]) -> ManifestResourceMeta:
    info = REGISTRY.info(str(manifest.get("apiVersion", "")), str(manifest.get("kind", "")))
    metadata = manifest.get("metadata") or {}
    return ManifestResourceMeta(
        ordinal=ordinal, group=info.group, version=info.version, kind=info.kind,
        resource=info.plural, name=str(metadata.get("name", "")),
        namespace=str(metadata.get("namespace", "")),
    )  # fmt: skip


def _ref(meta: ManifestResourceMeta | AppliedManifestResourceMeta) -> ObjectRef:
    return ObjectRef(meta.group, meta.version, meta.resource, meta.namespace, meta.name)


# --- applying --------------------------------------------------------------------------------


def _apply(
    spoke: Spoke,
    work: ManifestWork,
    ordinal: int,
    manifest: dict[str, Any],
    owner: dict[str, Any],
) -> _Result:
    meta = _resource_meta(ordinal, manifest)
    ref = _ref(meta)
    option = _config(meta, work.spec.manifest_configs)
    strategy = option.update_strategy.type if option and option.update_strategy else ""
    if strategy == workv1.READ_ONLY:
        return _Result(meta, ref)
    owned = _owned_by_the_work(meta, work.spec.delete_option)
    try:
        _write(spoke, ref, manifest, strategy, lambda obj: _with_owner(obj, owner, owned))
    except SpokeError as err:
        return _Result(meta, ref, str(err))
    return _Result(meta, ref)


def _write(
    spoke: Spoke,
    ref: ObjectRef,
    manifest: dict[str, Any],
    strategy: str,
    owned: Callable[[dict[str, Any]], dict[str, Any]],
) -> None:
    """The applier of the strategy: create what is missing; then Update writes the manifest,
    ServerSideApply merges it, CreateOnly only sets the owner."""
    existing = spoke.get(ref)
    if existing is None:
        spoke.create(ref, owned(_clean(manifest)))
        return
    if strategy == workv1.CREATE_ONLY:
        desired = existing
    elif strategy == workv1.SERVER_SIDE_APPLY:
        desired = _updated(existing, _merged(existing, manifest))
    else:
        desired = _updated(existing, manifest)
    if (updated := owned(desired)) != existing:
        spoke.update(ref, updated)


def _clean(manifest: Mapping[str, Any]) -> dict[str, Any]:
    """What is created: the manifest without uid, resourceVersion or status."""
    metadata = {
        k: v for k, v in (manifest.get("metadata") or {}).items()
        if k not in ("uid", "resourceVersion", "ownerReferences")
    }  # fmt: skip
    return {**{k: v for k, v in manifest.items() if k != "status"}, "metadata": metadata}


def _updated(existing: Mapping[str, Any], desired: Mapping[str, Any]) -> dict[str, Any]:
    """The manifest written over the member's object: its identity, status and owners kept,
    labels and annotations merged."""
    ours, theirs = _clean(desired)["metadata"], existing.get("metadata") or {}
    metadata = {**theirs, **ours}
    for key in ("labels", "annotations"):
        if theirs.get(key) or ours.get(key):
            metadata[key] = {**(theirs.get(key) or {}), **(ours.get(key) or {})}
    updated = {**_clean(desired), "metadata": metadata}
    if "status" in existing:
        updated["status"] = existing["status"]
    return updated


def _merged(existing: Mapping[str, Any], manifest: Mapping[str, Any]) -> dict[str, Any]:
    """Server-side apply of the manifest: its fields set, the object's others kept."""
    merged = dict(existing)
    for key, value in manifest.items():
        before = merged.get(key)
        both_maps = isinstance(before, Mapping) and isinstance(value, Mapping)
        merged[key] = _merged(before, value) if both_maps else value  # type: ignore[arg-type]
    return merged


def _with_owner(obj: dict[str, Any], owner: dict[str, Any], owned: bool) -> dict[str, Any]:
    """The object owned by the AppliedManifestWork, or (not owned) without its reference."""
    metadata = obj.get("metadata") or {}
    others = [o for o in metadata.get("ownerReferences") or [] if o.get("uid") != owner["uid"]]
    references = [*others, owner] if owned else others
    new_metadata = {k: v for k, v in metadata.items() if k != "ownerReferences"}
    if references:
        new_metadata["ownerReferences"] = references
    return {**obj, "metadata": new_metadata}


def _owned_by_the_work(meta: ManifestResourceMeta, option: workv1.DeleteOption | None) -> bool:
    """OwnedByTheWork: Foreground (the default) owns all, Orphan none, SelectivelyOrphan
    all but those its rules name."""
    policy = option.propagation_policy if option else workv1.DELETE_FOREGROUND
    if policy == workv1.DELETE_ORPHAN:
        return False
    if policy != workv1.DELETE_SELECTIVELY_ORPHAN or option is None:
        return True
    rules = option.selectively_orphans.orphaning_rules if option.selectively_orphans else None
    return not any(_identifies(rule, meta) for rule in rules or [])


def _identifies(rule: workv1.ResourceIdentifier, meta: ManifestResourceMeta) -> bool:
    identity = (meta.group, meta.resource, meta.name, meta.namespace)
    return (rule.group, rule.resource, rule.name, rule.namespace) == identity


def _config(
    meta: ManifestResourceMeta, configs: list[ManifestConfigOption] | None
) -> ManifestConfigOption | None:
    """FindManifestConfiguration: the option whose resourceIdentifier names the object."""
    return next((c for c in configs or [] if _identifies(c.resource_identifier, meta)), None)


# --- AppliedManifestWork -----------------------------------------------------------------------


def _applied_manifest_work(
    spoke: Spoke, work: ManifestWork, hub: str
) -> workv1.AppliedManifestWork:
    ref = applied_ref(hub, work.name)
    existing = spoke.get(ref) or spoke.create(
        ref,
        {
            "apiVersion": f"{workv1.GROUP}/{workv1.VERSION}",
            "kind": APPLIED_MANIFEST_WORK,
            "metadata": {
                "name": ref.name,
                "finalizers": [workv1.APPLIED_MANIFEST_WORK_FINALIZER],
            },
            "spec": {"hubHash": hub, "agentID": hub, "manifestWorkName": work.name},
        },
    )
    return workv1.AppliedManifestWork.model_validate(existing)


def _owner(applied: workv1.AppliedManifestWork) -> dict[str, Any]:
    """NewAppliedManifestWorkOwner: an owner reference, not a controller one, since several
    works may own one object."""
    return {
        "apiVersion": f"{workv1.GROUP}/{workv1.VERSION}",
        "kind": APPLIED_MANIFEST_WORK,
        "name": applied.name,
        "uid": applied.metadata.uid or "",
    }


def _track_applied_resources(
    spoke: Spoke,
    applied: workv1.AppliedManifestWork,
    results: list[_Result],
    owner: dict[str, Any],
) -> None:
    """appliedResources: what exists of the manifests now; what it held before and no
    longer does is deleted from the member (as the work's own deletion does)."""
    now_applied = []
    for result in results:
        obj = spoke.get(result.ref) if result.ref and not result.error else None
        if obj is not None:
            now_applied.append(_applied_meta(result.meta, obj))
    kept = {_key(r) for r in now_applied}
    gone = [r for r in applied.status.applied_resources or [] if _key(r) not in kept]
    _delete_applied(spoke, gone, owner)
    now_applied.sort(key=lambda r: (r.group, r.version, r.resource, r.namespace, r.name))
    _set_applied_resources(spoke, applied, now_applied)


def _set_applied_resources(
    spoke: Spoke,
    applied: workv1.AppliedManifestWork,
    resources: list[AppliedManifestResourceMeta],
) -> None:
    listed = [r.to_dict() for r in resources] or None
    obj = applied.to_dict()
    if obj.get("status", {}).get("appliedResources") != listed:
        obj["status"] = {**obj.get("status", {}), "appliedResources": listed}
        ref = applied_ref(applied.spec.hub_hash, applied.spec.manifest_work_name)
        spoke.update_status(ref, obj)


def _applied_meta(
    meta: ManifestResourceMeta, obj: Mapping[str, Any]
) -> AppliedManifestResourceMeta:
    return AppliedManifestResourceMeta(
        group=meta.group, version=meta.version, resource=meta.resource,
        namespace=meta.namespace, name=meta.name, uid=(obj.get("metadata") or {}).get("uid"),
    )  # fmt: skip


def _key(resource: AppliedManifestResourceMeta) -> tuple[str, ...]:
    return (resource.group, resource.resource, resource.namespace, resource.name)


def _delete_applied(
    spoke: Spoke, resources: Iterable[AppliedManifestResourceMeta], owner: dict[str, Any]
) -> list[AppliedManifestResourceMeta]:
    """DeleteAppliedResources: skip what the work does not own (orphaned, read only, or
    made again since); drop only our reference where another AppliedManifestWork owns it
    too; delete the rest. What is still there, being deleted, is pending."""
    pending = []
    for resource in resources:
        obj = spoke.get(_ref(resource))
        if obj is None:
            continue
        metadata = obj.get("metadata") or {}
        owners = metadata.get("ownerReferences") or []
        if not any(o.get("uid") == owner["uid"] for o in owners):
            continue
        others = [o for o in owners if o.get("uid") != owner["uid"]]
        if any(o.get("kind") == APPLIED_MANIFEST_WORK for o in others):
            spoke.update(_ref(resource), _with_owner(obj, owner, owned=False))
        elif resource.uid == metadata.get("uid"):
            if not metadata.get("deletionTimestamp"):
                spoke.delete(_ref(resource))
            if spoke.get(_ref(resource)) is not None:  # its finalizers hold it
                pending.append(resource)
    return pending


def _finalize(
    spoke: Spoke, work: ManifestWork, hub: str, ctx: Context, now: datetime
) -> list[datetime]:
    """manifestwork_finalize and appliedmanifestwork_finalize: the applied objects, then
    (once they are gone) the AppliedManifestWork, then the work's finalizer."""
    if workv1.MANIFEST_WORK_FINALIZER not in (work.metadata.finalizers or []):
        return []
    ref = applied_ref(hub, work.name)
    existing = spoke.get(ref)
    if existing is not None:
        applied = workv1.AppliedManifestWork.model_validate(existing)
        pending = _delete_applied(spoke, applied.status.applied_resources or [], _owner(applied))
        if pending:
            _set_applied_resources(spoke, applied, pending)
            return [now + PENDING_DELETION_RECHECK]
        released = applied.to_dict()
        released["metadata"]["finalizers"] = [
            f for f in applied.metadata.finalizers or []
            if f != workv1.APPLIED_MANIFEST_WORK_FINALIZER
        ]  # fmt: skip
        spoke.update(ref, released)
        spoke.delete(ref)
    finalizers = [f for f in work.metadata.finalizers or [] if f != workv1.MANIFEST_WORK_FINALIZER]
    _set_finalizers(work, finalizers, ctx)
    return []


# --- status ------------------------------------------------------------------------------------


def _manifest_condition(
    spoke: Spoke, work: ManifestWork, result: _Result, now: datetime
) -> ManifestCondition:
    """A manifest's conditions, each keeping its transition time while its status holds."""
    previous = _previous(work, result.meta)
    generation = work.metadata.generation
    applied = (
        _condition(workv1.APPLIED, "True", "AppliedManifestComplete", "Apply manifest complete")
        if result.error is None
        else _condition(workv1.APPLIED, "False", "AppliedManifestFailed",
                        f"Failed to apply manifest: {result.error}")
    )  # fmt: skip
    applied.observed_generation = generation
    conditions = set_status_condition(previous.conditions if previous else None, applied, now)
    obj, available = _read(spoke, result)
    conditions = set_status_condition(conditions, available, now)
    condition = ManifestCondition(resource_meta=result.meta, conditions=conditions)
    if obj is None:
        condition.status_feedback = previous.status_feedback if previous else None
        return condition
    option = _config(result.meta, work.spec.manifest_configs)
    values, synced = feedback(obj, option)
    old_values = previous.status_feedback.values if previous and previous.status_feedback else None
    if values != old_values:
        # Changed values move the condition's transition time, whatever its status.
        conditions = [c for c in conditions if c.type != workv1.STATUS_FEEDBACK_SYNCED]
    conditions = set_status_condition(conditions, synced, now)
    for ruled in evaluate_rules(
        obj, (option.condition_rules if option else None) or [], generation
    ):
        conditions = set_status_condition(conditions, ruled, now)
    condition.conditions = _current_rules(conditions, generation)
    condition.status_feedback = (
        StatusFeedbackResult(values=values) if values else StatusFeedbackResult()
    )
    return condition


def _current_rules(conditions: list[Condition], generation: int | None) -> list[Condition]:
    """PruneConditionsGeneratedByConditionRules: a rule's condition of an older generation
    is of a rule that is gone (removing one changes the work's generation)."""
    return [
        c for c in conditions
        if not c.reason.startswith(RULE_PREFIX) or c.observed_generation == generation
    ]  # fmt: skip


def _previous(work: ManifestWork, meta: ManifestResourceMeta) -> ManifestCondition | None:
    manifests = work.status.resource_status.manifests if work.status.resource_status else None
    return next((m for m in manifests or [] if m.resource_meta == meta), None)


def _read(spoke: Spoke, result: _Result) -> tuple[dict[str, Any] | None, Condition]:
    """objectReader.Get: the object and its Available condition."""
    meta = result.meta
    if not (meta.resource and meta.version and meta.name) or result.ref is None:
        message = "Resource meta is incomplete"
        return None, _condition(workv1.AVAILABLE, "Unknown", "IncompleteResourceMeta", message)
    obj = spoke.get(result.ref)
    if obj is None:
        message = "Resource is not available"
        return None, _condition(workv1.AVAILABLE, "False", "ResourceNotAvailable", message)
    message = "Resource is available"
    return obj, _condition(workv1.AVAILABLE, "True", "ResourceAvailable", message)


def feedback(
    obj: Mapping[str, Any], option: ManifestConfigOption | None
) -> tuple[list[FeedbackValue] | None, Condition]:
    """getFeedbackValues: the values the option's feedback rules read from the object, and
    the StatusFeedbackSynced condition."""
    rules = option.feedback_rules if option else None
    if not rules:
        return None, _condition(workv1.STATUS_FEEDBACK_SYNCED, "True", "NoStatusFeedbackSynced")
    values: list[FeedbackValue] = []
    errors: list[str] = []
    for rule in rules:
        for name, path, error in _paths(obj, rule):
            value, error = (None, error) if error else _value(name, path, obj)
            errors += [error] if error else []
            values += [value] if value else []
    if errors:
        message = errors[0] if len(errors) == 1 else f"[{', '.join(errors)}]"
        message = f"Sync status feedback failed with error {message}"
        failed = _condition(
            workv1.STATUS_FEEDBACK_SYNCED, "False", "StatusFeedbackSyncFailed", message
        )
        return values or None, failed
    return values or None, _condition(workv1.STATUS_FEEDBACK_SYNCED, "True", "StatusFeedbackSynced")


def _paths(obj: Mapping[str, Any], rule: workv1.FeedbackRule) -> list[tuple[str, str, str | None]]:
    """The (name, path, error) a rule reads."""
    group, _, version = str(obj.get("apiVersion", "")).rpartition("/")
    if rule.type == workv1.WELL_KNOWN_STATUS:
        gvk = (group, version, str(obj.get("kind", "")))
        paths = _WELL_KNOWN_STATUS.get(gvk)
        if not paths:
            kind = f"{group}/{version}, Kind={gvk[2]}"
            return [("", "", f"cannot find the wellknown statuses for resource with gvk {kind}")]
        return [(name, path, None) for name, path in paths]
    return [
        (p.name, p.path, None) if not p.version or p.version == version
        else (p.name, p.path,
              f"version set in the path {p.name} is not matched for the related resource")
        for p in rule.json_paths or []
    ]  # fmt: skip


def _value(name: str, path: str, obj: Mapping[str, Any]) -> tuple[FeedbackValue | None, str | None]:
    """getValueByJsonPath with RawFeedbackJsonString off (its default): the first result,
    an integer, string or boolean; nothing for a missing field."""
    try:
        found = compile_path("{" + path + "}").find(obj)
    except JSONPathError as err:
        return None, f"failed to parse json path {path} of {name} with error: {err}"
    if not found or found[0] is None:
        return None, None
    value = found[0]
    if isinstance(value, bool):
        field = FieldValue(type="Boolean", boolean=value)
    elif isinstance(value, int):
        field = FieldValue(type="Integer", integer=value)
    elif isinstance(value, str):
        field = FieldValue(type="String", string=value)
    else:
        return None, f"the type {_go_type(value)} of the value for {name} is not found"
    return FeedbackValue(name=name, field_value=field), None


def _go_type(value: Any) -> str:
    """reflect.TypeOf for what unstructured JSON holds besides scalars."""
    if isinstance(value, Mapping):
        return "map[string]interface {}"
    return "[]interface {}" if isinstance(value, list) else "float64"


def _work_applied(work: ManifestWork, results: list[_Result]) -> Condition:
    generation = work.metadata.generation
    if any(r.error for r in results):
        message = "Failed to apply manifest work"
        return _condition(workv1.APPLIED, "False", "AppliedManifestWorkFailed", message, generation)
    message = "Apply manifest work complete"
    return _condition(workv1.APPLIED, "True", "AppliedManifestWorkComplete", message, generation)


def _work_rule_conditions(
    work: ManifestWork, manifests: list[ManifestCondition]
) -> list[Condition]:
    """newAggregateConditionFromRules, per condition type the rules set, by type: Progressing
    True when any manifest is, else Unknown when any is, else False; any other False when any
    is, else Unknown when any is, else True. The message: the one manifest's, or a count."""
    by_type: dict[str, list[Condition]] = {}
    for manifest in manifests:
        for condition in manifest.conditions:
            if condition.reason.startswith(RULE_PREFIX):
                by_type.setdefault(condition.type, []).append(condition)
    aggregated = []
    for type_, found in sorted(by_type.items()):
        statuses = {c.status for c in found}
        order = (
            ("True", "Unknown", "False")
            if type_ == workv1.PROGRESSING
            else ("False", "Unknown", "True")
        )
        status = next(s for s in order if s in statuses or s == order[-1])
        messages = [c.message for c in found if c.message]
        single = len(found) == 1 and messages
        message = messages[-1] if single else f"Aggregated from {len(found)} manifest conditions"
        reason = "ConditionRulesAggregated"
        aggregated.append(_condition(type_, status, reason, message, work.metadata.generation))
    return aggregated


def _work_available(work: ManifestWork, manifests: list[ManifestCondition]) -> Condition:
    """AggregateManifestConditions for Available: False wins, then Unknown, then True."""
    statuses = [c.status for m in manifests for c in m.conditions if c.type == workv1.AVAILABLE]
    total, generation = len(manifests), work.metadata.generation
    false, unknown = statuses.count("False"), statuses.count("Unknown")
    if false:
        status, reason = "False", "ResourcesNotAvailable"
        message = f"{false} of {total} resources are not available"
    elif unknown:
        status, reason = "Unknown", "ResourcesStatusUnknown"
        message = f"{unknown} of {total} resources have unknown status"
    elif not statuses:
        status, reason = "Unknown", "ResourcesStatusUnknown"
        message = "cannot get any available resource "
    else:
        status, reason, message = "True", "ResourcesAvailable", "All resources are available"
    return _condition(workv1.AVAILABLE, status, reason, message, generation)
