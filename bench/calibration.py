"""The benches' shared calibration: a fixed pure-Python workload, timed in the bench's own
process before it measures anything, so that a figure reads as a ratio on any machine.

    .venv/bin/python bench/calibration.py

The workload does what the hub's hot paths do, with nothing but dicts, lists and strings:
it builds Kubernetes-style objects, copies them (as a store and a cache do), indexes them
by namespace/name and by label, matches label selectors and taints against tolerations,
and sorts. It is deterministic (no randomness, no I/O, no C extension doing the work) and
takes about 0.27 s on a 2-core machine of 2025 with CPython 3.11. It runs five times,
the garbage collector paused; the fastest run is the calibration, the one least disturbed
by other processes.

The convention: the unit is one calibration, "cal", the time that workload takes. Every
bench prints the calibration line once, then each of its figures with the calibration
time beside it and the figure in cal:

    calibration: 0.270 s (bench/calibration.py, best of 5 runs)
    wall time: 4.20 s (calibration 0.270 s; 15.6 cal)
    throughput: 2,345 bindings/s (calibration 0.270 s; 633 bindings/cal)

A duration is divided by the calibration time: how many calibrations it lasts (lower is
better). A rate is multiplied by it: how many are done in one calibration's time (higher
is better). On a machine twice as fast both figures in cal stay the same, as far as the
bench's code speeds up as the calibration does: I/O-bound figures (SQLite commits, the
loopback) follow it less closely than CPU-bound ones.
"""

from __future__ import annotations

import gc
import time
from dataclasses import dataclass
from typing import Any

RUNS = 5
OBJECTS = 1500
ROUNDS = 7
TAINT_KEYS = ("dedicated", "maintenance", "cluster.karmada.io/not-ready", "spot")
EFFECTS = ("NoSchedule", "NoExecute", "PreferNoSchedule")


@dataclass(frozen=True)
class Calibration:
    """The calibration time, and the figures of a bench expressed beside it."""

    seconds: float

    def __str__(self) -> str:
        return f"calibration: {self.seconds:.3f} s (bench/calibration.py, best of {RUNS} runs)"

    def duration(self, seconds: float, what: str = "") -> str:
        """`4.20 s (calibration 0.253 s; 16.6 cal)`; `what` names the figure in the ratio."""
        return f"{_seconds(seconds)} {self.beside(seconds / self.seconds, 'cal', what)}"

    def rate(self, per_second: float, unit: str) -> str:
        """`2,345 bindings/s (calibration 0.253 s; 593 bindings/cal)`."""
        ratio = per_second * self.seconds
        return f"{_number(per_second)} {unit}/s {self.beside(ratio, f'{unit}/cal')}"

    def beside(self, ratio: float, unit: str, what: str = "") -> str:
        named = f"{what} " if what else ""
        return f"(calibration {self.seconds:.3f} s; {named}{_number(ratio)} {unit})"


def calibrate() -> Calibration:
    """Time the workload RUNS times and keep the fastest. The garbage collector is paused
    meanwhile: its passes cost in proportion to everything the bench has imported and built
    before (kubernetes' client alone doubles it), which says nothing of the machine. The
    workload makes no reference cycles, so nothing piles up."""
    best = float("inf")
    enabled = gc.isenabled()
    gc.disable()
    try:
        for _ in range(RUNS):
            started = time.perf_counter()
            workload()
            best = min(best, time.perf_counter() - started)
    finally:
        if enabled:
            gc.enable()
    return Calibration(best)


def workload() -> int:
    """The fixed work; its checksum is the same on every run and every machine."""
    checksum = 0
    for round_ in range(ROUNDS):
        objects = [make_object(i, round_) for i in range(OBJECTS)]
        copies = [deep_copy(obj) for obj in objects]
        by_key = {f"{o['metadata']['namespace']}/{o['metadata']['name']}": o for o in copies}
        by_team: dict[str, list[str]] = {}
        for key, obj in by_key.items():
            by_team.setdefault(obj["metadata"]["labels"]["team"], []).append(key)
        for selector in SELECTORS:
            checksum += sum(matches(o["metadata"]["labels"], selector) for o in copies)
        for tolerations in TOLERATIONS:
            checksum += sum(untolerated(o["spec"]["taints"], tolerations) for o in copies)
        ordered = sorted(by_key, key=lambda k: (by_key[k]["spec"]["replicas"], k.split("/")[1]))
        checksum += len(ordered[0]) + sum(len(keys) for keys in by_team.values())
    return checksum


def make_object(i: int, round_: int) -> dict[str, Any]:
    name = f"app-{i:05d}"
    labels = {
        "app": name,
        "team": f"team-{i % 17:02d}",
        "tier": ("gold", "silver", "bronze")[i % 3],
        "region": f"region-{(i + round_) % 7}",
    }
    taints = [
        {"key": TAINT_KEYS[(i + k) % len(TAINT_KEYS)], "value": "x" * (k + 1),
         "effect": EFFECTS[(i * k) % len(EFFECTS)]}
        for k in range(i % 4)
    ]  # fmt: skip
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "namespace": f"ns-{i % 50:02d}", "labels": labels},
        "spec": {
            "replicas": 1 + (i * 7 + round_) % 10,
            "selector": {"matchLabels": {"app": name}},
            "taints": taints,
            "template": {"spec": {"containers": [{"name": "app", "image": f"nginx:1.{i % 9}"}]}},
        },
    }


def deep_copy(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: deep_copy(v) for k, v in value.items()}
    if isinstance(value, list):
        return [deep_copy(v) for v in value]
    return value


Selector = tuple[dict[str, str], list[tuple[str, str, tuple[str, ...]]]]
SELECTORS: list[Selector] = [
    ({"tier": "gold"}, []),
    ({}, [("region", "In", ("region-1", "region-3")), ("tier", "NotIn", ("bronze",))]),
    ({"team": "team-03"}, [("app", "Exists", ())]),
    ({}, [("zone", "DoesNotExist", ()), ("team", "In", ("team-01", "team-02", "team-05"))]),
]


def matches(labels: dict[str, str], selector: Selector) -> bool:
    match_labels, expressions = selector
    if any(labels.get(k) != v for k, v in match_labels.items()):
        return False
    for key, operator, values in expressions:
        present = key in labels
        if operator == "In" and not (present and labels[key] in values):
            return False
        if operator == "NotIn" and present and labels[key] in values:
            return False
        if operator == "Exists" and not present:
            return False
        if operator == "DoesNotExist" and present:
            return False
    return True


TOLERATIONS: list[list[dict[str, str]]] = [
    [{"key": "dedicated", "operator": "Equal", "value": "x", "effect": "NoSchedule"}],
    [{"key": "maintenance", "operator": "Exists"}, {"key": "spot", "operator": "Exists"}],
    [{"operator": "Exists", "effect": "PreferNoSchedule"}],
]


def untolerated(taints: list[dict[str, str]], tolerations: list[dict[str, str]]) -> bool:
    """Some NoSchedule or NoExecute taint that no toleration matches."""
    return any(
        taint["effect"] != "PreferNoSchedule" and not any(tolerates(t, taint) for t in tolerations)
        for taint in taints
    )


def tolerates(toleration: dict[str, str], taint: dict[str, str]) -> bool:
    if toleration.get("effect") and toleration["effect"] != taint["effect"]:
        return False
    if toleration.get("key") and toleration["key"] != taint["key"]:
        return False
    if toleration.get("operator", "Equal") == "Exists":
        return True
    return toleration.get("value", "") == taint.get("value", "")


def _number(value: float) -> str:
    """Whole numbers with separators from 100 up; three significant digits below."""
    return f"{value:,.0f}" if abs(value) >= 100 else f"{value:.3g}"


def _seconds(value: float) -> str:
    return f"{value:.2f} s" if value >= 1 else f"{value * 1000:.3g} ms"


if __name__ == "__main__":
    print(calibrate())
