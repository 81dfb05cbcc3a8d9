"""Admission of the Karmada kinds, case by case as upstream's own tests and sources have them.

Upstream: pkg/apis/cluster/{mutation,validation}, pkg/registry/cluster/strategy.go,
pkg/webhook/*, pkg/util/validation, charts/karmada/_crds/bases.
"""

from __future__ import annotations

import copy
from datetime import UTC, datetime
from typing import Any

import pytest

from fleetwarden.admission import AdmissionConfig, default_chain
from fleetwarden.api.errors import Invalid
from fleetwarden.api.meta import Resource

NOW = datetime(2025, 3, 4, 5, 6, 7, tzinfo=UTC)
CHAIN = default_chain()
MAX_INT64 = "9223372036854775807"
PP_ID = "propagationpolicy.karmada.io/permanent-id"
CPP_ID = "clusterpropagationpolicy.karmada.io/permanent-id"
LABEL_KEY_ERROR = (
    "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end "
    "with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for "
    "validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
)
LABEL_VALUE_ERROR = (
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or "
    "'.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or "
    "'my_value',  or '12345', regex used for validation is "
    "'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
)


def admit(obj: dict[str, Any], old: Resource | None = None, **config: Any) -> dict[str, Any]:
    return CHAIN.admit(obj, old, now=NOW, config=AdmissionConfig(**config)).to_dict()


def refusal(obj: dict[str, Any], old: Resource | None = None, **config: Any) -> Invalid:
    with pytest.raises(Invalid) as caught:
        CHAIN.admit(obj, old, now=NOW, config=AdmissionConfig(**config))
    return caught.value


def field_errors(obj: dict[str, Any], old: Resource | None = None, **config: Any) -> list[str]:
    return [str(e) for e in refusal(obj, old, **config).errors]


def stored(obj: dict[str, Any], **config: Any) -> Resource:
    return CHAIN.admit(obj, now=NOW, config=AdmissionConfig(**config))


# --- Cluster ----------------------------------------------------------------------------------


def cluster(name: str = "member1", **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "cluster.karmada.io/v1alpha1",
        "kind": "Cluster",
        "metadata": {"name": name},
        "spec": {"syncMode": "Push", **spec},
    }


def test_cluster_is_admitted_with_default_resource_models():
    models = admit(cluster(apiEndpoint="https://172.18.0.3:6443"))["spec"]["resourceModels"]
    assert [m["grade"] for m in models] == list(range(9))
    assert models[0]["ranges"] == [
        {"name": "cpu", "min": "0", "max": "1"},
        {"name": "memory", "min": "0", "max": "4Gi"},
    ]
    assert models[7]["ranges"][1] == {"name": "memory", "min": "512Gi", "max": "1Ti"}
    assert models[8]["ranges"] == [
        {"name": "cpu", "min": "128", "max": MAX_INT64},
        {"name": "memory", "min": "1Ti", "max": MAX_INT64},
    ]


def test_cluster_update_keeps_an_empty_resource_model_list():
    old = stored(cluster())
    update = cluster()
    assert "resourceModels" not in admit(update, old)["spec"]


def cpu_model(grade: int, low: Any, high: Any) -> dict[str, Any]:
    return {"grade": grade, "ranges": [{"name": "cpu", "min": low, "max": high}]}


@pytest.mark.parametrize(
    ("models", "want"),
    [
        pytest.param(
            [cpu_model(2, "2", MAX_INT64), cpu_model(1, "0", "2")],
            [cpu_model(1, "0", "2"), cpu_model(2, "2", MAX_INT64)],
            id="sort models",
        ),
        pytest.param(
            [cpu_model(1, "1", MAX_INT64)], [cpu_model(1, "0", MAX_INT64)], id="start with 0"
        ),
        pytest.param(
            [cpu_model(1, "0", "2")], [cpu_model(1, "0", MAX_INT64)], id="end with MaxInt64"
        ),
    ],
)
def test_cluster_resource_models_are_standardized(models, want):
    assert admit(cluster(resourceModels=models))["spec"]["resourceModels"] == want


@pytest.mark.parametrize(
    ("models", "message"),
    [
        (
            [cpu_model(1, "0", "2"), cpu_model(1, "2", "4")],
            "The grade of each models should not be the same",
        ),
        (
            [
                cpu_model(1, "0", "2"),
                {
                    "grade": 2,
                    "ranges": [
                        {"name": "cpu", "min": "2", "max": "4"},
                        {"name": "memory", "min": "2", "max": "4"},
                    ],
                },
            ],
            "The number of resource types should be the same",
        ),
        (
            [cpu_model(1, "0", "2"), cpu_model(2, "2", "1"), cpu_model(3, "4", "8")],
            "The max value of each resource must be greater than the min value",
        ),
        (
            [
                cpu_model(1, "0", "2"),
                {"grade": 2, "ranges": [{"name": "memory", "min": "2", "max": "4"}]},
            ],
            "The resource types of each models should be the same",
        ),
        (
            [cpu_model(1, "0", "2"), cpu_model(2, "1", "4")],
            "Model intervals for resources must be contiguous and non-overlapping",
        ),
    ],
)
def test_cluster_resource_model_rules(models, message):
    (error,) = field_errors(cluster(resourceModels=models))
    assert error.startswith("spec.resourceModels: Invalid value: [{")
    assert error.endswith("}]: " + message)


def test_cluster_resource_model_quantity_must_parse():
    models = [cpu_model(1, "0", "2"), cpu_model(2, "2x", "4")]
    assert field_errors(cluster(resourceModels=models)) == [
        'spec.resourceModels[1].ranges[0].min: Invalid value: "2x": quantities must match the '
        "regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
    ]


@pytest.mark.parametrize(
    ("name", "errors"),
    [
        ("a" * 48, []),
        (
            "a" * 49,
            [f'metadata.name: Invalid value: "{"a" * 49}": must be no more than 48 characters'],
        ),
        (
            "Member1",
            [
                'metadata.name: Invalid value: "Member1": a lowercase RFC 1123 label must consist of '
                "lower case alphanumeric characters or '-', and must start and end with an "
                "alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation "
                "is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
            ],
        ),
        ("member.one", ['metadata.name: Invalid value: "member.one": must not contain dots']),
    ],
)
def test_cluster_name(name, errors):
    obj = cluster(name)
    if errors:
        assert field_errors(obj) == errors
    else:
        assert admit(obj)["metadata"]["name"] == name


@pytest.mark.parametrize(
    ("spec", "errors"),
    [
        (
            {"syncMode": ""},
            [
                "spec.syncMode: Required value",
                'spec.syncMode: Unsupported value: "": supported values: "Pull", "Push"',
            ],
        ),
        (
            {"syncMode": "Both"},
            ['spec.syncMode: Unsupported value: "Both": supported values: "Pull", "Push"'],
        ),
        (
            {"secretRef": {}},
            ["spec.secretRef.namespace: Required value", "spec.secretRef.name: Required value"],
        ),
        (
            {"impersonatorSecretRef": {"namespace": "karmada-cluster"}},
            ["spec.impersonatorSecretRef.name: Required value"],
        ),
        (
            {"provider": "Invalid Provider"},
            [f'spec.provider: Invalid value: "Invalid Provider": {LABEL_VALUE_ERROR}'],
        ),
        (
            {"region": "Invalid Region"},
            [f'spec.region: Invalid value: "Invalid Region": {LABEL_VALUE_ERROR}'],
        ),
        (
            {"zone": "Invalid Zone"},
            [f'spec.Zone: Invalid value: "Invalid Zone": {LABEL_VALUE_ERROR}'],
        ),
        (
            {"zones": ["Invalid Zone", "zone2"]},
            [f'spec.Zones: Invalid value: "Invalid Zone": {LABEL_VALUE_ERROR}'],
        ),
    ],
)
def test_cluster_spec_rules(spec, errors):
    assert field_errors(cluster(**spec)) == errors


def test_cluster_zone_and_zones_cannot_coexist():
    (error,) = field_errors(cluster(zone="zone1", zones=["zone2"]))
    assert error.startswith('spec.spec: Invalid value: {"syncMode":"Push"')
    assert error.endswith(": Zone and Zones cannot co-exist")


def test_cluster_zone_moves_to_zones():
    spec = admit(cluster(zone="zone1"))["spec"]
    assert spec["zones"] == ["zone1"]
    assert "zone" not in spec


FORM = "; desired format: hostname, hostname:port, IP or IP:port"


@pytest.mark.parametrize(
    ("endpoint", "errors"),
    [
        ("https://172.18.0.3:6443", []),
        ("https://[fd00::3]:6443", []),
        (
            "172.18.0.3:6443",
            [
                'spec.apiEndpoint: Invalid value: "172.18.0.3:6443": apiEndpoint must be a valid URL: '
                'parse "172.18.0.3:6443": first path segment in URL cannot contain colon' + FORM
            ],
        ),
        ("member1:6443", ['spec.apiEndpoint: Invalid value: "": host must be provided' + FORM]),
        ("^Invalid", ['spec.apiEndpoint: Invalid value: "": host must be provided' + FORM]),
        (
            "https://^Invalid",
            [
                'spec.apiEndpoint: Invalid value: "https://^Invalid": apiEndpoint must be a valid '
                'URL: parse "https://^Invalid": invalid character "^" in host name' + FORM
            ],
        ),
        (
            "https://member1:port",
            [
                'spec.apiEndpoint: Invalid value: "https://member1:port": apiEndpoint must be a '
                'valid URL: parse "https://member1:port": invalid port ":port" after host' + FORM
            ],
        ),
        (
            "https://admin@member1",
            [
                'spec.apiEndpoint: Invalid value: "admin": user information is not permitted in the URL'
            ],
        ),
        (
            "https://member1#top",
            ['spec.apiEndpoint: Invalid value: "top": fragments are not permitted in the URL'],
        ),
        (
            "https://member1?insecure=true",
            [
                'spec.apiEndpoint: Invalid value: "insecure=true": query parameters are not permitted in the URL'
            ],
        ),
    ],
)
def test_cluster_api_endpoint(endpoint, errors):
    obj = cluster(apiEndpoint=endpoint)
    if errors:
        assert field_errors(obj) == errors
    else:
        assert admit(obj)["spec"]["apiEndpoint"] == endpoint


@pytest.mark.parametrize(
    ("proxy", "errors"),
    [
        ("socks5://proxy:1080", []),
        (
            "^Invalid",
            [
                'spec.proxyURL: Invalid value: "^Invalid": unsupported scheme "", must be http, https, or socks5'
            ],
        ),
        (
            "http://proxy:x",
            [
                'spec.proxyURL: Invalid value: "http://proxy:x": apiEndpoint must be a valid URL: '
                'parse "http://proxy:x": invalid port ":x" after host'
            ],
        ),
    ],
)
def test_cluster_proxy_url(proxy, errors):
    obj = cluster(proxyURL=proxy)
    if errors:
        assert field_errors(obj) == errors
    else:
        assert admit(obj)["spec"]["proxyURL"] == proxy


@pytest.mark.parametrize(
    ("taints", "errors"),
    [
        ([{"key": "foo", "value": "bar", "effect": "NoSchedule"}], []),
        (
            [{"key": "foo", "value": "bar", "effect": "^Invalid"}],
            [
                'spec.taints[0].effect: Unsupported value: "^Invalid": supported values: "NoSchedule", "NoExecute"'
            ],
        ),
        (
            [{"key": "foo", "effect": "PreferNoSchedule"}],
            [
                'spec.taints[0].effect: Unsupported value: "PreferNoSchedule": supported values: "NoSchedule", "NoExecute"'
            ],
        ),
        ([{"key": "foo", "effect": ""}], ["spec.taints[0].effect: Required value"]),
        (
            [{"key": "-foo", "effect": "NoSchedule"}],
            [f'spec.taints[0].key: Invalid value: "-foo": {LABEL_KEY_ERROR}'],
        ),
        (
            [{"key": "foo", "value": "a b", "effect": "NoSchedule"}],
            [f'spec.taints[0].value: Invalid value: "a b": {LABEL_VALUE_ERROR}'],
        ),
        (
            [
                {"key": "foo", "effect": "NoSchedule"},
                {"key": "foo", "value": "x", "effect": "NoSchedule"},
            ],
            [
                'spec.taints[1]: Duplicate value: {"key":"foo","value":"x","effect":"NoSchedule"}: '
                "taints must be unique by key and effect pair"
            ],
        ),
        ([{"key": "foo", "effect": "NoSchedule"}, {"key": "foo", "effect": "NoExecute"}], []),
    ],
)
def test_cluster_taints(taints, errors):
    obj = cluster(taints=taints)
    if errors:
        assert field_errors(obj) == errors
    else:
        admit(obj)


def test_cluster_no_execute_taints_get_time_added():
    added = "2024-12-01T00:00:00Z"
    taints = admit(
        cluster(
            taints=[
                {"key": "cluster.karmada.io/not-ready", "effect": "NoSchedule"},
                {"key": "cluster.karmada.io/not-ready", "effect": "NoExecute"},
                {
                    "key": "cluster.karmada.io/unreachable",
                    "effect": "NoExecute",
                    "timeAdded": added,
                },
            ]
        )
    )["spec"]["taints"]
    assert [t.get("timeAdded") for t in taints] == [None, "2025-03-04T05:06:07Z", added]


# --- PropagationPolicy and ClusterPropagationPolicy -------------------------------------------


def policy(kind: str = "PropagationPolicy", **spec: Any) -> dict[str, Any]:
    metadata: dict[str, Any] = {"name": "nginx-propagation"}
    if kind == "PropagationPolicy":
        metadata["namespace"] = "default"
    selector = {"apiVersion": "apps/v1", "kind": "Deployment", "name": "nginx"}
    return {
        "apiVersion": "policy.karmada.io/v1alpha1",
        "kind": kind,
        "metadata": metadata,
        "spec": {"resourceSelectors": [selector], **spec},
    }


def placement(**fields: Any) -> dict[str, Any]:
    return policy(placement=fields)


def test_policy_schema_defaults():
    spec = admit(policy())["spec"]
    assert spec["conflictResolution"] == "Abort"
    assert spec["preemption"] == "Never"
    assert spec["priority"] == 0
    assert spec["schedulerName"] == "default-scheduler"
    assert spec["placement"] == {}


def test_policy_keeps_what_is_given():
    given = {
        "conflictResolution": "Overwrite",
        "preemption": "Always",
        "priority": 5,
        "schedulerName": "my-scheduler",
    }
    spec = admit(policy(**given))["spec"]
    assert {key: spec[key] for key in given} == given


def test_policy_empty_omitempty_fields_are_dropped_and_defaulted():
    """The webhook's Go round trip drops empty strings; the schema defaults fill them again."""
    spec = admit(policy(conflictResolution="", activationPreference=""))["spec"]
    assert spec["conflictResolution"] == "Abort"
    assert "activationPreference" not in spec


def test_policy_mutating_webhook_full_coverage():
    """TestMutatingAdmission_Handle_FullCoverage."""
    obj = policy(
        placement={
            "spreadConstraints": [{"spreadByLabel": "", "spreadByField": "", "minGroups": 0}],
            "replicaScheduling": {"replicaSchedulingType": "Divided"},
        },
        propagateDeps=False,
        failover={"application": {"decisionConditions": {}, "purgeMode": "Gracefully"}},
    )
    obj["spec"]["resourceSelectors"] = [
        {"namespace": "", "kind": "ServiceImport", "apiVersion": "multicluster.x-k8s.io/v1alpha1"},
        {"namespace": "", "apiVersion": "v1", "kind": "Service"},
    ]
    got = admit(obj)
    spec = got["spec"]
    assert spec["placement"]["spreadConstraints"] == [{"spreadByField": "cluster", "minGroups": 1}]
    assert spec["placement"]["replicaScheduling"] == {
        "replicaSchedulingType": "Divided",
        "replicaDivisionPreference": "Weighted",
    }
    assert spec["propagateDeps"] is True
    assert [s["namespace"] for s in spec["resourceSelectors"]] == ["default", "default"]
    assert spec["failover"]["application"] == {
        "decisionConditions": {"tolerationSeconds": 300},
        "purgeMode": "Gracefully",
        "gracePeriodSeconds": 600,
    }
    assert got["metadata"]["finalizers"] == ["karmada.io/propagation-policy-controller"]
    assert set(got["metadata"]["labels"]) == {PP_ID}


@pytest.mark.parametrize(
    ("scheduling", "want"),
    [
        ({}, {"replicaSchedulingType": "Divided", "replicaDivisionPreference": "Weighted"}),
        (
            {"replicaDivisionPreference": "Aggregated"},
            {"replicaSchedulingType": "Divided", "replicaDivisionPreference": "Aggregated"},
        ),
        ({"replicaSchedulingType": "Duplicated"}, {"replicaSchedulingType": "Duplicated"}),
    ],
)
def test_policy_replica_scheduling_defaults(scheduling, want):
    assert (
        admit(placement(replicaScheduling=scheduling))["spec"]["placement"]["replicaScheduling"]
        == want
    )


@pytest.mark.parametrize(
    ("failover", "want"),
    [
        (
            {"cluster": {}},
            {"cluster": {"purgeMode": "Gracefully"}},
        ),
        (
            {
                "application": {
                    "decisionConditions": {"tolerationSeconds": 0},
                    "purgeMode": "Directly",
                }
            },
            {
                "application": {
                    "decisionConditions": {"tolerationSeconds": 0},
                    "purgeMode": "Directly",
                }
            },
        ),
        (
            {"application": {"decisionConditions": {}, "gracePeriodSeconds": 30}},
            {
                "application": {
                    "decisionConditions": {"tolerationSeconds": 300},
                    "purgeMode": "Gracefully",
                    "gracePeriodSeconds": 30,
                }
            },
        ),
    ],
)
def test_policy_failover_defaults(failover, want):
    assert admit(policy(failover=failover, propagateDeps=True))["spec"]["failover"] == want


def test_permanent_id_is_stamped_on_create_and_is_deterministic():
    obj = policy()
    obj["metadata"]["labels"] = {PP_ID: "chosen-by-user", "app": "nginx"}
    first, second = admit(obj), admit(obj)
    labels = first["metadata"]["labels"]
    assert labels["app"] == "nginx"
    assert labels[PP_ID] != "chosen-by-user"
    assert labels == second["metadata"]["labels"]


def test_permanent_id_and_finalizer_are_left_alone_on_update():
    old = stored(policy())
    update = old.to_dict()
    update["metadata"]["finalizers"] = []
    got = admit(update, old)
    assert got["metadata"]["labels"] == old.metadata.labels
    assert got["metadata"]["finalizers"] == []


def test_cluster_propagation_policy_mutation():
    got = admit(policy("ClusterPropagationPolicy"))
    assert got["metadata"]["finalizers"] == ["karmada.io/cluster-propagation-policy-controller"]
    assert set(got["metadata"]["labels"]) == {CPP_ID}
    assert "namespace" not in got["spec"]["resourceSelectors"][0]


def toleration(key: str, seconds: int, **extra: Any) -> dict[str, Any]:
    return {
        "key": key,
        "operator": "Exists",
        "effect": "NoExecute",
        "tolerationSeconds": seconds,
        **extra,
    }


NOT_READY, UNREACHABLE = "cluster.karmada.io/not-ready", "cluster.karmada.io/unreachable"


@pytest.mark.parametrize("kind", ["PropagationPolicy", "ClusterPropagationPolicy"])
@pytest.mark.parametrize(
    ("config", "given", "want"),
    [
        pytest.param({}, None, None, id="today: none added"),
        pytest.param(
            {
                "default_not_ready_toleration_seconds": 300,
                "default_unreachable_toleration_seconds": 300,
            },
            None,
            [toleration(NOT_READY, 300), toleration(UNREACHABLE, 300)],
            id="v1.13: both added",
        ),
        pytest.param(
            {"default_unreachable_toleration_seconds": 60},
            None,
            [toleration(UNREACHABLE, 60)],
            id="only the one configured",
        ),
        pytest.param(
            {
                "default_not_ready_toleration_seconds": 300,
                "default_unreachable_toleration_seconds": 300,
            },
            [toleration(NOT_READY, 30)],
            [toleration(NOT_READY, 30), toleration(UNREACHABLE, 300)],
            id="the policy's own toleration wins",
        ),
        pytest.param(
            {"default_not_ready_toleration_seconds": 300},
            [{"key": NOT_READY, "effect": "NoExecute"}],
            [{"key": NOT_READY, "effect": "NoExecute"}, toleration(NOT_READY, 300)],
            id="only the very same toleration counts (MatchToleration)",
        ),
    ],
)
def test_default_tolerations_of_karmada_1_13(kind, config, given, want):
    obj = policy(kind, placement={"clusterTolerations": given} if given else {})
    got = admit(obj, **config)["spec"]["placement"]
    assert got.get("clusterTolerations") == want


@pytest.mark.parametrize(
    ("spec", "errors"),
    [
        ({"resourceSelectors": None}, ["spec.resourceSelectors: Required value"]),
        (
            {"resourceSelectors": []},
            [
                "spec.resourceSelectors: Invalid value: 0: spec.resourceSelectors in body should have at least 1 items"
            ],
        ),
        (
            {"preemption": "Sometimes"},
            [
                'spec.preemption: Unsupported value: "Sometimes": supported values: "Always", "Never"'
            ],
        ),
        (
            {"conflictResolution": "Merge"},
            [
                'spec.conflictResolution: Unsupported value: "Merge": supported values: "Abort", "Overwrite"'
            ],
        ),
        (
            {"activationPreference": "Eager"},
            ['spec.activationPreference: Unsupported value: "Eager": supported values: "Lazy"'],
        ),
        (
            {"placement": {"spreadConstraints": [{"spreadByField": "country"}]}},
            [
                'spec.placement.spreadConstraints[0].spreadByField: Unsupported value: "country": '
                'supported values: "cluster", "region", "zone", "provider"'
            ],
        ),
        (
            {"placement": {"clusterAffinities": [{"affinityName": "a" * 33}]}},
            [
                "spec.placement.clusterAffinities[0].affinityName: Too long: may not be more than 32 bytes"
            ],
        ),
        (
            {"placement": {"clusterAffinities": [{"affinityName": ""}]}},
            [
                'spec.placement.clusterAffinities[0].affinityName: Invalid value: "": '
                "spec.placement.clusterAffinities[0].affinityName in body should be at least 1 chars long"
            ],
        ),
        (
            {
                "placement": {
                    "replicaScheduling": {
                        "weightPreference": {
                            "staticWeightList": [{"targetCluster": {}, "weight": 0}]
                        }
                    }
                }
            },
            [
                "spec.placement.replicaScheduling.weightPreference.staticWeightList[0].weight: Invalid "
                "value: 0: spec.placement.replicaScheduling.weightPreference.staticWeightList[0].weight "
                "in body should be greater than or equal to 1"
            ],
        ),
        (
            {"failover": {"cluster": {"statePreservation": {}}}},
            ["spec.failover.cluster.statePreservation.rules: Required value"],
        ),
        (
            {"failover": {"cluster": {"purgeMode": "Never"}}},
            [
                'spec.failover.cluster.purgeMode: Unsupported value: "Never": supported values: "Directly", "Gracefully"'
            ],
        ),
        (
            {
                "schedulePriority": {
                    "priorityClassSource": "PodPriorityClass",
                    "priorityClassName": "high",
                }
            },
            [
                'spec.schedulePriority.priorityClassSource: Unsupported value: "PodPriorityClass": supported values: "KubePriorityClass"'
            ],
        ),
    ],
)
def test_policy_schema(spec, errors):
    obj = policy(**spec)
    obj["spec"] = {k: v for k, v in obj["spec"].items() if v is not None}
    assert field_errors(obj) == errors


def test_policy_failover_decision_conditions_come_from_the_go_round_trip():
    spec = admit(policy(failover={"application": {}}, propagateDeps=True))["spec"]
    assert spec["failover"]["application"]["decisionConditions"] == {"tolerationSeconds": 300}


def test_policy_without_spec():
    obj = policy()
    del obj["spec"]
    assert field_errors(obj) == ["spec.resourceSelectors: Required value"]


def test_policy_selector_without_api_version_passes_through_the_go_types():
    """The mutating webhook's patch writes every field without omitempty, so the schema's
    `required` is met by an empty apiVersion."""
    obj = policy()
    obj["spec"]["resourceSelectors"] = [{"kind": "Deployment"}]
    assert admit(obj)["spec"]["resourceSelectors"] == [
        {"apiVersion": "", "kind": "Deployment", "namespace": "default"}
    ]


FIELD_SELECTOR = "spec.placement.clusterAffinity.fieldSelector"


def field_selector(key: str, operator: str) -> dict[str, Any]:
    return {
        "fieldSelector": {
            "matchExpressions": [{"key": key, "operator": operator, "values": ["fooCloud"]}]
        }
    }


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        (
            {"placement": {"clusterAffinity": field_selector("foo", "In")}},
            f'{FIELD_SELECTOR}: Invalid value: {{"matchExpressions":[{{"key":"foo","operator":"In",'
            '"values":["fooCloud"]}]}: unsupported key "foo", must be provider, region, or zone',
        ),
        (
            {"placement": {"clusterAffinity": field_selector("provider", "Exists")}},
            f'{FIELD_SELECTOR}: Invalid value: {{"matchExpressions":[{{"key":"provider","operator":"Exists",'
            '"values":["fooCloud"]}]}: unsupported operator "Exists", must be In or NotIn',
        ),
        (
            {
                "placement": {
                    "clusterAffinities": [{"affinityName": "group1", **field_selector("foo", "In")}]
                }
            },
            'spec.placement.clusterAffinities[0].fieldSelector: Invalid value: {"matchExpressions":[{"key":'
            '"foo","operator":"In","values":["fooCloud"]}]}: unsupported key "foo", must be provider, region, or zone',
        ),
        (
            {
                "placement": {
                    "spreadConstraints": [{"spreadByField": "cluster", "spreadByLabel": "foo"}]
                }
            },
            'spec.placement.spreadConstraints[0]: Invalid value: {"spreadByField":"cluster","spreadByLabel":"foo",'
            '"minGroups":1}: spreadByLabel should not co-exist with spreadByField',
        ),
        (
            {"placement": {"spreadConstraints": [{"maxGroups": 1, "minGroups": 2}]}},
            'spec.placement.spreadConstraints[0]: Invalid value: {"spreadByField":"cluster","maxGroups":1,'
            '"minGroups":2}: maxGroups lower than minGroups is not allowed',
        ),
        (
            {"placement": {"spreadConstraints": [{"maxGroups": -1, "minGroups": 1}]}},
            'spec.placement.spreadConstraints[0]: Invalid value: {"spreadByField":"cluster","maxGroups":-1,'
            '"minGroups":1}: maxGroups lower than 0 is not allowed',
        ),
        (
            {
                "placement": {
                    "spreadConstraints": [{"spreadByLabel": "net", "maxGroups": 2, "minGroups": -2}]
                }
            },
            'spec.placement.spreadConstraints[0]: Invalid value: {"spreadByLabel":"net","maxGroups":2,'
            '"minGroups":-2}: minGroups lower than 0 is not allowed',
        ),
        (
            {
                "preemption": "Always",
                "resourceSelectors": [{"apiVersion": "apps/v1", "kind": "Deployment"}],
            },
            'spec.resourceSelectors[0].name: Invalid value: "": name cannot be empty if preemption is '
            "Always, the empty name may cause unexpected resources preemption",
        ),
        (
            {
                "suspension": {
                    "dispatching": True,
                    "dispatchingOnClusters": {"clusterNames": ["member1"]},
                }
            },
            'spec.suspension.suspension: Invalid value: {"dispatching":true,"dispatchingOnClusters":'
            '{"clusterNames":["member1"]}}: suspension dispatching cannot co-exist with '
            "dispatchingOnClusters.clusterNames",
        ),
        (
            {"placement": {"clusterTolerations": [{"key": "k", "operator": "Lt", "value": "5"}]}},
            'spec.placement.clusterTolerations[0].operator: Unsupported value: "Lt": supported values: '
            '"", "Exists", "Equal"',
        ),
        (
            {
                "failover": {"application": {"decisionConditions": {"tolerationSeconds": -100}}},
                "propagateDeps": True,
            },
            "spec.failover.application.decisionConditions.tolerationSeconds: Invalid value: -100: must be "
            "greater than or equal to 0",
        ),
        (
            {
                "failover": {
                    "application": {
                        "decisionConditions": {},
                        "purgeMode": "Never",
                        "gracePeriodSeconds": 100,
                    }
                },
                "propagateDeps": True,
            },
            "spec.failover.application.gracePeriodSeconds: Invalid value: 100: only takes effect when "
            "purgeMode is gracefully",
        ),
        (
            {
                "failover": {"application": {"decisionConditions": {}, "gracePeriodSeconds": -100}},
                "propagateDeps": True,
            },
            "spec.failover.application.gracePeriodSeconds: Invalid value: -100: must be greater than 0",
        ),
        (
            {"failover": {"application": {"decisionConditions": {}}}},
            "spec.propagateDeps: Invalid value: false: application failover is set, propagateDeps must be true",
        ),
        (
            {
                "failover": {
                    "application": {
                        "decisionConditions": {},
                        "statePreservation": {
                            "rules": [{"aliasLabelName": "-invalid-label", "jsonPath": "{.x}"}]
                        },
                    }
                },
                "propagateDeps": True,
            },
            "spec.failover.application.statePreservation.rules[0].aliasLabelName: Invalid value: "
            f'"-invalid-label": {LABEL_KEY_ERROR}',
        ),
        (
            {
                "failover": {
                    "cluster": {
                        "statePreservation": {
                            "rules": [
                                {"aliasLabelName": "-invalid-cluster-label", "jsonPath": "{.x}"}
                            ]
                        }
                    }
                }
            },
            "spec.failover.cluster.statePreservation.rules[0].aliasLabelName: Invalid value: "
            f'"-invalid-cluster-label": {LABEL_KEY_ERROR}',
        ),
        (
            {
                "placement": {
                    "workloadAffinity": {
                        "affinity": {"groupByLabelKey": "app.group"},
                        "antiAffinity": {"groupByLabelKey": "app.group"},
                    }
                }
            },
            'spec.placement.workloadAffinity: Invalid value: {"affinity":{"groupByLabelKey":"app.group"},'
            '"antiAffinity":{"groupByLabelKey":"app.group"}}: affinity and antiAffinity must not use the '
            "same groupByLabelKey",
        ),
        (
            {"placement": {"workloadAffinity": {"affinity": {"groupByLabelKey": "-bad"}}}},
            f'spec.placement.workloadAffinity.affinity.groupByLabelKey: Invalid value: "-bad": {LABEL_KEY_ERROR}',
        ),
    ],
)
def test_policy_validating_webhook(spec, message):
    assert field_errors(policy(**spec)) == [message]


def test_policy_selector_namespace_must_be_the_policys():
    obj = policy()
    obj["spec"]["resourceSelectors"][0]["namespace"] = "ns-2"
    assert field_errors(obj) == [
        'spec.resourceSelectors[0].namespace: Invalid value: "ns-2": namespace of resource selector '
        "must be the same as the namespace of the policy"
    ]


def test_cluster_propagation_policy_selects_any_namespace():
    obj = policy("ClusterPropagationPolicy")
    obj["spec"]["resourceSelectors"][0]["namespace"] = "ns-2"
    admit(obj)


def test_policy_spread_by_field_needs_a_cluster_constraint():
    spread = [
        {"spreadByField": "region", "maxGroups": 2},
        {"spreadByField": "region"},
        {"spreadByField": "region"},
    ]
    value = (
        '[{"spreadByField":"region","maxGroups":2,"minGroups":1},'
        '{"spreadByField":"region","minGroups":1},{"spreadByField":"region","minGroups":1}]'
    )
    assert field_errors(placement(spreadConstraints=spread)) == [
        f"spec.placement.spreadConstraints: Invalid value: {value}: multiple region spread "
        "constraints are not allowed",
        f"spec.placement.spreadConstraints: Invalid value: {value}: the cluster spread constraint "
        "must be enabled in one of the constraints in case of SpreadByField is enabled",
    ]


def test_policy_cluster_affinities():
    terms = [
        {"affinityName": "group1", "clusterNames": ["m1"]},
        {"affinityName": "group1", "clusterNames": ["m2"]},
    ]
    assert field_errors(placement(clusterAffinities=terms)) == [
        'spec.placement.clusterAffinities: Invalid value: [{"affinityName":"group1","clusterNames":["m1"]},'
        '{"affinityName":"group1","clusterNames":["m2"]}]: each affinity term in a policy must have a unique name'
    ]
    (both,) = field_errors(
        placement(clusterAffinity={"clusterNames": ["m1"]}, clusterAffinities=terms[:1])
    )
    assert both.startswith(
        'spec.placement: Invalid value: {"clusterAffinity":{"clusterNames":["m1"]}'
    )
    assert both.endswith("}: clusterAffinities cannot co-exist with clusterAffinity")


@pytest.mark.parametrize(
    ("scheduling", "term", "message"),
    [
        (
            {"replicaDivisionPreference": "Aggregated"},
            {"clusterNames": ["m1"], "overflowAffinities": [{"affinityName": "burst"}]},
            None,
        ),
        (
            {
                "replicaDivisionPreference": "Weighted",
                "weightPreference": {"dynamicWeight": "AvailableReplicas"},
            },
            {"clusterNames": ["m1"], "overflowAffinities": [{"affinityName": "burst"}]},
            None,
        ),
        (
            {"replicaSchedulingType": "Duplicated"},
            {"clusterNames": ["m1"], "overflowAffinities": [{"affinityName": "burst"}]},
            'spec.placement.clusterAffinities[0].overflowAffinities: Invalid value: [{"affinityName":"burst"}]: '
            "overflowAffinities can only be used together with dynamic weight or aggregated scheduling",
        ),
        (
            {"replicaDivisionPreference": "Aggregated"},
            {"overflowAffinities": [{"affinityName": "burst"}]},
            'spec.placement.clusterAffinities[0].overflowAffinities: Invalid value: [{"affinityName":"burst"}]: '
            "overflowAffinities can only be used together with the inline ClusterAffinity",
        ),
        (
            {"replicaDivisionPreference": "Aggregated"},
            {"clusterNames": ["m1"], "overflowAffinities": [{"affinityName": "primary"}]},
            'spec.placement.clusterAffinities[0].overflowAffinities[0].affinityName: Invalid value: "primary": '
            "overflow affinity name must be unique and must not duplicate the primary group's affinityName",
        ),
    ],
)
def test_policy_overflow_affinities(scheduling, term, message):
    obj = placement(
        replicaScheduling=scheduling, clusterAffinities=[{"affinityName": "primary", **term}]
    )
    if message is None:
        admit(obj)
    else:
        assert field_errors(obj) == [message]


def test_policy_exists_toleration_with_a_value_is_accepted():
    admit(placement(clusterTolerations=[{"key": NOT_READY, "operator": "Exists", "value": "x"}]))


def test_policy_update_rules():
    old = stored(policy())
    renamed = old.to_dict()
    renamed["spec"]["schedulerName"] = "my-scheduler"
    assert field_errors(renamed, old) == [
        'spec.schedulerName: Invalid value: "my-scheduler": the schedulerName should not be updated'
    ]
    relabelled = old.to_dict()
    relabelled["metadata"]["labels"][PP_ID] = "another"
    assert field_errors(relabelled, old) == [
        f'metadata.labels[{PP_ID}]: Invalid value: "another": label {PP_ID} is immutable, it can '
        "only be set by the system during creation"
    ]


def test_policy_without_permanent_id_is_refused_on_update():
    old = stored(policy())
    old.metadata.labels = None
    update = old.to_dict()
    assert field_errors(update, old) == [
        f"metadata.labels[{PP_ID}]: Required value: label {PP_ID} is required, it should be set by "
        "the mutating admission webhook during creation"
    ]


def test_policy_webhook_runs_only_once_the_schema_holds():
    obj = policy(preemption="Sometimes", placement={"spreadConstraints": [{"maxGroups": -1}]})
    assert field_errors(obj) == [
        'spec.preemption: Unsupported value: "Sometimes": supported values: "Always", "Never"'
    ]


# --- ClusterTaintPolicy -----------------------------------------------------------------------


def taint_policy(*taints: dict[str, Any], **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "policy.karmada.io/v1alpha1",
        "kind": "ClusterTaintPolicy",
        "metadata": {"name": "detect-not-ready"},
        "spec": {"taints": list(taints), **spec},
    }


def duplicate(i: int, key: str, effect: str) -> str:
    return (
        f'spec.taints[{i}]: Duplicate value: "Duplicate taint with the same key({key}) and '
        f'effect({effect}) is not allowed"'
    )


NO_EXECUTE_FORBIDDEN = (
    "spec.taints[0]: Forbidden: Configuring taint with NoExecute effect is not allowed, this "
    "capability must be explicitly enabled by administrators through command-line flags"
)


@pytest.mark.parametrize(
    ("taints", "allow", "errors"),
    [
        (
            [
                {"key": "key1", "effect": "NoSchedule"},
                {"key": "key2", "effect": "PreferNoSchedule"},
            ],
            True,
            [],
        ),
        (
            [
                {"key": "key1", "effect": "NoSchedule"},
                {"key": "key1", "effect": "NoSchedule", "value": "value1"},
            ],
            True,
            [duplicate(0, "key1", "NoSchedule")],
        ),
        (
            [
                {"key": "key1", "effect": "NoSchedule"},
                {"key": "key2", "effect": "SelectiveNoSchedule", "value": "value1"},
                {"key": "key1", "effect": "NoSchedule"},
                {"key": "key3", "effect": "NoExecute"},
                {"key": "key2", "effect": "SelectiveNoSchedule"},
            ],
            True,
            [duplicate(0, "key1", "NoSchedule"), duplicate(1, "key2", "SelectiveNoSchedule")],
        ),
        ([{"key": "key1", "effect": "NoExecute"}], False, [NO_EXECUTE_FORBIDDEN]),
        ([{"key": "key1", "effect": "NoExecute"}], True, []),
    ],
)
def test_cluster_taint_policy_webhook(taints, allow, errors):
    obj = taint_policy(*taints)
    if errors:
        assert field_errors(obj, allow_no_execute_taint_policy=allow) == errors
    else:
        admit(obj, allow_no_execute_taint_policy=allow)


@pytest.mark.parametrize(
    ("spec", "errors"),
    [
        (
            {"taints": []},
            ["spec.taints: Invalid value: 0: spec.taints in body should have at least 1 items"],
        ),
        ({"taints": [{"effect": "NoSchedule"}]}, ["spec.taints[0].key: Required value"]),
        (
            {"addOnConditions": [{"conditionType": "Ready"}]},
            [
                "spec.addOnConditions[0].operator: Required value",
                "spec.addOnConditions[0].statusValues: Required value",
            ],
        ),
        (
            {"removeOnConditions": [{"operator": "In", "statusValues": ["True"]}]},
            ["spec.removeOnConditions[0].conditionType: Required value"],
        ),
    ],
)
def test_cluster_taint_policy_schema(spec, errors):
    obj = taint_policy({"key": "not-ready", "effect": "NoSchedule"})
    obj["spec"].update(spec)
    assert field_errors(obj) == errors


def test_cluster_taint_policy_leaves_operators_and_effects_to_the_controller():
    """Upstream's webhook checks only NoExecute and duplicates; the CRD has no enums here."""
    admit(
        taint_policy(
            {"key": "custom", "effect": "PreferNoSchedule"},
            addOnConditions=[
                {"conditionType": "Ready", "operator": "Maybe", "statusValues": ["False"]}
            ],
        )
    )


def test_cluster_taint_policy_is_not_mutated():
    obj = taint_policy({"key": "not-ready", "effect": "NoSchedule"})
    assert admit(obj) == obj


# --- ResourceBinding and ClusterResourceBinding -----------------------------------------------


def binding(kind: str = "ResourceBinding", **spec: Any) -> dict[str, Any]:
    metadata: dict[str, Any] = {"name": "nginx-deployment"}
    if kind == "ResourceBinding":
        metadata["namespace"] = "default"
    resource = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "namespace": "default",
        "name": "nginx",
    }
    return {
        "apiVersion": "work.karmada.io/v1alpha2",
        "kind": kind,
        "metadata": metadata,
        "spec": {"resource": resource, **spec},
    }


@pytest.mark.parametrize(
    ("kind", "label"),
    [
        ("ResourceBinding", "resourcebinding.karmada.io/permanent-id"),
        ("ClusterResourceBinding", "clusterresourcebinding.karmada.io/permanent-id"),
    ],
)
def test_binding_permanent_id(kind, label):
    created = stored(binding(kind))
    assert set(created.metadata.labels or {}) == {label}
    assert created.to_dict()["spec"]["conflictResolution"] == "Abort"
    given = binding(kind)
    given["metadata"]["labels"] = {label: "kept"}
    assert admit(given)["metadata"]["labels"] == {label: "kept"}
    unlabelled = binding(kind)
    assert "labels" not in admit(unlabelled, created)["metadata"]


def test_binding_schema_on_update():
    old = stored(binding())
    update = binding(clusters=[{"replicas": 2}])
    del update["spec"]["resource"]["name"]
    assert field_errors(update, old) == [
        "spec.clusters[0].name: Required value",
        "spec.resource.name: Required value",
    ]


@pytest.mark.parametrize(
    ("task", "errors"),
    [
        ({"fromCluster": "member1", "reason": "TaintUntolerated", "producer": "TaintManager"}, []),
        (
            {"fromCluster": "member1", "reason": "taint untolerated", "producer": "TaintManager"},
            [
                'spec.gracefulEvictionTasks[0].reason: Invalid value: "taint untolerated": '
                "spec.gracefulEvictionTasks[0].reason in body should match "
                "'^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$'"
            ],
        ),
        pytest.param(
            {"fromCluster": "member1", "reason": "TaintUntolerated\n", "producer": "TaintManager"},
            [
                'spec.gracefulEvictionTasks[0].reason: Invalid value: "TaintUntolerated\\n": '
                "spec.gracefulEvictionTasks[0].reason in body should match "
                "'^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$'"
            ],
            id="Go's $ does not match before a final newline",
        ),
        (
            {
                "fromCluster": "member1",
                "reason": "A" * 33,
                "producer": "TaintManager",
                "purgeMode": "Later",
            },
            [
                'spec.gracefulEvictionTasks[0].purgeMode: Unsupported value: "Later": supported values: '
                '"Directly", "Gracefully", "Never"',
                "spec.gracefulEvictionTasks[0].reason: Too long: may not be more than 32 bytes",
            ],
        ),
    ],
)
def test_graceful_eviction_task_schema(task, errors):
    obj = binding(gracefulEvictionTasks=[task])
    if errors:
        assert field_errors(obj) == errors
    else:
        admit(obj)


def test_binding_status_conditions_schema():
    old = stored(binding())
    update = old.to_dict()
    update["status"] = {
        "conditions": [{"type": "Scheduled", "status": "Maybe", "reason": "", "message": "m"}],
        "aggregatedStatus": [{"clusterName": "member1", "health": "Fine"}],
    }
    assert field_errors(update, old) == [
        'status.aggregatedStatus[0].health: Unsupported value: "Fine": supported values: "Healthy", '
        '"Unhealthy", "Unknown"',
        "status.conditions[0].lastTransitionTime: Required value",
        'status.conditions[0].reason: Invalid value: "": status.conditions[0].reason in body should be '
        "at least 1 chars long",
        'status.conditions[0].status: Unsupported value: "Maybe": supported values: "True", "False", '
        '"Unknown"',
    ]


@pytest.mark.parametrize(
    ("dependencies", "refused"),
    [
        (
            '[{"apiVersion":"v1","kind":"ConfigMap","namespace":"default","name":"nginx-config"}]',
            False,
        ),
        ("null", False),
        ("{", True),
        ('{"apiVersion":"v1"}', True),
        ('[{"name":1}]', True),
        ("[NaN]", True),
        ("[" * 100_000 + "]" * 100_000, True),  # a RecursionError (a 500) before api/codec
    ],
    ids=["list", "null", "broken", "object", "wrong-type", "nan", "deep"],
)
def test_resource_binding_dependencies_annotation(dependencies, refused):
    obj = binding()
    obj["metadata"]["annotations"] = {"resourcebinding.karmada.io/dependencies": dependencies}
    if refused:
        assert field_errors(obj) == [
            "metadata.annotations.resourcebinding.karmada.io/dependencies: Invalid value: "
            f"{json_quote(dependencies)}: annotation value must be a valid JSON"
        ]
    else:
        admit(obj)


def json_quote(text: str) -> str:
    return '"' + text.replace('"', '\\"') + '"'


def test_cluster_resource_binding_has_no_validating_webhook():
    obj = binding("ClusterResourceBinding")
    obj["metadata"]["annotations"] = {"resourcebinding.karmada.io/dependencies": "{"}
    admit(obj)


# --- Work -------------------------------------------------------------------------------------

WORK_ID = "work.karmada.io/permanent-id"


def work(*manifests: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": "work.karmada.io/v1alpha1",
        "kind": "Work",
        "metadata": {"name": "nginx-687f7fb96f", "namespace": "karmada-es-member1"},
        "spec": {"workload": {"manifests": list(manifests)}},
    }


def manifests_of(obj: dict[str, Any]) -> list[dict[str, Any]]:
    return admit(obj)["spec"]["workload"]["manifests"]


def test_work_gets_a_permanent_id_and_labels_its_manifests():
    (manifest,) = manifests_of(
        work(
            {
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": {
                    "name": "cfg",
                    "labels": {"app": "nginx"},
                    "annotations": {"note": "x"},
                },
                "data": {"k": "v"},
            }
        )
    )
    permanent_id = manifest["metadata"]["labels"][WORK_ID]
    assert manifest["metadata"] == {
        "name": "cfg",
        "labels": {"app": "nginx", WORK_ID: permanent_id},
        "annotations": {
            "note": "x",
            "resourcetemplate.karmada.io/managed-annotations": "note,resourcetemplate.karmada.io/"
            "managed-annotations,resourcetemplate.karmada.io/managed-labels",
            "resourcetemplate.karmada.io/managed-labels": f"app,{WORK_ID}",
        },
    }
    assert manifest["data"] == {"k": "v"}


def test_work_keeps_its_permanent_id():
    obj = work()
    obj["metadata"]["labels"] = {WORK_ID: "given"}
    assert admit(obj)["metadata"]["labels"] == {WORK_ID: "given"}


def pruned(manifest: dict[str, Any]) -> dict[str, Any]:
    (got,) = manifests_of(work(manifest))
    annotations = got["metadata"].pop("annotations")
    del annotations["resourcetemplate.karmada.io/managed-annotations"]
    del annotations["resourcetemplate.karmada.io/managed-labels"]
    if annotations:
        got["metadata"]["annotations"] = annotations
    labels = got["metadata"].pop("labels")
    del labels[WORK_ID]
    if labels:
        got["metadata"]["labels"] = labels
    return got


@pytest.mark.parametrize(
    ("manifest", "want"),
    [
        pytest.param(
            {
                "apiVersion": "apps/v1",
                "kind": "Deployment",
                "metadata": {
                    "name": "nginx",
                    "uid": "3f8b",
                    "resourceVersion": "1042",
                    "generation": 3,
                    "creationTimestamp": "2025-01-01T00:00:00Z",
                    "managedFields": [{}],
                    "ownerReferences": [{}],
                    "finalizers": ["x"],
                    "annotations": {"deployment.kubernetes.io/revision": "3"},
                },
                "spec": {"replicas": 2},
                "status": {"readyReplicas": 2},
            },
            {
                "apiVersion": "apps/v1",
                "kind": "Deployment",
                "metadata": {"name": "nginx"},
                "spec": {"replicas": 2},
            },
            id="deployment",
        ),
        pytest.param(
            {
                "apiVersion": "v1",
                "kind": "Service",
                "metadata": {"name": "s"},
                "spec": {"clusterIP": "10.0.0.1", "clusterIPs": ["10.0.0.1"]},
            },
            {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "s"}, "spec": {}},
            id="service",
        ),
        pytest.param(
            {
                "apiVersion": "v1",
                "kind": "Service",
                "metadata": {"name": "s"},
                "spec": {"clusterIP": "None"},
            },
            {
                "apiVersion": "v1",
                "kind": "Service",
                "metadata": {"name": "s"},
                "spec": {"clusterIP": "None"},
            },
            id="headless service",
        ),
        pytest.param(
            {
                "apiVersion": "batch/v1",
                "kind": "Job",
                "metadata": {"name": "pi"},
                "spec": {
                    "ttlSecondsAfterFinished": 100,
                    "selector": {
                        "matchLabels": {"batch.kubernetes.io/controller-uid": "u", "app": "pi"}
                    },
                    "template": {
                        "metadata": {
                            "labels": {"controller-uid": "u", "job-name": "pi", "app": "pi"}
                        }
                    },
                },
            },
            {
                "apiVersion": "batch/v1",
                "kind": "Job",
                "metadata": {"name": "pi"},
                "spec": {
                    "selector": {"matchLabels": {"app": "pi"}},
                    "template": {"metadata": {"labels": {"app": "pi"}}},
                },
            },
            id="job",
        ),
        pytest.param(
            {
                "apiVersion": "batch/v1",
                "kind": "Job",
                "metadata": {"name": "pi"},
                "spec": {
                    "manualSelector": True,
                    "selector": {"matchLabels": {"controller-uid": "u"}},
                },
            },
            {
                "apiVersion": "batch/v1",
                "kind": "Job",
                "metadata": {"name": "pi"},
                "spec": {
                    "manualSelector": True,
                    "selector": {"matchLabels": {"controller-uid": "u"}},
                },
            },
            id="job with manual selector",
        ),
        pytest.param(
            {
                "apiVersion": "v1",
                "kind": "Secret",
                "type": "kubernetes.io/service-account-token",
                "metadata": {
                    "name": "t",
                    "annotations": {"kubernetes.io/service-account.uid": "u"},
                },
                "data": {"token": "eHl6"},
            },
            {
                "apiVersion": "v1",
                "kind": "Secret",
                "type": "kubernetes.io/service-account-token",
                "metadata": {"name": "t"},
                "data": None,
            },
            id="service account token",
        ),
        pytest.param(
            {
                "apiVersion": "v1",
                "kind": "ServiceAccount",
                "metadata": {"name": "sa"},
                "secrets": [
                    {"name": "sa-token-1"},
                    {"name": "sa-token-2"},
                    {"name": "own"},
                    {"name": "sa-token-3"},
                ],
            },
            {
                "apiVersion": "v1",
                "kind": "ServiceAccount",
                "metadata": {"name": "sa"},
                # Upstream's loop skips the entry after each one it removes.
                "secrets": [{"name": "sa-token-2"}, {"name": "own"}],
            },
            id="service account",
        ),
        pytest.param(
            {
                "apiVersion": "v1",
                "kind": "PersistentVolumeClaim",
                "metadata": {
                    "name": "data",
                    "annotations": {"volume.kubernetes.io/selected-node": "node-1"},
                },
            },
            {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "data"}},
            id="persistent volume claim",
        ),
    ],
)
def test_work_manifests_are_pruned(manifest, want):
    assert pruned(manifest) == want


def test_work_manifest_without_kind_fails_the_webhook():
    manifests = [{"apiVersion": "v1", "kind": "ConfigMap"}, {"apiVersion": "v1", "metadata": {}}]
    assert field_errors(work(*manifests)) == [
        "spec.workload.manifests[1].kind: Required value: Object 'Kind' is missing in "
        '\'{"apiVersion":"v1","metadata":{}}\''
    ]


def test_work_without_spec_gets_one_from_the_go_round_trip():
    obj = work()
    del obj["spec"]
    assert admit(obj)["spec"] == {"workload": {}}


# --- every kind -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "obj",
    [
        cluster(
            zone="zone1",
            taints=[{"key": "k", "effect": "NoExecute"}],
            resourceModels=[cpu_model(2, "1", "4"), cpu_model(1, "0", "1")],
        ),
        policy(
            placement={"spreadConstraints": [{}], "replicaScheduling": {}}, failover={"cluster": {}}
        ),
        policy("ClusterPropagationPolicy", placement={"clusterTolerations": []}),
        taint_policy({"key": "k", "effect": "NoSchedule"}),
        binding(),
        binding("ClusterResourceBinding"),
        work(
            {
                "apiVersion": "v1",
                "kind": "Service",
                "metadata": {"name": "s", "uid": "u"},
                "spec": {"clusterIP": "1.2.3.4"},
            }
        ),
    ],
    ids=lambda obj: obj["kind"],
)
def test_admit_never_changes_its_input(obj):
    given = copy.deepcopy(obj)
    admit(obj, default_not_ready_toleration_seconds=300)
    assert obj == given


@pytest.mark.parametrize(
    "obj",
    [
        cluster(taints=[{"key": "k", "effect": "NoExecute"}]),
        policy(),
        binding(),
        work({"apiVersion": "v1", "kind": "ConfigMap"}),
    ],
    ids=lambda obj: obj["kind"],
)
def test_admitting_an_admitted_object_changes_nothing(obj):
    first = stored(obj)
    assert admit(first.to_dict(), first) == first.to_dict()
