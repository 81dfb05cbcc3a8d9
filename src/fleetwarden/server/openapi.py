"""The OpenAPI documents of the kinds fleetwarden serves: /openapi/v2 and /openapi/v3.

What kubectl 1.32 does with them (k8s.io/kubectl pkg/cmd/apply, cli-runtime's
query_param_verifier_v3.go):

- To validate (`--validate=strict`, the default) it reads the group-version's v3 document
  and looks for the kind's PATCH operation (found by `x-kubernetes-group-version-kind`)
  with a `fieldValidation` query parameter. Finding it, it leaves validation to the server
  and sends `fieldValidation=Strict`; otherwise it validates on its own against the v2
  document, which it reads as protobuf only.
- To patch an object `kubectl apply` created before, it takes a strategic merge patch only
  where the PATCH operation's request body lists that media type, and then computes the
  patch from the v3 component schema, which must then hold every field of the object;
  failing that it uses the Go types it was built with (every built-in kind), and a JSON
  merge patch for any other kind.

So every kind has its PATCH operation with `fieldValidation`, and no request body lists
the strategic merge patch: the schemas here are not complete enough to compute one, and
kubectl's own types give the upstream patch for the built-in kinds, which the server takes.
The schemas carry what `kubectl explain` shows of a kind: the standard fields, ObjectMeta,
and for built-in kinds the lists a strategic merge patch merges, with their
`x-kubernetes-patch-strategy` and `x-kubernetes-patch-merge-key` (store/merge_keys.py);
everything else is left open (`x-kubernetes-preserve-unknown-fields`).

kubectl 1.20 (Debian bookworm's kubernetes-client) knows neither v3 nor `fieldValidation`.
It reads /openapi/v2 in protobuf (protobuf.py writes it) and validates an object against
the definition whose `x-kubernetes-group-version-kind` names its kind (none: no validation),
refusing any field a schema does not list, for it knows no
`x-kubernetes-preserve-unknown-fields`; and `kubectl apply` computes the patch of a kind it
has Go types for from that definition first, warning on each apply when the definition
lacks a field the patch touches. So the v2 definitions are what kube-apiserver publishes
for a custom resource (apiextensions-apiserver's buildKubeNative, ToStructuralOpenAPIV2):
a schema that keeps unknown fields lists neither properties nor items, and has no type; a
kind that does is an object alone, which kubectl validates as such. The kinds kubectl has
types for (k8s.io/api's, io.k8s.api.*) go unnamed, so that it patches them from its types
without a word. The v2 paths are the v3 ones; kubectl 1.32 reads them only for the media
types a PATCH consumes, and finds no strategic merge patch there either.

A custom resource's v3 schema is its CRD's openAPIV3Schema for that version, with the
standard fields as apiextensions-apiserver's builder adds them; in v2 it is an object
alone (its schema may use what v2 and kubectl 1.20 have no words for).

The documents are built on first use from the kind registry, again whenever its custom
kinds change; callers share them and must not change them.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, NamedTuple

from fleetwarden.api.kinds import KindInfo
from fleetwarden.api.registry import REGISTRY, Registry
from fleetwarden.server import protobuf
from fleetwarden.store.interface import PatchType
from fleetwarden.store.merge_keys import OBJECT_META, merge_keys_for
from fleetwarden.store.patch import PatchMeta

Schema = dict[str, Any]

_META = "io.k8s.apimachinery.pkg.apis.meta.v1"
_OBJECT_META = f"{_META}.ObjectMeta"
_LIST_META = f"{_META}.ListMeta"
_PATCH = f"{_META}.Patch"
_STATUS = f"{_META}.Status"

# A strategic merge patch is left out: see the module's docstring.
_PATCH_TYPES = [t.value for t in PatchType if t is not PatchType.STRATEGIC]

# The API groups whose definitions live under io.k8s.api.<package>.
_K8S_PACKAGES = {
    "": "core",
    "apps": "apps",
    "batch": "batch",
    "autoscaling": "autoscaling",
    "policy": "policy",
}


# Each document is cached by the registry and the generation of its custom kinds it was
# built for: this many are kept.
_KEPT = 8


def openapi_v3_index(registry: Registry = REGISTRY) -> dict[str, Any]:
    """/openapi/v3: each group-version's document and the hash that names its content."""
    return _v3_index(registry, registry.generation)


def openapi_v3(group: str, version: str, registry: Registry = REGISTRY) -> dict[str, Any] | None:
    """/openapi/v3/apis/<group>/<version> (/openapi/v3/api/v1 for the core group)."""
    return _v3_documents(registry, registry.generation).get((group, version))


def openapi_v2(registry: Registry = REGISTRY) -> dict[str, Any]:
    """/openapi/v2 as JSON."""
    return _v2_document(registry, registry.generation)


def openapi_v2_protobuf(registry: Registry = REGISTRY) -> bytes:
    """/openapi/v2 as kubectl reads it: gnostic's protobuf Document."""
    return _v2_protobuf(registry, registry.generation)


def gv_path(group: str, version: str) -> str:
    """`api/v1`, `apis/apps/v1`: the key of a group-version in the v3 index."""
    return f"apis/{group}/{version}" if group else f"api/{version}"


# --- documents ------------------------------------------------------------------------------


def _kinds_by_gv(registry: Registry) -> dict[tuple[str, str], list[KindInfo]]:
    grouped: dict[tuple[str, str], list[KindInfo]] = {}
    for info in sorted(registry.kinds(), key=lambda i: (i.group, i.version, i.kind)):
        grouped.setdefault((info.group, info.version), []).append(info)
    return grouped


@lru_cache(_KEPT)
def _v3_documents(registry: Registry, generation: int) -> dict[tuple[str, str], dict[str, Any]]:
    documents = {}
    for gv, kinds in _kinds_by_gv(registry).items():
        schemas, paths = _schemas_and_paths(_V3, kinds)
        documents[gv] = {
            "openapi": "3.0.0",
            "info": {"title": "fleetwarden", "version": "unversioned"},
            "paths": paths,
            "components": {"schemas": schemas},
        }
    return documents


@lru_cache(_KEPT)
def _v3_index(registry: Registry, generation: int) -> dict[str, Any]:
    paths = {}
    for (group, version), document in _v3_documents(registry, generation).items():
        canonical = json.dumps(document, sort_keys=True, separators=(",", ":")).encode()
        digest = hashlib.sha512(canonical).hexdigest().upper()
        path = gv_path(group, version)
        paths[path] = {"serverRelativeURL": f"/openapi/v3/{path}?hash={digest}"}
    return {"paths": paths}


@lru_cache(_KEPT)
def _v2_document(registry: Registry, generation: int) -> dict[str, Any]:
    kinds = [info for infos in _kinds_by_gv(registry).values() for info in infos]
    definitions, paths = _schemas_and_paths(_V2, kinds)
    return {
        "swagger": "2.0",
        "info": {"title": "fleetwarden", "version": "unversioned"},
        "paths": paths,
        "definitions": {name: _v2_definition(name, s) for name, s in definitions.items()},
    }


@lru_cache(_KEPT)
def _v2_protobuf(registry: Registry, generation: int) -> bytes:
    return protobuf.encode_openapi_v2(_v2_document(registry, generation))


def _v2_definition(name: str, schema: Schema) -> Schema:
    """A definition for kubectl 1.20 (see the module's docstring): one that keeps unknown
    fields is an object alone, named by its kind unless kubectl has types for the kind."""
    if not schema.get(_PRESERVE):
        return _v2_schema(schema)
    described = _GVK in schema and not name.startswith("io.k8s.api.")
    return {"type": "object", **({_GVK: schema[_GVK]} if described else {})}


def _v2_schema(schema: Schema) -> Schema:
    """apiextensions-apiserver's ToStructuralOpenAPIV2: a schema that keeps unknown fields
    loses its properties and items, and its type `object`; an array left without items
    loses its type. Without a type, kubectl takes any value."""
    out = dict(schema)
    if out.get(_PRESERVE):
        out.pop("properties", None)
        out.pop("items", None)
        if out.get("type") == "object":
            del out["type"]
    if out.get("type") == "array" and "items" not in out:
        del out["type"]
    if "properties" in out:
        out["properties"] = {name: _v2_schema(s) for name, s in out["properties"].items()}
    for key in ("items", "additionalProperties"):
        if isinstance(out.get(key), dict):
            out[key] = _v2_schema(out[key])
    return out


@dataclass(frozen=True)
class _Format:
    """Where v2 and v3 differ: where definitions live, and how parameters and bodies go."""

    ref: str
    v3: bool

    def parameter(self, name: str, where: str, type_: str, required: bool = False) -> Schema:
        typed = {"type": type_, "uniqueItems": True}
        parameter = {"name": name, "in": where, **({"required": True} if required else {})}
        return {**parameter, "schema": typed} if self.v3 else {**parameter, **typed}


_V3 = _Format("#/components/schemas/", v3=True)
_V2 = _Format("#/definitions/", v3=False)


def _schemas_and_paths(
    form: _Format, kinds: Iterable[KindInfo]
) -> tuple[dict[str, Schema], dict[str, Any]]:
    schemas: dict[str, Schema] = dict(_common_schemas(form.ref))
    paths: dict[str, Any] = {}
    for info in kinds:
        schemas[_definition(info)] = _kind_schema(info, form)
        schemas[_definition(info) + "List"] = _list_schema(info, form.ref)
        for path, operations in _paths(info):
            names = [n for n in ("name", "namespace") if f"{{{n}}}" in path]
            paths[path] = {
                "parameters": [form.parameter(n, "path", "string", required=True) for n in names],
                **{verb: _operation(form, info, op) for verb, op in operations.items()},
            }
    return schemas, paths


# --- paths and operations -------------------------------------------------------------------


class _Operation(NamedTuple):
    action: str
    description: str
    body: str  # "object", "patch" or none
    listed: bool = False  # the reply is the kind's list


def _paths(info: KindInfo) -> Iterable[tuple[str, dict[str, _Operation]]]:
    prefix = f"/{gv_path(info.group, info.version)}"
    scoped = f"{prefix}/namespaces/{{namespace}}" if info.namespaced else prefix
    listing = _Operation("list", f"list or watch objects of kind {info.kind}", "", listed=True)
    yield (
        f"{scoped}/{info.plural}",
        {"get": listing, "post": _Operation("post", f"create a {info.kind}", "object")},
    )
    if info.namespaced:
        yield f"{prefix}/{info.plural}", {"get": listing}
    item = f"{scoped}/{info.plural}/{{name}}"
    yield item, _item_operations(info.kind, "", delete=True)
    if info.has_status:
        yield f"{item}/status", _item_operations(info.kind, " status of the", delete=False)


def _item_operations(kind: str, what: str, *, delete: bool) -> dict[str, _Operation]:
    operations = {
        "get": _Operation("get", f"read the{what} specified {kind}", ""),
        "put": _Operation("put", f"replace the{what} specified {kind}", "object"),
        "patch": _Operation("patch", f"partially update the{what} specified {kind}", "patch"),
    }
    if delete:
        operations["delete"] = _Operation("delete", f"delete a {kind}", "")
    return operations


def _query_parameters(action: str) -> list[tuple[str, str]]:
    """(name, type) of the query parameters the action takes."""
    if action in ("post", "put", "patch"):
        writes = [("dryRun", "string"), ("fieldManager", "string"), ("fieldValidation", "string")]
        return [*writes, ("force", "boolean")] if action == "patch" else writes
    if action == "list":
        return [
            ("labelSelector", "string"), ("fieldSelector", "string"), ("limit", "integer"),
            ("continue", "string"), ("resourceVersion", "string"), ("watch", "boolean"),
        ]  # fmt: skip
    return [("dryRun", "string")] if action == "delete" else []


def _gvk(info: KindInfo) -> dict[str, str]:
    return {"group": info.group, "kind": info.kind, "version": info.version}


def _operation(form: _Format, info: KindInfo, op: _Operation) -> dict[str, Any]:
    parameters = [form.parameter(n, "query", t) for n, t in _query_parameters(op.action)]
    operation: dict[str, Any] = {"description": op.description}
    if op.body:
        body = {"$ref": form.ref + (_PATCH if op.body == "patch" else _definition(info))}
        types = _PATCH_TYPES if op.body == "patch" else ["*/*"]
        if form.v3:
            content = {t: {"schema": body} for t in types}
            operation["requestBody"] = {"content": content, "required": True}
        else:
            parameters.insert(0, {"name": "body", "in": "body", "required": True, "schema": body})
            operation["consumes"] = types
    replied = _STATUS if op.action == "delete" else _definition(info) + "List" * op.listed
    reply = {"$ref": form.ref + replied}
    ok = {"content": {"application/json": {"schema": reply}}} if form.v3 else {"schema": reply}
    return {
        **operation,
        "parameters": parameters,
        "responses": {"200": {"description": "OK", **ok}, "401": {"description": "Unauthorized"}},
        "x-kubernetes-action": op.action,
        "x-kubernetes-group-version-kind": _gvk(info),
    }


# --- schemas --------------------------------------------------------------------------------


def _definition(info: KindInfo) -> str:
    """The definition's name as the API server names it: io.k8s.api.apps.v1.Deployment,
    and for other groups the group reversed, io.karmada.policy.v1alpha1.PropagationPolicy."""
    if info.group == "apiextensions.k8s.io":
        package = "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions"
    elif info.group in _K8S_PACKAGES or info.group.endswith(".k8s.io"):
        package = "io.k8s.api." + _K8S_PACKAGES.get(info.group, info.group.split(".")[0])
    else:
        package = ".".join(reversed(info.group.split(".")))
    return f"{package}.{info.version}.{info.kind}"


_PRESERVE = "x-kubernetes-preserve-unknown-fields"
_GVK = "x-kubernetes-group-version-kind"
_OPEN = {_PRESERVE: True}
_API_VERSION = {
    "type": "string",
    "description": "APIVersion defines the versioned schema of this representation of an "
    "object. Servers should convert recognized schemas to the latest internal value, and may "
    "reject unrecognized values. More info: https://git.k8s.io/community/contributors/devel/"
    "sig-architecture/api-conventions.md#resources",
}
_KIND = {
    "type": "string",
    "description": "Kind is a string value representing the REST resource this object "
    "represents. Servers may infer this from the endpoint the client submits requests to. "
    "Cannot be updated. In CamelCase. More info: https://git.k8s.io/community/contributors/"
    "devel/sig-architecture/api-conventions.md#types-kinds",
}


def _ref(ref: str, name: str) -> Schema:
    """A reference to a definition, as a field's schema (v3 wraps it in allOf)."""
    if ref.startswith("#/components/"):
        return {"allOf": [{"$ref": ref + name}], "default": {}}
    return {"$ref": ref + name}


def _kind_schema(info: KindInfo, form: _Format) -> Schema:
    if form.v3 and info.custom is not None and info.custom.schema is not None:
        return _custom_schema(info, info.custom.schema, form.ref)
    ref = form.ref
    merge_keys = merge_keys_for(info)
    fields = {
        path: meta for path, meta in (merge_keys or {}).items() if not path.startswith("metadata.")
    }
    properties: dict[str, Schema] = {
        "apiVersion": _API_VERSION,
        "kind": _KIND,
        "metadata": _ref(ref, _OBJECT_META),
        "spec": {"type": "object", **_OPEN},
    }
    if info.has_status:
        properties["status"] = {"type": "object", **_OPEN}
    for name, schema in _skeleton(fields).items():
        properties[name] = {**properties.get(name, {}), **schema}
    return {
        "type": "object",
        "properties": properties,
        **_OPEN,
        "x-kubernetes-group-version-kind": [_gvk(info)],
    }


def _custom_schema(info: KindInfo, schema: Mapping[str, Any], ref: str) -> Schema:
    """The CRD's schema with the standard fields it need not declare (the builder's)."""
    properties = {
        **schema.get("properties", {}),
        "apiVersion": _API_VERSION,
        "kind": _KIND,
        "metadata": _ref(ref, _OBJECT_META),
    }
    return {**schema, "type": "object", "properties": properties, _GVK: [_gvk(info)]}


def _list_schema(info: KindInfo, ref: str) -> Schema:
    return {
        "type": "object",
        "required": ["items"],
        "properties": {
            "apiVersion": _API_VERSION,
            "kind": _KIND,
            "metadata": _ref(ref, _LIST_META),
            "items": {"type": "array", "items": _ref(ref, _definition(info))},
        },
        "x-kubernetes-group-version-kind": [{**_gvk(info), "kind": info.list_kind}],
    }


def _skeleton(fields: Mapping[str, PatchMeta]) -> dict[str, Schema]:
    """The properties down to each list a strategic merge patch merges (field paths are
    dotted, list items transparent). What lies between is left untyped: it is an object or
    a list of them, and the schema does not say which."""
    root: dict[str, Schema] = {}
    for path in sorted(fields):
        *parents, leaf = path.split(".")
        properties = root
        for name in parents:
            node = properties.setdefault(name, dict(_OPEN))
            node = node.get("items", node)
            properties = node.setdefault("properties", {})
        properties[leaf] = {**properties.get(leaf, {}), **_patched_field(fields[path])}
    return root


def _patched_field(meta: PatchMeta) -> Schema:
    """A field with its x-kubernetes-patch-* extensions, typed as far as they tell."""
    strategy = ",".join(s for s in (meta.strategy, "retainKeys" * meta.retain_keys) if s)
    schema: Schema = {"x-kubernetes-patch-strategy": strategy} if strategy else {}
    if meta.merge_key:
        schema["x-kubernetes-patch-merge-key"] = meta.merge_key
    if meta.strategy == "merge":
        item = {"type": "object", **_OPEN} if meta.merge_key else {"type": "string"}
        return {"type": "array", "items": item, **schema}
    return {"type": "object", **_OPEN, **schema}


def _common_schemas(ref: str) -> dict[str, Schema]:
    def string(format_: str = "") -> Schema:
        return {"type": "string", "format": format_} if format_ else {"type": "string"}

    string_map = {"type": "object", "additionalProperties": {"type": "string", "default": ""}}
    int64 = {"type": "integer", "format": "int64"}
    object_meta: dict[str, Schema] = {
        "annotations": string_map,
        "creationTimestamp": string("date-time"),
        "deletionGracePeriodSeconds": int64,
        "deletionTimestamp": string("date-time"),
        "generateName": string(),
        "generation": int64,
        "labels": string_map,
        "managedFields": {"type": "array", "items": {"type": "object", **_OPEN}},
        "name": string(),
        "namespace": string(),
        "resourceVersion": string(),
        "selfLink": string(),
        "uid": string(),
        **_skeleton(OBJECT_META),
    }
    return {
        _OBJECT_META: {
            "type": "object",
            "description": "ObjectMeta is metadata that all persisted resources must have, "
            "which includes all objects users must create.",
            "properties": dict(sorted(object_meta.items())),
        },
        _LIST_META: {
            "type": "object",
            "properties": {
                "continue": string(),
                "remainingItemCount": int64,
                "resourceVersion": string(),
                "selfLink": string(),
            },
        },
        _PATCH: {
            "type": "object",
            "description": "Patch is provided to give a concrete name and type to the "
            "Kubernetes PATCH request body.",
        },
        _STATUS: {"type": "object", **_OPEN},
    }
