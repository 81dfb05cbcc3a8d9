"""The SQLite store: the shared core over one SQLite file, the embedded default.

Each write (with its garbage-collection cascade and event-log rows) is one transaction,
committed before the in-process cache moves, so a write that returned is on disk. WAL with
synchronous=NORMAL is enough for that against a crashed or killed process (kill -9): a
commit is in the WAL file, in the operating system's hands, when COMMIT returns. Only a
power loss or kernel crash can lose the last commits (never half of one); FULL would
cover that too, at an fsync per write.

The file has one owner: the connection holds an exclusive lock for its life, since a
second process would not see this one's cache.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Sequence
from typing import Unpack

from fleetwarden.store.core import CoreStore, StoredEvent, StoreOptions
from fleetwarden.store.interface import EventType

_SCHEMA = """
CREATE TABLE IF NOT EXISTS objects (
    collection TEXT NOT NULL,
    namespace TEXT NOT NULL,
    name TEXT NOT NULL,
    rv INTEGER NOT NULL,
    json TEXT NOT NULL,
    PRIMARY KEY (collection, namespace, name)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS events (
    rv INTEGER PRIMARY KEY,
    type TEXT NOT NULL,
    collection TEXT NOT NULL,
    namespace TEXT NOT NULL,
    name TEXT NOT NULL,
    json TEXT NOT NULL
);
"""
_UPSERT = (
    "INSERT INTO objects (collection, namespace, name, rv, json) VALUES (?, ?, ?, ?, ?) "
    "ON CONFLICT (collection, namespace, name) DO UPDATE SET rv = excluded.rv, json = excluded.json"
)
_DELETE = "DELETE FROM objects WHERE collection = ? AND namespace = ? AND name = ?"
_LOG = "INSERT INTO events (rv, type, collection, namespace, name, json) VALUES (?, ?, ?, ?, ?, ?)"


class StoreInUse(RuntimeError):
    """The file is held by another process's store."""


class SqliteBackend:
    keeps_text = True

    def __init__(self, path: str | os.PathLike[str]) -> None:
        # Autocommit mode: transactions are the explicit BEGIN/COMMIT of commit(). No busy
        # timeout: the only other party there can be is another process, refused at once.
        self._db = sqlite3.connect(path, isolation_level=None, check_same_thread=False, timeout=0)
        try:
            # Exclusive before WAL: no shared-memory index, and no second process.
            self._db.execute("PRAGMA locking_mode = EXCLUSIVE")
            self._db.execute("PRAGMA journal_mode = WAL")
            self._db.execute("PRAGMA synchronous = NORMAL")
            self._db.executescript(_SCHEMA)
        except sqlite3.OperationalError as err:
            self._db.close()
            raise StoreInUse(f"{os.fspath(path)}: {err} (is another process using it?)") from err
        self._compacted = 0  # what commit() trimmed the log to; the first trim is after open

    def load(self, max_events: int) -> tuple[list[tuple[str, str]], list[StoredEvent]]:
        objects = self._db.execute("SELECT collection, json FROM objects").fetchall()
        rows = self._db.execute(
            "SELECT rv, type, collection, namespace, name, json FROM events "
            "ORDER BY rv DESC LIMIT ?",
            (max_events,),
        ).fetchall()
        events = [
            StoredEvent.of(rv, EventType(t), c, ns, n, j) for rv, t, c, ns, n, j in rows[::-1]
        ]
        return objects, events

    def commit(self, events: Sequence[StoredEvent], compacted: int) -> None:
        db = self._db
        db.execute("BEGIN IMMEDIATE")
        try:
            for e in events:
                text = e.text
                if e.type is EventType.DELETED:
                    db.execute(_DELETE, (e.collection, e.namespace, e.name))
                else:
                    db.execute(_UPSERT, (e.collection, e.namespace, e.name, e.rv, text))
                db.execute(_LOG, (e.rv, e.type.value, e.collection, e.namespace, e.name, text))
            if compacted > self._compacted:
                db.execute("DELETE FROM events WHERE rv <= ?", (compacted,))
            db.execute("COMMIT")
        except BaseException:
            if db.in_transaction:
                db.execute("ROLLBACK")
            raise
        self._compacted = max(self._compacted, compacted)

    def close(self) -> None:
        self._db.close()


class SqliteStore(CoreStore):
    def __init__(self, path: str | os.PathLike[str], **options: Unpack[StoreOptions]) -> None:
        super().__init__(SqliteBackend(path), **options)
