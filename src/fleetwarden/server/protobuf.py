"""Request bodies in Kubernetes' protobuf encoding, for the few kinds kubectl sends that way.

client-go's typed clients write protobuf (`application/vnd.kubernetes.protobuf`) and take
JSON back, so `kubectl create namespace|configmap|secret|serviceaccount` send it. The body
is the magic `k8s\\x00` and a runtime.Unknown (typeMeta 1, raw 2) whose raw bytes are the
object's own message. Only the messages of those kinds are known here (field numbers from
k8s.io/api's generated.proto); any other kind is refused with 415, as any other media type.
"""

from __future__ import annotations

import base64
from collections.abc import Mapping
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
