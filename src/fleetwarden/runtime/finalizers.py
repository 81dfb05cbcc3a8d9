"""Releasing a finalizer, as controllers do once their clean-up is done; and Karmada's
execution rule for a deleted Work (handleWorkDelete), shared by the hub's execution
controller (controllers/karmada/execution.py) and the pull agent's Work loop
(members/simulated.py)."""

from __future__ import annotations

import contextlib
from collections.abc import Callable

from fleetwarden.api.errors import Conflict, NotFound
from fleetwarden.api.karmada.cluster import Cluster
from fleetwarden.api.karmada.well_known import EXECUTION_CONTROLLER_FINALIZER
from fleetwarden.api.karmada.work import Work
from fleetwarden.api.meta import Resource
from fleetwarden.api.registry import REGISTRY
from fleetwarden.runtime.manager import DONE, REQUEUE, Result
from fleetwarden.semantics.cluster_health import is_cluster_ready
from fleetwarden.store.interface import Store

# retry.DefaultRetry's steps, as retry.RetryOnConflict takes them.
CONFLICT_ATTEMPTS = 5


def remove_finalizer(store: Store, obj: Resource, finalizer: str) -> None:
    """controllerutil.RemoveFinalizer and an update carrying the resourceVersion read."""
    finalizers = obj.metadata.finalizers or []
    if finalizer not in finalizers:
        return
    remaining = [f for f in finalizers if f != finalizer] or None
    patch = {
        "metadata": {"resourceVersion": obj.metadata.resource_version, "finalizers": remaining}
    }
    info = REGISTRY.info(obj.api_version, obj.kind)
    store.patch(info, obj.name, obj.namespace, patch)


def handle_work_delete(
    store: Store, work: Work, cluster: Cluster, delete_workload: Callable[[], bool]
) -> Result:
    """handleWorkDelete, then removeFinalizer: REQUEUE when the member did not answer."""
    if is_cluster_ready(cluster):
        if not work.spec.preserve_resources_on_deletion and not delete_workload():
            return REQUEUE
    elif cluster.metadata.deletion_timestamp is None:
        return DONE  # not Ready: wait for the cluster to come back
    release_work(store, work)
    return DONE


def release_work(store: Store, work: Work) -> None:
    """The finalizer removed; on a conflict (the Work changed since it was read) it is read
    again and the removal retried, as retry.RetryOnConflict does."""
    with contextlib.suppress(NotFound):  # gone meanwhile: nothing is left to release
        for _ in range(CONFLICT_ATTEMPTS - 1):
            try:
                remove_finalizer(store, work, EXECUTION_CONTROLLER_FINALIZER)
                return
            except Conflict:
                work = _read(store, work)
        remove_finalizer(store, work, EXECUTION_CONTROLLER_FINALIZER)


def _read(store: Store, work: Work) -> Work:
    info = REGISTRY.info(work.api_version, work.kind)
    current = REGISTRY.decode(store.get(info, work.name, work.namespace))
    assert isinstance(current, Work)
    return current
