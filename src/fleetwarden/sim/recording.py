"""What a run did, as data for a picture: each cluster's health and taints over time, each
workload's clusters and replicas over time, its eviction tasks, the expectations' verdicts.

Read off the store's stream of committed writes, like the text timeline, but kept as
intervals and samples (seconds since the scenario's start) rather than sentences, so a
renderer draws it without parsing words. The shape is `web/src/recording.ts`'s
`Recording`: the simulation report and the hub's live timeline draw the same data.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from datetime import datetime
from typing import Any, TypedDict

from fleetwarden.semantics.durations import parse_duration
from fleetwarden.sim.expect import Outcome
from fleetwarden.store.interface import EventType, WatchEvent

PLACEMENT_LABEL = "cluster.open-cluster-management.io/placement"
# collection -> (the cluster kind, the condition that says whether it is healthy)
_CLUSTERS = {
    "cluster.karmada.io/clusters": ("Cluster", "Ready"),
    "cluster.open-cluster-management.io/managedclusters": (
        "ManagedCluster",
        "ManagedClusterConditionAvailable",
    ),
}
_BINDINGS = {"work.karmada.io/resourcebindings", "work.karmada.io/clusterresourcebindings"}
_DECISIONS = "cluster.open-cluster-management.io/placementdecisions"


class Health(TypedDict):
    at: float
    status: str
    reason: str


class Taint(TypedDict):
    key: str
    value: str
    effect: str
    start: float
    end: float | None  # None: still there when the run ended


class ClusterLane(TypedDict):
    name: str
    kind: str
    health: list[Health]
    taints: list[Taint]


class Placement(TypedDict):
    at: float
    clusters: dict[str, int | None]  # cluster -> replicas (None: not counted, as in OCM)


class Eviction(TypedDict):
    cluster: str
    producer: str
    reason: str
    purgeMode: str
    start: float
    end: float | None  # None: still waiting when the run ended


class WorkloadLane(TypedDict):
    name: str
    placements: list[Placement]
    evictions: list[Eviction]


class Verdict(TypedDict):
    """An expectation's outcome (`simulate -o json`'s results), at seconds, not a duration."""

    at: float
    path: str
    passed: bool
    check: str
    query: str | None
    expected: Any
    actual: Any


class Recording(TypedDict):
    title: str
    start: str
    end: float
    clusters: list[ClusterLane]
    workloads: list[WorkloadLane]
    expectations: list[Verdict]


class Recorder:
    """Subscribed to a store; `recording()` gives what it saw."""

    def __init__(self, start: datetime, now: Callable[[], datetime]) -> None:
        self.start, self.now = start, now
        self.clusters: dict[str, ClusterLane] = {}
        self.workloads: dict[str, WorkloadLane] = {}
        # PlacementDecisions come in batches: a Placement's clusters are all its batches'.
        self._batches: dict[str, dict[str, list[str]]] = {}

    def observe(self, event: WatchEvent) -> None:
        # The collection first: the store makes an event's object only when it is read.
        if event.collection in _CLUSTERS:
            self._cluster(event)
        elif event.collection in _BINDINGS:
            self._binding(event)
        elif event.collection == _DECISIONS:
            self._decision(event)

    def recording(self, title: str, outcomes: Iterable[Outcome]) -> Recording:
        return {
            "title": title,
            "start": self.start.isoformat(),
            "end": self._at(),
            "clusters": sorted(self.clusters.values(), key=lambda lane: lane["name"]),
            "workloads": sorted(self.workloads.values(), key=lambda lane: lane["name"]),
            "expectations": [_verdict(o) for o in outcomes],
        }

    def _at(self) -> float:
        return (self.now() - self.start).total_seconds()

    def _cluster(self, event: WatchEvent) -> None:
        kind, condition = _CLUSTERS[event.collection]
        obj = event.object
        name = str(obj["metadata"]["name"])
        lane = self.clusters.setdefault(
            name, {"name": name, "kind": kind, "health": [], "taints": []}
        )
        deleted = event.type == EventType.DELETED
        health = None if deleted else _condition(obj, condition, self._at())
        if health and (not lane["health"] or _differs(lane["health"][-1], health)):
            lane["health"].append(health)
        taints = set() if deleted else _taints(obj)
        self._intervals(lane["taints"], taints, _taint, _taint_key)
        # A taint gone within its instant (the hub settling at t=0) was never in force.
        lane["taints"] = [t for t in lane["taints"] if t["end"] != t["start"]]

    def _binding(self, event: WatchEvent) -> None:
        obj = event.object
        resource = (obj.get("spec") or {}).get("resource") or {}
        path = "/".join(p for p in (resource.get("namespace"), resource.get("name")) if p)
        lane = self._workload(f"{resource.get('kind', obj.get('kind', ''))} {path}")
        spec = {} if event.type == EventType.DELETED else obj.get("spec") or {}
        clusters = {str(c["name"]): c.get("replicas") for c in spec.get("clusters") or []}
        self._place(lane, clusters)
        tasks: set[tuple[str, ...]] = {
            (str(t.get("fromCluster", "")), str(t.get("producer", "")),
             str(t.get("reason", "")), str(t.get("purgeMode", "")))
            for t in spec.get("gracefulEvictionTasks") or []
        }  # fmt: skip
        self._intervals(lane["evictions"], tasks, _eviction, _eviction_key)

    def _decision(self, event: WatchEvent) -> None:
        obj = event.object
        meta = obj["metadata"]
        placement = (meta.get("labels") or {}).get(PLACEMENT_LABEL)
        if not placement:
            return
        name = f"Placement {meta.get('namespace', '')}/{placement}"
        batches = self._batches.setdefault(name, {})
        status = {} if event.type == EventType.DELETED else obj.get("status") or {}
        batches[meta["name"]] = [str(d["clusterName"]) for d in status.get("decisions") or []]
        decided = sorted({c for batch in batches.values() for c in batch})
        self._place(self._workload(name), dict.fromkeys(decided))

    def _workload(self, name: str) -> WorkloadLane:
        return self.workloads.setdefault(name, {"name": name, "placements": [], "evictions": []})

    def _place(self, lane: WorkloadLane, clusters: dict[str, int | None]) -> None:
        placements, at = lane["placements"], self._at()
        if placements and placements[-1]["at"] == at:
            placements.pop()  # a step within one instant: only where it ended is seen
        if clusters != (placements[-1]["clusters"] if placements else {}):
            placements.append({"at": at, "clusters": clusters})

    def _intervals(
        self,
        intervals: list[Any],
        present: set[tuple[str, ...]],
        make: Callable[[tuple[str, ...], float], Any],
        key: Callable[[Any], tuple[str, ...]],
    ) -> None:
        """Closes the open intervals whose key is gone, opens one for each new key."""
        at = self._at()
        open_ = {key(i): i for i in intervals if i["end"] is None}
        for gone in open_.keys() - present:
            open_[gone]["end"] = at
        intervals.extend(make(new, at) for new in sorted(present - open_.keys()))


def _condition(obj: dict[str, Any], condition: str, at: float) -> Health | None:
    for c in (obj.get("status") or {}).get("conditions") or []:
        if c.get("type") == condition:
            return {
                "at": at,
                "status": str(c.get("status", "")),
                "reason": str(c.get("reason", "")),
            }
    return None


def _differs(last: Health, health: Health) -> bool:
    return (last["status"], last["reason"]) != (health["status"], health["reason"])


def _taints(obj: dict[str, Any]) -> set[tuple[str, ...]]:
    return {
        (str(t.get("key", "")), str(t.get("value", "")), str(t.get("effect", "")))
        for t in (obj.get("spec") or {}).get("taints") or []
    }


def _taint(key: tuple[str, ...], at: float) -> Taint:
    return {"key": key[0], "value": key[1], "effect": key[2], "start": at, "end": None}


def _eviction(key: tuple[str, ...], at: float) -> Eviction:
    cluster, producer, reason, purge = key
    return {
        "cluster": cluster, "producer": producer, "reason": reason, "purgeMode": purge,
        "start": at, "end": None,
    }  # fmt: skip


def _taint_key(taint: Taint) -> tuple[str, ...]:
    return (taint["key"], taint["value"], taint["effect"])


def _eviction_key(task: Eviction) -> tuple[str, ...]:
    return (task["cluster"], task["producer"], task["reason"], task["purgeMode"])


def _verdict(outcome: Outcome) -> Verdict:
    return {
        "at": parse_duration(outcome.at).total_seconds(),
        "path": outcome.path,
        "passed": outcome.passed,
        "check": outcome.check,
        "query": outcome.query,
        "expected": outcome.expected,
        "actual": outcome.actual,
    }
