"""rbac.authorization.k8s.io/v1: Role, ClusterRole, RoleBinding, ClusterRoleBinding."""

from __future__ import annotations

from pydantic import Field

from fleetwarden.api.kinds import KindInfo
from fleetwarden.api.meta import LabelSelector, Model, Resource

GROUP = "rbac.authorization.k8s.io"
VERSION = "v1"
API_VERSION = f"{GROUP}/{VERSION}"

# Subject kinds, and the group a User or Group subject names (a ServiceAccount's is "").
USER = "User"
GROUP_KIND = "Group"
SERVICE_ACCOUNT = "ServiceAccount"
ROLE = "Role"
CLUSTER_ROLE = "ClusterRole"

# The bootstrap policy's marks (kube-apiserver's rbac/bootstrap-roles post-start hook).
AUTOUPDATE_ANNOTATION = "rbac.authorization.kubernetes.io/autoupdate"
BOOTSTRAPPING_LABEL = "kubernetes.io/bootstrapping"
BOOTSTRAPPING_VALUE = "rbac-defaults"


class PolicyRule(Model):
    verbs: list[str] = Field(default_factory=list)
    api_groups: list[str] | None = None
    resources: list[str] | None = None
    resource_names: list[str] | None = None
    non_resource_urls: list[str] | None = Field(default=None, alias="nonResourceURLs")


class AggregationRule(Model):
    cluster_role_selectors: list[LabelSelector] | None = None


class Subject(Model):
    kind: str = ""
    api_group: str | None = None
    name: str = ""
    namespace: str | None = None


class RoleRef(Model):
    api_group: str = ""
    kind: str = ""
    name: str = ""


class Role(Resource):
    rules: list[PolicyRule] | None = None


class ClusterRole(Resource):
    rules: list[PolicyRule] | None = None
    aggregation_rule: AggregationRule | None = None


class RoleBinding(Resource):
    subjects: list[Subject] | None = None
    role_ref: RoleRef = Field(default_factory=RoleRef)


class ClusterRoleBinding(Resource):
    subjects: list[Subject] | None = None
    role_ref: RoleRef = Field(default_factory=RoleRef)


def _kind(kind: str, plural: str, namespaced: bool, model: type[Resource]) -> KindInfo:
    return KindInfo(GROUP, VERSION, kind, plural, namespaced, model, has_status=False)


ROLE_KIND = _kind("Role", "roles", True, Role)
CLUSTER_ROLE_KIND = _kind("ClusterRole", "clusterroles", False, ClusterRole)
ROLE_BINDING_KIND = _kind("RoleBinding", "rolebindings", True, RoleBinding)
CLUSTER_ROLE_BINDING_KIND = _kind(
    "ClusterRoleBinding", "clusterrolebindings", False, ClusterRoleBinding
)
KINDS = [ROLE_KIND, CLUSTER_ROLE_KIND, ROLE_BINDING_KIND, CLUSTER_ROLE_BINDING_KIND]
