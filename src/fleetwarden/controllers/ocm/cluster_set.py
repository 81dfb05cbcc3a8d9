"""The ManagedClusterSet controller (ocm pkg/registration/hub/managedclusterset/controller.go):
each set's ClusterSetEmpty condition, from how many ManagedClusters it selects.

A set is looked at when it appears or changes, and when a ManagedCluster that is or was in
it is added, changed or deleted: an event about a cluster enqueues the sets its old and its
new labels put it in, so a cluster moving between sets updates both. Upstream skips cluster
updates that leave the labels alone; looking again costs a list and writes nothing, as the
status is written only when it changed. A set being deleted is left alone, and so is one
whose selector does not parse (upstream's sync fails on it until the spec is fixed).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from fleetwarden.api.meta import Condition, Resource
from fleetwarden.api.ocm.cluster import (
    CONDITION_CLUSTER_SET_EMPTY,
    GROUP,
    ManagedCluster,
    ManagedClusterSet,
)
from fleetwarden.api.registry import REGISTRY
from fleetwarden.controllers.ocm.managed_cluster import MANAGED_CLUSTER
from fleetwarden.runtime.informer import Cache
from fleetwarden.runtime.manager import DONE, Context, Controller, Result, Watches
from fleetwarden.runtime.status import set_condition_if_changed
from fleetwarden.semantics.cluster_sets import cluster_set_selector, cluster_sets_of
from fleetwarden.semantics.selectors import SelectorError

logger = logging.getLogger(__name__)

# v1beta1 and v1beta2 sets share one collection, so one informer sees both.
MANAGED_CLUSTER_SET = REGISTRY.info(f"{GROUP}/v1beta2", "ManagedClusterSet")

MANAGED_CLUSTER_SET_CONTROLLER = "ManagedClusterSetController"

REASON_CLUSTERS_SELECTED = "ClustersSelected"
REASON_NO_CLUSTER_MATCHED = "NoClusterMatched"


def empty_condition(selected: int) -> Condition:
    """ClusterSetEmpty for a set that selects `selected` ManagedClusters."""
    if selected == 0:
        status, reason, message = "True", REASON_NO_CLUSTER_MATCHED, "No ManagedCluster selected"
    else:
        status, reason = "False", REASON_CLUSTERS_SELECTED
        message = f"{selected} ManagedClusters selected"
    return Condition(
        type=CONDITION_CLUSTER_SET_EMPTY, status=status, reason=reason, message=message
    )


@dataclass
class ManagedClusterSetController:
    _cache: Cache | None = None  # the manager's, known from the first reconcile

    def controller(self) -> Controller:
        return Controller(
            name=MANAGED_CLUSTER_SET_CONTROLLER,
            watches=[
                Watches(MANAGED_CLUSTER_SET),
                Watches(MANAGED_CLUSTER, self._sets_of_cluster),
            ],
            reconcile=self.reconcile,
        )

    def _sets_of_cluster(self, cluster: Resource) -> list[str]:
        """The sets the cluster is in; an update brings its old and its new self here."""
        if self._cache is None or not isinstance(cluster, ManagedCluster):
            return []  # nothing reconciled yet: every set is queued as it is listed
        return cluster_sets_of(cluster, self._cache.informer(MANAGED_CLUSTER_SET).list())

    def reconcile(self, key: str, ctx: Context) -> Result:
        self._cache = ctx.cache
        cluster_set = ctx.cache.informer(MANAGED_CLUSTER_SET).get(key)
        if (
            not isinstance(cluster_set, ManagedClusterSet)
            or cluster_set.metadata.deletion_timestamp
        ):
            return DONE
        try:
            selector = cluster_set_selector(cluster_set)
        except SelectorError as exc:
            logger.error("%s: ManagedClusterSet %s: %s", MANAGED_CLUSTER_SET_CONTROLLER, key, exc)
            return DONE
        selected = sum(
            1
            for cluster in ctx.cache.informer(MANAGED_CLUSTER).list()
            if selector.matches(cluster.metadata.labels)
        )
        set_condition_if_changed(ctx.store, cluster_set, empty_condition(selected), ctx.clock.now())
        return DONE


def managed_cluster_set_controller() -> Controller:
    """The ManagedClusterSet controller (upstream's NewManagedClusterSetController)."""
    return ManagedClusterSetController().controller()
