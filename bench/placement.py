"""Wall time to schedule OCM Placements: 2,000 ManagedClusters, 1,000 Placements; then how
many Placements one cluster's new NoSelect taint re-evaluates.

    .venv/bin/python bench/placement.py [--store memory|sqlite|etcd] [--clusters N]
        [--placements N] [--profile]

The hub's OCM controllers (fleetwarden.hub.ocm_controllers: registration, cluster sets,
placement scheduling) run in the virtual-time driver. No agent runs: each ManagedCluster is
created with hubAcceptsClient and its status written as its registration agent would report
it (Available=True, resources, cluster claims); the hub's own controllers accept it (its
namespace, finalizer and HubAcceptedManagedCluster condition). Members back none of the
clusters, so no lease times out.

The fleet: clusters in 20 exclusive ManagedClusterSets (100 each) and two LabelSelector
sets (prod clusters of eu, gold-tier clusters), 100 clusters with a `dedicated` NoSelect
taint, AddOnPlacementScores for every other cluster. Five namespaces each bind 8 exclusive
sets (every set is bound in two of them), two of them one LabelSelector set too; every
binding is Bound by the binding controller. Placements spread over the namespaces mix
label and claim predicates, spec.clusterSets, tolerations, and prioritizers (the Additive
defaults, ResourceAllocatableCPU/Memory, an AddOn score, Exact mode); most ask for a
numberOfClusters, one in ten for every cluster that fits.

(1) The Placements are created and the hub settles: the wall time until every Placement has
    its PlacementDecisions and status written, and the store writes that took.
(2) One cluster gets a NoSelect taint (its spec.taints updated, as a user would): the wall
    time until the hub settles, which Placements the scheduling controller re-evaluated,
    and, worked out here from the sets, bindings and spec.clusterSets, which Placements can
    see that cluster. Only those should be re-evaluated.

Aims on SQLite (--store sqlite): (1) under 2 s; (2) under 0.5 s.
"""

from __future__ import annotations

import argparse
import cProfile
import dataclasses
import os
import pstats
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from calibration import Calibration, calibrate  # bench/calibration.py, next to this file
from failover import ReconcileClocks  # bench/failover.py, next to this file
from schedule import has_condition, open_store, timed  # bench/schedule.py, next to this file

from fleetwarden.api.meta import format_time
from fleetwarden.api.ocm.placement import PLACEMENT_LABEL
from fleetwarden.hub import ocm_controllers
from fleetwarden.members.simulated import SimulatedFleet
from fleetwarden.runtime.clock import VirtualClock
from fleetwarden.runtime.manager import (
    Context,
    Controller,
    ControllerManager,
    Result,
    VirtualDriver,
)
from fleetwarden.runtime.settings import Settings
from fleetwarden.scheduling.ocm import scheduling_controller as scheduling
from fleetwarden.scheduling.ocm.kinds import (
    ADD_ON_PLACEMENT_SCORE,
    MANAGED_CLUSTER,
    MANAGED_CLUSTER_SET,
    MANAGED_CLUSTER_SET_BINDING,
    PLACEMENT,
    PLACEMENT_DECISION,
)
from fleetwarden.store.core import CoreStore
from fleetwarden.store.interface import WatchEvent

CLUSTER_SET_LABEL = "cluster.open-cluster-management.io/clusterset"
# The aims on SQLite, in seconds: (1) scheduling every Placement, (2) the taint's re-evaluation.
AIM_SCHEDULE, AIM_TAINT = 2.0, 0.5
SETS = 20
NAMESPACES = 5
SETS_PER_NAMESPACE = 8
REGIONS = ["us-east", "us-west", "eu", "apac"]
ENVS = ["prod", "staging", "dev"]
TIERS = ["gold", "silver", "bronze", "bronze", "silver"]
PLATFORMS = ["AWS", "GCP", "Azure"]
# LabelSelector sets by name: their matchLabels, and the namespace (ns-<k>) that binds them.
LABEL_SETS: dict[str, tuple[dict[str, str], int]] = {
    "prod-eu": ({"env": "prod", "region": "eu"}, 0),
    "gold": ({"tier": "gold"}, 2),
}
DEDICATED = {"key": "dedicated", "value": "gpu", "effect": "NoSelect"}
MAINTENANCE = "maintenance"
SCORE = "cluster-resources"
EPOCH = "2025-01-01T00:00:00Z"


def cluster_name(i: int) -> str:
    return f"cluster-{i:04d}"


def cluster_labels(i: int) -> dict[str, str]:
    return {
        CLUSTER_SET_LABEL: exclusive_set(i),
        "region": REGIONS[i % len(REGIONS)],
        "env": ENVS[i % len(ENVS)],
        "tier": TIERS[i % len(TIERS)],
    }


def exclusive_set(i: int) -> str:
    """Clusters 0-99 are in set-00, 100-199 in set-01, ... and on again after set-19."""
    return f"set-{i // 100 % SETS:02d}"


def namespace_sets(k: int) -> list[str]:
    """The exclusive sets namespace k binds: 8 of them, each set in two namespaces."""
    first = k * SETS // NAMESPACES
    return [f"set-{(first + j) % SETS:02d}" for j in range(SETS_PER_NAMESPACE)]


def namespace_label_sets(k: int) -> list[str]:
    return [name for name, (_, bound_in) in LABEL_SETS.items() if bound_in == k]


def condition(type_: str, status: str, reason: str) -> dict[str, str]:
    return {"type": type_, "status": status, "reason": reason, "message": reason,
            "lastTransitionTime": EPOCH}  # fmt: skip


def cluster_doc(i: int) -> dict[str, Any]:
    spec: dict[str, Any] = {"hubAcceptsClient": True, "leaseDurationSeconds": 60}
    if i % 20 == 7:
        spec["taints"] = [{**DEDICATED, "timeAdded": EPOCH}]
    return {
        "apiVersion": MANAGED_CLUSTER.api_version,
        "kind": "ManagedCluster",
        "metadata": {"name": cluster_name(i), "labels": cluster_labels(i)},
        "spec": spec,
    }


def cluster_status(i: int) -> dict[str, Any]:
    """What the cluster's registration agent reports."""
    cpu, memory = 16 * (1 + i % 8), 64 * (1 + i % 5)
    return {
        "conditions": [
            condition("ManagedClusterJoined", "True", "ManagedClusterJoined"),
            condition("ManagedClusterConditionAvailable", "True", "ManagedClusterAvailable"),
        ],
        "capacity": {"cpu": str(cpu), "memory": f"{memory}Gi"},
        "allocatable": {"cpu": str(cpu - 1 - i % 3), "memory": f"{memory - 2}Gi"},
        "version": {"kubernetes": f"v1.{29 + i % 3}.0"},
        "clusterClaims": [
            {"name": "platform.open-cluster-management.io", "value": PLATFORMS[i // 3 % 3]},
            {"name": "region.open-cluster-management.io", "value": REGIONS[i % 4]},
        ],
    }


def addon_score(i: int) -> dict[str, Any]:
    return {
        "apiVersion": ADD_ON_PLACEMENT_SCORE.api_version,
        "kind": "AddOnPlacementScore",
        "metadata": {"name": SCORE, "namespace": cluster_name(i)},
        "status": {"scores": [{"name": "cpuAvailable", "value": (i * 37) % 201 - 100}]},
    }


def cluster_set(name: str) -> dict[str, Any]:
    spec: dict[str, Any] = {"clusterSelector": {"selectorType": "ExclusiveClusterSetLabel"}}
    if name in LABEL_SETS:
        selector = {"matchLabels": LABEL_SETS[name][0]}
        spec = {"clusterSelector": {"selectorType": "LabelSelector", "labelSelector": selector}}
    return {"apiVersion": MANAGED_CLUSTER_SET.api_version, "kind": "ManagedClusterSet",
            "metadata": {"name": name}, "spec": spec}  # fmt: skip


def binding(cluster_set: str, namespace: str) -> dict[str, Any]:
    return {"apiVersion": MANAGED_CLUSTER_SET_BINDING.api_version,
            "kind": "ManagedClusterSetBinding",
            "metadata": {"name": cluster_set, "namespace": namespace},
            "spec": {"clusterSet": cluster_set}}  # fmt: skip


# --- Placements ----------------------------------------------------------------------------------


def built_in(name: str, weight: int) -> dict[str, Any]:
    return {"scoreCoordinate": {"type": "BuiltIn", "builtIn": name}, "weight": weight}


def predicates(p: int) -> list[dict[str, Any]]:
    """Five shapes: a label, a label expression, a claim, either of two, none."""
    region = REGIONS[p % len(REGIONS)]
    platform = PLATFORMS[p % len(PLATFORMS)]
    by_label = {"labelSelector": {"matchLabels": {"region": region}}}
    by_expression = {"labelSelector": {"matchExpressions": [
        {"key": "env", "operator": "In", "values": ["prod", "staging"]}]}}  # fmt: skip
    by_claim = {"claimSelector": {"matchExpressions": [
        {"key": "platform.open-cluster-management.io", "operator": "In",
         "values": [platform]}]}}  # fmt: skip
    shapes = [[by_label], [by_expression], [by_claim], [by_expression | by_claim, by_label], []]
    return [{"requiredClusterSelector": s} for s in shapes[p % len(shapes)]]


def prioritizer_policy(p: int) -> dict[str, Any] | None:
    """The Additive defaults, resources on top of them, an AddOn score, or Exact memory."""
    kind = p % 6
    if kind in (0, 3):
        return None
    if kind in (1, 4):
        resources = [
            built_in("ResourceAllocatableCPU", 2),
            built_in("ResourceAllocatableMemory", 1),
        ]
        return {"mode": "Additive", "configurations": resources}
    if kind == 2:
        addon = {"type": "AddOn", "addOn": {"resourceName": SCORE, "scoreName": "cpuAvailable"}}
        return {"configurations": [{"scoreCoordinate": addon, "weight": 1},
                                   built_in("Steady", 3)]}  # fmt: skip
    return {"mode": "Exact", "configurations": [built_in("ResourceAllocatableMemory", 1)]}


def tolerations(p: int) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []
    if p % 7 == 0:
        found.append({"key": "dedicated", "operator": "Equal", "value": "gpu",
                      "effect": "NoSelect"})  # fmt: skip
    if p % 10 == 3:
        found.append({"key": MAINTENANCE, "operator": "Exists"})
    return found


def placement_namespace(p: int) -> str:
    return f"ns-{p % NAMESPACES}"


def placement_cluster_sets(p: int) -> list[str]:
    """Every fourth names two of its namespace's exclusive sets; the others use all bound."""
    if p % 4:
        return []
    bound = namespace_sets(p % NAMESPACES)
    return [bound[p // 4 % len(bound)], bound[(p // 4 + 3) % len(bound)]]


def placement_doc(p: int) -> dict[str, Any]:
    spec: dict[str, Any] = {"predicates": predicates(p)}
    if sets := placement_cluster_sets(p):
        spec["clusterSets"] = sets
    if p % 10 != 9:
        spec["numberOfClusters"] = 1 + p % 8
    if policy := prioritizer_policy(p):
        spec["prioritizerPolicy"] = policy
    if found := tolerations(p):
        spec["tolerations"] = found
    return {"apiVersion": PLACEMENT.api_version, "kind": "Placement",
            "metadata": {"name": f"placement-{p:04d}", "namespace": placement_namespace(p)},
            "spec": spec}  # fmt: skip


def seeing(cluster: int, placements: int) -> set[str]:
    """The Placements that can see the cluster: of a namespace that binds a set of the
    cluster, and naming that set in spec.clusterSets or naming none."""
    labels = cluster_labels(cluster)
    sets = {exclusive_set(cluster)} | {
        name
        for name, (selector, _) in LABEL_SETS.items()
        if all(labels.get(k) == v for k, v in selector.items())
    }
    seen = set()
    for p in range(placements):
        k = p % NAMESPACES
        visible = sets & {*namespace_sets(k), *namespace_label_sets(k)}
        named = placement_cluster_sets(p)
        if visible and (not named or visible & set(named)):
            seen.add(f"{placement_namespace(p)}/placement-{p:04d}")
    return seen


# --- the run -------------------------------------------------------------------------------------


@dataclass
class Hub:
    store: CoreStore
    clock: VirtualClock
    driver: VirtualDriver
    clocks: ReconcileClocks
    reconciled: Counter[str]
    writes: Counter[str]
    schedule_seconds: list[float]


def build_hub(store: CoreStore, clock: VirtualClock) -> Hub:
    """The OCM controllers, each timed; the scheduling controller's reconciles counted by key."""
    manager = ControllerManager(store, clock, Settings())
    clocks, reconciled, writes = ReconcileClocks(), Counter[str](), Counter[str]()
    for _, controller in ocm_controllers(SimulatedFleet({}, [])):
        if controller.name == scheduling.SCHEDULING_CONTROLLER:
            controller = counting(controller, reconciled)
        manager.add(clocks.wrap(controller))
    schedule_seconds = time_schedule()

    def tally(event: WatchEvent) -> None:
        writes[f"{event.collection.rpartition('/')[2]} {event.type.lower()}"] += 1

    store.subscribe(tally)
    driver = VirtualDriver(manager, max_rounds=100_000)
    return Hub(store, clock, driver, clocks, reconciled, writes, schedule_seconds)


def counting(controller: Controller, reconciled: Counter[str]) -> Controller:
    reconcile = controller.reconcile

    def counted(key: str, ctx: Context) -> Result:
        reconciled[key] += 1
        return reconcile(key, ctx)

    return dataclasses.replace(controller, reconcile=counted)


def time_schedule() -> list[float]:
    """Time the scheduler's own passes (the pure `schedule`) inside the controller's sync."""
    seconds = [0.0]
    schedule = scheduling.schedule

    def timed_schedule(*args: Any) -> Any:
        started = time.perf_counter()
        try:
            return schedule(*args)
        finally:
            seconds[0] += time.perf_counter() - started

    scheduling.schedule = timed_schedule  # type: ignore[assignment]
    return seconds


def register(hub: Hub, clusters: int) -> None:
    """Sets, bindings, clusters as their agents report them, add-on scores; the hub settles."""
    store = hub.store
    for name in [f"set-{s:02d}" for s in range(SETS)] + list(LABEL_SETS):
        store.create(cluster_set(name))
    for k in range(NAMESPACES):
        for name in namespace_sets(k) + namespace_label_sets(k):
            store.create(binding(name, f"ns-{k}"))
    for i in range(clusters):
        created = store.create(cluster_doc(i))
        created["status"] = cluster_status(i)
        store.update(created, subresource="status")
        if i % 2 == 0:
            store.create(addon_score(i))
    hub.driver.settle()


def schedule_all(hub: Hub, placements: int) -> float:
    docs = [placement_doc(p) for p in range(placements)]

    def create() -> None:
        for doc in docs:
            hub.store.create(doc)

    return timed("create Placements", create) + timed("schedule (settle)", hub.driver.settle)


def taint(hub: Hub, cluster: int) -> float:
    def update() -> None:
        obj = hub.store.get(MANAGED_CLUSTER, cluster_name(cluster))
        taint = {
            "key": MAINTENANCE,
            "effect": "NoSelect",
            "timeAdded": format_time(hub.clock.now()),
        }
        obj["spec"]["taints"] = [*(obj["spec"].get("taints") or []), taint]
        hub.store.update(obj)

    return timed("taint the cluster", update) + timed("re-evaluate (settle)", hub.driver.settle)


def run(
    hub: Hub, args: argparse.Namespace, profiler: cProfile.Profile | None, calibration: Calibration
) -> None:
    timed("setup: sets, bindings, clusters registered, scores (settle)",
          lambda: register(hub, args.clusters))  # fmt: skip
    check_setup(hub, args.clusters)
    phase(hub, "(1) schedule every Placement")
    wall = measured(profiler, lambda: schedule_all(hub, args.placements))
    problems = [report_schedule(hub, args.placements, wall, calibration)]

    tainted = args.tainted
    phase(hub, f"(2) {cluster_name(tainted)} gets a NoSelect taint")
    before = naming(hub, cluster_name(tainted))
    wall = measured(profiler, lambda: taint(hub, tainted))
    problems.append(report_taint(hub, tainted, args.placements, wall, before, calibration))
    if profiler is not None:
        stats = pstats.Stats(profiler).sort_stats(os.environ.get("SORT", "tottime"))
        stats.print_stats(int(os.environ.get("ROWS", "40")))
    if found := "; ".join(p for p in problems if p):
        raise SystemExit(f"error: {found}; the figures above measure a broken run")


def measured(profiler: cProfile.Profile | None, action: Callable[[], float]) -> float:
    result: float = action() if profiler is None else profiler.runcall(action)
    return result


def phase(hub: Hub, title: str) -> None:
    print(title)
    hub.clocks.reset()
    hub.reconciled.clear()
    hub.writes.clear()
    hub.schedule_seconds[0] = 0.0


def check_setup(hub: Hub, clusters: int) -> None:
    items = hub.store.list(MANAGED_CLUSTER).items
    accepted = sum(has_condition(c, "HubAcceptedManagedCluster") for c in items)
    bindings = hub.store.list(MANAGED_CLUSTER_SET_BINDING).items
    bound = sum(has_condition(b, "Bound") for b in bindings)
    print(f"  clusters: {len(items):,} ({accepted:,} accepted) of {clusters:,}; "
          f"bindings: {len(bindings)} ({bound} Bound)")  # fmt: skip


def report_schedule(hub: Hub, placements: int, wall: float, calibration: Calibration) -> str | None:
    """The figures of (1); what went wrong, if something did."""
    items = hub.store.list(PLACEMENT).items
    written = sum(bool((p.get("status") or {}).get("decisionGroups")) for p in items)
    satisfied = sum(has_condition(p, "PlacementSatisfied") for p in items)
    decisions = hub.store.list(PLACEMENT_DECISION).items
    chosen = sum(len((d.get("status") or {}).get("decisions") or []) for d in decisions)
    print(f"  Placements with decisions written: {written:,}/{placements:,} "
          f"({satisfied:,} Satisfied); PlacementDecisions: {len(decisions):,}, "
          f"naming {chosen:,} clusters")  # fmt: skip
    report_work(hub)
    print(f"wall time (1): {calibration.duration(wall)}; {aim(wall, AIM_SCHEDULE)}")
    print(f"throughput (1): {calibration.rate(placements / wall, 'Placements')}")
    return None if written == placements else f"{placements - written:,} Placements undecided"


def aim(wall: float, seconds: float) -> str:
    return f"aim < {seconds:g} s on SQLite {'met' if wall < seconds else 'NOT met'}"


def naming(hub: Hub, cluster: str) -> set[str]:
    """The Placements (namespace/name) whose decisions name the cluster."""
    return {
        f"{d['metadata']['namespace']}/{d['metadata']['labels'][PLACEMENT_LABEL]}"
        for d in hub.store.list(PLACEMENT_DECISION).items
        if any(c["clusterName"] == cluster for c in (d.get("status") or {}).get("decisions") or [])
    }


def report_taint(
    hub: Hub, tainted: int, placements: int, wall: float, before: set[str], calibration: Calibration
) -> str | None:
    """The figures of (2); what went wrong, if something did."""
    seen = seeing(tainted, placements)
    reconciled = set(hub.reconciled)
    name = cluster_name(tainted)
    still = naming(hub, name)
    tolerating = {_key(p) for p in range(placements) if p % 10 == 3}
    print(f"  Placements that can see {name}: {len(seen):,} of {placements:,}; "
          f"re-evaluated: {len(reconciled):,} ({sum(hub.reconciled.values()):,} reconciles); "
          f"re-evaluated without seeing it: {len(reconciled - seen)}, seeing it but not "
          f"re-evaluated: {len(seen - reconciled)}")  # fmt: skip
    obeyed = still <= tolerating and before & tolerating <= still
    print(f"  Placements whose decisions name it: {len(before)} before, {len(still)} after; "
          f"all of those after tolerate the taint: {still <= tolerating}; every one before "
          f"that tolerates it kept it: {before & tolerating <= still}")  # fmt: skip
    report_work(hub)
    print(f"wall time (2): {calibration.duration(wall)}; {aim(wall, AIM_TAINT)}")
    return None if obeyed else f"the taint on {name} was not obeyed"


def _key(p: int) -> str:
    return f"{placement_namespace(p)}/placement-{p:04d}"


def report_work(hub: Hub) -> None:
    print(f"  store writes: {sum(hub.writes.values()):,} "
          f"({', '.join(f'{n:,} {w}' for w, n in hub.writes.most_common())})")  # fmt: skip
    print("  wall time by controller (its writes and their handlers included):")
    for name, (seconds, count) in hub.clocks.by_seconds():
        if count:
            print(f"    {seconds:7.3f} s  {name} ({count:,} reconciles)")
    print(f"      of which the scheduler's passes (`schedule`): {hub.schedule_seconds[0]:.3f} s")


def main(argv: Iterator[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--store", choices=["memory", "sqlite", "etcd"], default="memory")
    parser.add_argument("--clusters", type=int, default=2000)
    parser.add_argument("--placements", type=int, default=1000)
    parser.add_argument("--tainted", type=int, default=1230, help="the cluster tainted in (2)")
    parser.add_argument("--profile", action="store_true", help="profile (1) and (2)")
    args = parser.parse_args(list(argv) if argv is not None else None)
    if not 0 <= args.tainted < args.clusters:
        parser.error(f"--tainted {args.tainted}: there are clusters 0 to {args.clusters - 1}")
    print(f"{args.clusters:,} ManagedClusters, {args.placements:,} Placements; "
          f"{args.store} store")  # fmt: skip
    calibration = calibrate()
    print(calibration)
    clock = VirtualClock()
    with (
        tempfile.TemporaryDirectory() as workdir,
        open_store(args.store, clock, Path(workdir)) as store,
    ):
        hub = build_hub(store, clock)
        with hub.driver:
            run(hub, args, cProfile.Profile() if args.profile else None, calibration)


if __name__ == "__main__":
    main(iter(sys.argv[1:]))
