"""API server benchmark: creates/s over HTTP on the loopback, and watch delivery latency.

    .venv/bin/python bench/api.py [--creates 3000] [--clients 4] [--watchers 100]
                                  [--events 300] [--rate 50]

It starts `fleetwarden up` (its SQLite store in a temporary directory, every controller
running, no members) and talks to it as any client would:

- creates: ConfigMaps POSTed by `--clients` threads, each on its own keep-alive
  connection; every create is one admitted, committed SQLite transaction;
- watch: `--watchers` watches of one namespace's ConfigMaps, then `--events` creates at
  `--rate` per second; a delivery's latency runs from just before its create is sent to
  the moment a watcher has read and decoded the event.

Aims on a 2-core machine: >= 1,000 creates/s; watch delivery p99 < 50 ms.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import subprocess
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import httpx

from fleetwarden.cli.up import fleetwarden_command

CONFIGMAPS = "/api/v1/namespaces/{namespace}/configmaps"


def start_hub(data_dir: Path) -> tuple[subprocess.Popen[bytes], str]:
    command = fleetwarden_command("up", "--port=0", f"--data-dir={data_dir}")
    hub = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    kubeconfig = data_dir / "kubeconfig"
    deadline = time.monotonic() + 60
    while not kubeconfig.exists():
        if time.monotonic() > deadline or hub.poll() is not None:
            hub.kill()
            raise SystemExit("the hub did not start")
        time.sleep(0.05)
    server = next(
        line.split()[-1] for line in kubeconfig.read_text().splitlines() if "server:" in line
    )
    while httpx.get(server + "/readyz").status_code != httpx.codes.OK:
        time.sleep(0.05)
    return hub, server


def configmap(name: str, namespace: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": namespace, "labels": {"bench": "api"}},
        "data": {"key": "value " * 8},
    }


def create_namespace(server: str, name: str) -> None:
    body = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}
    httpx.post(server + "/api/v1/namespaces", json=body).raise_for_status()


def bench_creates(server: str, count: int, clients: int) -> None:
    create_namespace(server, "creates")
    url = server + CONFIGMAPS.format(namespace="creates")
    per_client = count // clients

    def run(offset: int) -> None:
        with httpx.Client() as http:
            for i in range(offset, offset + per_client):
                http.post(url, json=configmap(f"cm-{i:06d}", "creates")).raise_for_status()

    threads = [threading.Thread(target=run, args=(c * per_client,)) for c in range(clients)]
    start = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    seconds = time.perf_counter() - start
    total = per_client * clients
    print(
        f"creates over HTTP: {total / seconds:>8,.0f}/s  "
        f"({total:,} by {clients} clients in {seconds:.2f} s)"
    )


async def bench_watch(server: str, watchers: int, events: int, rate: float) -> None:
    create_namespace(server, "watched")
    url = server + CONFIGMAPS.format(namespace="watched")
    sent: dict[str, float] = {}
    latencies: list[float] = []
    limits = httpx.Limits(max_connections=watchers + 10)
    async with httpx.AsyncClient(timeout=None, limits=limits) as http:
        opened = [asyncio.Event() for _ in range(watchers)]
        tasks = [
            asyncio.create_task(_watch(http, url, events, sent, latencies, ready))
            for ready in opened
        ]
        await asyncio.gather(*(ready.wait() for ready in opened))
        await asyncio.sleep(0.5)  # every watch registered with the store
        for i in range(events):
            name = f"cm-{i:06d}"
            sent[name] = time.perf_counter()
            (await http.post(url, json=configmap(name, "watched"))).raise_for_status()
            await asyncio.sleep(max(0.0, sent[name] + 1 / rate - time.perf_counter()))
        await asyncio.wait_for(asyncio.gather(*tasks), timeout=60)
    latencies.sort()
    p50 = statistics.median(latencies) * 1000
    p99 = latencies[int(len(latencies) * 0.99) - 1] * 1000
    print(
        f"watch delivery:    p50 {p50:.1f} ms, p99 {p99:.1f} ms, max {latencies[-1] * 1000:.1f} ms"
        f"  ({len(latencies):,} deliveries: {events} events at {rate:g}/s to {watchers} watchers)"
    )


async def _watch(
    http: httpx.AsyncClient,
    url: str,
    events: int,
    sent: dict[str, float],
    latencies: list[float],
    ready: asyncio.Event,
) -> None:
    seen = 0
    async with http.stream("GET", url, params={"watch": "true"}) as response:
        ready.set()
        async for line in response.aiter_lines():
            if not line:
                continue
            event = json.loads(line)
            name = event["object"]["metadata"]["name"]
            if event["type"] == "ADDED" and name in sent:
                latencies.append(time.perf_counter() - sent[name])
                seen += 1
                if seen == events:
                    return


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--creates", type=int, default=3000)
    parser.add_argument("--clients", type=int, default=4)
    parser.add_argument("--watchers", type=int, default=100)
    parser.add_argument("--events", type=int, default=300)
    parser.add_argument("--rate", type=float, default=50.0)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        hub, server = start_hub(Path(tmp))
        try:
            bench_creates(server, args.creates, args.clients)
            asyncio.run(bench_watch(server, args.watchers, args.events, args.rate))
        finally:
            hub.terminate()
            hub.wait(30)


if __name__ == "__main__":
    main()
