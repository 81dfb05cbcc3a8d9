"""The SQLite store: the shared core over one SQLite file, the embedded default.

Each write (with its garbage-collection cascade and event-log rows) is one transaction,
committed before the in-process cache moves, so a write that returned is on disk; but for
the controllers' writes in a driver's round or a reconcile (CoreStore.deferred), which
share one transaction at its end: group commit. What the API acknowledges or shows is
committed all the same (a write or read from outside commits what is staged first). WAL with
synchronous=NORMAL is enough for that against a crashed or killed process (kill -9): a
commit is in the WAL file, in the operating system's hands, when COMMIT returns. Only a
power loss or kernel crash can lose the last commits (never half of one); FULL would
cover that too, at an fsync per write.

The event log on disk is the core's window of history and no more (older rows go as the
window moves, as etcd compacts), and the space they held goes back to the file system
(incremental auto-vacuum, a bounded WAL file): a hub's file does not grow with its age.

The file has one owner: the connection holds an exclusive lock for its life, since a
second process would not see this one's cache. And it must stay the file that was opened:
one removed or replaced under a running hub (its writes would go nowhere anyone reads) is
noticed at the next write, which is refused, as is every write after it.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Sequence
from typing import Unpack

from fleetwarden.api.errors import StatusError
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
_INCREMENTAL = 2  # PRAGMA auto_vacuum's value for INCREMENTAL
# Free pages (4 KiB each) past which a commit gives them back to the file system.
_FREE_PAGES = 1024
# The WAL file is truncated back to this after a checkpoint (SQLite lets it grow).
_WAL_LIMIT = 16 * 1024 * 1024


class StoreError(RuntimeError):
    """A store file that cannot be used; the message names the file and why."""


class StoreInUse(StoreError):
    """The file is held by another process's store."""


class StoreGone(StatusError):
    """503: the file was removed or replaced while the hub ran; no write goes anywhere."""

    code = 503
    reason = "ServiceUnavailable"


class SqliteBackend:
    keeps_text = True
    groups_commits = True

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = os.fspath(path)
        self._db = _open(self.path)
        self._file = _identity(self.path)
        self._compacted = 0  # what commit() trimmed the log to; the first trim is after open

    @property
    def healthy(self) -> bool:
        """Whether the file is still the one opened."""
        return _identity(self.path) == self._file

    def load(
        self, max_events: int, max_bytes: int
    ) -> tuple[list[tuple[str, str]], list[StoredEvent]]:
        try:
            objects = self._db.execute("SELECT collection, json FROM objects").fetchall()
            rows = self._db.execute(
                "SELECT rv, type, collection, namespace, name, json FROM events "
                "ORDER BY rv DESC LIMIT ?",
                (max_events,),
            )
            newest: list[tuple[int, str, str, str, str, str]] = []
            held = 0
            for row in rows:  # newest first, as long as they fit
                held += len(row[5])
                if newest and held > max_bytes:
                    break
                newest.append(row)
        except sqlite3.DatabaseError as err:
            raise StoreError(f"{self.path}: {err} (is it a fleetwarden store?)") from None
        events = [
            StoredEvent.of(rv, EventType(t), c, ns, n, j) for rv, t, c, ns, n, j in newest[::-1]
        ]
        return objects, events

    def commit(self, events: Sequence[StoredEvent], compacted: int) -> None:
        if not self.healthy:
            raise StoreGone(
                f"the store {self.path} was removed or replaced while the hub ran: writes are "
                "refused; restart the hub"
            )
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
        if compacted > self._compacted:
            self._compacted = compacted
            self._reclaim()

    def _reclaim(self) -> None:
        """Give the pages of compacted rows back to the file system, a batch at a time."""
        (free,) = self._db.execute("PRAGMA freelist_count").fetchone()
        if free > _FREE_PAGES:
            # Stepped to its end by executescript: execute() would free a single page.
            self._db.executescript("PRAGMA incremental_vacuum;")

    def close(self) -> None:
        self._db.close()


def _open(path: str) -> sqlite3.Connection:
    """The database, opened for this process alone; StoreError naming why not."""
    try:
        # Autocommit mode: transactions are the explicit BEGIN/COMMIT of commit(). No busy
        # timeout: the only other party there can be is another process, refused at once.
        db = sqlite3.connect(path, isolation_level=None, check_same_thread=False, timeout=0)
    except sqlite3.Error as err:
        raise StoreError(f"{path}: {err}") from None
    try:
        # Exclusive before WAL: no shared-memory index, and no second process.
        db.execute("PRAGMA locking_mode = EXCLUSIVE")
        (vacuum,) = db.execute("PRAGMA auto_vacuum").fetchone()
        if vacuum != _INCREMENTAL:
            # Takes effect on a new file at once, on an old one by the VACUUM that rewrites it.
            db.execute(f"PRAGMA auto_vacuum = {_INCREMENTAL}")
            db.execute("VACUUM")
        db.execute("PRAGMA journal_mode = WAL")
        db.execute("PRAGMA synchronous = NORMAL")
        db.execute(f"PRAGMA journal_size_limit = {_WAL_LIMIT}")
        db.executescript(_SCHEMA)
    except sqlite3.OperationalError as err:
        db.close()
        if "locked" in str(err):
            raise StoreInUse(f"{path}: {err} (is another process using it?)") from None
        hint = " (is the file read-only, or its disk full?)" if "I/O" in str(err) else ""
        raise StoreError(f"{path}: {err}{hint}") from None
    except sqlite3.DatabaseError as err:
        db.close()
        raise StoreError(f"{path}: {err} (is it a fleetwarden store?)") from None
    return db


def _identity(path: str) -> tuple[int, int] | None:
    """The file's device and inode, or None when there is none."""
    try:
        stat = os.stat(path)
    except OSError:
        return None
    return stat.st_dev, stat.st_ino


class SqliteStore(CoreStore):
    def __init__(self, path: str | os.PathLike[str], **options: Unpack[StoreOptions]) -> None:
        self._sqlite = SqliteBackend(path)
        super().__init__(self._sqlite, **options)

    @property
    def healthy(self) -> bool:
        """Whether the store can still write: readiness, for the hub."""
        return self._sqlite.healthy
