"""prune.RemoveIrrelevantFields with the RemoveJobTTLSeconds hook: what the Work webhook strips
from a manifest because the API server or a member cluster fills it in.

Upstream: pkg/resourceinterpreter/default/native/prune.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

_SERVER_SET_METADATA = (
    "creationTimestamp",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
    "generation",
    "managedFields",
    "resourceVersion",
    "selfLink",
    "uid",
    "ownerReferences",
    "finalizers",
)


def remove_irrelevant_fields(workload: dict[str, Any]) -> None:
    """In place."""
    _pop_keys(map_at(workload, "metadata"), _SERVER_SET_METADATA)
    workload.pop("status", None)
    prune = _KIND_PRUNERS.get(workload.get("kind", ""))
    if prune is not None:
        prune(workload)


def map_at(obj: dict[str, Any], *keys: str) -> dict[str, Any] | None:
    """The mapping at that path of a manifest, if there is one."""
    for key in keys:
        child = obj.get(key)
        if not isinstance(child, dict):
            return None
        obj = child
    return obj


def _pop_keys(mapping: dict[str, Any] | None, keys: Iterable[str]) -> None:
    for key in keys if mapping is not None else ():
        mapping.pop(key, None)  # type: ignore[union-attr]


def _pop_annotation(workload: dict[str, Any], key: str) -> None:
    _pop_keys(map_at(workload, "metadata", "annotations"), (key,))


def _prune_deployment(workload: dict[str, Any]) -> None:
    for key in ("deployment.kubernetes.io/revision", "deployment.kubernetes.io/revision-history"):
        _pop_annotation(workload, key)


def _prune_job(workload: dict[str, Any]) -> None:
    """The selector and labels the Job controller generated, and the TTL a member cluster's
    ttl-after-finished controller would act on."""
    spec = map_at(workload, "spec") or {}
    if spec.get("manualSelector") is not True:
        uid_labels = ("controller-uid", "batch.kubernetes.io/controller-uid")
        _pop_keys(map_at(spec, "selector", "matchLabels"), uid_labels)
        _pop_keys(
            map_at(spec, "template", "metadata", "labels"),
            (*uid_labels, "job-name", "batch.kubernetes.io/job-name"),
        )
    spec.pop("ttlSecondsAfterFinished", None)


def _prune_secret(workload: dict[str, Any]) -> None:
    """A service account token belongs to the member cluster that minted it."""
    if workload.get("type") == "kubernetes.io/service-account-token":
        _pop_annotation(workload, "kubernetes.io/service-account.uid")
        workload["data"] = None


def _prune_service_account(workload: dict[str, Any]) -> None:
    secrets = workload.get("secrets")
    name = (map_at(workload, "metadata") or {}).get("name")
    if not isinstance(secrets, list):
        return
    prefix = f"{name}-token-"
    i = 0
    while i < len(secrets):
        secret_name = secrets[i].get("name") if isinstance(secrets[i], dict) else None
        if isinstance(secret_name, str) and secret_name.startswith(prefix):
            del secrets[i]  # and, as upstream's loop does, skip the entry that moved up
        i += 1


def _prune_service(workload: dict[str, Any]) -> None:
    """Cluster IPs are the member cluster's to allocate; a headless Service keeps `None`."""
    spec = map_at(workload, "spec")
    if spec is not None and isinstance(spec.get("clusterIP"), str) and spec["clusterIP"] != "None":
        spec.pop("clusterIP")
        spec.pop("clusterIPs", None)


def _prune_persistent_volume_claim(workload: dict[str, Any]) -> None:
    key = "volume.kubernetes.io/selected-node"
    if (map_at(workload, "metadata", "annotations") or {}).get(key):
        _pop_annotation(workload, key)


_KIND_PRUNERS: dict[str, Callable[[dict[str, Any]], None]] = {
    "Deployment": _prune_deployment,
    "Job": _prune_job,
    "Secret": _prune_secret,
    "ServiceAccount": _prune_service_account,
    "Service": _prune_service,
    "PersistentVolumeClaim": _prune_persistent_volume_claim,
}
