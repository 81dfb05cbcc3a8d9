"""Which fields a strategic merge patch merges, per kind: the `patchStrategy` and
`patchMergeKey` struct tags of k8s.io/api v0.32 (core/v1, apps/v1, batch/v1, policy/v1,
autoscaling/v2, storage/v1 types.go) and of apimachinery's ObjectMeta. Field paths are
dotted, a list's items transparent: `spec.template.spec.containers.env`.

Only kinds the API server serves from Go types take a strategic merge patch; a custom
resource has no tags to go by, and the server refuses the patch (415).
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache

from fleetwarden.api.kinds import KindInfo
from fleetwarden.store.patch import MergeKeys, PatchMeta

# The groups kube-apiserver serves itself, and Karmada's aggregated cluster.karmada.io.
_TYPED_GROUPS = frozenset(
    {
        "", "apps", "batch", "autoscaling", "policy", "networking.k8s.io",
        "rbac.authorization.k8s.io", "storage.k8s.io", "scheduling.k8s.io",
        "coordination.k8s.io", "apiextensions.k8s.io", "apiregistration.k8s.io",
        "admissionregistration.k8s.io", "certificates.k8s.io", "discovery.k8s.io",
        "events.k8s.io", "flowcontrol.apiserver.k8s.io", "node.k8s.io", "resource.k8s.io",
        "cluster.karmada.io",
    }
)  # fmt: skip

_BY_NAME = PatchMeta("merge", "name")
_BY_TYPE = PatchMeta("merge", "type")
_BY_IP = PatchMeta("merge", "ip")
_BY_NAME_RETAINING = PatchMeta("merge", "name", retain_keys=True)
_MERGE = PatchMeta("merge")  # a list of scalars, merged as a set

# ObjectMeta's tags (every typed kind's, under `metadata`).
OBJECT_META: dict[str, PatchMeta] = {
    "finalizers": _MERGE,
    "ownerReferences": PatchMeta("merge", "uid"),
}

_CONTAINER = {
    "ports": PatchMeta("merge", "containerPort"),
    "env": _BY_NAME,
    "volumeMounts": PatchMeta("merge", "mountPath"),
    "volumeDevices": PatchMeta("merge", "devicePath"),
}

_CONTAINER_STATUS = {
    "volumeMounts": PatchMeta("merge", "mountPath"),
    "allocatedResourcesStatus": _BY_NAME,
}

_POD_SPEC = {
    "volumes": _BY_NAME_RETAINING,
    "imagePullSecrets": _BY_NAME,
    "hostAliases": _BY_IP,
    "topologySpreadConstraints": PatchMeta("merge", "topologyKey"),
    "schedulingGates": _BY_NAME,
    "resourceClaims": _BY_NAME_RETAINING,
}

_POD_STATUS = {
    "conditions": _BY_TYPE,
    "hostIPs": _BY_IP,
    "podIPs": _BY_IP,
    "resourceClaimStatuses": _BY_NAME_RETAINING,
}


def _under(prefix: str, fields: Mapping[str, PatchMeta]) -> dict[str, PatchMeta]:
    return {f"{prefix}.{name}": meta for name, meta in fields.items()}


def _pod_spec(prefix: str) -> dict[str, PatchMeta]:
    fields = _under(prefix, _POD_SPEC)
    for containers in ("containers", "initContainers", "ephemeralContainers"):
        fields[f"{prefix}.{containers}"] = _BY_NAME
        fields.update(_under(f"{prefix}.{containers}", _CONTAINER))
    return fields


def _pod_status(prefix: str) -> dict[str, PatchMeta]:
    fields = _under(prefix, _POD_STATUS)
    for statuses in ("containerStatuses", "initContainerStatuses", "ephemeralContainerStatuses"):
        fields.update(_under(f"{prefix}.{statuses}", _CONTAINER_STATUS))
    return fields


def _workload(pod_spec: str, **extra: PatchMeta) -> dict[str, PatchMeta]:
    """A kind with a pod template and status conditions merged by type."""
    return {**_pod_spec(pod_spec), "status.conditions": _BY_TYPE, **extra}


_CONDITIONS = {"status.conditions": _BY_TYPE}

# (group, kind) -> the kind's own tags (ObjectMeta's come with every kind).
_KINDS: dict[tuple[str, str], dict[str, PatchMeta]] = {
    ("", "Pod"): {**_pod_spec("spec"), **_pod_status("status")},
    ("", "PodTemplate"): _pod_spec("template.spec"),
    ("", "ReplicationController"): _workload("spec.template.spec"),
    ("", "Service"): {"spec.ports": PatchMeta("merge", "port"), **_CONDITIONS},
    ("", "ServiceAccount"): {"secrets": _BY_NAME},
    ("", "Node"): {
        "spec.podCIDRs": _MERGE,
        "status.conditions": _BY_TYPE,
        "status.addresses": _BY_TYPE,
    },
    ("", "Namespace"): _CONDITIONS,
    ("", "PersistentVolumeClaim"): _CONDITIONS,
    ("apps", "Deployment"): _workload(
        "spec.template.spec", **{"spec.strategy": PatchMeta(retain_keys=True)}
    ),
    ("apps", "StatefulSet"): _workload("spec.template.spec"),
    ("apps", "DaemonSet"): _workload("spec.template.spec"),
    ("apps", "ReplicaSet"): _workload("spec.template.spec"),
    ("batch", "Job"): _workload("spec.template.spec"),
    ("batch", "CronJob"): _pod_spec("spec.jobTemplate.spec.template.spec"),
    ("policy", "PodDisruptionBudget"): {
        "spec.selector": PatchMeta("replace"),
        **_CONDITIONS,
    },
    ("autoscaling", "HorizontalPodAutoscaler"): _CONDITIONS,
    ("storage.k8s.io", "CSINode"): {"spec.drivers": _BY_NAME},
}


def merge_keys_for(info: KindInfo) -> MergeKeys | None:
    """The tags a strategic merge patch of this kind follows; None when the kind takes no
    such patch (a custom resource)."""
    return _merge_keys(info.group, info.kind)


@cache
def _merge_keys(group: str, kind: str) -> MergeKeys | None:
    if group not in _TYPED_GROUPS:
        return None
    return {**_under("metadata", OBJECT_META), **_KINDS.get((group, kind), {})}
