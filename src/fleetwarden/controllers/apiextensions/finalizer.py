"""The CRD finalizer (apiextensions-apiserver pkg/controller/finalizer): deleting a
CustomResourceDefinition deletes its custom resources first.

The API server marks a CRD being deleted Terminating and gives it the
`customresourcecleanup.apiextensions.k8s.io` finalizer (server/resources.py). This
controller deletes every object of its kind (their own finalizers are honoured: they go
terminating), looks again every 5 s until none is left, then marks the deletion complete
and takes its finalizer off, and the CRD is gone. A CRD never established had no objects;
the objects of one that names a kind the hub serves itself (Karmada's own CRDs applied to
it, say) are that kind's, and stay.
"""

from __future__ import annotations

from datetime import timedelta

from fleetwarden.api import apiextensions as crdv1
from fleetwarden.api.apiextensions import CustomResourceDefinition, condition_true, storage_kind
from fleetwarden.api.errors import NotFound
from fleetwarden.api.kinds import KindInfo
from fleetwarden.api.meta import Condition
from fleetwarden.api.registry import REGISTRY
from fleetwarden.runtime.finalizers import remove_finalizer
from fleetwarden.runtime.manager import DONE, Context, Controller, Result, Watches, requeue_after
from fleetwarden.runtime.status import update_status_if_changed
from fleetwarden.semantics.conditions import set_status_condition

NAME = "crd-finalizer"
# How often the objects still there are looked for (upstream polls every 5 s).
POLL_INTERVAL = timedelta(seconds=5)


def _terminating(status: str, reason: str, message: str) -> Condition:
    return Condition(type=crdv1.TERMINATING, status=status, reason=reason, message=message)


IN_PROGRESS = _terminating(
    "True", "InstanceDeletionInProgress", "CustomResource deletion is in progress"
)
COMPLETED = _terminating("False", "InstanceDeletionCompleted", "removed all instances")
NEVER_ESTABLISHED = _terminating("False", "NeverEstablished", "resource was never established")
OVERLAPPING = _terminating(
    "False", "OverlappingBuiltInResource", "instances overlap with built-in resources in storage"
)


def reconcile(name: str, ctx: Context) -> Result:
    crd = ctx.cache.informer(crdv1.KIND).get(name)
    if not isinstance(crd, CustomResourceDefinition) or crd.metadata.deletion_timestamp is None:
        return DONE
    if crdv1.CLEANUP_FINALIZER not in (crd.metadata.finalizers or []):
        return DONE
    crd = _set_terminating(crd, IN_PROGRESS, ctx)
    kind = storage_kind(crd) if condition_true(crd, crdv1.ESTABLISHED) else None
    if kind is None:
        outcome = NEVER_ESTABLISHED
    elif REGISTRY.overlaps_registered(kind):
        outcome = OVERLAPPING
    elif _delete_instances(kind, ctx):
        return requeue_after(POLL_INTERVAL)
    else:
        outcome = COMPLETED
    crd = _set_terminating(crd, outcome, ctx)
    remove_finalizer(ctx.store, crd, crdv1.CLEANUP_FINALIZER)
    return DONE


def _set_terminating(
    crd: CustomResourceDefinition, condition: Condition, ctx: Context
) -> CustomResourceDefinition:
    """The CRD with the condition written, as stored."""
    status = crd.status.model_copy()
    status.conditions = set_status_condition(status.conditions, condition, ctx.clock.now())
    written = update_status_if_changed(ctx.store, crd, status)
    if written is None:
        return crd
    updated = crd.model_copy(update={"status": status})
    updated.metadata = crd.metadata.model_copy(update={"resource_version": written})
    return updated


def _delete_instances(kind: KindInfo, ctx: Context) -> bool:
    """Delete every object of the kind; whether some are left (terminating)."""
    left = False
    for item in ctx.store.list(kind).items:
        meta = item["metadata"]
        try:
            deleted = ctx.store.delete(kind, meta["name"], meta.get("namespace", ""))
        except NotFound:
            continue
        left |= "deletionTimestamp" in deleted["metadata"]
    return left


def crd_finalizer_controller() -> Controller:
    return Controller(NAME, [Watches(crdv1.KIND)], reconcile)
