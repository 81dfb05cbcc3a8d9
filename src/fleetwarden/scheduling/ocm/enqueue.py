"""Which Placements an event concerns (enqueue.go, cluster_event_handler.go), through
informer indexes rather than scans of every Placement.

- A ManagedCluster (added, changed, deleted; old and new labels both count): the Placements of
  the namespaces that have a Bound ManagedClusterSetBinding to a set the cluster belongs to,
  whose spec.clusterSets names that set or is empty. No other Placement can see the cluster.
- A ManagedClusterSet: the Placements its bindings reach, as above (Bound or not: a binding's
  own change follows).
- A ManagedClusterSetBinding: the Placements of its namespace that name its set or none.
- An AddOnPlacementScore (in its cluster's namespace): the Placements prioritizing by that
  score's resourceName in a namespace bound to a set of that cluster.
- A PlacementDecision: the Placement of its placement label.
- A Placement: itself.

The scheduling controller's own writes do not queue the Placement it is syncing again (an
"echo": upstream syncs it once more and finds nothing to do). In virtual time the store
delivers a write's events to the cache at once, on the writing thread, so an event about
that Placement or its PlacementDecisions heard on the thread syncing it, while it syncs, is
its own. Under the real driver events come on the watch thread and are never taken as echoes.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from fleetwarden.api.meta import Resource
from fleetwarden.api.ocm.cluster import (
    CONDITION_BOUND,
    ManagedCluster,
    ManagedClusterSet,
    ManagedClusterSetBinding,
)
from fleetwarden.api.ocm.placement import SCORE_ADD_ON, AddOnPlacementScore, Placement
from fleetwarden.runtime.informer import Cache, object_key
from fleetwarden.scheduling.ocm.decisions import by_placement
from fleetwarden.scheduling.ocm.kinds import (
    MANAGED_CLUSTER,
    MANAGED_CLUSTER_SET,
    MANAGED_CLUSTER_SET_BINDING,
    PLACEMENT,
)
from fleetwarden.semantics.cluster_sets import BY_CLUSTER_SET, cluster_sets_of

# Index names, and the value indexing a Placement that names no cluster set.
PLACEMENTS_BY_CLUSTER_SET_BINDING = "ocm-placement/placements-by-cluster-set-binding"
PLACEMENTS_BY_SCORE = "ocm-placement/placements-by-score"
ANY_CLUSTER_SET = "*"


def is_bound(binding: ManagedClusterSetBinding) -> bool:
    """Whether the binding has condition Bound=True: only then does it count."""
    return any(
        c.type == CONDITION_BOUND and c.status == "True" for c in binding.status.conditions or ()
    )


def index_placement_by_cluster_set_binding(obj: Resource) -> list[str]:
    """`<namespace>/<set>` for each set of spec.clusterSets, `<namespace>/*` when none."""
    if not isinstance(obj, Placement):
        return []
    namespace = obj.metadata.namespace
    return [f"{namespace}/{s}" for s in obj.spec.cluster_sets or (ANY_CLUSTER_SET,)]


def index_placements_by_score(obj: Resource) -> list[str]:
    """The resourceName of each AddOn score coordinate of the placement's prioritizers."""
    if not isinstance(obj, Placement) or obj.spec.prioritizer_policy is None:
        return []
    coordinates = (c.score_coordinate for c in obj.spec.prioritizer_policy.configurations or ())
    return [
        c.add_on.resource_name
        for c in coordinates
        if c is not None and c.type == SCORE_ADD_ON and c.add_on is not None
    ]


@dataclass
class Enqueuer:
    """The key functions of the scheduling controller's watches. They read the manager's
    cache, known from the first reconcile: until then every Placement is queued anyway, as
    each is announced when listed."""

    cache: Cache | None = None
    # The key of the Placement being synced on this thread, if any.
    _syncing: threading.local = field(default_factory=threading.local)

    @contextmanager
    def syncing(self, key: str) -> Iterator[None]:
        """Mark the events heard on this thread meanwhile as the sync's own."""
        self._syncing.key = key
        try:
            yield
        finally:
            self._syncing.key = None

    def placement_keys(self, obj: Resource) -> list[str]:
        return self._unless_echo([object_key(obj)] if isinstance(obj, Placement) else [])

    def decision_keys(self, obj: Resource) -> list[str]:
        return self._unless_echo(by_placement(obj))

    def _unless_echo(self, keys: list[str]) -> list[str]:
        syncing = getattr(self._syncing, "key", None)
        return [key for key in keys if key != syncing]

    def cluster_keys(self, obj: Resource) -> list[str]:
        cache = self.cache
        if not isinstance(obj, ManagedCluster) or cache is None:
            return []
        return _sorted(
            self._binding_keys(cache, binding)
            for cluster_set in _cluster_sets_of(cache, obj)
            for binding in _bindings_of(cache, cluster_set)
            if is_bound(binding)
        )

    def cluster_set_keys(self, obj: Resource) -> list[str]:
        cache = self.cache
        if not isinstance(obj, ManagedClusterSet) or cache is None:
            return []
        return _sorted(
            self._binding_keys(cache, binding) for binding in _bindings_of(cache, obj.metadata.name)
        )

    def binding_keys(self, obj: Resource) -> list[str]:
        cache = self.cache
        if not isinstance(obj, ManagedClusterSetBinding) or cache is None:
            return []
        return _sorted([self._binding_keys(cache, obj)])

    def score_keys(self, obj: Resource) -> list[str]:
        cache = self.cache
        if not isinstance(obj, AddOnPlacementScore) or cache is None:
            return []
        cluster = cache.informer(MANAGED_CLUSTER).get(obj.metadata.namespace)
        if not isinstance(cluster, ManagedCluster):
            return []
        namespaces = {
            binding.metadata.namespace
            for cluster_set in _cluster_sets_of(cache, cluster)
            for binding in _bindings_of(cache, cluster_set)
            if is_bound(binding)
        }
        placements = cache.informer(PLACEMENT).by_index(PLACEMENTS_BY_SCORE, obj.metadata.name)
        return [object_key(p) for p in placements if p.metadata.namespace in namespaces]

    @staticmethod
    def _binding_keys(cache: Cache, binding: ManagedClusterSetBinding) -> list[str]:
        """The Placements of the binding's namespace that name its set, or no set."""
        namespace = binding.metadata.namespace
        informer = cache.informer(PLACEMENT)
        return [
            object_key(placement)
            for value in (binding.metadata.name, ANY_CLUSTER_SET)
            for placement in informer.by_index(
                PLACEMENTS_BY_CLUSTER_SET_BINDING, f"{namespace}/{value}"
            )
        ]


def _cluster_sets_of(cache: Cache, cluster: ManagedCluster) -> list[str]:
    """GetClusterSetsOfCluster: the names of the sets whose selector picks the cluster."""
    return cluster_sets_of(cluster, cache.informer(MANAGED_CLUSTER_SET).list())


def _bindings_of(cache: Cache, cluster_set: str) -> list[ManagedClusterSetBinding]:
    found = cache.informer(MANAGED_CLUSTER_SET_BINDING).by_index(BY_CLUSTER_SET, cluster_set)
    return [b for b in found if isinstance(b, ManagedClusterSetBinding)]


def _sorted(groups: Iterable[list[str]]) -> list[str]:
    return sorted({key for group in groups for key in group})
