"""The event recorder: core/v1 Events about the objects controllers act on.

As client-go's recorder (tools/record event.go) and its EventCorrelator (events_cache.go):
an Event lives in its involved object's namespace ("default" for a cluster-scoped object)
and is named `<object name>.<hex of the UnixNano timestamp>`. Before it is written, each
Event goes through the correlator, in upstream's order:

1. the EventAggregator: events from one component about one object with the same type and
   reason but another message are similar; once 10 distinct messages of a group are seen
   within 10 minutes of each other, the next one is recorded as a single Event whose
   message is "(combined from similar events): <message>", counted from then on;
2. the EventLogger: a repeat of the same (object, type, reason, message) from the same
   component bumps `count` and `lastTimestamp` (and the message) of the Event already
   written instead of writing a new one;
3. the spam filter: each component may write 25 Events about one object at once, then
   one every 5 minutes (a token bucket per component and object); an Event over that is
   dropped, after the logger counted it, as upstream does.

Each of the three remembers at most 4,096 keys, the least recently used dropped first.
One correlator per recorder, that is per controller (upstream has one per process); its
keys all name the component, so only the LRU's capacity is shared differently.

Upstream's only nondeterminism is left out: once a group aggregates, client-go drops an
arbitrary message of its set (PopAny on a Go map); here the oldest one goes.
"""

from __future__ import annotations

import struct
import threading
import weakref
from collections import OrderedDict
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from fleetwarden.api.errors import AlreadyExists, NotFound
from fleetwarden.api.meta import Resource, format_time
from fleetwarden.api.registry import REGISTRY
from fleetwarden.runtime.clock import Clock
from fleetwarden.store.interface import Store

NORMAL = "Normal"
WARNING = "Warning"

EVENT = REGISTRY.info("v1", "Event")
# client-go's maxLruCacheEntries: how many keys each part of the correlator remembers.
_MAX_REMEMBERED = 4096
# defaultAggregateMaxEvents and defaultAggregateIntervalInSeconds.
AGGREGATE_MAX_EVENTS = 10
AGGREGATE_INTERVAL = timedelta(seconds=600)
AGGREGATE_PREFIX = "(combined from similar events): "
# defaultSpamBurst and defaultSpamQPS, the latter a float32 in client-go.
SPAM_BURST = 25
SPAM_QPS: float = struct.unpack("f", struct.pack("f", 1.0 / 300.0))[0]
_UNIX_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_NANOSECOND_PER_MICROSECOND = 1000

# (apiVersion, kind, namespace, name, uid) of the involved object
_ObjectKey = tuple[str, str, str, str, str]
# getEventKey: the object, type, reason and message (the component is the recorder's)
_EventKey = tuple[_ObjectKey, str, str, str]
# EventAggregatorByReasonFunc's aggregate key: the object, type and reason
_AggregateKey = tuple[_ObjectKey, str, str]


@dataclass(slots=True)
class _Observation:
    """eventLog: what the logger knows of the Event recorded for a key (the spam filter may
    have dropped it: the logger counts it all the same, as upstream's does)."""

    count: int
    first_timestamp: str
    namespace: str
    name: str

    @property
    def address(self) -> tuple[str, str]:
        return self.namespace, self.name


@dataclass(slots=True)
class _Similar:
    """aggregateRecord: the distinct messages of a group, and when it was last added to."""

    messages: dict[str, None] = field(default_factory=dict)  # an ordered set
    last: datetime | None = None


@dataclass(slots=True)
class _Bucket:
    """A token bucket as golang.org/x/time/rate's Limiter: full at first, refilled
    continuously at SPAM_QPS, never above SPAM_BURST."""

    tokens: float = float(SPAM_BURST)
    last: datetime | None = None

    def try_accept(self, now: datetime) -> bool:
        tokens = self.tokens
        if self.last is not None:
            elapsed = max((now - self.last).total_seconds(), 0.0)
            tokens = min(tokens + elapsed * SPAM_QPS, float(SPAM_BURST))
        if tokens < 1:
            return False  # rate.Limiter leaves its state alone when it refuses
        self.tokens, self.last = tokens - 1, now
        return True


class _Lru(OrderedDict[Any, Any]):
    """groupcache's lru.Cache: a read or a write makes a key the most recent one."""

    def lookup(self, key: Any) -> Any:
        value = self.get(key)
        if value is not None:
            self.move_to_end(key)
        return value

    def put(self, key: Any, value: Any) -> None:
        self[key] = value
        self.move_to_end(key)
        if len(self) > _MAX_REMEMBERED:
            self.popitem(last=False)


class EventRecorder:
    """Records Events on behalf of one component (`source.component`); thread-safe."""

    def __init__(self, store: Store, clock: Clock, component: str) -> None:
        self._store, self._clock, self.component = store, clock, component
        self._lock = threading.Lock()
        self._logged = _Lru()  # EventLogger: event or aggregate key -> _Observation
        self._similar = _Lru()  # EventAggregator: aggregate key -> _Similar
        self._buckets = _Lru()  # spam filter: object key -> _Bucket
        self._names = _names_of(store)

    def event(self, obj: Resource, type_: str, reason: str, message: str) -> None:
        """Record that `reason` happened to obj; type_ is NORMAL or WARNING."""
        ref = _reference(obj)
        target: _ObjectKey = (
            ref.get("apiVersion", ""),
            ref.get("kind", ""),
            ref.get("namespace", ""),
            ref.get("name", ""),
            ref.get("uid", ""),
        )
        with self._lock:
            now = self._clock.now()
            stamp = format_time(now)
            message, key = self._aggregate(target, type_, reason, message, now)
            # eventObserve: a repeat takes the name, count and first time of the last one.
            seen: _Observation | None = self._logged.lookup(key)
            if seen is None:
                # makeEvent's name: the object's, then the instant in Unix nanoseconds.
                name = f"{ref.get('name', '')}.{_nanos(now):x}"
                observed = _Observation(1, stamp, ref.get("namespace") or "default", name)
            else:
                observed = _Observation(seen.count + 1, seen.first_timestamp, *seen.address)
            self._logged.put(key, observed)
            # The spam filter looks only now: what it drops, the logger has counted.
            bucket: _Bucket | None = self._buckets.lookup(target)
            if bucket is None:
                bucket = _Bucket()
            accepted = bucket.try_accept(now)
            self._buckets.put(target, bucket)
            if not accepted:
                return
            if seen is None or not self._patch(observed, stamp, message):
                self._create(ref, type_, reason, message, stamp, observed, fresh=seen is None)
            # UpdateState: the Event as written, under its own key.
            self._logged.put((target, type_, reason, message), observed)

    def _aggregate(
        self, target: _ObjectKey, type_: str, reason: str, message: str, now: datetime
    ) -> tuple[str, _EventKey | _AggregateKey]:
        """EventAggregate: the message to record and the logger's key for it."""
        group: _AggregateKey = (target, type_, reason)
        similar: _Similar | None = self._similar.lookup(group)
        if similar is None or similar.last is None or now - similar.last > AGGREGATE_INTERVAL:
            similar = _Similar()
        similar.messages[message] = None
        similar.last = now
        self._similar.put(group, similar)
        if len(similar.messages) < AGGREGATE_MAX_EVENTS:
            return message, (target, type_, reason, message)
        del similar.messages[next(iter(similar.messages))]
        return AGGREGATE_PREFIX + message, group

    def _patch(self, observed: _Observation, stamp: str, message: str) -> bool:
        """Count one more occurrence; False when the Event is gone (someone deleted it, or
        the spam filter dropped it before it was ever written)."""
        namespace, name = observed.address
        patch = {"count": observed.count, "lastTimestamp": stamp, "message": message}
        try:
            self._store.patch(EVENT, name, namespace, patch)
        except NotFound:
            return False
        return True

    def _create(
        self,
        ref: dict[str, str],
        type_: str,
        reason: str,
        message: str,
        stamp: str,
        observed: _Observation,
        *,
        fresh: bool,
    ) -> None:
        """Write the Event; a repeat whose Event is gone is written again under its name,
        with its count and first time, as recordEvent does when the patch finds nothing."""
        namespace = observed.namespace
        object_name = ref.get("name", "")
        wire: dict[str, Any] = {
            "apiVersion": "v1",
            "kind": "Event",
            "metadata": {"namespace": namespace},
            "involvedObject": ref,
            "reason": reason,
            "message": message,
            "type": type_,
            "source": {"component": self.component},
            "firstTimestamp": observed.first_timestamp,
            "lastTimestamp": stamp,
            "count": observed.count,
        }
        taken = (namespace, object_name)
        base = nanos = int(observed.name.rpartition(".")[2], 16)
        if fresh:
            nanos = self._names.first_free(taken, base)
        while True:
            name = wire["metadata"]["name"] = f"{object_name}.{nanos:x}"
            try:
                self._store.create(wire)
            except AlreadyExists:
                # Two Events about one object at one instant (common in virtual time):
                # the next nanosecond keeps names unique and deterministic.
                nanos += 1
                continue
            if fresh:
                self._names.taken(taken, base, nanos)
            observed.name = name
            return


class _Names:
    """The Event names each object's recorders took last at the latest instant, shared by
    every recorder of a store: at one instant, events about one object take the nanoseconds
    after it one by one, and the next recorder starts after those already taken instead of
    trying each. Only a hint: a name someone else took is still found taken and skipped;
    one freed by a deletion at that same instant is not taken again."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._base = -1  # the latest instant's nanoseconds
        # (namespace, object name) -> the last nanosecond taken from the latest instant on
        self._last: dict[tuple[str, str], int] = {}

    def first_free(self, key: tuple[str, str], base: int) -> int:
        with self._lock:
            if base != self._base:
                return base
            return self._last.get(key, base - 1) + 1

    def taken(self, key: tuple[str, str], base: int, nanos: int) -> None:
        with self._lock:
            if base > self._base:  # time moved on: what was taken before is behind it
                self._base = base
                self._last.clear()
            if base == self._base:
                self._last[key] = nanos


_NAMES: weakref.WeakKeyDictionary[Store, _Names] = weakref.WeakKeyDictionary()
_NAMES_LOCK = threading.Lock()


def _names_of(store: Store) -> _Names:
    with _NAMES_LOCK:
        try:
            names = _NAMES.get(store)
        except TypeError:  # a store that cannot be referenced weakly: a hint of its own
            return _Names()
        if names is None:
            names = _NAMES[store] = _Names()
        return names


def _nanos(instant: datetime) -> int:
    """time.UnixNano of an instant, to the microsecond a datetime has."""
    micros = (instant - _UNIX_EPOCH) // timedelta(microseconds=1)
    return micros * _NANOSECOND_PER_MICROSECOND


def _reference(obj: Resource) -> dict[str, str]:
    """reference.GetReference on the wire: enough to find the object again; empty fields
    left out."""
    meta = obj.metadata
    given = (
        ("apiVersion", obj.api_version),
        ("kind", obj.kind),
        ("name", meta.name),
        ("namespace", meta.namespace),
        ("uid", meta.uid),
        ("resourceVersion", meta.resource_version),
    )
    return {field: value for field, value in given if value}
