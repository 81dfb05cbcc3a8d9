"""The etcd store: Kubernetes storage semantics over etcd v3, for several hub replicas.

Keys are `<prefix>/<group>/<plural>/<namespace>/<name>` (the legacy group's objects under
`<prefix>/core/...`); a value is the object's canonical JSON without its resourceVersion,
which is the key's mod revision, as kube-apiserver keeps them. A write is one transaction
that compares the key's mod revision with the one the write was planned on (a create: that
the key is absent).

Each replica holds every object in a watch cache (the core's cache and event log), fed by
one etcd watch from the revision it listed at: N clients watching Clusters cost one etcd
watch, and watches are served from the cache. A write waits until the watch has brought
it back, so its replica reads it at once and the subscribers (informers) have seen it when
the write returns. A get or list first waits for the cache to reach etcd's current
revision, as kube-apiserver's consistent reads from its cache do, so what one replica
acknowledged every replica reads. The watch covers every key, not only the prefix, so
that each revision reaches the cache and that wait ends.

A write planned on a cache that was behind (another replica wrote the key) fails its
compare; the cache is brought up to etcd's revision and the write planned again, as
kube-apiserver's GuaranteedUpdate retries on a fresh object.

When etcd cannot be reached a request fails with a 503 (504 when a write's answer timed
out); the watch is taken up again from where it was, and if etcd compacted past that
meanwhile the cache is listed afresh: subscribers are told what changed and client
watches are ended (they resume from the cache's window, or get 410 and list again).
"""

from __future__ import annotations

import heapq
import itertools
import json
import logging
import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from typing import Any, TypeVar, Unpack

from fleetwarden.api.errors import AlreadyExists, Conflict, NotFound, StatusError
from fleetwarden.store.core import (
    CoreStore,
    Key,
    StoredEvent,
    StoreOptions,
    _encode,
    _Entry,
    _entry,
    _freeze,
    _path,
    _thaw,
    _Txn,
)
from fleetwarden.store.etcd_client import (
    DELETE,
    Compacted,
    EtcdClient,
    EtcdSlow,
    EtcdTimeout,
    EtcdTLS,
    EtcdUnavailable,
    Event,
    Kv,
)
from fleetwarden.store.interface import EventType, Obj

logger = logging.getLogger(__name__)

DEFAULT_PREFIX = "/registry"
_CORE = "core"  # the legacy group's key segment
_PAGE = 500  # keys per range while listing
_ATTEMPTS = 32  # plans of one write before giving up on a key that keeps moving
_RETRY = 0.5  # seconds between attempts to watch again while etcd cannot be reached
# How long the first list waits for an etcd that is there but does not answer yet (a member
# still starting, a loaded machine); one that refuses fails the start at once.
STARTUP_PATIENCE = 60.0
_R = TypeVar("_R")


class _NoBackend:
    """The core's backend: etcd is written by EtcdStore itself, transaction by transaction."""

    keeps_text = False

    def load(self, max_events: int, max_bytes: int) -> tuple[list[tuple[str, str]], list[Any]]:
        return [], []

    def commit(self, events: Sequence[StoredEvent], compacted: int) -> None:
        raise AssertionError("the etcd store commits through etcd")

    def close(self) -> None:
        pass


class EtcdStore(CoreStore):
    def __init__(
        self,
        endpoints: Sequence[str],
        *,
        prefix: str = DEFAULT_PREFIX,
        tls: EtcdTLS | None = None,
        timeout: float = 5.0,
        observe: Callable[[str, float], None] | None = None,
        **options: Unpack[StoreOptions],
    ) -> None:
        """`observe(operation, seconds)` is told each etcd request's latency."""
        prefix = ("/" + prefix.strip("/")).rstrip("/")  # "/" and "" alike: the root
        self.etcd = EtcdClient(endpoints, tls, timeout, observe)
        self._prefix = prefix + "/"
        self._timeout = timeout
        self._closed = threading.Event()
        # Writers and readers waiting for the cache to reach a revision, each woken only
        # once it has: (revision, arrival, a lock held until then).
        self._applied = threading.Lock()
        self._waiting: list[tuple[int, int, Any]] = []
        self._arrivals = itertools.count()
        self._follower: threading.Thread | None = None
        self._seen = 0  # the newest revision whose events the subscribers have had
        self._connected = True  # whether the watch is open
        self._owed = 0  # the newest revision a subscriber wrote (see _receive)
        # Dependents of owners that subscribers removed, by the removal's revision.
        self._uncollected: deque[tuple[int, Sequence[Key]]] = deque()
        self._watching: Any = None
        # Consistent reads' rounds of etcd's revision (see _current_revision): begun, ended,
        # and the last one's answer.
        self._reads = threading.Condition()
        self._asked = self._answered = 0
        self._answer: int | StatusError = 0
        super().__init__(_NoBackend(), **options)

    @property
    def healthy(self) -> bool:
        """Whether etcd is watched: while it is not, reads wait and fail."""
        return self._connected and not self._closed.is_set()

    @property
    def cached_objects(self) -> int:
        """How many objects the watch cache holds."""
        return sum(len(objects) for objects in self._objects.values())

    def close(self) -> None:
        self._closed.set()
        watching = self._watching
        if watching is not None:
            watching.close()
        if self._follower is not None and self._follower is not threading.current_thread():
            self._follower.join(self._timeout)
        self._let_go(self._seen, everyone=True)
        super().close()
        self.etcd.close()

    # --- writes ------------------------------------------------------------------------

    def _run(self, plan: Callable[[_Txn], _R]) -> _R:
        synced, moving = False, ("", "", "")
        for _ in range(_ATTEMPTS):
            try:
                with self._lock:
                    txn = _Txn(self)
                    result = plan(txn)
            except (Conflict, NotFound, AlreadyExists):
                if synced:
                    raise
                self._sync()  # the cache may be behind what the caller read elsewhere
                synced = True
                continue
            if txn.event is None:
                return result
            revision = self.etcd.put_if(self._key(txn.event), _value(txn), txn.prior)
            if revision is None:  # the key moved on since the cache saw it
                moving = _qualified(txn.event)
                self._sync()
                synced = True
                continue
            if isinstance(result, dict) and result is txn.stored:
                result["metadata"]["resourceVersion"] = str(revision)
            self._wait(revision)
            if threading.current_thread() is self._follower:
                # A subscriber's removal: its dependents are collected once this watch has
                # brought the removal back (before, the owner is still in the cache).
                self._uncollected.append((revision, txn.dependents))
            else:
                self._collect_all(txn.dependents)
            return result
        raise Conflict(*moving)

    # --- the watch cache ---------------------------------------------------------------

    def _load(self) -> None:
        revision = self._seen = self._first_list()
        self._follower = threading.Thread(
            target=self._follow, args=(revision,), name="etcd-watch", daemon=True
        )
        self._follower.start()
        self._collect_dangling()

    def _first_list(self) -> int:
        """The first list, tried again while etcd is slow to answer, for STARTUP_PATIENCE."""
        deadline = time.monotonic() + STARTUP_PATIENCE
        while True:
            try:
                return self._list_all()
            except EtcdSlow as err:
                if time.monotonic() >= deadline:
                    raise
                logger.warning("%s; listing again", err)

    def _list_all(self, revision: int = 0) -> int:
        """Fill the cache with every object under the prefix at one revision; returns it."""
        start, end = self._prefix, self._prefix[:-1] + chr(ord(self._prefix[-1]) + 1)
        while True:
            kvs, revision, more = self.etcd.range(start, end, revision=revision, limit=_PAGE)
            for kv in kvs:
                stored = self._stored(kv)
                if stored is not None:
                    event, entry = stored
                    self._apply(_key_of(event), entry)
            if not more:
                break
            start = kvs[-1].key.decode() + "\0"
        self._rv = revision
        return revision

    def _follow(self, revision: int) -> None:
        """The cache's one etcd watch, taken up again until the store is closed."""
        while not self._closed.is_set():
            try:
                self._watching = self.etcd.watch(self._rv + 1)
                self._connected = True
                if self._closed.is_set():
                    # close() came while the watch was being opened, and found none to end:
                    # else this thread would read it, and hold its connection, for good.
                    self._watching.close()
                for events in self._watching:
                    self._receive(events)
            except Compacted:
                self._relist()
            except EtcdUnavailable as err:
                self._connected = False
                logger.warning("%s; watching again", err)
            if not self._closed.is_set():
                self._closed.wait(_RETRY)

    def _receive(self, events: Sequence[Event]) -> None:
        """One watch response: into the cache, the log and the client watches, then to the
        subscribers; then the writers waiting for it are let go."""
        with self._lock:
            for change in events:
                revision = change.kv.mod_revision
                deleted = change.type == DELETE
                stored = self._stored(change.kv, deleted)
                if stored is None:
                    self._rv = revision  # a key outside the prefix
                    continue
                event, entry = stored
                self._record(event, entry, self._overflow(event))
            revision = self._rv
        self._dispatch()
        self._collect_removed(revision)
        # A subscriber's write comes back on this very watch, after its callback returned:
        # the write whose event called it returns once that has been heard too, as in the
        # core store, where the outermost dispatch delivers what subscribers wrote.
        if revision >= self._owed:
            self._let_go(revision)

    def _collect_removed(self, revision: int) -> None:
        """The garbage subscribers' removals left, once the cache has them."""
        while self._uncollected and self._uncollected[0][0] <= revision:
            _, dependents = self._uncollected.popleft()
            self._collect_all(dependents)

    def _let_go(self, revision: int, *, everyone: bool = False) -> None:
        with self._applied:
            self._seen = max(self._seen, revision)
            waiting = self._waiting
            while waiting and (everyone or waiting[0][0] <= revision):
                heapq.heappop(waiting)[2].release()

    def _relist(self) -> None:
        """etcd compacted past the watch: list afresh, tell subscribers what changed, and
        end the client watches, whose events in between are lost."""
        logger.warning("etcd compacted past the watch cache's revision; listing again")
        with self._lock:
            before = self._all()
            self._objects.clear()
            self._uids.clear()
            self._dependents.clear()
            revision = self._list_all()
            changes = self._differences(before, revision)
            self._log.clear()
            self._held = 0
            for watch in self._watches:
                watch.close()
            self._watches.clear()
            if self._subscribers:
                self._pending.extend(changes)
        self._dispatch()
        self._let_go(revision)

    def _differences(self, before: dict[Key, _Entry], revision: int) -> Sequence[StoredEvent]:
        changes = []
        for (collection, path), entry in sorted(self._all().items()):
            old = before.pop((collection, path), None)
            if old is None or old.rv != entry.rv:
                kind = EventType.ADDED if old is None else EventType.MODIFIED
                changes.append(_event(entry.rv, kind, collection, entry))
        for (collection, _), old in sorted(before.items()):
            changes.append(_event(revision, EventType.DELETED, collection, old))
        return changes

    def _all(self) -> dict[Key, _Entry]:
        return {(c, p): e for c, objects in self._objects.items() for p, e in objects.items()}

    def _stored(self, kv: Kv, deleted: bool = False) -> tuple[StoredEvent, _Entry | None] | None:
        """A key's change as the core's event and cache entry (None for a deletion), or
        None for a key outside the prefix. A deleted object is the cache's last state of it
        (the watch brings every change in order, so the cache holds it until then; etcd is
        not asked for each deleted key's previous value)."""
        key = kv.key.decode()
        if not key.startswith(self._prefix):
            return None
        revision = kv.mod_revision
        obj: Obj
        try:
            collection, namespace, name = _parse_key(key[len(self._prefix) :])
            if deleted:
                cached = self._lookup((collection, _path(namespace, name)))
                if cached is None:
                    return None  # an object the cache never took: nothing to remove
                obj = _thaw(cached.blob)
            else:
                obj = json.loads(kv.value)
            meta = obj["metadata"]
        except (ValueError, LookupError, TypeError):
            logger.warning("etcd key %s holds no object of this store: ignored", key)
            return None
        meta["resourceVersion"] = str(revision)
        obj["metadata"] = dict(sorted(meta.items()))  # canonical: sorted keys
        blob = _freeze(obj)
        if deleted:
            kind = EventType.DELETED
        else:
            kind = EventType.ADDED if kv.version == 1 else EventType.MODIFIED
        entry = None if deleted else _entry(blob, obj["metadata"], revision)
        return StoredEvent(revision, kind, collection, namespace, name, blob), entry

    def _sync(self) -> None:
        """Reads come from the cache, once it has every change etcd had when asked: what
        one replica acknowledged, every replica reads."""
        if threading.current_thread() is self._follower:
            return  # a subscriber reading: the cache is where its event left it
        self._wait(self._current_revision())

    def _current_revision(self) -> int:
        """etcd's revision, read through the quorum after this call began. Concurrent
        readers share one read, as kube-apiserver's consistent reads from its cache share one
        progress notification: a reader that comes while a read is under way (it may have
        been answered before a write the reader knows of) waits for it, then for the next
        one, which answers every reader waiting by then."""
        with self._reads:
            needed = self._asked + 1  # the first round to begin after now
            while self._answered < needed and self._asked > self._answered:
                self._reads.wait()
            if self._answered >= needed:
                return _answer(self._answer)
            self._asked = mine = self._answered + 1
        answer: int | StatusError = StatusError("etcd's revision was not read")
        try:
            answer = self.etcd.revision()
        except StatusError as err:
            answer = err
            raise
        finally:
            with self._reads:
                self._answered, self._answer = mine, answer
                self._reads.notify_all()
        return answer

    def _wait(self, revision: int) -> None:
        if threading.current_thread() is self._follower:
            # A subscriber writing: its write comes back after its callback returns, and
            # holds back the writers waiting until then.
            self._owed = max(self._owed, revision)
            return
        with self._applied:
            if self._seen >= revision:
                return
            waiter = threading.Lock()
            waiter.acquire()
            entry = (revision, next(self._arrivals), waiter)
            heapq.heappush(self._waiting, entry)
        if not self._closed.is_set():
            waiter.acquire(timeout=self._timeout)
        with self._applied:
            if self._seen >= revision:
                return
            if entry in self._waiting:
                self._waiting.remove(entry)
                heapq.heapify(self._waiting)
        raise EtcdTimeout(f"the watch cache is at revision {self._seen}, behind etcd's {revision}")

    def _key(self, event: StoredEvent) -> str:
        plural, group, _ = _qualified(event)
        return self._prefix + f"{group or _CORE}/{plural}/" + _path(event.namespace, event.name)


def _value(txn: _Txn) -> bytes | None:
    """What etcd keeps for the write: None for a removal, else the object's canonical JSON
    without its resourceVersion (the key's mod revision)."""
    if txn.entry is None:
        return None
    stored = txn.stored
    assert stored is not None
    meta = dict(stored["metadata"])
    del meta["resourceVersion"]
    return _encode({**stored, "metadata": meta}).encode()


def _answer(answer: int | StatusError) -> int:
    """A shared read's revision, or its error (a copy: each reader raises its own)."""
    if isinstance(answer, StatusError):
        raise type(answer)(answer.message)
    return answer


def _parse_key(rest: str) -> tuple[str, str, str]:
    """(collection, namespace, name) of a key's part after the prefix."""
    group, plural, *path = rest.split("/")
    namespace, name = (path[0], path[1]) if len(path) == 2 else ("", path[0])
    return f"{'' if group == _CORE else group}/{plural}", namespace, name


def _qualified(event: StoredEvent) -> tuple[str, str, str]:
    """(plural, group, name) of the event's object, as Conflict names it."""
    group, plural = event.collection.split("/", 1)
    return plural, group, event.name


def _key_of(event: StoredEvent) -> Key:
    return event.collection, _path(event.namespace, event.name)


def _event(revision: int, kind: EventType, collection: str, entry: _Entry) -> StoredEvent:
    return StoredEvent(revision, kind, collection, entry.namespace, entry.name, entry.blob)
