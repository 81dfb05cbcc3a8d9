"""The registration hub's add-on controllers (pkg/registration/hub/addon): add-on status
labels on the ManagedCluster, and add-ons marked Unknown with their cluster.

AddOnFeatureDiscoveryController, per ManagedCluster: each ManagedClusterAddOn in the
cluster's namespace, unless it is being deleted, gives the cluster the label
`feature.open-cluster-management.io/addon-<name>`: `available` when the add-on's Available
condition is True, `unhealthy` when False, `unreachable` when Unknown or missing. A label
of that prefix without its add-on is removed; other labels are left alone. A cluster being
deleted, or with no Available condition yet, is not touched.

ManagedClusterAddonHealthCheckController: the agent on the managed cluster reports its
add-ons' health, so while the cluster's Available condition is Unknown (its agent is gone)
every add-on of the cluster gets Available=Unknown with the cluster's reason and message,
Event ManagedClusterAddOnStatusUpdated. A cluster that is Available=False is left to the
add-ons to handle. Who sets an add-on's Available again is its agent.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from fleetwarden.admission.golang import go_quote
from fleetwarden.api.meta import Condition, Resource, find_condition
from fleetwarden.api.ocm.addon import CONDITION_AVAILABLE as ADDON_AVAILABLE
from fleetwarden.api.ocm.addon import GROUP as ADDON_GROUP
from fleetwarden.api.ocm.addon import ManagedClusterAddOn
from fleetwarden.api.ocm.cluster import CONDITION_AVAILABLE, ManagedCluster
from fleetwarden.api.registry import REGISTRY
from fleetwarden.controllers.ocm.managed_cluster import MANAGED_CLUSTER
from fleetwarden.runtime.events import NORMAL
from fleetwarden.runtime.manager import DONE, Context, Controller, Result, Watches
from fleetwarden.runtime.status import set_condition_if_changed

ADDON_FEATURE_DISCOVERY_CONTROLLER = "AddOnFeatureDiscoveryController"
ADDON_HEALTH_CHECK_CONTROLLER = "ManagedClusterAddonHealthCheckController"
MANAGED_CLUSTER_ADDON = REGISTRY.info(f"{ADDON_GROUP}/v1alpha1", "ManagedClusterAddOn")

ADDON_FEATURE_PREFIX = "feature.open-cluster-management.io/addon-"
ADDON_STATUS_AVAILABLE = "available"
ADDON_STATUS_UNHEALTHY = "unhealthy"
ADDON_STATUS_UNREACHABLE = "unreachable"


def addon_label_value(addon: ManagedClusterAddOn) -> str:
    """getAddOnLabelValue."""
    available = find_condition(addon.status.conditions, ADDON_AVAILABLE)
    if available is None:
        return ADDON_STATUS_UNREACHABLE
    if available.status == "True":
        return ADDON_STATUS_AVAILABLE
    if available.status == "False":
        return ADDON_STATUS_UNHEALTHY
    return ADDON_STATUS_UNREACHABLE


def addon_label_changes(
    labels: Mapping[str, str], addons: Iterable[ManagedClusterAddOn]
) -> dict[str, str | None]:
    """The cluster's label changes, as a merge patch: a value to set, None to remove."""
    wanted = {
        ADDON_FEATURE_PREFIX + addon.name: addon_label_value(addon)
        for addon in addons
        if addon.metadata.deletion_timestamp is None
    }
    changes: dict[str, str | None] = {k: v for k, v in wanted.items() if labels.get(k) != v}
    for key in labels:
        if key.startswith(ADDON_FEATURE_PREFIX) and key not in wanted:
            changes[key] = None
    return changes


def _cluster_addons(cluster: ManagedCluster, ctx: Context) -> list[ManagedClusterAddOn]:
    addons = ctx.cache.informer(MANAGED_CLUSTER_ADDON).list(cluster.name)
    return [addon for addon in addons if isinstance(addon, ManagedClusterAddOn)]


def _cluster(key: str, ctx: Context) -> ManagedCluster | None:
    cluster = ctx.cache.informer(MANAGED_CLUSTER).get(key)
    return cluster if isinstance(cluster, ManagedCluster) else None


# --- AddOnFeatureDiscoveryController ---------------------------------------------------------


def reconcile_addon_labels(key: str, ctx: Context) -> Result:
    cluster = _cluster(key, ctx)
    if cluster is None or cluster.metadata.deletion_timestamp is not None:
        return DONE
    if find_condition(cluster.status.conditions, CONDITION_AVAILABLE) is None:
        return DONE
    changes = addon_label_changes(cluster.metadata.labels or {}, _cluster_addons(cluster, ctx))
    if changes:
        patch = {
            "metadata": {"resourceVersion": cluster.metadata.resource_version, "labels": changes}
        }
        ctx.store.patch(MANAGED_CLUSTER, cluster.name, "", patch)
    return DONE


def addon_cluster(addon: Resource) -> list[str]:
    """An add-on concerns the cluster whose namespace it is in."""
    return [addon.namespace]


def addon_feature_discovery_controller() -> Controller:
    """The hub's AddOnFeatureDiscoveryController."""
    return Controller(
        name=ADDON_FEATURE_DISCOVERY_CONTROLLER,
        watches=[Watches(MANAGED_CLUSTER), Watches(MANAGED_CLUSTER_ADDON, addon_cluster)],
        reconcile=reconcile_addon_labels,
    )


# --- ManagedClusterAddonHealthCheckController ------------------------------------------------


def reconcile_addon_health(key: str, ctx: Context) -> Result:
    cluster = _cluster(key, ctx)
    if cluster is None:
        return DONE
    available = find_condition(cluster.status.conditions, CONDITION_AVAILABLE)
    if available is None or available.status != "Unknown":
        return DONE
    unknown = Condition(
        type=ADDON_AVAILABLE, status=available.status, reason=available.reason,
        message=available.message,
    )  # fmt: skip
    for addon in _cluster_addons(cluster, ctx):
        if set_condition_if_changed(ctx.store, addon, unknown, ctx.clock.now()):
            message = (
                f"update addon {go_quote(addon.name)} status to unknown on managed cluster "
                f"{go_quote(cluster.name)}"
            )
            ctx.recorder.event(addon, NORMAL, "ManagedClusterAddOnStatusUpdated", message)
    return DONE


def managed_cluster_addon_health_check_controller() -> Controller:
    """The hub's ManagedClusterAddonHealthCheckController."""
    return Controller(
        name=ADDON_HEALTH_CHECK_CONTROLLER,
        watches=[Watches(MANAGED_CLUSTER)],
        reconcile=reconcile_addon_health,
    )
