"""API server benchmark: creates/s on the loopback and watch delivery latency, over plain
HTTP and over HTTPS with a client certificate.

    .venv/bin/python bench/api.py [--creates 3000] [--clients 8] [--watchers 100]
                                  [--events 300] [--rate 50] [--serving both|https|http]
                                  [--etcd]

It starts `fleetwarden up` (its SQLite store in a temporary directory, or with --etcd a
one-member etcd it starts too; every controller running, no members) and talks to it as
any client would, where and how the kubeconfig the hub writes says: `--insecure-serving`
for plain HTTP; by default HTTPS, the hub's CA and the administrator's client certificate
(every request authenticated and authorized by RBAC).

- creates: ConfigMaps POSTed by `--clients` threads, each on its own keep-alive
  connection of the standard library's http.client; every create is one admitted,
  committed SQLite transaction (or etcd txn). The client is lean, as kubectl's and
  client-go's are: with httpx the bench's own client took as much CPU per create as etcd
  did, on the same two cores as the hub;
- watch: `--watchers` watches of one namespace's ConfigMaps, then `--events` creates at
  `--rate` per second; a delivery's latency runs from just before its create is sent to
  the moment a watcher has read and decoded the event.

Aims on a 2-core machine: >= 2,000 creates/s over HTTP on SQLite, >= 1,000 on a
one-member etcd; watch delivery p99 < 50 ms; HTTPS with client certificates at >= 80 % of
plain HTTP's creates/s.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import http.client
import json
import ssl
import statistics
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import urlsplit

import httpx
from _etcd import etcd_server  # bench/_etcd.py, next to this file
from calibration import Calibration, calibrate  # bench/calibration.py, next to this file

from fleetwarden.cli.up import KUBECONFIG_FILE, fleetwarden_command
from fleetwarden.client.kubeconfig import KubeConfigError, load_kubeconfig

CREATES_AIMS = {False: 2000, True: 1000}  # creates/s over HTTP, on SQLite and on etcd
CONFIGMAPS = "/api/v1/namespaces/{namespace}/configmaps"
T = TypeVar("T")


@dataclass(frozen=True)
class HubAccess:
    """Where the hub serves and how to trust it and be known to it, all from the kubeconfig
    it writes: its server, and certificate-authority-data, client-certificate-data and
    client-key-data when it has them (plain HTTP without)."""

    server: str
    verify: ssl.SSLContext | bool

    @classmethod
    def read(cls, kubeconfig: Path) -> HubAccess:
        config = load_kubeconfig(str(kubeconfig))
        return cls(config.server, config.ssl_context())

    def client(self) -> httpx.Client:
        return httpx.Client(base_url=self.server, verify=self.verify)

    def async_client(self, **options: Any) -> httpx.AsyncClient:
        return httpx.AsyncClient(base_url=self.server, verify=self.verify, **options)

    def connection(self) -> http.client.HTTPConnection:
        """One keep-alive connection of http.client, which costs a quarter of the CPU of httpx."""
        url = urlsplit(self.server)
        if url.scheme == "http":
            return http.client.HTTPConnection(url.hostname or "", url.port)
        context = self.verify if isinstance(self.verify, ssl.SSLContext) else None
        return http.client.HTTPSConnection(url.hostname or "", url.port, context=context)


def start_hub(data_dir: Path, *flags: str) -> tuple[subprocess.Popen[bytes], HubAccess]:
    command = fleetwarden_command("up", "--port=0", f"--data-dir={data_dir}", *flags)
    log = data_dir / "hub.log"
    with log.open("wb") as output:
        hub = subprocess.Popen(command, stdout=output, stderr=subprocess.STDOUT)
    try:
        access = wait_for(hub, log, lambda: _access(data_dir / KUBECONFIG_FILE))
        wait_for(hub, log, lambda: _ready(access))
    except BaseException:
        hub.kill()
        hub.wait()
        raise
    return hub, access


def wait_for(hub: subprocess.Popen[bytes], log: Path, check: Callable[[], T | None]) -> T:
    """The first result of `check` that is not None, while the hub runs (a minute at most)."""
    deadline = time.monotonic() + 60
    while (found := check()) is None:
        if time.monotonic() > deadline or hub.poll() is not None:
            raise SystemExit(f"the process did not start; its log ends:\n{log.read_text()[-2000:]}")
        time.sleep(0.05)
    return found


def _access(kubeconfig: Path) -> HubAccess | None:
    """None until the hub has written its kubeconfig whole."""
    try:
        return HubAccess.read(kubeconfig) if kubeconfig.exists() else None
    except KubeConfigError:
        return None


def _ready(access: HubAccess) -> bool | None:
    try:
        with access.client() as http:
            return http.get("/readyz").status_code == httpx.codes.OK or None
    except httpx.TransportError:
        return None


def configmap(name: str, namespace: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": namespace, "labels": {"bench": "api"}},
        "data": {"key": "value " * 8},
    }


def create_namespace(access: HubAccess, name: str) -> None:
    body = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}
    with access.client() as http:
        http.post("/api/v1/namespaces", json=body).raise_for_status()


def bench_creates(
    access: HubAccess, count: int, clients: int, calibration: Calibration, label: str
) -> float:
    create_namespace(access, "creates")
    url = CONFIGMAPS.format(namespace="creates")
    per_client = count // clients
    headers = {"Content-Type": "application/json"}

    def run(offset: int) -> None:
        connection = access.connection()
        try:
            for i in range(offset, offset + per_client):
                body = json.dumps(configmap(f"cm-{i:06d}", "creates"))
                connection.request("POST", url, body, headers)
                response = connection.getresponse()
                answer = response.read()
                if response.status != httpx.codes.CREATED:  # a failed create fails the bench
                    raise SystemExit(f"POST {url}: {response.status} {answer[:500]!r}")
        finally:
            connection.close()

    with ThreadPoolExecutor(clients) as pool:
        start = time.perf_counter()
        runs = [pool.submit(run, c * per_client) for c in range(clients)]
        for done in runs:
            done.result()
        seconds = time.perf_counter() - start
    total = per_client * clients
    figure = calibration.rate(total / seconds, "creates")
    print(f"creates over {label}: {figure}, {total:,} by {clients} clients in {seconds:.2f} s")
    return total / seconds


async def bench_watch(
    accesses: Sequence[HubAccess], args: argparse.Namespace, calibration: Calibration, label: str
) -> None:
    """The watchers spread over the hubs (replicas of one store), the creates sent to the
    first."""
    create_namespace(accesses[0], "watched")
    url = CONFIGMAPS.format(namespace="watched")
    watchers, events, rate = args.watchers, args.events, args.rate
    sent: dict[str, float] = {}
    latencies: list[float] = []
    limits = httpx.Limits(max_connections=watchers + 10)
    async with contextlib.AsyncExitStack() as stack:
        clients = [
            await stack.enter_async_context(access.async_client(timeout=None, limits=limits))
            for access in accesses
        ]
        opened = [asyncio.Event() for _ in range(watchers)]
        tasks = [
            asyncio.create_task(
                _watch(clients[i % len(clients)], url, events, sent, latencies, ready)
            )
            for i, ready in enumerate(opened)
        ]
        await asyncio.gather(*(ready.wait() for ready in opened))
        await asyncio.sleep(0.5)  # every watch registered with the store
        for i in range(events):
            name = f"cm-{i:06d}"
            sent[name] = time.perf_counter()
            (await clients[0].post(url, json=configmap(name, "watched"))).raise_for_status()
            await asyncio.sleep(max(0.0, sent[name] + 1 / rate - time.perf_counter()))
        await asyncio.wait_for(asyncio.gather(*tasks), timeout=60)
    latencies.sort()
    p50 = statistics.median(latencies)
    p99 = latencies[int(len(latencies) * 0.99) - 1]
    print(
        f"watch delivery over {label}: p50 {p50 * 1000:.1f} ms, p99 {p99 * 1000:.1f} ms, "
        f"max {latencies[-1] * 1000:.1f} ms "
        f"{calibration.beside(p99 / calibration.seconds, 'cal', 'p99')}"
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


@contextlib.contextmanager
def store(data_dir: Path, etcd: bool) -> Iterator[tuple[str, ...]]:
    """The flags of `up` for its store: SQLite in its data dir, or a one-member etcd."""
    if not etcd:
        yield ()
        return
    with etcd_server(data_dir) as url:
        yield (f"--etcd-servers={url}",)


# What each way of serving is called in the figures, and the flags of `up` for it.
SERVINGS = {"http": ("HTTP", ("--insecure-serving",)), "https": ("HTTPS+mTLS", ())}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--creates", type=int, default=3000)
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--watchers", type=int, default=100)
    parser.add_argument("--events", type=int, default=300)
    parser.add_argument("--rate", type=float, default=50.0)
    parser.add_argument("--serving", choices=["both", *SERVINGS], default="both")
    parser.add_argument(
        "--etcd", action="store_true", help="the store on a one-member etcd, not SQLite"
    )
    args = parser.parse_args()
    calibration = calibrate()
    print(calibration)
    creates = {}
    for serving in SERVINGS if args.serving == "both" else [args.serving]:
        label, flags = SERVINGS[serving]
        with tempfile.TemporaryDirectory() as tmp, store(Path(tmp), args.etcd) as store_flags:
            label += " on etcd" if args.etcd else ""
            hub, access = start_hub(Path(tmp), *flags, *store_flags)
            try:
                creates[serving] = bench_creates(
                    access, args.creates, args.clients, calibration, label
                )
                if serving == "http":
                    aim = CREATES_AIMS[args.etcd]
                    met = "met" if creates[serving] >= aim else "NOT met"
                    print(f"  aim >= {aim:,} creates/s over {label}: {met}")
                asyncio.run(bench_watch([access], args, calibration, label))
            finally:
                hub.terminate()
                hub.wait(30)
    if len(creates) == len(SERVINGS):
        print(
            f"HTTPS+mTLS creates/s against plain HTTP's: {creates['https'] / creates['http']:.0%}"
        )


if __name__ == "__main__":
    main()
