"""Kubernetes' protobuf encoding: the request bodies of the few kinds kubectl sends that way,
and the OpenAPI v2 document kubectl reads.

client-go's typed clients write protobuf (`application/vnd.kubernetes.protobuf`) and take
JSON back, so `kubectl create namespace|configmap|secret|serviceaccount` send it. The body
is the magic `k8s\\x00` and a runtime.Unknown (typeMeta 1, raw 2) whose raw bytes are the
object's own message. Only the messages of those kinds are known here (field numbers from
k8s.io/api's generated.proto), and of the access reviews, CertificateSigningRequests and
TokenRequests `kubectl auth`, `kubectl certificate` and `kubectl create token` send; any
other kind is refused with 415, as any other media type.

/openapi/v2 is gnostic's openapi.v2.Document message (github.com/google/gnostic-models,
openapiv2/OpenAPIv2.proto), written from the JSON document by a table per message (`_Shape`)
of the fields a Kubernetes document uses.
"""

from __future__ import annotations

import base64
import json
import struct
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from fleetwarden.api.errors import BadRequest
from fleetwarden.api.meta import format_time

PROTOBUF = "application/vnd.kubernetes.protobuf"
_MAGIC = b"k8s\x00"


@dataclass(frozen=True)
class Field:
    name: str
    # "string", "bytes" (base64 in JSON), "raw", "bool", "int", "time", a message's fields,
    # or ("map", the values' type)
    type: Any
    repeated: bool = False


Message = Mapping[int, Field]

_OWNER_REFERENCE: Message = {
    1: Field("kind", "string"),
    3: Field("name", "string"),
    4: Field("uid", "string"),
    5: Field("apiVersion", "string"),
    6: Field("controller", "bool"),
    7: Field("blockOwnerDeletion", "bool"),
}
_OBJECT_META: Message = {
    1: Field("name", "string"),
    2: Field("generateName", "string"),
    3: Field("namespace", "string"),
    5: Field("uid", "string"),
    6: Field("resourceVersion", "string"),
    7: Field("generation", "int"),
    8: Field("creationTimestamp", "time"),
    9: Field("deletionTimestamp", "time"),
    10: Field("deletionGracePeriodSeconds", "int"),
    11: Field("labels", ("map", "string")),
    12: Field("annotations", ("map", "string")),
    13: Field("ownerReferences", _OWNER_REFERENCE, repeated=True),
    14: Field("finalizers", "string", repeated=True),
}
_META = Field("metadata", _OBJECT_META)
_REFERENCE: Message = {
    1: Field("kind", "string"),
    2: Field("namespace", "string"),
    3: Field("name", "string"),
    4: Field("uid", "string"),
    5: Field("apiVersion", "string"),
    6: Field("resourceVersion", "string"),
    7: Field("fieldPath", "string"),
}
_EXTRA_VALUE: Message = {1: Field("items", "string", repeated=True)}
_RESOURCE_ATTRIBUTES: Message = {
    1: Field("namespace", "string"),
    2: Field("verb", "string"),
    3: Field("group", "string"),
    4: Field("version", "string"),
    5: Field("resource", "string"),
    6: Field("subresource", "string"),
    7: Field("name", "string"),
}
_ACCESS_REVIEW_SPEC: Message = {
    1: Field("resourceAttributes", _RESOURCE_ATTRIBUTES),
    2: Field("nonResourceAttributes", {1: Field("path", "string"), 2: Field("verb", "string")}),
    3: Field("user", "string"),
    4: Field("groups", "string", repeated=True),
    5: Field("extra", ("map", "strings")),
    6: Field("uid", "string"),
}
_ACCESS_REVIEW: Message = {1: _META, 2: Field("spec", _ACCESS_REVIEW_SPEC)}
_CSR_CONDITION: Message = {
    1: Field("type", "string"),
    6: Field("status", "string"),
    2: Field("reason", "string"),
    3: Field("message", "string"),
    4: Field("lastUpdateTime", "time"),
    5: Field("lastTransitionTime", "time"),
}
KINDS: dict[tuple[str, str], Message] = {
    ("v1", "Namespace"): {
        1: _META,
        2: Field("spec", {1: Field("finalizers", "string", repeated=True)}),
        3: Field("status", {1: Field("phase", "string")}),
    },
    ("v1", "ConfigMap"): {
        1: _META,
        2: Field("data", ("map", "string")),
        3: Field("binaryData", ("map", "bytes")),
        4: Field("immutable", "bool"),
    },
    ("v1", "Secret"): {
        1: _META,
        2: Field("data", ("map", "bytes")),
        3: Field("type", "string"),
        4: Field("stringData", ("map", "string")),
        5: Field("immutable", "bool"),
    },
    # kubectl auth can-i, can-i --list and whoami.
    ("authorization.k8s.io/v1", "SelfSubjectAccessReview"): _ACCESS_REVIEW,
    ("authorization.k8s.io/v1", "SubjectAccessReview"): _ACCESS_REVIEW,
    ("authorization.k8s.io/v1", "LocalSubjectAccessReview"): _ACCESS_REVIEW,
    ("authorization.k8s.io/v1", "SelfSubjectRulesReview"): {
        1: _META,
        2: Field("spec", {1: Field("namespace", "string")}),
    },
    ("authentication.k8s.io/v1", "SelfSubjectReview"): {1: _META},
    # kubectl certificate approve|deny.
    ("certificates.k8s.io/v1", "CertificateSigningRequest"): {
        1: _META,
        2: Field(
            "spec",
            {
                1: Field("request", "bytes"),
                7: Field("signerName", "string"),
                8: Field("expirationSeconds", "int"),
                5: Field("usages", "string", repeated=True),
                2: Field("username", "string"),
                3: Field("uid", "string"),
                4: Field("groups", "string", repeated=True),
                6: Field("extra", ("map", "strings")),
            },
        ),
        3: Field(
            "status",
            {
                1: Field("conditions", _CSR_CONDITION, repeated=True),
                2: Field("certificate", "bytes"),
            },
        ),
    },
    # kubectl create token.
    ("authentication.k8s.io/v1", "TokenRequest"): {
        1: _META,
        2: Field(
            "spec",
            {
                1: Field("audiences", "string", repeated=True),
                4: Field("expirationSeconds", "int"),
                3: Field(
                    "boundObjectRef",
                    {
                        1: Field("kind", "string"),
                        2: Field("apiVersion", "string"),
                        3: Field("name", "string"),
                        4: Field("uid", "string"),
                    },
                ),
            },
        ),
    },
    ("v1", "ServiceAccount"): {
        1: _META,
        2: Field("secrets", _REFERENCE, repeated=True),
        3: Field("imagePullSecrets", {1: Field("name", "string")}, repeated=True),
        4: Field("automountServiceAccountToken", "bool"),
    },
}
_UNKNOWN: Message = {
    1: Field("typeMeta", {1: Field("apiVersion", "string"), 2: Field("kind", "string")}),
    2: Field("raw", "raw"),
}
_TIME: Message = {1: Field("seconds", "int"), 2: Field("nanos", "int")}
_MAP_ENTRY = {1: "key", 2: "value"}


class _Malformed(Exception):
    pass


def decode(body: bytes) -> dict[str, Any] | None:
    """The object in a protobuf request body, as JSON would give it; None for a kind whose
    message is not known here. BadRequest for a body that is not valid protobuf."""
    if not body.startswith(_MAGIC):
        raise BadRequest("the protobuf body does not start with the Kubernetes magic number")
    try:
        envelope = _message(memoryview(body)[len(_MAGIC) :], _UNKNOWN)
        type_meta = envelope.get("typeMeta", {})
        api_version, kind = type_meta.get("apiVersion", ""), type_meta.get("kind", "")
        schema = KINDS.get((api_version, kind))
        if schema is None:
            return None
        obj = _message(memoryview(envelope.get("raw", b"")), schema)
    except (_Malformed, IndexError, ValueError) as err:
        raise BadRequest(f"the protobuf body could not be decoded: {err}") from None
    return {"apiVersion": api_version, "kind": kind, **obj}


def _message(data: memoryview, schema: Message) -> dict[str, Any]:
    obj: dict[str, Any] = {}
    pos = 0
    while pos < len(data):
        tag, pos = _varint(data, pos)
        number, wire_type = tag >> 3, tag & 7
        value: Any
        if wire_type == 0:
            value, pos = _varint(data, pos)
        elif wire_type == 2:
            length, pos = _varint(data, pos)
            value, pos = data[pos : pos + length], pos + length
            if pos > len(data):
                raise _Malformed("a field runs past the end of its message")
        elif wire_type in (1, 5):
            pos += 8 if wire_type == 1 else 4
            continue
        else:
            raise _Malformed(f"unsupported wire type {wire_type}")
        field = schema.get(number)
        if field is not None:
            _set(obj, field, value)
    return {k: v for k, v in obj.items() if v not in ("", {}, [], None)}


def _set(obj: dict[str, Any], field: Field, value: Any) -> None:
    if isinstance(field.type, tuple):  # a map: one entry per occurrence
        entry = _entry(value)
        key = bytes(entry.get("key", b"")).decode()
        raw = entry.get("value", b"")
        decoded = _scalar(field.type[1], raw)
        obj.setdefault(field.name, {})[key] = decoded
        return
    decoded = _scalar(field.type, value)
    if field.repeated:
        obj.setdefault(field.name, []).append(decoded)
    else:
        obj[field.name] = decoded


def _entry(value: memoryview) -> dict[str, Any]:
    entry: dict[str, Any] = {}
    pos = 0
    while pos < len(value):
        tag, pos = _varint(value, pos)
        length, pos = _varint(value, pos)
        entry[_MAP_ENTRY.get(tag >> 3, "")] = value[pos : pos + length]
        pos += length
    return entry


def _scalar(type_: Any, value: Any) -> Any:
    if isinstance(type_, Mapping):
        return _message(value, type_)
    if type_ == "string":
        return bytes(value).decode()
    if type_ == "raw":
        return bytes(value)
    if type_ == "bytes":
        return base64.b64encode(bytes(value)).decode()
    if type_ == "strings":  # an ExtraValue: its items
        return _message(value, _EXTRA_VALUE).get("items", [])
    if type_ == "bool":
        return bool(value)
    if type_ == "int":
        return value - (1 << 64) if value >= 1 << 63 else value
    time = _message(value, _TIME)
    seconds = time.get("seconds", 0)
    return format_time(datetime.fromtimestamp(seconds, UTC)) if seconds else None


def _varint(data: memoryview, pos: int) -> tuple[int, int]:
    result = shift = 0
    while True:
        byte = data[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return result, pos
        shift += 7
        if shift > 63:
            raise _Malformed("a varint is too long")


# --- encoding: the OpenAPI v2 document --------------------------------------------------------

# kubectl (1.20 and 1.32 alike) asks for the document by the first name, which Go's mime
# package cannot parse as a Content-Type: kube-openapi's handler names its reply by the
# second, which it takes too.
OPENAPI_V2_ACCEPTED = "application/com.github.proto-openapi.spec.v2@v1.0+protobuf"
OPENAPI_V2 = "application/com.github.proto-openapi.spec.v2.v1.0+protobuf"

# Writes a JSON value as the field of the given number (a repeated one as several fields).
_Encoder = Callable[[int, Any], bytes]


@dataclass(frozen=True)
class _Shape:
    """How a JSON object maps onto a message: the field number and encoder of each key; the
    field of the `x-` vendor extensions (a repeated NamedAny; 0 for none); and for a JSON
    object used as a map, the field that takes every other key as a Named* entry."""

    fields: Mapping[str, tuple[int, _Encoder]]
    extensions: int = 0
    named: tuple[int, _Encoder] | None = None

    def encode(self, obj: Mapping[str, Any]) -> bytes:
        out = bytearray()
        for key, value in obj.items():
            if key in self.fields:
                number, encoder = self.fields[key]
                out += encoder(number, value)
            elif key.startswith("x-") and self.extensions:
                out += _named_field(self.extensions, key, _any, value)
            elif self.named is not None:
                out += _named_field(self.named[0], key, self.named[1], value)
            else:
                raise ValueError(f"{key!r} has no field in the message")
        return bytes(out)


def encode_openapi_v2(document: Mapping[str, Any]) -> bytes:
    """An OpenAPI v2 document (JSON, as parsed) as gnostic's Document message."""
    return _DOCUMENT.encode(document)


def _encode_varint(value: int) -> bytes:
    value &= (1 << 64) - 1  # a negative int64 takes ten bytes, as in Go
    out = bytearray()
    while value > 0x7F:
        out.append(value & 0x7F | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def _length_delimited(number: int, payload: bytes) -> bytes:
    return _encode_varint(number << 3 | 2) + _encode_varint(len(payload)) + payload


def _string(number: int, value: str) -> bytes:
    return _length_delimited(number, value.encode())


def _int(number: int, value: int) -> bytes:
    return _encode_varint(number << 3) + _encode_varint(int(value))


_bool = _int  # 0 or 1


def _double(number: int, value: float) -> bytes:
    return _encode_varint(number << 3 | 1) + struct.pack("<d", value)


def _any(number: int, value: Any) -> bytes:
    """gnostic's Any: the value as YAML text (field 2), which JSON is."""
    return _length_delimited(number, _string(2, json.dumps(value)))


def _named_field(number: int, name: str, encoder: _Encoder, value: Any) -> bytes:
    return _length_delimited(number, _string(1, name) + encoder(2, value))


def _repeated(encoder: _Encoder) -> _Encoder:
    """A JSON list, or a single value where OpenAPI allows one (`type`, `items`)."""

    def encode(number: int, values: Any) -> bytes:
        listed = values if isinstance(values, list) else [values]
        return b"".join(encoder(number, value) for value in listed)

    return encode


def _submessage(shape: _Shape) -> _Encoder:
    return lambda number, value: _length_delimited(number, shape.encode(value))


def _wrapper(choose: Callable[[Any], tuple[int, _Encoder]]) -> _Encoder:
    """A message that holds the JSON value in one of its fields (gnostic's oneofs and lists):
    `choose` says which, by the value."""

    def encode(number: int, value: Any) -> bytes:
        inner, encoder = choose(value)
        return _length_delimited(number, encoder(inner, value))

    return encode


_STRINGS = _repeated(_string)
_JSON_REFERENCE = _submessage(_Shape({"$ref": (1, _string), "description": (2, _string)}))


def _schema(number: int, value: Mapping[str, Any]) -> bytes:
    return _length_delimited(number, _SCHEMA_SHAPE.encode(value))  # recursive


def _primitives_items(number: int, value: Mapping[str, Any]) -> bytes:
    return _length_delimited(number, _PRIMITIVES_ITEMS.encode(value))  # recursive


def _named(number: int, encoder: _Encoder, extensions: int = 0) -> _Encoder:
    """A JSON object used as a map (definitions, properties, paths, responses)."""
    return _submessage(_Shape({}, extensions, named=(number, encoder)))


_SCHEMA_SHAPE = _Shape(
    {
        "$ref": (1, _string),
        "format": (2, _string),
        "title": (3, _string),
        "description": (4, _string),
        "default": (5, _any),
        "multipleOf": (6, _double),
        "maximum": (7, _double),
        "exclusiveMaximum": (8, _bool),
        "minimum": (9, _double),
        "exclusiveMinimum": (10, _bool),
        "maxLength": (11, _int),
        "minLength": (12, _int),
        "pattern": (13, _string),
        "maxItems": (14, _int),
        "minItems": (15, _int),
        "uniqueItems": (16, _bool),
        "maxProperties": (17, _int),
        "minProperties": (18, _int),
        "required": (19, _STRINGS),
        "enum": (20, _repeated(_any)),
        # AdditionalPropertiesItem: a schema (1) or a boolean (2)
        "additionalProperties": (
            21,
            _wrapper(lambda v: (2, _bool) if isinstance(v, bool) else (1, _schema)),
        ),
        "type": (22, _wrapper(lambda _: (1, _STRINGS))),  # TypeItem
        "items": (23, _wrapper(lambda _: (1, _repeated(_schema)))),  # ItemsItem
        "allOf": (24, _repeated(_schema)),
        "properties": (25, _named(1, _schema)),
        "discriminator": (26, _string),
        "readOnly": (27, _bool),
        "example": (30, _any),
    },
    extensions=31,
)

# A primitive value's fields, in the order every message of one numbers them.
_PRIMITIVE: dict[str, _Encoder] = {
    "type": _string, "format": _string, "items": _primitives_items,
    "collectionFormat": _string, "default": _any, "maximum": _double, "exclusiveMaximum": _bool,
    "minimum": _double, "exclusiveMinimum": _bool, "maxLength": _int, "minLength": _int,
    "pattern": _string, "maxItems": _int, "minItems": _int, "uniqueItems": _bool,
    "enum": _repeated(_any), "multipleOf": _double,
}  # fmt: skip
_PARAMETER_HEAD: dict[str, _Encoder] = {
    "required": _bool, "in": _string, "description": _string, "name": _string,
}  # fmt: skip


def _primitive(head: Mapping[str, _Encoder]) -> _Shape:
    """PrimitivesItems, or a non-body parameter's sub-schema: its own fields, then a
    primitive value's, then the vendor extensions."""
    encoders = {**head, **_PRIMITIVE}
    numbered = {key: (n, encoder) for n, (key, encoder) in enumerate(encoders.items(), 1)}
    return _Shape(numbered, extensions=len(numbered) + 1)


_PRIMITIVES_ITEMS = _primitive({})
_PATH_PARAMETER = _primitive(_PARAMETER_HEAD)  # and a header's
_QUERY_PARAMETER = _primitive({**_PARAMETER_HEAD, "allowEmptyValue": _bool})  # and formData's
_NON_BODY_PARAMETER: dict[str, tuple[int, _Encoder]] = {
    "header": (1, _submessage(_PATH_PARAMETER)),
    "formData": (2, _submessage(_QUERY_PARAMETER)),
    "query": (3, _submessage(_QUERY_PARAMETER)),
    "path": (4, _submessage(_PATH_PARAMETER)),
}
_BODY_PARAMETER = _Shape(
    {
        "description": (1, _string),
        "name": (2, _string),
        "in": (3, _string),
        "required": (4, _bool),
        "schema": (5, _schema),
    },
    extensions=6,
)


def _parameter(value: Mapping[str, Any]) -> tuple[int, _Encoder]:
    """Parameter: a body parameter (1) or a non-body one (2), which holds the sub-schema
    of its location."""
    if value["in"] == "body":
        return 1, _submessage(_BODY_PARAMETER)
    return 2, _wrapper(lambda p: _NON_BODY_PARAMETER[p["in"]])


# ParametersItem and ResponseValue: a reference (2) or the thing itself (1).
_PARAMETERS = _repeated(
    _wrapper(lambda p: (2, _JSON_REFERENCE) if "$ref" in p else (1, _wrapper(_parameter)))
)
_RESPONSE = _Shape(
    {"description": (1, _string), "schema": (2, _wrapper(lambda _: (1, _schema)))}, extensions=5
)
_RESPONSE_VALUE = _wrapper(
    lambda r: (2, _JSON_REFERENCE) if "$ref" in r else (1, _submessage(_RESPONSE))
)
_OPERATION = _Shape(
    {
        "tags": (1, _STRINGS),
        "summary": (2, _string),
        "description": (3, _string),
        "operationId": (5, _string),
        "produces": (6, _STRINGS),
        "consumes": (7, _STRINGS),
        "parameters": (8, _PARAMETERS),
        "responses": (9, _named(1, _RESPONSE_VALUE, extensions=2)),
        "schemes": (10, _STRINGS),
        "deprecated": (11, _bool),
    },
    extensions=13,
)
_VERBS = ("get", "put", "post", "delete", "options", "head", "patch")
_PATH_ITEM = _Shape(
    {
        "$ref": (1, _string),
        **{verb: (n, _submessage(_OPERATION)) for n, verb in enumerate(_VERBS, 2)},
        "parameters": (9, _PARAMETERS),
    },
    extensions=10,
)
_INFO = _Shape({"title": (1, _string), "version": (2, _string), "description": (3, _string)}, 7)
_DOCUMENT = _Shape(
    {
        "swagger": (1, _string),
        "info": (2, _submessage(_INFO)),
        "host": (3, _string),
        "basePath": (4, _string),
        "schemes": (5, _STRINGS),
        "consumes": (6, _STRINGS),
        "produces": (7, _STRINGS),
        "paths": (8, _named(2, _submessage(_PATH_ITEM), extensions=1)),
        "definitions": (9, _named(1, _schema)),
    },
    extensions=16,
)
