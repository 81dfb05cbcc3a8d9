"""Admission of OverridePolicy and ClusterOverridePolicy: the CRD schema, the mutating webhook
and ValidateOverrideSpec, with the cases of upstream's validation_test.go
(TestValidateOverrideSpec) and webhook tests."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from fleetwarden.admission import AdmissionConfig, default_chain
from fleetwarden.api.errors import Invalid

CHAIN = default_chain()
NOW = datetime(2025, 3, 4, 5, 6, 7, tzinfo=UTC)
POINTER = 'JSON pointer must be empty or start with a "/"\nJSON pointer error'


def policy(kind: str = "OverridePolicy", **spec: Any) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": "op"}
    if kind == "OverridePolicy":
        meta["namespace"] = "default"
    return {
        "apiVersion": "policy.karmada.io/v1alpha1",
        "kind": kind,
        "metadata": meta,
        "spec": spec,
    }


def admit(obj: dict[str, Any]) -> dict[str, Any]:
    return CHAIN.admit(obj, None, now=NOW, config=AdmissionConfig()).to_dict()


def errors(obj: dict[str, Any]) -> list[str]:
    with pytest.raises(Invalid) as caught:
        CHAIN.admit(obj, None, now=NOW, config=AdmissionConfig())
    return [str(e) for e in caught.value.errors]


def rule(overriders: dict[str, Any], **target: Any) -> dict[str, Any]:
    return {"targetCluster": target or {"clusterNames": ["cluster-name"]}, "overriders": overriders}


PLAINTEXT = {"plaintext": [{"path": "spec/image", "operator": "add", "value": "x"}]}
FIELD_SELECTOR_FOO = {
    "matchExpressions": [{"key": "foo", "operator": "In", "values": ["fooCloud"]}]
}
FIELD_SELECTOR_GT = {
    "matchExpressions": [{"key": "provider", "operator": "Gt", "values": ["fooCloud"]}]
}


@pytest.mark.parametrize(
    "spec",
    [
        {"overrideRules": [{"targetCluster": {"clusterNames": ["cluster-name"]}, "overriders": {}}]},
        {"targetCluster": {"clusterNames": ["cluster-name"]}, "overriders": PLAINTEXT},
        {"overrideRules": [rule({"fieldOverrider": [{"fieldPath": "/data/config",
            "yaml": [{"subPath": "/key", "operator": "remove"}]}]})]},
        {"overrideRules": [rule({"fieldOverrider": [{"fieldPath": "/data/config",
            "json": [{"subPath": "/key", "operator": "remove"}]}]})]},
    ],
    ids=["overrideRules alone", "targetCluster and overriders", "only YAML", "only JSON"],
)  # fmt: skip
@pytest.mark.parametrize("kind", ["OverridePolicy", "ClusterOverridePolicy"])
def test_valid_override_specs(kind: str, spec: dict[str, Any]) -> None:
    # The mutating webhook's Go round trip writes the (deprecated) overriders struct.
    marshalled = {"overriders": {}} if kind == "OverridePolicy" else {}
    assert admit(policy(kind, **spec))["spec"] == {**marshalled, **spec}


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        (
            {"overrideRules": [rule({})], "targetCluster": {"clusterNames": ["cluster-name"]}},
            ['spec.targetCluster: Invalid value: {"clusterNames":["cluster-name"]}: '
             "overrideRules and targetCluster can't co-exist"],
        ),
        (
            {"overrideRules": [rule({})], "overriders": PLAINTEXT},
            ['spec.overriders: Invalid value: {"plaintext":[{"path":"spec/image","operator":"add",'
             '"value":"x"}]}: overrideRules and overriders can\'t co-exist'],
        ),
        (
            {"overrideRules": [rule({"annotationsOverrider": [
                {"operator": "add", "value": {"testannotation~projectId": "c-m-lfx9lk92p-v86cf"}}]})]},
            ["spec.overrideRules[0].overriders.annotationsOverrider[0].value: Invalid value: "
             '"testannotation~projectId": name part must consist of alphanumeric characters, '
             "'-', '_' or '.', and must start and end with an alphanumeric character (e.g. "
             "'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
             "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"],
        ),
        (
            {"overrideRules": [rule({"labelsOverrider": [
                {"operator": "add", "value": {"testannotation~projectId": "c-m-lfx9lk92p-v86cf"}}]})]},
            ["spec.overrideRules[0].overriders.labelsOverrider[0].value: Invalid value: "
             '"testannotation~projectId": name part must consist of alphanumeric characters, '
             "'-', '_' or '.', and must start and end with an alphanumeric character (e.g. "
             "'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
             "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"],
        ),
        (
            {"targetCluster": {"fieldSelector": FIELD_SELECTOR_FOO}},
            ['spec.targetCluster.fieldSelector: Invalid value: {"matchExpressions":[{"key":"foo",'
             '"operator":"In","values":["fooCloud"]}]}: unsupported key "foo", must be provider, '
             "region, or zone"],
        ),
        (
            {"overrideRules": [{"targetCluster": {"fieldSelector": FIELD_SELECTOR_GT},
                                "overriders": {}}]},
            ["spec.overrideRules[0].targetCluster.fieldSelector: Invalid value: "
             '{"matchExpressions":[{"key":"provider","operator":"Gt","values":["fooCloud"]}]}: '
             'unsupported operator "Gt", must be In or NotIn'],
        ),
        (
            {"overrideRules": [rule({"fieldOverrider": [{"fieldPath": "/data/config"}]})]},
            ["spec.overrideRules[0].overriders.fieldOverrider[0]: Required value: FieldOverrider "
             "must have either JSON or YAML set"],
        ),
        (
            {"overrideRules": [rule({"fieldOverrider": [{"fieldPath": "/data/config",
                "json": [{"subPath": "/key", "operator": "remove"}],
                "yaml": [{"subPath": "/key", "operator": "remove"}]}]})]},
            ['spec.overrideRules[0].overriders.fieldOverrider[0]: Invalid value: {"fieldPath":'
             '"/data/config","json":[{"subPath":"/key","operator":"remove"}],"yaml":[{"subPath":'
             '"/key","operator":"remove"}]}: FieldOverrider has both YAML and JSON set. Only one '
             "is allowed"],
        ),
        (
            {"overrideRules": [rule({"fieldOverrider": [{"fieldPath": "data", "json": [
                {"subPath": "key", "operator": "add"},
                {"subPath": "/key", "operator": "remove", "value": 1}]}]})]},
            [f'spec.overrideRules[0].overriders.fieldOverrider[0].fieldPath: Invalid value: "data": {POINTER}',
             f'spec.overrideRules[0].overriders.fieldOverrider[0].json[0].subPath: Invalid value: "key": {POINTER}',
             "spec.overrideRules[0].overriders.fieldOverrider[0].json[0].value: Invalid value: "
             "null: value is required for add or replace operation",
             "spec.overrideRules[0].overriders.fieldOverrider[0].json[1].value: Invalid value: "
             "1: value is not allowed for remove operation"],
        ),
        (
            {"overrideRules": [rule({"imageOverrider": [{"component": "Tag", "operator": "remove",
                                                         "predicate": {"path": "spec"}}]})]},
            ["spec.overrideRules[0].overriders.imageOverrider[0].predicate.path: Invalid value: "
             f'"spec": {POINTER}'],
        ),
    ],
    ids=["rules and targetCluster", "rules and overriders", "bad annotation", "bad label",
         "targetCluster field key", "rule field operator", "field neither", "field both",
         "pointers and values", "image predicate"],
)  # fmt: skip
def test_validate_override_spec(spec: dict[str, Any], expected: list[str]) -> None:
    assert errors(policy(**spec)) == expected


@pytest.mark.parametrize(
    ("overriders", "expected"),
    [
        ({"imageOverrider": [{"component": "Digest", "operator": "add"}]},
         'spec.overrideRules[0].overriders.imageOverrider[0].component: Unsupported value: '
         '"Digest": supported values: "Registry", "Repository", "Tag"'),
        ({"commandOverrider": [{"containerName": "c", "operator": "replace"}]},
         'spec.overrideRules[0].overriders.commandOverrider[0].operator: Unsupported value: '
         '"replace": supported values: "add", "remove"'),
        ({"labelsOverrider": [{"operator": "add"}]},
         "spec.overrideRules[0].overriders.labelsOverrider[0].value: Required value"),
        ({"plaintext": [{"operator": "add"}]},
         "spec.overrideRules[0].overriders.plaintext[0].path: Required value"),
    ],
)  # fmt: skip
def test_override_policy_schema(overriders: dict[str, Any], expected: str) -> None:
    # A ClusterOverridePolicy: an OverridePolicy's mutating webhook writes every string field
    # the Go types have without omitempty (path: ""), which then passes `required`.
    assert errors(policy("ClusterOverridePolicy", overrideRules=[rule(overriders)])) == [expected]


def test_override_policy_selectors_default_to_its_namespace_and_stay_there() -> None:
    selector = {"apiVersion": "apps/v1", "kind": "Deployment", "name": "nginx"}
    admitted = admit(policy(resourceSelectors=[selector]))
    assert admitted["spec"]["resourceSelectors"] == [{**selector, "namespace": "default"}]
    foreign = {**selector, "namespace": "other"}
    assert errors(policy(resourceSelectors=[foreign])) == [
        'spec.resourceSelectors[0].namespace: Invalid value: "other": namespace of resource '
        "selector must be the same as the namespace of the policy"
    ]
    cluster_wide = admit(policy("ClusterOverridePolicy", resourceSelectors=[foreign, selector]))
    assert cluster_wide["spec"]["resourceSelectors"] == [foreign, selector]
