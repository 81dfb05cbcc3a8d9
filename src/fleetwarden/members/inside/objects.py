"""Inside a simulated member with nodes: the objects of kinds no controller here runs
(ConfigMaps, Secrets, Services, ServiceAccounts, RBAC, quotas, policies, custom resources,
...), kept as the member's API server keeps them.

A create gives the object a uid, a creationTimestamp, generation 1 and a resourceVersion
(one counter for the member, moved by every write); an update keeps its identity, moves
its resourceVersion, and its generation when anything but metadata and status changed
(the hub store's rule). Status is what a fresh cluster's controllers would write and
nothing more: a Namespace is Active, a PersistentVolumeClaim Pending (no provisioner
binds it), a Service has `loadBalancer: {}` and a cluster IP from the service range
(kept across updates that do not set one, as Karmada's retainServiceFields keeps it); a
status in the manifest is not taken, and other kinds get none.
"""

from __future__ import annotations

import ipaddress
import itertools
import uuid
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from fleetwarden.api.meta import format_time

ObjectKey = tuple[str, str, str, str]  # group, kind, namespace, name

# kube-apiserver's default --service-cluster-ip-range.
SERVICE_CLUSTER_IP_RANGE = ipaddress.ip_network("10.96.0.0/12")
# Where the uids of a member's objects come from (uuid5 over it: the same every run).
_UID_NAMESPACE = uuid.UUID("6f1d0c2e-0b7a-4a53-9d6c-66c6e1a7d0b1")
_FRESH_STATUS: Mapping[tuple[str, str], Mapping[str, Any]] = {
    ("", "Namespace"): {"phase": "Active"},
    ("", "PersistentVolumeClaim"): {"phase": "Pending"},
    ("", "Service"): {"loadBalancer": {}},
}


def object_key(manifest: Mapping[str, Any]) -> ObjectKey:
    meta = manifest.get("metadata") or {}
    group = str(manifest.get("apiVersion", "")).rpartition("/")[0]
    return group, str(manifest.get("kind", "")), str(meta.get("namespace") or ""), str(meta["name"])


@dataclass
class StoredObjects:
    """The member's objects of kinds no controller inside it runs, by key."""

    objects: dict[ObjectKey, dict[str, Any]] = field(default_factory=dict)
    _versions: Iterator[int] = field(default_factory=lambda: itertools.count(1))
    # Addresses of the range by index: 1 is the `kubernetes` Service's.
    _service_ips: Iterator[int] = field(default_factory=lambda: itertools.count(2))

    def apply(self, manifest: Mapping[str, Any], now: datetime) -> ObjectKey:
        """Create the object, or update it; a write that changes nothing is none."""
        key = object_key(manifest)
        current = self.objects.get(key)
        wanted = self._desired(key, manifest, current)
        if current is None:
            self.objects[key] = self._created(key, wanted, now)
        elif _content(wanted) != _content(current):
            self.objects[key] = self._updated(wanted, current)
        return key

    def get(self, key: ObjectKey) -> dict[str, Any]:
        return self.objects[key]

    def update_status(self, key: ObjectKey, status: Mapping[str, Any] | None) -> None:
        """Write the object's status (its status subresource): a new resourceVersion, the
        same generation; a write that changes nothing is none."""
        current = self.objects[key]
        if current.get("status") == status:
            return
        updated = {
            **current,
            "metadata": {**current["metadata"], "resourceVersion": str(next(self._versions))},
        }
        if status is None:
            updated.pop("status", None)
        else:
            updated["status"] = dict(status)
        self.objects[key] = updated

    def remove(self, key: ObjectKey) -> None:
        self.objects.pop(key, None)

    def _desired(
        self, key: ObjectKey, manifest: Mapping[str, Any], current: Mapping[str, Any] | None
    ) -> dict[str, Any]:
        """The manifest as stored: no status of its own, a Service with its cluster IP."""
        desired = {k: v for k, v in manifest.items() if k != "status"}
        if key[:2] == ("", "Service"):
            spec = desired.get("spec") or {}
            kept = (current or {}).get("spec") or {}
            desired["spec"] = {**spec, **self._cluster_ip(spec, kept)}
        return desired

    def _cluster_ip(self, spec: Mapping[str, Any], kept: Mapping[str, Any]) -> dict[str, Any]:
        """The Service's clusterIP and clusterIPs: as given, else as it had them, else the
        next free address of the range (none for an ExternalName Service)."""
        if spec.get("type") == "ExternalName" or spec.get("clusterIP"):
            return {}
        if kept.get("clusterIP"):
            return {k: kept[k] for k in ("clusterIP", "clusterIPs") if k in kept}
        address = str(SERVICE_CLUSTER_IP_RANGE[next(self._service_ips)])
        return {"clusterIP": address, "clusterIPs": [address]}

    def _created(self, key: ObjectKey, wanted: dict[str, Any], now: datetime) -> dict[str, Any]:
        version = next(self._versions)
        metadata = {
            **(wanted.get("metadata") or {}),
            "uid": str(uuid.uuid5(_UID_NAMESPACE, f"{'/'.join(key)}/{version}")),
            "resourceVersion": str(version),
            "creationTimestamp": format_time(now),
            "generation": 1,
        }
        created = {**wanted, "metadata": metadata}
        status = _FRESH_STATUS.get(key[:2])
        if status is not None:
            created["status"] = dict(status)
        return created

    def _updated(self, wanted: dict[str, Any], current: Mapping[str, Any]) -> dict[str, Any]:
        old = current["metadata"]
        generation = old["generation"] + (_spec(wanted) != _spec(current))
        metadata = {
            **(wanted.get("metadata") or {}),
            **{k: old[k] for k in ("uid", "creationTimestamp")},
            "resourceVersion": str(next(self._versions)),
            "generation": generation,
        }
        updated = {**wanted, "metadata": metadata}
        if "status" in current:
            updated["status"] = current["status"]
        return updated


_SYSTEM_FIELDS = ("uid", "resourceVersion", "creationTimestamp", "generation")


def _content(obj: Mapping[str, Any]) -> dict[str, Any]:
    """What a write sets: all but the system's fields and the status."""
    metadata = {k: v for k, v in (obj.get("metadata") or {}).items() if k not in _SYSTEM_FIELDS}
    return {**_spec(obj), "metadata": metadata}


def _spec(obj: Mapping[str, Any]) -> dict[str, Any]:
    """What moves the generation: anything but metadata and status."""
    return {k: v for k, v in obj.items() if k not in ("metadata", "status")}
