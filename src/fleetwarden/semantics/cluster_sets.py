"""Which ManagedClusters belong to a ManagedClusterSet (sdk-go's BuildClusterSelector)."""

from __future__ import annotations

from fleetwarden.api.ocm.cluster import (
    CLUSTER_SET_LABEL,
    EXCLUSIVE_CLUSTER_SET_LABEL,
    LABEL_SELECTOR,
    LEGACY_CLUSTER_SET_LABEL,
    ManagedCluster,
    ManagedClusterSet,
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


def in_cluster_set(cluster: ManagedCluster, cluster_set: ManagedClusterSet) -> bool:
    """Whether the cluster belongs to the set; a set with a bad selector has no clusters."""
    try:
        return cluster_set_selector(cluster_set).matches(cluster.metadata.labels)
    except SelectorError:
        return False
