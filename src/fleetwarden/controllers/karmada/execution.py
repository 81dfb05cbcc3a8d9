"""The execution controller's deletion rule (pkg/controllers/execution): a deleted Work keeps
its `karmada.io/execution-controller` finalizer until its workload is gone from the member.

The binding controller creates every Work with that finalizer. Once a Work is deleted:
- its cluster Ready: the workload is deleted from the member (left there when the Work says
  preserveResourcesOnDeletion), then the finalizer is released;
- its cluster not Ready: the Work waits with its deletionTimestamp until the cluster is back
  (upstream retries with backoff; here the Cluster's next change wakes its Works);
- its cluster itself terminating and not Ready: the finalizer is released at once, as
  upstream does so that unjoining an unreachable cluster can finish.

Upstream runs this controller twice over, with the same rule (handle_work_delete, in
runtime/finalizers.py): karmada-controller-manager's for Push clusters only
(WorkWithinPushClusterPredicate: the Works of a Pull cluster, or of a cluster the hub does
not have, are not its business), and karmada-agent's for the one Pull cluster it runs for.
The hub's is this controller, which reaches a Push member through
`delete_workload(cluster, work)` (True once the workload is gone; a cluster no member backs
has nothing to remove); the agent's is the Work loop of members/simulated.py. A Work of a
Pull cluster whose agent is down thus keeps its finalizer until the agent is back, or until
the cluster controller drops it when such a cluster, not Ready, is unjoined. Applying a
Work and reporting its status stay with the member.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeGuard

from fleetwarden.api.karmada.cluster import SYNC_MODE_PUSH, Cluster
from fleetwarden.api.karmada.work import Work
from fleetwarden.api.meta import Resource
from fleetwarden.controllers.karmada.work import CLUSTER, WORK, cluster_of
from fleetwarden.runtime.finalizers import handle_work_delete
from fleetwarden.runtime.informer import split_key
from fleetwarden.runtime.manager import DONE, REQUEUE, Context, Controller, Result, Watches

EXECUTION_CONTROLLER = "execution-controller"
# Works indexed by the cluster of their execution space, for a Cluster's change to wake them.
_BY_CLUSTER = "WorkIndexByCluster"

DeleteWorkload = Callable[[str, Work], bool]


def _by_cluster(work: Resource) -> list[str]:
    cluster = cluster_of(work)
    return [cluster] if cluster is not None else []


def _keys(obj: Resource) -> list[str]:
    """A Work's own `namespace/name`; a Cluster's name, which has no namespace."""
    return [f"{obj.namespace}/{obj.name}" if obj.namespace else obj.name]


def _push(cluster: Resource | None) -> TypeGuard[Cluster]:
    """WorkWithinPushClusterPredicate, for the cluster of a Work."""
    return isinstance(cluster, Cluster) and cluster.spec.sync_mode == SYNC_MODE_PUSH


@dataclass
class ExecutionController:
    delete_workload: DeleteWorkload

    def controller(self) -> Controller:
        return Controller(
            name=EXECUTION_CONTROLLER,
            watches=[Watches(WORK, _keys), Watches(CLUSTER, _keys)],
            reconcile=self.reconcile,
            indexers={WORK: {_BY_CLUSTER: _by_cluster}},
        )

    def reconcile(self, key: str, ctx: Context) -> Result:
        namespace, name = split_key(key)
        if not namespace:  # a Cluster changed: look at the Works waiting on it
            cluster = ctx.cache.informer(CLUSTER).get(name)
            if not _push(cluster):
                return DONE
            works = ctx.cache.informer(WORK).by_index(_BY_CLUSTER, name)
            deleted = [w for w in works if w.metadata.deletion_timestamp]
            results = [self._handle(w, cluster, ctx) for w in deleted]
            return REQUEUE if REQUEUE in results else DONE
        work = ctx.cache.informer(WORK).get(name, namespace)
        if work is None or work.metadata.deletion_timestamp is None:
            return DONE  # applying is the member's side
        cluster_name = cluster_of(work)
        cluster = ctx.cache.informer(CLUSTER).get(cluster_name) if cluster_name else None
        if not _push(cluster):
            # A Pull cluster's Works are its agent's; upstream retries until the Cluster is
            # there, and so does the watch of Clusters here.
            return DONE
        return self._handle(work, cluster, ctx)

    def _handle(self, work: Resource, cluster: Cluster, ctx: Context) -> Result:
        assert isinstance(work, Work)
        return handle_work_delete(
            ctx.store, work, cluster, lambda: self.delete_workload(cluster.name, work)
        )


def execution_controller(delete_workload: DeleteWorkload) -> Controller:
    """The execution controller (karmada-controller-manager's `execution`)."""
    return ExecutionController(delete_workload).controller()
