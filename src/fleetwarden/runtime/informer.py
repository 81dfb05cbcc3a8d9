"""Informer caches: typed copies of the store's objects, kept current by its events.

One informer per kind, shared by every controller (controller-runtime's cache). Each
event's wire dict is decoded once and the typed object is shared by all readers and
handlers: never change an object you got from a cache; `model_copy(deep=True)` it, change
the copy and write that through the store with the resourceVersion you read.

The cache does not feed itself: a driver lists (`sync`) and then hands it every store
event (`handle`), from `Store.subscribe` in virtual time or a watch thread in real time.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from fleetwarden.api.karmada.work import ClusterResourceBinding, ResourceBinding
from fleetwarden.api.kinds import KindInfo
from fleetwarden.api.meta import Resource
from fleetwarden.api.registry import REGISTRY
from fleetwarden.store.interface import EventType, Store, WatchEvent, collection_of

IndexFunc = Callable[[Resource], list[str]]


def object_key(obj: Resource) -> str:
    """cache.MetaNamespaceKeyFunc: `namespace/name`, or `name` when cluster-scoped."""
    return _key(obj.metadata.namespace, obj.metadata.name)


def _key(namespace: str, name: str) -> str:
    return f"{namespace}/{name}" if namespace else name


def split_key(key: str) -> tuple[str, str]:
    """cache.SplitMetaNamespaceKey: (namespace, name); namespace "" when cluster-scoped."""
    namespace, _, name = key.rpartition("/")
    return namespace, name


def by_target_cluster(obj: Resource) -> list[str]:
    """Index (Cluster)ResourceBindings by the clusters they are scheduled to."""
    if not isinstance(obj, ResourceBinding | ClusterResourceBinding):
        return []
    return [target.name for target in obj.spec.clusters or []]


@dataclass(frozen=True)
class EventHandler:
    """client-go's ResourceEventHandlerFuncs: any of the three may be left out."""

    on_add: Callable[[Resource], None] | None = None
    on_update: Callable[[Resource, Resource], None] | None = None
    on_delete: Callable[[Resource], None] | None = None


class Informer:
    """The cached objects of one kind, their indexes and their event handlers."""

    def __init__(self, info: KindInfo, lock: threading.RLock) -> None:
        self.info = info
        self._lock = lock
        self._objects: dict[str, Resource] = {}
        self._indexers: dict[str, IndexFunc] = {}
        # index name -> indexed value -> keys of the objects that have it
        self._indices: dict[str, dict[str, set[str]]] = {}
        self._handlers: list[EventHandler] = []
        self._resource_version = 0
        self._synced = False

    @property
    def has_synced(self) -> bool:
        return self._synced

    def add_indexers(self, indexers: Mapping[str, IndexFunc]) -> None:
        with self._lock:
            for name, index_func in indexers.items():
                existing = self._indexers.get(name)
                if existing is index_func:  # two controllers sharing one index
                    continue
                if existing is not None:
                    raise ValueError(f"{self.info.kind} informer: indexer {name!r} already exists")
                self._indexers[name] = index_func
                self._indices[name] = {}
                for key, obj in self._objects.items():
                    self._index_one(name, key, obj)

    def add_event_handler(self, handler: EventHandler) -> None:
        """Register a handler; objects already cached are announced to it as added."""
        with self._lock:
            self._handlers.append(handler)
            if handler.on_add:
                for obj in self.list():
                    handler.on_add(obj)

    def get(self, name: str, namespace: str = "") -> Resource | None:
        with self._lock:
            return self._objects.get(_key(namespace, name))

    def by_index(self, index_name: str, value: str) -> list[Resource]:
        """The objects whose index function gave `value`, ordered by key."""
        with self._lock:
            if index_name not in self._indices:
                raise KeyError(f"{self.info.kind} informer has no index {index_name!r}")
            keys = sorted(self._indices[index_name].get(value, ()))
            return [self._objects[key] for key in keys]

    def list(self, namespace: str | None = None) -> list[Resource]:
        """The cached objects (of one namespace, if given), ordered by namespace and name."""
        with self._lock:
            objects = [
                o
                for o in self._objects.values()
                if namespace is None or o.metadata.namespace == namespace
            ]
        return sorted(objects, key=lambda o: (o.metadata.namespace, o.metadata.name))

    def replace(self, items: Iterable[Mapping[str, Any]], resource_version: int) -> None:
        """Take a fresh list as the truth; handlers hear what changed since the last one."""
        with self._lock:
            fresh = {object_key(obj): obj for obj in map(REGISTRY.decode, items)}
            for key in sorted(self._objects.keys() - fresh.keys()):
                self._delete(key)
            for key, obj in fresh.items():
                old = self._objects.get(key)
                if old is None or old.metadata.resource_version != obj.metadata.resource_version:
                    self._upsert(key, obj)
            self._resource_version = resource_version
            self._synced = True

    def handle(self, event: WatchEvent) -> None:
        """Apply one watch event, unless the last list already covered it."""
        with self._lock:
            if event.resource_version <= self._resource_version:
                return
            obj = REGISTRY.decode(event.object)
            self._resource_version = event.resource_version
            if event.type == EventType.DELETED:
                self._delete(object_key(obj))
            else:
                self._upsert(object_key(obj), obj)

    def _upsert(self, key: str, obj: Resource) -> None:
        old = self._objects.get(key)
        if old is not None:
            self._unindex(key, old)
        self._objects[key] = obj
        for name in self._indexers:
            self._index_one(name, key, obj)
        for handler in self._handlers:
            if old is None and handler.on_add:
                handler.on_add(obj)
            elif old is not None and handler.on_update:
                handler.on_update(old, obj)

    def _delete(self, key: str) -> None:
        old = self._objects.pop(key, None)
        if old is None:
            return
        self._unindex(key, old)
        for handler in self._handlers:
            if handler.on_delete:
                handler.on_delete(old)

    def _index_one(self, name: str, key: str, obj: Resource) -> None:
        for value in self._indexers[name](obj):
            self._indices[name].setdefault(value, set()).add(key)

    def _unindex(self, key: str, obj: Resource) -> None:
        for name, index_func in self._indexers.items():
            index = self._indices[name]
            for value in index_func(obj):
                keys = index.get(value)
                if keys is not None:
                    keys.discard(key)
                    if not keys:
                        del index[value]


class Cache:
    """One shared informer per kind, all fed from one store (controller-runtime's cache)."""

    def __init__(self, store: Store) -> None:
        self._store = store
        # One lock for every informer: a handler of one may read another without deadlock.
        self._lock = threading.RLock()
        self._informers: dict[str, Informer] = {}
        self._started = False

    def informer(self, info: KindInfo) -> Informer:
        """The kind's informer; one asked for after `sync` is listed at once."""
        with self._lock:
            collection = collection_of(info)
            informer = self._informers.get(collection)
            if informer is None:
                informer = self._informers[collection] = Informer(info, self._lock)
                if self._started:
                    self._list(informer)
            return informer

    def sync(self) -> None:
        """List every informer's kind from the store (again, after a watch expired)."""
        with self._lock:
            self._started = True
            for informer in self._informers.values():
                self._list(informer)

    def handle(self, event: WatchEvent) -> None:
        with self._lock:
            informer = self._informers.get(event.collection)
            if informer is not None:
                informer.handle(event)

    @property
    def has_synced(self) -> bool:
        with self._lock:
            return self._started and all(i.has_synced for i in self._informers.values())

    def _list(self, informer: Informer) -> None:
        result = self._store.list(informer.info)
        informer.replace(result.items, int(result.resource_version))
