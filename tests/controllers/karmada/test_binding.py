"""The binding controllers: one Work per target cluster, revised per cluster, cleaned up when
a cluster leaves the result. Unit cases ported from upstream's names_test.go and
binding/common_test.go; behaviour on a hub with simulated members."""

from typing import Any

import pytest
from hub_harness import CRB_ID, NGINX_WORK, RB, RB_ID, Hub

from fleetwarden.api.karmada.work import ResourceBindingSpec
from fleetwarden.controllers.karmada.binding import resource_binding_controller
from fleetwarden.controllers.karmada.work import (
    _fnv32a,
    _safe_encode,
    conflict_resolution,
    existing_clusters,
    generate_work_name,
    suspend_dispatching,
    target_clusters,
)
from fleetwarden.runtime.manager import ControllerManager, VirtualDriver

# --- names (names_test.go) -------------------------------------------------------------------


def test_work_name_hash_and_encoding_match_upstream() -> None:
    # TestGeneratePolicyName: "foo-b4978784" hashes "ns-foo" + "rand" the same way.
    assert _safe_encode(str(_fnv32a("ns-foorand"))) == "b4978784"
    # The Work of Deployment default/nginx, as every Karmada walkthrough shows it.
    assert generate_work_name("Deployment", "nginx", "default") == "nginx-687f7fb96f"


@pytest.mark.parametrize(
    ("kind", "name", "namespace", "hashed", "prefix"),
    [
        ("Pod", "pod", "", "pod-pod", "pod"),
        ("pods", "Pod", "default", "default-pod-pods", "pod"),
        ("Pods", "work:pod", "default", "default-work.pod-pods", "work.pod"),
    ],
)
def test_generate_work_name(kind: str, name: str, namespace: str, hashed: str, prefix: str) -> None:
    """TestGenerateWorkName."""
    expected = f"{prefix}-{_safe_encode(str(_fnv32a(hashed)))}"
    assert generate_work_name(kind, name, namespace) == expected


# --- binding spec (common_test.go, helper/binding_test.go) -----------------------------------


def spec(**fields: Any) -> ResourceBindingSpec:
    return ResourceBindingSpec.model_validate(fields)


@pytest.mark.parametrize(
    ("required_by", "expected"),
    [
        ([{"clusters": [{"name": "foo", "replicas": 1}]}], [("foo", 1)]),
        ([{"clusters": [{"name": "bar", "replicas": 1}]}], [("foo", 1), ("bar", 1)]),
    ],
    ids=["the same cluster", "different clusters"],
)
def test_merge_target_clusters(required_by: Any, expected: list[tuple[str, int]]) -> None:
    """Test_mergeTargetClusters."""
    merged = target_clusters(
        spec(clusters=[{"name": "foo", "replicas": 1}], requiredBy=required_by)
    )
    assert [(t.name, t.replicas) for t in merged] == expected


def test_existing_clusters_keep_graceful_evictions_but_not_direct_purges() -> None:
    """ObtainBindingSpecExistingClusters."""
    tasks = [
        {"fromCluster": "m2", "reason": "TaintUntolerated", "producer": "TaintManager"},
        {"fromCluster": "m3", "purgeMode": "Gracefully", "reason": "r", "producer": "p"},
        {"fromCluster": "m4", "purgeMode": "Directly", "reason": "r", "producer": "p"},
    ]
    got = existing_clusters(
        spec(
            clusters=[{"name": "m1"}],
            gracefulEvictionTasks=tasks,
            requiredBy=[{"name": "x", "clusters": [{"name": "m5"}]}],
        )
    )
    assert got == {"m1", "m2", "m3", "m5"}


@pytest.mark.parametrize(
    ("in_template", "in_binding", "expected"),
    [
        (None, "Overwrite", "overwrite"),
        (None, "Abort", "abort"),
        ("overwrite", "Abort", "overwrite"),
        ("abort", "Overwrite", "abort"),
        ("unknown", "Overwrite", "overwrite"),
    ],
    ids=[
        "EmptyInRT_OverwriteInRB",
        "EmptyInRT_AbortInRB",
        "OverwriteInRT_AbortInPP",
        "AbortInRT_OverwriteInPP",
        "InvalidInRT_OverwriteInPP",
    ],
)
def test_merge_conflict_resolution(in_template: str | None, in_binding: str, expected: str) -> None:
    """Test_mergeConflictResolution."""
    annotations = (
        {} if in_template is None else {"work.karmada.io/conflict-resolution": in_template}
    )
    assert conflict_resolution(annotations, in_binding) == expected


@pytest.mark.parametrize(
    ("suspension", "cluster", "expected"),
    [
        (None, "", False),
        ({}, "", False),
        ({"dispatching": False}, "", False),
        ({"dispatching": True}, "", True),
        ({"dispatchingOnClusters": {"clusterNames": ["clusterA"]}}, "clusterA", True),
        ({"dispatchingOnClusters": {"clusterNames": ["clusterB"]}}, "clusterA", False),
    ],
    ids=[
        "false for nil suspension",
        "false for nil dispatching",
        "false for not suspension",
        "true for suspension",
        "true for matching cluster",
        "false for mismatched cluster",
    ],
)
def test_should_suspend_dispatching(suspension: Any, cluster: str, expected: bool) -> None:
    """Test_shouldSuspendDispatching."""
    assert suspend_dispatching(spec(suspension=suspension), cluster) is expected


# --- behaviour -------------------------------------------------------------------------------


def test_divided_replicas_per_cluster_in_each_work() -> None:
    hub = Hub(["member1", "member2"])
    template = hub.deployment(replicas=3)
    hub.binding(template, [("member1", 1), ("member2", 2)])
    assert hub.work_clusters() == ["member1", "member2"]
    assert hub.manifest("member1")["spec"]["replicas"] == 1
    assert hub.manifest("member2")["spec"]["replicas"] == 2


def test_duplicated_keeps_the_replicas_the_scheduler_gave_each_cluster() -> None:
    hub = Hub(["member1", "member2"])
    template = hub.deployment(replicas=3)
    hub.binding(template, [("member1", 3), ("member2", 3)], divided=False)
    assert [hub.manifest(c)["spec"]["replicas"] for c in ("member1", "member2")] == [3, 3]


def test_the_work_carries_upstreams_labels_annotations_and_finalizer() -> None:
    hub = Hub(["member1"])
    template = hub.deployment()
    hub.binding(template, [("member1", 3)])
    work = hub.work("member1")
    assert work is not None
    meta = work["metadata"]
    work_id = meta["labels"]["work.karmada.io/permanent-id"]
    assert meta["name"] == NGINX_WORK
    assert meta["finalizers"] == ["karmada.io/execution-controller"]
    assert meta["labels"] == {
        "resourcebinding.karmada.io/permanent-id": RB_ID,
        "work.karmada.io/permanent-id": work_id,
    }
    assert meta["annotations"] == {
        "resourcebinding.karmada.io/namespace": "default",
        "resourcebinding.karmada.io/name": "nginx-deployment",
        "work.karmada.io/conflict-resolution": "abort",
    }
    assert work["spec"]["suspendDispatching"] is False
    assert work["spec"]["preserveResourcesOnDeletion"] is False
    manifest = work["spec"]["workload"]["manifests"][0]
    assert manifest["metadata"]["labels"] == {
        "app": "nginx",
        "karmada.io/managed": "true",
        "resourcebinding.karmada.io/permanent-id": RB_ID,
        "work.karmada.io/permanent-id": work_id,
    }
    annotations = manifest["metadata"]["annotations"]
    assert annotations["resourcetemplate.karmada.io/uid"] == template["metadata"]["uid"]
    assert annotations["resourcetemplate.karmada.io/generation"] == "1"
    assert annotations["work.karmada.io/name"] == NGINX_WORK
    assert annotations["work.karmada.io/namespace"] == "karmada-es-member1"
    assert annotations["resourcetemplate.karmada.io/managed-labels"] == (
        "app,karmada.io/managed,resourcebinding.karmada.io/permanent-id,"
        "work.karmada.io/permanent-id"
    )
    # Pruned as RemoveIrrelevantFields does: nothing the hub's API server filled in.
    assert set(manifest["metadata"]) == {"name", "namespace", "labels", "annotations"}
    assert "status" not in manifest


def test_sync_work_succeed_is_recorded_on_binding_and_template() -> None:
    hub = Hub(["member1"])
    hub.binding(hub.deployment(), [("member1", 3)])
    events = hub.events("SyncWorkSucceed")
    assert sorted(e["involvedObject"]["kind"] for e in events) == ["Deployment", "ResourceBinding"]
    assert {e["message"] for e in events} == {
        "Sync work of ResourceBinding(default/nginx-deployment) successful."
    }


def test_a_binding_without_clusters_has_no_work() -> None:
    hub = Hub(["member1"])
    hub.binding(hub.deployment(), [])
    assert hub.work_clusters() == []


def test_a_cluster_leaving_the_result_loses_its_work() -> None:
    hub = Hub(["member1", "member2"])
    hub.binding(hub.deployment(), [("member1", 1), ("member2", 2)])
    assert hub.applied_on("member2") == 1
    hub.update_binding(
        "nginx-deployment", lambda s: s.update(clusters=[{"name": "member1", "replicas": 3}])
    )
    assert hub.work_clusters() == ["member1"]
    assert hub.applied_on("member2") == 0
    assert hub.manifest("member1")["spec"]["replicas"] == 3


def test_a_cluster_being_evicted_gracefully_keeps_its_work_until_the_task_goes() -> None:
    hub = Hub(["member1", "member2"])
    hub.binding(hub.deployment(), [("member1", 1), ("member2", 2)])
    task = {"fromCluster": "member2", "reason": "TaintUntolerated", "producer": "TaintManager"}
    hub.update_binding(
        "nginx-deployment",
        lambda s: s.update(
            clusters=[{"name": "member1", "replicas": 3}], gracefulEvictionTasks=[task]
        ),
    )
    assert hub.work_clusters() == ["member1", "member2"]
    assert hub.manifest("member2")["spec"]["replicas"] == 2  # left as it was
    hub.update_binding("nginx-deployment", lambda s: s.pop("gracefulEvictionTasks"))
    assert hub.work_clusters() == ["member1"]


def test_an_eviction_that_purges_directly_deletes_the_work_at_once() -> None:
    hub = Hub(["member1", "member2"])
    hub.binding(hub.deployment(), [("member1", 1), ("member2", 2)])
    task = {"fromCluster": "member2", "purgeMode": "Directly", "reason": "r", "producer": "p"}
    hub.update_binding(
        "nginx-deployment",
        lambda s: s.update(
            clusters=[{"name": "member1", "replicas": 3}], gracefulEvictionTasks=[task]
        ),
    )
    assert hub.work_clusters() == ["member1"]
    assert hub.manifest("member1")["spec"]["replicas"] == 3


def test_works_of_directly_purged_clusters_hold_the_sync_back() -> None:
    """checkDirectPurgeOrphanWorks: while member2's Work waits for its cluster, the binding
    is not synced; it is, 5 s after the Work has gone."""
    hub = Hub(["member1"])
    hub.external_cluster("member2")
    hub.binding(hub.deployment(), [("member1", 1), ("member2", 2)])
    hub.set_ready("member2", False)
    task = {"fromCluster": "member2", "purgeMode": "Directly", "reason": "r", "producer": "p"}
    hub.update_binding(
        "nginx-deployment",
        lambda s: s.update(
            clusters=[{"name": "member1", "replicas": 3}], gracefulEvictionTasks=[task]
        ),
    )
    work = hub.work("member2")
    assert work is not None and "deletionTimestamp" in work["metadata"]
    assert hub.manifest("member1")["spec"]["replicas"] == 1
    hub.set_ready("member2", True)
    assert hub.work("member2") is None
    hub.run(5)
    assert hub.manifest("member1")["spec"]["replicas"] == 3


def test_template_changes_flow_into_the_works() -> None:
    hub = Hub(["member1", "member2"])
    template = hub.deployment(image="nginx:1.25")
    hub.binding(template, [("member1", 1), ("member2", 2)])

    def change(deployment: dict[str, Any]) -> None:
        deployment["spec"]["template"]["spec"]["containers"][0]["image"] = "nginx:1.27"

    hub.update_template(template, change)
    for cluster, replicas in (("member1", 1), ("member2", 2)):
        manifest = hub.manifest(cluster)
        assert manifest["spec"]["template"]["spec"]["containers"][0]["image"] == "nginx:1.27"
        assert manifest["spec"]["replicas"] == replicas
        assert manifest["metadata"]["annotations"]["resourcetemplate.karmada.io/generation"] == "2"


def test_a_sync_that_changes_nothing_writes_nothing() -> None:
    hub = Hub(["member1"])
    hub.binding(hub.deployment(), [("member1", 3)])
    work = hub.work("member1")
    assert work is not None
    hub.update_binding("nginx-deployment", lambda s: s.update(schedulerName="default-scheduler"))
    after = hub.work("member1")
    assert after is not None
    assert after["metadata"]["resourceVersion"] == work["metadata"]["resourceVersion"]


def test_a_deleted_binding_deletes_its_works_and_releases_its_finalizer() -> None:
    hub = Hub(["member1", "member2"])
    hub.binding(hub.deployment(), [("member1", 1), ("member2", 2)])
    hub.store.delete(RB, "nginx-deployment", "default")
    hub.settle()
    assert hub.work_clusters() == []
    assert hub.store.list(RB).items == []
    assert (hub.applied_on("member1"), hub.applied_on("member2")) == (0, 0)


def test_a_missing_cluster_fails_the_sync_and_the_others_still_get_their_work() -> None:
    hub = Hub(["member1"])
    hub.binding(hub.deployment(), [("member1", 1), ("member9", 2)])
    assert hub.work_clusters() == ["member1"]
    failed = hub.events("SyncWorkFailed")
    assert {e["message"] for e in failed} == {'clusters.cluster.karmada.io "member9" not found'}
    assert sorted(e["type"] for e in failed) == ["Warning", "Warning"]


def test_a_work_still_being_deleted_is_not_taken_over() -> None:
    hub = Hub(["member1"])
    hub.external_cluster("member2")
    hub.binding(hub.deployment(), [("member1", 1), ("member2", 2)])
    hub.set_ready("member2", False)
    hub.update_binding(
        "nginx-deployment", lambda s: s.update(clusters=[{"name": "member1", "replicas": 3}])
    )
    hub.update_binding(
        "nginx-deployment",
        lambda s: s.update(
            clusters=[{"name": "member1", "replicas": 1}, {"name": "member2", "replicas": 2}]
        ),
    )
    messages = {e["message"] for e in hub.events("SyncWorkFailed")}
    assert messages == {f"work karmada-es-member2/{NGINX_WORK} is being deleted"}
    hub.set_ready("member2", True)  # the old Work goes; the retry creates the new one
    hub.run(1)
    work = hub.work("member2")
    assert work is not None and "deletionTimestamp" not in work["metadata"]


def test_a_cluster_resource_binding_gets_works_named_after_it() -> None:
    hub = Hub(["member1"])
    hub.cluster_role_binding(["member1"])
    name = generate_work_name("ClusterRole", "system:reader", "")
    work = hub.work("member1", name)
    assert work is not None
    assert name.startswith("system.reader-")
    assert work["metadata"]["labels"]["clusterresourcebinding.karmada.io/permanent-id"] == CRB_ID
    assert work["metadata"]["annotations"] == {
        "clusterresourcebinding.karmada.io/name": "system.reader-clusterrole",
        "work.karmada.io/conflict-resolution": "abort",
    }
    manifest = hub.manifest("member1", name)
    assert manifest["rules"] == [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]}]
    assert {e["message"] for e in hub.events("SyncWorkSucceed")} == {
        "Sync work of ClusterResourceBinding(system.reader-clusterrole) successful."
    }


def test_suspended_dispatching_reaches_the_work_and_the_member_holds_off() -> None:
    hub = Hub(["member1"])
    hub.binding(hub.deployment(), [("member1", 3)], suspension={"dispatching": True})
    work = hub.work("member1")
    assert work is not None
    assert work["spec"]["suspendDispatching"] is True
    assert "status" not in work and hub.applied_on("member1") == 0


@pytest.mark.parametrize("tampered", [False, True], ids=["in sync", "work changed"])
@pytest.mark.parametrize("resume", [False, True], ids=["restarted", "resumed"])
def test_a_resumed_binding_controller_reports_a_sync_only_if_it_changed_something(
    resume: bool, tampered: bool
) -> None:
    """What-if resumes a running hub: its binding controller looks at every binding once
    but says nothing of one whose Works are as it would write them, where a restarted one
    reports every sync again (on the binding and its template)."""
    hub = Hub(["member1", "member2"])
    hub.binding(hub.deployment(), [("member1", 1), ("member2", 2)])
    hub.driver.stop()
    if tampered:
        work = hub.work("member2")
        assert work is not None
        work["spec"]["workload"]["manifests"][0]["spec"]["replicas"] = 5
        hub.store.update(work)
    said = _reported(hub)
    manager = ControllerManager(hub.store, hub.clock)
    manager.add(resource_binding_controller())
    driver = VirtualDriver(manager)
    driver.start(resume=resume)
    driver.settle()
    assert _reported(hub) - said == (2 if tampered or not resume else 0)
    assert hub.manifest("member2")["spec"]["replicas"] == 2
    driver.stop()


def _reported(hub: Hub) -> int:
    """How many times SyncWorkSucceed was recorded (Events and their counts)."""
    return sum(e.get("count", 1) for e in hub.events("SyncWorkSucceed"))
