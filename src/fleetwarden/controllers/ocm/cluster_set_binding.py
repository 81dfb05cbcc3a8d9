"""The ManagedClusterSetBinding controller (ocm pkg/registration/hub/managedclustersetbinding/
controller.go): a binding is Bound while the ManagedClusterSet it names exists.

Keys are set names: a binding's events queue its set's name, and a set's own events do,
so one reconcile brings every binding of that set, in every namespace (found through the
`by-clusterset` index), in line with whether the set is there. Upstream queues each binding
by its own key and looks its set's bindings up through the same index; the conditions
written are the same. A set being deleted still exists, as upstream's lister sees it.
"""

from __future__ import annotations

from fleetwarden.api.meta import Condition
from fleetwarden.api.ocm.cluster import CONDITION_BOUND, GROUP, ManagedClusterSetBinding
from fleetwarden.api.registry import REGISTRY
from fleetwarden.controllers.ocm.cluster_set import MANAGED_CLUSTER_SET
from fleetwarden.runtime.manager import DONE, Context, Controller, Result, Watches
from fleetwarden.runtime.status import set_condition_if_changed
from fleetwarden.semantics.cluster_sets import BY_CLUSTER_SET, by_cluster_set

MANAGED_CLUSTER_SET_BINDING = REGISTRY.info(f"{GROUP}/v1beta2", "ManagedClusterSetBinding")

# Upstream names it ManagedClusterSetController as well, a name the manager takes once.
MANAGED_CLUSTER_SET_BINDING_CONTROLLER = "ManagedClusterSetBindingController"

REASON_CLUSTER_SET_BOUND = "ClusterSetBound"
REASON_CLUSTER_SET_NOT_FOUND = "ClusterSetNotFound"


def bound_condition(cluster_set_exists: bool) -> Condition:
    """Bound, with upstream's reasons and, as upstream, no message."""
    status, reason = (
        ("True", REASON_CLUSTER_SET_BOUND)
        if cluster_set_exists
        else ("False", REASON_CLUSTER_SET_NOT_FOUND)
    )
    return Condition(type=CONDITION_BOUND, status=status, reason=reason, message="")


def reconcile(key: str, ctx: Context) -> Result:
    """`key` is a set's name; every binding of it gets its Bound condition."""
    condition = bound_condition(ctx.cache.informer(MANAGED_CLUSTER_SET).get(key) is not None)
    for binding in ctx.cache.informer(MANAGED_CLUSTER_SET_BINDING).by_index(BY_CLUSTER_SET, key):
        assert isinstance(binding, ManagedClusterSetBinding)
        set_condition_if_changed(ctx.store, binding, condition, ctx.clock.now())
    return DONE


def managed_cluster_set_binding_controller() -> Controller:
    """The binding controller (upstream's NewManagedClusterSetBindingController)."""
    return Controller(
        name=MANAGED_CLUSTER_SET_BINDING_CONTROLLER,
        watches=[
            Watches(MANAGED_CLUSTER_SET_BINDING, by_cluster_set),
            Watches(MANAGED_CLUSTER_SET),
        ],
        reconcile=reconcile,
        indexers={MANAGED_CLUSTER_SET_BINDING: {BY_CLUSTER_SET: by_cluster_set}},
    )
