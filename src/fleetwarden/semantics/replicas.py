"""GetReplicas of Karmada's default resource interpreter (resourceinterpreter/default/native):
how many replicas a workload asks for, and what each one needs.

Deployments, ReplicaSets and StatefulSets ask for spec.replicas; a Job for its parallelism,
capped by its completions; a Pod for one. Each replica needs its pod template's effective
requests (a container's limits stand in for requests it leaves out; init containers count
by their largest request; pod overhead adds) and its node claim (nodeSelector, tolerations,
required node affinity).

Our hub does not run the API server's defaulting for built-in kinds, so the defaults that
upstream's interpreter finds already set (replicas 1, a Job's parallelism 1) are applied
here.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from fleetwarden.api.karmada.work import NodeClaim
from fleetwarden.semantics.quantity import (
    QuantityError,
    binary_si,
    decimal_si,
    milli_value,
    parse_quantity,
    value,
)
from fleetwarden.semantics.validation import is_qualified_name

Obj = Mapping[str, Any]


class InterpretError(ValueError):
    """A workload whose fields do not read as their Kubernetes types; names the field."""


@dataclass(frozen=True)
class Replicas:
    replicas: int
    # The wire form of a ReplicaRequirements, or None when a replica needs nothing.
    requirements: dict[str, Any] | None


def _scaled_replicas(obj: Obj) -> int:
    return _int_at(obj, "spec", "replicas", default=1)


def _job_replicas(obj: Obj) -> int:
    # Fixed-completion Jobs never run more pods at once than completions remain.
    given = _dig(obj, "spec", "parallelism") is not None
    parallelism = _int_at(obj, "spec", "parallelism", default=1)
    completions = _int_at(obj, "spec", "completions", default=parallelism if given else 1)
    return min(parallelism, completions)


# apiVersion/kind -> (replicas, path of the pod spec)
_INTERPRETERS: dict[tuple[str, str], tuple[Callable[[Obj], int], tuple[str, ...]]] = {
    ("apps/v1", "Deployment"): (_scaled_replicas, ("spec", "template", "spec")),
    ("apps/v1", "ReplicaSet"): (_scaled_replicas, ("spec", "template", "spec")),
    ("apps/v1", "StatefulSet"): (_scaled_replicas, ("spec", "template", "spec")),
    ("batch/v1", "Job"): (_job_replicas, ("spec", "template", "spec")),
    ("v1", "Pod"): (lambda obj: 1, ("spec",)),
}


def replica_hook_enabled(api_version: str, kind: str) -> bool:
    """Whether the interpreter knows the kind's replicas (HookEnabled InterpretReplica)."""
    return (api_version, kind) in _INTERPRETERS


def get_replicas(obj: Obj, *, with_priority_class: bool = False) -> Replicas:
    """The workload's replicas and replica requirements. with_priority_class: also the pod
    template's priorityClassName (upstream does so under the ResourceQuotaEstimate gate)."""
    replicas_of, pod_path = _INTERPRETERS[(str(obj.get("apiVersion")), str(obj.get("kind")))]
    replicas = replicas_of(obj)
    pod_spec = _mapping_at(obj, *pod_path)
    path = ".".join(pod_path)
    requirements: dict[str, Any] = {}
    node_claim = _node_claim(pod_spec, path)
    if node_claim is not None:
        requirements["nodeClaim"] = node_claim
    request = _resource_request(pod_spec, path)
    if request:
        requirements["resourceRequest"] = request
    if not requirements:
        return Replicas(replicas, None)
    if with_priority_class and pod_spec.get("priorityClassName"):
        requirements["priorityClassName"] = pod_spec["priorityClassName"]
    return Replicas(replicas, requirements)


def _node_claim(pod_spec: Obj, path: str) -> dict[str, Any] | None:
    """GenerateNodeClaimByPodSpec: None when the pod spec constrains no node."""
    claim = _node_constraints(pod_spec)
    if claim is None:
        return None
    try:
        return NodeClaim.model_validate(claim).to_dict()
    except ValidationError as exc:
        error = exc.errors(include_url=False)[0]
        head, *rest = error["loc"]
        field = _POD_FIELDS.get(str(head), str(head))
        field += "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in rest)
        raise InterpretError(f"{path}.{field}: Invalid value: {error['msg']}") from None


# Where each NodeClaim field comes from in a pod spec.
_POD_FIELDS = {
    "hardNodeAffinity": "affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution"
}


def _node_constraints(pod_spec: Obj) -> dict[str, Any] | None:
    claim: dict[str, Any] = {}
    affinity = _dig(
        pod_spec, "affinity", "nodeAffinity", "requiredDuringSchedulingIgnoredDuringExecution"
    )
    if affinity is not None:
        claim["hardNodeAffinity"] = affinity
    if pod_spec.get("nodeSelector") is not None:
        claim["nodeSelector"] = pod_spec["nodeSelector"]
    if pod_spec.get("tolerations"):
        claim["tolerations"] = pod_spec["tolerations"]
    return claim or None


# --- resources ---------------------------------------------------------------------------

_CPU, _MEMORY, _PODS, _EPHEMERAL_STORAGE = "cpu", "memory", "pods", "ephemeral-storage"
_BYTES = (_MEMORY, _EPHEMERAL_STORAGE)


def _is_scalar(name: str) -> bool:
    """Extended, hugepage, prefixed native and attachable-volume resources (lifted)."""
    if name.startswith(("hugepages-", "attachable-volumes-")) or "kubernetes.io/" in name:
        return True
    return "/" in name and not is_qualified_name("requests." + name)


def _counted(name: str) -> bool:
    return name in (_CPU, _MEMORY, _PODS, _EPHEMERAL_STORAGE) or _is_scalar(name)


def _amounts(resources: Obj, path: str) -> dict[str, int]:
    """A ResourceList as integers: cpu in millicores, everything else in units."""
    amounts: dict[str, int] = {}
    for name, quantity in resources.items():
        if not _counted(name):
            continue
        try:
            parsed = parse_quantity(quantity)
        except QuantityError as exc:
            shown = json.dumps(quantity)
            raise InterpretError(f"{path}.{name}: Invalid value: {shown}: {exc}") from None
        amounts[name] = milli_value(parsed) if name == _CPU else value(parsed)
    return amounts


def _effective_requests(container: Obj, path: str) -> dict[str, int]:
    """A container's requests, its limits standing in for the requests it leaves out."""
    resources = _mapping_at(container, "resources")
    limits = _mapping_at(resources, "limits")
    requests = _mapping_at(resources, "requests")
    return _amounts({**limits, **requests}, f"{path}.resources")


def _resource_request(pod_spec: Obj, path: str) -> dict[str, str]:
    """AddPodTemplateRequest: containers add up, init containers count by their maximum,
    overhead adds; as a canonical ResourceList of the positive amounts."""
    total: dict[str, int] = {}
    for i, container in enumerate(_containers(pod_spec, "containers", path)):
        _add(total, _effective_requests(container, f"{path}.containers[{i}]"))
    for i, container in enumerate(_containers(pod_spec, "initContainers", path)):
        requests = _effective_requests(container, f"{path}.initContainers[{i}]")
        for name, amount in requests.items():
            total[name] = max(total.get(name, 0), amount)
    _add(total, _amounts(_mapping_at(pod_spec, "overhead"), f"{path}.overhead"))
    return {name: _format(name, amount) for name, amount in total.items() if amount > 0}


def _add(total: dict[str, int], amounts: Mapping[str, int]) -> None:
    for name, amount in amounts.items():
        total[name] = total.get(name, 0) + amount


def _format(name: str, amount: int) -> str:
    if name == _CPU:
        return decimal_si(amount, -3)
    if name in _BYTES or name.startswith("hugepages-"):
        return binary_si(amount)
    return decimal_si(amount)


# --- reading the unstructured workload ------------------------------------------------------


def _dig(obj: Obj, *path: str) -> Any:
    current: Any = obj
    for key in path:
        if not isinstance(current, Mapping):
            return None
        current = current.get(key)
    return current


def _mapping_at(obj: Obj, *path: str) -> Obj:
    found = _dig(obj, *path)
    if found is None:
        return {}
    if not isinstance(found, Mapping):
        raise InterpretError(f"{'.'.join(path)}: Invalid value: must be of type object")
    return found


def _containers(pod_spec: Obj, field: str, path: str) -> Iterable[Obj]:
    containers = pod_spec.get(field) or []
    if not isinstance(containers, list) or not all(isinstance(c, Mapping) for c in containers):
        raise InterpretError(f"{path}.{field}: Invalid value: must be a list of objects")
    return containers


def _int_at(obj: Obj, *path: str, default: int) -> int:
    found = _dig(obj, *path)
    if found is None:
        return default
    if isinstance(found, bool) or not isinstance(found, int):
        shown = json.dumps(found)
        raise InterpretError(f"{'.'.join(path)}: Invalid value: {shown}: must be of type integer")
    return found
