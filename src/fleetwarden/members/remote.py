"""The hub's API, seen by an agent as a Store: what lets a member agent run the very same
controller (members/simulated.py) over HTTP that it runs beside the hub in a simulation.

Writes and reads go through the hub client one for one. A view is scoped, as an agent's
credentials scope it: each kind it lists or watches may be limited to one namespace (a
member's execution space) or to one object by name (its own Cluster, by a field selector:
what an agent may list and watch), a kind outside the scope is never asked for (and lists
empty), and its watch of "everything" is one HTTP watch per kind of the scope, merged. A
watch stream that breaks or ends is opened again from the last resourceVersion it
delivered, so a hub that restarts loses the agent nothing; one the hub has compacted away
raises Expired, and the driver lists afresh.
"""

from __future__ import annotations

import logging
import queue
import threading
from collections.abc import Callable, Iterator, Mapping
from typing import Any, NamedTuple

from fleetwarden.api.errors import Expired, StatusError
from fleetwarden.api.kinds import KindInfo
from fleetwarden.api.registry import REGISTRY
from fleetwarden.client.client import Client, Watch
from fleetwarden.client.client import PatchType as ClientPatchType
from fleetwarden.client.errors import ClientError
from fleetwarden.store.interface import (
    EventType,
    ListResult,
    Obj,
    PatchType,
    Propagation,
    WatchEvent,
    collection_of,
)

logger = logging.getLogger(__name__)

# How long a broken watch waits before it is opened again.
RECONNECT_DELAY = 1.0
_PATCH_TYPES: dict[PatchType, ClientPatchType] = {PatchType.MERGE: "merge", PatchType.JSON: "json"}


class View(NamedTuple):
    """What of a kind a scope lists and watches: one namespace, one object, or all."""

    namespace: str | None = None
    name: str | None = None

    def field_selector(self, given: str | None) -> str | None:
        if self.name is None:
            return given
        by_name = f"metadata.name={self.name}"
        return f"{given},{by_name}" if given else by_name


Scope = Mapping[KindInfo, View]


def _info(obj: Mapping[str, Any]) -> KindInfo:
    return REGISTRY.info(str(obj.get("apiVersion", "")), str(obj.get("kind", "")))


class RemoteStore:
    """The Store protocol over a hub client, limited to `scope` when listing and watching."""

    def __init__(self, client: Client, scope: Scope) -> None:
        if not scope:
            raise ValueError("a remote store needs a scope: the kinds it lists and watches")
        self.client, self.scope = client, dict(scope)

    def create(self, obj: Mapping[str, Any]) -> Obj:
        return self.client.create(obj, info=_info(obj))

    def get(
        self, info: KindInfo, name: str, namespace: str = "", *, resource_version: str = ""
    ) -> Obj:
        return self.client.get(info, name, namespace)  # the newest: any version will do

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
        view = self.scope.get(info)
        if view is None:
            return ListResult([], str(self.resource_version))
        listed = self.client.list(
            info, namespace or view.namespace,
            label_selector=label_selector, field_selector=view.field_selector(field_selector),
            limit=limit, continue_=continue_,
        )  # fmt: skip
        metadata = listed.get("metadata") or {}
        items = [{"apiVersion": info.api_version, "kind": info.kind, **item}
                 for item in listed.get("items") or []]  # fmt: skip
        return ListResult(
            items,
            str(metadata.get("resourceVersion", "0")),
            metadata.get("continue") or None,
            metadata.get("remainingItemCount"),
        )

    def update(self, obj: Mapping[str, Any], *, subresource: str | None = None) -> Obj:
        return self.client.update(obj, info=_info(obj), subresource=subresource)

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
        kind = _PATCH_TYPES[patch_type]
        return self.client.patch(
            info, name, namespace, patch, patch_type=kind, subresource=subresource
        )

    def delete(
        self,
        info: KindInfo,
        name: str,
        namespace: str = "",
        *,
        propagation: Propagation = Propagation.BACKGROUND,
    ) -> Obj:
        return self.client.delete(info, name, namespace, propagation_policy=propagation.value)

    def watch(
        self,
        info: KindInfo | None = None,
        namespace: str | None = None,
        resource_version: str | None = None,
        *,
        label_selector: str | None = None,
        field_selector: str | None = None,
    ) -> MergedWatch:
        """Events after resource_version of one kind, or of every kind of the scope; the
        hub applies the selectors."""
        if info is None:
            kinds = self.scope
        else:
            view = self.scope.get(info, View())
            kinds = {info: View(namespace or view.namespace, view.name)}
        selectors = Selectors(label_selector, field_selector)
        return MergedWatch(self.client, kinds, resource_version, selectors)

    def subscribe(self, callback: Callable[[WatchEvent], None]) -> Callable[[], None]:
        raise NotImplementedError("a remote store is watched, not subscribed to")

    @property
    def resource_version(self) -> int:
        """The hub's current resourceVersion, as a list of the scope reports it."""
        info, view = next(iter(self.scope.items()))
        listed = self.client.list(
            info, view.namespace, field_selector=view.field_selector(None), limit=1
        )
        return int((listed.get("metadata") or {}).get("resourceVersion") or 0)

    def close(self) -> None:
        self.client.close()


class Selectors(NamedTuple):
    label_selector: str | None = None
    field_selector: str | None = None


class MergedWatch:
    """One watch per kind, merged into one stream of store WatchEvents."""

    def __init__(
        self,
        client: Client,
        kinds: Scope,
        resource_version: str | None,
        selectors: Selectors,
    ) -> None:
        self._events: queue.Queue[WatchEvent | Exception | None] = queue.Queue()
        self._closed = threading.Event()
        self._streams: list[_Stream] = [
            _Stream(client, info, view, resource_version, selectors, self._events, self._closed)
            for info, view in kinds.items()
        ]
        for stream in self._streams:
            stream.start()

    def __iter__(self) -> Iterator[WatchEvent]:
        while (item := self._events.get()) is not None:
            if isinstance(item, Exception):
                self.close()
                raise item
            yield item

    def close(self) -> None:
        if self._closed.is_set():
            return
        self._closed.set()
        for stream in self._streams:
            stream.close()
        self._events.put(None)


class _Stream(threading.Thread):
    """One kind's watch, opened again from the last resourceVersion whenever it ends."""

    def __init__(
        self,
        client: Client,
        info: KindInfo,
        view: View,
        resource_version: str | None,
        selectors: Selectors,
        events: queue.Queue[WatchEvent | Exception | None],
        closed: threading.Event,
    ) -> None:
        super().__init__(name=f"watch-{info.plural}", daemon=True)
        self.client, self.info, self.view = client, info, view
        self.resource_version, self.selectors = resource_version, selectors
        self.events, self.closed = events, closed
        self._collection = collection_of(info)
        self._lock = threading.Lock()
        self._watch: Watch | None = None

    def run(self) -> None:
        while not self.closed.is_set():
            try:
                self._follow()
            except Expired as exc:
                self.events.put(exc)
                return
            except (ClientError, StatusError) as exc:
                logger.info("watch of %s: %s; watching again", self.info.plural, exc)
            self.closed.wait(RECONNECT_DELAY)

    def _follow(self) -> None:
        watch = self.client.watch(
            self.info,
            self.view.namespace,
            resource_version=self.resource_version,
            label_selector=self.selectors.label_selector,
            field_selector=self.view.field_selector(self.selectors.field_selector),
        )
        with self._lock:
            self._watch = watch
        if self.closed.is_set():
            watch.close()
        for event in watch:
            if event.type not in EventType.__members__:
                continue  # a BOOKMARK
            obj = {"apiVersion": self.info.api_version, "kind": self.info.kind, **event.object}
            self.resource_version = str(obj["metadata"]["resourceVersion"])
            self.events.put(WatchEvent(EventType(event.type), obj, self._collection))

    def close(self) -> None:
        with self._lock:
            if self._watch is not None:
                self._watch.close()
