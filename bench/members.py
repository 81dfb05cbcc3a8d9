"""Wall time to simulate members with nodes and pods: the hub, and inside each member its
scheduler, node lifecycle, taint eviction and workload controllers, in virtual time.

    .venv/bin/python bench/members.py [--members 100] [--nodes 100] [--pods 10000] [--minutes 10]

Each member runs one Deployment of pods/members replicas (spread over its nodes by the
scheduler). At 2m a tenth of the members lose a zone (a tenth of their nodes NotReady: the
pods there are evicted once their 300 s default tolerations run out, at 7m, and made again
elsewhere); at 3m another tenth get a NoExecute taint on a tenth of their nodes (their pods
go at once). A run that ends with a pod not Running and ready exits with status 1. Aim: 100
members x 100 nodes x 10,000 pods for 10 virtual minutes in under 30 s.
"""

from __future__ import annotations

import argparse
import time
from typing import Any

from calibration import calibrate  # bench/calibration.py, next to this file

from fleetwarden.sim.runner import Simulation
from fleetwarden.sim.scenario import parse


def deployment(member: str, replicas: int) -> list[dict[str, Any]]:
    """A Deployment and the PropagationPolicy that sends it to one member."""
    labels = {"app": member}
    return [
        {
            "apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": member, "namespace": "default", "labels": labels},
            "spec": {
                "replicas": replicas, "selector": {"matchLabels": labels},
                "template": {"metadata": {"labels": labels}, "spec": {"containers": [
                    {"name": "app", "image": "app",
                     "resources": {"requests": {"cpu": "100m", "memory": "128Mi"}}}]}},
            },
        },
        {
            "apiVersion": "policy.karmada.io/v1alpha1", "kind": "PropagationPolicy",
            "metadata": {"name": member, "namespace": "default"},
            "spec": {
                "resourceSelectors": [{"apiVersion": "apps/v1", "kind": "Deployment",
                                       "name": member}],
                "placement": {"clusterAffinity": {"clusterNames": [member]}},
            },
        },
    ]  # fmt: skip


def scenario(members: int, nodes: int, pods: int, minutes: int) -> dict[str, Any]:
    names = [f"member{i}" for i in range(members)]
    share = max(nodes // 10, 1)
    zone = {f"node-{k}": {"ready": False} for k in range(share)}
    drained = {f"node-{k}": {"taints": [{"key": "drain", "effect": "NoExecute"}]}
               for k in range(share, 2 * share)}  # fmt: skip
    tenth = max(members // 10, 1)
    return {
        "apiVersion": "fleetwarden.io/v1alpha1",
        "kind": "Scenario",
        "metadata": {"name": "members"},
        "spec": {
            "members": {name: {"nodes": [{"name": "node", "count": nodes}]} for name in names},
            "objects": [o for name in names for o in deployment(name, pods // members)],
            "steps": [
                {"at": "2m", "members": {n: {"nodes": zone} for n in names[:tenth]}},
                {"at": "3m", "members": {n: {"nodes": drained} for n in names[tenth : 2 * tenth]}},
            ],
            "until": f"{minutes}m",
        },
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--members", type=int, default=100)
    parser.add_argument("--nodes", type=int, default=100, help="nodes per member")
    parser.add_argument("--pods", type=int, default=10000, help="pods in all")
    parser.add_argument("--minutes", type=int, default=10, help="virtual minutes")
    args = parser.parse_args()
    calibration = calibrate()
    print(calibration)
    simulation = Simulation(parse(scenario(args.members, args.nodes, args.pods, args.minutes),
                                  "members"))  # fmt: skip
    started = time.perf_counter()
    simulation.run()
    wall = time.perf_counter() - started
    end = simulation.clock.now()
    pods = [o for m in simulation.fleet.members for o in simulation.fleet.objects(m, end)
            if o["kind"] == "Pod"]  # fmt: skip
    ready = sum(
        1 for p in pods
        if p["status"]["phase"] == "Running" and p["status"]["conditions"][1]["status"] == "True"
    )  # fmt: skip
    print(f"members: {args.members} x {args.nodes} nodes, pods: {len(pods)} ({ready} ready at "
          f"the end), virtual time: {args.minutes} min")  # fmt: skip
    print(f"wall time: {calibration.duration(wall)}, {args.minutes * 60 / wall:,.0f}x real time")
    if ready != len(pods) or len(pods) != args.pods // args.members * args.members:
        raise SystemExit("error: not every pod runs ready; the figures measure a broken run")


if __name__ == "__main__":
    main()
