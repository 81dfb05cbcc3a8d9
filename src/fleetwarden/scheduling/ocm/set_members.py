"""The ManagedClusters of each ManagedClusterSet, kept up to date from the informers' events
(what helpers.go GetAvailableClusters finds by matching every cluster against every set
for each Placement it schedules).

A cluster's membership is worked out when it is added or changes, against each set's
selector; a set's when its spec changes, against each cluster. A cluster being deleted
belongs to no set. The sorted names of a combination of sets are kept until some
membership changes, so a Placement's candidates cost a lookup per cluster.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Sequence

from fleetwarden.api.meta import Resource
from fleetwarden.api.ocm.cluster import ManagedCluster, ManagedClusterSet
from fleetwarden.runtime.informer import Cache, EventHandler
from fleetwarden.scheduling.ocm.kinds import MANAGED_CLUSTER, MANAGED_CLUSTER_SET
from fleetwarden.semantics.cluster_sets import cluster_set_selector
from fleetwarden.semantics.selectors import Selector, SelectorError


class ClusterSetError(Exception):
    """A bound set whose selector cannot be built: nothing is scheduled until it is fixed."""


class ClusterSetMembers:
    """Which clusters each set of the cache's informers selects."""

    def __init__(self, cache: Cache) -> None:
        self._lock = threading.Lock()
        self._clusters: dict[str, ManagedCluster] = {}
        # Per set: its selector, or why it has none; the clusters it selects.
        self._selectors: dict[str, Selector | SelectorError] = {}
        self._members: dict[str, set[str]] = {}
        # Sorted names of the clusters of some sets, by the sets' names.
        self._unions: dict[tuple[str, ...], list[str]] = {}
        cache.informer(MANAGED_CLUSTER_SET).add_event_handler(
            EventHandler(
                on_add=self._set_added, on_update=self._set_updated, on_delete=self._set_deleted
            )
        )
        cache.informer(MANAGED_CLUSTER).add_event_handler(
            EventHandler(
                on_add=self._cluster_changed,
                on_update=lambda _old, new: self._cluster_changed(new),
                on_delete=self._cluster_deleted,
            )
        )

    def clusters(self, cluster_sets: Sequence[str]) -> list[ManagedCluster]:
        """The clusters of the sets that exist, by name; ClusterSetError for a set whose
        selector does not parse."""
        with self._lock:
            found: list[str] = []
            for name in cluster_sets:
                selector = self._selectors.get(name)
                if isinstance(selector, SelectorError):
                    raise ClusterSetError(
                        f'failed to get clusters from ClusterSet "{name}": {selector}'
                    )
                if selector is not None:
                    found.append(name)
            key = tuple(sorted(set(found)))
            names = self._unions.get(key)
            if names is None:
                names = self._unions[key] = sorted(
                    set[str]().union(*(self._members[s] for s in key))
                )
            return [self._clusters[name] for name in names]

    def _set_added(self, obj: Resource) -> None:
        if not isinstance(obj, ManagedClusterSet):
            return
        try:
            selector: Selector | SelectorError = cluster_set_selector(obj)
        except SelectorError as err:
            selector = err
        with self._lock:
            self._selectors[obj.name] = selector
            self._members[obj.name] = (
                set()
                if isinstance(selector, SelectorError)
                else {n for n, c in self._clusters.items() if _in(c, selector)}
            )
            self._unions.clear()

    def _set_updated(self, old: Resource, new: Resource) -> None:
        """Only the spec says which clusters a set selects: its status changes nothing."""
        if not isinstance(old, ManagedClusterSet) or old.spec != getattr(new, "spec", None):
            self._set_added(new)

    def _set_deleted(self, obj: Resource) -> None:
        with self._lock:
            self._selectors.pop(obj.name, None)
            self._members.pop(obj.name, None)
            self._unions.clear()

    def _cluster_changed(self, obj: Resource) -> None:
        if not isinstance(obj, ManagedCluster):
            return
        name = obj.name
        with self._lock:
            self._clusters[name] = obj
            changed = False
            for set_name, selector in self._selectors.items():
                members = self._members[set_name]
                wanted = not isinstance(selector, SelectorError) and _in(obj, selector)
                if wanted != (name in members):
                    changed = True
                    if wanted:
                        members.add(name)
                    else:
                        members.discard(name)
            if changed:
                self._unions.clear()

    def _cluster_deleted(self, obj: Resource) -> None:
        name = obj.name
        with self._lock:
            self._clusters.pop(name, None)
            for members in self._members.values():
                members.discard(name)
            self._unions.clear()


def _in(cluster: ManagedCluster, selector: Selector) -> bool:
    return cluster.metadata.deletion_timestamp is None and selector.matches(cluster.metadata.labels)


_BY_CACHE: weakref.WeakKeyDictionary[Cache, ClusterSetMembers] = weakref.WeakKeyDictionary()
_BY_CACHE_LOCK = threading.Lock()


def cluster_set_members(cache: Cache) -> ClusterSetMembers:
    """The cache's ClusterSetMembers, made on first use and shared from then on."""
    with _BY_CACHE_LOCK:
        members = _BY_CACHE.get(cache)
        if members is None:
            members = _BY_CACHE[cache] = ClusterSetMembers(cache)
        return members
