"""The SQLite file over a hub's life: its history a window that does not grow with age (older
resourceVersions give 410, the space they held goes back to the file system), start-up
memory bounded by that window, clear errors for a file that cannot be used, and writes
refused once the file was removed or replaced under the running store."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from fleetwarden.api.errors import Expired
from fleetwarden.api.registry import REGISTRY
from fleetwarden.store import SqliteStore
from fleetwarden.store.sqlite import StoreError, StoreGone

CONFIG_MAP = REGISTRY.info("v1", "ConfigMap")
BIG = "x" * 20_000


def configmap(name: str, value: str = BIG) -> dict[str, object]:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": "default"},
        "data": {"value": value},
    }


def file_size(path: Path) -> int:
    return sum(p.stat().st_size for p in path.parent.glob(path.name + "*"))


def test_the_history_kept_is_a_window_of_bytes_and_older_versions_are_gone(
    tmp_path: Path,
) -> None:
    path = tmp_path / "store.db"
    store = SqliteStore(path, event_log_bytes=400_000)
    first = store.create(configmap("cm"))["metadata"]["resourceVersion"]
    for i in range(300):  # 6 MB of versions of one object
        current = store.get(CONFIG_MAP, "cm", "default")
        store.update({**current, "data": {"value": f"{i}{BIG}"}})
    recent = str(store.resource_version - 5)
    store.close()
    assert file_size(path) < 2_000_000  # the window, not the 6 MB written

    reopened = SqliteStore(path, event_log_bytes=400_000)
    try:
        with pytest.raises(Expired, match="too old resource version"):
            reopened.watch(CONFIG_MAP, "default", first)
        watch = reopened.watch(CONFIG_MAP, "default", recent)
        events = [next(iter(watch)) for _ in range(5)]
        watch.close()
        assert [e.resource_version for e in events] == list(range(int(recent) + 1, int(recent) + 6))
        assert reopened.get(CONFIG_MAP, "cm", "default")["data"]["value"] == f"299{BIG}"
    finally:
        reopened.close()


def test_the_space_of_deleted_objects_goes_back_to_the_file_system(tmp_path: Path) -> None:
    path = tmp_path / "store.db"
    store = SqliteStore(path, event_log_size=50)
    for i in range(300):
        store.create(configmap(f"cm-{i}"))
    full = file_size(path)
    for i in range(300):
        store.delete(CONFIG_MAP, f"cm-{i}", "default")
    for i in range(100):  # small writes move the window past the big ones
        store.create(configmap(f"small-{i}", "y"))
    store.close()
    assert full > 6_000_000
    assert file_size(path) < full / 3


def test_a_file_made_before_reclaiming_space_is_converted(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    old = sqlite3.connect(path)
    old.execute("CREATE TABLE t (x)")
    old.close()
    SqliteStore(path).close()
    (mode,) = sqlite3.connect(path).execute("PRAGMA auto_vacuum").fetchone()
    assert mode == 2  # INCREMENTAL


def test_a_file_that_is_no_database_is_named_in_one_line(tmp_path: Path) -> None:
    path = tmp_path / "store.db"
    path.write_bytes(b"this is not SQLite, " * 100)
    with pytest.raises(StoreError) as refused:
        SqliteStore(path)
    assert str(refused.value) == (f"{path}: file is not a database (is it a fleetwarden store?)")


def test_a_read_only_file_is_named_in_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "store.db"
    SqliteStore(path).close()
    # Root writes whatever a file's mode says: open it as SQLite opens a read-only file.
    connect = sqlite3.connect
    monkeypatch.setattr(
        sqlite3, "connect", lambda p, **kw: connect(f"file:{p}?mode=ro", uri=True, **kw)
    )
    with pytest.raises(StoreError) as refused:
        SqliteStore(path)
    # SQLite cannot make the WAL's index beside a file it may not write.
    assert str(refused.value) == (
        f"{path}: disk I/O error (is the file read-only, or its disk full?)"
    )


def test_a_missing_directory_is_named_in_one_line(tmp_path: Path) -> None:
    path = tmp_path / "absent" / "store.db"
    with pytest.raises(StoreError) as refused:
        SqliteStore(path)
    assert str(refused.value) == f"{path}: unable to open database file"


@pytest.mark.parametrize("how", ["removed", "replaced"])
def test_a_file_removed_or_replaced_under_the_store_refuses_writes(
    tmp_path: Path, how: str
) -> None:
    path = tmp_path / "store.db"
    store = SqliteStore(path)
    store.create(configmap("before", "1"))
    assert store.healthy
    for file in tmp_path.glob("store.db*"):
        file.unlink()
    if how == "replaced":
        path.write_bytes(b"")
    assert not store.healthy
    with pytest.raises(StoreGone) as refused:
        store.create(configmap("after", "2"))
    assert refused.value.code == 503
    assert f"the store {path} was removed or replaced while the hub ran" in refused.value.message
    assert store.get(CONFIG_MAP, "before", "default")["data"] == {"value": "1"}  # reads go on
    store.close()
