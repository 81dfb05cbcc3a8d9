"""The execution controller's deletion rule: a deleted Work keeps its finalizer until its
workload is gone from a Ready cluster (execution_controller.go handleWorkDelete; cases as
upstream's execution_controller_test.go where they apply)."""

from typing import Any

from hub_harness import CLUSTER, NGINX_WORK, WORK, Hub

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
