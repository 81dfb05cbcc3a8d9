"""cluster.karmada.io/v1alpha1: Cluster, a member cluster as the Karmada control plane sees it.

Upstream serves Cluster from karmada-aggregated-apiserver rather than as a CRD, so its rules
live in pkg/apis/cluster/validation and pkg/apis/cluster/mutation, not in a schema.
"""

from __future__ import annotations

from pydantic import Field

from fleetwarden.api import bootstrap_groups
from fleetwarden.api.core import Taint
from fleetwarden.api.meta import Condition, Model, Quantity, Resource

GROUP = "cluster.karmada.io"
VERSION = "v1alpha1"

# ClusterSyncMode.
SYNC_MODE_PUSH = "Push"
SYNC_MODE_PULL = "Pull"

# Who a karmada-agent is on the hub (karmadactl register): its certificate's CN and O, and
# the group of the bootstrap tokens it joins with.
AGENT_USER_PREFIX = "system:karmada:agent:"
AGENTS_GROUP = "system:karmada:agents"
AGENT_BOOTSTRAP_GROUP = bootstrap_groups.KARMADA

# Cluster condition types.
CONDITION_READY = "Ready"
CONDITION_COMPLETE_API_ENABLEMENTS = "CompleteAPIEnablements"

# Taints the cluster controller keeps in step with the Ready condition.
TAINT_CLUSTER_UNSCHEDULABLE = "cluster.karmada.io/unschedulable"
TAINT_CLUSTER_NOT_READY = "cluster.karmada.io/not-ready"
TAINT_CLUSTER_UNREACHABLE = "cluster.karmada.io/unreachable"


class LocalSecretReference(Model):
    namespace: str = ""
    name: str = ""


class ResourceModelRange(Model):
    """[min, max) of one resource in a grade."""

    name: str = ""
    min: Quantity = "0"
    max: Quantity = "0"


class ResourceModel(Model):
    grade: int = 0
    ranges: list[ResourceModelRange] = Field(default_factory=list)


class ClusterSpec(Model):
    id: str | None = None
    sync_mode: str = ""
    api_endpoint: str | None = None
    secret_ref: LocalSecretReference | None = None
    impersonator_secret_ref: LocalSecretReference | None = None
    insecure_skip_tls_verification: bool | None = Field(
        default=None, alias="insecureSkipTLSVerification"
    )
    proxy_url: str | None = Field(default=None, alias="proxyURL")
    proxy_header: dict[str, str] | None = None
    provider: str | None = None
    region: str | None = None
    # Deprecated upstream in favour of zones; the API server moves it there.
    zone: str | None = None
    zones: list[str] | None = None
    taints: list[Taint] | None = None
    resource_models: list[ResourceModel] | None = None


class APIResource(Model):
    name: str = ""
    kind: str = ""


class APIEnablement(Model):
    group_version: str = ""
    resources: list[APIResource] | None = None


class NodeSummary(Model):
    total_num: int | None = None
    ready_num: int | None = None


class AllocatableModeling(Model):
    grade: int = 0
    count: int = 0


class ResourceSummary(Model):
    allocatable: dict[str, Quantity] | None = None
    allocating: dict[str, Quantity] | None = None
    allocated: dict[str, Quantity] | None = None
    allocatable_modelings: list[AllocatableModeling] | None = None


class ClusterStatus(Model):
    kubernetes_version: str | None = None
    api_enablements: list[APIEnablement] | None = None
    conditions: list[Condition] | None = None
    node_summary: NodeSummary | None = None
    resource_summary: ResourceSummary | None = None
    remedy_actions: list[str] | None = None


class Cluster(Resource):
    spec: ClusterSpec = Field(default_factory=ClusterSpec)
    status: ClusterStatus = Field(default_factory=ClusterStatus)
