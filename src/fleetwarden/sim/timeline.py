"""The timeline of what the hub did, read off the store's stream of changes.

Taints added and removed (Cluster, ManagedCluster), scheduling decisions (binding
clusters, PlacementDecisions), graceful eviction tasks, and every Event recorded, each at
its virtual time. Derived from committed writes only, so it is as deterministic as the run.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from fleetwarden.semantics.durations import format_duration
from fleetwarden.store.interface import EventType, WatchEvent

Watched = Callable[[dict[str, Any]], list[str]]


def _taints(obj: dict[str, Any]) -> list[str]:
    return [
        f"{t.get('key', '')}{'=' + t['value'] if t.get('value') else ''}:{t.get('effect', '')}"
        for t in (obj.get("spec") or {}).get("taints") or []
    ]


def _health(condition_type: str) -> Watched:
    """A cluster's health condition as `Ready=False (ClusterNotReady)`."""

    def read(obj: dict[str, Any]) -> list[str]:
        return [
            f"{c.get('type')}={c.get('status')} ({c.get('reason', '')})"
            for c in (obj.get("status") or {}).get("conditions") or []
            if c.get("type") == condition_type
        ]

    return read


def _binding_clusters(obj: dict[str, Any]) -> list[str]:
    return [
        f"{c.get('name')}" + (f"({c['replicas']})" if "replicas" in c else "")
        for c in (obj.get("spec") or {}).get("clusters") or []
    ]


def _eviction_tasks(obj: dict[str, Any]) -> list[str]:
    return [
        str(t.get("fromCluster", ""))
        for t in (obj.get("spec") or {}).get("gracefulEvictionTasks") or []
    ]


def _decisions(obj: dict[str, Any]) -> list[str]:
    return [str(d.get("clusterName", "")) for d in (obj.get("status") or {}).get("decisions") or []]


# collection -> (what is followed, words for what appeared, for what went)
_FOLLOWED: dict[str, list[tuple[Watched, str, str]]] = {
    "cluster.karmada.io/clusters": [
        (_health("Ready"), "condition", ""),
        (_taints, "taint added", "taint removed"),
    ],
    "cluster.open-cluster-management.io/managedclusters": [
        (_health("ManagedClusterConditionAvailable"), "condition", ""),
        (_taints, "taint added", "taint removed"),
    ],
    "work.karmada.io/resourcebindings": [
        (_binding_clusters, "scheduled to", "unscheduled from"),
        (_eviction_tasks, "eviction task added for", "eviction task removed for"),
    ],
    "work.karmada.io/clusterresourcebindings": [
        (_binding_clusters, "scheduled to", "unscheduled from"),
        (_eviction_tasks, "eviction task added for", "eviction task removed for"),
    ],
    "cluster.open-cluster-management.io/placementdecisions": [
        (_decisions, "decided", "undecided"),
    ],
}


@dataclass(frozen=True)
class Entry:
    at: str
    object: str
    action: str
    detail: str

    def to_dict(self) -> dict[str, str]:
        return {"at": self.at, "object": self.object, "action": self.action, "detail": self.detail}


class Timeline:
    def __init__(self, start: datetime, now: Callable[[], datetime]) -> None:
        self.start, self.now = start, now
        self.entries: list[Entry] = []
        self._last: dict[tuple[str, str, str], dict[str, Any]] = {}

    def observe(self, event: WatchEvent) -> None:
        # The collection first: most writes (Lease renewals, say) concern nothing here,
        # and the store makes an event's object only when it is looked at.
        if event.collection == "/events":
            self._event(event.object, event.type)
            return
        followers = _FOLLOWED.get(event.collection)
        if not followers:
            return
        obj = event.object
        meta = obj.get("metadata") or {}
        key = (event.collection, meta.get("namespace", ""), meta.get("name", ""))
        before = (
            self._last.pop(key, {}) if event.type == EventType.DELETED else self._last.get(key, {})
        )
        after = {} if event.type == EventType.DELETED else obj
        if event.type != EventType.DELETED:
            self._last[key] = obj
        name = _display(obj)
        for read, added, removed in followers:
            old, new = read(before) if before else [], read(after) if after else []
            self._diff(name, old, new, added, removed)

    def _diff(self, name: str, old: list[str], new: list[str], added: str, removed: str) -> None:
        gone = [x for x in old if x not in new]
        came = [x for x in new if x not in old]
        if gone and removed:  # a condition only reports what it became
            self._add(name, removed, ", ".join(gone))
        if came:
            self._add(name, added, ", ".join(came))

    def _event(self, obj: dict[str, Any], type_: EventType) -> None:
        if type_ == EventType.DELETED:
            return
        involved = obj.get("involvedObject") or {}
        name = f"{involved.get('kind', '')} " + "/".join(
            p for p in (involved.get("namespace"), involved.get("name")) if p
        )
        self._add(name, f"event {obj.get('reason', '')}", str(obj.get("message", "")))

    def _add(self, name: str, action: str, detail: str) -> None:
        self.entries.append(Entry(offset(self.start, self.now()), name, action, detail))


def _display(obj: dict[str, Any]) -> str:
    meta = obj.get("metadata") or {}
    path = "/".join(p for p in (meta.get("namespace"), meta.get("name")) if p)
    return f"{obj.get('kind', '')} {path}"


def offset(start: datetime, instant: datetime) -> str:
    """Virtual time since the scenario's start, as a Go duration (`1m30s`)."""
    return format_duration(instant - start)
