"""The binding, execution and binding status controllers inside `fleetwarden simulate`: a
scenario whose ResourceBinding is written as the scheduler would leave it."""

from typing import Any

from hub_harness import SCHEDULED

from fleetwarden.sim.runner import Simulation
from fleetwarden.sim.scenario import parse

WORK = {"apiVersion": "work.karmada.io/v1alpha1", "kind": "Work", "name": "nginx-687f7fb96f"}
RB = {
    "apiVersion": "work.karmada.io/v1alpha2",
    "kind": "ResourceBinding",
    "namespace": "default",
    "name": "nginx-deployment",
}


def cluster(name: str) -> dict[str, Any]:
    return {
        "apiVersion": "cluster.karmada.io/v1alpha1",
        "kind": "Cluster",
        "metadata": {"name": name},
        "spec": {"syncMode": "Push"},
    }


def binding(*clusters: tuple[str, int]) -> dict[str, Any]:
    """As scheduled; applied again without status, which the scenario then keeps."""
    return {
        "apiVersion": RB["apiVersion"],
        "kind": RB["kind"],
        "metadata": {"name": RB["name"], "namespace": "default"},
        "spec": {
            "resource": {
                "apiVersion": "apps/v1", "kind": "Deployment", "namespace": "default",
                "name": "nginx",
            },
            "replicas": 3,
            "placement": {"replicaScheduling": {"replicaSchedulingType": "Divided"}},
            "clusters": [{"name": n, "replicas": r} for n, r in clusters],
        },
    }  # fmt: skip


DEPLOYMENT = {
    "apiVersion": "apps/v1",
    "kind": "Deployment",
    "metadata": {"name": "nginx", "namespace": "default"},
    "spec": {
        "replicas": 3,
        "selector": {"matchLabels": {"app": "nginx"}},
        "template": {
            "metadata": {"labels": {"app": "nginx"}},
            "spec": {"containers": [{"name": "nginx", "image": "nginx"}]},
        },
    },
}


def replicas_on(member: str) -> dict[str, Any]:
    return {
        "object": {**WORK, "namespace": f"karmada-es-{member}"},
        "query": "spec.workload.manifests[0].spec.replicas",
    }


HEALTH = {"object": RB, "query": "status.aggregatedStatus[].[clusterName, health]"}
FULLY_APPLIED = {
    "object": RB,
    "query": "status.conditions[?type=='FullyApplied'] | [0].status",
}


def test_divided_binding_to_work_to_members_and_back() -> None:
    doc = {
        "apiVersion": "fleetwarden.io/v1alpha1",
        "kind": "Scenario",
        "metadata": {"name": "work"},
        "spec": {
            "members": {"member1": {}, "member2": {"workloadReadyAfter": "20s"}},
            "objects": [
                cluster("member1"),
                cluster("member2"),
                DEPLOYMENT,
                {**binding(("member1", 1), ("member2", 2)), "status": SCHEDULED},
            ],
            "steps": [
                {
                    "at": "1s",
                    "expect": [
                        {**replicas_on("member1"), "equals": 1},
                        {**replicas_on("member2"), "equals": 2},
                        {**HEALTH, "equals": [["member1", "Healthy"], ["member2", "Unhealthy"]]},
                        {**FULLY_APPLIED, "equals": "True"},
                    ],
                },
                {
                    "at": "20s",
                    "expect": [
                        {**HEALTH, "equals": [["member1", "Healthy"], ["member2", "Healthy"]]}
                    ],
                },
                {"at": "30s", "members": {"member2": {"reachable": False}}},
                {
                    # member2 Ready=False after cluster-failure-threshold (30 s)
                    "at": "1m",
                    "apply": [binding(("member1", 3))],
                    "expect": [
                        {**replicas_on("member1"), "equals": 3},
                        {
                            "object": {**WORK, "namespace": "karmada-es-member2"},
                            "query": "metadata.deletionTimestamp",
                            "equals": "2025-01-01T00:01:00Z",
                        },
                    ],
                },
                {"at": "2m", "members": {"member2": {"reachable": True}}},
                {
                    # Ready again after cluster-success-threshold (30 s), probed every 10 s
                    "at": "2m45s",
                    "expect": [
                        {"object": {**WORK, "namespace": "karmada-es-member2"}, "exists": False},
                        {**HEALTH, "equals": [["member1", "Healthy"]]},
                    ],
                },
            ],
        },
    }
    report = Simulation(parse(doc, "work.yaml")).run()
    assert report.failed == 0, [(o.at, o.actual) for o in report.outcomes if not o.passed]
