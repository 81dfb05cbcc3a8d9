"""Karmada's default resource interpreter for built-in kinds, as far as propagation needs it
(pkg/resourceinterpreter/default/native): ReviseReplica, ReflectStatus, InterpretHealth and
AggregateStatus.

Objects are wire dicts. A kind without a hook of its own gets upstream's fallbacks: its
replicas are left alone, its whole `.status` is reflected, and it counts as healthy. Hooks
are transcribed for the workloads propagation revises (Deployment, ReplicaSet, StatefulSet,
Job); status is reflected and aggregated for Deployment only. One leniency: a Deployment
without a valid resourcetemplate.karmada.io/generation annotation (a Work written by hand)
reflects resourceTemplateGeneration 0, where upstream fails the reflection.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from fleetwarden.api.karmada.well_known import RESOURCE_TEMPLATE_GENERATION_ANNOTATION
from fleetwarden.api.karmada.work import RESOURCE_HEALTHY, RESOURCE_UNHEALTHY

_DEPLOYMENT = ("apps/v1", "Deployment")
_STATEFUL_SET = ("apps/v1", "StatefulSet")
_REPLICA_SET = ("apps/v1", "ReplicaSet")

# getAllDefaultReviseReplicaInterpreter: the spec field holding each kind's replicas.
_REPLICA_FIELDS: Mapping[tuple[str, str], str] = {
    _DEPLOYMENT: "replicas",
    _REPLICA_SET: "replicas",
    _STATEFUL_SET: "replicas",
    ("batch/v1", "Job"): "parallelism",
}

# WrappedDeploymentStatus: the DeploymentStatus fields reflected, in Go's field order.
_DEPLOYMENT_STATUS_FIELDS = (
    "observedGeneration",
    "replicas",
    "updatedReplicas",
    "readyReplicas",
    "availableReplicas",
    "unavailableReplicas",
)


def _gvk(obj: Mapping[str, Any]) -> tuple[str, str]:
    return str(obj.get("apiVersion", "")), str(obj.get("kind", ""))


def _map(obj: Mapping[str, Any], key: str) -> Mapping[str, Any]:
    value = obj.get(key)
    return value if isinstance(value, Mapping) else {}


def _int(obj: Mapping[str, Any], key: str) -> int:
    value = obj.get(key)
    return value if isinstance(value, int) else 0


def revise_replica_enabled(obj: Mapping[str, Any]) -> bool:
    """HookEnabled(gvk, ReviseReplica) for the default interpreter."""
    return _gvk(obj) in _REPLICA_FIELDS


def revise_replica(obj: dict[str, Any], replicas: int) -> None:
    """ReviseReplica, in place: the kind's replica field takes `replicas` where the template
    sets it (helper.ApplyReplica leaves an absent field absent)."""
    field = _REPLICA_FIELDS[_gvk(obj)]
    spec = obj.get("spec")
    if not isinstance(spec, dict) or field not in spec:
        return
    if not isinstance(spec[field], int) or isinstance(spec[field], bool):
        raise ValueError(
            f".spec.{field} accessor error: {spec[field]!r} is of the type "
            f"{type(spec[field]).__name__}, expected int64"
        )
    spec[field] = replicas


def reflect_status(obj: Mapping[str, Any]) -> dict[str, Any] | None:
    """ReflectStatus: what the work status controller copies into manifestStatuses[].status."""
    status = obj.get("status")
    if not isinstance(status, Mapping):
        return None
    if _gvk(obj) != _DEPLOYMENT:
        return dict(status)  # reflectWholeStatus
    generation = str(_map(_map(obj, "metadata"), "annotations").get(
        RESOURCE_TEMPLATE_GENERATION_ANNOTATION, "0"
    ))  # fmt: skip
    wrapped = {
        "generation": _int(_map(obj, "metadata"), "generation"),
        "resourceTemplateGeneration": int(generation) if generation.isdigit() else 0,
        **{field: _int(status, field) for field in _DEPLOYMENT_STATUS_FIELDS},
    }
    # Go's omitempty: zero counts are left out, and an empty status is no status at all.
    return {key: value for key, value in wrapped.items() if value} or None


def aggregate_status(
    obj: Mapping[str, Any], items: Sequence[Mapping[str, Any]]
) -> dict[str, Any] | None:
    """AggregateStatus: the template's status summed from its bindings' aggregatedStatus
    items; None when the kind has no hook here (only Deployment's is transcribed) or the
    status is up to date. observedGeneration moves to the template's generation once every
    member runs it (aggregateDeploymentStatus)."""
    if _gvk(obj) != _DEPLOYMENT:
        return None
    old = _map(obj, "status")
    generation = _int(_map(obj, "metadata"), "generation")
    counts = dict.fromkeys(_DEPLOYMENT_STATUS_FIELDS[1:], 0)
    latest = 0
    for item in items:
        member = item.get("status")
        if not isinstance(member, Mapping):
            continue
        if _int(member, "observedGeneration") >= _int(member, "generation") and (
            _int(member, "resourceTemplateGeneration") >= generation
        ):
            latest += 1
        for field in counts:
            counts[field] += _int(member, field)
    observed_generation = generation if latest == len(items) else _int(old, "observedGeneration")
    new = {"observedGeneration": observed_generation, **counts}
    if all(_int(old, field) == value for field, value in new.items()):
        return None
    status = {key: value for key, value in old.items() if key not in new}
    status.update((key, value) for key, value in new.items() if value)  # omitempty
    return status


def health_interpreted(api_version: str, kind: str) -> bool:
    """HookEnabled(InterpretHealth): whether the kind's health is known here."""
    return (api_version, kind) in _HEALTH_CHECKS


def interpret_health(obj: Mapping[str, Any]) -> str:
    """InterpretHealth; a kind without a health hook is treated as healthy, as the work
    status controller does."""
    check = _HEALTH_CHECKS.get(_gvk(obj))
    return RESOURCE_HEALTHY if check is None or check(obj) else RESOURCE_UNHEALTHY


def _rolled_out(obj: Mapping[str, Any]) -> bool:
    """interpretDeploymentHealth and interpretStatefulSetHealth: the latest spec observed,
    every replica updated, and every updated one available."""
    status, spec = _map(obj, "status"), _map(obj, "spec")
    if _int(status, "observedGeneration") != _int(_map(obj, "metadata"), "generation"):
        return False
    if isinstance(spec.get("replicas"), int) and _int(status, "updatedReplicas") < spec["replicas"]:
        return False
    return _int(status, "availableReplicas") >= _int(status, "updatedReplicas")


def _replica_set_available(obj: Mapping[str, Any]) -> bool:
    """interpretReplicaSetHealth."""
    status, spec = _map(obj, "status"), _map(obj, "spec")
    if _int(status, "observedGeneration") != _int(_map(obj, "metadata"), "generation"):
        return False
    replicas = spec.get("replicas")
    return not isinstance(replicas, int) or _int(status, "availableReplicas") >= replicas


_HEALTH_CHECKS: Mapping[tuple[str, str], Callable[[Mapping[str, Any]], bool]] = {
    _DEPLOYMENT: _rolled_out,
    _STATEFUL_SET: _rolled_out,
    _REPLICA_SET: _replica_set_available,
}
