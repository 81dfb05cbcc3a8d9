"""Group commit on SQLite (CoreStore.deferred): a thread's writes in the block reach the
cache and the subscribers at once and the file in one transaction at its end; a write,
read or watch from any other thread commits what is staged first, so that what the API
acknowledges or shows is on disk."""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from fleetwarden.store import MemoryStore, SqliteStore
from fleetwarden.store.core import StoredEvent

from .conftest import CONFIGMAPS

Commits = list[list[int]]


def configmap(name: str, value: str = "v") -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": "default"},
        "data": {"value": value},
    }


@pytest.fixture
def store(tmp_path: Path) -> Iterator[SqliteStore]:
    store = SqliteStore(tmp_path / "store.db")
    yield store
    store.close()


@pytest.fixture
def commits(store: SqliteStore) -> Commits:
    """The resourceVersions of each transaction the backend commits."""
    seen: Commits = []
    backend = store._sqlite
    commit = backend.commit

    def counted(events: Sequence[StoredEvent], compacted: int) -> None:
        commit(events, compacted)
        seen.append([e.rv for e in events])

    backend.commit = counted  # type: ignore[method-assign]
    return seen


def on_disk(store: SqliteStore) -> list[str]:
    rows = store._sqlite._db.execute("SELECT name FROM objects ORDER BY name").fetchall()
    return [name for (name,) in rows]


def in_another_thread(action: Any) -> Any:
    result: list[Any] = []
    thread = threading.Thread(target=lambda: result.append(action()))
    thread.start()
    thread.join()
    return result[0]


def test_a_blocks_writes_are_one_transaction_at_its_end(
    store: SqliteStore, commits: Commits
) -> None:
    heard: list[int] = []
    store.subscribe(lambda event: heard.append(event.resource_version))
    with store.deferred():
        store.create(configmap("a"))
        with store.deferred():  # nested: still the outer block's
            store.create(configmap("b"))
        store.update(configmap("a", "w"))
        # The thread reads its writes; subscribers heard them; the file has none yet.
        assert store.get(CONFIGMAPS, "a", "default")["data"]["value"] == "w"
        assert heard == [1, 2, 3]
        assert on_disk(store) == []
        assert commits == []
    assert commits == [[1, 2, 3]]
    assert on_disk(store) == ["a", "b"]


def test_a_write_from_another_thread_commits_what_is_staged_with_it(
    store: SqliteStore, commits: Commits
) -> None:
    with store.deferred():
        store.create(configmap("controller"))
        created = in_another_thread(lambda: store.create(configmap("api")))
        # Acknowledged: on disk, with the write staged before it.
        assert created["metadata"]["resourceVersion"] == "2"
        assert on_disk(store) == ["api", "controller"]
        store.create(configmap("later"))
    assert commits == [[1, 2], [3]]


def test_a_read_from_another_thread_sees_only_what_is_committed(
    store: SqliteStore, commits: Commits
) -> None:
    with store.deferred():
        store.create(configmap("a"))
        listed = in_another_thread(lambda: store.list(CONFIGMAPS))
        assert [o["metadata"]["name"] for o in listed.items] == ["a"]
        assert commits == [[1]]  # committed before it was shown
        store.create(configmap("b"))
        in_another_thread(lambda: store.get(CONFIGMAPS, "b", "default"))
        assert commits == [[1], [2]]
    assert commits == [[1], [2]]  # nothing left to commit


def test_watches_hear_deferred_writes_once_committed(store: SqliteStore) -> None:
    watch = store.watch(CONFIGMAPS)
    with store.deferred():
        store.create(configmap("a"))
        store.create(configmap("b"))
        assert watch._queue.qsize() == 0  # not durable yet: not told
    watch.close()
    assert [(e.type.value, e.resource_version) for e in watch] == [("ADDED", 1), ("ADDED", 2)]


def test_a_watch_started_meanwhile_replays_what_it_asks_for_once(store: SqliteStore) -> None:
    with store.deferred():
        store.create(configmap("a"))
        watch = store.watch(CONFIGMAPS, resource_version="0")
        store.create(configmap("b"))
    watch.close()
    assert [(e.type.value, e.resource_version) for e in watch] == [("ADDED", 1), ("ADDED", 2)]


def test_closing_commits_what_is_staged(tmp_path: Path) -> None:
    path = tmp_path / "store.db"
    store = SqliteStore(path)
    with store.deferred():
        store.create(configmap("a"))
        store.close()
    rows = sqlite3.connect(path).execute("SELECT name FROM objects").fetchall()
    assert rows == [("a",)]


def test_a_failed_commit_leaves_the_writes_staged_for_the_next(
    store: SqliteStore, commits: Commits
) -> None:
    backend = store._sqlite
    counted = backend.commit

    def failing(events: Sequence[StoredEvent], compacted: int) -> None:
        raise OSError("disk full")

    backend.commit = failing  # type: ignore[method-assign]
    with pytest.raises(OSError, match="disk full"), store.deferred():
        store.create(configmap("a"))
    backend.commit = counted  # type: ignore[method-assign]
    store.create(configmap("b"))
    assert commits == [[1, 2]]
    assert on_disk(store) == ["a", "b"]


def test_the_memory_store_has_nothing_to_group() -> None:
    store = MemoryStore()
    with store.deferred():
        store.create(configmap("a"))
    assert store._staged == []
    assert store.get(CONFIGMAPS, "a", "default")["metadata"]["resourceVersion"] == "1"
