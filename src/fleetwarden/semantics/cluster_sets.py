"""Which ManagedClusters belong to a ManagedClusterSet (sdk-go's BuildClusterSelector), and
the index of ManagedClusterSetBindings by the set they bind."""

from __future__ import annotations

from collections.abc import Iterable

from fleetwarden.api.meta import Resource
from fleetwarden.api.ocm.cluster import (
    CLUSTER_SET_LABEL,
    EXCLUSIVE_CLUSTER_SET_LABEL,
    LABEL_SELECTOR,
    LEGACY_CLUSTER_SET_LABEL,
    ManagedCluster,
    ManagedClusterSet,
    ManagedClusterSetBinding,
)
from fleetwarden.semantics.selectors import (
    Operator,
    Selector,
    SelectorError,
    label_selector_as_selector,
    new_requirement,
)

# An unset selectorType is the exclusive label; v1beta1 spelled it LegacyClusterSetLabel.
_EXCLUSIVE = ("", EXCLUSIVE_CLUSTER_SET_LABEL, LEGACY_CLUSTER_SET_LABEL)

# The index of ManagedClusterSetBindings by spec.clusterSet (upstream's "by-clusterset"). The
# controllers needing it register this name with this very function, so they share one index.
BY_CLUSTER_SET = "by-clusterset"


def by_cluster_set(binding: Resource) -> list[str]:
    """Index bindings by the set they bind (upstream's indexByClusterset)."""
    return [binding.spec.cluster_set] if isinstance(binding, ManagedClusterSetBinding) else []


def cluster_set_selector(cluster_set: ManagedClusterSet) -> Selector:
    """The label selector picking the set's clusters; SelectorError for a bad selector.

    Exclusive sets select `cluster.open-cluster-management.io/clusterset=<set name>`;
    LabelSelector sets their labelSelector (the `global` set's empty one selects all).
    """
    spec = cluster_set.spec.cluster_selector
    selector_type = (spec.selector_type if spec else None) or ""
    if selector_type in _EXCLUSIVE:
        return Selector([new_requirement(CLUSTER_SET_LABEL, Operator.EQUALS, [cluster_set.name])])
    if selector_type == LABEL_SELECTOR and spec is not None:
        return label_selector_as_selector(spec.label_selector)
    raise SelectorError(f"selectorType is not right: {selector_type}")


def cluster_sets_of(cluster: ManagedCluster, sets: Iterable[Resource]) -> list[str]:
    """GetClusterSetsOfCluster: the names of the sets, among `sets` (ManagedClusterSets; other
    objects are skipped), that contain the cluster, in the order given. A set with a bad
    selector contains no cluster."""
    labels = cluster.metadata.labels
    found: list[str] = []
    for cluster_set in sets:
        if not isinstance(cluster_set, ManagedClusterSet):
            continue
        try:
            selector = cluster_set_selector(cluster_set)
        except SelectorError:
            continue
        if selector.matches(labels):
            found.append(cluster_set.name)
    return found
