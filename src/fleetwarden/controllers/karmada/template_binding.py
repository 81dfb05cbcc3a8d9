"""The binding a claimed resource template gets (upstream's BuildResourceBinding and
BuildClusterResourceBinding), and how an existing binding takes it in (ApplyPolicy's
CreateOrUpdate): labels, annotations and finalizers merge, the owner reference and the
fields the detector owns are replaced, and everything else (spec.clusters, the
scheduler's result; graceful eviction tasks; status) stays.

Bindings are wire dicts here, written field by field as Go's omitempty would: a field the
policy leaves empty is absent, and absent again after an update.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from fleetwarden.api.karmada import policy as policyv1
from fleetwarden.api.karmada import well_known as wk
from fleetwarden.api.karmada.work import BINDING_VERSION, GROUP
from fleetwarden.api.meta import Resource
from fleetwarden.controllers.karmada.claim import Claim
from fleetwarden.controllers.karmada.names import generate_binding_name
from fleetwarden.semantics.replicas import get_replicas, replica_hook_enabled

Obj = dict[str, Any]

# The spec fields ApplyPolicy sets on an existing ResourceBinding; upstream's
# ApplyClusterPolicy leaves the last three of a ClusterResourceBinding as created.
_OWNED_FIELDS = (
    "resource", "replicaRequirements", "replicas", "components", "conflictResolution",
    "schedulerName", "placement", "failover", "preserveResourcesOnDeletion",
    "propagateDeps", "schedulePriority", "workloadAffinityGroups",
)  # fmt: skip
_CLUSTER_OWNED_FIELDS = _OWNED_FIELDS[:-3]

_KUBE_PRIORITY_CLASS = "KubePriorityClass"
_UNSUPPORTED_PRIORITY_SOURCES = ("PodPriorityClass", "FederatedPriorityClass")


class BindingError(Exception):
    """A binding that cannot be built or updated now; the message says why."""


@dataclass(frozen=True)
class Gates:
    """The feature gates BuildResourceBinding consults."""

    workload_affinity: bool = False
    priority_based_scheduling: bool = True
    resource_quota_estimate: bool = False


def desired_binding(
    template: Resource,
    claim: Claim,
    spec: policyv1.PropagationSpec,
    gates: Gates,
    kube_priority: Callable[[str], int],
) -> tuple[Obj, bool]:
    """The binding the template should have, and whether the replica interpreter read it.
    kube_priority gives a PriorityClass's value, or raises BindingError."""
    meta = template.metadata
    namespaced = bool(meta.namespace)
    metadata: Obj = {
        "name": generate_binding_name(template.kind, meta.name),
        "labels": dict(claim.labels),
        "annotations": dict(claim.annotations),
        "finalizers": [
            wk.BINDING_CONTROLLER_FINALIZER
            if namespaced
            else wk.CLUSTER_RESOURCE_BINDING_CONTROLLER_FINALIZER
        ],
        "ownerReferences": [_controller_ref(template)],
    }
    if namespaced:
        metadata["namespace"] = meta.namespace
    body = _binding_spec(template, spec)
    interpreted = _add_replicas(body, template, gates)
    if namespaced:
        _add_namespaced_fields(body, template, spec, gates, kube_priority)
    kind = "ResourceBinding" if namespaced else "ClusterResourceBinding"
    binding = {"apiVersion": f"{GROUP}/{BINDING_VERSION}", "kind": kind, "metadata": metadata}
    return {**binding, "spec": body}, interpreted


def _controller_ref(template: Resource) -> Obj:
    """metav1.NewControllerRef."""
    return {
        "apiVersion": template.api_version,
        "kind": template.kind,
        "name": template.metadata.name,
        "uid": template.metadata.uid or "",
        "controller": True,
        "blockOwnerDeletion": True,
    }


def _binding_spec(template: Resource, spec: policyv1.PropagationSpec) -> Obj:
    meta = template.metadata
    resource = {"apiVersion": template.api_version, "kind": template.kind, "name": meta.name}
    _put(resource, "namespace", meta.namespace)
    _put(resource, "uid", meta.uid)
    _put(resource, "resourceVersion", meta.resource_version)
    body: Obj = {"resource": resource, "placement": spec.placement.to_dict()}
    _put(body, "propagateDeps", spec.propagate_deps)
    _put(body, "schedulerName", spec.scheduler_name)
    _put(body, "failover", spec.failover.to_dict() if spec.failover else None)
    _put(body, "conflictResolution", spec.conflict_resolution)
    if spec.preserve_resources_on_deletion is not None:  # a pointer: false is kept
        body["preserveResourcesOnDeletion"] = spec.preserve_resources_on_deletion
    if spec.suspension is not None:
        body["suspension"] = spec.suspension.to_dict()
    return body


def _add_replicas(body: Obj, template: Resource, gates: Gates) -> bool:
    """applyReplicaInterpretation; InterpretError when the workload does not read."""
    if not replica_hook_enabled(template.api_version, template.kind):
        return False
    replicas = get_replicas(template.to_dict(), with_priority_class=gates.resource_quota_estimate)
    _put(body, "replicas", replicas.replicas)
    requirements = replicas.requirements
    if requirements is not None and gates.resource_quota_estimate:
        requirements.setdefault("namespace", template.metadata.namespace)
    _put(body, "replicaRequirements", requirements)
    return True


def _add_namespaced_fields(
    body: Obj,
    template: Resource,
    spec: policyv1.PropagationSpec,
    gates: Gates,
    kube_priority: Callable[[str], int],
) -> None:
    """What only a ResourceBinding gets: workload affinity groups, schedule priority."""
    if gates.workload_affinity:
        _put(body, "workloadAffinityGroups", _workload_affinity_groups(template, spec))
    priority = spec.schedule_priority
    if not gates.priority_based_scheduling or priority is None:
        return
    source = priority.priority_class_source
    if source == _KUBE_PRIORITY_CLASS:
        body["schedulePriority"] = {"priority": kube_priority(priority.priority_class_name)}
    elif source in _UNSUPPORTED_PRIORITY_SOURCES:
        raise BindingError(f"priority class source is {source}, but {source} is not supported yet")
    else:
        raise BindingError("unsupported priority class source")


def _workload_affinity_groups(template: Resource, spec: policyv1.PropagationSpec) -> Obj | None:
    """getWorkloadAffinityGroups: `<key>=<value>` of the template's grouping labels."""
    affinity = spec.placement.workload_affinity
    if affinity is None:
        return None
    labels = template.metadata.labels or {}
    groups: Obj = {}
    for field, term in (
        ("affinityGroup", affinity.affinity),
        ("antiAffinityGroup", affinity.anti_affinity),
    ):
        if term is not None and term.group_by_label_key in labels:
            groups[field] = f"{term.group_by_label_key}={labels[term.group_by_label_key]}"
    return groups or None


def merge_binding(
    current: Obj,
    desired: Obj,
    owner_uid: str,
    suspension: policyv1.Suspension | None,
    drop: tuple[Sequence[str], Sequence[str]] = ((), ()),
) -> Obj:
    """The existing binding `current` brought up to `desired` (both wire dicts); drop: the
    label and annotation keys of another policy kind's claim to take off."""
    owner = next(
        (r for r in current["metadata"].get("ownerReferences") or [] if r.get("controller")), None
    )
    if owner is not None and owner.get("uid") != owner_uid:
        # The binding of a template deleted and created again: wait for it to be collected.
        raise BindingError(
            "failed to update binding due to different owner reference UID, will try again "
            "later after binding is garbage collected, see "
            "https://github.com/karmada-io/karmada/issues/2090"
        )
    merged = {
        **current,
        "metadata": dict(current["metadata"]),
        "spec": dict(current.get("spec") or {}),
    }
    _merge_metadata(merged["metadata"], desired["metadata"], drop)
    owned = _OWNED_FIELDS if desired["kind"] == "ResourceBinding" else _CLUSTER_OWNED_FIELDS
    spec, want = merged["spec"], desired["spec"]
    for name in owned:
        if name in want:
            spec[name] = want[name]
        else:
            spec.pop(name, None)
    merged_suspension = merge_policy_suspension(spec.pop("suspension", None), suspension)
    if merged_suspension is not None:
        spec["suspension"] = merged_suspension
    return merged


def _merge_metadata(meta: Obj, want: Obj, drop: tuple[Sequence[str], Sequence[str]]) -> None:
    """DedupeAndMerge labels, annotations and finalizers; the owner reference replaced."""
    for field, dropped in (("labels", drop[0]), ("annotations", drop[1])):
        values = {k: v for k, v in (meta.get(field) or {}).items() if k not in dropped}
        meta[field] = {**values, **want[field]}
    finalizers = list(meta.get("finalizers") or [])
    meta["finalizers"] = finalizers + [f for f in want["finalizers"] if f not in finalizers]
    meta["ownerReferences"] = want["ownerReferences"]


def merge_policy_suspension(binding: Obj | None, policy: policyv1.Suspension | None) -> Obj | None:
    """util.MergePolicySuspension: the policy's part replaced, the scheduler's kept."""
    scheduling = (
        {"scheduling": binding["scheduling"]} if binding and "scheduling" in binding else {}
    )
    if policy is not None:
        return {**policy.to_dict(), **scheduling}
    return scheduling or None


def _put(obj: Obj, key: str, value: Any) -> None:
    """Set a field as Go's omitempty writes it: empty values are left out."""
    if value not in (None, "", 0, False, {}, []):
        obj[key] = value
