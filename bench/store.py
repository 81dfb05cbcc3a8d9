"""Store benchmark: SQLite creates/s, cached gets/s, lists, and watch delivery per event.

    .venv/bin/python bench/store.py [--objects 5000] [--gets 200000] [--events 20000]

Aims on a 2-core machine: >= 5,000 creates/s (one SQLite transaction each) and
>= 100,000 cached gets/s.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from calibration import Calibration, calibrate  # bench/calibration.py, next to this file

from fleetwarden.api.registry import REGISTRY
from fleetwarden.store import CoreStore, SqliteStore

DEPLOYMENTS = REGISTRY.info("apps/v1", "Deployment")
CONFIGMAPS = REGISTRY.info("v1", "ConfigMap")


def deployment(i: int) -> dict[str, Any]:
    """A typical small object (about 500 bytes of JSON)."""
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {
            "name": f"app-{i:06d}",
            "namespace": f"team-{i % 10}",
            "labels": {"app": f"app-{i}", "tier": "web" if i % 2 else "db"},
        },
        "spec": {
            "replicas": 2,
            "selector": {"matchLabels": {"app": f"app-{i}"}},
            "template": {
                "metadata": {"labels": {"app": f"app-{i}"}},
                "spec": {
                    "containers": [
                        {"name": "main", "image": "nginx:1.25", "ports": [{"containerPort": 80}]}
                    ]
                },
            },
        },
    }


def rate(calibration: Calibration, count: int, seconds: float, unit: str) -> str:
    each = seconds * 1e6 / count
    figure = calibration.rate(count / seconds, unit)
    return f"{figure}, {each:.1f} µs each, {count:,} in {seconds:.2f} s"


def configmap(name: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": "w"}}


def bench_creates(store: CoreStore, count: int, calibration: Calibration) -> None:
    objects = [deployment(i) for i in range(count)]
    start = time.perf_counter()
    for obj in objects:
        store.create(obj)
    seconds = time.perf_counter() - start
    print(f"sqlite creates   {rate(calibration, count, seconds, 'creates')}")


def bench_gets(store: CoreStore, objects: int, count: int, calibration: Calibration) -> None:
    keys = [(f"app-{i:06d}", f"team-{i % 10}") for i in range(objects)]
    keys = (keys * (count // len(keys) + 1))[:count]
    get = store.get
    start = time.perf_counter()
    for name, namespace in keys:
        get(DEPLOYMENTS, name, namespace)
    print(f"cached gets      {rate(calibration, count, time.perf_counter() - start, 'gets')}")


def bench_lists(store: CoreStore, objects: int, calibration: Calibration) -> None:
    rounds = 20
    start = time.perf_counter()
    for _ in range(rounds):
        store.list(DEPLOYMENTS, "team-3", label_selector="tier=web")
    per_list = (time.perf_counter() - start) / rounds
    scanned = calibration.rate(objects / per_list, "objects scanned")
    print(f"filtered lists   {scanned}, {per_list * 1e3:.1f} ms per list over {objects:,}")


def bench_watch_delivery(store: CoreStore, count: int, calibration: Calibration) -> None:
    """The watcher's cost per event: queued events drained by iteration (decode included)."""
    watch = store.watch(CONFIGMAPS, "w")
    for i in range(count):
        store.create(configmap(f"drain-{i}"))
    watch.close()
    start = time.perf_counter()
    # The object is made on first access: touch it, or this measures nothing but the queue.
    delivered = sum(1 for event in watch if event.object)
    seconds = time.perf_counter() - start
    print(f"watch delivery   {rate(calibration, delivered, seconds, 'events')}")


def bench_watch_latency(store: CoreStore, count: int, calibration: Calibration) -> None:
    """From a write's start to a watcher thread holding its event, the writer paced at one
    write per millisecond so that events do not queue behind each other."""
    watch = store.watch(CONFIGMAPS, "w")
    started: dict[str, float] = {}
    latencies: list[float] = []
    writes: list[float] = []

    def consume() -> None:
        for event in watch:
            latencies.append(time.perf_counter() - started[event.object["metadata"]["name"]])

    consumer = threading.Thread(target=consume)
    consumer.start()
    for i in range(count):
        name = f"latency-{i}"
        started[name] = time.perf_counter()
        store.create(configmap(name))
        writes.append(time.perf_counter() - started[name])
        time.sleep(0.001)
    watch.close()
    consumer.join()
    latencies.sort()
    p99 = latencies[int(len(latencies) * 0.99)]
    print(
        f"watch latency    median {statistics.median(latencies) * 1e6:.0f} µs, "
        f"p99 {p99 * 1e6:.0f} µs from write start (the create itself: median "
        f"{statistics.median(writes) * 1e6:.0f} µs) "
        f"{calibration.beside(p99 / calibration.seconds, 'cal', 'p99')}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--objects", type=int, default=5000)
    parser.add_argument("--gets", type=int, default=200_000)
    parser.add_argument("--events", type=int, default=20_000)
    args = parser.parse_args()
    calibration = calibrate()
    print(calibration)
    with tempfile.TemporaryDirectory() as tmp:
        # The delivery bench queues all its events before it reads one: a watch must hold
        # them all, where by default the store ends one that falls that far behind.
        store = SqliteStore(Path(tmp) / "bench.db", watch_buffer=max(args.events, 1))
        bench_creates(store, args.objects, calibration)
        bench_gets(store, args.objects, args.gets, calibration)
        bench_lists(store, args.objects, calibration)
        bench_watch_delivery(store, args.events, calibration)
        bench_watch_latency(store, min(args.events, 2000), calibration)
        store.close()


if __name__ == "__main__":
    main()
