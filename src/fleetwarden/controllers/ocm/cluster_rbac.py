"""What a ManagedCluster's agent may do on the hub, as the registration hub grants it (ocm
pkg/registration/hub/managedcluster and pkg/registration/hub/manifests/rbac): its identity
is the groups `system:open-cluster-management:<cluster>` and `open-cluster-management:<cluster>`.

- ClusterRole and ClusterRoleBinding `open-cluster-management:managedcluster:<cluster>`, for
  every cluster: before acceptance, reading its own ManagedCluster; once accepted, also
  updating it and its status, asking for certificates and renewing its own.
- Once accepted, RoleBindings `open-cluster-management:managedcluster:<cluster>:registration`
  and `...:work` in the cluster's namespace, to the shared ClusterRoles
  `open-cluster-management:managedcluster:registration` (its lease, add-ons, events) and
  `...:work` (its ManifestWorks).
- The bootstrap ClusterRole `open-cluster-management:bootstrap`, bound to the group of
  bootstrap tokens `system:bootstrappers:managedcluster`, with which an agent creates its
  ManagedCluster and its first CertificateSigningRequest (clusteradm init's).

Every per-cluster object carries the label `open-cluster-management.io/cluster-name`.
"""

from __future__ import annotations

from typing import Any

from fleetwarden.api import rbac
from fleetwarden.api.meta import Resource
from fleetwarden.api.ocm.cluster import (
    AGENT_BOOTSTRAP_GROUP,
    AGENT_GROUP_PREFIX,
    CLUSTER_NAME_LABEL,
    GROUP,
    REGISTER_GROUP,
)
from fleetwarden.auth.bootstrap import READ, cluster_role, cluster_role_binding, group, rule

PREFIX = "open-cluster-management:managedcluster"
REGISTRATION_ROLE = f"{PREFIX}:registration"
WORK_ROLE = f"{PREFIX}:work"
BOOTSTRAP_ROLE = "open-cluster-management:bootstrap"

Obj = dict[str, Any]


def agent_groups(cluster: str) -> list[Obj]:
    return [group(f"{AGENT_GROUP_PREFIX}{cluster}"), group(f"open-cluster-management:{cluster}")]


def static_policy() -> list[Obj]:
    """The roles every registration hub has: the agents' shared ones, and bootstrapping."""
    return [
        cluster_role(
            REGISTRATION_ROLE,
            [
                rule(["coordination.k8s.io"], ["leases"], [*READ, "update"]),
                rule(["addon.open-cluster-management.io"], ["managedclusteraddons"], READ),
                rule(
                    ["addon.open-cluster-management.io"],
                    ["managedclusteraddons/status"],
                    ["patch", "update"],
                ),
                rule(["events.k8s.io"], ["events"], ["create"]),
            ],
        ),
        cluster_role(
            WORK_ROLE,
            [
                rule(["", "events.k8s.io"], ["events"], ["create", "patch", "update"]),
                rule(
                    ["work.open-cluster-management.io"],
                    ["manifestworks"],
                    [*READ, "update", "patch"],
                ),
                rule(
                    ["work.open-cluster-management.io"],
                    ["manifestworks/status"],
                    ["patch", "update"],
                ),
            ],
        ),
        cluster_role(
            BOOTSTRAP_ROLE,
            [
                rule([""], ["configmaps"], ["get"]),
                rule(["certificates.k8s.io"], ["certificatesigningrequests"], ["create", *READ]),
                rule([GROUP], ["managedclusters"], ["get", "create", "list", "watch"]),
                rule([GROUP], ["managedclustersets/join"], ["create"]),
            ],
        ),
        cluster_role_binding(
            f"{BOOTSTRAP_ROLE}:managedcluster", [group(AGENT_BOOTSTRAP_GROUP)], BOOTSTRAP_ROLE
        ),
    ]


def cluster_rbac(cluster: str, accepted: bool) -> list[Obj]:
    """The cluster's ClusterRole and ClusterRoleBinding."""
    name = f"{PREFIX}:{cluster}"
    rules = [rule([GROUP], ["managedclusters"], READ, [cluster])]
    if accepted:
        rules = [
            rule(["certificates.k8s.io"], ["certificatesigningrequests"], ["create", *READ]),
            rule([REGISTER_GROUP], ["managedclusters/clientcertificates"], ["renew"]),
            rule([GROUP], ["managedclusters"], [*READ, "update"], [cluster]),
            rule([GROUP], ["managedclusters/status"], ["patch", "update"], [cluster]),
        ]
    return [
        _labelled(cluster_role(name, rules), cluster),
        _labelled(cluster_role_binding(name, agent_groups(cluster), name), cluster),
    ]


def namespace_rbac(cluster: str) -> list[Obj]:
    """The RoleBindings of an accepted cluster, in its namespace."""
    return [
        _role_binding(f"{PREFIX}:{cluster}:registration", cluster, REGISTRATION_ROLE),
        _role_binding(f"{PREFIX}:{cluster}:work", cluster, WORK_ROLE),
    ]


def _role_binding(name: str, cluster: str, role: str) -> Obj:
    binding = cluster_role_binding(name, agent_groups(cluster), role)
    binding["kind"] = rbac.ROLE_BINDING_KIND.kind
    binding["metadata"] = {"name": name, "namespace": cluster}
    return _labelled(binding, cluster)


def _labelled(obj: Obj, cluster: str) -> Obj:
    obj["metadata"] = {"name": obj["metadata"]["name"], **_namespace_of(obj)}
    obj["metadata"]["labels"] = {CLUSTER_NAME_LABEL: cluster}
    return obj


def _namespace_of(obj: Obj) -> Obj:
    namespace = obj["metadata"].get("namespace")
    return {"namespace": namespace} if namespace else {}


def cluster_of(obj: Resource) -> list[str]:
    """The cluster an RBAC object of the hub's was made for: fixed again when changed."""
    cluster = (obj.metadata.labels or {}).get(CLUSTER_NAME_LABEL)
    return [cluster] if cluster else []
