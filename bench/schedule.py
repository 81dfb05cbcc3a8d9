"""Wall time to schedule a fleet's workloads: 1,000 clusters, 100 policies, 10,000 Deployments.

    .venv/bin/python bench/schedule.py [--store memory|sqlite] [--pipeline]
        [--clusters N] [--policies N] [--workloads N] [--profile]

Clusters carry labels (region, team, tier), regions and zones, and a few NoSchedule taints.
Policies mix Duplicated (spread by cluster, or by region), Divided by static weights, by
dynamic weight (available replicas from each cluster's resource summary) and Aggregated;
some tolerate the taints. Everything runs in the virtual-time driver; the figure is the wall
time from the first creation to the moment nothing is left to do.

Default: the scheduler alone. The 10,000 ResourceBindings are created as the detector would
write them, and the clock stops when every one is scheduled. Aim: < 5 s with the memory store.

--pipeline: the whole hub instead. PropagationPolicies and Deployments are created (through
admission) and hub_controllers() runs with simulated members; the clock stops when every
binding is scheduled and every Work is written. This needs the detector and the binding
controller wired into fleetwarden.hub.hub_controllers.
"""

from __future__ import annotations

import argparse
import cProfile
import itertools
import pstats
import random
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from fleetwarden.api.registry import REGISTRY
from fleetwarden.runtime.clock import VirtualClock
from fleetwarden.runtime.manager import ControllerManager, VirtualDriver
from fleetwarden.runtime.settings import Settings
from fleetwarden.scheduling.karmada import GenericScheduler, Scheduler
from fleetwarden.scheduling.karmada.webster import Target
from fleetwarden.store import MemoryStore, SqliteStore
from fleetwarden.store.core import CoreStore

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


def placement(p: int) -> dict[str, Any]:
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
        names = [f"cluster-{(p * 7 + k) % 1000:04d}" for k in range(3)]
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


def deployment(w: int, rng: random.Random) -> dict[str, Any]:
    labels = {"app": f"app-{w:05d}", "policy": f"policy-{w % 100:03d}"}
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


def binding(w: int, policies: int, rng: random.Random) -> dict[str, Any]:
    """The ResourceBinding the detector makes of Deployment w and its policy."""
    template = deployment(w, rng)
    meta = template["metadata"]
    p = w % policies
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
            "placement": placement(p),
            "schedulerName": "default-scheduler",
        },
    }  # fmt: skip


def open_store(kind: str, clock: VirtualClock, workdir: Path) -> CoreStore:
    uids = itertools.count(1)
    options: dict[str, Any] = {"now": clock.now, "new_uid": lambda: f"uid-{next(uids)}"}
    if kind == "sqlite":
        return SqliteStore(workdir / "bench.db", **options)
    return MemoryStore(**options)


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


def scheduler_alone(store: CoreStore, clock: VirtualClock, args: argparse.Namespace) -> None:
    rng = random.Random(1)
    create_clusters(store, args.clusters, rng)
    manager = ControllerManager(store, clock, Settings())
    algorithm = TimedScheduler()
    manager.add(Scheduler(algorithm=algorithm).controller())
    with VirtualDriver(manager, max_rounds=100_000) as driver:
        docs = [binding(w, args.policies, rng) for w in range(args.workloads)]

        def create() -> None:
            for doc in docs:
                store.create(doc)

        total = timed("create bindings", create) + timed("schedule (settle)", driver.settle)
    print(f"    of which scheduling passes: {algorithm.seconds:.2f} s; the rest is writing each "
          "result and status, two Events, and the informer decoding every write")  # fmt: skip
    bindings = store.list(BINDING).items
    scheduled = [b for b in bindings if _scheduled(b)]
    failed = len(bindings) - len(scheduled)
    targets = sum(len(b["spec"].get("clusters") or []) for b in bindings)
    print(f"bindings scheduled: {len(scheduled):,}/{len(bindings):,} ({failed} not), "
          f"target clusters: {targets:,}")  # fmt: skip
    print(f"wall time: {total:.2f} s, {len(bindings) / total:,.0f} bindings/s")


def _scheduled(obj: dict[str, Any]) -> bool:
    conditions = (obj.get("status") or {}).get("conditions") or []
    return any(c["type"] == "Scheduled" and c["status"] == "True" for c in conditions)


# --- the whole hub: needs the detector and the binding controller in hub_controllers -----------


def pipeline(store: CoreStore, clock: VirtualClock, args: argparse.Namespace) -> None:
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
                admit(cluster_propagation_policy(p, placement(p)))
            for w in range(args.workloads):
                admit(deployment(w, rng))

        total = timed("create policies and Deployments", create)
        total += timed("propagate (settle)", driver.settle)
    bindings = store.list(BINDING).items
    expected = sum(len(b["spec"].get("clusters") or []) for b in bindings)
    works = len(store.list(WORK).items)
    scheduled = sum(_scheduled(b) for b in bindings)
    print(f"bindings: {len(bindings):,} ({scheduled:,} scheduled), Work: {works:,}/{expected:,}")
    if not bindings:
        print("no ResourceBinding was made: hub_controllers() lacks the detector and scheduler")
    print(f"wall time: {total:.2f} s, {len(bindings) / total:,.0f} bindings/s")


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
    parser.add_argument("--store", choices=["memory", "sqlite"], default="memory")
    parser.add_argument("--pipeline", action="store_true")
    parser.add_argument("--clusters", type=int, default=1000)
    parser.add_argument("--policies", type=int, default=100)
    parser.add_argument("--workloads", type=int, default=10_000)
    parser.add_argument("--profile", action="store_true")
    args = parser.parse_args(list(argv) if argv is not None else None)
    mode = "whole hub" if args.pipeline else "scheduler alone"
    print(f"{args.clusters:,} clusters, {args.policies} policies, {args.workloads:,} "
          f"Deployments; {mode}; {args.store} store")  # fmt: skip
    clock = VirtualClock()
    with tempfile.TemporaryDirectory() as workdir:
        store = open_store(args.store, clock, Path(workdir))
        run = pipeline if args.pipeline else scheduler_alone
        if args.profile:
            profiler = cProfile.Profile()
            profiler.runcall(run, store, clock, args)
            pstats.Stats(profiler).sort_stats("tottime").print_stats(40)
        else:
            run(store, clock, args)
        store.close()


if __name__ == "__main__":
    main(iter(sys.argv[1:]))
