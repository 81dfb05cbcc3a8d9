"""GetReplicas of the default interpreter, ported from upstream's
resourceinterpreter/default/native/replica_test.go and helper.GenerateReplicaRequirements'."""

from typing import Any

import pytest

from fleetwarden.semantics.replicas import (
    InterpretError,
    Replicas,
    get_replicas,
    replica_hook_enabled,
)

NODE_CLAIM_POD = {
    "nodeSelector": {"foo": "foo1"},
    "tolerations": [{"key": "foo", "operator": "Exists", "effect": "NoSchedule"}],
    "affinity": {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [{"matchFields": [{"key": "foo", "operator": "Exists"}]}]
            }
        }
    },
}
NODE_CLAIM = {
    "nodeClaim": {
        "nodeSelector": {"foo": "foo1"},
        "tolerations": [{"key": "foo", "operator": "Exists", "effect": "NoSchedule"}],
        "hardNodeAffinity": {
            "nodeSelectorTerms": [{"matchFields": [{"key": "foo", "operator": "Exists"}]}]
        },
    }
}


def workload(
    api_version: str, kind: str, spec: dict[str, Any], pod: dict[str, Any]
) -> dict[str, Any]:
    body = {**spec, "template": {"spec": pod}} if kind != "Pod" else pod
    return {"apiVersion": api_version, "kind": kind, "metadata": {"name": "w"}, "spec": body}


@pytest.mark.parametrize(
    ("api_version", "kind", "spec", "replicas"),
    [
        ("apps/v1", "Deployment", {"replicas": 2}, 2),
        ("apps/v1", "StatefulSet", {"replicas": 2}, 2),
        ("apps/v1", "ReplicaSet", {"replicas": 3}, 3),
        ("batch/v1", "Job", {"parallelism": 3, "completions": 2}, 2),
        ("v1", "Pod", {}, 1),
    ],
)
def test_replicas_and_node_claim(
    api_version: str, kind: str, spec: dict[str, Any], replicas: int
) -> None:
    got = get_replicas(workload(api_version, kind, spec, NODE_CLAIM_POD))
    assert got == Replicas(replicas, NODE_CLAIM)


@pytest.mark.parametrize(
    ("kind", "spec", "replicas"),
    [
        ("Deployment", {}, 1),  # the API server defaults replicas to 1
        ("Deployment", {"replicas": 0}, 0),
        ("Job", {}, 1),  # parallelism and completions both default to 1
        ("Job", {"parallelism": 4}, 4),  # completions unset: parallelism is the cap
        ("Job", {"completions": 5}, 1),  # parallelism defaults to 1
    ],
)
def test_defaults_the_api_server_would_have_set(
    kind: str, spec: dict[str, Any], replicas: int
) -> None:
    api_version = "batch/v1" if kind == "Job" else "apps/v1"
    assert get_replicas(workload(api_version, kind, spec, {})) == Replicas(replicas, None)


def test_only_the_default_interpreters_kinds_have_replicas() -> None:
    assert replica_hook_enabled("apps/v1", "Deployment")
    assert replica_hook_enabled("v1", "Pod")
    assert not replica_hook_enabled("apps/v1", "DaemonSet")
    assert not replica_hook_enabled("apps/v1beta1", "Deployment")
    assert not replica_hook_enabled("v1", "ConfigMap")


def requests_of(pod: dict[str, Any]) -> dict[str, str] | None:
    got = get_replicas(workload("apps/v1", "Deployment", {}, pod)).requirements
    return got["resourceRequest"] if got else None


def container(
    requests: dict[str, Any] | None = None, limits: dict[str, Any] | None = None
) -> dict[str, Any]:
    resources = {k: v for k, v in (("requests", requests), ("limits", limits)) if v is not None}
    return {"name": "c", "resources": resources}


def test_limits_stand_in_for_missing_requests() -> None:
    assert requests_of({"containers": [container(limits={"cpu": "200m"})]}) == {"cpu": "200m"}
    pod = {"containers": [container({"cpu": "100m"}, {"cpu": "1", "memory": "1Gi"})]}
    assert requests_of(pod) == {"cpu": "100m", "memory": "1Gi"}


def test_containers_add_up_init_containers_count_by_their_largest_and_overhead_adds() -> None:
    pod = {
        "containers": [container({"cpu": "250m", "memory": "64Mi"}), container({"cpu": "0.5"})],
        "initContainers": [container({"cpu": "2"}), container({"memory": "32Mi"})],
        "overhead": {"cpu": "10m", "memory": "1Mi"},
    }
    assert requests_of(pod) == {"cpu": "2010m", "memory": "65Mi"}


def test_resources_are_written_canonically_and_unknown_ones_dropped() -> None:
    pod = {
        "containers": [
            container(
                {
                    "cpu": "1000m",
                    "memory": "128M",
                    "ephemeral-storage": "2Gi",
                    "nvidia.com/gpu": 1,
                    "hugepages-2Mi": "4Mi",
                    "storage": "1Gi",  # not a resource a pod requests
                }
            )
        ]
    }
    assert requests_of(pod) == {
        "cpu": "1",
        "memory": "125000Ki",
        "ephemeral-storage": "2Gi",
        "nvidia.com/gpu": "1",
        "hugepages-2Mi": "4Mi",
    }


def test_no_requirements_without_requests_or_node_constraints() -> None:
    assert get_replicas(
        workload("apps/v1", "Deployment", {"replicas": 2}, {"containers": [container()]})
    ) == Replicas(2, None)
    # An empty nodeSelector is a non-nil map upstream: it still makes a node claim.
    got = get_replicas(workload("apps/v1", "Deployment", {}, {"nodeSelector": {}}))
    assert got.requirements == {"nodeClaim": {"nodeSelector": {}}}


def test_priority_class_when_asked() -> None:
    pod = {"priorityClassName": "high", "containers": [container({"cpu": "1"})]}
    got = get_replicas(workload("apps/v1", "Deployment", {}, pod), with_priority_class=True)
    assert got.requirements == {"resourceRequest": {"cpu": "1"}, "priorityClassName": "high"}
    assert "priorityClassName" not in (
        get_replicas(workload("apps/v1", "Deployment", {}, pod)).requirements or {}
    )


@pytest.mark.parametrize(
    ("spec", "pod", "message"),
    [
        ({"replicas": "3"}, {}, 'spec.replicas: Invalid value: "3": must be of type integer'),
        (
            {},
            {"containers": [container({"cpu": "lots"})]},
            'spec.template.spec.containers[0].resources.cpu: Invalid value: "lots": quantities must match',
        ),
        (
            {},
            {"containers": "c"},
            "spec.template.spec.containers: Invalid value: must be a list of objects",
        ),
        (
            {},
            {"tolerations": [{"tolerationSeconds": "x"}]},
            "spec.template.spec.tolerations[0].tolerationSeconds: Invalid value: Input should be a valid integer",
        ),
    ],
)
def test_a_workload_that_does_not_read_is_an_error_naming_the_field(
    spec: dict[str, Any], pod: dict[str, Any], message: str
) -> None:
    with pytest.raises(InterpretError) as err:
        get_replicas(workload("apps/v1", "Deployment", spec, pod))
    assert message in str(err.value)
