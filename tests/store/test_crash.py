"""Durability of the SQLite store: reopening restores everything, and an acknowledged write
survives kill -9 of the process that made it (nothing acknowledged lost, nothing
half-written)."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from fleetwarden.store import SqliteStore
from fleetwarden.store.sqlite import StoreInUse

from .conftest import CONFIGMAPS, DEPLOYMENTS, deployment, owner_ref
from .crash_writer import PAYLOAD

WRITER = Path(__file__).with_name("crash_writer.py")


def test_reopening_restores_objects_counter_and_event_log(tmp_path: Path) -> None:
    path = tmp_path / "store.db"
    store = SqliteStore(path, event_log_size=4)
    owner = store.create(deployment("owner"))
    store.create(deployment("child", ownerReferences=[owner_ref(owner)]))
    for replicas in (2, 3, 4):
        store.patch(DEPLOYMENTS, "child", "default", {"spec": {"replicas": replicas}})
    store.close()

    store = SqliteStore(path, event_log_size=4)
    assert store.resource_version == 5
    assert store.get(DEPLOYMENTS, "child", "default")["spec"]["replicas"] == 4
    watch = store.watch(DEPLOYMENTS, resource_version="1")  # the log kept 2..5
    store.delete(DEPLOYMENTS, "owner", "default")  # the owner index was rebuilt too
    watch.close()
    assert [(e.type.value, e.resource_version) for e in watch] == [
        ("ADDED", 2),
        ("MODIFIED", 3),
        ("MODIFIED", 4),
        ("MODIFIED", 5),
        ("DELETED", 6),
        ("DELETED", 7),
    ]
    assert store.list(DEPLOYMENTS).items == []
    store.close()
    rows = sqlite3.connect(path).execute("SELECT min(rv), max(rv) FROM events").fetchone()
    assert rows == (4, 7)  # the log on disk is compacted to its size too


def test_a_file_has_one_owner(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path / "store.db")
    with pytest.raises(StoreInUse, match="is another process using it"):
        SqliteStore(tmp_path / "store.db")
    store.close()
    SqliteStore(tmp_path / "store.db").close()


def run_and_kill(path: Path, prefix: str, acknowledgements: int, delay: float) -> list[list[str]]:
    """Start a writer, read that many acknowledgements, then kill -9 it mid-stream (after a
    delay, so the signal lands at different points of a write)."""
    writer = subprocess.Popen(
        [sys.executable, str(WRITER), str(path), prefix],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    watchdog = threading.Timer(30, writer.kill)  # a hung writer fails the test, never CI
    watchdog.start()
    acks: list[list[str]] = []
    try:
        assert writer.stdout is not None
        while len(acks) < acknowledgements:
            line = writer.stdout.readline()
            if not line:
                raise AssertionError(
                    f"writer ended early: {writer.stderr and writer.stderr.read()}"
                )
            acks.append(line.split())
        time.sleep(delay)
        os.kill(writer.pid, signal.SIGKILL)  # while it is still writing
        writer.wait()
    finally:
        watchdog.cancel()
        writer.kill()
        writer.wait()
    assert writer.returncode == -signal.SIGKILL
    return acks


def check_intact(path: Path) -> None:
    """Every row is whole JSON and the file passes SQLite's own integrity check."""
    db = sqlite3.connect(path)
    try:
        assert db.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        for (text,) in db.execute("SELECT json FROM objects UNION ALL SELECT json FROM events"):
            json.loads(text)
    finally:
        db.close()


def test_acknowledged_writes_survive_kill_minus_9(tmp_path: Path) -> None:
    path = tmp_path / "crash.db"
    last_rv = 0
    for round_, (acknowledgements, delay) in enumerate([(150, 0), (400, 0.003), (250, 0.01)]):
        prefix = f"r{round_}"
        acks = run_and_kill(path, prefix, acknowledgements, delay)
        check_intact(path)
        store = SqliteStore(path)
        try:
            last_rv = check_round(store, prefix, acks, last_rv)
        finally:
            store.close()


def check_round(store: SqliteStore, prefix: str, acks: list[list[str]], last_rv: int) -> int:
    """Every acknowledged write is there; what the writer did after the last one is whole."""
    created = [(name, int(rv)) for kind, name, rv in (a[:3] for a in acks) if kind == "C"]
    for name, rv in created:
        obj = store.get(CONFIGMAPS, name, "crash")
        assert obj["data"] == {"value": str(int(name.rsplit("-", 1)[1])), "payload": PAYLOAD}
        assert int(obj["metadata"]["resourceVersion"]) == rv
    acked_rvs = [int(a[-1]) for a in acks]
    assert acked_rvs == sorted(acked_rvs) and acked_rvs[0] > last_rv
    assert store.resource_version >= acked_rvs[-1]
    # Unacknowledged writes that made it are whole ones: the round's names have no gaps.
    numbered = [
        name
        for o in store.list(CONFIGMAPS, "crash").items
        if (name := o["metadata"]["name"]).startswith(f"{prefix}-0")
    ]
    assert numbered == [f"{prefix}-{i:06d}" for i in range(len(numbered))]
    assert len(numbered) >= len(created)
    last_update = max(int(a[2]) for a in acks if a[0] == "U")
    counter = store.get(CONFIGMAPS, f"{prefix}-counter", "crash")
    assert int(counter["data"]["value"]) >= last_update
    # The store carries on from where the killed writer stopped.
    rv = store.resource_version
    after = store.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": prefix}})
    assert int(after["metadata"]["resourceVersion"]) == rv + 1
    return rv + 1
