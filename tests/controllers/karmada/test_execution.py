"""The execution controller's deletion rule: a deleted Work keeps its finalizer until its
workload is gone from a Ready cluster (execution_controller.go handleWorkDelete; cases as
upstream's execution_controller_test.go where they apply). The hub's controller serves
Push clusters only (WorkWithinPushClusterPredicate): a Pull cluster's Works are its agent's."""

from typing import Any

import pytest
from hub_harness import CLUSTER, NGINX_WORK, WORK, Hub

from fleetwarden.api.errors import Conflict
from fleetwarden.api.karmada.work import Work
from fleetwarden.api.registry import REGISTRY
from fleetwarden.runtime.finalizers import CONFLICT_ATTEMPTS, release_work
from fleetwarden.store import MemoryStore

FINALIZER = "karmada.io/execution-controller"


def deleting(hub: Hub, cluster: str) -> bool:
    work = hub.work(cluster)
    return work is not None and "deletionTimestamp" in work["metadata"]


def delete_work(hub: Hub, cluster: str) -> None:
    hub.store.delete(WORK, NGINX_WORK, f"karmada-es-{cluster}")
    hub.settle()


def scheduled(hub: Hub, *clusters: str, **spec: Any) -> None:
    hub.binding(hub.deployment(), [(c, 1) for c in clusters], **spec)


def waiting_on_external_cluster() -> Hub:
    """member1 reported externally, gone not Ready after its Work was made; the Work deleted."""
    hub = Hub()
    hub.external_cluster("member1")
    scheduled(hub, "member1")
    hub.set_ready("member1", False)
    delete_work(hub, "member1")
    assert deleting(hub, "member1")
    return hub


def test_a_ready_clusters_workload_is_deleted_then_the_finalizer_released() -> None:
    hub = Hub(["member1"])
    scheduled(hub, "member1")
    assert hub.applied_on("member1") == 1
    delete_work(hub, "member1")
    assert hub.work("member1") is None
    assert hub.applied_on("member1") == 0


def test_a_not_ready_clusters_work_waits_with_its_deletion_timestamp() -> None:
    hub = waiting_on_external_cluster()
    hub.run(3600)
    assert deleting(hub, "member1")
    work = hub.work("member1")
    assert work is not None and work["metadata"]["finalizers"] == [FINALIZER]
    hub.set_ready("member1", True)
    assert hub.work("member1") is None


def test_an_unreachable_member_keeps_the_work_until_it_is_back_and_ready() -> None:
    """The hub still sees the cluster Ready until cluster-failure-threshold (30 s) has passed:
    deleting the workload fails meanwhile and is retried; then the Work waits for Ready,
    which comes back cluster-success-threshold (30 s) after the member does."""
    hub = Hub(["member1"])
    scheduled(hub, "member1")
    hub.member("member1", reachable=False)
    delete_work(hub, "member1")
    hub.run(120)
    assert deleting(hub, "member1")
    assert hub.applied_on("member1") == 1
    hub.member("member1", reachable=True)
    hub.run(29)
    assert deleting(hub, "member1")
    hub.run(31)
    assert hub.work("member1") is None
    assert hub.applied_on("member1") == 0


def test_a_work_deleted_by_its_binding_leaves_a_not_ready_cluster_alone() -> None:
    """The issue's rule end to end: the binding drops member2, whose Work stays until the
    cluster is back."""
    hub = Hub(["member1"])
    hub.external_cluster("member2")
    scheduled(hub, "member1", "member2")
    hub.set_ready("member2", False)
    hub.update_binding("nginx-deployment", lambda s: s.update(clusters=[{"name": "member1"}]))
    hub.run(600)
    assert deleting(hub, "member2")
    hub.set_ready("member2", True)
    assert hub.work_clusters() == ["member1"]


def test_preserve_resources_on_deletion_does_not_reach_for_the_member() -> None:
    """The member is unreachable but still Ready to the hub: a Work whose workload is kept
    goes at once, where deleting the workload would have failed."""
    hub = Hub(["member1"])
    scheduled(hub, "member1", preserveResourcesOnDeletion=True)
    work = hub.work("member1")
    assert work is not None and work["spec"]["preserveResourcesOnDeletion"] is True
    hub.member("member1", reachable=False)
    delete_work(hub, "member1")
    assert hub.work("member1") is None


def test_a_terminating_not_ready_cluster_lets_its_works_go() -> None:
    """So that unjoining an unreachable cluster can finish."""
    hub = waiting_on_external_cluster()
    hub.delete_cluster("member1")
    assert hub.work("member1") is None


def test_a_work_without_the_finalizer_goes_at_once() -> None:
    hub = Hub()
    hub.external_cluster("member1", ready=False)
    hub.store.create(
        {
            "apiVersion": WORK.api_version,
            "kind": "Work",
            "metadata": {"name": NGINX_WORK, "namespace": "karmada-es-member1"},
            "spec": {"workload": {"manifests": []}},
        }
    )
    delete_work(hub, "member1")
    assert hub.work("member1") is None


def test_works_of_a_cluster_the_hub_does_not_know_wait() -> None:
    hub = Hub()
    hub.external_cluster("member1")
    scheduled(hub, "member1")
    hub.store.delete(CLUSTER, "member1")
    delete_work(hub, "member1")
    hub.run(3600)
    assert deleting(hub, "member1")


def pull_cluster_without_agent(hub: Hub, name: str) -> None:
    hub.store.create(
        {"apiVersion": CLUSTER.api_version, "kind": "Cluster", "metadata": {"name": name},
         "spec": {"syncMode": "Pull"}}
    )  # fmt: skip
    hub.set_ready(name, True)


def test_a_pull_clusters_work_is_left_to_its_agent_even_while_ready() -> None:
    """No agent here: nobody may remove the workload, so the Work keeps its finalizer
    however long the cluster stays Ready and whatever changes on it."""
    hub = Hub()
    pull_cluster_without_agent(hub, "member1")
    scheduled(hub, "member1")
    delete_work(hub, "member1")
    hub.run(3600)
    hub.set_ready("member1", True)
    assert deleting(hub, "member1")
    work = hub.work("member1")
    assert work is not None and work["metadata"]["finalizers"] == [FINALIZER]


def test_a_pull_clusters_work_without_the_finalizer_goes_at_once() -> None:
    hub = Hub()
    pull_cluster_without_agent(hub, "member1")
    hub.store.create(
        {"apiVersion": WORK.api_version, "kind": "Work",
         "metadata": {"name": NGINX_WORK, "namespace": "karmada-es-member1"},
         "spec": {"workload": {"manifests": []}}}
    )  # fmt: skip
    delete_work(hub, "member1")
    assert hub.work("member1") is None


# release_work: removeFinalizer, retried on a conflict -----------------------------------------


def stored_work(store: MemoryStore) -> Work:
    created = store.create(
        {"apiVersion": WORK.api_version, "kind": "Work",
         "metadata": {"name": NGINX_WORK, "namespace": "karmada-es-member1",
                      "finalizers": [FINALIZER, "example.com/keep"]}}
    )  # fmt: skip
    work = REGISTRY.decode(created)
    assert isinstance(work, Work)
    return work


def label(store: MemoryStore, value: str) -> None:
    store.patch(WORK, NGINX_WORK, "karmada-es-member1", {"metadata": {"labels": {"v": value}}})


def test_a_stale_work_is_read_again_and_its_finalizer_released() -> None:
    store = MemoryStore()
    stale = stored_work(store)
    label(store, "changed since read")
    release_work(store, stale)
    current = store.get(WORK, NGINX_WORK, "karmada-es-member1")
    assert current["metadata"]["finalizers"] == ["example.com/keep"]
    assert current["metadata"]["labels"] == {"v": "changed since read"}


def test_a_work_gone_meanwhile_needs_no_release() -> None:
    store = MemoryStore()
    stale = stored_work(store)
    label(store, "changed")
    store.patch(WORK, NGINX_WORK, "karmada-es-member1", {"metadata": {"finalizers": None}})
    store.delete(WORK, NGINX_WORK, "karmada-es-member1")
    release_work(store, stale)


def test_release_gives_up_after_retry_default_steps() -> None:
    """A Work changed again before every attempt: the last conflict is raised (the
    controller's queue then retries it)."""

    class Contended(MemoryStore):
        """Someone labels the Work just before each removal of a finalizer."""

        attempts = 0

        def patch(self, info: Any, name: str, namespace: str, patch: Any, **kwargs: Any) -> Any:
            if "finalizers" in patch["metadata"]:
                self.attempts += 1
                changed = {"metadata": {"labels": {"v": str(self.attempts)}}}
                super().patch(info, name, namespace, changed)
            return super().patch(info, name, namespace, patch, **kwargs)

    store = Contended()
    work = stored_work(store)
    with pytest.raises(Conflict):
        release_work(store, work)
    assert store.attempts == CONFLICT_ATTEMPTS
