"""Informer caches: typed copies of the store's objects, kept current by its events.

One informer per kind, shared by every controller (controller-runtime's cache). Each
event's wire dict is decoded at most once and the typed object is shared by all readers and
handlers: never change an object you got from a cache; `model_copy(deep=True)` it, change
the copy and write that through the store with the resourceVersion you read.

Decoding is the costly part of following a store, so an informer decodes an object as its
event arrives only when a handler or an index needs it then; otherwise on first read.
Handlers that need only the object's key (`EventHandler.on_key`) need no decoding.

The cache does not feed itself: a driver lists (`sync`) and then hands it every store
event (`handle`), from `Store.subscribe` in virtual time or a watch thread in real time.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from fleetwarden.api.karmada.work import ClusterResourceBinding, ResourceBinding
from fleetwarden.api.kinds import KindInfo
from fleetwarden.api.meta import Resource
from fleetwarden.api.registry import REGISTRY, Registry
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
    """client-go's ResourceEventHandlerFuncs: any of the three may be left out.

    `on_key`, if given, hears the object's key (`namespace/name`) of every add, update and
    delete, before the others are called; `on_stored` the object as stored (its wire
    dict, not to be changed) of every add and update. A handler with nothing but these
    lets the informer leave objects undecoded until they are read.
    """

    on_add: Callable[[Resource], None] | None = None
    on_update: Callable[[Resource, Resource], None] | None = None
    on_delete: Callable[[Resource], None] | None = None
    on_key: Callable[[str], None] | None = None
    on_stored: Callable[[Mapping[str, Any]], None] | None = None

    @property
    def needs_objects(self) -> bool:
        return bool(self.on_add or self.on_update or self.on_delete)


# What the informer holds per key: the typed object, or its wire dict not decoded yet.
_Cached = Resource | Mapping[str, Any]


class Informer:
    """The cached objects of one kind, their indexes and their event handlers."""

    def __init__(self, info: KindInfo, lock: threading.RLock) -> None:
        self.info = info
        self._lock = lock
        self._objects: dict[str, _Cached] = {}
        # (namespace, name) of each key, and the keys in each namespace: what lists sort
        # and filter by, without decoding (cache.NamespaceIndex).
        self._names: dict[str, tuple[str, str]] = {}
        self._namespaces: dict[str, set[str]] = {}
        # How many times an object of each namespace came, changed or went (see changes()).
        self._changes: dict[str, int] = {}
        self._indexers: dict[str, IndexFunc] = {}
        # index name -> indexed value -> keys of the objects that have it
        self._indices: dict[str, dict[str, set[str]]] = {}
        # index name -> key -> the values its object was indexed under (unindexed by them)
        self._indexed: dict[str, dict[str, list[str]]] = {}
        self._handlers: list[EventHandler] = []
        # Whether objects are decoded as their events come: a handler or an index needs them.
        self._eager = False
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
                self._decode_all()
                self._indexers[name] = index_func
                self._indices[name] = {}
                self._indexed[name] = {}
                for key, obj in self._objects.items():
                    self._index_one(name, key, obj)  # type: ignore[arg-type]  # all decoded

    def add_event_handler(self, handler: EventHandler) -> None:
        """Register a handler; objects already cached are announced to it as added."""
        with self._lock:
            if handler.needs_objects:
                self._decode_all()
            self._handlers.append(handler)
            if handler.on_add:
                for obj in self.list():
                    if handler.on_key:
                        handler.on_key(object_key(obj))
                    handler.on_add(obj)
            else:
                for key in self._keys(None):
                    if handler.on_key:
                        handler.on_key(key)
                    if handler.on_stored:
                        handler.on_stored(_wire(self._objects[key]))

    def remove_event_handler(self, handler: EventHandler) -> None:
        """Call the handler no more (a stopped controller's)."""
        with self._lock:
            self._handlers = [h for h in self._handlers if h is not handler]

    def get(self, name: str, namespace: str = "") -> Resource | None:
        with self._lock:
            key = _key(namespace, name)
            obj = self._objects.get(key)
            if obj is None or isinstance(obj, Resource):
                return obj
            return self._typed(key)

    def by_index(self, index_name: str, value: str) -> list[Resource]:
        """The objects whose index function gave `value`, ordered by key."""
        with self._lock:
            if index_name not in self._indices:
                raise KeyError(f"{self.info.kind} informer has no index {index_name!r}")
            keys = sorted(self._indices[index_name].get(value, ()))
            return [self._typed(key) for key in keys]

    def index_values(self, index_name: str) -> list[str]:
        """The values some object is indexed under, sorted (ListIndexFuncValues)."""
        with self._lock:
            if index_name not in self._indices:
                raise KeyError(f"{self.info.kind} informer has no index {index_name!r}")
            return sorted(self._indices[index_name])

    def changes(self, namespace: str) -> int:
        """How many times an object of the namespace was added, changed or removed since
        the informer began: two equal readings mean its objects are as they were, which is
        cheaper to know than listing them again."""
        with self._lock:
            return self._changes.get(namespace, 0)

    def list(self, namespace: str | None = None) -> list[Resource]:
        """The cached objects (of one namespace, if given), ordered by namespace and name."""
        with self._lock:
            return [self._typed(key) for key in self._keys(namespace)]

    def replace(
        self,
        items: Iterable[Mapping[str, Any]],
        resource_version: int,
        decoded: Iterable[Resource] | None = None,
    ) -> None:
        """Take a fresh list as the truth; handlers hear what changed since the last one.
        The items become the cache's (a store's list hands out fresh copies); `decoded`,
        if given, are the items decoded already, in the same order."""
        with self._lock:
            fresh: dict[str, _Cached] = {}
            wires: dict[str, Mapping[str, Any]] = {}
            typed = iter(decoded) if decoded is not None else None
            for item in items:
                # Each decoded before anything moves when handlers or indexes need them.
                key = _wire_key(item)
                wires[key] = item
                if typed is not None:
                    fresh[key] = next(typed)
                else:
                    fresh[key] = REGISTRY.decode(item) if self._eager else item
            for key in sorted(self._objects.keys() - fresh.keys()):
                self._delete(key)
            for key, obj in fresh.items():
                old = self._objects.get(key)
                if old is None or _resource_version(old) != _resource_version(obj):
                    self._upsert(key, obj, wires[key])
            self._resource_version = resource_version
            self._synced = True

    def handle(self, event: WatchEvent) -> None:
        """Apply one watch event, unless the last list already covered it. The event's
        object becomes the cache's (the store gives each receiver a copy of its own)."""
        with self._lock:
            resource_version = event.resource_version
            if resource_version <= self._resource_version:
                return
            wire = event.object
            key = _wire_key(wire)
            if event.type == EventType.DELETED:
                self._resource_version = resource_version
                self._delete(key)
                return
            # Decoded before anything moves: an object that does not decode is not taken.
            obj = REGISTRY.decode(wire) if self._eager else wire
            self._resource_version = resource_version
            self._upsert(key, obj, wire)

    def _typed(self, key: str) -> Resource:
        """The key's object, decoded now if it was not yet."""
        obj = self._objects[key]
        if isinstance(obj, Resource):
            return obj
        typed = self._objects[key] = REGISTRY.decode(obj)
        return typed

    def _decode_all(self) -> None:
        """Decode every object not decoded yet; from now on, decode each as it comes."""
        for key in self._objects:
            self._typed(key)
        self._eager = True

    def _keys(self, namespace: str | None) -> Sequence[str]:
        """The keys (of objects in one namespace, if given) by namespace and name."""
        keys = self._objects if namespace is None else self._namespaces.get(namespace, ())
        return sorted(keys, key=self._names.__getitem__)

    def _upsert(self, key: str, obj: _Cached, wire: Mapping[str, Any]) -> None:
        """Cache the object: typed if handlers or indexes need it (they are then given
        typed objects only), else as its wire dict (`wire`, what it was decoded from)."""
        old = self._objects.get(key)
        self._objects[key] = obj
        if old is None:
            names = self._names[key] = _names(obj)
            self._namespaces.setdefault(names[0], set()).add(key)
        self._changed(self._names[key][0])
        if not self._eager:
            for handler in self._handlers:
                if handler.on_key:
                    handler.on_key(key)
                if handler.on_stored:
                    handler.on_stored(wire)
            return
        assert isinstance(obj, Resource) and (old is None or isinstance(old, Resource))
        if old is not None:
            self._unindex(key)
        for name in self._indexers:
            self._index_one(name, key, obj)
        for handler in self._handlers:
            if handler.on_key:
                handler.on_key(key)
            if handler.on_stored:
                handler.on_stored(wire)
            if old is None:
                if handler.on_add:
                    handler.on_add(obj)
            elif handler.on_update:
                handler.on_update(old, obj)

    def _delete(self, key: str) -> None:
        old = self._objects.pop(key, None)
        if old is None:
            return
        namespace = self._names.pop(key)[0]
        self._changed(namespace)
        keys = self._namespaces[namespace]
        keys.discard(key)
        if not keys:
            del self._namespaces[namespace]
        if not self._eager:
            for handler in self._handlers:
                if handler.on_key:
                    handler.on_key(key)
            return
        assert isinstance(old, Resource)
        self._unindex(key)
        for handler in self._handlers:
            if handler.on_key:
                handler.on_key(key)
            if handler.on_delete:
                handler.on_delete(old)

    def _changed(self, namespace: str) -> None:
        self._changes[namespace] = self._changes.get(namespace, 0) + 1

    def _index_one(self, name: str, key: str, obj: Resource) -> None:
        values = self._indexers[name](obj)
        index = self._indices[name]
        for value in values:
            keys = index.get(value)
            if keys is None:
                index[value] = {key}
            else:
                keys.add(key)
        if values:
            self._indexed[name][key] = values
        else:
            self._indexed[name].pop(key, None)

    def _unindex(self, key: str) -> None:
        """Take the key out of every index, by the values it was indexed under."""
        for name, indexed in self._indexed.items():
            values = indexed.pop(key, None)
            if not values:
                continue
            index = self._indices[name]
            for value in values:
                keys = index.get(value)
                if keys is not None:
                    keys.discard(key)
                    if not keys:
                        del index[value]


def _wire(obj: _Cached) -> Mapping[str, Any]:
    return obj.to_dict() if isinstance(obj, Resource) else obj


def _wire_key(obj: Mapping[str, Any]) -> str:
    """object_key of a wire dict, without decoding it."""
    namespace, name = _names(obj)
    return _key(namespace, name)


def _first_key(pair: tuple[Mapping[str, Any], Resource]) -> str:
    return _wire_key(pair[0])


def _names(obj: Resource | Mapping[str, Any]) -> tuple[str, str]:
    """(namespace, name) of a cached object, typed or not, as the typed one has them."""
    if isinstance(obj, Resource):
        return obj.metadata.namespace, obj.metadata.name
    meta = obj.get("metadata") or {}
    return meta.get("namespace") or "", meta.get("name") or ""


def _resource_version(obj: Resource | Mapping[str, Any]) -> str | None:
    if isinstance(obj, Resource):
        return obj.metadata.resource_version
    rv: str | None = (obj.get("metadata") or {}).get("resourceVersion")
    return rv


@dataclass(frozen=True)
class Snapshot:
    """Every object a store held at one resourceVersion, by collection: each as stored (a
    wire dict nobody else holds) and decoded. A cache syncs from it instead of listing and
    decoding the store again: a restored store's objects, which its restore read already."""

    resource_version: int
    objects: Mapping[str, Sequence[tuple[Mapping[str, Any], Resource]]]


class Cache:
    """One shared informer per kind, all fed from one store (controller-runtime's cache).
    `registry` resolves a kind named by apiVersion and kind (a hub's, for its custom kinds)."""

    def __init__(self, store: Store, registry: Registry = REGISTRY) -> None:
        self._store = store
        self.registry = registry
        # One lock for every informer: a handler of one may read another without deadlock.
        self._lock = threading.RLock()
        self._informers: dict[str, Informer] = {}
        self._by_id: dict[int, tuple[KindInfo, Informer]] = {}  # by the KindInfo asked with
        self._started = False

    def informer(self, info: KindInfo) -> Informer:
        """The kind's informer; one asked for after `sync` is listed at once."""
        # Reconcilers ask for informers all the time: one dict read once it exists (by
        # identity: a KindInfo's hash goes through all its fields).
        known = self._by_id.get(id(info))
        if known is not None and known[0] is info:
            return known[1]
        with self._lock:
            collection = collection_of(info)
            informer = self._informers.get(collection)
            if informer is None:
                informer = self._informers[collection] = Informer(info, self._lock)
                if self._started:
                    self._list(informer)
            self._by_id[id(info)] = (info, informer)  # held, so its id is not reused
            return informer

    def informer_for(self, api_version: str, kind: str) -> Informer:
        """The informer of the kind an object reference names by apiVersion and kind."""
        return self.informer(self.registry.info(api_version, kind))

    def sync(self, snapshot: Snapshot | None = None) -> None:
        """List every informer's kind from the store (again, after a watch expired); or
        take them from `snapshot` if the store is still at its resourceVersion. An informer
        asked for later lists what is stored then."""
        with self._lock:
            self._started = True
            if snapshot is not None and snapshot.resource_version != self._store.resource_version:
                snapshot = None
            for informer in self._informers.values():
                self._list(informer, snapshot)

    def handle(self, event: WatchEvent) -> None:
        with self._lock:
            informer = self._informers.get(event.collection)
            if informer is not None:
                informer.handle(event)

    @property
    def has_synced(self) -> bool:
        with self._lock:
            return self._started and all(i.has_synced for i in self._informers.values())

    def _list(self, informer: Informer, snapshot: Snapshot | None = None) -> None:
        if snapshot is not None:
            # In the order a list gives them: handlers hear them in it.
            objects = sorted(snapshot.objects.get(collection_of(informer.info), ()), key=_first_key)
            wires, typed = [wire for wire, _ in objects], [obj for _, obj in objects]
            informer.replace(wires, snapshot.resource_version, typed)
            return
        result = self._store.list(informer.info)
        informer.replace(result.items, int(result.resource_version))
