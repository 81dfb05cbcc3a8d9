"""Wall time for a region to fail over: 1,000 clusters, 10,000 workloads, 100 clusters of one
region unreachable at once.

    .venv/bin/python bench/failover.py [--store memory|sqlite|etcd] [--clusters N]
        [--workloads N] [--policies N] [--failed N] [--profile]

The whole hub runs in the virtual-time driver with simulated Push members: hub_controllers()
(taint manager and graceful eviction controllers included), with the Failover gate and
enable-no-execute-taint-eviction on and resource-eviction-rate raised to 1,000,000/s, so
evictions are paced only by the rate limiter's base delay (5 ms, one eviction per instant).
Clusters sit in ten regions (region-0 is clusters 0, 10, 20, ...); each of the 100
PropagationPolicies offers four clusters by name (Duplicated on two of them, Divided and
Aggregated, or Duplicated on one), none tolerating the unreachable taint.

Setup (not timed as the failover): policies and Deployments through admission, then the
hub settles until every Work is applied and healthy. The fault: the region's members stop
answering and their Clusters get the NoExecute taint cluster.karmada.io/unreachable (as a
ClusterTaintPolicy or the older failover-eviction-timeout would put it). The clock stops
when every affected binding (one with a Work in the region) is scheduled elsewhere, its
new clusters report the workload Healthy and no graceful eviction task is left.

Store writes are counted from the fault to that moment, by kind and by what changed, next
to the minimum the protocol needs for the same outcome (explained in the output). The
process's RSS is printed once the setup has settled: the hub holding every binding, Work
and cluster. Aims: < 5 s wall, writes <= 1.5x the minimum, that RSS < 1 GiB.
"""

from __future__ import annotations

import argparse
import cProfile
import dataclasses
import os
import pstats
import resource
import sys
import tempfile
import time
from collections import Counter, defaultdict
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

from calibration import Calibration, calibrate  # bench/calibration.py, next to this file
from schedule import (  # bench/schedule.py, next to this file
    cluster_propagation_policy,
    open_store,
    timed,
)

from fleetwarden.admission import default_chain
from fleetwarden.api.meta import format_time
from fleetwarden.api.registry import REGISTRY
from fleetwarden.hub import hub_controllers
from fleetwarden.members.simulated import MemberState, SimulatedFleet
from fleetwarden.runtime.clock import VirtualClock
from fleetwarden.runtime.manager import (
    Context,
    Controller,
    ControllerManager,
    Result,
    VirtualDriver,
)
from fleetwarden.runtime.settings import FlagValue, Settings
from fleetwarden.store.core import CoreStore
from fleetwarden.store.interface import EventType, WatchEvent, collection_of

CLUSTER = REGISTRY.info("cluster.karmada.io/v1alpha1", "Cluster")
BINDING = REGISTRY.info("work.karmada.io/v1alpha2", "ResourceBinding")
WORK = REGISTRY.info("work.karmada.io/v1alpha1", "Work")
DEPLOYMENT = REGISTRY.info("apps/v1", "Deployment")
UNREACHABLE = "cluster.karmada.io/unreachable"
REGIONS = 10
SETTINGS: dict[str, FlagValue] = {
    "feature-gates": "Failover=true",
    "enable-no-execute-taint-eviction": True,
    "resource-eviction-rate": 1_000_000.0,
}


def cluster_name(i: int) -> str:
    return f"cluster-{i:04d}"


def region_of(i: int) -> int:
    """Regions interleave: region-0 is clusters 0, 10, 20, ..."""
    return i % REGIONS


def placement(p: int, clusters: int) -> dict[str, Any]:
    """Four candidate clusters spread over the fleet; three ways to place on them."""
    names = [cluster_name((p * 7 + k * 257) % clusters) for k in range(4)]
    result: dict[str, Any] = {"clusterAffinity": {"clusterNames": names}}
    kind = p % 3
    if kind == 0:  # Duplicated on two
        result["spreadConstraints"] = [{"spreadByField": "cluster", "minGroups": 1,
                                        "maxGroups": 2}]  # fmt: skip
        result["replicaScheduling"] = {"replicaSchedulingType": "Duplicated"}
    elif kind == 1:  # Divided, packed into as few as fit
        result["replicaScheduling"] = {
            "replicaSchedulingType": "Divided",
            "replicaDivisionPreference": "Aggregated",
        }
    else:  # Duplicated on one
        result["spreadConstraints"] = [{"spreadByField": "cluster", "minGroups": 1,
                                        "maxGroups": 1}]  # fmt: skip
        result["replicaScheduling"] = {"replicaSchedulingType": "Duplicated"}
    return result


def deployment(w: int, policies: int) -> dict[str, Any]:
    labels = {"app": f"app-{w:05d}", "policy": f"policy-{w % policies:03d}"}
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": f"app-{w:05d}", "namespace": f"ns-{w % 50:02d}", "labels": labels},
        "spec": {
            "replicas": 1 + w % 5,
            "selector": {"matchLabels": labels},
            "template": {"metadata": {"labels": labels},
                         "spec": {"containers": [{"name": "app", "image": "nginx"}]}},
        },
    }  # fmt: skip


class ReconcileClocks:
    """Wall time spent in each controller's reconciles."""

    def __init__(self) -> None:
        self.seconds: defaultdict[str, float] = defaultdict(float)
        self.count: Counter[str] = Counter()

    def wrap(self, controller: Controller) -> Controller:
        reconcile, name = controller.reconcile, controller.name

        def timed(key: str, ctx: Context) -> Result:
            started = time.perf_counter()
            try:
                return reconcile(key, ctx)
            finally:
                self.seconds[name] += time.perf_counter() - started
                self.count[name] += 1

        return dataclasses.replace(controller, reconcile=timed)

    def reset(self) -> None:
        self.seconds.clear()
        self.count.clear()

    def by_seconds(self) -> list[tuple[str, tuple[float, int]]]:
        ranked = sorted(self.seconds.items(), key=lambda item: -item[1])
        return [(n, (s, self.count[n])) for n, s in ranked]


class Tally:
    """Every store write from the fault on, by kind and by what it changed."""

    def __init__(self) -> None:
        self.writes: Counter[str] = Counter()
        self._generation: dict[tuple[str, str, str], Any] = {}
        self._deleting: set[tuple[str, str, str]] = set()
        self.created: set[str] = set()  # uids of the objects created

    def seed(self, objects: list[dict[str, Any]]) -> None:
        """What each object is before the fault, to tell a spec write from a status one."""
        for obj in objects:
            meta = obj["metadata"]
            self._generation[(obj["kind"], meta.get("namespace", ""), meta["name"])] = meta.get(
                "generation"
            )

    def __call__(self, event: WatchEvent) -> dict[str, Any] | None:
        """Count the write; the object when it is a binding's (thawed once for both)."""
        if event.collection not in _DETAILED:
            plural = event.collection.rpartition("/")[2]
            self.writes[f"{plural} {event.type.lower()}"] += 1
            return None
        obj = event.object
        meta = obj["metadata"]
        key = (meta.get("namespace", ""), meta["name"])
        kind = obj["kind"]
        generation = meta.get("generation")
        before = self._generation.get((kind, *key))
        self._generation[(kind, *key)] = generation
        if event.type == EventType.ADDED:
            self.created.add(meta["uid"])
            what = "created"
        elif event.type == EventType.DELETED:
            what = "deleted"
        elif meta.get("deletionTimestamp") and (kind, *key) not in self._deleting:
            self._deleting.add((kind, *key))
            what = "marked deleting"
        elif before is not None and generation != before:
            what = "spec"
        else:
            what = "status or metadata"
        self.writes[f"{kind} {what}"] += 1
        return obj if kind == "ResourceBinding" else None


_DETAILED = {collection_of(BINDING), collection_of(WORK)}


def build(
    store: CoreStore, clock: VirtualClock, args: argparse.Namespace, calibration: Calibration
) -> None:
    settings = Settings.from_flags(SETTINGS)
    chain = default_chain()
    names = [cluster_name(i) for i in range(args.clusters)]
    fleet = SimulatedFleet({n: MemberState() for n in names}, [DEPLOYMENT])
    manager = ControllerManager(store, clock, settings)
    controllers = [fleet.controller(), *hub_controllers(fleet)]
    clocks = ReconcileClocks()
    for controller in controllers:
        manager.add(clocks.wrap(controller))
    print(f"controllers: {', '.join(c.name for c in controllers)}")
    failed = [i for i in range(args.clusters) if region_of(i) == 0][: args.failed]
    failed_names = {cluster_name(i) for i in failed}

    with VirtualDriver(manager, max_rounds=1_000_000) as driver:

        def setup() -> None:
            for i, name in enumerate(names):
                store.create(
                    {"apiVersion": CLUSTER.api_version, "kind": "Cluster",
                     "metadata": {"name": name,
                                  "labels": {"region": f"region-{region_of(i)}"}},
                     "spec": {"syncMode": "Push"}}
                )  # fmt: skip
            for p in range(args.policies):
                store.create(
                    chain.admit(
                        cluster_propagation_policy(p, placement(p, args.clusters)),
                        None,
                        now=clock.now(),
                    ).to_dict()
                )
            for w in range(args.workloads):
                store.create(
                    chain.admit(deployment(w, args.policies), None, now=clock.now()).to_dict()
                )
            driver.settle()

        timed("setup: clusters, policies and Deployments, propagated (settle)", setup)
        held = rss()  # the hub's alone: before this bench lists anything of its own
        bindings = store.list(BINDING).items
        affected = {
            _key(b)
            for b in bindings
            if failed_names & {c["name"] for c in b["spec"].get("clusters") or []}
        }
        works = len(store.list(WORK).items)
        print(f"bindings: {len(bindings):,}, Work: {works:,}; failing {len(failed)} clusters "
              f"of region-0, {len(affected):,} bindings on them")  # fmt: skip
        print(f"hub RSS holding {len(bindings):,} bindings, {works:,} Works and "
              f"{args.clusters:,} clusters: {held / MIB:,.0f} MiB (aim < 1 GiB: "
              f"{'met' if held < GIB else 'NOT met'})")  # fmt: skip

        pending = set(affected)

        tally = Tally()
        tally.seed([*bindings, *store.list(WORK).items])

        def follow(event: WatchEvent) -> None:
            obj = tally(event)
            if obj is None or _key(obj) not in affected:
                return
            if _failed_over(obj, failed_names):
                pending.discard(_key(obj))
            else:
                pending.add(_key(obj))

        store.subscribe(follow)
        start_rv, start_virtual = store.resource_version, clock.now()
        clocks.reset()

        fault_seconds = 0.0

        def fault_and_failover() -> None:
            nonlocal fault_seconds
            started = time.perf_counter()
            added = format_time(clock.now())
            for i in failed:
                name = cluster_name(i)
                fleet.set_state(name, MemberState(reachable=False))
                cluster = store.get(CLUSTER, name)
                taint = {"key": UNREACHABLE, "effect": "NoExecute", "timeAdded": added}
                cluster["spec"]["taints"] = [*(cluster["spec"].get("taints") or []), taint]
                store.update(cluster)
            fault_seconds = time.perf_counter() - started
            driver.settle()
            while pending and driver.advance_to_next_timer(clock.now() + _HOUR):
                driver.settle()

        label = "failover: fault to every affected binding moved and healthy"
        profiler = cProfile.Profile() if args.profile else None
        if profiler is not None:
            wall = timed(label, lambda: profiler.runcall(fault_and_failover))
        else:
            wall = timed(label, fault_and_failover)
        virtual = (clock.now() - start_virtual).total_seconds()
        writes = store.resource_version - start_rv
        left = len(pending)
        tasks = sum(bool(b["spec"].get("gracefulEvictionTasks")) for b in store.list(BINDING).items)
        print(f"failed over: {len(affected) - left:,}/{len(affected):,} bindings"
              f"{'' if not left else f' ({left} NOT)'}; eviction tasks left: {tasks}")  # fmt: skip
        print(f"wall time: {calibration.duration(wall)}; virtual time: {virtual:.3f} s")
        print(f"  aim < 5 s: {'met' if wall < 5 else 'NOT met'}")
        report_writes(store, tally, writes, affected, failed_names, len(failed))
        print(f"peak RSS of the process: {peak_rss() / MIB:,.0f} MiB")
        print("  wall time by controller (a reconcile's own writes and what they set off in")
        print("  the informers' handlers included):")
        print(f"    {fault_seconds:7.2f} s  the fault: {len(failed)} taint writes, their handlers")
        for name, (seconds, count) in clocks.by_seconds():
            print(f"    {seconds:7.2f} s  {name} ({count:,} reconciles)")
        if profiler is not None:
            pstats.Stats(profiler).sort_stats(os.environ.get("SORT", "tottime")).print_stats(
                int(os.environ.get("ROWS", "45"))
            )
        if not affected or left or tasks:
            raise SystemExit("error: no binding failed over, or not every one; the figures above "
                             "measure a broken run")  # fmt: skip


_HOUR = timedelta(hours=1)
MIB = 1024 * 1024
GIB = 1024 * MIB


def rss() -> int:
    """The process's resident set now, in bytes (Linux's /proc; the peak elsewhere)."""
    try:
        with open("/proc/self/statm") as statm:
            return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except OSError:
        return peak_rss()


def peak_rss() -> int:
    """The process's largest resident set so far, in bytes."""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak if sys.platform == "darwin" else peak * 1024  # bytes on macOS, KiB elsewhere


def _key(obj: dict[str, Any]) -> str:
    return f"{obj['metadata'].get('namespace', '')}/{obj['metadata']['name']}"


def _failed_over(binding: dict[str, Any], failed: set[str]) -> bool:
    """Scheduled off the failed clusters, healthy wherever it now is, no task left."""
    spec, status = binding["spec"], binding.get("status") or {}
    targets = {c["name"] for c in spec.get("clusters") or []}
    if not targets or targets & failed or spec.get("gracefulEvictionTasks"):
        return False
    health = {i["clusterName"]: i.get("health") for i in status.get("aggregatedStatus") or []}
    return all(health.get(t) == "Healthy" for t in targets)


def report_writes(
    store: CoreStore,
    tally: Tally,
    writes: int,
    affected: set[str],
    failed: set[str],
    failed_clusters: int,
) -> None:
    """The writes counted, and the minimum for the same outcome."""
    label = "resourcebinding.karmada.io/permanent-id"
    affected_ids = {
        (b["metadata"].get("labels") or {}).get(label)
        for b in store.list(BINDING).items
        if _key(b) in affected
    }
    evicted_from = new_works = 0
    for work in store.list(WORK).items:
        if (work["metadata"].get("labels") or {}).get(label) not in affected_ids:
            continue
        if work["metadata"]["namespace"].removeprefix("karmada-es-") in failed:
            evicted_from += 1
        elif work["metadata"]["uid"] in tally.created:
            new_works += 1
    bindings = len(affected)
    minimum = {
        "Cluster taint (the fault itself)": failed_clusters,
        "ResourceBinding eviction (cluster out, task in)": bindings,
        "ResourceBinding new scheduling result": bindings,
        "ResourceBinding Scheduled status": bindings,
        "Work created on a new cluster": new_works,
        "Work status from the new member": new_works,
        "ResourceBinding aggregated status (healthy)": bindings,
        "ResourceBinding task retired": bindings,
        "Work of the failed cluster marked deleting": evicted_from,
    }
    least = sum(minimum.values())
    ratio = writes / max(least, 1)
    print(f"store writes: {writes:,} (minimum {least:,}, {ratio:.2f}x; aim <= 1.5x: "
          f"{'met' if ratio <= 1.5 else 'NOT met'})")  # fmt: skip
    print("  by kind and change:")
    for what, count in sorted(tally.writes.items(), key=lambda item: -item[1]):
        print(f"    {count:>7,}  {what}")
    print("  the minimum, for the same outcome:")
    for what, count in minimum.items():
        print(f"    {count:>7,}  {what}")


def main(argv: Iterator[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--store", choices=["memory", "sqlite", "etcd"], default="memory")
    parser.add_argument("--clusters", type=int, default=1000)
    parser.add_argument("--policies", type=int, default=100)
    parser.add_argument("--workloads", type=int, default=10_000)
    parser.add_argument("--failed", type=int, default=100)
    parser.add_argument("--profile", action="store_true", help="profile the failover")
    args = parser.parse_args(list(argv) if argv is not None else None)
    print(f"{args.clusters:,} clusters, {args.policies} policies, {args.workloads:,} "
          f"Deployments, {args.failed} clusters failing; {args.store} store")  # fmt: skip
    calibration = calibrate()
    print(calibration)
    clock = VirtualClock()
    with (
        tempfile.TemporaryDirectory() as workdir,
        open_store(args.store, clock, Path(workdir)) as store,
    ):
        build(store, clock, args, calibration)


if __name__ == "__main__":
    main(iter(sys.argv[1:]))
