"""BuildResourceBinding and ApplyPolicy's update of a binding, ported from upstream's
pkg/detector/detector_test.go (TestApplyPolicy) and pkg/util/binding_test.go."""

from __future__ import annotations

from typing import Any

import pytest

from fleetwarden.api.karmada.policy import PropagationSpec, Suspension
from fleetwarden.api.registry import REGISTRY
from fleetwarden.controllers.karmada.claim import CPP, PP, Claim
from fleetwarden.controllers.karmada.template_binding import (
    BindingError,
    Gates,
    desired_binding,
    merge_binding,
    merge_policy_suspension,
)

CLAIM = Claim(
    {"propagationpolicy.karmada.io/permanent-id": "id-1"},
    {"propagationpolicy.karmada.io/name": "pp"},
)


OWNER = {
    "apiVersion": "apps/v1",
    "kind": "Deployment",
    "name": "test-deployment",
    "uid": "test-uid",
    "controller": True,
}


def template(**labels: str) -> Any:
    return REGISTRY.decode(
        {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {
                "name": "test-deployment",
                "namespace": "default",
                "uid": "test-uid",
                "resourceVersion": "7",
                "labels": labels,
            },
            "spec": {"replicas": 2},
        }
    )


def spec(**fields: Any) -> PropagationSpec:
    return PropagationSpec.model_validate(
        {"resourceSelectors": [{"apiVersion": "apps/v1", "kind": "Deployment"}], **fields}
    )


def no_priority_class(name: str) -> int:
    raise BindingError(f'priorityclasses.scheduling.k8s.io "{name}" not found')


DEFAULT_GATES = Gates()


def build(obj: Any, policy: PropagationSpec, gates: Gates = DEFAULT_GATES) -> dict[str, Any]:
    binding, _ = desired_binding(obj, CLAIM, policy, gates, no_priority_class)
    return binding


def test_basic_apply_policy() -> None:
    binding, interpreted = desired_binding(template(), CLAIM, spec(), Gates(), no_priority_class)
    assert interpreted
    assert binding == {
        "apiVersion": "work.karmada.io/v1alpha2",
        "kind": "ResourceBinding",
        "metadata": {
            "name": "test-deployment-deployment",
            "namespace": "default",
            "labels": dict(CLAIM.labels),
            "annotations": dict(CLAIM.annotations),
            "finalizers": ["karmada.io/binding-controller"],
            "ownerReferences": [OWNER | {"blockOwnerDeletion": True}],
        },
        "spec": {
            "resource": {
                "apiVersion": "apps/v1",
                "kind": "Deployment",
                "namespace": "default",
                "name": "test-deployment",
                "uid": "test-uid",
                "resourceVersion": "7",
            },
            "placement": {},
            "replicas": 2,
        },
    }


AFFINITY = {
    "affinity": {"groupByLabelKey": "affinityKey"},
    "antiAffinity": {"groupByLabelKey": "antiAffinityKey"},
}


@pytest.mark.parametrize(
    ("labels", "workload_affinity", "groups"),
    [
        (
            {"affinityKey": "affinityValue", "antiAffinityKey": "antiAffinityValue"},
            AFFINITY,
            {
                "affinityGroup": "affinityKey=affinityValue",
                "antiAffinityGroup": "antiAffinityKey=antiAffinityValue",
            },
        ),
        (
            {"affinityKey": "affinityValue"},
            {"affinity": AFFINITY["affinity"]},
            {"affinityGroup": "affinityKey=affinityValue"},
        ),
        (
            {"antiAffinityKey": "antiAffinityValue"},
            {"antiAffinity": AFFINITY["antiAffinity"]},
            {"antiAffinityGroup": "antiAffinityKey=antiAffinityValue"},
        ),
        ({}, AFFINITY, None),  # the rules are there but the labels are not
    ],
)
def test_workload_affinity_groups(
    labels: dict[str, str], workload_affinity: dict[str, Any], groups: dict[str, str] | None
) -> None:
    policy = spec(placement={"workloadAffinity": workload_affinity})
    body = build(template(**labels), policy, Gates(workload_affinity=True))["spec"]
    assert body.get("workloadAffinityGroups") == groups
    assert "workloadAffinityGroups" not in build(template(**labels), policy)["spec"]  # gate off


def test_the_policys_settings_go_on_the_binding_as_omitempty_would() -> None:
    policy = spec(
        propagateDeps=False,
        schedulerName="default-scheduler",
        conflictResolution="Overwrite",
        preserveResourcesOnDeletion=False,
        failover={"application": {"decisionConditions": {"tolerationSeconds": 60}}},
        suspension={"dispatching": True},
    )
    body = build(template(), policy)["spec"]
    assert "propagateDeps" not in body
    assert body["schedulerName"] == "default-scheduler"
    assert body["conflictResolution"] == "Overwrite"
    assert body["preserveResourcesOnDeletion"] is False  # a pointer: false is kept
    assert body["failover"] == {"application": {"decisionConditions": {"tolerationSeconds": 60}}}
    assert body["suspension"] == {"dispatching": True}


def test_schedule_priority() -> None:
    kube = spec(
        schedulePriority={"priorityClassSource": "KubePriorityClass", "priorityClassName": "high"}
    )
    binding, _ = desired_binding(template(), CLAIM, kube, Gates(), lambda name: 10)
    assert binding["spec"]["schedulePriority"] == {"priority": 10}
    with pytest.raises(BindingError, match='"high" not found'):
        build(template(), kube)
    assert (
        "schedulePriority"
        not in build(template(), kube, Gates(priority_based_scheduling=False))["spec"]
    )
    pod = spec(
        schedulePriority={"priorityClassSource": "PodPriorityClass", "priorityClassName": "x"}
    )
    with pytest.raises(
        BindingError,
        match=r"^priority class source is PodPriorityClass, but PodPriorityClass is not supported yet$",
    ):
        build(template(), pod)


def test_a_cluster_scoped_template_gets_a_cluster_resource_binding() -> None:
    role = REGISTRY.decode(
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRole",
            "metadata": {"name": "system:admin", "uid": "u"},
        }
    )
    binding = build(
        role,
        spec(
            schedulePriority={
                "priorityClassSource": "KubePriorityClass",
                "priorityClassName": "high",
            }
        ),
    )
    assert binding["kind"] == "ClusterResourceBinding"
    assert binding["metadata"]["name"] == "system.admin-clusterrole"
    assert "namespace" not in binding["metadata"]
    assert binding["metadata"]["finalizers"] == ["karmada.io/cluster-resource-binding-controller"]
    assert binding["spec"] == {
        "resource": {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRole",
            "name": "system:admin",
            "uid": "u",
        },
        "placement": {},
    }


def test_resource_quota_estimate_adds_namespace_and_priority_class() -> None:
    obj = template()
    obj.spec = {
        "replicas": 1,
        "template": {
            "spec": {
                "priorityClassName": "high",
                "containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}],
            }
        },
    }
    body = build(obj, spec(), Gates(resource_quota_estimate=True))["spec"]
    assert body["replicaRequirements"] == {
        "resourceRequest": {"cpu": "1"},
        "priorityClassName": "high",
        "namespace": "default",
    }


# --- the update of an existing binding ------------------------------------------------------------


def existing(**spec_fields: Any) -> dict[str, Any]:
    return {
        "apiVersion": "work.karmada.io/v1alpha2",
        "kind": "ResourceBinding",
        "metadata": {
            "name": "test-deployment-deployment",
            "namespace": "default",
            "resourceVersion": "3",
            "labels": {
                "resourcebinding.karmada.io/permanent-id": "rb-1",
                "clusterpropagationpolicy.karmada.io/permanent-id": "cpp-1",
            },
            "annotations": {"clusterpropagationpolicy.karmada.io/name": "cpp", "keep": "me"},
            "finalizers": ["other"],
            "ownerReferences": [OWNER],
        },
        "spec": {
            "clusters": [{"name": "member1", "replicas": 2}],
            "replicas": 5,
            "propagateDeps": True,
            **spec_fields,
        },
        "status": {"conditions": []},
    }


def test_an_update_merges_metadata_replaces_owned_fields_and_keeps_the_rest() -> None:
    desired = build(template(), spec(schedulerName="s"))
    merged = merge_binding(existing(), desired, "test-uid", None, CPP.claim_keys())
    meta = merged["metadata"]
    assert meta["labels"] == {"resourcebinding.karmada.io/permanent-id": "rb-1", **CLAIM.labels}
    assert meta["annotations"] == {"keep": "me", **CLAIM.annotations}
    assert meta["finalizers"] == ["other", "karmada.io/binding-controller"]
    assert meta["ownerReferences"] == desired["metadata"]["ownerReferences"]
    assert meta["resourceVersion"] == "3"
    assert merged["spec"] == {
        "clusters": [{"name": "member1", "replicas": 2}],  # the scheduler's
        "resource": desired["spec"]["resource"],
        "placement": {},
        "replicas": 2,
        "schedulerName": "s",
    }
    assert merged["status"] == {"conditions": []}


def test_a_cluster_resource_binding_keeps_what_upstream_does_not_update() -> None:
    current = existing()
    current["kind"] = "ClusterResourceBinding"
    desired = build(template(), spec()) | {"kind": "ClusterResourceBinding"}
    merged = merge_binding(current, desired, "test-uid", None)
    assert merged["spec"]["propagateDeps"] is True
    assert (
        merged["metadata"]["labels"]["clusterpropagationpolicy.karmada.io/permanent-id"] == "cpp-1"
    )


def test_a_binding_owned_by_another_template_is_not_updated() -> None:
    with pytest.raises(BindingError, match="different owner reference UID"):
        merge_binding(existing(), build(template(), spec()), "another-uid", None, PP.claim_keys())


@pytest.mark.parametrize(
    ("binding", "policy", "want"),
    [
        (None, None, None),
        ({"scheduling": True}, None, {"scheduling": True}),
        ({"dispatching": True, "scheduling": True}, None, {"scheduling": True}),
        ({"dispatching": True}, None, None),
        (None, {"dispatching": True}, {"dispatching": True}),
        ({"scheduling": True}, {"dispatching": True}, {"dispatching": True, "scheduling": True}),
        ({"scheduling": False}, None, {"scheduling": False}),  # a pointer: false is kept
    ],
)
def test_merge_policy_suspension(
    binding: dict[str, Any] | None, policy: dict[str, Any] | None, want: dict[str, Any] | None
) -> None:
    suspension = Suspension.model_validate(policy) if policy is not None else None
    assert merge_policy_suspension(binding, suspension) == want
