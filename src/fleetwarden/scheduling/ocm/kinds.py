"""The kinds the placement scheduling controller reads and writes.

ManagedClusterSet and ManagedClusterSetBinding objects of v1beta1 and v1beta2 share one
collection, so the v1beta2 informers hold both.
"""

from fleetwarden.api.ocm.cluster import GROUP
from fleetwarden.api.registry import REGISTRY

MANAGED_CLUSTER = REGISTRY.info(f"{GROUP}/v1", "ManagedCluster")
MANAGED_CLUSTER_SET = REGISTRY.info(f"{GROUP}/v1beta2", "ManagedClusterSet")
MANAGED_CLUSTER_SET_BINDING = REGISTRY.info(f"{GROUP}/v1beta2", "ManagedClusterSetBinding")
PLACEMENT = REGISTRY.info(f"{GROUP}/v1beta1", "Placement")
PLACEMENT_DECISION = REGISTRY.info(f"{GROUP}/v1beta1", "PlacementDecision")
ADD_ON_PLACEMENT_SCORE = REGISTRY.info(f"{GROUP}/v1alpha1", "AddOnPlacementScore")
