"""The roles of each ManagedClusterSet, as Red Hat ACM's clusterset controller keeps them
(stolostron/multicloud-operators-foundation; upstream OCM itself only checks the virtual
subresources): `open-cluster-management:managedclusterset:<role>:<set>` for

- admin (sets that select by the exclusive clusterset label only): update the set, put
  clusters into it (join), bind it to namespaces, create and accept ManagedClusters;
- bind: bind the set to namespaces;
- view: read the set.

Each role is owned by its set, so it goes when the set goes; the admin role goes too when
the set stops selecting by the exclusive label. Bind them to users with
ClusterRoleBindings (seed 003's "cluster set admin" and "cluster set view").
"""

from __future__ import annotations

from typing import Any

from fleetwarden.api import rbac
from fleetwarden.api.ocm.cluster import (
    CLUSTER_SET_LABEL,
    EXCLUSIVE_CLUSTER_SET_LABEL,
    GROUP,
    LEGACY_CLUSTER_SET_LABEL,
    REGISTER_GROUP,
    ManagedClusterSet,
)
from fleetwarden.auth.bootstrap import READ, rule
from fleetwarden.controllers.ocm.cluster_set import MANAGED_CLUSTER_SET
from fleetwarden.controllers.rbac.apply import apply, remove
from fleetwarden.runtime.manager import DONE, Context, Controller, Result, Watches

CONTROLLER = "clusterset-clusterrole-controller"
ROLE_LABEL = "cluster.open-cluster-management.io/role"
CLUSTERVIEW_GROUP = "clusterview.open-cluster-management.io"
ROLES = ("admin", "bind", "view")

Obj = dict[str, Any]


def role_name(role: str, cluster_set: str) -> str:
    return f"open-cluster-management:managedclusterset:{role}:{cluster_set}"


def set_roles(cluster_set: ManagedClusterSet) -> list[Obj]:
    name = cluster_set.name
    view = rule([CLUSTERVIEW_GROUP], ["managedclustersets"], READ)
    roles = {
        "bind": [
            rule([GROUP], ["managedclustersets/bind"], ["create"], [name]),
            rule([GROUP], ["managedclustersets"], ["get"], [name]),
            view,
        ],
        "view": [rule([GROUP], ["managedclustersets"], ["get"], [name]), view],
    }
    if _exclusive(cluster_set):
        roles["admin"] = [
            rule([GROUP], ["managedclustersets"], ["get", "update"], [name]),
            rule([GROUP], ["managedclustersets/join"], ["create"], [name]),
            rule([GROUP], ["managedclustersets/bind"], ["create"], [name]),
            rule([GROUP], ["managedclusters"], ["create"]),
            rule([REGISTER_GROUP], ["managedclusters/accept"], ["update"]),
            view,
        ]
    return [_role(cluster_set, role, rules) for role, rules in sorted(roles.items())]


def _exclusive(cluster_set: ManagedClusterSet) -> bool:
    selector = cluster_set.spec.cluster_selector
    selector_type = (selector.selector_type if selector else None) or EXCLUSIVE_CLUSTER_SET_LABEL
    return selector_type in (EXCLUSIVE_CLUSTER_SET_LABEL, LEGACY_CLUSTER_SET_LABEL)


def _role(cluster_set: ManagedClusterSet, role: str, rules: list[Obj]) -> Obj:
    return {
        "apiVersion": rbac.API_VERSION,
        "kind": rbac.CLUSTER_ROLE,
        "metadata": {
            "name": role_name(role, cluster_set.name),
            "labels": {CLUSTER_SET_LABEL: cluster_set.name, ROLE_LABEL: role},
            "ownerReferences": [
                {
                    "apiVersion": cluster_set.api_version,
                    "kind": cluster_set.kind,
                    "name": cluster_set.name,
                    "uid": cluster_set.metadata.uid or "",
                }
            ],
        },
        "rules": rules,
    }


def reconcile(key: str, ctx: Context) -> Result:
    cluster_set = ctx.cache.informer(MANAGED_CLUSTER_SET).get(key)
    if (
        isinstance(cluster_set, ManagedClusterSet)
        and cluster_set.metadata.deletion_timestamp is None
    ):
        wanted = set_roles(cluster_set)
        for role in wanted:
            apply(ctx, role)
        kept = {role["metadata"]["labels"][ROLE_LABEL] for role in wanted}
        for unwanted in set(ROLES) - kept:
            name = role_name(unwanted, cluster_set.name)
            if ctx.cache.informer(rbac.CLUSTER_ROLE_KIND).get(name) is not None:
                remove(ctx, {"kind": rbac.CLUSTER_ROLE, "metadata": {"name": name}})
    return DONE


def _set_of(role: Any) -> list[str]:
    labels = role.metadata.labels or {}
    return (
        [labels[CLUSTER_SET_LABEL]] if ROLE_LABEL in labels and CLUSTER_SET_LABEL in labels else []
    )


def cluster_set_role_controller() -> Controller:
    return Controller(
        name=CONTROLLER,
        watches=[Watches(MANAGED_CLUSTER_SET), Watches(rbac.CLUSTER_ROLE_KIND, _set_of)],
        reconcile=reconcile,
    )
