"""What OCM's registration webhooks ask the hub before they admit a request: a
SubjectAccessReview for the sender, refused with the webhook's words (ocm
pkg/registration/webhook/v1/managedcluster_validating.go and
v1beta2/managedclustersetbinding_validating.go).

- Binding a ManagedClusterSet to a namespace (creating its ManagedClusterSetBinding) needs
  `create` on the virtual subresource `managedclustersets/bind` of that set.
- Adding a ManagedCluster to a set, taking it out or moving it (its clusterset label, as
  the mutating webhook leaves it) needs `create` on `managedclustersets/join` of the old
  set and of the new one.
- Accepting a cluster (hubAcceptsClient true on create, or turned true) needs
  `update` on `managedclusters/accept` in register.open-cluster-management.io, and is
  refused while the cluster's namespace on the hub is being deleted (its phase
  Terminating; here also its deletionTimestamp, which the API server sets together).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from fleetwarden.admission.chain import Request
from fleetwarden.api.authorization import Attributes
from fleetwarden.api.errors import Forbidden, WebhookDenied
from fleetwarden.api.ocm.cluster import (
    CLUSTER_SET_LABEL,
    GROUP,
    REGISTER_GROUP,
    ManagedCluster,
    ManagedClusterSetBinding,
)
from fleetwarden.api.registry import REGISTRY

NAMESPACE = REGISTRY.info("v1", "Namespace")
CLUSTER_WEBHOOK = "managedclustervalidators.admission.cluster.open-cluster-management.io"
BINDING_WEBHOOK = "managedclustersetbindingvalidators.admission.cluster.open-cluster-management.io"


def authorize_binding(request: Request) -> None:
    """On create only: upstream checks no rights on update."""
    if request.old is not None:
        return
    cluster_set = request.of(ManagedClusterSetBinding).spec.cluster_set
    if _allowed(request, "create", "managedclustersets", "bind", cluster_set, GROUP):
        return
    user = json.dumps(request.user.name)
    # Upstream names the resource in the apps group (apps/v1beta1's Resource helper).
    refusal = Forbidden(
        "managedclustersets/bind", "apps", cluster_set,
        f"user {user} is not allowed to bind cluster set {json.dumps(cluster_set)}",
    )  # fmt: skip
    raise WebhookDenied(BINDING_WEBHOOK, refusal)


def authorize_cluster(request: Request) -> None:
    cluster = request.of(ManagedCluster)
    old = request.old if isinstance(request.old, ManagedCluster) else None
    user = json.dumps(request.user.name)
    accepting = cluster.spec.hub_accepts_client and not (old and old.spec.hub_accepts_client)
    if accepting:
        _authorize_accept(request, cluster.name, user)
    before, after = _cluster_set(old), _cluster_set(cluster)
    if before == after:
        return
    for cluster_set in (before, after):
        if cluster_set and not _allowed(
            request, "create", "managedclustersets", "join", cluster_set, GROUP
        ):
            refusal = Forbidden(
                "managedclustersets/join", GROUP, cluster_set,
                f"user {user} cannot add/remove a ManagedCluster to/from ManagedClusterSet "
                f"{json.dumps(cluster_set)}",
            )  # fmt: skip
            raise WebhookDenied(CLUSTER_WEBHOOK, refusal)


def _authorize_accept(request: Request, name: str, user: str) -> None:
    """validateAcceptByClusterNamespace, then allowUpdateAcceptField."""
    namespace = request.stored(NAMESPACE, name)
    if namespace is not None and _terminating(namespace):
        message = f"cluster namespace {json.dumps(name)} is terminating"
        refusal = Forbidden("managedclusters/accept", GROUP, name, message)
        raise WebhookDenied(CLUSTER_WEBHOOK, refusal)
    if not _allowed(request, "update", "managedclusters", "accept", name, REGISTER_GROUP):
        message = f"user {user} cannot update the HubAcceptsClient field"
        raise WebhookDenied(
            CLUSTER_WEBHOOK, Forbidden("managedclusters/accept", GROUP, name, message)
        )


def _terminating(namespace: Mapping[str, Any]) -> bool:
    phase = (namespace.get("status") or {}).get("phase")
    return phase == "Terminating" or bool(
        (namespace.get("metadata") or {}).get("deletionTimestamp")
    )


def _cluster_set(cluster: ManagedCluster | None) -> str:
    return ((cluster.metadata.labels or {}).get(CLUSTER_SET_LABEL) or "") if cluster else ""


def _allowed(
    request: Request, verb: str, resource: str, subresource: str, name: str, group: str
) -> bool:
    return request.allowed(
        Attributes(request.user, verb, resource, group, name=name, subresource=subresource)
    )
