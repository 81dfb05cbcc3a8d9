"""Application failover on a simulated fleet: the purge modes, the toleration counted from
the first report of an unhealthy workload (member1 reports every 10 s: the workload turned
unhealthy at 1m is seen so at 1m10s), and a workload healthy again in time."""

from __future__ import annotations

from typing import Any

from .conftest import CLUSTER, run, scenario

BINDING = {"apiVersion": "work.karmada.io/v1alpha2", "kind": "ResourceBinding",
           "namespace": "default", "name": "db-deployment"}  # fmt: skip

Obj = dict[str, Any]


def fleet_with(application: Obj, steps: list[Obj], member2: Obj | None = None) -> Any:
    clusters = [
        {**CLUSTER, "metadata": {"name": name},
         "spec": {"syncMode": "Push", "apiEndpoint": f"https://{name}.example:6443"}}
        for name in ("member1", "member2")
    ]  # fmt: skip
    deployment = {
        "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "db"},
        "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "db"}},
                 "template": {"metadata": {"labels": {"app": "db"}},
                              "spec": {"containers": [{"name": "db", "image": "postgres"}]}}},
    }  # fmt: skip
    policy = {
        "apiVersion": "policy.karmada.io/v1alpha1", "kind": "PropagationPolicy",
        "metadata": {"name": "db"},
        "spec": {
            "propagateDeps": True,
            "resourceSelectors": [{"apiVersion": "apps/v1", "kind": "Deployment", "name": "db"}],
            "placement": {
                "clusterAffinity": {"clusterNames": ["member1", "member2"]},
                "spreadConstraints": [{"spreadByField": "cluster", "maxGroups": 1, "minGroups": 1}],
                "replicaScheduling": {"replicaSchedulingType": "Duplicated"},
            },
            "failover": {"application": application},
        },
    }  # fmt: skip
    return run(
        scenario(
            members={"member1": {}, "member2": member2 or {}},
            objects=[*clusters, deployment, policy],
            steps=[{"at": "1m", "members": {"member1": {"workloadsHealthy": False}}}, *steps],
            until="10m",
        )
    )


def tasks_at(at: str, equals: Any) -> Obj:
    query = "[spec.clusters[].name, spec.gracefulEvictionTasks[].[fromCluster, purgeMode, " \
            "gracePeriodSeconds, suppressDeletion, reason]]"  # fmt: skip
    return {"at": at, "expect": [{"object": BINDING, "query": query, "equals": equals}]}


def outcomes(report: Any) -> list[tuple[str, bool, Any]]:
    return [(o.at, o.passed, o.actual) for o in report.outcomes]


def test_gracefully_keeps_the_old_copy_with_the_policys_grace_period() -> None:
    """Until the new copy is healthy (20 s after it is applied) or the grace period ends."""
    report = fleet_with(
        {"decisionConditions": {"tolerationSeconds": 30}, "purgeMode": "Gracefully",
         "gracePeriodSeconds": 120},
        [
            tasks_at("1m39s", [["member1"], None]),
            tasks_at("1m40s", [["member2"], [["member1", "Gracefully", 120, None,
                                              "ApplicationFailure"]]]),
            {"at": "1m41s", "expect": [{"list": {"apiVersion": "work.karmada.io/v1alpha1",
                                                 "kind": "Work"},
                                        "query": "[].metadata.namespace",
                                        "equals": ["karmada-es-member1", "karmada-es-member2"]}]},
            tasks_at("2m41s", [["member2"], None]),
        ],
        member2={"workloadReadyAfter": "20s"},
    )  # fmt: skip
    assert report.failed == 0, outcomes(report)


def test_never_suppresses_the_deletion() -> None:
    report = fleet_with(
        {"decisionConditions": {"tolerationSeconds": 30}, "purgeMode": "Never"},
        [tasks_at("5m", [["member2"], [["member1", "Never", None, True, "ApplicationFailure"]]])],
    )
    assert report.failed == 0, outcomes(report)


def test_healthy_again_in_time_is_not_evicted() -> None:
    report = fleet_with(
        {"decisionConditions": {"tolerationSeconds": 60}, "purgeMode": "Directly"},
        [
            {"at": "1m30s", "members": {"member1": {"workloadsHealthy": True}}},
            {"at": "2m", "members": {"member1": {"workloadsHealthy": False}}},
            tasks_at("3m9s", [["member1"], None]),
            # Purged Directly, and member2's copy healthy at once: the task is retired.
            tasks_at("3m10s", [["member2"], None]),
        ],
    )  # fmt: skip
    assert report.failed == 0, outcomes(report)
