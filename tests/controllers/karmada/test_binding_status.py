"""Work status aggregated into binding status: unit cases ported from upstream's
helper/workstatus_test.go (TestAssembleWorkStatus, TestWorksFullyApplied,
TestGenerateFullyAppliedCondition); behaviour on a hub with simulated members."""

from datetime import timedelta
from typing import Any

import pytest
from hub_harness import DEPLOYMENT, Hub

from fleetwarden.api.karmada.work import ObjectReference, ResourceBindingSpec, Work
from fleetwarden.controllers.karmada.binding_status import (
    ManifestNotFound,
    aggregated_status,
    fully_applied_condition,
)
from fleetwarden.members.simulated import MemberState

REF = ObjectReference(
    api_version="apps/v1", kind="Deployment", namespace="test-ns", name="test-deployment"
)
MANIFEST = {
    "apiVersion": "apps/v1",
    "kind": "Deployment",
    "metadata": {"name": "test-deployment", "namespace": "test-ns"},
}
IDENTIFIER = {
    "ordinal": 0, "group": "apps", "version": "v1", "kind": "Deployment",
    "resource": "deployments", "namespace": "test-ns", "name": "test-deployment",
}  # fmt: skip


def work(status: dict[str, Any] | None = None, **metadata: Any) -> Work:
    return Work.model_validate(
        {
            "apiVersion": "work.karmada.io/v1alpha1",
            "kind": "Work",
            "metadata": {"name": "test-work", "namespace": "karmada-es-member1", **metadata},
            "spec": {"workload": {"manifests": [MANIFEST]}},
            **({"status": status} if status else {}),
        }
    )


def applied(status: str, message: str = "") -> dict[str, Any]:
    return {"type": "Applied", "status": status, "reason": "", "message": message}


@pytest.mark.parametrize(
    ("works", "expected"),
    [
        ([], []),
        ([work(deletionTimestamp="2024-01-01T00:00:00Z")], []),
        (
            [
                work(
                    {
                        "conditions": [applied("True")],
                        "manifestStatuses": [
                            {
                                "identifier": IDENTIFIER,
                                "status": {"replicas": 3},
                                "health": "Healthy",
                            }
                        ],
                    }
                )
            ],
            [
                {
                    "clusterName": "member1",
                    "status": {"replicas": 3},
                    "applied": True,
                    "health": "Healthy",
                }
            ],
        ),
        (
            [work({"conditions": [applied("False", "Failed to apply")]})],
            [{"clusterName": "member1", "appliedMessage": "Failed to apply", "health": "Unknown"}],
        ),
        (
            [work({"conditions": [applied("Unknown", "Status unknown")]})],
            [{"clusterName": "member1", "appliedMessage": "Status unknown", "health": "Unknown"}],
        ),
        (
            [work({"conditions": [applied("True")]})],
            [{"clusterName": "member1", "applied": True, "health": "Unknown"}],
        ),
    ],
    ids=[
        "empty work list",
        "work being deleted",
        "work applied successfully with health status",
        "work not applied with error message",
        "work with unknown condition status",
        "applied work without manifest status",
    ],
)
def test_assemble_work_status(works: list[Work], expected: list[dict[str, Any]]) -> None:
    assert aggregated_status(works, REF) == expected


def test_a_work_without_the_template_is_an_error() -> None:
    other = REF.model_copy(update={"name": "other"})
    with pytest.raises(ManifestNotFound, match="no such manifest exist"):
        aggregated_status([work()], other)


def test_items_are_sorted_by_cluster() -> None:
    works = [work(namespace="karmada-es-member2"), work(namespace="karmada-es-member1")]
    assert [i["clusterName"] for i in aggregated_status(works, REF)] == ["member1", "member2"]


def items(*clusters: tuple[str, bool]) -> list[dict[str, Any]]:
    return [{"clusterName": c, "applied": True} if a else {"clusterName": c} for c, a in clusters]


@pytest.mark.parametrize(
    ("statuses", "clusters", "expected"),
    [
        (items(("member1", True)), [], False),
        ([], ["member1"], False),
        (items(("member1", True)), ["member1", "member2"], False),
        (items(("member1", True), ("member2", True)), ["member1", "member2"], True),
        (items(("member1", True), ("member2", False)), ["member1", "member2"], False),
        (items(("member1", True)), ["member2"], False),
    ],
    ids=[
        "no cluster",
        "no aggregatedStatuses",
        "cluster size is not equal to aggregatedStatuses",
        "aggregatedStatuses is equal to clusterNames and all applied",
        "aggregatedStatuses is equal to clusterNames but not all applied",
        "target clusters not match expected status",
    ],
)
def test_works_fully_applied(
    statuses: list[dict[str, Any]], clusters: list[str], expected: bool
) -> None:
    spec = ResourceBindingSpec.model_validate({"clusters": [{"name": c} for c in clusters]})
    condition = fully_applied_condition(spec, statuses)
    assert (condition.status == "True") is expected
    assert condition.reason == ("FullyAppliedSuccess" if expected else "FullyAppliedFailed")


def test_fully_applied_waits_for_clusters_still_being_evicted() -> None:
    task = {"fromCluster": "member2", "reason": "TaintUntolerated", "producer": "TaintManager"}
    spec = ResourceBindingSpec.model_validate(
        {"clusters": [{"name": "member1"}], "gracefulEvictionTasks": [task]}
    )
    assert fully_applied_condition(spec, items(("member1", True))).status == "False"
    both = items(("member1", True), ("member2", True))
    assert fully_applied_condition(spec, both).status == "True"


# --- behaviour -------------------------------------------------------------------------------


def status_of(hub: Hub) -> dict[str, Any]:
    status: dict[str, Any] = hub.get_binding()["status"]
    return status


def condition(hub: Hub, type_: str) -> tuple[str, str, str]:
    found = next(c for c in status_of(hub)["conditions"] if c["type"] == type_)
    return found["status"], found["reason"], found["message"]


def test_members_reports_become_the_bindings_aggregated_status() -> None:
    hub = Hub(["member1", "member2"])
    hub.binding(hub.deployment(), [("member1", 1), ("member2", 2)])
    aggregated = status_of(hub)["aggregatedStatus"]
    assert [(i["clusterName"], i["applied"], i["health"]) for i in aggregated] == [
        ("member1", True, "Healthy"),
        ("member2", True, "Healthy"),
    ]
    assert aggregated[1]["status"] == {
        "generation": 1, "resourceTemplateGeneration": 1, "observedGeneration": 1,
        "replicas": 2, "updatedReplicas": 2, "readyReplicas": 2, "availableReplicas": 2,
    }  # fmt: skip
    assert condition(hub, "FullyApplied") == (
        "True",
        "FullyAppliedSuccess",
        "All works have been successfully applied",
    )
    assert condition(hub, "Scheduled") == (
        "True",
        "Success",
        "Binding has been scheduled successfully.",
    )
    events = hub.events("AggregateStatusSucceed")
    assert [(e["involvedObject"]["kind"], e["message"]) for e in events] == [
        (
            "ResourceBinding",
            "Update ResourceBinding(default/nginx-deployment) with AggregatedStatus successfully.",
        ),
        ("Deployment", "Update Resource with AggregatedStatus successfully."),
    ]


def test_the_templates_status_sums_the_members() -> None:
    slow = MemberState(workload_ready_after=timedelta(seconds=20))
    hub = Hub({"member1": MemberState(), "member2": slow})
    hub.binding(hub.deployment(replicas=3), [("member1", 1), ("member2", 2)])
    status = hub.store.get(DEPLOYMENT, "nginx", "default")["status"]
    assert status == {
        "observedGeneration": 1, "replicas": 3, "updatedReplicas": 3, "readyReplicas": 1,
        "availableReplicas": 1, "unavailableReplicas": 2,
    }  # fmt: skip
    hub.run(20)
    status = hub.store.get(DEPLOYMENT, "nginx", "default")["status"]
    assert (status["readyReplicas"], "unavailableReplicas" in status) == (3, False)


def test_health_follows_the_member_until_ready() -> None:
    slow = MemberState(workload_ready_after=timedelta(seconds=20))
    hub = Hub({"member1": slow, "member2": MemberState()})
    hub.binding(hub.deployment(), [("member1", 1), ("member2", 2)])
    health = {i["clusterName"]: i["health"] for i in status_of(hub)["aggregatedStatus"]}
    assert health == {"member1": "Unhealthy", "member2": "Healthy"}
    assert condition(hub, "FullyApplied")[0] == "True"  # applied, if not yet healthy
    hub.run(20)
    health = {i["clusterName"]: i["health"] for i in status_of(hub)["aggregatedStatus"]}
    assert health == {"member1": "Healthy", "member2": "Healthy"}


def test_an_unreported_work_leaves_the_binding_not_fully_applied() -> None:
    """member2 is reported externally, and nothing reports its Work yet."""
    hub = Hub(["member1"])
    hub.external_cluster("member2", ready=True)
    hub.binding(hub.deployment(), [("member1", 1), ("member2", 2)])
    aggregated = status_of(hub)["aggregatedStatus"]
    assert aggregated[1:] == [{"clusterName": "member2", "health": "Unknown"}]
    assert condition(hub, "FullyApplied") == (
        "False",
        "FullyAppliedFailed",
        "Failed to apply all works, see status.aggregatedStatus for details",
    )


def test_a_member_whose_cluster_is_not_ready_applies_nothing() -> None:
    hub = Hub({"member1": MemberState(), "member2": MemberState(ready=False)})
    hub.binding(hub.deployment(), [("member1", 1), ("member2", 2)])
    hub.run(60)
    work = hub.work("member2")
    assert work is not None and "status" not in work
    assert condition(hub, "FullyApplied")[0] == "False"
    hub.member("member2", ready=True)
    hub.run(60)
    assert condition(hub, "FullyApplied")[0] == "True"


def test_a_cluster_leaving_the_result_leaves_the_aggregated_status() -> None:
    hub = Hub(["member1", "member2"])
    hub.binding(hub.deployment(), [("member1", 1), ("member2", 2)])
    hub.update_binding("nginx-deployment", lambda s: s.update(clusters=[{"name": "member1"}]))
    assert [i["clusterName"] for i in status_of(hub)["aggregatedStatus"]] == ["member1"]
    assert condition(hub, "FullyApplied")[0] == "True"


def test_scheduling_alone_writes_no_status_the_first_report_does() -> None:
    """As upstream's event filters: neither the binding's scheduling nor its Work's creation
    aggregates; the Work's first status does."""
    hub = Hub()
    hub.external_cluster("member1")
    hub.binding(hub.deployment(), [("member1", 3)])
    assert hub.work("member1") is not None
    assert [c["type"] for c in status_of(hub)["conditions"]] == ["Scheduled"]
    assert "aggregatedStatus" not in status_of(hub)
    work = hub.work("member1")
    assert work is not None
    work["status"] = {"conditions": [applied("True")]}
    hub.store.update(work, subresource="status")
    hub.settle()
    assert status_of(hub)["aggregatedStatus"] == [
        {"clusterName": "member1", "applied": True, "health": "Unknown"}
    ]
    assert condition(hub, "FullyApplied")[0] == "True"
    assert len(hub.events("AggregateStatusSucceed")) == 1
