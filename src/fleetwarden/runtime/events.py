"""The event recorder: core/v1 Events about the objects controllers act on.

As client-go's recorder and EventCorrelator: an Event lives in its involved object's
namespace ("default" for a cluster-scoped object), is named `<object name>.<hex of the
UnixNano timestamp>`, and a repeat of the same (object, type, reason, message) from the
same component bumps `count` and `lastTimestamp` of the Event already written instead of
writing a new one.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from datetime import UTC, datetime, timedelta

from fleetwarden.api.core import Event, EventSource, ObjectReference
from fleetwarden.api.errors import AlreadyExists, NotFound
from fleetwarden.api.meta import ObjectMeta, Resource, format_time
from fleetwarden.api.registry import REGISTRY
from fleetwarden.runtime.clock import Clock
from fleetwarden.store.interface import Store

NORMAL = "Normal"
WARNING = "Warning"

EVENT = REGISTRY.info("v1", "Event")
# client-go's maxLruCacheEntries: how many distinct events are remembered for counting.
_MAX_REMEMBERED = 4096
_UNIX_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_NANOSECOND_PER_MICROSECOND = 1000

_EventKey = tuple[str, str, str, str, str, str, str, str]


class EventRecorder:
    """Records Events on behalf of one component (`source.component`); thread-safe."""

    def __init__(self, store: Store, clock: Clock, component: str) -> None:
        self._store, self._clock, self.component = store, clock, component
        self._lock = threading.Lock()
        # event key -> (namespace, name, count) of the Event written for it
        self._seen: OrderedDict[_EventKey, tuple[str, str, int]] = OrderedDict()

    def event(self, obj: Resource, type_: str, reason: str, message: str) -> None:
        """Record that `reason` happened to obj; type_ is NORMAL or WARNING."""
        ref = _reference(obj)
        key: _EventKey = (
            ref.api_version or "",
            ref.kind or "",
            ref.namespace or "",
            ref.name or "",
            ref.uid or "",
            type_,
            reason,
            message,
        )
        with self._lock:
            now = self._clock.now()
            seen = self._seen.get(key)
            if seen is not None and self._bump(*seen, now):
                self._seen[key] = (seen[0], seen[1], seen[2] + 1)
                self._seen.move_to_end(key)
                return
            namespace, name = self._create(ref, type_, reason, message, now)
            self._seen[key] = (namespace, name, 1)
            if len(self._seen) > _MAX_REMEMBERED:
                self._seen.popitem(last=False)

    def _bump(self, namespace: str, name: str, count: int, now: datetime) -> bool:
        """Count one more occurrence; False when the Event is gone (someone deleted it)."""
        patch = {"count": count + 1, "lastTimestamp": format_time(now)}
        try:
            self._store.patch(EVENT, name, namespace, patch)
        except NotFound:
            return False
        return True

    def _create(
        self, ref: ObjectReference, type_: str, reason: str, message: str, now: datetime
    ) -> tuple[str, str]:
        namespace = ref.namespace or "default"
        stamp = (now - _UNIX_EPOCH) // timedelta(microseconds=1) * _NANOSECOND_PER_MICROSECOND
        event = Event(
            api_version="v1",
            kind="Event",
            metadata=ObjectMeta(name=f"{ref.name}.{stamp:x}", namespace=namespace),
            involved_object=ref,
            reason=reason,
            message=message,
            type=type_,
            source=EventSource(component=self.component),
            first_timestamp=now,
            last_timestamp=now,
            count=1,
        )
        # Built once: a retry differs only in its name (create copies the metadata it gets).
        wire = event.to_dict()
        while True:
            name = wire["metadata"]["name"] = f"{ref.name}.{stamp:x}"
            try:
                self._store.create(wire)
            except AlreadyExists:
                # Two Events about one object at one instant (common in virtual time):
                # the next nanosecond keeps names unique and deterministic.
                stamp += 1
                continue
            return namespace, name


def _reference(obj: Resource) -> ObjectReference:
    """reference.GetReference: enough to find the object again; empty fields left out."""
    meta = obj.metadata
    given = {
        "api_version": obj.api_version,
        "kind": obj.kind,
        "name": meta.name,
        "namespace": meta.namespace,
        "uid": meta.uid,
        "resource_version": meta.resource_version,
    }
    return ObjectReference(**{field: value for field, value in given.items() if value})
