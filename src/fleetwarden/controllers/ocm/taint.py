"""The taint controller (pkg/registration/hub/taint): the built-in NoSelect taints that
follow a ManagedCluster's ManagedClusterConditionAvailable.

As upstream:

- Available missing or Unknown: `cluster.open-cluster-management.io/unreachable`, and no
  `cluster.open-cluster-management.io/unavailable`;
- Available False: `unavailable`, and no `unreachable`;
- Available True: neither.

A taint is the same as a built-in one when key, value and effect match (timeAdded aside):
one still applicable is kept as it is, timeAdded included; those removed go without
disturbing the order of the rest; one added goes last, stamped with timeAdded now (upstream
its webhook stamps it on the write). User taints are never touched, nor are the taints of a
cluster being deleted. Event ManagedClusterConditionAvailableUpdated on each change.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from fleetwarden.api.core import Taint
from fleetwarden.api.meta import Condition, find_condition
from fleetwarden.api.ocm.cluster import (
    CONDITION_AVAILABLE,
    NO_SELECT,
    TAINT_UNAVAILABLE,
    TAINT_UNREACHABLE,
    ManagedCluster,
)
from fleetwarden.controllers.ocm.managed_cluster import MANAGED_CLUSTER
from fleetwarden.runtime.events import NORMAL
from fleetwarden.runtime.manager import DONE, Context, Controller, Result, Watches

TAINT_CONTROLLER = "taintController"
UNAVAILABLE_TAINT = Taint(key=TAINT_UNAVAILABLE, effect=NO_SELECT)
UNREACHABLE_TAINT = Taint(key=TAINT_UNREACHABLE, effect=NO_SELECT)


def is_taint_equal(a: Taint, b: Taint) -> bool:
    """helpers.IsTaintEqual: key, value and effect; timeAdded aside."""
    return (a.key, a.value or "", a.effect) == (b.key, b.value or "", b.effect)


def taints_for_available(available: Condition | None) -> tuple[list[Taint], list[Taint]]:
    """The built-in taints to remove and to add for the Available condition."""
    if available is None or available.status == "Unknown":
        return [UNAVAILABLE_TAINT], [UNREACHABLE_TAINT]
    if available.status == "False":
        return [UNREACHABLE_TAINT], [UNAVAILABLE_TAINT]
    if available.status == "True":
        return [UNAVAILABLE_TAINT, UNREACHABLE_TAINT], []
    return [], []


def sync_taints(taints: Sequence[Taint], available: Condition | None, now: datetime) -> list[Taint]:
    """RemoveTaints, then AddTaints: the cluster's taints for its Available condition."""
    to_remove, to_add = taints_for_available(available)
    kept = [t for t in taints if not any(is_taint_equal(t, r) for r in to_remove)]
    stamp = now.replace(microsecond=0)  # metav1.Time keeps whole seconds
    added = [
        t.model_copy(update={"time_added": stamp})
        for t in to_add
        if not any(is_taint_equal(k, t) for k in kept)
    ]
    return kept + added


def go_taints(taints: Sequence[Taint]) -> str:
    """The taints as Go's %+v prints a []v1.Taint."""
    parts = [
        f"{{Key:{t.key} Value:{t.value or ''} Effect:{t.effect} TimeAdded:{_go_time(t)}}}"
        for t in taints
    ]
    return f"[{' '.join(parts)}]"


def _go_time(taint: Taint) -> str:
    added = taint.time_added
    return (
        added.strftime("%Y-%m-%d %H:%M:%S +0000 UTC") if added else "0001-01-01 00:00:00 +0000 UTC"
    )


def reconcile(key: str, ctx: Context) -> Result:
    cluster = ctx.cache.informer(MANAGED_CLUSTER).get(key)
    if not isinstance(cluster, ManagedCluster) or cluster.metadata.deletion_timestamp is not None:
        return DONE
    current = list(cluster.spec.taints or [])
    available = find_condition(cluster.status.conditions, CONDITION_AVAILABLE)
    taints = sync_taints(current, available, ctx.clock.now())
    wire = [t.to_dict() for t in taints]
    if wire == [t.to_dict() for t in current]:
        return DONE
    patch = {
        "metadata": {"resourceVersion": cluster.metadata.resource_version},
        "spec": {"taints": wire or None},
    }
    ctx.store.patch(MANAGED_CLUSTER, cluster.name, "", patch)
    message = f"Update the original taints to the {go_taints(taints)}"
    ctx.recorder.event(cluster, NORMAL, "ManagedClusterConditionAvailableUpdated", message)
    return DONE


def taint_controller() -> Controller:
    """The hub's taintController."""
    return Controller(
        name=TAINT_CONTROLLER, watches=[Watches(MANAGED_CLUSTER)], reconcile=reconcile
    )
