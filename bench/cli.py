"""CLI start-up benchmark: how long the `fleetwarden` command takes, each call a fresh
process as a user's shell starts it.

    .venv/bin/python bench/cli.py [--runs 9] [--clusters 3]

- `python -c 'import fleetwarden.cli'`: the command's import alone;
- `fleetwarden --help`: the import, and every subcommand's options built (typer builds them
  all, whichever command runs);
- `fleetwarden get clusters`: against a hub the bench starts (`fleetwarden up`, its SQLite
  store in a temporary directory, HTTPS with the administrator's client certificate from
  the kubeconfig it writes), holding `--clusters` Pull clusters that no agent backs: the
  kubeconfig read, one request, the table printed.

Each figure is the median of `--runs` calls, after one call not counted. A call that fails,
or a `get clusters` that does not list the clusters, exits with status 1: the figures would
measure a broken run.

The calls keep their compiled bytecode (in a temporary directory), as an installed package
does: pip compiles it at install time. A checkout installed in editable mode under
PYTHONDONTWRITEBYTECODE (this workplace sets it) would otherwise compile every module it
imports on every call, which no user's command does; the last figure is `--help` that way.

Aim on a 2-core machine: each under 0.3 s (kubectl get: 0.07 s).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from api import HubAccess, start_hub  # bench/api.py, next to this file
from calibration import Calibration, calibrate  # bench/calibration.py, next to this file

from fleetwarden.cli.up import KUBECONFIG_FILE, fleetwarden_command

AIM = 0.3  # seconds


def timed(
    label: str, command: list[str], runs: int, calibration: Calibration, env: dict[str, str]
) -> str:
    """Run `command` once, then `runs` times; print its median wall time; its last output."""
    seconds, output = [], ""
    for run in range(runs + 1):
        started = time.perf_counter()
        result = subprocess.run(command, capture_output=True, text=True, check=False, env=env)
        if run:  # the first call is the warm-up: it compiles what a user's install has
            seconds.append(time.perf_counter() - started)
        if result.returncode != 0:
            status = f"error: {label} exited with status {result.returncode}"
            raise SystemExit(f"{status}:\n{result.stdout}{result.stderr}")
        output = result.stdout
    median = statistics.median(seconds)
    print(
        f"{label}: {calibration.duration(median, 'median')}, "
        f"min {min(seconds):.3f} s, max {max(seconds):.3f} s of {runs} runs; "
        f"aim < {AIM} s {'met' if median < AIM else 'NOT met'}"
    )
    return output


def create_clusters(access: HubAccess, count: int) -> list[str]:
    """Pull clusters, as their agents would register them (none runs: they stay unready)."""
    names = [f"member{i}" for i in range(1, count + 1)]
    with access.client() as http:
        for name in names:
            body = {
                "apiVersion": "cluster.karmada.io/v1alpha1",
                "kind": "Cluster",
                "metadata": {"name": name},
                "spec": {"syncMode": "Pull"},
            }
            http.post("/apis/cluster.karmada.io/v1alpha1/clusters", json=body).raise_for_status()
    return names


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=9)
    parser.add_argument("--clusters", type=int, default=3)
    args = parser.parse_args()
    calibration = calibrate()
    print(calibration)
    runs = args.runs
    import_only = [sys.executable, "-c", "import fleetwarden.cli"]
    with tempfile.TemporaryDirectory() as tmp:
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        env["PYTHONPYCACHEPREFIX"] = str(Path(tmp, "pycache"))
        timed("import fleetwarden.cli", import_only, runs, calibration, env)
        timed("fleetwarden --help", fleetwarden_command("--help"), runs, calibration, env)
        hub, access = start_hub(Path(tmp))
        try:
            names = create_clusters(access, args.clusters)
            get = fleetwarden_command(
                "get", "clusters", f"--kubeconfig={Path(tmp, KUBECONFIG_FILE)}"
            )
            listed = timed("fleetwarden get clusters", get, runs, calibration, env)
        finally:
            hub.terminate()
            hub.wait(30)
        uncompiled = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
        uncompiled.pop("PYTHONPYCACHEPREFIX", None)
        timed("fleetwarden --help, no bytecode kept", fleetwarden_command("--help"), runs,
              calibration, uncompiled)  # fmt: skip
    if missing := [name for name in names if name not in listed]:
        raise SystemExit(f"error: get clusters did not list {', '.join(missing)}:\n{listed}")


if __name__ == "__main__":
    main()
