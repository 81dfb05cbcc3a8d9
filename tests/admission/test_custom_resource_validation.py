"""Custom resources against their CRD's openAPIV3Schema: pruning, defaulting and validation
in apiextensions-apiserver's words (cases after its validation_test.go and pruning_test.go)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from fleetwarden.admission import custom_resource, default_chain
from fleetwarden.api.core import Unstructured
from fleetwarden.api.errors import Invalid, Path
from fleetwarden.api.kinds import CustomResource, KindInfo
from fleetwarden.api.registry import REGISTRY

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "spec": {
            "type": "object",
            "required": ["image"],
            "properties": {
                "image": {"type": "string", "minLength": 1, "maxLength": 10},
                "replicas": {"type": "integer", "minimum": 1, "maximum": 5, "default": 1},
                "mode": {"type": "string", "enum": ["Fast", "Slow"]},
                "port": {"x-kubernetes-int-or-string": True},
                "tags": {"type": "array", "items": {"type": "string"}, "maxItems": 2},
                "note": {"type": "string", "nullable": True},
                "labels": {"type": "object", "additionalProperties": {"type": "string"}},
                "extra": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
                "template": {"type": "object", "x-kubernetes-embedded-resource": True,
                             "properties": {"spec": {"type": "object"}}},
            },
        },
    },
}  # fmt: skip


def errors(spec: dict[str, Any]) -> list[str]:
    return [str(e) for e in custom_resource.schema_errors(SCHEMA, {"spec": spec})]


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ({"image": "x", "replicas": "2"}, [
            'spec.replicas: Invalid value: "string": '
            'spec.replicas in body must be of type integer: "string"']),
        ({"image": "x", "replicas": 1.5}, [
            'spec.replicas: Invalid value: "number": '
            'spec.replicas in body must be of type integer: "number"']),
        ({"replicas": 2}, ["spec.image: Required value"]),
        ({"image": "x", "mode": "Medium"}, [
            'spec.mode: Unsupported value: "Medium": supported values: "Fast", "Slow"']),
        ({"image": "x", "replicas": 0}, [
            "spec.replicas: Invalid value: 0: spec.replicas in body should be greater than or "
            "equal to 1"]),
        ({"image": "x", "replicas": 6}, [
            "spec.replicas: Invalid value: 6: spec.replicas in body should be less than or "
            "equal to 5"]),
        ({"image": ""}, [
            'spec.image: Invalid value: "": spec.image in body should be at least 1 chars long']),
        ({"image": "abcdefghijk"}, ["spec.image: Too long: may not be more than 10 bytes"]),
        ({"image": "x", "tags": ["a", "b", "c"]}, [
            "spec.tags: Too many: 3: must have at most 2 items"]),
        ({"image": "x", "tags": ["a", 1]}, [
            'spec.tags[1]: Invalid value: "integer": '
            'spec.tags[1] in body must be of type string: "integer"']),
        ({"image": "x", "port": True}, [
            'spec.port: Invalid value: "boolean": '
            'spec.port in body must be of type integer,string: "boolean"']),
        ({"image": "x", "labels": {"a": 1}}, [
            'spec.labels.a: Invalid value: "integer": '
            'spec.labels.a in body must be of type string: "integer"']),
        ({"image": "x", "port": 80, "port2": None, "note": None, "replicas": 2.0}, []),
    ],
)  # fmt: skip
def test_errors_are_worded_as_the_api_servers(spec: dict[str, Any], expected: list[str]) -> None:
    assert errors(spec) == expected


@pytest.mark.parametrize(
    ("schema", "value", "expected"),
    [
        ({"type": "string", "pattern": "^a+$"}, "b",
         "x: Invalid value: \"b\": x in body should match '^a+$'"),
        ({"type": "string", "format": "byte"}, "!", 'x: Invalid value: "!": x in body must be of '
         'type byte: "!"'),
        ({"type": "string", "format": "date-time"}, "soon", 'x: Invalid value: "soon": x in body '
         'must be of type date-time: "soon"'),
        ({"type": "array", "minItems": 2, "items": {"type": "integer"}}, [1],
         "x: Invalid value: 1: x in body should have at least 2 items"),
        ({"type": "array", "uniqueItems": True, "items": {"type": "integer"}}, [1, 1],
         "x: Invalid value: \"\": x in body shouldn't contain duplicates"),
        ({"type": "number", "exclusiveMinimum": True, "minimum": 0}, 0,
         "x: Invalid value: 0: x in body should be greater than 0"),
        ({"type": "integer", "multipleOf": 2}, 3,
         "x: Invalid value: 3: x in body should be a multiple of 2"),
        ({"type": "integer", "enum": [1, 2]}, 3,
         'x: Unsupported value: 3: supported values: "1", "2"'),
        ({"type": "string"}, None,
         'x: Invalid value: "null": x in body must be of type string: "null"'),
    ],
)  # fmt: skip
def test_each_rule(schema: dict[str, Any], value: Any, expected: str) -> None:
    assert [str(e) for e in custom_resource.schema_errors(schema, value, Path("x"))] == [expected]


def test_unknown_fields_are_pruned_except_where_preserved() -> None:
    obj = {
        "apiVersion": "a/v1", "kind": "K", "metadata": {"name": "n"}, "status": {"x": 1},
        "spec": {"image": "x", "foo": 1, "extra": {"any": {"thing": 1}},
                 "labels": {"a": "b"},
                 "template": {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
                              "spec": {"c": 1}, "bar": 2}},
    }  # fmt: skip
    assert custom_resource.prune(SCHEMA, obj) == [
        "status",
        "spec.foo",
        "spec.template.spec.c",
        "spec.template.bar",
    ]
    assert obj == {
        "apiVersion": "a/v1", "kind": "K", "metadata": {"name": "n"},
        "spec": {"image": "x", "extra": {"any": {"thing": 1}}, "labels": {"a": "b"},
                 "template": {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
                              "spec": {}}},
    }  # fmt: skip


def test_defaults_fill_what_is_absent_or_null_and_nulls_not_allowed_go() -> None:
    schema = {
        "type": "object",
        "properties": {
            "spec": {"type": "object", "default": {}, "properties": {
                "replicas": {"type": "integer", "default": 1},
                "image": {"type": "string"},
                "note": {"type": "string", "nullable": True},
                "items": {"type": "array", "items": {
                    "type": "object", "properties": {"weight": {"type": "integer", "default": 5}},
                }},
            }},
        },
    }  # fmt: skip
    obj: dict[str, Any] = {"metadata": {}}
    custom_resource.apply_defaults(schema, obj)
    assert obj == {"metadata": {}, "spec": {"replicas": 1}}
    obj = {"spec": {"replicas": None, "image": None, "note": None, "items": [{}, {"weight": 2}]}}
    custom_resource.apply_defaults(schema, obj)
    assert obj == {"spec": {"replicas": 1, "note": None, "items": [{"weight": 5}, {"weight": 2}]}}


KIND = KindInfo(
    "stable.example.com", "v1", "CronTab", "crontabs", True, Unstructured,
    custom=CustomResource("crontab", "CronTabList", SCHEMA),
)  # fmt: skip


def test_the_chain_admits_every_custom_kind_by_its_schema() -> None:
    registry = REGISTRY.overlay()
    registry.serve([KIND])
    chain = default_chain(registry)
    now = datetime(2026, 1, 1, tzinfo=UTC)
    obj = {"apiVersion": "stable.example.com/v1", "kind": "CronTab",
           "metadata": {"name": "c"}, "spec": {"image": "x", "foo": 1}}  # fmt: skip
    admitted = chain.admit(obj, now=now).to_dict()
    assert admitted["spec"] == {"image": "x", "replicas": 1}
    with pytest.raises(Invalid) as refused:
        chain.admit({**obj, "spec": {"replicas": "2"}}, now=now)
    assert refused.value.status()["message"] == (
        'CronTab.stable.example.com "c" is invalid: [spec.image: Required value, '
        'spec.replicas: Invalid value: "string": spec.replicas in body must be of type '
        'integer: "string"]'
    )


def test_review_records_what_the_schema_pruned_for_field_validation() -> None:
    registry = REGISTRY.overlay()
    registry.serve([KIND])
    chain = default_chain(registry)
    now = datetime(2026, 1, 1, tzinfo=UTC)
    obj = {"apiVersion": "stable.example.com/v1", "kind": "CronTab",
           "metadata": {"name": "c"}, "spec": {"image": "x", "foo": 1}, "bar": 2}  # fmt: skip
    request = chain.review(obj, now=now)
    assert request.pruned == ["spec.foo", "bar"]
    assert request.obj.to_dict() == chain.admit(obj, now=now).to_dict()
    assert obj["spec"] == {"image": "x", "foo": 1}  # the object given is left alone
    # A built-in kind's are those its Go type does not declare.
    built_in = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "n"}, "x": 1}
    assert chain.review(built_in, now=now).pruned == ["x"]
