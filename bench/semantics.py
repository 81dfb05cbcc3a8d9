"""Taint-toleration benchmark: scheduler filter checks per second, reference vs compiled.

    .venv/bin/python bench/semantics.py [--clusters 10000] [--seconds 2]

One PropagationPolicy with 4 cluster tolerations is checked against a fleet whose clusters
carry 0 to 5 taints, most of them none and the failing ones sharing the same few sets, as
Karmada's TaintToleration filter does it (NoSchedule and NoExecute taints). The compiled
path is built afresh for every pass over the fleet, so its cache misses are counted too.

Aim on a 2-core machine: >= 1,000,000 compiled checks/s.
"""

from __future__ import annotations

import argparse
import random
import time
from collections.abc import Callable

from calibration import Calibration, calibrate  # bench/calibration.py, next to this file

from fleetwarden.api.core import Taint, Toleration
from fleetwarden.semantics.tolerations import (
    SCHEDULING_EFFECTS,
    CompiledTolerations,
    cluster_taints,
    find_matching_untolerated_taint,
)

POLICY = [
    Toleration(
        key="cluster.karmada.io/not-ready",
        operator="Exists",
        effect="NoExecute",
        toleration_seconds=300,
    ),
    Toleration(
        key="cluster.karmada.io/unreachable",
        operator="Exists",
        effect="NoExecute",
        toleration_seconds=300,
    ),
    Toleration(key="dedicated", operator="Equal", value="gpu", effect="NoSchedule"),
    Toleration(key="maintenance", operator="Exists"),
]

NOT_READY = Taint(key="cluster.karmada.io/not-ready", effect="NoSchedule")
NOT_READY_NX = Taint(key="cluster.karmada.io/not-ready", effect="NoExecute")
UNREACHABLE = Taint(key="cluster.karmada.io/unreachable", effect="NoSchedule")
UNREACHABLE_NX = Taint(key="cluster.karmada.io/unreachable", effect="NoExecute")
GPU = Taint(key="dedicated", value="gpu", effect="NoSchedule")
BATCH = Taint(key="dedicated", value="batch", effect="NoSchedule")
MAINTENANCE = Taint(key="maintenance", value="planned", effect="NoSchedule")
SPOT = Taint(key="spot", effect="PreferNoSchedule")

# (weight, taints): a fleet where most clusters are healthy and untainted.
MIX: list[tuple[int, list[Taint]]] = [
    (60, []),
    (8, [SPOT]),
    (8, [GPU]),
    (5, [NOT_READY]),
    (4, [UNREACHABLE]),
    (4, [BATCH]),
    (3, [NOT_READY, NOT_READY_NX]),
    (3, [UNREACHABLE, UNREACHABLE_NX, GPU]),
    (2, [MAINTENANCE, GPU, SPOT, NOT_READY]),
    (2, [MAINTENANCE, GPU, SPOT, UNREACHABLE, UNREACHABLE_NX]),
    (1, [BATCH, SPOT, MAINTENANCE, NOT_READY, NOT_READY_NX]),
]


def fleet(size: int, seed: int = 1) -> list[list[Taint]]:
    rng = random.Random(seed)
    weights = [w for w, _ in MIX]
    return [list(rng.choices([t for _, t in MIX], weights)[0]) for _ in range(size)]


def measure(
    name: str, one_pass: Callable[[], None], clusters: int, seconds: float, calibration: Calibration
) -> float:
    passes, start = 0, time.perf_counter()
    while (elapsed := time.perf_counter() - start) < seconds:
        one_pass()
        passes += 1
    checks = passes * clusters
    per_second = checks / elapsed
    each = f"{elapsed * 1e9 / checks:.0f} ns each"
    print(f"{name:<18}{calibration.rate(per_second, 'checks')}, {each}")
    return per_second


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--clusters", type=int, default=10_000)
    parser.add_argument("--seconds", type=float, default=2.0)
    args = parser.parse_args()
    calibration = calibrate()
    print(calibration)

    taint_lists = fleet(args.clusters)
    keys = [cluster_taints(taints) for taints in taint_lists]  # kept per cluster by the informer
    distinct = len(set(keys))
    print(f"{args.clusters} clusters, {distinct} distinct taint sets, {len(POLICY)} tolerations")

    def reference_pass() -> None:
        for taints in taint_lists:
            find_matching_untolerated_taint(taints, POLICY, SCHEDULING_EFFECTS)

    def compiled_pass() -> None:
        check = CompiledTolerations(POLICY).find_untolerated
        for key in keys:
            check(key)

    measure("reference", reference_pass, args.clusters, args.seconds, calibration)
    compiled = measure("compiled, cached", compiled_pass, args.clusters, args.seconds, calibration)
    print("aim >= 1,000,000 compiled checks/s:", "met" if compiled >= 1_000_000 else "NOT met")


if __name__ == "__main__":
    main()
