"""The Store protocol: Kubernetes API semantics over wire dicts, whatever the backend.

Objects go in and come out as wire dicts (camelCase JSON, as `Resource.to_dict()` gives
them); each call returns a fresh dict the caller may change. A collection is named by
its KindInfo (group, plural, scope, whether it has a status subresource).

Clock and uids are injected (`now`, `new_uid`) so the same store runs on the wall clock
under `fleetwarden up` and on the virtual clock under `fleetwarden simulate`, where two
runs must give byte-identical results.
"""

from __future__ import annotations

import builtins
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import Any, Protocol

from fleetwarden.api.kinds import KindInfo

Obj = dict[str, Any]
Now = Callable[[], datetime]
NewUid = Callable[[], str]


class EventType(StrEnum):
    ADDED = "ADDED"
    MODIFIED = "MODIFIED"
    DELETED = "DELETED"


class PatchType(StrEnum):
    MERGE = "application/merge-patch+json"
    JSON = "application/json-patch+json"
    STRATEGIC = "application/strategic-merge-patch+json"


class Propagation(StrEnum):
    """How a delete treats the object's dependents (DeleteOptions.propagationPolicy): the
    garbage collector deletes them, or orphans them by dropping their ownerReferences to
    it. (Foreground, which keeps the owner until they are gone, is not supported.)"""

    BACKGROUND = "Background"
    ORPHAN = "Orphan"


class WatchEvent:
    """One change: its type, the object as stored at that resourceVersion, and the
    collection (`group/plural`) the object belongs to. Read-only.

    Each receiver gets an object of its own. The store's events make it on first access
    (a receiver that only looks at the collection pays nothing for the object), so one
    event is for one receiver's thread.
    """

    __slots__ = ("_collection", "_object", "_type")

    _object: Obj | None

    def __init__(self, type: EventType, object: Obj, collection: str) -> None:
        self._type, self._object, self._collection = type, object, collection

    @property
    def type(self) -> EventType:
        return self._type

    @property
    def object(self) -> Obj:
        assert self._object is not None
        return self._object

    @property
    def collection(self) -> str:
        return self._collection

    @property
    def resource_version(self) -> int:
        return int(self.object["metadata"]["resourceVersion"])

    def __eq__(self, other: builtins.object) -> bool:
        if not isinstance(other, WatchEvent):
            return NotImplemented
        return (self.type, self.object, self.collection) == (
            other.type,
            other.object,
            other.collection,
        )

    __hash__ = None  # type: ignore[assignment]  # the object is a dict

    def __repr__(self) -> str:
        return (
            f"WatchEvent(type={self.type!r}, object={self.object!r}, "
            f"collection={self.collection!r})"
        )


@dataclass(frozen=True)
class ListResult:
    items: list[Obj]
    resource_version: str
    continue_: str | None = None
    remaining_item_count: int | None = None


def collection_of(info: KindInfo) -> str:
    return f"{info.group}/{info.plural}"


class Watch(Protocol):
    """Events in resourceVersion order; iteration blocks until the next one or close()."""

    def __iter__(self) -> Iterator[WatchEvent]: ...

    def close(self) -> None: ...


class Store(Protocol):
    def create(self, obj: Mapping[str, Any]) -> Obj:
        """Store a new object: uid, creationTimestamp, resourceVersion, generation 1."""
        ...

    def get(
        self, info: KindInfo, name: str, namespace: str = "", *, resource_version: str = ""
    ) -> Obj:
        """The object as stored now; with resource_version "0", as the store's cache has
        it, which may be behind (kube's GetOptions: any version, served from the watch
        cache without asking etcd)."""
        ...

    def list(
        self,
        info: KindInfo,
        namespace: str | None = None,
        *,
        label_selector: str | None = None,
        field_selector: str | None = None,
        limit: int | None = None,
        continue_: str | None = None,
    ) -> ListResult: ...

    def update(self, obj: Mapping[str, Any], *, subresource: str | None = None) -> Obj:
        """Replace an object; a metadata.resourceVersion given must be the stored one."""
        ...

    def patch(
        self,
        info: KindInfo,
        name: str,
        namespace: str,
        patch: Any,
        *,
        patch_type: PatchType = PatchType.MERGE,
        subresource: str | None = None,
    ) -> Obj: ...

    def delete(
        self,
        info: KindInfo,
        name: str,
        namespace: str = "",
        *,
        propagation: Propagation = Propagation.BACKGROUND,
    ) -> Obj:
        """Remove an object, or mark it terminating while finalizers remain; its dependents
        are garbage-collected once it is gone, or orphaned at once."""
        ...

    def watch(
        self,
        info: KindInfo | None = None,
        namespace: str | None = None,
        resource_version: str | None = None,
        *,
        label_selector: str | None = None,
        field_selector: str | None = None,
    ) -> Watch:
        """Events after resource_version (all of them from now when None). Selectors (of one
        kind only) turn an object that starts matching into ADDED, one that stops into
        DELETED."""
        ...

    def subscribe(self, callback: Callable[[WatchEvent], None]) -> Callable[[], None]:
        """Call back synchronously after each committed write; returns the unsubscriber."""
        ...

    @property
    def resource_version(self) -> int: ...

    def close(self) -> None: ...
