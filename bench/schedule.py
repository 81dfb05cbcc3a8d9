"""Wall time to schedule a fleet's workloads: 1,000 clusters, 100 policies, 10,000 Deployments.

    .venv/bin/python bench/schedule.py [--store memory|sqlite|etcd] [--pipeline]
        [--clusters N] [--policies N] [--workloads N] [--profile]

Clusters carry labels (region, team, tier), regions and zones, and a few NoSchedule taints.
Policies mix Duplicated (spread by cluster, or by region), Divided by static weights, by
dynamic weight (available replicas from each cluster's resource summary) and Aggregated;
some tolerate the taints. Everything runs in the virtual-time driver; the figure is the wall
time from the first creation to the moment nothing is left to do, beside the calibration
(bench/calibration.py). A run that leaves a binding unscheduled exits with status 1: its
figure would measure something else.

Default: the scheduler alone. The 10,000 ResourceBindings are created as the detector would
write them, and the clock stops when every one is scheduled. Aim: >= 3,000 bindings/s with
the memory store.

--pipeline: the whole hub instead. ClusterPropagationPolicies and Deployments are created
(through admission) and hub_controllers() runs with simulated members; the clock stops when
every binding is scheduled and every Work is written. Aim: >= 1,000 bindings/s with the
memory store, >= 500/s on SQLite.
"""

from __future__ import annotations

import argparse
import contextlib
import cProfile
import itertools
import pstats
import random
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, NamedTuple

from _etcd import etcd_server  # bench/_etcd.py, next to this file
from calibration import calibrate  # bench/calibration.py, next to this file

from fleetwarden.api.registry import REGISTRY
from fleetwarden.runtime.clock import VirtualClock
from fleetwarden.runtime.manager import ControllerManager, VirtualDriver
from fleetwarden.runtime.settings import Settings
from fleetwarden.scheduling.karmada import GenericScheduler, Scheduler
from fleetwarden.scheduling.karmada.webster import Target
from fleetwarden.store import MemoryStore, SqliteStore
from fleetwarden.store.core import CoreStore
from fleetwarden.store.etcd import EtcdStore

CLUSTER = REGISTRY.info("cluster.karmada.io/v1alpha1", "Cluster")
BINDING = REGISTRY.info("work.karmada.io/v1alpha2", "ResourceBinding")
WORK = REGISTRY.info("work.karmada.io/v1alpha1", "Work")
PP_ID = "propagationpolicy.karmada.io/permanent-id"
REGIONS = [f"region-{i}" for i in range(10)]
TEAMS = [f"team-{i:02d}" for i in range(20)]
TIERS = ["gold", "silver", "bronze"]
TAINT = {"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}
TOLERATION = {"key": "dedicated", "operator": "Equal", "value": "gpu", "effect": "NoSchedule"}
REQUESTS = {"cpu": "250m", "memory": "256Mi"}
# The aims (issue 13), by (whole hub, store), for the default sizes.
AIMS = {(False, "memory"): 3_000, (True, "memory"): 1_000, (True, "sqlite"): 500}


def cluster_doc(i: int, rng: random.Random) -> dict[str, Any]:
    region = REGIONS[i % len(REGIONS)]
    spec: dict[str, Any] = {
        "syncMode": "Push",
        "apiEndpoint": f"https://cluster-{i:04d}.example.com",
        "provider": "aws" if i % 2 else "gcp",
        "region": region,
        "zones": [f"{region}-{'abc'[i % 3]}"],
    }
    if i % 20 == 7:
        spec["taints"] = [TAINT]
    labels = {"region": region, "team": TEAMS[i % len(TEAMS)], "tier": TIERS[i % len(TIERS)]}
    return {
        "apiVersion": "cluster.karmada.io/v1alpha1",
        "kind": "Cluster",
        "metadata": {"name": f"cluster-{i:04d}", "labels": labels},
        "spec": spec,
        "status": {
            "kubernetesVersion": "v1.31.0",
            "apiEnablements": [{
                "groupVersion": "apps/v1",
                "resources": [{"name": "deployments", "kind": "Deployment"}],
            }],
            "conditions": [
                {"type": "Ready", "status": "True", "reason": "ClusterReady", "message": "ok",
                 "lastTransitionTime": "2025-01-01T00:00:00Z"},
                {"type": "CompleteAPIEnablements", "status": "True", "reason": "Complete",
                 "message": "ok", "lastTransitionTime": "2025-01-01T00:00:00Z"},
            ],
            "resourceSummary": {
                "allocatable": {"cpu": str(rng.choice([64, 128, 256])), "memory": "512Gi",
                                "pods": "2000"},
                "allocated": {"cpu": str(rng.randint(0, 32)), "memory": "64Gi",
                              "pods": str(rng.randint(0, 500))},
            },
        },
    }  # fmt: skip


def placement(p: int, clusters: int) -> dict[str, Any]:
    """Policy p's placement: five kinds, over different slices of the fleet."""
    team = {"matchLabels": {"team": TEAMS[p % len(TEAMS)]}}
    kind = p % 5
    if kind == 0:  # Duplicated over a team's clusters, 3 of them
        result: dict[str, Any] = {
            "clusterAffinity": {"labelSelector": team},
            "spreadConstraints": [{"spreadByField": "cluster", "minGroups": 1, "maxGroups": 3}],
            "replicaScheduling": {"replicaSchedulingType": "Duplicated"},
        }
    elif kind == 1:  # Duplicated over two regions of a tier
        result = {
            "clusterAffinity": {"labelSelector": {"matchLabels": {"tier": TIERS[p % 3]}}},
            "spreadConstraints": [
                {"spreadByField": "region", "minGroups": 2, "maxGroups": 2},
                {"spreadByField": "cluster", "minGroups": 2, "maxGroups": 4},
            ],
            "replicaScheduling": {"replicaSchedulingType": "Duplicated"},
        }
    elif kind == 2:  # Divided by static weights over three named clusters
        names = [f"cluster-{(p * 7 + k) % clusters:04d}" for k in range(3)]
        result = {
            "clusterAffinity": {"clusterNames": names},
            "replicaScheduling": {
                "replicaSchedulingType": "Divided",
                "replicaDivisionPreference": "Weighted",
                "weightPreference": {
                    "staticWeightList": [
                        {"targetCluster": {"clusterNames": [n]}, "weight": w + 1}
                        for w, n in enumerate(names)
                    ]
                },
            },
        }
    elif kind == 3:  # Divided by available replicas over a team's clusters, 4 of them
        result = {
            "clusterAffinity": {"labelSelector": team},
            "spreadConstraints": [{"spreadByField": "cluster", "minGroups": 1, "maxGroups": 4}],
            "replicaScheduling": {
                "replicaSchedulingType": "Divided",
                "replicaDivisionPreference": "Weighted",
                "weightPreference": {"dynamicWeight": "AvailableReplicas"},
            },
        }
    else:  # Aggregated within a region
        result = {
            "clusterAffinity": {
                "fieldSelector": {
                    "matchExpressions": [
                        {"key": "region", "operator": "In", "values": [REGIONS[p % len(REGIONS)]]}
                    ]
                }
            },
            "spreadConstraints": [{"spreadByField": "cluster", "minGroups": 1, "maxGroups": 2}],
            "replicaScheduling": {
                "replicaSchedulingType": "Divided",
                "replicaDivisionPreference": "Aggregated",
            },
        }
    if p % 4 == 0:
        result["clusterTolerations"] = [TOLERATION]
    return result


def deployment(w: int, policies: int, rng: random.Random) -> dict[str, Any]:
    labels = {"app": f"app-{w:05d}", "policy": f"policy-{w % policies:03d}"}
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": f"app-{w:05d}", "namespace": f"ns-{w % 50:02d}", "labels": labels},
        "spec": {
            "replicas": rng.randint(1, 10),
            "selector": {"matchLabels": labels},
            "template": {
                "metadata": {"labels": labels},
                "spec": {"containers": [{"name": "app", "image": "nginx",
                                         "resources": {"requests": REQUESTS}}]},
            },
        },
    }  # fmt: skip


def binding(w: int, args: argparse.Namespace, rng: random.Random) -> dict[str, Any]:
    """The ResourceBinding the detector makes of Deployment w and its policy."""
    template = deployment(w, args.policies, rng)
    meta = template["metadata"]
    p = w % args.policies
    return {
        "apiVersion": "work.karmada.io/v1alpha2",
        "kind": "ResourceBinding",
        "metadata": {
            "name": f"{meta['name']}-deployment",
            "namespace": meta["namespace"],
            "labels": {PP_ID: f"policy-{p:03d}"},
        },
        "spec": {
            "resource": {"apiVersion": "apps/v1", "kind": "Deployment",
                         "namespace": meta["namespace"], "name": meta["name"],
                         "uid": f"uid-{w:05d}"},
            "replicas": template["spec"]["replicas"],
            "replicaRequirements": {"resourceRequest": REQUESTS},
            "placement": placement(p, args.clusters),
            "schedulerName": "default-scheduler",
        },
    }  # fmt: skip


@contextlib.contextmanager
def open_store(kind: str, clock: VirtualClock, workdir: Path) -> Iterator[CoreStore]:
    """A store of the kind (memory, sqlite, etcd: a one-member etcd this starts), closed
    at the end."""
    uids = itertools.count(1)
    options: dict[str, Any] = {"now": clock.now, "new_uid": lambda: f"uid-{next(uids)}"}
    with contextlib.ExitStack() as stack:
        if kind == "etcd":
            url = stack.enter_context(etcd_server(workdir))
            store: CoreStore = EtcdStore([url], **options)
        elif kind == "sqlite":
            store = SqliteStore(workdir / "bench.db", **options)
        else:
            store = MemoryStore(**options)
        stack.callback(store.close)
        yield store


def create_clusters(store: CoreStore, count: int, rng: random.Random) -> None:
    for i in range(count):
        doc = cluster_doc(i, rng)
        stored = store.create(doc)
        stored["status"] = doc["status"]
        store.update(stored, subresource="status")


def timed(label: str, action: Callable[[], None]) -> float:
    started = time.perf_counter()
    action()
    wall = time.perf_counter() - started
    print(f"  {label}: {wall:.2f} s")
    return wall


class TimedScheduler(GenericScheduler):
    """The scheduling passes alone (filter, score, select, assign), timed. The arguments
    pass through untouched, so a change to the scheduler's signature cannot break this."""

    seconds = 0.0

    def schedule(self, *args: Any, **kwargs: Any) -> list[Target]:
        started = time.perf_counter()
        try:
            return super().schedule(*args, **kwargs)
        finally:
            self.seconds += time.perf_counter() - started


class Outcome(NamedTuple):
    bindings: int
    seconds: float
    problem: str | None  # why the run is not the one meant, if it is not


def scheduler_alone(store: CoreStore, clock: VirtualClock, args: argparse.Namespace) -> Outcome:
    rng = random.Random(1)
    create_clusters(store, args.clusters, rng)
    manager = ControllerManager(store, clock, Settings())
    algorithm = TimedScheduler()
    manager.add(Scheduler(algorithm=algorithm).controller())
    with VirtualDriver(manager, max_rounds=100_000) as driver:
        docs = [binding(w, args, rng) for w in range(args.workloads)]

        def create() -> None:
            for doc in docs:
                store.create(doc)

        total = timed("create bindings", create) + timed("schedule (settle)", driver.settle)
    print(f"    of which scheduling passes: {algorithm.seconds:.2f} s; the rest is writing each "
          "result and status, two Events, and the informer decoding every write")  # fmt: skip
    bindings = store.list(BINDING).items
    scheduled = [b for b in bindings if has_condition(b, "Scheduled")]
    failed = len(bindings) - len(scheduled)
    targets = sum(len(b["spec"].get("clusters") or []) for b in bindings)
    print(f"bindings scheduled: {len(scheduled):,}/{len(bindings):,} ({failed} not), "
          f"target clusters: {targets:,}")  # fmt: skip
    return Outcome(len(bindings), total, f"{failed:,} bindings not scheduled" if failed else None)


def has_condition(obj: dict[str, Any], type_: str, status: str = "True") -> bool:
    conditions = (obj.get("status") or {}).get("conditions") or []
    return any(c["type"] == type_ and c["status"] == status for c in conditions)


# --- the whole hub: detector, scheduler, binding controller and the rest, members simulated ---


def pipeline(store: CoreStore, clock: VirtualClock, args: argparse.Namespace) -> Outcome:
    from fleetwarden.admission import default_chain
    from fleetwarden.hub import hub_controllers
    from fleetwarden.members.simulated import MemberState, SimulatedFleet

    rng = random.Random(1)
    create_clusters(store, args.clusters, rng)
    chain = default_chain()
    fleet = SimulatedFleet(
        {f"cluster-{i:04d}": MemberState() for i in range(args.clusters)},
        [REGISTRY.info("apps/v1", "Deployment")],
    )
    manager = ControllerManager(store, clock, Settings())
    for controller in hub_controllers(fleet):
        manager.add(controller)
    manager.add(fleet.controller())
    with VirtualDriver(manager, max_rounds=100_000) as driver:

        def admit(doc: dict[str, Any]) -> None:
            store.create(chain.admit(doc, None, now=clock.now()).to_dict())

        def create() -> None:
            for p in range(args.policies):
                admit(cluster_propagation_policy(p, placement(p, args.clusters)))
            for w in range(args.workloads):
                admit(deployment(w, args.policies, rng))

        total = timed("create policies and Deployments", create)
        total += timed("propagate (settle)", driver.settle)
    bindings = store.list(BINDING).items
    expected = sum(len(b["spec"].get("clusters") or []) for b in bindings)
    works = len(store.list(WORK).items)
    scheduled = sum(has_condition(b, "Scheduled") for b in bindings)
    print(f"bindings: {len(bindings):,} ({scheduled:,} scheduled), Work: {works:,}/{expected:,}")
    problem = None
    if len(bindings) != args.workloads or scheduled != len(bindings) or works != expected:
        problem = "not every Deployment was bound, scheduled and written to its Work"
    return Outcome(len(bindings), total, problem)


def cluster_propagation_policy(p: int, placement: dict[str, Any]) -> dict[str, Any]:
    """Policy p selects the Deployments labelled `policy: policy-<p>`."""
    return {
        "apiVersion": "policy.karmada.io/v1alpha1",
        "kind": "ClusterPropagationPolicy",
        "metadata": {"name": f"policy-{p:03d}"},
        "spec": {
            "resourceSelectors": [
                {"apiVersion": "apps/v1", "kind": "Deployment",
                 "labelSelector": {"matchLabels": {"policy": f"policy-{p:03d}"}}}
            ],
            "placement": placement,
        },
    }  # fmt: skip


def main(argv: Iterator[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--store", choices=["memory", "sqlite", "etcd"], default="memory")
    parser.add_argument("--pipeline", action="store_true")
    parser.add_argument("--clusters", type=int, default=1000)
    parser.add_argument("--policies", type=int, default=100)
    parser.add_argument("--workloads", type=int, default=10_000)
    parser.add_argument("--profile", action="store_true")
    args = parser.parse_args(list(argv) if argv is not None else None)
    mode = "whole hub" if args.pipeline else "scheduler alone"
    print(f"{args.clusters:,} clusters, {args.policies} policies, {args.workloads:,} "
          f"Deployments; {mode}; {args.store} store")  # fmt: skip
    calibration = calibrate()
    print(calibration)
    clock = VirtualClock()
    with (
        tempfile.TemporaryDirectory() as workdir,
        open_store(args.store, clock, Path(workdir)) as store,
    ):
        run = pipeline if args.pipeline else scheduler_alone
        if args.profile:
            profiler = cProfile.Profile()
            outcome = profiler.runcall(run, store, clock, args)
            pstats.Stats(profiler).sort_stats("tottime").print_stats(40)
        else:
            outcome = run(store, clock, args)
    print(f"wall time: {calibration.duration(outcome.seconds)}")
    rate = outcome.bindings / outcome.seconds
    print(f"throughput: {calibration.rate(rate, 'bindings')}")
    aim = AIMS.get((args.pipeline, args.store))
    if aim is not None:
        print(f"  aim >= {aim:,} bindings/s: {'met' if rate >= aim else 'NOT met'}")
    if outcome.problem:
        raise SystemExit(f"error: {outcome.problem}; the figures above measure a broken run")


if __name__ == "__main__":
    main(iter(sys.argv[1:]))
