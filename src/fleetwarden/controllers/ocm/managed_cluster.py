"""The managed cluster controller (pkg/registration/hub/managedcluster/controller.go): the hub
accepting or denying a ManagedCluster.

Per ManagedCluster, as upstream:

- Accepted (`spec.hubAcceptsClient: true`): the cluster's namespace is applied (created, or
  given the `open-cluster-management.io/cluster-name` label), the finalizer
  `cluster.open-cluster-management.io/api-resource-cleanup` is added, and
  HubAcceptedManagedCluster becomes True (HubClusterAdminAccepted), or False with reason
  Error and the message of what failed (tried again later). Event ManagedClusterAccepted
  when the status changed.
- Denied (`hubAcceptsClient` false) after having been accepted: HubAcceptedManagedCluster
  becomes False (HubClusterAdminDenied), Event ManagedClusterDenied. A cluster never accepted
  is left alone. Upstream writes no HubDeniedManagedCluster condition either.
- Deleted: the finalizer is released.

And the agent's rights (controllers/ocm/cluster_rbac.py): once accepted, its ClusterRole and
binding and its RoleBindings; once denied, the ClusterRole cut down to reading itself and
the RoleBindings gone; all removed when the cluster goes, before the finalizer. A change to
any of them is put back.

Left out: the hub driver's permissions and cleanup (the CSR driver's are none), the wait for
the cluster's ManifestWorks before the finalizer goes, and the ManagedClusterAutoApproval
feature.
"""

from __future__ import annotations

from typing import Any

from fleetwarden.api import rbac
from fleetwarden.api.errors import AlreadyExists, StatusError
from fleetwarden.api.meta import Condition, find_condition
from fleetwarden.api.ocm.cluster import (
    CLUSTER_NAME_LABEL,
    CONDITION_HUB_ACCEPTED,
    GROUP,
    ManagedCluster,
)
from fleetwarden.api.registry import REGISTRY
from fleetwarden.controllers.ocm.cluster_rbac import cluster_of, cluster_rbac, namespace_rbac
from fleetwarden.controllers.rbac.apply import apply, remove
from fleetwarden.runtime.events import NORMAL
from fleetwarden.runtime.finalizers import remove_finalizer
from fleetwarden.runtime.manager import DONE, REQUEUE, Context, Controller, Result, Watches
from fleetwarden.runtime.status import set_condition_if_changed

MANAGED_CLUSTER_CONTROLLER = "ManagedClusterController"
MANAGED_CLUSTER = REGISTRY.info(f"{GROUP}/v1", "ManagedCluster")
NAMESPACE = REGISTRY.info("v1", "Namespace")

MANAGED_CLUSTER_FINALIZER = "cluster.open-cluster-management.io/api-resource-cleanup"

ACCEPTED = Condition(
    type=CONDITION_HUB_ACCEPTED, status="True", reason="HubClusterAdminAccepted",
    message="Accepted by hub cluster admin",
)  # fmt: skip
DENIED = Condition(
    type=CONDITION_HUB_ACCEPTED, status="False", reason="HubClusterAdminDenied",
    message="Denied by hub cluster admin",
)  # fmt: skip


def reconcile(key: str, ctx: Context) -> Result:
    cluster = ctx.cache.informer(MANAGED_CLUSTER).get(key)
    if not isinstance(cluster, ManagedCluster):
        return DONE
    if cluster.metadata.deletion_timestamp is not None:
        for obj in [*cluster_rbac(cluster.name, False), *namespace_rbac(cluster.name)]:
            remove(ctx, obj)
        remove_finalizer(ctx.store, cluster, MANAGED_CLUSTER_FINALIZER)
        return DONE
    if not cluster.spec.hub_accepts_client:
        _deny(cluster, ctx)
        return DONE
    return _accept(cluster, ctx)


def _deny(cluster: ManagedCluster, ctx: Context) -> None:
    accepted = find_condition(cluster.status.conditions, CONDITION_HUB_ACCEPTED)
    if accepted is None or accepted.status != "True":
        return  # never accepted, or denied already
    for obj in cluster_rbac(cluster.name, accepted=False):
        apply(ctx, obj)
    for obj in namespace_rbac(cluster.name):
        remove(ctx, obj)
    message = f"managed cluster {cluster.name} is denied by hub cluster admin"
    ctx.recorder.event(cluster, NORMAL, "ManagedClusterDenied", message)
    set_condition_if_changed(ctx.store, cluster, DENIED, ctx.clock.now())


def _accept(cluster: ManagedCluster, ctx: Context) -> Result:
    error = _apply_namespace(cluster, ctx)
    cluster = _add_finalizer(cluster, ctx)
    if error is None:
        error = _apply_rbac(cluster, ctx)
    accepted = ACCEPTED
    if error is not None:
        accepted = Condition(
            type=CONDITION_HUB_ACCEPTED, status="False", reason="Error", message=error
        )
    # Upstream records this whenever the status changed, the Error condition included.
    if set_condition_if_changed(ctx.store, cluster, accepted, ctx.clock.now()):
        message = f"managed cluster {cluster.name} is accepted by hub cluster admin"
        ctx.recorder.event(cluster, NORMAL, "ManagedClusterAccepted", message)
    return DONE if error is None else REQUEUE


def _apply_namespace(cluster: ManagedCluster, ctx: Context) -> str | None:
    """resourceapply.ApplyNamespace: the cluster's namespace, created or labelled; the
    error's message if that failed."""
    name = cluster.name
    current = ctx.cache.informer(NAMESPACE).get(name)
    try:
        if current is None:
            _create_namespace(cluster, ctx)
        elif (current.metadata.labels or {}).get(CLUSTER_NAME_LABEL) != name:
            labels = {"metadata": {"labels": {CLUSTER_NAME_LABEL: name}}}
            ctx.store.patch(NAMESPACE, name, "", labels)
            message = f"Updated Namespace/{name} because it changed"
            ctx.recorder.event(cluster, NORMAL, "NamespaceUpdated", message)
    except StatusError as exc:
        return exc.message
    return None


def _apply_rbac(cluster: ManagedCluster, ctx: Context) -> str | None:
    try:
        for obj in [*cluster_rbac(cluster.name, accepted=True), *namespace_rbac(cluster.name)]:
            apply(ctx, obj)
    except StatusError as exc:
        return exc.message
    return None


def _create_namespace(cluster: ManagedCluster, ctx: Context) -> None:
    namespace = {
        "apiVersion": NAMESPACE.api_version,
        "kind": NAMESPACE.kind,
        "metadata": {"name": cluster.name, "labels": {CLUSTER_NAME_LABEL: cluster.name}},
    }
    try:
        ctx.store.create(namespace)
    except AlreadyExists:
        return  # the cache had not seen it yet
    message = f"Created Namespace/{cluster.name} because it was missing"
    ctx.recorder.event(cluster, NORMAL, "NamespaceCreated", message)


def _add_finalizer(cluster: ManagedCluster, ctx: Context) -> ManagedCluster:
    """The cluster with the finalizer, written if it was missing."""
    finalizers = cluster.metadata.finalizers or []
    if MANAGED_CLUSTER_FINALIZER in finalizers:
        return cluster
    patch: dict[str, Any] = {
        "metadata": {
            "resourceVersion": cluster.metadata.resource_version,
            "finalizers": [*finalizers, MANAGED_CLUSTER_FINALIZER],
        }
    }
    stored = REGISTRY.decode(ctx.store.patch(MANAGED_CLUSTER, cluster.name, "", patch))
    assert isinstance(stored, ManagedCluster)
    return stored


def managed_cluster_controller() -> Controller:
    """The hub's ManagedClusterController."""
    return Controller(
        name=MANAGED_CLUSTER_CONTROLLER,
        watches=[Watches(MANAGED_CLUSTER), *(Watches(info, cluster_of) for info in rbac.KINDS)],
        reconcile=reconcile,
    )
