"""The execution controller's deletion rule (pkg/controllers/execution): a deleted Work keeps
its `karmada.io/execution-controller` finalizer until its workload is gone from the member.

The binding controller creates every Work with that finalizer. Once a Work is deleted:
- its cluster Ready: the workload is deleted from the member (left there when the Work says
  preserveResourcesOnDeletion), then the finalizer is released;
- its cluster not Ready: the Work waits with its deletionTimestamp until the cluster is back
  (upstream retries with backoff; here the Cluster's next change wakes its Works);
- its cluster itself terminating and not Ready: the finalizer is released at once, as
  upstream does so that unjoining an unreachable cluster can finish.

Upstream runs this loop on the hub for Push clusters and in karmada-agent for Pull ones,
with the same rule read from the same Cluster object; one controller serves both here.
Applying a Work and reporting its status stay with the member (see members/simulated.py):
`delete_workload(cluster, work)` reaches it and answers whether the workload is gone; a
cluster no simulated member backs has nothing to remove and answers True.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from fleetwarden.api.karmada.cluster import Cluster
from fleetwarden.api.karmada.well_known import EXECUTION_CONTROLLER_FINALIZER
from fleetwarden.api.karmada.work import Work
from fleetwarden.api.meta import Resource, find_condition
from fleetwarden.controllers.karmada.work import CLUSTER, WORK, cluster_of, remove_finalizer
from fleetwarden.runtime.informer import split_key
from fleetwarden.runtime.manager import DONE, REQUEUE, Context, Controller, Result, Watches
from fleetwarden.semantics.cluster_health import READY

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


def is_cluster_ready(cluster: Cluster) -> bool:
    """util.IsClusterReady."""
    ready = find_condition(cluster.status.conditions, READY)
    return ready is not None and ready.status == "True"


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
            works = ctx.cache.informer(WORK).by_index(_BY_CLUSTER, name)
            results = [self._handle(w, ctx) for w in works if w.metadata.deletion_timestamp]
            return REQUEUE if REQUEUE in results else DONE
        work = ctx.cache.informer(WORK).get(name, namespace)
        if work is None or work.metadata.deletion_timestamp is None:
            return DONE  # applying is the member's side
        return self._handle(work, ctx)

    def _handle(self, work: Resource, ctx: Context) -> Result:
        """handleWorkDelete, then removeFinalizer."""
        assert isinstance(work, Work)
        cluster_name = cluster_of(work)
        cluster = ctx.cache.informer(CLUSTER).get(cluster_name) if cluster_name else None
        if not isinstance(cluster, Cluster):
            return DONE  # upstream retries until the Cluster is there; so does its watch here
        if is_cluster_ready(cluster):
            if not work.spec.preserve_resources_on_deletion and not self.delete_workload(
                cluster.name, work
            ):
                return REQUEUE  # the member did not answer: try again, with backoff
        elif cluster.metadata.deletion_timestamp is None:
            return DONE  # not Ready: wait for the cluster to come back
        remove_finalizer(ctx.store, work, EXECUTION_CONTROLLER_FINALIZER)
        return DONE


def execution_controller(delete_workload: DeleteWorkload) -> Controller:
    """The execution controller (karmada-controller-manager's `execution`)."""
    return ExecutionController(delete_workload).controller()
