"""Wall time to simulate an idle fleet for one virtual hour, every monitor running.

    .venv/bin/python bench/simulate_idle.py [CLUSTERS] [VIRTUAL_MINUTES]

Each member registers as karmada-agent would (Pull mode), renews its Lease every 10 s
and runs its status loop every 10 s; the hub's controllers run alongside. Aim: 1,000
clusters for 60 virtual minutes in under 5 s.
"""

from __future__ import annotations

import sys
import time

from fleetwarden.sim.runner import Simulation
from fleetwarden.sim.scenario import parse


def main() -> None:
    clusters = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
    minutes = int(sys.argv[2]) if len(sys.argv) > 2 else 60
    doc = {
        "apiVersion": "fleetwarden.io/v1alpha1",
        "kind": "Scenario",
        "metadata": {"name": "idle-fleet"},
        "spec": {
            "members": {f"member{i}": {} for i in range(clusters)},
            "until": f"{minutes}m",
        },
    }
    simulation = Simulation(parse(doc, "idle-fleet"))
    started = time.perf_counter()
    simulation.run()
    wall = time.perf_counter() - started
    writes = simulation.store.resource_version
    print(f"clusters: {clusters}, virtual time: {minutes} min")
    print(f"wall time: {wall:.2f} s ({minutes * 60 / wall:,.0f}x real time)")
    print(f"store writes: {writes:,} ({writes / wall:,.0f}/s)")


if __name__ == "__main__":
    main()
