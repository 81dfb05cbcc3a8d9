"""Work and the bindings it comes from: names, references and the Work a binding wants per
cluster (pkg/util/names; pkg/controllers/binding/common.go ensureWork;
ctrlutil.CreateOrUpdateWork; pkg/util/helper/binding.go).

ResourceBinding and ClusterResourceBinding differ only in the label carrying their permanent
id, the annotations a Work names them by and their finalizer: a BindingScope holds those, so
that one controller serves both kinds.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from fleetwarden.admission.karmada.prune import remove_irrelevant_fields
from fleetwarden.api.karmada import policy
from fleetwarden.api.karmada.well_known import (
    BINDING_CONTROLLER_FINALIZER,
    CLUSTER_RESOURCE_BINDING_ANNOTATION,
    CLUSTER_RESOURCE_BINDING_CONTROLLER_FINALIZER,
    CONFLICT_RESOLUTION_ANNOTATION,
    CONFLICT_RESOLUTION_OVERWRITE,
    EXECUTION_CONTROLLER_FINALIZER,
    MANAGED_BY_KARMADA_LABEL,
    RESOURCE_BINDING_NAME_ANNOTATION,
    RESOURCE_BINDING_NAMESPACE_ANNOTATION,
    RESOURCE_TEMPLATE_GENERATION_ANNOTATION,
    RESOURCE_TEMPLATE_UID_ANNOTATION,
    WORK_NAME_ANNOTATION,
    WORK_NAMESPACE_ANNOTATION,
    permanent_id,
)
from fleetwarden.api.karmada.work import (
    CLUSTER_RESOURCE_BINDING_PERMANENT_ID_LABEL,
    MANAGED_ANNOTATIONS_ANNOTATION,
    MANAGED_LABELS_ANNOTATION,
    RESOURCE_BINDING_PERMANENT_ID_LABEL,
    WORK_PERMANENT_ID_LABEL,
    ClusterResourceBinding,
    ResourceBinding,
    ResourceBindingSpec,
    TargetCluster,
    Work,
)
from fleetwarden.api.kinds import KindInfo
from fleetwarden.api.meta import Resource
from fleetwarden.api.registry import REGISTRY
from fleetwarden.controllers.karmada.names import (
    EXECUTION_SPACE_PREFIX,
    generate_execution_space_name,
)
from fleetwarden.runtime.informer import Cache
from fleetwarden.semantics.resource_interpreter import revise_replica, revise_replica_enabled

WORK = REGISTRY.info("work.karmada.io/v1alpha1", "Work")
CLUSTER = REGISTRY.info("cluster.karmada.io/v1alpha1", "Cluster")

CONFLICT_RESOLUTION_ABORT = "abort"

Binding = ResourceBinding | ClusterResourceBinding

# rand.SafeEncodeString's alphabet: no vowels, no look-alikes.
_SAFE_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"


# names ------------------------------------------------------------------------------------


def cluster_of(work: Resource) -> str | None:
    """names.GetClusterName: the member cluster a Work's execution space stands for."""
    namespace = work.metadata.namespace
    if not namespace.startswith(EXECUTION_SPACE_PREFIX):
        return None
    return namespace.removeprefix(EXECUTION_SPACE_PREFIX)


def generate_work_name(kind: str, name: str, namespace: str) -> str:
    """names.GenerateWorkName: the name, then a hash of namespace, name and kind."""
    name = name.replace(":", ".").lower()
    identity = f"{namespace}-{name}-{kind}" if namespace else f"{name}-{kind}"
    return f"{name}-{_safe_encode(str(_fnv32a(identity.lower())))}"


def _fnv32a(text: str) -> int:
    value = 0x811C9DC5
    for byte in text.encode():
        value = ((value ^ byte) * 0x01000193) & 0xFFFFFFFF
    return value


def _safe_encode(text: str) -> str:
    """rand.SafeEncodeString."""
    return "".join(_SAFE_ALPHABET[byte % len(_SAFE_ALPHABET)] for byte in text.encode())


# binding scopes ---------------------------------------------------------------------------


def _label_index(label: str) -> Callable[[Resource], list[str]]:
    """indexregistry.GenLabelIndexerFunc: Works by the value of one label."""

    def index(obj: Resource) -> list[str]:
        value = (obj.metadata.labels or {}).get(label)
        return [value] if value else []

    return index


@dataclass(frozen=True)
class BindingScope:
    """What tells a ResourceBinding's Works from a ClusterResourceBinding's."""

    info: KindInfo
    permanent_id_label: str
    finalizer: str
    # The Work index by this kind's permanent id, named as upstream's indexregistry.
    work_index: str
    index_func: Callable[[Resource], list[str]]
    reference_annotations: Callable[[Resource], dict[str, str]]
    binding_keys: Callable[[Resource], list[str]]

    def binding_id(self, binding: Resource) -> str:
        return (binding.metadata.labels or {}).get(self.permanent_id_label, "")

    def describe(self, binding: Resource) -> str:
        """`ResourceBinding(default/nginx-deployment)`, as upstream's messages name it."""
        name = binding.name if not binding.namespace else f"{binding.namespace}/{binding.name}"
        return f"{self.info.kind}({name})"


def _rb_references(binding: Resource) -> dict[str, str]:
    return {
        RESOURCE_BINDING_NAMESPACE_ANNOTATION: binding.namespace,
        RESOURCE_BINDING_NAME_ANNOTATION: binding.name,
    }


def _rb_of_work(work: Resource) -> list[str]:
    annotations = work.metadata.annotations or {}
    namespace = annotations.get(RESOURCE_BINDING_NAMESPACE_ANNOTATION)
    name = annotations.get(RESOURCE_BINDING_NAME_ANNOTATION)
    return [f"{namespace}/{name}"] if namespace is not None and name is not None else []


def _crb_of_work(work: Resource) -> list[str]:
    name = (work.metadata.annotations or {}).get(CLUSTER_RESOURCE_BINDING_ANNOTATION)
    return [name] if name is not None else []


RESOURCE_BINDING = BindingScope(
    info=REGISTRY.info("work.karmada.io/v1alpha2", "ResourceBinding"),
    permanent_id_label=RESOURCE_BINDING_PERMANENT_ID_LABEL,
    finalizer=BINDING_CONTROLLER_FINALIZER,
    work_index="WorkIndexByLabelResourceBindingID",
    index_func=_label_index(RESOURCE_BINDING_PERMANENT_ID_LABEL),
    reference_annotations=_rb_references,
    binding_keys=_rb_of_work,
)
CLUSTER_RESOURCE_BINDING = BindingScope(
    info=REGISTRY.info("work.karmada.io/v1alpha2", "ClusterResourceBinding"),
    permanent_id_label=CLUSTER_RESOURCE_BINDING_PERMANENT_ID_LABEL,
    finalizer=CLUSTER_RESOURCE_BINDING_CONTROLLER_FINALIZER,
    work_index="WorkIndexByLabelClusterResourceBindingID",
    index_func=_label_index(CLUSTER_RESOURCE_BINDING_PERMANENT_ID_LABEL),
    reference_annotations=lambda binding: {CLUSTER_RESOURCE_BINDING_ANNOTATION: binding.name},
    binding_keys=_crb_of_work,
)


# binding spec -----------------------------------------------------------------------------


def target_clusters(spec: ResourceBindingSpec) -> list[TargetCluster]:
    """mergeTargetClusters: the scheduled clusters, then those of bindings requiring this one."""
    targets = list(spec.clusters or [])
    names = {target.name for target in targets}
    for snapshot in spec.required_by or []:
        for target in snapshot.clusters or []:
            if target.name not in names:
                names.add(target.name)
                targets.append(target)
    return targets


def existing_clusters(spec: ResourceBindingSpec) -> set[str]:
    """ObtainBindingSpecExistingClusters: clusters whose Work stays, including those still
    being evicted gracefully (an eviction that purges Directly does not keep its Work)."""
    names = {target.name for target in target_clusters(spec)}
    names.update(
        task.from_cluster
        for task in spec.graceful_eviction_tasks or []
        if task.purge_mode != policy.PURGE_MODE_DIRECTLY
    )
    return names


def directly_purged_clusters(spec: ResourceBindingSpec) -> set[str]:
    """ObtainClustersWithPurgeModeDirectly."""
    return {
        task.from_cluster
        for task in spec.graceful_eviction_tasks or []
        if task.purge_mode == policy.PURGE_MODE_DIRECTLY
    }


def resource_template(binding: Binding, cache: Cache) -> Resource | None:
    """FetchResourceTemplate, from the cache."""
    ref = binding.spec.resource
    return cache.informer_for(ref.api_version, ref.kind).get(ref.name, ref.namespace or "")


def works_in(works: Iterable[Resource], clusters: set[str]) -> list[Work]:
    return [w for w in works if isinstance(w, Work) and cluster_of(w) in clusters]


# the Work a binding wants -----------------------------------------------------------------


def is_workload(spec: ResourceBindingSpec) -> bool:
    """ResourceBindingSpec.IsWorkload: the template has replicas (or components)."""
    return (spec.replicas or 0) > 0 or bool(spec.components)


def conflict_resolution(template_annotations: dict[str, str], in_binding: str | None) -> str:
    """mergeConflictResolution: the template's annotation wins when valid, then the binding."""
    in_template = template_annotations.get(CONFLICT_RESOLUTION_ANNOTATION)
    if in_template in (CONFLICT_RESOLUTION_OVERWRITE, CONFLICT_RESOLUTION_ABORT):
        return in_template
    if in_binding == policy.CONFLICT_OVERWRITE:
        return CONFLICT_RESOLUTION_OVERWRITE
    return CONFLICT_RESOLUTION_ABORT


def suspend_dispatching(spec: ResourceBindingSpec, cluster: str) -> bool:
    """shouldSuspendDispatching."""
    suspension = spec.suspension
    if suspension is None:
        return False
    on_clusters = suspension.dispatching_on_clusters
    return bool(suspension.dispatching) or (
        on_clusters is not None and cluster in (on_clusters.cluster_names or [])
    )


def _stamp(workload: dict[str, Any], scope: BindingScope, binding: Binding) -> dict[str, str]:
    """mergeLabel, mergeAnnotations and mergeConflictResolution on the manifest, then what
    CreateOrUpdateWork gives every manifest before pruning it; the Work's own annotations."""
    metadata = workload.setdefault("metadata", {})
    references = scope.reference_annotations(binding)
    resolution = conflict_resolution(
        metadata.get("annotations") or {}, binding.spec.conflict_resolution
    )
    added: dict[str, str] = {}
    if (metadata.get("generation") or 0) > 0:
        added[RESOURCE_TEMPLATE_GENERATION_ANNOTATION] = str(metadata["generation"])
    added.update(references)
    added[RESOURCE_TEMPLATE_UID_ANNOTATION] = metadata.get("uid") or ""
    added[CONFLICT_RESOLUTION_ANNOTATION] = resolution
    metadata["labels"] = {
        **(metadata.get("labels") or {}),
        scope.permanent_id_label: scope.binding_id(binding),
        MANAGED_BY_KARMADA_LABEL: "true",
    }
    metadata["annotations"] = {**(metadata.get("annotations") or {}), **added}
    remove_irrelevant_fields(workload)
    return {**references, CONFLICT_RESOLUTION_ANNOTATION: resolution}


# Overrides one cluster's manifest in place (revised to its replicas, not yet labelled or
# annotated for its Work); returns the annotations recording them on the Work.
Override = Callable[[dict[str, Any]], dict[str, str]]


@dataclass(frozen=True)
class WorkTemplate:
    """What every Work of one binding shares; `for_cluster` makes each one."""

    binding: Binding
    scope: BindingScope
    template: Resource
    workload: dict[str, Any]  # the template, pruned, labelled and annotated for its Works
    labels: dict[str, str]
    annotations: dict[str, str]

    @classmethod
    def of(cls, scope: BindingScope, binding: Binding, template: Resource) -> WorkTemplate:
        workload = template.to_dict()
        annotations = _stamp(workload, scope, binding)
        labels = {scope.permanent_id_label: scope.binding_id(binding)}
        return cls(binding, scope, template, workload, labels, annotations)

    @functools.cached_property
    def name(self) -> str:
        metadata = self.workload["metadata"]
        return generate_work_name(
            self.workload.get("kind", ""), metadata.get("name", ""), metadata.get("namespace", "")
        )

    def _workload_copy(self) -> dict[str, Any]:
        """A copy of the workload deep where a Work's manifest differs from its siblings'
        (metadata's labels and annotations, the spec's own fields); the rest is shared, and
        never changed (the store keeps its own copy)."""
        metadata = self.workload["metadata"]
        workload = {
            **self.workload,
            "metadata": {
                **metadata,
                "labels": dict(metadata["labels"]),
                "annotations": dict(metadata["annotations"]),
            },
        }
        if isinstance(workload.get("spec"), dict):
            workload["spec"] = dict(workload["spec"])
        return workload

    def for_cluster(
        self, target: TargetCluster, override: Override | None = None
    ) -> dict[str, Any]:
        """The Work for one target cluster (its manifest not yet labelled with the Work's
        permanent id): the manifest revised to the cluster's replicas, as ensureWork does
        for Divided and Duplicated alike, then overridden if the cluster has overrides
        (before Karmada's labels and annotations, which no override removes)."""
        namespace = generate_execution_space_name(target.name)
        spec = self.binding.spec
        workload = self._workload_copy() if override is None else self.template.to_dict()
        if is_workload(spec) and revise_replica_enabled(workload):
            revise_replica(workload, target.replicas or 0)
        annotations = self.annotations
        if override is not None:
            applied = override(workload)
            annotations = {**_stamp(workload, self.scope, self.binding), **applied}
        workload["metadata"]["annotations"][WORK_NAME_ANNOTATION] = self.name
        workload["metadata"]["annotations"][WORK_NAMESPACE_ANNOTATION] = namespace
        return {
            "apiVersion": WORK.api_version,
            "kind": WORK.kind,
            "metadata": {
                "name": self.name,
                "namespace": namespace,
                "labels": dict(self.labels),
                "annotations": dict(annotations),
                "finalizers": [EXECUTION_CONTROLLER_FINALIZER],
            },
            "spec": {
                "workload": {"manifests": [workload]},
                "suspendDispatching": suspend_dispatching(spec, target.name),
                "preserveResourcesOnDeletion": bool(spec.preserve_resources_on_deletion),
            },
        }


def merge_into_existing(desired: dict[str, Any], existing: Work) -> dict[str, Any]:
    """CreateOrUpdateWork's mutate function on the stored Work: labels and annotations merged
    (the new values win), finalizers joined, the spec replaced; the resourceVersion read
    stays, so a stale cache fails with a conflict."""
    merged = existing.to_dict()
    metadata, wanted = merged["metadata"], desired["metadata"]
    metadata["labels"] = {**(metadata.get("labels") or {}), **wanted["labels"]}
    metadata["annotations"] = {**(metadata.get("annotations") or {}), **wanted["annotations"]}
    metadata["finalizers"] = sorted({*(metadata.get("finalizers") or []), *wanted["finalizers"]})
    merged["spec"] = desired["spec"]
    return merged


def label_manifests(work: dict[str, Any]) -> dict[str, Any]:
    """The Work webhook's part (controllers write to the store directly): a permanent id
    unless the Work has one, then SetLabelsAndAnnotationsForWorkload on every manifest."""
    metadata = work["metadata"]
    labels = metadata["labels"]
    if not labels.get(WORK_PERMANENT_ID_LABEL):
        work_id = permanent_id(WORK.kind, metadata["namespace"], metadata["name"])
        labels[WORK_PERMANENT_ID_LABEL] = work_id
    for manifest in work["spec"]["workload"]["manifests"]:
        _record_managed_annotations(manifest)
        manifest_labels = manifest["metadata"].setdefault("labels", {})
        manifest_labels[WORK_PERMANENT_ID_LABEL] = labels[WORK_PERMANENT_ID_LABEL]
        _record_managed_labels(manifest)
    return work


def _record_managed_annotations(manifest: dict[str, Any]) -> None:
    """util.RecordManagedAnnotations: which annotations Karmada manages, itself included."""
    annotations = manifest["metadata"].setdefault("annotations", {})
    managed = {MANAGED_ANNOTATIONS_ANNOTATION, MANAGED_LABELS_ANNOTATION, *annotations}
    annotations[MANAGED_ANNOTATIONS_ANNOTATION] = ",".join(sorted(managed))


def _record_managed_labels(manifest: dict[str, Any]) -> None:
    """util.RecordManagedLabels."""
    keys = sorted(manifest["metadata"].get("labels") or {})
    manifest["metadata"]["annotations"][MANAGED_LABELS_ANNOTATION] = ",".join(keys)
