"""Kubernetes storage semantics, written once over a small persistence Backend.

`CoreStore` is what the API server's generic registry and etcd3 storage do together:
resourceVersion, generation, the status subresource, finalizers and deletionTimestamp,
ownerReference garbage collection, lists with selectors and continue tokens, and watch.
Every object lives in an in-process cache (reads never touch the backend); a Backend only
makes each write durable, atomically, before the cache moves. What is stored is canonical
JSON (JSON types, sorted keys); the cache keeps it marshalled, since marshal.loads gives a
fresh copy several times faster than json.loads, and each read must hand out a copy of its
own. The JSON text itself is made only for a backend that persists it.

One global resourceVersion counts changes, and each write changes one object and is one
event, so the event log alone says what happened: a backend persists both the objects and
the log from the events. The garbage collector's deletes (and an orphaning delete's
updates of the dependents) are writes of their own, made by the write that calls for them
before it returns, as kube's collector makes them one by one; one a crash cut short is
finished when the store is opened again.

Deviations from Kubernetes, on purpose:
- A continued list is served from the current state (keys after the last one returned),
  not from a snapshot at the first page's resourceVersion; the token still expires once
  that resourceVersion is compacted.
- Garbage collection is run by the request that removes an owner, not by a controller
  later, and ownerReferences are matched by uid. An orphaning delete drops the dependents'
  references before it deletes (no `orphan` finalizer for a collector to process);
  foreground deletion is not offered.
- A watch from resource_version None sends no initial state (the protocol's choice); "0"
  sends synthetic ADDED events for what exists, as Kubernetes does.

A watch whose reader falls more than `watch_buffer` events behind is ended, as the API
server's cacher ends a watcher whose buffer is full: its reader gets what was queued,
then the end, and watches again from the last resourceVersion it saw (or lists again).
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import json
import logging
import marshal
import math
import random
import threading
import uuid
from bisect import bisect_left
from collections import deque
from collections.abc import Callable, Iterator, Mapping, Sequence
from datetime import UTC, datetime
from functools import partial
from queue import SimpleQueue
from typing import Any, NamedTuple, Protocol, TypedDict, TypeVar

from fleetwarden.api.codec import MAX_DEPTH, DocumentError, check_depth, load_json
from fleetwarden.api.errors import (
    AlreadyExists,
    BadRequest,
    Conflict,
    Expired,
    Invalid,
    NotFound,
    Path,
    RequestEntityTooLarge,
    StatusError,
    name_mismatch,
    namespace_mismatch,
    type_mismatch,
)
from fleetwarden.api.kinds import FieldGetter, FieldLabels, KindInfo
from fleetwarden.api.meta import format_time
from fleetwarden.api.registry import REGISTRY, field_labels
from fleetwarden.semantics.selectors import (
    FieldSelector,
    Selector,
    SelectorError,
    parse_field_selector,
    parse_selector,
)
from fleetwarden.store.interface import (
    EventType,
    ListResult,
    NewUid,
    Now,
    Obj,
    PatchType,
    Propagation,
    Store,
    Watch,
    WatchEvent,
    collection_of,
)
from fleetwarden.store.merge_keys import merge_keys_for
from fleetwarden.store.patch import PatchError, json_patch, merge_patch, strategic_merge_patch

logger = logging.getLogger(__name__)
DEFAULT_EVENT_LOG_SIZE = 10_000
# The most object bytes (marshalled) the event log keeps, whatever its count: a window of
# large objects is shorter, as etcd's compaction keeps a window of history, not all of it.
DEFAULT_EVENT_LOG_BYTES = 64 * 1024 * 1024
# kube-apiserver's bound on the operations of one JSON patch.
MAX_JSON_PATCH_OPERATIONS = 10_000
# Events a watch may hold for its reader (the initial ones aside) before it is ended.
# Below the log's size, so that what a watch holds is mostly what the log holds anyway.
DEFAULT_WATCH_BUFFER = 4_096
# utilrand's alphabet: no vowels (no words), no 0/1/3 (no look-alikes).
_NAME_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"
_GENERATED_SUFFIX = 5
_MAX_GENERATED_PREFIX = 63 - _GENERATED_SUFFIX
_GENERATE_ATTEMPTS = 8  # the API server retries a generated name that is taken
# Kept from the stored object on every update: the system's fields and the object's key.
_SYSTEM_FIELDS = (
    "name",
    "namespace",
    "uid",
    "creationTimestamp",
    "generation",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
)
_KEPT_FIELDS = (*_SYSTEM_FIELDS, "resourceVersion")
_EXPIRED_CONTINUE = (
    "The provided continue parameter is too old to display a consistent list result. "
    "You can start a new list without the continue parameter, or use the continue token in "
    "this response to retrieve the remainder of the results. Continuing with the provided "
    "token results in an inconsistent list - objects that were created, modified, or deleted "
    "between the time the first chunk was returned and now may show up in the list."
)

# Canonical text: sorted keys, as Go's encoding/json writes an unstructured object.
_encode = json.JSONEncoder(separators=(",", ":"), sort_keys=True, allow_nan=False).encode


def _decode(text: str | bytes) -> Obj:
    obj: Obj = json.loads(text)
    return obj


def _freeze(obj: Obj) -> bytes:
    """The object marshalled. Version 2 writes neither references nor interned strings:
    a canonical copy shares its strings with the object it was made from, and marshal's
    later versions would flag each one, which costs every later thaw more than they save."""
    return marshal.dumps(obj, 2)


def _thaw(blob: bytes) -> Obj:
    obj: Obj = marshal.loads(blob)
    return obj


class _NotPlain(Exception):
    """A value the JSON round trip would convert or refuse: left to the json module."""


def _canonical(obj: Obj, old: Obj | None = None) -> Obj:
    """A fresh copy of the object as canonical JSON text would give it back: JSON types,
    keys sorted at every level. Plain values (dicts with string keys, lists, strings,
    finite numbers, booleans, None) are copied directly; anything else goes through the
    text, which converts it (a tuple becomes a list) or refuses it, as it always did.

    `old`, if given, is canonical and the caller's to give away (a thawed copy nobody
    else holds, none of it changed in place since): a part of `obj` that *is* the part of
    `old` at the same place is taken as it is, neither walked nor copied. An update
    that changes a Work's status this way walks the status, not the manifests."""
    try:
        return _plain_dict(obj, _NOTHING if old is None else old)
    except (_NotPlain, TypeError, RecursionError):
        return _decode(_encode(obj))


_isfinite = math.isfinite
_NOTHING: dict[str, Any] = {}  # no old object: nothing to take as it is


def _plain_dict(obj: dict[str, Any], old: dict[str, Any]) -> dict[str, Any]:
    copy: dict[str, Any] = {}
    for key in sorted(obj):
        if type(key) is not str:
            raise _NotPlain
        value = obj[key]
        prior = old.get(key)
        kind = type(value)
        if value is prior or kind is str or kind is int or kind is bool or value is None:
            copy[key] = value
        elif kind is dict:
            copy[key] = _plain_dict(value, prior if type(prior) is dict else _NOTHING)
        elif kind is list:
            copy[key] = _plain_list(value)
        elif kind is float and _isfinite(value):
            copy[key] = value
        else:
            raise _NotPlain
    return copy


def _plain_list(values: list[Any]) -> list[Any]:
    copy: list[Any] = []
    for value in values:
        kind = type(value)
        if kind is str or kind is int or kind is bool or value is None:
            copy.append(value)
        elif kind is dict:
            copy.append(_plain_dict(value, _NOTHING))
        elif kind is list:
            copy.append(_plain_list(value))
        elif kind is float and _isfinite(value):
            copy.append(value)
        else:
            raise _NotPlain
    return copy


# What a kind's field selectors may use.
FieldsFunc = Callable[[KindInfo], FieldLabels]
KindsFunc = Callable[[str, str], KindInfo]
Key = tuple[str, str]  # (collection, path); path is `namespace/name`, or `name`
_S = TypeVar("_S", Selector, FieldSelector)
_R = TypeVar("_R")


class StoreOptions(TypedDict, total=False):
    """CoreStore's keyword arguments, for the stores built on it."""

    now: Now | None
    new_uid: NewUid | None
    rng: random.Random | None
    kinds: KindsFunc
    fields: FieldsFunc
    event_log_size: int
    event_log_bytes: int
    watch_buffer: int


class StoredEvent(NamedTuple):
    """One committed change; the object at that resourceVersion, marshalled (what readers
    get copies from), and as canonical JSON text if the backend keeps text. A tuple: one is
    made per write."""

    rv: int
    type: EventType
    collection: str
    namespace: str
    name: str
    blob: bytes
    encoded: str | None = None

    @classmethod
    def of(
        cls, rv: int, type_: EventType, collection: str, namespace: str, name: str, text: str
    ) -> StoredEvent:
        """An event read back from a backend."""
        return cls(rv, type_, collection, namespace, name, _freeze(_decode(text)), text)

    @property
    def text(self) -> str:
        """The object as canonical JSON text, what a backend stores."""
        return self.encoded if self.encoded is not None else _encode(_thaw(self.blob))

    def to_watch_event(self) -> WatchEvent:
        return _StoredWatchEvent(self.type, self.collection, self.rv, self.blob)


class _StoredWatchEvent(WatchEvent):
    """A store's event: its object thawed from the blob on first access."""

    __slots__ = ("_blob", "_rv")

    def __init__(self, type_: EventType, collection: str, rv: int, blob: bytes) -> None:
        self._type, self._collection, self._object = type_, collection, None
        self._rv, self._blob = rv, blob

    @property
    def object(self) -> Obj:
        obj = self._object
        if obj is None:
            obj = self._object = _thaw(self._blob)
        return obj

    @property
    def resource_version(self) -> int:
        return self._rv


class _Entry(NamedTuple):
    """A cached object (marshalled), and what lists and garbage collection look up."""

    blob: bytes
    namespace: str
    name: str
    rv: int
    uid: str
    labels: dict[str, str]
    owners: tuple[str, ...]


# Objects by (namespace, name): as cached, as logged (marshalled), or None where unknown.
_State = dict[tuple[str, str], _Entry | bytes | None]


class Backend(Protocol):
    """Durable storage for the cache: objects and the event log, written by events."""

    # Whether commit() reads the events' text: then each write makes it at once, from the
    # object it has in hand; a backend that keeps nothing spares every write that work.
    keeps_text: bool
    # A backend may also say `groups_commits = True`: writes made in CoreStore.deferred()
    # may then wait for one commit at its end (group commit), worth it where each
    # transaction costs. Without it, every write commits on its own.

    def load(
        self, max_events: int, max_bytes: int
    ) -> tuple[list[tuple[str, str]], list[StoredEvent]]:
        """(collection, object text) of every object, and the newest events (at most
        max_events of them, and no more object text than max_bytes), oldest first."""
        ...

    def commit(self, events: Sequence[StoredEvent], compacted: int) -> None:
        """Apply the events' objects and append them to the log in one transaction,
        dropping logged events at or below `compacted`. Raises if nothing was written."""
        ...

    def close(self) -> None: ...


def _path(namespace: str, name: str) -> str:
    return f"{namespace}/{name}" if namespace else name


# The labels of every entry without any: one dict for all of them (no one changes it).
_NO_LABELS: dict[str, str] = {}


def _entry(blob: bytes, meta: Mapping[str, Any], rv: int) -> _Entry:
    refs = meta.get("ownerReferences")
    labels = meta.get("labels")
    return _Entry(
        blob,
        meta.get("namespace", ""),
        meta["name"],
        rv,
        meta.get("uid", ""),
        dict(labels) if labels else _NO_LABELS,
        tuple([ref.get("uid", "") for ref in refs]) if refs else (),
    )


class _NoSuchSubresource(NotFound):
    def __init__(self) -> None:
        StatusError.__init__(self, "the server could not find the requested resource")


class _Unprocessable(StatusError):
    """422 for a patch that does not apply, as the API server words it."""

    code = 422
    reason = "Invalid"


class _UnsupportedMediaType(StatusError):
    """415 for a patch type the kind does not take (a strategic merge patch of a custom
    resource), as the API server words it."""

    code = 415
    reason = "UnsupportedMediaType"

    def __init__(self, accepted: Sequence[PatchType]) -> None:
        super().__init__(
            "the body of the request was in an unknown format - accepted media types "
            "include: " + ", ".join(accepted)
        )


class _Txn:
    """One write: the object it changes, staged over the cache until the backend has
    committed it, and the dependents its removal leaves to the garbage collector (each a
    write of its own after it, as kube's collector deletes each dependent on its own)."""

    def __init__(self, store: CoreStore) -> None:
        self.store = store
        self.event: StoredEvent | None = None
        self.entry: _Entry | None = None  # as staged; None for a removal
        self.stored: Obj | None = None  # the object as staged, as put() returned it
        self.prior = 0  # the resourceVersion the object has before this write (0: none)
        self.dependents: list[Key] = []

    def put(self, key: Key, obj: Obj, type_: EventType, old: Obj | None = None) -> Obj:
        """Stage the object at the next resourceVersion; returns it as stored, a fresh copy
        in canonical form (JSON types, sorted keys), whatever shape it came in. `old`: as
        _canonical takes it; the object's metadata must not be `old`'s own."""
        assert self.event is None, "a write changes one object"
        store = self.store
        prior = store._lookup(key)
        self.prior = prior.rv if prior is not None else 0
        rv = store._rv + 1
        obj["metadata"]["resourceVersion"] = str(rv)
        stored = _canonical(obj, old)
        blob = _freeze(stored)
        text = _encode(stored) if store._backend.keeps_text else None
        self.entry = _entry(blob, stored["metadata"], rv)
        self.event = StoredEvent(
            rv, type_, key[0], self.entry.namespace, self.entry.name, blob, text
        )
        self.stored = stored
        return stored

    def remove(self, key: Key, obj: Obj) -> Obj:
        """DELETED carries the last stored state at a new resourceVersion."""
        stored = self.put(key, obj, EventType.DELETED)
        self.entry = None
        return stored


class CoreStore:
    """The Store protocol over a Backend; see the module docstring for the semantics."""

    def __init__(
        self,
        backend: Backend,
        *,
        now: Now | None = None,
        new_uid: NewUid | None = None,
        rng: random.Random | None = None,
        kinds: KindsFunc = REGISTRY.info,
        fields: FieldsFunc = field_labels,
        event_log_size: int = DEFAULT_EVENT_LOG_SIZE,
        event_log_bytes: int = DEFAULT_EVENT_LOG_BYTES,
        watch_buffer: int = DEFAULT_WATCH_BUFFER,
    ) -> None:
        if min(event_log_size, event_log_bytes, watch_buffer) < 1:
            raise ValueError("event_log_size, event_log_bytes and watch_buffer must be positive")
        self._backend = backend
        self._now = now or (lambda: datetime.now(UTC))
        self._new_uid = new_uid or (lambda: str(uuid.uuid4()))
        # Generated names must repeat when uids do (the simulator's runs are reproducible).
        self._rng = rng or random.Random(0 if new_uid else None)
        self._kinds = kinds
        self._fields = fields
        self._log_size, self._log_bytes = event_log_size, event_log_bytes
        self._watch_buffer = watch_buffer
        self._lock = threading.Lock()
        self._objects: dict[str, dict[str, _Entry]] = {}
        self._uids: dict[str, Key] = {}
        self._dependents: dict[str, set[Key]] = {}
        # The newest events, within event_log_size and event_log_bytes (held: their bytes).
        self._log: deque[StoredEvent] = deque()
        self._held = 0
        self._rv = 0
        self._watches: list[_Watch] = []
        self._subscribers: list[Callable[[WatchEvent], None]] = []
        self._pending: deque[StoredEvent] = deque()
        self._dispatch_lock = threading.RLock()
        self._dispatching = False
        self._stamped: datetime | None = None
        self._stamp = ""
        # Group commit (see deferred()): the threads deferring, and the events in the cache
        # and the log that the backend has not committed yet, oldest first.
        self._deferring = threading.local()
        self._groups = bool(getattr(backend, "groups_commits", False))
        self._staged: list[StoredEvent] = []
        self._staged_compacted = 0
        self._load()

    # --- reads -------------------------------------------------------------------------

    @property
    def resource_version(self) -> int:
        return self._rv

    @property
    def healthy(self) -> bool:
        """Whether the store can still write: readiness, for the hub."""
        return True

    def get(
        self, info: KindInfo, name: str, namespace: str = "", *, resource_version: str = ""
    ) -> Obj:
        if self._staged:
            self._flush_for_outsider()
        if resource_version != "0":
            self._sync()
        # Lock-free: one dict read of an immutable entry is atomic.
        entry = self._objects.get(collection_of(info), {}).get(_path(_ns(info, namespace), name))
        if entry is None:
            raise NotFound(info.plural, info.group, name)
        return _thaw(entry.blob)

    def list(
        self,
        info: KindInfo,
        namespace: str | None = None,
        *,
        label_selector: str | None = None,
        field_selector: str | None = None,
        limit: int | None = None,
        continue_: str | None = None,
    ) -> ListResult:
        selection = _Selection.parse(label_selector, field_selector, self._fields(info))
        if self._staged:
            self._flush_for_outsider()
        self._sync()
        if not info.namespaced or not namespace:
            namespace = None  # "" is metav1.NamespaceAll
        with self._lock:
            rv, compacted = self._rv, self._compacted
            entries = list(self._objects.get(collection_of(info), {}).items())
        list_rv, start = _decode_continue(continue_, compacted) if continue_ else (rv, "")
        entries.sort()
        keys = [path for path, _ in entries]
        matching = (
            (path, entry)
            for path, entry in entries[bisect_left(keys, start) :]
            if (namespace is None or entry.namespace == namespace)
            and (selection is None or selection.matches_entry(entry))
        )
        return _page(matching, list_rv, limit, counted=selection is None)

    # --- writes ------------------------------------------------------------------------

    def create(self, obj: Mapping[str, Any]) -> Obj:
        info = self._info_of(obj)
        new = dict(obj)
        meta = new["metadata"] = dict(_metadata(obj))
        if meta.get("resourceVersion"):
            raise StatusError(
                "Internal error occurred: resourceVersion should not be set on objects to be "
                "created"
            )
        namespace = _ns(info, str(meta.get("namespace") or ""))
        if not info.namespaced:
            meta.pop("namespace", None)  # rest.BeforeCreate clears it for cluster scope
        for field in ("deletionTimestamp", "deletionGracePeriodSeconds"):
            meta.pop(field, None)
        if info.has_status:
            new.pop("status", None)  # status is written through its subresource only
        collection = collection_of(info)

        def create(txn: _Txn) -> Obj:
            objects = self._objects.get(collection, {})
            name = meta.get("name") or self._generate_name(info, objects, namespace, meta)
            if _path(namespace, name) in objects:
                raise AlreadyExists(info.plural, info.group, name)
            meta.update(
                name=name,
                uid=self._new_uid(),
                creationTimestamp=self._timestamp(),
                generation=1,
            )
            return txn.put((collection, _path(namespace, name)), new, EventType.ADDED)

        return self._run(create)

    def update(self, obj: Mapping[str, Any], *, subresource: str | None = None) -> Obj:
        info = self._info_of(obj)
        meta = _metadata(obj)
        name, namespace = meta.get("name") or "", _ns(info, meta.get("namespace") or "")

        def update(txn: _Txn) -> Obj:
            key, entry = self._require(info, name, namespace)
            return self._update(txn, info, key, entry, dict(obj), subresource)

        return self._run(update)

    def patch(
        self,
        info: KindInfo,
        name: str,
        namespace: str,
        patch: Any,
        *,
        patch_type: PatchType = PatchType.MERGE,
        subresource: str | None = None,
    ) -> Obj:
        namespace = _ns(info, namespace)

        def patched(txn: _Txn) -> Obj:
            key, entry = self._require(info, name, namespace)
            current = _thaw(entry.blob)
            # No patch changes `current` (a merge patch shares what it leaves alone),
            # so it is the stored object _update compares with.
            changed = apply_patch(info, current, patch, patch_type)
            return self._update(txn, info, key, entry, changed, subresource, current)

        return self._run(patched)

    def delete(
        self,
        info: KindInfo,
        name: str,
        namespace: str = "",
        *,
        propagation: Propagation = Propagation.BACKGROUND,
    ) -> Obj:
        namespace = _ns(info, namespace)
        if propagation is Propagation.ORPHAN:
            # As the garbage collector's orphan finalizer: the dependents first, each its
            # own write, so that none is collected with the owner.
            with self._lock:
                _, owner = self._require(info, name, namespace)
                dependents = sorted(self._dependents.get(owner.uid, ()))
            for key in dependents:
                self._run(partial(self._orphan, key=key, owner_uid=owner.uid))

        def delete(txn: _Txn) -> Obj:
            key, entry = self._require(info, name, namespace)
            return self._delete(txn, key, _thaw(entry.blob))

        return self._run(delete)

    # --- watch -------------------------------------------------------------------------

    def watch(
        self,
        info: KindInfo | None = None,
        namespace: str | None = None,
        resource_version: str | None = None,
        *,
        label_selector: str | None = None,
        field_selector: str | None = None,
    ) -> Watch:
        selection = None
        if label_selector or field_selector:
            if info is None:
                raise ValueError("a watch of every kind takes no selectors")
            selection = _Selection.parse(label_selector, field_selector, self._fields(info))
        collection = collection_of(info) if info else None
        namespace = namespace or None
        start: _State = {}  # what the client is taken to have, before the first event
        with self._lock:
            self._flush()  # a watch replays committed events only
            watch = _Watch(collection, namespace, selection)
            if resource_version == "0":
                for coll, entry in self._current(collection):
                    watch.offer_added(coll, entry)
            else:
                rv = _parse_rv(resource_version) if resource_version else self._rv
                watch.offer(self._events_since(rv))
                if selection is not None and collection is not None:
                    start = self._state_at(collection, namespace, rv)
            watch.bound(self._watch_buffer)  # what it starts with aside
            self._watches.append(watch)
        watch.hold(start)
        return watch

    def subscribe(self, callback: Callable[[WatchEvent], None]) -> Callable[[], None]:
        """Every event, each write's before that write returns. A callback's exception
        reaches the writer, whose write is committed all the same."""
        with self._lock:
            self._subscribers.append(callback)

        def unsubscribe() -> None:
            with self._lock:
                if callback in self._subscribers:
                    self._subscribers.remove(callback)

        return unsubscribe

    def deferred(self) -> contextlib.AbstractContextManager[None]:
        """Group commit: writes this thread makes in the block reach the cache, the
        subscribers and the next reads at once, and the backend in one transaction when the
        thread's outermost block ends (a controller's reconcile, a driver's round), instead
        of one transaction each. Watches hear them then, once they are committed.

        Only the thread's own writes wait: a write from anywhere else (the API's) commits
        what is staged with it before it returns, and a read or watch from elsewhere commits
        it first, so that what the API acknowledges or shows is durable, as without this.
        A crash loses the staged writes, none of which anyone outside the process has seen.
        A no-op for a backend that does not group commits (memory, etcd)."""
        if not self._groups:
            return contextlib.nullcontext()
        return self._deferral()

    @contextlib.contextmanager
    def _deferral(self) -> Iterator[None]:
        state = self._deferring
        depth = getattr(state, "depth", 0)
        state.depth = depth + 1
        try:
            yield
        finally:
            state.depth = depth
            if not depth and self._staged:
                with self._lock:
                    self._flush()

    def close(self) -> None:
        with self._lock:
            try:
                self._flush()
            except StatusError as exc:  # the file is gone: what was staged nobody has seen
                logger.error("closing the store: %d staged writes lost: %s", len(self._staged), exc)
            for watch in self._watches:
                watch.close()
            self._watches.clear()
            self._backend.close()

    # --- write internals ---------------------------------------------------------------

    def _run(self, plan: Callable[[_Txn], _R]) -> _R:
        """Stage a write under the lock and commit it; then tell subscribers and collect the
        garbage it left. Returns what the plan returned."""
        with self._lock:
            txn = _Txn(self)
            result = plan(txn)
            if txn.event is not None:
                self._commit(txn.event, txn.entry)
        self._dispatch()
        self._collect_all(txn.dependents)
        return result

    def _sync(self) -> None:
        """Bring the cache up to what the backend holds before a read: it is already, for
        a backend this process alone writes."""

    def _collect_all(self, keys: Sequence[Key]) -> None:
        for key in keys:
            self._run(partial(self._collect, key=key))

    def _update(
        self,
        txn: _Txn,
        info: KindInfo,
        key: Key,
        entry: _Entry,
        new: Obj,
        subresource: str | None,
        old: Obj | None = None,
    ) -> Obj:
        """Stage an update; returns the object as stored (unchanged for a no-op).
        `old`, if given, is a copy of the stored object of the caller's own."""
        if subresource not in (None, "status") or (subresource and not info.has_status):
            raise _NoSuchSubresource()
        if old is None:
            old = _thaw(entry.blob)
        old_meta, given_rv = old["metadata"], _metadata(new).get("resourceVersion")
        if given_rv and given_rv != old_meta["resourceVersion"]:
            raise Conflict(info.plural, info.group, entry.name)
        new = _merge_update(info, old, new, subresource)
        if new == old:
            # Kubernetes writes nothing when nothing changed. `new` may share parts of
            # `old`, but is dropped: `old` is the caller's fresh copy.
            return old
        if "deletionTimestamp" in old_meta:
            _check_no_new_finalizers(info, old, new)
            if not new["metadata"].get("finalizers"):
                return self._remove(txn, key, old)
        # Nothing of `old` was changed in place (_merge_update copies what it changes), so
        # what `new` has of it is canonical already.
        return txn.put(key, new, EventType.MODIFIED, old)

    def _delete(self, txn: _Txn, key: Key, obj: Obj) -> Obj:
        """Remove the object, or mark it terminating while finalizers remain."""
        meta = obj["metadata"]
        if not meta.get("finalizers"):
            return self._remove(txn, key, obj)
        if "deletionTimestamp" in meta:
            return obj  # already terminating: deleting again changes nothing
        meta["deletionTimestamp"] = self._timestamp()
        meta["deletionGracePeriodSeconds"] = 0
        if meta.get("generation"):
            meta["generation"] += 1  # tells controllers a deletion is pending
        return txn.put(key, obj, EventType.MODIFIED)

    def _remove(self, txn: _Txn, key: Key, obj: Obj) -> Obj:
        removed = txn.remove(key, obj)
        txn.dependents = sorted(self._dependents.get(removed["metadata"].get("uid", ""), ()))
        return removed

    def _collect(self, txn: _Txn, key: Key) -> Obj | None:
        """The garbage collector's attemptToDeleteItem for one dependent of a removed owner:
        delete it when no owner is left, else drop its dangling ownerReferences."""
        entry = self._lookup(key)
        if entry is None:
            return None
        obj = _thaw(entry.blob)
        refs = obj["metadata"].get("ownerReferences") or []
        alive = [ref for ref in refs if ref.get("uid", "") in self._uids]
        if len(alive) == len(refs):
            return None  # no longer a dependent: orphaned, or collected already
        if not alive:
            return self._delete(txn, key, obj)
        obj["metadata"]["ownerReferences"] = alive
        return txn.put(key, obj, EventType.MODIFIED)

    def _orphan(self, txn: _Txn, key: Key, owner_uid: str) -> Obj | None:
        """The garbage collector's orphaning of one dependent: it drops its
        ownerReferences to the owner, and stays."""
        entry = self._lookup(key)
        if entry is None or owner_uid not in entry.owners:
            return None
        obj = _thaw(entry.blob)
        meta = obj["metadata"]
        refs = [ref for ref in meta.get("ownerReferences") or [] if ref.get("uid") != owner_uid]
        if refs:
            meta["ownerReferences"] = refs
        else:
            meta.pop("ownerReferences", None)
        return txn.put(key, obj, EventType.MODIFIED)

    def _lookup(self, key: Key) -> _Entry | None:
        return self._objects.get(key[0], {}).get(key[1])

    def _commit(self, event: StoredEvent, entry: _Entry | None) -> None:
        """Make one staged event durable through the backend, then move the cache (under
        the lock); in a deferring thread, move the cache and leave the backend for later
        (see deferred())."""
        dropped = self._overflow(event)
        compacted = self._log[dropped - 1].rv if dropped else self._compacted
        if self._groups and self._in_deferral():
            self._staged.append(event)
            self._staged_compacted = compacted
            self._record(event, entry, dropped, offer=False)
            return
        staged = self._staged
        self._backend.commit([*staged, event] if staged else [event], compacted)
        if staged:
            self._staged = []
            self._offer(staged)
        self._record(event, entry, dropped)

    def _flush(self) -> None:
        """Commit what deferred writes staged, in one transaction (under the lock)."""
        staged = self._staged
        if not staged:
            return
        self._backend.commit(staged, self._staged_compacted)
        self._staged = []
        self._offer(staged)

    def _flush_for_outsider(self) -> None:
        """Before a read from a thread not deferring: commit what is staged, so that it
        reads only what is durable."""
        if not self._in_deferral():
            with self._lock:
                self._flush()

    def _in_deferral(self) -> bool:
        """Whether this thread is in a deferred() block."""
        depth: int = getattr(self._deferring, "depth", 0)
        return depth > 0

    def _record(
        self, event: StoredEvent, entry: _Entry | None, dropped: int, *, offer: bool = True
    ) -> None:
        """Move the cache, the log and the watches to a committed event (under the lock);
        the watches later (_offer) for an event not committed yet."""
        self._apply((event.collection, _path(event.namespace, event.name)), entry)
        self._rv = event.rv
        for _ in range(dropped):
            self._held -= len(self._log.popleft().blob)
        self._log.append(event)
        self._held += len(event.blob)
        if offer and self._watches:
            self._offer((event,))
        if self._subscribers:
            self._pending.append(event)

    def _offer(self, events: Sequence[StoredEvent]) -> None:
        """Committed events, to the watches, write by write (under the lock)."""
        if self._watches:
            for event in events:
                for watch in self._watches:
                    watch.offer((event,))
            self._watches = [w for w in self._watches if not w.closed]

    def _apply(self, key: Key, entry: _Entry | None) -> None:
        collection, path = key
        objects = self._objects.setdefault(collection, {})
        old = objects.get(path)
        if (
            entry is not None
            and old is not None
            and old.uid == entry.uid
            and old.owners == entry.owners
        ):
            objects[path] = entry  # the usual update: the same uid and owners to index
            return
        if old is not None:
            self._unindex(key, old)
        if entry is None:
            objects.pop(path, None)
            return
        objects[path] = entry
        self._uids[entry.uid] = key
        for owner in entry.owners:
            self._dependents.setdefault(owner, set()).add(key)

    def _unindex(self, key: Key, entry: _Entry) -> None:
        self._uids.pop(entry.uid, None)
        for owner in entry.owners:
            dependents = self._dependents.get(owner)
            if dependents is not None:
                dependents.discard(key)
                if not dependents:
                    del self._dependents[owner]

    def _dispatch(self) -> None:
        """Call subscribers in resourceVersion order, outside the write lock. A write made
        by a callback queues its events; the outermost dispatch delivers them after."""
        if not self._pending:
            return
        with self._dispatch_lock:
            if self._dispatching:
                return
            self._dispatching = True
            try:
                while self._pending:
                    event = self._pending.popleft()
                    for callback in tuple(self._subscribers):
                        callback(event.to_watch_event())
            finally:
                self._dispatching = False

    # --- helpers -----------------------------------------------------------------------

    @property
    def _compacted(self) -> int:
        """The newest resourceVersion whose event is gone: watches may resume from it on."""
        return self._log[0].rv - 1 if self._log else self._rv

    def _overflow(self, event: StoredEvent) -> int:
        """How many of the oldest logged events go so that this one fits the log's bounds."""
        count = len(self._log) + 1
        held = self._held + len(event.blob)
        dropped = 0
        while dropped < len(self._log) and (count > self._log_size or held > self._log_bytes):
            held -= len(self._log[dropped].blob)
            count -= 1
            dropped += 1
        return dropped

    def _load(self) -> None:
        objects, events = self._backend.load(self._log_size, self._log_bytes)
        for collection, text in objects:
            obj = _decode(text)
            rv = int(obj["metadata"]["resourceVersion"])
            entry = _entry(_freeze(obj), obj["metadata"], rv)
            self._apply((collection, _path(entry.namespace, entry.name)), entry)
            self._rv = max(self._rv, rv)
        self._log.extend(events)
        self._held = sum(len(event.blob) for event in events)
        if events:
            self._rv = max(self._rv, events[-1].rv)
        self._collect_dangling()

    def _collect_dangling(self) -> None:
        """Collect what a crash left between an owner's removal and its dependents'
        collection: objects with an ownerReference to an object that is gone."""
        uids = self._uids
        self._collect_all(
            sorted(
                key for owner, keys in self._dependents.items() if owner not in uids for key in keys
            )
        )

    def _timestamp(self) -> str:
        """The time now as metav1.Time writes it (under the lock). In virtual time many
        writes share an instant: the text of the last one is kept."""
        now = self._now()
        if now != self._stamped:
            self._stamped, self._stamp = now, format_time(now)
        return self._stamp

    def _info_of(self, obj: Mapping[str, Any]) -> KindInfo:
        api_version, kind = obj.get("apiVersion"), obj.get("kind")
        if type(api_version) is str and type(kind) is str and api_version and kind:
            return self._kinds(api_version, kind)
        for field, value in (("Kind", kind), ("apiVersion", api_version)):
            if not isinstance(value, str) or not value:
                raise BadRequest(f"Object '{field}' is missing in '{_encode(dict(obj))}'")
        assert isinstance(api_version, str) and isinstance(kind, str)
        return self._kinds(api_version, kind)

    def _require(self, info: KindInfo, name: str, namespace: str) -> tuple[Key, _Entry]:
        key = (collection_of(info), _path(namespace, name))
        entry = self._objects.get(key[0], {}).get(key[1])
        if entry is None:
            raise NotFound(info.plural, info.group, name)
        return key, entry

    def _generate_name(
        self, info: KindInfo, objects: Mapping[str, _Entry], namespace: str, meta: Mapping[str, Any]
    ) -> str:
        prefix = str(meta.get("generateName") or "")
        if not prefix:
            raise Invalid(
                info.kind,
                info.group,
                "",
                [Path("metadata.name").required("name or generateName is required")],
            )
        prefix = prefix[:_MAX_GENERATED_PREFIX]
        for _ in range(_GENERATE_ATTEMPTS):
            suffix = "".join(self._rng.choices(_NAME_ALPHABET, k=_GENERATED_SUFFIX))
            if _path(namespace, prefix + suffix) not in objects:
                break
        return prefix + suffix  # still taken after every attempt: create says AlreadyExists

    def _state_at(self, collection: str, namespace: str | None, rv: int) -> _State:
        """The collection's objects as they were at rv (in the namespace, if one is given):
        from the cache, but for those changed since, which the event log has as they were
        then, unless compaction took that (None)."""
        state: _State = {
            (entry.namespace, entry.name): entry
            for entry in self._objects.get(collection, {}).values()
            if namespace is None or entry.namespace == namespace
        }
        if rv >= self._rv:
            return state
        last: dict[tuple[str, str], StoredEvent] = {}  # each object's last event up to rv
        changed: set[tuple[str, str]] = set()
        for event in self._log:
            key = (event.namespace, event.name)
            if event.collection != collection or (namespace and event.namespace != namespace):
                continue
            if event.rv <= rv:
                last[key] = event
            elif key not in changed:
                changed.add(key)
                if event.type is EventType.ADDED:
                    state.pop(key, None)  # born after rv
                else:
                    state[key] = last[key].blob if key in last else None
        return state

    def _current(self, collection: str | None) -> Iterator[tuple[str, _Entry]]:
        """(collection, entry) of every object that exists now, in key order."""
        for coll in sorted(self._objects) if collection is None else [collection]:
            for _, entry in sorted(self._objects.get(coll, {}).items()):
                yield coll, entry

    def _events_since(self, rv: int) -> Sequence[StoredEvent]:
        if rv < self._compacted:
            raise Expired(f"too old resource version: {rv} ({self._compacted})")
        newer: list[StoredEvent] = []
        for event in reversed(self._log):
            if event.rv <= rv:
                break
            newer.append(event)
        return newer[::-1]


class _Selection:
    """A list's or watch's label and field selectors, their field labels checked against
    the kind's: a label the kind has not is a 400, worded as the kind words it."""

    __slots__ = ("fields", "getters", "labels")

    def __init__(
        self,
        labels: Selector | None,
        fields: FieldSelector | None,
        getters: Mapping[str, FieldGetter],
    ) -> None:
        self.labels, self.fields, self.getters = labels, fields, getters

    @classmethod
    def parse(
        cls, label_selector: str | None, field_selector: str | None, kind: FieldLabels
    ) -> _Selection | None:
        """The selectors, or None when there are none."""
        labels = _parse(parse_selector, label_selector)
        fields = _parse(parse_field_selector, field_selector)
        if labels is None and fields is None:
            return None
        for req in fields.requirements if fields else ():
            if not kind.supports(req.field):
                raise BadRequest(kind.refuse(req.field))
        # Only what the selector reads: the name and namespace need no copy of the object.
        used = {req.field for req in fields.requirements} if fields else set()
        return cls(labels, fields, {f: get for f, get in kind.fields.items() if f in used})

    def matches_entry(self, entry: _Entry) -> bool:
        return self._matches(entry.name, entry.namespace, entry.labels, lambda: _thaw(entry.blob))

    def matches_object(self, obj: Obj) -> bool:
        meta = obj["metadata"]
        return self._matches(
            meta["name"], meta.get("namespace", ""), meta.get("labels"), lambda: obj
        )

    def _matches(
        self, name: str, namespace: str, labels: Mapping[str, str] | None, obj: Callable[[], Obj]
    ) -> bool:
        if self.labels is not None and not self.labels.matches(labels):
            return False
        if self.fields is None:
            return True
        values = {"metadata.name": name, "metadata.namespace": namespace}
        if self.getters:
            whole = obj()
            values.update((field, get(whole)) for field, get in self.getters.items())
        return self.fields.matches(values)


class _Watch:
    """A watch's own queue, filled at commit; iteration blocks until an event or close().
    close() lets the consumer drain what was already queued, then iteration ends. So does
    a write that finds the queue holding its bound already: the watch is closed, as the
    cacher closes a watcher that does not keep up, rather than holding ever more.

    With selectors, the consumer's thread turns events into what a client holding the
    matching objects must hear, as the API server's watch cache does: an object that starts
    matching is ADDED, one that stops matching is DELETED (as it last matched, at the new
    resourceVersion), one that matches neither before nor after is left out."""

    def __init__(
        self, collection: str | None, namespace: str | None, selection: _Selection | None = None
    ) -> None:
        self._collection = collection
        self._namespace = namespace
        self._selection = selection
        # What the client holds: each matching object, marshalled (None: as it was is lost).
        self._held: dict[tuple[str, str], bytes | None] = {}
        # Events to hand out, or None once closed
        self._queue: SimpleQueue[_StoredWatchEvent | None] = SimpleQueue()
        self._limit = math.inf  # how many may be queued when a write comes
        self.closed = False

    def hold(self, state: _State) -> None:
        """The objects there are where the watch starts: the client has those that match,
        and, to be safe, those whose state there was lost to compaction."""
        selection = self._selection
        if selection is None:
            return
        for key, known in state.items():
            if known is None:
                self._held[key] = None
            elif isinstance(known, bytes):
                if selection.matches_object(_thaw(known)):
                    self._held[key] = known
            elif selection.matches_entry(known):
                self._held[key] = known.blob

    def bound(self, buffer: int) -> None:
        """From now on, hold no more than `buffer` events beyond those queued now."""
        self._limit = self._queue.qsize() + buffer

    def offer(self, events: Sequence[StoredEvent]) -> None:
        """One write's events (or those to replay); the watch is closed instead if its
        reader is behind by the bound already. A write is queued whole: a big one (a
        garbage collection) does not end a watch whose reader keeps up."""
        if self.closed:
            return
        if self._queue.qsize() >= self._limit:
            self.close()
            return
        collection, namespace = self._collection, self._namespace
        for event in events:
            if (collection is None or event.collection == collection) and (
                namespace is None or event.namespace == namespace
            ):
                self._queue.put(
                    _StoredWatchEvent(event.type, event.collection, event.rv, event.blob)
                )

    def offer_added(self, collection: str, entry: _Entry) -> None:
        """A synthetic ADDED event for an object that already exists."""
        if self._namespace is None or entry.namespace == self._namespace:
            self._queue.put(_StoredWatchEvent(EventType.ADDED, collection, entry.rv, entry.blob))

    def __iter__(self) -> Iterator[WatchEvent]:
        while (event := self._queue.get()) is not None:
            if self._selection is None:
                yield event
            elif (selected := self._select(self._selection, event)) is not None:
                yield selected
        self._queue.put(None)  # every later iteration ends too

    def _select(self, selection: _Selection, event: _StoredWatchEvent) -> WatchEvent | None:
        obj = event.object
        key = (obj["metadata"].get("namespace", ""), obj["metadata"]["name"])
        held = key in self._held
        last = self._held.pop(key, None)
        if event.type is not EventType.DELETED and selection.matches_object(obj):
            self._held[key] = event._blob
            seen = EventType.MODIFIED if held else EventType.ADDED
            return event if seen is event.type else WatchEvent(seen, obj, event.collection)
        if not held:
            return None
        if event.type is not EventType.DELETED and last is not None:
            obj = _thaw(last)
            obj["metadata"]["resourceVersion"] = str(event.resource_version)
        return WatchEvent(EventType.DELETED, obj, event.collection)

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            self._queue.put(None)


# --- pure helpers ----------------------------------------------------------------------


def _ns(info: KindInfo, namespace: str) -> str:
    """The namespace a request addresses: none for cluster-scoped kinds."""
    if not info.namespaced:
        return ""
    if not namespace:
        raise BadRequest("Namespace parameter required.")
    return namespace


def _metadata(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    meta = obj.get("metadata")
    if type(meta) is dict:  # the usual case, without isinstance's look at Mapping's ABC
        return meta
    if meta is None:
        return {}
    if not isinstance(meta, Mapping):
        raise BadRequest("metadata must be an object")
    return meta


def _merge_update(info: KindInfo, old: Obj, new: Obj, subresource: str | None) -> Obj:
    """What an update stores: system fields from the stored object; status only through
    the status subresource (when the kind has one), everything else only through the main
    resource; generation bumped when the spec (anything but metadata and status) changed."""
    old_meta = old["metadata"]
    if subresource == "status":
        merged = {**old, "metadata": dict(old_meta)}
        _copy_key(new, merged, "status")
        return merged
    merged = dict(new)
    meta = merged["metadata"] = dict(_metadata(new))
    for field in _KEPT_FIELDS:
        if field in old_meta:
            meta[field] = old_meta[field]
        else:
            meta.pop(field, None)
    if info.has_status:
        _copy_key(old, merged, "status")
    ignored = ("metadata", "status") if info.has_status else ("metadata",)
    if _changed(old, merged, ignored):
        meta["generation"] = old_meta.get("generation", 0) + 1
    return merged


def _changed(old: Obj, new: Obj, ignored: tuple[str, ...]) -> bool:
    """Whether any top-level field but the ignored ones differs (a missing one is null)."""
    for key, value in new.items():
        if key not in ignored and old.get(key) != value:
            return True
    return any(
        key not in new and key not in ignored and value is not None for key, value in old.items()
    )


def _copy_key(source: Mapping[str, Any], target: dict[str, Any], key: str) -> None:
    if key in source:
        target[key] = source[key]
    else:
        target.pop(key, None)


def _check_no_new_finalizers(info: KindInfo, old: Obj, new: Obj) -> None:
    added = set(new["metadata"].get("finalizers") or ()) - set(
        old["metadata"].get("finalizers") or ()
    )
    if added:
        listed = ", ".join(json.dumps(f) for f in sorted(added))
        raise Invalid(
            info.kind,
            info.group,
            old["metadata"]["name"],
            [
                Path("metadata.finalizers").forbidden(
                    "no new finalizers can be added if the object is being deleted, found new "
                    f"finalizers []string{{{listed}}}"
                )
            ],
        )


def apply_patch(info: KindInfo, current: Obj, patch: Any, patch_type: PatchType) -> Obj:
    """The patched object, still the one patched: a patch may not move it to another kind,
    namespace or name (see _keep_address)."""
    apply = _patcher(info, patch_type)
    if isinstance(patch, str | bytes):
        try:
            patch = load_json(patch)
        except ValueError as err:
            raise BadRequest(f"error decoding patch: {err}") from None
    if patch_type is PatchType.JSON and isinstance(patch, list):
        _check_operations(patch)
    try:
        patched = apply(current, patch)
        if patch_type is PatchType.JSON:  # operations may nest each other's values
            check_depth(patched)
    except (PatchError, DocumentError) as err:
        raise _Unprocessable(str(err)) from None
    except RecursionError:
        raise _Unprocessable(f"exceeded max depth of {MAX_DEPTH}") from None
    if not isinstance(patched, dict):
        raise BadRequest("the patched object is not a JSON object")
    _keep_address(current, patched, patch_type)
    return patched


def _check_operations(operations: list[Any]) -> None:
    if len(operations) > MAX_JSON_PATCH_OPERATIONS:
        raise RequestEntityTooLarge(
            f"The allowed maximum operations in a JSON patch is {MAX_JSON_PATCH_OPERATIONS}, "
            f"got {len(operations)}"
        )


def _keep_address(current: Obj, patched: Obj, patch_type: PatchType) -> None:
    """Refuse a patched object that is no longer the current one, as kube-apiserver's patch
    handler does (else the write that follows stores it under its new key, over another
    object): another kind or apiVersion is a 422 (the patched JSON does not decode as
    the URL's kind), another namespace or name a 400. What a patch removes (kind, apiVersion,
    namespace) is the current one's again, as the URL defaults it; and a strategic merge
    patch's kind and apiVersion are ignored, as kube's typed merge ignores them."""
    for key in ("apiVersion", "kind"):
        given, expected = patched.get(key), current[key]
        if not given or patch_type is PatchType.STRATEGIC:
            patched[key] = expected
        elif given != expected:
            value = Path("patch").invalid(_encode(patched), type_mismatch(key, given, expected))
            raise Invalid("", "", "", [value])
    meta, current_meta = _metadata(patched), current["metadata"]
    namespace = meta.get("namespace")
    if namespace != current_meta.get("namespace"):
        if namespace and "namespace" in current_meta:
            raise namespace_mismatch()
        meta = patched["metadata"] = dict(meta)  # no namespace, or one it cannot have
        _copy_key(current_meta, meta, "namespace")
    if meta.get("name") != current_meta["name"]:
        raise name_mismatch(meta.get("name"), current_meta["name"])


def _patcher(info: KindInfo, patch_type: PatchType) -> Callable[[Obj, Any], Any]:
    if patch_type == PatchType.JSON:
        return json_patch
    if patch_type == PatchType.MERGE:
        return merge_patch
    merge_keys = merge_keys_for(info)
    if merge_keys is None:  # a custom resource has no struct tags to merge by
        raise _UnsupportedMediaType([PatchType.JSON, PatchType.MERGE])
    return lambda current, patch: strategic_merge_patch(current, patch, merge_keys)


def _parse(parse: Callable[[str], _S], text: str | None) -> _S | None:
    if not text:
        return None
    try:
        return parse(text)
    except SelectorError as err:
        raise BadRequest(str(err)) from None


def _page(
    matching: Iterator[tuple[str, _Entry]], list_rv: int, limit: int | None, *, counted: bool
) -> ListResult:
    """One page of the matching entries; a continue token when more match after it."""
    items: list[Obj] = []
    last = ""
    for path, entry in matching:
        if limit and limit > 0 and len(items) == limit:
            # remainingItemCount is only known without selectors, as in Kubernetes.
            remaining = 1 + sum(1 for _ in matching) if counted else None
            return ListResult(items, str(list_rv), _encode_continue(list_rv, last), remaining)
        items.append(_thaw(entry.blob))
        last = path
    return ListResult(items, str(list_rv))


def _encode_continue(rv: int, last: str) -> str:
    # storage.continueToken: resume at the smallest key after the last one returned.
    token = _encode({"v": "meta.k8s.io/v1", "rv": rv, "start": last + "\x00"})
    return base64.urlsafe_b64encode(token.encode()).decode().rstrip("=")


def _decode_continue(token: str, compacted: int) -> tuple[int, str]:
    try:
        data = load_json(base64.urlsafe_b64decode(token + "=" * (-len(token) % 4)))
        if data.get("v") != "meta.k8s.io/v1":
            raise ValueError("continue key is not valid")
        rv, start = int(data["rv"]), str(data["start"])
    except (ValueError, binascii.Error, KeyError, TypeError, AttributeError) as err:
        raise BadRequest(f"invalid continue token: {err}") from None
    if rv < compacted:
        raise Expired(_EXPIRED_CONTINUE)
    return rv, start


def _parse_rv(text: str) -> int:
    try:
        rv = int(text)
    except ValueError:
        rv = -1
    if rv < 0:
        raise BadRequest(f"invalid resource version: {text!r}")
    return rv


def _implements_store(store: CoreStore) -> Store:
    """Never called: makes mypy check that CoreStore keeps to the Store protocol."""
    return store
