"""work.karmada.io: ResourceBinding and ClusterResourceBinding (v1alpha2, and v1alpha1 converted
to and from it), Work (v1alpha1)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import Field

from fleetwarden.api.core import NodeSelector, Toleration
from fleetwarden.api.karmada import policy
from fleetwarden.api.meta import Condition, Model, Quantity, Resource, Time

GROUP = "work.karmada.io"
BINDING_VERSION = "v1alpha2"
# Still served; objects are stored in BINDING_VERSION (pkg/apis/work/v1alpha1).
OLD_BINDING_VERSION = "v1alpha1"
WORK_VERSION = "v1alpha1"

RESOURCE_BINDING_PERMANENT_ID_LABEL = "resourcebinding.karmada.io/permanent-id"
CLUSTER_RESOURCE_BINDING_PERMANENT_ID_LABEL = "clusterresourcebinding.karmada.io/permanent-id"
WORK_PERMANENT_ID_LABEL = "work.karmada.io/permanent-id"

# Annotations recording which labels and annotations of a workload Karmada manages.
MANAGED_LABELS_ANNOTATION = "resourcetemplate.karmada.io/managed-labels"
MANAGED_ANNOTATIONS_ANNOTATION = "resourcetemplate.karmada.io/managed-annotations"

# Binding condition types.
CONDITION_SCHEDULED = "Scheduled"
CONDITION_FULLY_APPLIED = "FullyApplied"

# Work condition types.
CONDITION_WORK_APPLIED = "Applied"
CONDITION_WORK_PROGRESSING = "Progressing"
CONDITION_WORK_AVAILABLE = "Available"
CONDITION_WORK_DEGRADED = "Degraded"
CONDITION_WORK_DISPATCHING = "Dispatching"

# ResourceHealth.
RESOURCE_HEALTHY = "Healthy"
RESOURCE_UNHEALTHY = "Unhealthy"
RESOURCE_UNKNOWN = "Unknown"

# Graceful eviction reasons and producers.
EVICTION_REASON_TAINT_UNTOLERATED = "TaintUntolerated"
EVICTION_REASON_APPLICATION_FAILURE = "ApplicationFailure"
EVICTION_PRODUCER_TAINT_MANAGER = "TaintManager"


class ObjectReference(Model):
    """The resource template a binding propagates."""

    api_version: str = ""
    kind: str = ""
    namespace: str | None = None
    name: str = ""
    uid: str | None = None
    resource_version: str | None = None


class NodeClaim(Model):
    hard_node_affinity: NodeSelector | None = None
    node_selector: dict[str, str] | None = None
    tolerations: list[Toleration] | None = None


class ComponentReplicaRequirements(Model):
    node_claim: NodeClaim | None = None
    resource_request: dict[str, Quantity] | None = None
    priority_class_name: str | None = None


class ReplicaRequirements(ComponentReplicaRequirements):
    namespace: str | None = None


class Component(Model):
    name: str = ""
    replicas: int = 0
    replica_requirements: ComponentReplicaRequirements | None = None


class TargetComponent(Model):
    name: str = ""
    replicas: int = 0


class TargetCluster(Model):
    name: str = ""
    replicas: int | None = None
    components: list[TargetComponent] | None = None


class GracefulEvictionTask(Model):
    from_cluster: str = ""
    purge_mode: str | None = None
    replicas: int | None = None
    reason: str = ""
    message: str | None = None
    producer: str = ""
    grace_period_seconds: int | None = None
    suppress_deletion: bool | None = None
    preserved_label_state: dict[str, str] | None = None
    creation_timestamp: Time | None = None
    clusters_before_failover: list[str] | None = None


class BindingSnapshot(Model):
    namespace: str | None = None
    name: str = ""
    clusters: list[TargetCluster] | None = None


class Suspension(policy.Suspension):
    scheduling: bool | None = None


class SchedulePriority(Model):
    priority: int | None = None


class WorkloadAffinityGroups(Model):
    affinity_group: str | None = None
    anti_affinity_group: str | None = None


class ResourceBindingSpec(Model):
    resource: ObjectReference = Field(default_factory=ObjectReference)
    propagate_deps: bool | None = None
    replica_requirements: ReplicaRequirements | None = None
    replicas: int | None = None
    components: list[Component] | None = None
    clusters: list[TargetCluster] | None = None
    placement: policy.Placement | None = None
    graceful_eviction_tasks: list[GracefulEvictionTask] | None = None
    required_by: list[BindingSnapshot] | None = None
    scheduler_name: str | None = None
    failover: policy.FailoverBehavior | None = None
    conflict_resolution: str | None = None
    reschedule_triggered_at: Time | None = None
    suspension: Suspension | None = None
    preserve_resources_on_deletion: bool | None = None
    schedule_priority: SchedulePriority | None = None
    workload_affinity_groups: WorkloadAffinityGroups | None = None


class AggregatedStatusItem(Model):
    cluster_name: str = ""
    status: dict[str, Any] | None = None
    applied: bool | None = None
    applied_message: str | None = None
    health: str | None = None


class ResourceBindingStatus(Model):
    scheduler_observed_generation: int | None = None
    # Upstream's JSON name differs from its Go name.
    scheduler_observed_affinity_name: str | None = Field(
        default=None, alias="schedulerObservingAffinityName"
    )
    last_scheduled_time: Time | None = None
    conditions: list[Condition] | None = None
    aggregated_status: list[AggregatedStatusItem] | None = None


class ResourceBinding(Resource):
    spec: ResourceBindingSpec = Field(default_factory=ResourceBindingSpec)
    status: ResourceBindingStatus = Field(default_factory=ResourceBindingStatus)


class ClusterResourceBinding(Resource):
    spec: ResourceBindingSpec = Field(default_factory=ResourceBindingSpec)
    status: ResourceBindingStatus = Field(default_factory=ResourceBindingStatus)


class WorkloadTemplate(Model):
    # Each manifest is a whole object (apiVersion, kind, metadata, ...), kept as given.
    manifests: list[dict[str, Any]] | None = None


class WorkSpec(Model):
    workload: WorkloadTemplate = Field(default_factory=WorkloadTemplate)
    suspend_dispatching: bool | None = None
    preserve_resources_on_deletion: bool | None = None


class ResourceIdentifier(Model):
    ordinal: int = 0
    group: str | None = None
    version: str = ""
    kind: str = ""
    resource: str = ""
    namespace: str | None = None
    name: str = ""


class ManifestStatus(Model):
    identifier: ResourceIdentifier = Field(default_factory=ResourceIdentifier)
    status: dict[str, Any] | None = None
    health: str | None = None


class WorkStatus(Model):
    conditions: list[Condition] | None = None
    manifest_statuses: list[ManifestStatus] | None = None


class Work(Resource):
    spec: WorkSpec = Field(default_factory=WorkSpec)
    status: WorkStatus = Field(default_factory=WorkStatus)


# --- v1alpha1 bindings ------------------------------------------------------------------------


class ObjectReferenceV1alpha1(Model):
    """v1alpha1's resource reference, which also carries the replicas and their requests."""

    api_version: str = ""
    kind: str = ""
    namespace: str | None = None
    name: str = ""
    resource_version: str | None = None
    replica_resource_requirements: dict[str, Quantity] | None = Field(
        default=None, alias="resourcePerReplicas"
    )
    replicas: int | None = None


class TargetClusterV1alpha1(Model):
    name: str = ""
    replicas: int | None = None


class ResourceBindingSpecV1alpha1(Model):
    resource: ObjectReferenceV1alpha1 = Field(default_factory=ObjectReferenceV1alpha1)
    clusters: list[TargetClusterV1alpha1] | None = None


class AggregatedStatusItemV1alpha1(Model):
    cluster_name: str = ""
    status: dict[str, Any] | None = None
    applied: bool | None = None
    applied_message: str | None = None


class ResourceBindingStatusV1alpha1(Model):
    conditions: list[Condition] | None = None
    aggregated_status: list[AggregatedStatusItemV1alpha1] | None = None


class ResourceBindingV1alpha1(Resource):
    spec: ResourceBindingSpecV1alpha1 = Field(default_factory=ResourceBindingSpecV1alpha1)
    status: ResourceBindingStatusV1alpha1 = Field(default_factory=ResourceBindingStatusV1alpha1)


class ClusterResourceBindingV1alpha1(ResourceBindingV1alpha1):
    """Same shape, cluster-scoped."""


_REFERENCE_FIELDS = ("apiVersion", "kind", "namespace", "name", "resourceVersion")
_STATUS_ITEM_FIELDS = ("clusterName", "status", "applied", "appliedMessage")


def _given(source: Mapping[str, Any], keys: tuple[str, ...]) -> dict[str, Any]:
    """The keys the source has a value for, as Go's omitempty writes them."""
    return {key: source[key] for key in keys if source.get(key) not in (None, "", 0, False)}


def _converted(obj: Mapping[str, Any], api_version: str, spec: dict[str, Any]) -> dict[str, Any]:
    """The object in another version: metadata whole, the spec given, the status's
    conditions and aggregated status items kept (their fields are the same in both)."""
    status = obj.get("status") or {}
    converted_status = _given(status, ("conditions",))
    items = [_given(item, _STATUS_ITEM_FIELDS) for item in status.get("aggregatedStatus") or []]
    if items:
        converted_status["aggregatedStatus"] = items
    converted = {
        "apiVersion": api_version,
        "kind": obj.get("kind"),
        "metadata": obj.get("metadata") or {},
        "spec": spec,
    }
    return {**converted, "status": converted_status} if converted_status else converted


def _reference(resource: Mapping[str, Any]) -> dict[str, Any]:
    """The fields both versions' resource references share."""
    return {
        "apiVersion": resource.get("apiVersion", ""),
        "kind": resource.get("kind", ""),
        "name": resource.get("name", ""),
        **_given(resource, ("namespace", "resourceVersion")),
    }


def _with_clusters(spec: dict[str, Any], clusters: list[Any]) -> dict[str, Any]:
    """The spec with the target clusters' names and replicas, if it has any."""
    targets = [_given(c, ("name", "replicas")) for c in clusters]
    return {**spec, "clusters": targets} if targets else spec


def binding_to_hub(obj: Mapping[str, Any]) -> dict[str, Any]:
    """ConvertBindingSpecToHub: v1alpha1 to v1alpha2; replicas and their requests move from
    the resource reference to the spec."""
    spec = obj.get("spec") or {}
    resource = spec.get("resource") or {}
    hub: dict[str, Any] = {"resource": _reference(resource)}
    if resource.get("resourcePerReplicas"):
        hub["replicaRequirements"] = {"resourceRequest": resource["resourcePerReplicas"]}
    hub.update(_given(resource, ("replicas",)))
    hub = _with_clusters(hub, spec.get("clusters") or [])
    return _converted(obj, f"{GROUP}/{BINDING_VERSION}", hub)


def binding_from_hub(obj: Mapping[str, Any]) -> dict[str, Any]:
    """ConvertBindingSpecFromHub: v1alpha2 to v1alpha1; what v1alpha1 has no field for
    (placement, components, eviction tasks...) is left out."""
    spec = obj.get("spec") or {}
    resource = _reference(spec.get("resource") or {})
    requests = (spec.get("replicaRequirements") or {}).get("resourceRequest")
    if requests:
        resource["resourcePerReplicas"] = requests
    resource.update(_given(spec, ("replicas",)))
    old = _with_clusters({"resource": resource}, spec.get("clusters") or [])
    return _converted(obj, f"{GROUP}/{OLD_BINDING_VERSION}", old)
