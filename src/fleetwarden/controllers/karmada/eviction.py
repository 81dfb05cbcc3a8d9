"""Evicting a binding from a cluster: the eviction task, the purge mode, the Events
(pkg/apis/work/v1alpha2/binding_types_helper.go GracefulEvictCluster and TaskOptions;
pkg/controllers/cluster/taint_manager.go getPurgeMode; pkg/util/helper/policy.go
GetAppliedPlacement; pkg/util/helper/binding.go
EmitClusterEvictionEventFor(Cluster)ResourceBinding).

Shared by the taint manager, which writes eviction tasks, and the graceful eviction
controllers, which retire them.
"""

from __future__ import annotations

from dataclasses import dataclass

from pydantic import ValidationError

from fleetwarden.api.core import Unstructured
from fleetwarden.api.errors import StatusError
from fleetwarden.api.karmada import policy
from fleetwarden.api.karmada.work import GracefulEvictionTask, ResourceBindingSpec
from fleetwarden.api.meta import ObjectMeta, Resource
from fleetwarden.controllers.karmada.work import Binding
from fleetwarden.runtime.events import NORMAL, WARNING, EventRecorder
from fleetwarden.runtime.manager import Context
from fleetwarden.runtime.settings import PurgeMode

# util.PolicyPlacementAnnotation: the placement the scheduler last scheduled by (it writes it).
POLICY_PLACEMENT_ANNOTATION = "policy.karmada.io/applied-placement"

EVICT_WORKLOAD_FROM_CLUSTER_SUCCEED = "EvictWorkloadFromClusterSucceed"
EVICT_WORKLOAD_FROM_CLUSTER_FAILED = "EvictWorkloadFromClusterFailed"

# Parsed applied placements by their text: thousands of bindings share a few policies.
_PLACEMENTS: dict[str, policy.Placement] = {}
_PLACEMENTS_MAX = 1024


@dataclass(frozen=True)
class TaskOptions:
    """workv1alpha2.TaskOptions: what a new eviction task says besides its cluster."""

    purge_mode: str
    producer: str
    reason: str
    message: str | None = None
    grace_period_seconds: int | None = None
    suppress_deletion: bool | None = None
    preserved_label_state: dict[str, str] | None = None
    clusters_before_failover: list[str] | None = None


def graceful_evict_cluster(spec: ResourceBindingSpec, cluster: str, options: TaskOptions) -> bool:
    """ResourceBindingSpec.GracefulEvictCluster, on a spec the caller owns: the cluster
    leaves spec.clusters and, unless a task for it exists already, a task is appended with
    the replicas it had (left out when 0). No creationTimestamp: the graceful eviction
    controller stamps it on its first pass. False when the cluster is not in spec.clusters.
    """
    targets = spec.clusters or []
    evicted = next((t for t in targets if t.name == cluster), None)
    if evicted is None:
        return False
    spec.clusters = [t for t in targets if t is not evicted]
    tasks = spec.graceful_eviction_tasks or []
    if any(task.from_cluster == cluster for task in tasks):
        return True
    given: dict[str, object] = {
        "from_cluster": cluster,
        "purge_mode": options.purge_mode or None,
        "replicas": evicted.replicas or None,
        "reason": options.reason,
        "message": options.message or None,
        "producer": options.producer,
        "grace_period_seconds": options.grace_period_seconds,
        "suppress_deletion": options.suppress_deletion,
        "preserved_label_state": options.preserved_label_state or None,
        "clusters_before_failover": options.clusters_before_failover or None,
    }
    # Only what is given is set, so that the task goes on the wire as Go's omitempty has it.
    task = GracefulEvictionTask.model_validate({k: v for k, v in given.items() if v is not None})
    spec.graceful_eviction_tasks = [*tasks, task]
    return True


def write_evicted(ctx: Context, binding: Binding, evicted: Binding, clusters: list[str]) -> None:
    """The binding with its clusters evicted, written over the one read (a failure recorded
    against each cluster, as updateBinding does)."""
    wire = evicted.to_dict()
    if not wire["spec"].get("clusters"):
        wire["spec"].pop("clusters", None)  # an empty slice, omitted as Go omits it
    try:
        ctx.store.update(wire)
    except StatusError:
        for cluster in clusters:
            emit_cluster_eviction_event(ctx.recorder, binding, cluster, failed=True)
        raise


def purge_mode(failover: policy.FailoverBehavior | None, flag: PurgeMode) -> str:
    """getPurgeMode: the policy's spec.failover.cluster.purgeMode wins (Gracefully when it
    names none); without spec.failover.cluster, no-execute-taint-eviction-purge-mode."""
    if failover is not None and failover.cluster is not None:
        return failover.cluster.purge_mode or policy.PURGE_MODE_GRACEFULLY
    if flag == PurgeMode.DIRECTLY:
        return policy.PURGE_MODE_DIRECTLY
    return policy.PURGE_MODE_GRACEFULLY


class InvalidPlacement(ValueError):
    """The applied-placement annotation does not parse as a Placement."""


def applied_placement(binding: Resource) -> policy.Placement | None:
    """GetAppliedPlacement: the placement in the applied-placement annotation; None
    without one (not scheduled yet); InvalidPlacement when it does not parse."""
    text = (binding.metadata.annotations or {}).get(POLICY_PLACEMENT_ANNOTATION, "")
    if not text:
        return None
    parsed = _PLACEMENTS.get(text)
    if parsed is None:
        try:
            parsed = policy.Placement.model_validate_json(text)
        except ValidationError as exc:
            raise InvalidPlacement(
                f"{POLICY_PLACEMENT_ANNOTATION} of {binding.kind} {binding.name}: {exc}"
            ) from None
        if len(_PLACEMENTS) >= _PLACEMENTS_MAX:
            _PLACEMENTS.clear()
        _PLACEMENTS[text] = parsed
    return parsed


def template_of(binding: Binding) -> Unstructured:
    """The binding's resource template as an Event's involved object."""
    ref = binding.spec.resource
    return Unstructured(
        api_version=ref.api_version,
        kind=ref.kind,
        metadata=ObjectMeta(name=ref.name, namespace=ref.namespace or "", uid=ref.uid),
    )


def emit_cluster_eviction_event(
    recorder: EventRecorder, binding: Binding, cluster: str, *, failed: bool
) -> None:
    """EmitClusterEvictionEventFor(Cluster)ResourceBinding: on the binding and on its
    resource template."""
    if failed:
        type_, reason = WARNING, EVICT_WORKLOAD_FROM_CLUSTER_FAILED
        message = f"Evict from cluster {cluster} failed."
    else:
        type_, reason = NORMAL, EVICT_WORKLOAD_FROM_CLUSTER_SUCCEED
        message = f"Evict from cluster {cluster} succeed."
    for obj in (binding, template_of(binding)):
        recorder.event(obj, type_, reason, message)
