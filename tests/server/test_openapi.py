"""The OpenAPI documents, read the way kubectl 1.32 reads them."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from typing import Any

import pytest

from fleetwarden.api.kinds import KindInfo
from fleetwarden.api.registry import REGISTRY
from fleetwarden.server.openapi import gv_path, openapi_v2, openapi_v3, openapi_v3_index
from fleetwarden.store.merge_keys import merge_keys_for

KINDS = REGISTRY.kinds()
SMP = "application/strategic-merge-patch+json"


def gvk(info: KindInfo) -> dict[str, str]:
    return {"group": info.group, "kind": info.kind, "version": info.version}


def document(info: KindInfo) -> dict[str, Any]:
    doc = openapi_v3(info.group, info.version)
    assert doc is not None
    return doc


def patch_operation(doc: dict[str, Any], info: KindInfo) -> dict[str, Any]:
    """The kind's PATCH operation, found as kubectl finds it: by its GVK extension."""
    [operation] = [
        item["patch"]
        for path, item in doc["paths"].items()
        if "patch" in item
        and item["patch"]["x-kubernetes-group-version-kind"] == gvk(info)
        and not path.endswith("/status")
    ]
    return operation


def test_the_index_names_each_group_version_by_its_content() -> None:
    index = openapi_v3_index()["paths"]
    assert set(index) == {gv_path(i.group, i.version) for i in KINDS}
    assert "api/v1" in index and "apis/apps/v1" in index
    for path, entry in index.items():
        group, version = ("", "v1") if path == "api/v1" else tuple(path.split("/")[1:])
        doc = openapi_v3(group, version)
        digest = hashlib.sha512(json.dumps(doc, sort_keys=True, separators=(",", ":")).encode())
        assert entry == {
            "serverRelativeURL": f"/openapi/v3/{path}?hash={digest.hexdigest().upper()}"
        }


def test_an_unknown_group_version_has_no_document() -> None:
    assert openapi_v3("example.com", "v1") is None


@pytest.mark.parametrize("info", KINDS, ids=lambda i: f"{i.api_version}/{i.kind}")
def test_kubectl_leaves_validation_to_the_server(info: KindInfo) -> None:
    """cli-runtime's supportsQueryParamV3: the PATCH operation takes fieldValidation, so
    kubectl sends fieldValidation=Strict instead of validating with the v2 document."""
    parameters = patch_operation(document(info), info)["parameters"]
    assert {"name": "fieldValidation", "in": "query"} in [
        {"name": p["name"], "in": p["in"]} for p in parameters
    ]


@pytest.mark.parametrize("info", KINDS, ids=lambda i: f"{i.api_version}/{i.kind}")
def test_kubectl_does_not_compute_a_strategic_merge_patch_from_the_schemas(info: KindInfo) -> None:
    """kubectl's gvkSupportsPatchOpenAPIV3 is false, so it patches with its own types (the
    built-in kinds) or a JSON merge patch (the rest)."""
    content = patch_operation(document(info), info)["requestBody"]["content"]
    assert SMP not in content
    assert {"application/merge-patch+json", "application/json-patch+json"} <= set(content)


@pytest.mark.parametrize("info", KINDS, ids=lambda i: f"{i.api_version}/{i.kind}")
def test_kubectl_explain_finds_the_kind(info: KindInfo) -> None:
    """explain's template: a path of the resource gives the GVK, and the component schema
    whose x-kubernetes-group-version-kind holds it is the kind's."""
    doc = document(info)
    scope = "namespaces/{namespace}/" if info.namespaced else ""
    collection = doc["paths"][f"/{gv_path(info.group, info.version)}/{scope}{info.plural}"]
    assert collection["get"]["x-kubernetes-group-version-kind"] == gvk(info)
    [schema] = [
        s
        for s in doc["components"]["schemas"].values()
        if gvk(info) in s.get("x-kubernetes-group-version-kind", [])
    ]
    assert {"apiVersion", "kind", "metadata", "spec"} <= set(schema["properties"])


def walk(node: Any) -> Iterator[Any]:
    yield node
    children = node.values() if isinstance(node, dict) else node if isinstance(node, list) else []
    for child in children:
        yield from walk(child)


def test_every_reference_resolves() -> None:
    for path in openapi_v3_index()["paths"]:
        group, version = ("", "v1") if path == "api/v1" else tuple(path.split("/")[1:])
        doc = openapi_v3(group, version)
        schemas = doc["components"]["schemas"]
        for node in walk(doc):
            if isinstance(node, dict) and "$ref" in node:
                assert node["$ref"].removeprefix("#/components/schemas/") in schemas
    v2 = openapi_v2()
    for node in walk(v2):
        if isinstance(node, dict) and "$ref" in node:
            assert node["$ref"].removeprefix("#/definitions/") in v2["definitions"]


def schema_at(schemas: dict[str, Any], schema: dict[str, Any], path: str) -> dict[str, Any]:
    """The schema of a field path (list items transparent), through references."""
    for name in path.split("."):
        schema = schema.get("items", schema)
        if "allOf" in schema:
            schema = schemas[schema["allOf"][0]["$ref"].rpartition("/")[2]]
        schema = schema["properties"][name]
    return schema


@pytest.mark.parametrize(
    "info",
    [i for i in KINDS if merge_keys_for(i) is not None],
    ids=lambda i: f"{i.api_version}/{i.kind}",
)
def test_the_schemas_carry_the_patch_tags_the_store_merges_by(info: KindInfo) -> None:
    doc = document(info)
    schemas = doc["components"]["schemas"]
    [kind] = [
        s for s in schemas.values() if gvk(info) in s.get("x-kubernetes-group-version-kind", [])
    ]
    for path, meta in (merge_keys_for(info) or {}).items():
        field = schema_at(schemas, kind, path)
        strategy = ",".join(filter(None, [meta.strategy, "retainKeys" * meta.retain_keys]))
        assert field.get("x-kubernetes-patch-strategy", "") == strategy, path
        assert field.get("x-kubernetes-patch-merge-key", "") == meta.merge_key, path


def test_deployment_patch_tags() -> None:
    deployments = REGISTRY.info("apps/v1", "Deployment")
    schemas = document(deployments)["components"]["schemas"]
    kind = schemas["io.k8s.api.apps.v1.Deployment"]
    containers = schema_at(schemas, kind, "spec.template.spec.containers")
    assert (containers["type"], containers["x-kubernetes-patch-merge-key"]) == ("array", "name")
    volumes = schema_at(schemas, kind, "spec.template.spec.volumes")
    assert volumes["x-kubernetes-patch-strategy"] == "merge,retainKeys"
    assert schema_at(schemas, kind, "spec.strategy")["x-kubernetes-patch-strategy"] == "retainKeys"
    finalizers = schema_at(schemas, kind, "metadata.finalizers")
    assert finalizers == {
        "type": "array",
        "items": {"type": "string"},
        "x-kubernetes-patch-strategy": "merge",
    }
    owners = schema_at(schemas, kind, "metadata.ownerReferences")
    assert owners["x-kubernetes-patch-merge-key"] == "uid"


def test_custom_resources_are_open_objects() -> None:
    policies = REGISTRY.info("policy.karmada.io/v1alpha1", "PropagationPolicy")
    schema = document(policies)["components"]["schemas"][
        "io.karmada.policy.v1alpha1.PropagationPolicy"
    ]
    assert schema["x-kubernetes-preserve-unknown-fields"] is True
    assert schema["properties"]["spec"] == {
        "type": "object",
        "x-kubernetes-preserve-unknown-fields": True,
    }


def test_the_v2_document() -> None:
    v2 = openapi_v2()
    assert v2["swagger"] == "2.0"
    deployments = REGISTRY.info("apps/v1", "Deployment")
    definition = v2["definitions"]["io.k8s.api.apps.v1.Deployment"]
    assert definition["x-kubernetes-group-version-kind"] == [gvk(deployments)]
    item = v2["paths"]["/apis/apps/v1/namespaces/{namespace}/deployments/{name}"]
    assert item["patch"]["x-kubernetes-group-version-kind"] == gvk(deployments)
    assert SMP not in item["patch"]["consumes"]
    assert "fieldValidation" in [p["name"] for p in item["patch"]["parameters"]]
    assert [p["name"] for p in item["parameters"]] == ["name", "namespace"]


def test_the_documents_are_made_once() -> None:
    assert openapi_v3("apps", "v1") is openapi_v3("apps", "v1")
    assert openapi_v2() is openapi_v2()
