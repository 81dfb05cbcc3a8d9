"""The timeline of what the hub did, read off the store's stream of changes.

Taints added and removed (Cluster, ManagedCluster), scheduling decisions (binding
clusters, PlacementDecisions), graceful eviction tasks, and every Event recorded, each at
its virtual time. Derived from committed writes only, so it is as deterministic as the run.

Two things read once rather than twice:
- a cluster that stays in a binding's result with other replicas has `moved from
  member1(2) to member1(4)`, not an `unscheduled from` and a `scheduled to`;
- Karmada records most binding Events twice, on the binding and on its resource template
  (ScheduleBindingSucceed, SyncWorkSucceed, AggregateStatusSucceed,
  EvictWorkloadFromClusterSucceed...): the template's copy, recorded at the same instant
  with the same reason, is left out; Events about the template alone are kept.
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


def _cluster_of(target: str) -> str:
    """The cluster of a `member1(2)`."""
    return target.partition("(")[0]


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


_BINDINGS = ("work.karmada.io/resourcebindings", "work.karmada.io/clusterresourcebindings")


class Timeline:
    def __init__(self, start: datetime, now: Callable[[], datetime]) -> None:
        self.start, self.now = start, now
        self.entries: list[Entry] = []
        self._last: dict[tuple[str, str, str], dict[str, Any]] = {}
        # A binding's display name -> its resource template's.
        self._templates: dict[str, str] = {}
        # (template, reason) of the binding Events written at _echo_instant: the template's
        # copies of them, written at that instant too, are not shown again.
        self._echo_instant: datetime | None = None
        self._echoes: set[tuple[str, str]] = set()

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
        if event.collection in _BINDINGS and after:
            self._templates[name] = _template(obj)
        for read, added, removed in followers:
            old, new = read(before) if before else [], read(after) if after else []
            if read is _binding_clusters:
                self._diff_targets(name, old, new, added, removed)
            else:
                self._diff(name, old, new, added, removed)

    def _diff(self, name: str, old: list[str], new: list[str], added: str, removed: str) -> None:
        gone = [x for x in old if x not in new]
        came = [x for x in new if x not in old]
        if gone and removed:  # a condition only reports what it became
            self._add(name, removed, ", ".join(gone))
        if came:
            self._add(name, added, ", ".join(came))

    def _diff_targets(
        self, name: str, old: list[str], new: list[str], added: str, removed: str
    ) -> None:
        """A binding's result: the clusters gone, those kept with other replicas (moved),
        the new ones."""
        old_by = {_cluster_of(t): t for t in old}
        new_by = {_cluster_of(t): t for t in new}
        gone = [t for c, t in old_by.items() if c not in new_by]
        moved = [c for c, t in old_by.items() if c in new_by and new_by[c] != t]
        came = [t for c, t in new_by.items() if c not in old_by]
        if gone:
            self._add(name, removed, ", ".join(gone))
        if moved:
            before = ", ".join(old_by[c] for c in moved)
            self._add(name, "moved from", f"{before} to {', '.join(new_by[c] for c in moved)}")
        if came:
            self._add(name, added, ", ".join(came))

    def _event(self, obj: dict[str, Any], type_: EventType) -> None:
        if type_ == EventType.DELETED:
            return
        involved = obj.get("involvedObject") or {}
        name = f"{involved.get('kind', '')} " + "/".join(
            p for p in (involved.get("namespace"), involved.get("name")) if p
        )
        reason = str(obj.get("reason", ""))
        instant = self.now()
        if instant != self._echo_instant:
            self._echo_instant = instant
            self._echoes.clear()
        if (name, reason) in self._echoes:
            return  # the resource template's copy of its binding's Event
        template = self._templates.get(name)
        if template is not None:
            self._echoes.add((template, reason))
        self._add(name, f"event {reason}", str(obj.get("message", "")))

    def _add(self, name: str, action: str, detail: str) -> None:
        self.entries.append(Entry(offset(self.start, self.now()), name, action, detail))


def _template(binding: dict[str, Any]) -> str:
    """The display name of a binding's resource template, as Events name it."""
    resource = (binding.get("spec") or {}).get("resource") or {}
    path = "/".join(p for p in (resource.get("namespace"), resource.get("name")) if p)
    return f"{resource.get('kind', '')} {path}"


def _display(obj: dict[str, Any]) -> str:
    meta = obj.get("metadata") or {}
    path = "/".join(p for p in (meta.get("namespace"), meta.get("name")) if p)
    return f"{obj.get('kind', '')} {path}"


def offset(start: datetime, instant: datetime) -> str:
    """Virtual time since the scenario's start, as a Go duration (`1m30s`)."""
    return format_duration(instant - start)
