"""Every bench runs as a script at a tiny size, so that none can rot: it exits with status 0
(a bench exits 1 when its run did not do what it measures), prints the calibration line, and
prints each of its figures with the calibration beside it (see bench/calibration.py).

Nothing here is timed: the figures of a tiny run mean nothing, only that they are printed.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import fleetwarden

ROOT = Path(__file__).resolve().parents[2]
BENCH = ROOT / "bench"
# The benches import the fleetwarden these tests import, wherever it is installed from.
SOURCE = Path(fleetwarden.__file__).resolve().parents[1]

CALIBRATION_LINE = re.compile(r"^calibration: \d+\.\d+ s \(", re.MULTILINE)
BESIDE = r".* \(calibration \d+\.\d+ s; [^)]*cal\)"

# script, its tiny arguments, and the start of each of its figure lines.
TINY: list[tuple[str, list[str], list[str]]] = [
    ("semantics", ["--clusters=100", "--seconds=0.02"], ["reference ", "compiled, cached "]),
    (
        "store",
        ["--objects=50", "--gets=1000", "--events=50"],
        ["sqlite creates ", "cached gets ", "filtered lists ", "watch delivery ", "watch latency "],
    ),
    ("simulate_idle", ["--clusters=5", "--minutes=2"], ["wall time: ", "store writes: "]),
    ("members", ["--members=4", "--nodes=10", "--pods=40", "--minutes=10"], ["wall time: "]),
    (
        "schedule",
        ["--clusters=40", "--policies=10", "--workloads=60"],
        ["wall time: ", "throughput: "],
    ),
    (
        "schedule",
        ["--clusters=20", "--policies=5", "--workloads=20", "--pipeline", "--store=sqlite"],
        ["wall time: ", "throughput: "],
    ),
    (
        "failover",
        ["--clusters=30", "--policies=6", "--workloads=40", "--failed=3", "--store=etcd"],
        ["wall time: "],
    ),
    (
        "failover",
        ["--clusters=30", "--policies=6", "--workloads=40", "--failed=3"],
        ["wall time: "],
    ),
    (
        "placement",
        ["--clusters=200", "--placements=20", "--tainted=123"],
        ["wall time (1): ", "throughput (1): ", "wall time (2): "],
    ),
    (
        "api",
        ["--creates=20", "--clients=2", "--watchers=2", "--events=5", "--rate=100"],
        [
            "creates over HTTP: ",
            "watch delivery over HTTP: ",
            "creates over HTTPS+mTLS: ",
            "watch delivery over HTTPS+mTLS: ",
        ],
    ),
    (
        "api",
        ["--creates=20", "--clients=2", "--watchers=2", "--events=5", "--serving=https", "--etcd"],
        ["creates over HTTPS+mTLS on etcd: ", "watch delivery over HTTPS+mTLS on etcd: "],
    ),
    (
        "ha",
        ["--watchers=3", "--events=5", "--rate=100"],
        ["watch delivery over 3 replicas on etcd: ", "leader takeover after kill -9: "],
    ),
    (
        "authorization",
        ["--users=20", "--namespaces=4", "--checks=2000"],
        ["cached checks: ", "uncached decisions: "],
    ),
    (
        "cli",
        ["--runs=1", "--clusters=1"],
        ["import fleetwarden.cli: ", "fleetwarden --help: ", "fleetwarden get clusters: "],
    ),
    ("whatif", ["--clusters=20", "--workloads=20", "--policies=4"], ["wall time: "]),
    ("whatif", ["--clusters=20", "--workloads=20", "--policies=4", "--api"], ["wall time: "]),
    ("calibration", [], []),
]


def run_bench(script: str, args: list[str]) -> subprocess.CompletedProcess[str]:
    path = os.pathsep.join(filter(None, [str(SOURCE), os.environ.get("PYTHONPATH")]))
    return subprocess.run(
        [sys.executable, str(BENCH / f"{script}.py"), *args],
        capture_output=True,
        text=True,
        timeout=100,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": path},
        check=False,
    )


@pytest.mark.parametrize(
    ("script", "args", "figures"), TINY, ids=[f"{s} {' '.join(a)}".strip() for s, a, _ in TINY]
)
def test_bench_runs_at_a_tiny_size(script: str, args: list[str], figures: list[str]) -> None:
    result = run_bench(script, args)
    output = f"stdout:\n{result.stdout}\nstderr:\n{result.stderr}"
    assert result.returncode == 0, output
    assert CALIBRATION_LINE.search(result.stdout), output
    for figure in figures:
        pattern = f"^{re.escape(figure)}{BESIDE}"
        assert re.search(pattern, result.stdout, re.MULTILINE), f"no {figure!r} line\n{output}"


def test_every_bench_has_a_tiny_run() -> None:
    # bench/_*.py are what benches share, not benches.
    benches = {p.stem for p in BENCH.glob("*.py") if not p.stem.startswith("_")}
    assert benches == {script for script, _, _ in TINY}
