"""Open Cluster Management API group cluster.open-cluster-management.io."""

from fleetwarden.api.kinds import KindInfo
from fleetwarden.api.meta import Resource
from fleetwarden.api.ocm.cluster import (
    GROUP,
    ClusterClaim,
    ManagedCluster,
    ManagedClusterSet,
    ManagedClusterSetBinding,
)
from fleetwarden.api.ocm.placement import AddOnPlacementScore, Placement, PlacementDecision


def _kind(
    version: str,
    kind: str,
    namespaced: bool,
    model: type[Resource],
    *short_names: str,
    has_status: bool = True,
) -> KindInfo:
    plural = kind.lower() + "s"  # every OCM plural is the RESTMapper's guess
    return KindInfo(
        GROUP, version, kind, plural, namespaced, model, short_names, has_status=has_status
    )


# Scopes and short names as the upstream CRDs declare them. v1beta1 cluster sets and bindings
# are no longer served upstream (api#266) but are what users and the docs still write.
KINDS: list[KindInfo] = [
    _kind("v1", "ManagedCluster", False, ManagedCluster, "mcl", "mcls"),
    _kind("v1beta2", "ManagedClusterSet", False, ManagedClusterSet, "mclset", "mclsets"),
    _kind("v1beta1", "ManagedClusterSet", False, ManagedClusterSet, "mclset", "mclsets"),
    _kind(
        "v1beta2",
        "ManagedClusterSetBinding",
        True,
        ManagedClusterSetBinding,
        "mclsetbinding",
        "mclsetbindings",
    ),
    _kind(
        "v1beta1",
        "ManagedClusterSetBinding",
        True,
        ManagedClusterSetBinding,
        "mclsetbinding",
        "mclsetbindings",
    ),
    _kind("v1beta1", "Placement", True, Placement),
    _kind("v1beta1", "PlacementDecision", True, PlacementDecision),
    _kind("v1alpha1", "ClusterClaim", False, ClusterClaim, has_status=False),
    _kind("v1alpha1", "AddOnPlacementScore", True, AddOnPlacementScore),
]
