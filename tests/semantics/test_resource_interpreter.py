"""The default resource interpreter's ReviseReplica, InterpretHealth and ReflectStatus, with
cases ported from upstream's revisereplica_test.go, healthy_test.go and reflectstatus_test.go."""

from typing import Any

import pytest

from fleetwarden.semantics.resource_interpreter import (
    aggregate_status,
    interpret_health,
    reflect_status,
    revise_replica,
    revise_replica_enabled,
)


def workload(api_version: str, kind: str, **spec: Any) -> dict[str, Any]:
    return {"apiVersion": api_version, "kind": kind, "metadata": {"name": "fake"}, "spec": spec}


@pytest.mark.parametrize(
    ("api_version", "kind", "field"),
    [
        ("apps/v1", "Deployment", "replicas"),
        ("apps/v1", "ReplicaSet", "replicas"),
        ("apps/v1", "StatefulSet", "replicas"),
        ("batch/v1", "Job", "parallelism"),
    ],
)
def test_revise_replica_sets_the_kinds_replica_field(
    api_version: str, kind: str, field: str
) -> None:
    obj = workload(api_version, kind, **{field: 1})
    assert revise_replica_enabled(obj)
    revise_replica(obj, 3)
    assert obj["spec"][field] == 3


def test_revise_replica_leaves_an_absent_field_absent() -> None:
    """helper.ApplyReplica sets the field only where the template has it."""
    obj = workload("apps/v1", "Deployment")
    revise_replica(obj, 3)
    assert obj["spec"] == {}


def test_revise_replica_refuses_a_field_of_another_type() -> None:
    obj = workload("apps/v1", "Deployment", replicas="1")
    with pytest.raises(ValueError, match=r"\.spec\.replicas accessor error: .* expected int64"):
        revise_replica(obj, 3)


@pytest.mark.parametrize(
    ("api_version", "kind"), [("v1", "Pod"), ("apps/v1beta1", "Deployment"), ("v1", "ConfigMap")]
)
def test_no_revise_hook_for_other_kinds(api_version: str, kind: str) -> None:
    assert not revise_replica_enabled(workload(api_version, kind))


def deployment(generation: int, wanted: int, **status: int) -> dict[str, Any]:
    obj = workload("apps/v1", "Deployment", replicas=wanted)
    obj["metadata"]["generation"] = generation
    obj["status"] = status
    return obj


@pytest.mark.parametrize(
    ("obj", "health"),
    [
        # deployment healthy
        (deployment(1, 3, availableReplicas=3, updatedReplicas=3, observedGeneration=1), "Healthy"),
        # generation not equal to observedGeneration
        (
            deployment(1, 3, availableReplicas=3, updatedReplicas=3, observedGeneration=2),
            "Unhealthy",
        ),
        # replicas not equal to updatedReplicas
        (deployment(1, 3, updatedReplicas=1, observedGeneration=1), "Unhealthy"),
        # availableReplicas not equal to updatedReplicas
        (
            deployment(1, 3, availableReplicas=0, updatedReplicas=3, observedGeneration=1),
            "Unhealthy",
        ),
    ],
)
def test_deployment_health(obj: dict[str, Any], health: str) -> None:
    assert interpret_health(obj) == health


def test_statefulset_health_follows_the_deployment_rule() -> None:
    obj = deployment(1, 3, availableReplicas=2, updatedReplicas=3, observedGeneration=1)
    obj["kind"] = "StatefulSet"
    assert interpret_health(obj) == "Unhealthy"


@pytest.mark.parametrize(("available", "health"), [(3, "Healthy"), (2, "Unhealthy")])
def test_replicaset_health_counts_available_replicas(available: int, health: str) -> None:
    obj = deployment(1, 3, availableReplicas=available, observedGeneration=1)
    obj["kind"] = "ReplicaSet"
    assert interpret_health(obj) == health


def test_a_kind_without_a_health_hook_is_healthy() -> None:
    assert interpret_health({"apiVersion": "v1", "kind": "ConfigMap"}) == "Healthy"


def test_reflect_deployment_status_wraps_the_generations() -> None:
    obj = deployment(
        2, 3, replicas=3, updatedReplicas=3, readyReplicas=3, availableReplicas=3,
        unavailableReplicas=0, observedGeneration=2, collisionCount=1,
    )  # fmt: skip
    obj["metadata"]["annotations"] = {"resourcetemplate.karmada.io/generation": "1"}
    assert reflect_status(obj) == {
        "generation": 2,
        "resourceTemplateGeneration": 1,
        "observedGeneration": 2,
        "replicas": 3,
        "updatedReplicas": 3,
        "readyReplicas": 3,
        "availableReplicas": 3,
    }


def test_reflect_deployment_without_status_is_none() -> None:
    obj = deployment(2, 3)
    del obj["status"]
    assert reflect_status(obj) is None


def test_reflect_whole_status_of_other_kinds() -> None:
    service = {"apiVersion": "v1", "kind": "Service", "status": {"loadBalancer": {}}}
    assert reflect_status(service) == {"loadBalancer": {}}
    assert reflect_status({"apiVersion": "v1", "kind": "ConfigMap"}) is None


MEMBER = {
    "replicas": 1, "readyReplicas": 1, "updatedReplicas": 1, "availableReplicas": 1,
    "unavailableReplicas": 0,
}  # fmt: skip


def test_aggregate_deployment_status() -> None:
    """TestAggregateDeploymentStatus: two members' counts summed, then up to date."""
    items = [
        {"clusterName": "member1", "status": MEMBER, "applied": True},
        {"clusterName": "member2", "status": MEMBER, "applied": True},
    ]
    template = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {}}
    summed = aggregate_status(template, items)
    assert summed == {
        "replicas": 2,
        "readyReplicas": 2,
        "updatedReplicas": 2,
        "availableReplicas": 2,
    }
    assert aggregate_status({**template, "status": summed}, items) is None


def test_observed_generation_waits_for_every_member_on_the_latest_template() -> None:
    def member(resource_template_generation: int) -> dict[str, Any]:
        reflected = {"generation": 3, "observedGeneration": 3, **MEMBER}
        return {"status": {**reflected, "resourceTemplateGeneration": resource_template_generation}}

    template = {
        "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"generation": 2},
        "status": {"observedGeneration": 1, "conditions": [{"type": "Available"}]},
    }  # fmt: skip
    behind = aggregate_status(template, [member(2), member(1)])
    assert behind is not None and behind["observedGeneration"] == 1
    assert behind["conditions"] == [{"type": "Available"}]
    latest = aggregate_status(template, [member(2), member(2), {"clusterName": "m3"}])
    assert latest is not None and latest["observedGeneration"] == 1  # m3 has no status yet
    latest = aggregate_status(template, [member(2), member(2)])
    assert latest is not None and latest["observedGeneration"] == 2


def test_no_status_aggregation_for_other_kinds() -> None:
    assert aggregate_status({"apiVersion": "v1", "kind": "ConfigMap"}, []) is None
