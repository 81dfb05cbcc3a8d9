"""The simulator's contract: settling, timers at exact instants, apply/delete/reject,
simulated members in each mode, and determinism."""

import json
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from fleetwarden.cli import app
from fleetwarden.sim.report import to_json

from .conftest import CLUSTER, ready_of, run, scenario

PUSH = {**CLUSTER, "spec": {"syncMode": "Push", "apiEndpoint": "https://10.0.0.1:6443"}}
EXAMPLES = Path(__file__).parents[2] / "examples" / "scenarios"


def push_cluster(name: str, **extra: Any) -> dict[str, Any]:
    return {**PUSH, "metadata": {"name": name, **extra}}


def outcomes(report: Any) -> list[tuple[str, bool, Any]]:
    return [(o.at, o.passed, o.actual) for o in report.outcomes]


def test_members_without_a_cluster_register_in_pull_mode_and_renew_their_lease() -> None:
    report = run(
        scenario(
            members={"member1": {}},
            steps=[
                {
                    "at": "25s",
                    "expect": [
                        {**ready_of("member1"), "equals": ["True", "ClusterReady"]},
                        {
                            "object": {**CLUSTER, "name": "member1"},
                            "query": "spec.syncMode",
                            "equals": "Pull",
                        },
                        {
                            "object": {
                                "apiVersion": "coordination.k8s.io/v1",
                                "kind": "Lease",
                                "namespace": "karmada-cluster",
                                "name": "member1",
                            },
                            "query": "[spec.renewTime, spec.leaseDurationSeconds, spec.holderIdentity]",
                            # renewed every 40s x 0.25: at 0s, 10s and 20s
                            "equals": ["2025-01-01T00:00:20.000000Z", 40, "member1"],
                        },
                    ],
                }
            ],
        )
    )
    assert report.failed == 0, outcomes(report)


def test_push_member_unreachable_is_not_ready_after_the_failure_threshold() -> None:
    expect = {**ready_of("member1")}
    report = run(
        scenario(
            members={"member1": {}},
            objects=[push_cluster("member1")],
            steps=[
                {
                    "at": "1m",
                    "members": {"member1": {"reachable": False}},
                    "expect": [{**expect, "equals": ["True", "ClusterReady"]}],
                },
                # probed at 1m10s first; the failure threshold (30s) holds Ready until 1m40s
                {"at": "1m39s", "expect": [{**expect, "equals": ["True", "ClusterReady"]}]},
                {"at": "1m40s", "expect": [{**expect, "equals": ["False", "ClusterNotReachable"]}]},
            ],
        )
    )
    assert report.failed == 0, outcomes(report)
    assert {
        "at": "1m40s",
        "object": "Cluster member1",
        "action": "condition",
        "detail": "Ready=False (ClusterNotReachable)",
    } in report.timeline


def test_failure_threshold_is_a_setting() -> None:
    report = run(
        scenario(
            settings={"cluster-failure-threshold": "10s"},
            members={"member1": {}},
            objects=[push_cluster("member1")],
            steps=[
                {"at": "1m", "members": {"member1": {"reachable": False}}},
                {
                    "at": "1m20s",
                    "expect": [{**ready_of("member1"), "equals": ["False", "ClusterNotReachable"]}],
                },
            ],
        )
    )
    assert report.failed == 0, outcomes(report)


def test_ocm_member_renews_its_lease_and_reports_available() -> None:
    managed = {
        "apiVersion": "cluster.open-cluster-management.io/v1",
        "kind": "ManagedCluster",
        "metadata": {"name": "cluster1"},
        "spec": {"hubAcceptsClient": True, "leaseDurationSeconds": 30},
    }
    available = {
        "object": {
            "apiVersion": "cluster.open-cluster-management.io/v1",
            "kind": "ManagedCluster",
            "name": "cluster1",
        },
        "query": "status.conditions[?type=='ManagedClusterConditionAvailable'] | [0].status",
    }
    report = run(
        scenario(
            members={"cluster1": {"allocatable": {"cpu": "8"}}},
            objects=[managed],
            steps=[
                {
                    "at": "1m5s",
                    "expect": [
                        {**available, "equals": "True"},
                        {
                            "object": {
                                "apiVersion": "coordination.k8s.io/v1",
                                "kind": "Lease",
                                "namespace": "cluster1",
                                "name": "managed-cluster-lease",
                            },
                            "query": "spec.renewTime",
                            "equals": "2025-01-01T00:01:00.000000Z",
                        },
                        {
                            **available,
                            "query": "status.allocatable",
                            "equals": {"cpu": "8", "memory": "400Gi", "pods": "1000"},
                        },
                    ],
                },
                {"at": "2m", "members": {"cluster1": {"ready": False}}},
                # health checked at 3m (period 1m), then every 5s; False once 20s have failed
                {"at": "3m15s", "expect": [{**available, "equals": "True"}]},
                {"at": "3m20s", "expect": [{**available, "equals": "False"}]},
            ],
        )
    )
    assert report.failed == 0, outcomes(report)


def test_work_is_applied_and_healthy_after_workload_ready_after() -> None:
    work = {
        "apiVersion": "work.karmada.io/v1alpha1",
        "kind": "Work",
        "metadata": {"name": "nginx", "namespace": "karmada-es-member1"},
        "spec": {
            "workload": {
                "manifests": [
                    {
                        "apiVersion": "apps/v1",
                        "kind": "Deployment",
                        "metadata": {"name": "nginx", "namespace": "default"},
                        "spec": {"replicas": 2},
                    }
                ]
            }
        },
    }
    target = {
        "object": {
            "apiVersion": "work.karmada.io/v1alpha1",
            "kind": "Work",
            "namespace": "karmada-es-member1",
            "name": "nginx",
        }
    }
    # Reflected as upstream's WrappedDeploymentStatus: zero counts are left out (omitempty).
    health = {**target, "query": "status.manifestStatuses[0].[health, status.readyReplicas]"}
    report = run(
        scenario(
            members={"member1": {"workloadReadyAfter": "20s"}},
            steps=[
                {"at": "5s", "apply": [work]},
                {
                    "at": "24s",
                    "expect": [
                        {**health, "equals": ["Unhealthy", None]},
                        {
                            **target,
                            "query": "status.conditions[0].reason",
                            "equals": "AppliedSuccessful",
                        },
                    ],
                },
                {"at": "25s", "expect": [{**health, "equals": ["Healthy", 2]}]},
                {"at": "30s", "members": {"member1": {"workloadsHealthy": False}}},
                {"at": "40s", "expect": [{**health, "equals": ["Unhealthy", None]}]},
            ],
        )
    )
    assert report.failed == 0, outcomes(report)


def test_apply_merges_labels_and_replaces_spec() -> None:
    report = run(
        scenario(
            objects=[push_cluster("member1", labels={"a": "1", "b": "2"})],
            steps=[
                {
                    "at": "1s",
                    "apply": [
                        {
                            **PUSH,
                            "metadata": {"name": "member1", "labels": {"b": None, "c": "3"}},
                            "spec": {"syncMode": "Push", "provider": "aws"},
                        }
                    ],
                    "expect": [
                        {
                            "object": {**CLUSTER, "name": "member1"},
                            "query": "metadata.labels",
                            "equals": {"a": "1", "c": "3"},
                        },
                        {
                            "object": {**CLUSTER, "name": "member1"},
                            "query": "[spec.provider, spec.apiEndpoint]",
                            "equals": ["aws", None],
                        },
                    ],
                },
                {
                    "at": "2s",
                    "delete": [{**CLUSTER, "name": "member1"}],
                    "expect": [{"object": {**CLUSTER, "name": "member1"}, "exists": False}],
                },
            ],
        )
    )
    assert report.failed == 0, outcomes(report)


def test_reject_leaves_the_stored_object_unchanged_and_fails_when_admitted() -> None:
    bad = {**PUSH, "metadata": {"name": "member1"}, "spec": {"syncMode": "Sideways"}}
    good = {**PUSH, "metadata": {"name": "member1"}, "spec": {"syncMode": "Pull"}}
    report = run(
        scenario(
            objects=[push_cluster("member1")],
            steps=[
                {
                    "at": "1s",
                    "reject": [
                        {"object": bad, "reason": "spec.syncMode"},
                        {"object": good, "reason": "anything"},
                    ],
                    "expect": [
                        {
                            "object": {**CLUSTER, "name": "member1"},
                            "query": "spec.syncMode",
                            "equals": "Push",
                        }
                    ],
                }
            ],
        )
    )
    assert [(o.path, o.passed) for o in report.outcomes] == [
        ("spec.steps[0].reject[0]", True),
        ("spec.steps[0].reject[1]", False),
        ("spec.steps[0].expect[0]", True),
    ]


def test_built_in_kinds_are_refused_and_pruned_as_by_the_api_server() -> None:
    config_map = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}}
    deployment = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
                  "spec": {"replicas": -1}}  # fmt: skip
    report = run(
        scenario(
            objects=[{**config_map, "data": {"a": "1"}, "colour": "blue"}],
            steps=[
                {
                    "at": "1s",
                    "reject": [
                        {"object": {**config_map, "data": [1]}, "reason": "ConfigMap.data"},
                        {"object": deployment, "reason": "spec.replicas: Invalid value: -1"},
                    ],
                    "expect": [
                        {
                            "object": {"apiVersion": "v1", "kind": "ConfigMap", "name": "c",
                                       "namespace": "default"},
                            "query": "[data, colour]",
                            "equals": [{"a": "1"}, None],
                        }
                    ],
                }
            ],
        )
    )  # fmt: skip
    assert report.failed == 0, outcomes(report)


def test_an_object_refused_at_t0_makes_the_scenario_invalid(tmp_path: Path) -> None:
    file = tmp_path / "bad.yaml"
    file.write_text(json.dumps(scenario(objects=[{**PUSH, "metadata": {"name": "Member_1"}}])))
    result = CliRunner().invoke(app, ["simulate", str(file)])
    assert result.exit_code == 2
    assert (
        f'{file}: spec.objects[0]: Cluster.cluster.karmada.io "Member_1" is invalid: metadata.name'
        in result.stderr
    )


READER_OF_CONFIG_MAPS = [
    {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
     "metadata": {"name": "cm-writer", "namespace": "default"},
     "rules": [{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["create"]}]},
    {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
     "metadata": {"name": "alice-writes", "namespace": "default"},
     "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "cm-writer"},
     "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": "team-a"}]},
]  # fmt: skip


def test_a_step_sent_as_a_user_is_authorized_by_rbac() -> None:
    config_map = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}}
    secret = {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"}}
    report = run(
        scenario(
            objects=READER_OF_CONFIG_MAPS,
            steps=[
                {
                    "at": "1s",
                    "as": {"user": "alice", "groups": ["team-a"]},
                    "apply": [config_map],
                    "reject": [
                        {"object": secret, "reason": 'User "alice" cannot create resource "secrets"'},
                        {"object": {**config_map, "data": {"a": "b"}},
                         "reason": 'configmaps "c" is forbidden: User "alice" cannot update'},
                    ],
                }
            ],
            expect=[{"object": {"apiVersion": "v1", "kind": "ConfigMap", "name": "c",
                                "namespace": "default"}, "exists": True}],
        )
    )  # fmt: skip
    assert report.failed == 0, outcomes(report)


def test_a_step_whose_sender_may_not_do_it_makes_the_scenario_invalid(tmp_path: Path) -> None:
    file = tmp_path / "forbidden.yaml"
    step = {"at": "1s", "as": {"user": "bob"},
            "delete": [{"apiVersion": "v1", "kind": "Namespace", "name": "kube-public"}]}  # fmt: skip
    file.write_text(json.dumps(scenario(steps=[step])))
    result = CliRunner().invoke(app, ["simulate", str(file)])
    assert result.exit_code == 2
    assert result.stderr.strip() == (
        f'error: {file}: spec.steps[0].delete[0]: namespaces "kube-public" is forbidden: User "bob" '
        'cannot delete resource "namespaces" in API group "" in the namespace "kube-public"'
    )


def test_exit_status_one_when_an_expectation_fails(tmp_path: Path) -> None:
    file = tmp_path / "fail.yaml"
    file.write_text(
        json.dumps(
            scenario(
                objects=[push_cluster("member1")],
                expect=[{"object": {**CLUSTER, "name": "member1"}, "exists": False}],
            )
        )
    )
    result = CliRunner().invoke(app, ["simulate", str(file), "-o", "json"])
    assert result.exit_code == 1
    doc = json.loads(result.stdout)
    assert (doc["passed"], doc["failed"], doc["results"][0]["actual"]) == (0, 1, True)


def test_same_scenario_gives_byte_identical_json() -> None:
    doc = scenario(
        members={"member1": {}, "member2": {"workloadReadyAfter": "20s"}},
        objects=[push_cluster("member2")],
        steps=[{"at": "1m", "members": {"member2": {"reachable": False}}}],
        until="5m",
    )
    first, second = to_json(run(doc), dump=True), to_json(run(doc), dump=True)
    assert first == second
    assert '"uid"' in first


def test_examples_pass() -> None:
    for path in sorted(EXAMPLES.glob("*.yaml")):
        result = CliRunner().invoke(app, ["simulate", str(path)])
        assert result.exit_code == 0, (path.name, result.stdout, result.stderr)


def test_a_query_that_fails_on_the_state_fails_its_expectation(tmp_path: Path) -> None:
    file = tmp_path / "query.yaml"
    expect = {"object": {**CLUSTER, "name": "member1"}, "query": "sort(spec.absent)"}
    file.write_text(
        json.dumps(scenario(objects=[push_cluster("member1")], expect=[{**expect, "equals": []}]))
    )
    result = CliRunner().invoke(app, ["simulate", str(file), "-o", "json"])
    assert result.exit_code == 1, result.output
    actual = json.loads(result.stdout)["results"][0]["actual"]
    assert actual.startswith("query error: In function sort(), invalid type for value: None")


def test_a_step_changing_a_node_the_member_lacks_makes_the_scenario_invalid(
    tmp_path: Path,
) -> None:
    file = tmp_path / "bad-node.yaml"
    doc = scenario(
        members={"m1": {"nodes": [{"name": "n", "count": 2}]}},
        steps=[{"at": "1m", "members": {"m1": {"nodes": {"n-7": {"ready": False}}}}}],
    )
    file.write_text(json.dumps(doc))
    result = CliRunner().invoke(app, ["simulate", str(file)])
    assert result.exit_code == 2
    assert f"{file}: spec.steps[0].members.m1.nodes.n-7: not a node of this member" in result.stderr


def _crd(kind: str, plural: str, scope: str) -> dict[str, Any]:
    return {
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{plural}.example.io"},
        "spec": {"group": "example.io", "scope": scope,
                 "names": {"plural": plural, "singular": kind.lower(), "kind": kind},
                 "versions": [{"name": "v1", "served": True, "storage": True, "schema": {
                     "openAPIV3Schema": {"type": "object",
                                         "x-kubernetes-preserve-unknown-fields": True}}}]},
    }  # fmt: skip


def test_a_scenarios_crds_give_their_kinds_scope_and_plural() -> None:
    """A cluster-scoped custom resource is bound by a ClusterResourceBinding, as Karmada
    binds it, and reaches the member cluster-scoped; the members report the plural the
    CRD names (no guess), so the scheduler's APIEnablement filter lets it through."""
    widgets = {"apiVersion": "example.io/v1", "kind": "Widget"}
    geese = {"apiVersion": "example.io/v1", "kind": "Goose"}
    crb = {"apiVersion": "work.karmada.io/v1alpha2", "kind": "ClusterResourceBinding"}
    rb = {"apiVersion": "work.karmada.io/v1alpha2", "kind": "ResourceBinding"}
    report = run(scenario(
        members={"member1": {"nodes": [{"name": "node", "count": 1}]}},
        objects=[
            _crd("Widget", "widgets", "Cluster"), _crd("Goose", "geese", "Namespaced"),
            {**widgets, "metadata": {"name": "w1"}, "spec": {"size": 3}},
            {**geese, "metadata": {"name": "g1"}, "spec": {"honk": True}},
            {"apiVersion": "policy.karmada.io/v1alpha1", "kind": "ClusterPropagationPolicy",
             "metadata": {"name": "custom"},
             "spec": {"resourceSelectors": [widgets, geese],
                      "placement": {"clusterAffinity": {"clusterNames": ["member1"]}}}},
        ],
        steps=[{"at": "1m", "expect": [
            {"object": {**crb, "name": "w1-widget"}, "query": "spec.clusters[].name",
             "equals": ["member1"]},
            {"list": {**rb, "namespace": "default"}, "query": "[].metadata.name",
             "equals": ["g1-goose"]},
            {"object": {**widgets, "name": "w1", "member": "member1"},
             "query": "[metadata.namespace, spec.size]", "equals": [None, 3]},
            {"object": {**CLUSTER, "name": "member1"},
             "query": "status.apiEnablements[?groupVersion=='example.io/v1'] | [0].resources[].name",
             "equals": ["geese", "widgets"]},
        ]}],
        until="2m",
    ))  # fmt: skip
    assert [(o.passed, o.actual) for o in report.outcomes] == [
        (True, ["member1"]), (True, ["g1-goose"]), (True, [None, 3]),
        (True, ["geese", "widgets"]),
    ]  # fmt: skip
