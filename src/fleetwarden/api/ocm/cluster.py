"""cluster.open-cluster-management.io: ManagedCluster, ManagedClusterSet, ManagedClusterSetBinding,
ClusterClaim.

ManagedClusterSet and ManagedClusterSetBinding are served in v1beta2 (upstream today) and in
v1beta1 (removed upstream in api#266, still written by users and docs). Both versions share one
shape; v1beta1 only spells the exclusive selector type `LegacyClusterSetLabel` and has no
`managedNamespaces`, which admission takes care of.
"""

from __future__ import annotations

from pydantic import Field

from fleetwarden.api import bootstrap_groups
from fleetwarden.api.core import Taint
from fleetwarden.api.meta import Condition, LabelSelector, Model, Quantity, Resource

GROUP = "cluster.open-cluster-management.io"
# The group of the hub's virtual subresources: managedclusters/accept, /clientcertificates.
REGISTER_GROUP = "register.open-cluster-management.io"

# Taint effects (clusterv1.TaintEffect).
NO_SELECT = "NoSelect"
PREFER_NO_SELECT = "PreferNoSelect"
NO_SELECT_IF_NEW = "NoSelectIfNew"
TAINT_EFFECTS = (NO_SELECT, PREFER_NO_SELECT, NO_SELECT_IF_NEW)

# Taints the registration controller keeps in step with the Available condition.
TAINT_UNAVAILABLE = "cluster.open-cluster-management.io/unavailable"
TAINT_UNREACHABLE = "cluster.open-cluster-management.io/unreachable"

# ManagedCluster condition types.
CONDITION_JOINED = "ManagedClusterJoined"
CONDITION_HUB_ACCEPTED = "HubAcceptedManagedCluster"
CONDITION_HUB_DENIED = "HubDeniedManagedCluster"
CONDITION_AVAILABLE = "ManagedClusterConditionAvailable"
CONDITION_CLOCK_SYNCED = "ManagedClusterConditionClockSynced"

DEFAULT_LEASE_DURATION_SECONDS = 60

# The label that puts a ManagedCluster into a ManagedClusterSet.
CLUSTER_SET_LABEL = "cluster.open-cluster-management.io/clusterset"
# clusterv1.ClusterNameLabelKey: on what the hub keeps for one cluster (its namespace, its
# Lease, its agent's RBAC, its agent's CertificateSigningRequests).
CLUSTER_NAME_LABEL = "open-cluster-management.io/cluster-name"
# Who a registration agent is on the hub: its certificate's CN
# (`system:open-cluster-management:<cluster>:<agent>`) and O, and the group of the
# bootstrap tokens it joins with.
AGENT_GROUP_PREFIX = "system:open-cluster-management:"
MANAGED_CLUSTERS_GROUP = "system:open-cluster-management:managed-clusters"
AGENT_BOOTSTRAP_GROUP = bootstrap_groups.OCM
DEFAULT_CLUSTER_SET = "default"
GLOBAL_CLUSTER_SET = "global"

# ManagedClusterSelector.selectorType.
EXCLUSIVE_CLUSTER_SET_LABEL = "ExclusiveClusterSetLabel"  # v1beta2
LEGACY_CLUSTER_SET_LABEL = "LegacyClusterSetLabel"  # v1beta1's name for the same selector
LABEL_SELECTOR = "LabelSelector"

CONDITION_CLUSTER_SET_EMPTY = "ClusterSetEmpty"
CONDITION_BOUND = "Bound"


class ClientConfig(Model):
    url: str = ""
    ca_bundle: str | None = None  # base64, as []byte travels in JSON


class ManagedClusterSpec(Model):
    managed_cluster_client_configs: list[ClientConfig] | None = None
    hub_accepts_client: bool = False
    lease_duration_seconds: int | None = None
    taints: list[Taint] | None = None


class ManagedClusterVersion(Model):
    kubernetes: str | None = None


class ManagedClusterClaim(Model):
    name: str | None = None
    value: str | None = None


class ManagedNamespaceConfig(Model):
    name: str = ""


class ClusterSetManagedNamespaceConfig(ManagedNamespaceConfig):
    cluster_set: str = ""
    conditions: list[Condition] | None = None


class ManagedClusterStatus(Model):
    conditions: list[Condition] | None = None
    capacity: dict[str, Quantity] | None = None
    allocatable: dict[str, Quantity] | None = None
    version: ManagedClusterVersion | None = None
    cluster_claims: list[ManagedClusterClaim] | None = None
    managed_namespaces: list[ClusterSetManagedNamespaceConfig] | None = None


class ManagedCluster(Resource):
    """A member cluster registered with the hub (cluster-scoped; its name is the cluster's)."""

    spec: ManagedClusterSpec = Field(default_factory=ManagedClusterSpec)
    status: ManagedClusterStatus = Field(default_factory=ManagedClusterStatus)


class ManagedClusterSelector(Model):
    selector_type: str | None = None
    label_selector: LabelSelector | None = None


class ManagedClusterSetSpec(Model):
    cluster_selector: ManagedClusterSelector | None = None
    managed_namespaces: list[ManagedNamespaceConfig] | None = None  # v1beta2


class ManagedClusterSetStatus(Model):
    conditions: list[Condition] | None = None


class ManagedClusterSet(Resource):
    """A group of ManagedClusters, picked by the clusterset label or by a label selector."""

    spec: ManagedClusterSetSpec = Field(default_factory=ManagedClusterSetSpec)
    status: ManagedClusterSetStatus = Field(default_factory=ManagedClusterSetStatus)


class ManagedClusterSetBindingSpec(Model):
    cluster_set: str = ""


class ManagedClusterSetBindingStatus(Model):
    conditions: list[Condition] | None = None


class ManagedClusterSetBinding(Resource):
    """Projects a ManagedClusterSet into a namespace; its name must be the set's."""

    spec: ManagedClusterSetBindingSpec = Field(default_factory=ManagedClusterSetBindingSpec)
    status: ManagedClusterSetBindingStatus = Field(default_factory=ManagedClusterSetBindingStatus)


class ClusterClaimSpec(Model):
    value: str | None = None


class ClusterClaim(Resource):
    """A fact a managed cluster claims about itself (id.k8s.io, platform...); no status."""

    spec: ClusterClaimSpec = Field(default_factory=ClusterClaimSpec)
