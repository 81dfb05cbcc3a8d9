"""The OpenAPI documents, read the way kubectl 1.32 reads them."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from typing import Any

import pytest
import yaml

from fleetwarden.api.kinds import KindInfo
from fleetwarden.api.registry import REGISTRY
from fleetwarden.server.openapi import (
    gv_path,
    openapi_v2,
    openapi_v2_protobuf,
    openapi_v3,
    openapi_v3_index,
)
from fleetwarden.store.merge_keys import merge_keys_for

from .conftest import Api

KINDS = REGISTRY.kinds()
SMP = "application/strategic-merge-patch+json"
OBJECT_META = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
DEPLOYMENT = "/apis/apps/v1/namespaces/{namespace}/deployments/{name}"


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
    item = v2["paths"][DEPLOYMENT]
    assert item["patch"]["x-kubernetes-group-version-kind"] == gvk(deployments)
    assert SMP not in item["patch"]["consumes"]
    assert "fieldValidation" in [p["name"] for p in item["patch"]["parameters"]]
    assert [p["name"] for p in item["parameters"]] == ["name", "namespace"]


def test_v2_publishes_an_open_kind_as_an_object_alone() -> None:
    """As kube-apiserver publishes a custom resource that keeps unknown fields: kubectl
    1.20 validates the kind against it (and lets anything through)."""
    clusters = REGISTRY.info("cluster.karmada.io/v1alpha1", "Cluster")
    assert openapi_v2()["definitions"]["io.karmada.cluster.v1alpha1.Cluster"] == {
        "type": "object",
        "x-kubernetes-group-version-kind": [gvk(clusters)],
    }


def test_v2_leaves_the_kinds_kubectl_has_types_for_to_them() -> None:
    """kubectl 1.20 computes an applied kind's patch from the v2 definition of the kind
    when it finds one, and warns each time when that lists no fields; without one, it uses
    the types it has (k8s.io/api's) at once."""
    definitions = openapi_v2()["definitions"]
    assert definitions["io.k8s.api.apps.v1.Deployment"] == {"type": "object"}
    described = [
        kind["kind"]
        for schema in definitions.values()
        for kind in schema.get("x-kubernetes-group-version-kind", [])
        if not kind["kind"].endswith("List")
    ]
    assert "Cluster" in described and "Deployment" not in described


def test_v2_schemas_list_no_field_of_what_keeps_unknown_fields() -> None:
    """What kubectl 1.20's v2 reader takes: a schema that keeps unknown fields lists none
    (kubectl would refuse the others) and has no type; an array has one item schema."""
    for node in walk(openapi_v2()["definitions"]):
        if not isinstance(node, dict):
            continue
        if node.get("x-kubernetes-preserve-unknown-fields"):
            assert not {"properties", "items", "type"} & set(node), node
        if node.get("type") == "array":
            assert isinstance(node["items"], dict), node


def test_v2_object_meta_keeps_its_fields() -> None:
    meta = openapi_v2()["definitions"][OBJECT_META]
    fields = meta["properties"]
    assert fields["labels"] == {
        "type": "object",
        "additionalProperties": {"type": "string", "default": ""},
    }
    assert fields["finalizers"]["x-kubernetes-patch-strategy"] == "merge"
    assert fields["managedFields"] == {  # a list of anything
        "type": "array",
        "items": {"x-kubernetes-preserve-unknown-fields": True},
    }


# --- /openapi/v2 in protobuf, read by the field numbers of gnostic's OpenAPIv2.proto -------


def varint(data: bytes, pos: int) -> tuple[int, int]:
    result = shift = 0
    while True:
        result |= (data[pos] & 0x7F) << shift
        pos, shift = pos + 1, shift + 7
        if not data[pos - 1] & 0x80:
            return result, pos


def fields(data: bytes) -> dict[int, list[Any]]:
    """A message's fields by number: varints as ints, the others as bytes."""
    found: dict[int, list[Any]] = {}
    pos = 0
    while pos < len(data):
        key, pos = varint(data, pos)
        value: Any
        if key & 7 == 0:
            value, pos = varint(data, pos)
        else:
            assert key & 7 == 2, f"wire type {key & 7}"
            length, pos = varint(data, pos)
            value, pos = data[pos : pos + length], pos + length
        found.setdefault(key >> 3, []).append(value)
    return found


def field(data: bytes, *path: int) -> Any:
    """The single field at the end of a path of field numbers."""
    for number in path:
        [data] = fields(data)[number]
    return data


def named(data: bytes, number: int) -> dict[str, bytes]:
    """A repeated Named* field (name 1, value 2) as a dict."""
    return {field(e, 1).decode(): field(e, 2) for e in fields(data).get(number, [])}


def extensions(message: bytes, number: int) -> dict[str, Any]:
    """The vendor extensions (NamedAny: an Any's YAML text, field 2)."""
    return {k: yaml.safe_load(field(v, 2)) for k, v in named(message, number).items()}


def test_the_protobuf_document_has_every_definition() -> None:
    document = openapi_v2_protobuf()
    assert field(document, 1) == b"2.0"  # Document.swagger
    definitions = named(field(document, 9), 1)  # Document.definitions, NamedSchema
    assert list(definitions) == list(openapi_v2()["definitions"])
    clusters = REGISTRY.info("cluster.karmada.io/v1alpha1", "Cluster")
    cluster = definitions["io.karmada.cluster.v1alpha1.Cluster"]
    assert fields(field(cluster, 22))[1] == [b"object"]  # Schema.type: TypeItem
    assert extensions(cluster, 31) == {"x-kubernetes-group-version-kind": [gvk(clusters)]}
    meta = named(field(definitions[OBJECT_META], 25), 1)  # Schema.properties
    labels = field(meta["labels"], 21, 1)  # additionalProperties: AdditionalPropertiesItem
    assert fields(field(labels, 22))[1] == [b"string"]
    finalizers = meta["finalizers"]
    assert extensions(finalizers, 31) == {"x-kubernetes-patch-strategy": "merge"}
    assert field(finalizers, 23, 1, 22, 1) == b"string"  # items: ItemsItem, a Schema


def test_the_protobuf_document_has_every_operation() -> None:
    paths = named(field(openapi_v2_protobuf(), 8), 2)  # Document.paths: NamedPathItem
    assert list(paths) == list(openapi_v2()["paths"])
    item = paths[DEPLOYMENT]
    # PathItem.parameters: ParametersItem > Parameter > NonBodyParameter > the path's
    path_parameters = [field(p, 1, 2, 4) for p in fields(item)[9]]
    assert [(field(p, 4), field(p, 2), field(p, 1)) for p in path_parameters] == [
        (b"name", b"path", 1),
        (b"namespace", b"path", 1),
    ]
    patch = field(item, 8)  # PathItem.patch
    consumes = openapi_v2()["paths"][DEPLOYMENT]["patch"]["consumes"]
    assert fields(patch)[7] == [media.encode() for media in consumes]  # Operation.consumes
    body, *query = fields(patch)[8]  # Operation.parameters
    assert field(body, 1, 1, 5, 1) == b"#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.Patch"
    assert [field(p, 1, 2, 3, 4) for p in query] == [  # QueryParameterSubSchema.name
        b"dryRun",
        b"fieldManager",
        b"fieldValidation",
        b"force",
    ]
    deployments = REGISTRY.info("apps/v1", "Deployment")
    assert extensions(patch, 13) == {
        "x-kubernetes-action": "patch",
        "x-kubernetes-group-version-kind": gvk(deployments),
    }
    ok = named(field(patch, 9), 1)["200"]  # Operation.responses: NamedResponseValue
    assert field(ok, 1, 2, 1, 1) == b"#/definitions/io.k8s.api.apps.v1.Deployment"


@pytest.mark.parametrize(
    "accept",
    [
        "application/com.github.proto-openapi.spec.v2@v1.0+protobuf",
        "application/com.github.proto-openapi.spec.v2.v1.0+protobuf",
    ],
)
def test_v2_is_served_in_protobuf_to_who_asks(api: Api, accept: str) -> None:
    reply = api.get("/openapi/v2", headers={"Accept": accept})
    assert reply.status == 200
    assert reply.content_type == "application/com.github.proto-openapi.spec.v2.v1.0+protobuf"
    assert reply.body == openapi_v2_protobuf()


def test_v2_is_served_in_json_to_the_others(api: Api) -> None:
    for accept in ("application/json", "*/*", ""):
        reply = api.get("/openapi/v2", headers={"Accept": accept})
        assert (reply.status, reply.content_type) == (200, "application/json"), accept
        assert reply.json == openapi_v2()
    assert api.get("/openapi/v2", headers={"Accept": "text/html"}).status == 406


def test_the_documents_are_made_once() -> None:
    assert openapi_v3("apps", "v1") is openapi_v3("apps", "v1")
    assert openapi_v2() is openapi_v2()
    assert openapi_v2_protobuf() is openapi_v2_protobuf()
