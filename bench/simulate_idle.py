"""Wall time to simulate an idle fleet for one virtual hour, every monitor running.

    .venv/bin/python bench/simulate_idle.py [--clusters 1000] [--minutes 60]

Each member registers as karmada-agent would (Pull mode), renews its Lease every 10 s
and runs its status loop every 10 s; the hub's controllers run alongside. A run that ends
with a cluster not Ready exits with status 1: the fleet was not idle. Aim: at least 1,000
times real time (1,000 clusters for 60 virtual minutes in under 3.6 s).
"""

from __future__ import annotations

import argparse
import time

from calibration import calibrate  # bench/calibration.py, next to this file
from schedule import has_condition  # bench/schedule.py

from fleetwarden.api.registry import REGISTRY
from fleetwarden.sim.runner import Simulation
from fleetwarden.sim.scenario import parse

CLUSTER = REGISTRY.info("cluster.karmada.io/v1alpha1", "Cluster")
AIM = 1000  # times real time


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clusters", type=int, default=1000)
    parser.add_argument("--minutes", type=int, default=60, help="virtual minutes")
    args = parser.parse_args()
    calibration = calibrate()
    print(calibration)
    doc = {
        "apiVersion": "fleetwarden.io/v1alpha1",
        "kind": "Scenario",
        "metadata": {"name": "idle-fleet"},
        "spec": {
            "members": {f"member{i}": {} for i in range(args.clusters)},
            "until": f"{args.minutes}m",
        },
    }
    simulation = Simulation(parse(doc, "idle-fleet"))
    started = time.perf_counter()
    simulation.run()
    wall = time.perf_counter() - started
    writes = simulation.store.resource_version
    ready = sum(has_condition(c, "Ready") for c in simulation.store.list(CLUSTER).items)
    print(f"clusters: {args.clusters} ({ready} Ready at the end), virtual time: {args.minutes} min")
    speed = args.minutes * 60 / wall
    met = "met" if speed >= AIM else "NOT met"
    print(f"wall time: {calibration.duration(wall)}, {speed:,.0f}x real time")
    print(f"  aim >= {AIM:,}x real time {met}")
    print(f"store writes: {writes:,}, {calibration.rate(writes / wall, 'writes')}")
    if ready != args.clusters:
        raise SystemExit("error: not every cluster is Ready; the figures measure a broken run")


if __name__ == "__main__":
    main()
