"""HA benchmark: three `fleetwarden up` replicas on one etcd; watch delivery with the
watchers spread over the replicas, and the leader's takeover after kill -9.

    .venv/bin/python bench/ha.py [--watchers 100] [--events 300] [--rate 50]

It starts a one-member etcd (Debian's etcd-server) and three replicas sharing it and the
first one's CA (as docs/ha.md lays them out, without HAProxy: each watcher talks to its
replica directly), then:

- watch: `--watchers` watches of one namespace's ConfigMaps, round robin over the three
  replicas, then `--events` creates through the first at `--rate` per second; a delivery's
  latency runs from just before its create is sent to the moment a watcher has read it;
- takeover: the holder of karmada-controller-manager's Lease is killed (-9), and the time
  until another replica holds it is measured through a surviving replica's API.

Aims on a 2-core machine: watch delivery p99 < 50 ms with 100 watchers over three
replicas; takeover <= 17 s (--leader-elect-lease-duration 15s + retry period 2s).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

import httpx
from _etcd import etcd_server  # bench/_etcd.py, next to this file
from api import HubAccess, bench_watch, start_hub  # bench/api.py, next to this file
from calibration import Calibration, calibrate  # bench/calibration.py, next to this file

LEASE = "/apis/coordination.k8s.io/v1/namespaces/karmada-system/leases/karmada-controller-manager"
REPLICAS = 3


def holder(access: HubAccess) -> str:
    try:
        with access.client() as http:
            response = http.get(LEASE)
    except httpx.TransportError:
        return ""
    if response.status_code != httpx.codes.OK:
        return ""
    return str(response.json()["spec"].get("holderIdentity") or "")


def bench_takeover(
    replicas: list[tuple[subprocess.Popen[bytes], HubAccess]], calibration: Calibration
) -> None:
    first = replicas[0][1]
    deadline = time.monotonic() + 60
    while not (leader := holder(first)):
        if time.monotonic() > deadline:
            raise SystemExit("no replica took the lock in a minute")
        time.sleep(0.1)
    # The first replica started alone: it leads.
    process, _ = replicas[0]
    survivor = replicas[1][1]
    process.kill()
    killed = time.monotonic()
    while holder(survivor) in ("", leader):
        if time.monotonic() - killed > 60:
            raise SystemExit("no replica took over within a minute")
        time.sleep(0.05)
    took = time.monotonic() - killed
    print(
        f"leader takeover after kill -9: {took:.2f} s "
        f"{calibration.beside(took / calibration.seconds, 'cal')} (aim <= 17 s)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--watchers", type=int, default=100)
    parser.add_argument("--events", type=int, default=300)
    parser.add_argument("--rate", type=float, default=50.0)
    args = parser.parse_args()
    calibration = calibrate()
    print(calibration)
    with tempfile.TemporaryDirectory() as tmp, contextlib.ExitStack() as stack:
        root = Path(tmp)
        url = stack.enter_context(etcd_server(root))
        replicas = []
        for i in range(REPLICAS):
            data_dir = root / f"replica{i}"
            if i:  # one CA for all: the first replica's
                shutil.copytree(root / "replica0" / "pki", data_dir / "pki")
            else:
                data_dir.mkdir()
            replica = start_hub(data_dir, f"--etcd-servers={url}")
            stack.callback(_stop, replica[0])
            replicas.append(replica)
        accesses = [access for _, access in replicas]
        label = f"{REPLICAS} replicas on etcd"
        asyncio.run(bench_watch(accesses, args, calibration, label))
        bench_takeover(replicas, calibration)


def _stop(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(30)
        except subprocess.TimeoutExpired:
            # Seen once: a replica slow to stop after its leader was killed. Said, not hidden.
            print(f"a replica (pid {process.pid}) did not stop within 30 s of SIGTERM: killed")
            process.kill()
            process.wait()


if __name__ == "__main__":
    main()
