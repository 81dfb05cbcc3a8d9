"""Kubernetes' protobuf encoding: the request bodies of the few kinds kubectl sends that way,
and the OpenAPI v2 document kubectl reads.

client-go's typed clients write protobuf (`application/vnd.kubernetes.protobuf`) and take
JSON back, so `kubectl create namespace|configmap|secret|serviceaccount|role|rolebinding|
clusterrole|clusterrolebinding|deployment|job|cronjob|service|ingress|pdb|priorityclass|
quota|token` and `kubectl autoscale` send it.
The body is the magic `k8s\\x00` and a runtime.Unknown (typeMeta 1, raw 2) whose raw bytes
are the object's own message. Only those kinds' messages are known here (field numbers from
k8s.io/api's generated.proto), and of the access reviews and CertificateSigningRequests
`kubectl auth` and `kubectl certificate` send, each with the fields kubectl sets and those
it writes as zero values. Any other kind is refused with 415, as any other media type; so
is a known kind with a field set that is not known here, rather than stored without it.

/openapi/v2 is gnostic's openapi.v2.Document message (github.com/google/gnostic-models,
openapiv2/OpenAPIv2.proto), written from the JSON document by a table per message (`_Shape`)
of the fields a Kubernetes document uses.
"""

from __future__ import annotations

import base64
import json
import struct
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from fleetwarden.api.errors import BadRequest, StatusError
from fleetwarden.api.meta import format_time

PROTOBUF = "application/vnd.kubernetes.protobuf"
_MAGIC = b"k8s\x00"


@dataclass(frozen=True)
class Field:
    name: str
    # "string", "bytes" (base64 in JSON), "raw", "bool", "int", "time", "quantity",
    # "intstr" (an IntOrString), "skip" (read-only status: left out unread), a message's
    # fields, or ("map", the values' type)
    type: Any
    repeated: bool = False
    # Kept at its zero value: a Go pointer (set, to zero), or a field Go's JSON writes
    # without omitempty. Go writes every field, zero or not; JSON leaves the rest out.
    keep_zero: bool = False
    # A struct Go's JSON inlines: its fields are its holder's (an IngressRule's `http`).
    inline: bool = False


Message = Mapping[int, Field]

_OWNER_REFERENCE: Message = {
    1: Field("kind", "string"),
    3: Field("name", "string"),
    4: Field("uid", "string"),
    5: Field("apiVersion", "string"),
    6: Field("controller", "bool", keep_zero=True),
    7: Field("blockOwnerDeletion", "bool", keep_zero=True),
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
    10: Field("deletionGracePeriodSeconds", "int", keep_zero=True),
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
# --- the objects `kubectl create role|rolebinding|clusterrole|clusterrolebinding` send ---
_LABEL_SELECTOR: Message = {
    1: Field("matchLabels", ("map", "string")),
    2: Field(
        "matchExpressions",
        {
            1: Field("key", "string"),
            2: Field("operator", "string"),
            3: Field("values", "string", repeated=True),
        },
        repeated=True,
    ),
}
_POLICY_RULE: Message = {
    1: Field("verbs", "string", repeated=True),
    2: Field("apiGroups", "string", repeated=True),
    3: Field("resources", "string", repeated=True),
    4: Field("resourceNames", "string", repeated=True),
    5: Field("nonResourceURLs", "string", repeated=True),
}
_RULES = Field("rules", _POLICY_RULE, repeated=True)
_BINDING: Message = {
    1: _META,
    2: Field(
        "subjects",
        {
            1: Field("kind", "string"),
            2: Field("apiGroup", "string"),
            3: Field("name", "string"),
            4: Field("namespace", "string"),
        },
        repeated=True,
    ),
    3: Field(
        "roleRef",
        {1: Field("apiGroup", "string"), 2: Field("kind", "string"), 3: Field("name", "string")},
    ),
}
# --- and `kubectl create deployment|job|cronjob|service|priorityclass`: the fields it sets,
# and those of the same messages it writes as zero values (field numbers of k8s.io/api's
# generated.proto, checked against kubectl 1.32's own requests) ---------------------------
_INT_OR_STRING_FIELDS: Message = {
    1: Field("type", "int"),
    2: Field("intVal", "int"),
    3: Field("strVal", "string"),
}
_CONTAINER: Message = {
    1: Field("name", "string"),
    2: Field("image", "string"),
    3: Field("command", "string", repeated=True),
    4: Field("args", "string", repeated=True),
    5: Field("workingDir", "string"),
    6: Field(
        "ports",
        {
            1: Field("name", "string"),
            2: Field("hostPort", "int"),
            3: Field("containerPort", "int"),
            4: Field("protocol", "string"),
            5: Field("hostIP", "string"),
        },
        repeated=True,
    ),
    7: Field("env", {1: Field("name", "string"), 2: Field("value", "string")}, repeated=True),
    8: Field(
        "resources",
        {1: Field("limits", ("map", "quantity")), 2: Field("requests", ("map", "quantity"))},
    ),
    13: Field("terminationMessagePath", "string"),
    14: Field("imagePullPolicy", "string"),
    16: Field("stdin", "bool"),
    17: Field("stdinOnce", "bool"),
    18: Field("tty", "bool"),
    20: Field("terminationMessagePolicy", "string"),
}
_POD_SPEC: Message = {
    2: Field("containers", _CONTAINER, repeated=True),
    3: Field("restartPolicy", "string"),
    4: Field("terminationGracePeriodSeconds", "int", keep_zero=True),
    6: Field("dnsPolicy", "string"),
    7: Field("nodeSelector", ("map", "string")),
    8: Field("serviceAccountName", "string"),
    9: Field("serviceAccount", "string"),
    10: Field("nodeName", "string"),
    11: Field("hostNetwork", "bool"),
    12: Field("hostPID", "bool"),
    13: Field("hostIPC", "bool"),
    16: Field("hostname", "string"),
    17: Field("subdomain", "string"),
    19: Field("schedulerName", "string"),
    20: Field("initContainers", _CONTAINER, repeated=True),
    24: Field("priorityClassName", "string"),
}
_POD_TEMPLATE: Message = {1: _META, 2: Field("spec", _POD_SPEC)}
_STATUS = Field("status", "skip")  # what the controllers write: a create's is dropped
_JOB_SPEC: Message = {
    1: Field("parallelism", "int", keep_zero=True),
    2: Field("completions", "int", keep_zero=True),
    3: Field("activeDeadlineSeconds", "int", keep_zero=True),
    4: Field("selector", _LABEL_SELECTOR),
    5: Field("manualSelector", "bool", keep_zero=True),
    6: Field("template", _POD_TEMPLATE),
    7: Field("backoffLimit", "int", keep_zero=True),
    8: Field("ttlSecondsAfterFinished", "int", keep_zero=True),
    9: Field("completionMode", "string", keep_zero=True),
    10: Field("suspend", "bool", keep_zero=True),
}
_INGRESS_BACKEND: Message = {
    4: Field(
        "service",
        {
            1: Field("name", "string"),
            2: Field("port", {1: Field("name", "string"), 2: Field("number", "int")}),
        },
    ),
}
_INGRESS_PATH: Message = {
    1: Field("path", "string"),
    2: Field("backend", _INGRESS_BACKEND),
    3: Field("pathType", "string", keep_zero=True),
}
_WORKLOADS: dict[tuple[str, str], Message] = {
    ("apps/v1", "Deployment"): {
        1: _META,
        2: Field(
            "spec",
            {
                1: Field("replicas", "int", keep_zero=True),
                2: Field("selector", _LABEL_SELECTOR),
                3: Field("template", _POD_TEMPLATE),
                4: Field(
                    "strategy",
                    {
                        1: Field("type", "string"),
                        2: Field(
                            "rollingUpdate",
                            {1: Field("maxUnavailable", "intstr"), 2: Field("maxSurge", "intstr")},
                        ),
                    },
                ),
                5: Field("minReadySeconds", "int"),
                6: Field("revisionHistoryLimit", "int", keep_zero=True),
                7: Field("paused", "bool"),
                9: Field("progressDeadlineSeconds", "int", keep_zero=True),
            },
        ),
        3: _STATUS,
    },
    ("batch/v1", "Job"): {1: _META, 2: Field("spec", _JOB_SPEC), 3: _STATUS},
    ("batch/v1", "CronJob"): {
        1: _META,
        2: Field(
            "spec",
            {
                1: Field("schedule", "string"),
                2: Field("startingDeadlineSeconds", "int", keep_zero=True),
                3: Field("concurrencyPolicy", "string"),
                4: Field("suspend", "bool", keep_zero=True),
                5: Field("jobTemplate", {1: _META, 2: Field("spec", _JOB_SPEC)}),
                6: Field("successfulJobsHistoryLimit", "int", keep_zero=True),
                7: Field("failedJobsHistoryLimit", "int", keep_zero=True),
                8: Field("timeZone", "string", keep_zero=True),
            },
        ),
        3: _STATUS,
    },
    ("v1", "Service"): {
        1: _META,
        2: Field(
            "spec",
            {
                1: Field(
                    "ports",
                    {
                        1: Field("name", "string"),
                        2: Field("protocol", "string"),
                        3: Field("port", "int"),
                        4: Field("targetPort", "intstr"),
                        5: Field("nodePort", "int"),
                    },
                    repeated=True,
                ),
                2: Field("selector", ("map", "string")),
                3: Field("clusterIP", "string"),
                4: Field("type", "string"),
                10: Field("externalName", "string"),
            },
        ),
        3: _STATUS,
    },
    ("networking.k8s.io/v1", "Ingress"): {
        1: _META,
        2: Field(
            "spec",
            {
                1: Field("defaultBackend", _INGRESS_BACKEND),
                2: Field(
                    "tls",
                    {1: Field("hosts", "string", repeated=True), 2: Field("secretName", "string")},
                    repeated=True,
                ),
                3: Field(
                    "rules",
                    {
                        1: Field("host", "string"),
                        2: Field(
                            "",
                            {1: Field("http", {1: Field("paths", _INGRESS_PATH, repeated=True)})},
                            inline=True,
                        ),
                    },
                    repeated=True,
                ),
                4: Field("ingressClassName", "string", keep_zero=True),
            },
        ),
        3: _STATUS,
    },
    ("policy/v1", "PodDisruptionBudget"): {
        1: _META,
        2: Field(
            "spec",
            {
                1: Field("minAvailable", "intstr", keep_zero=True),
                2: Field("selector", _LABEL_SELECTOR),
                3: Field("maxUnavailable", "intstr", keep_zero=True),
            },
        ),
        3: _STATUS,
    },
    ("autoscaling/v1", "HorizontalPodAutoscaler"): {
        1: _META,
        2: Field(
            "spec",
            {
                1: Field(
                    "scaleTargetRef",
                    {
                        1: Field("kind", "string"),
                        2: Field("name", "string"),
                        3: Field("apiVersion", "string"),
                    },
                ),
                2: Field("minReplicas", "int", keep_zero=True),
                3: Field("maxReplicas", "int", keep_zero=True),
                4: Field("targetCPUUtilizationPercentage", "int", keep_zero=True),
            },
        ),
        3: _STATUS,
    },
    ("v1", "ResourceQuota"): {
        1: _META,
        2: Field(
            "spec",
            {
                1: Field("hard", ("map", "quantity")),
                2: Field("scopes", "string", repeated=True),
            },
        ),
        3: _STATUS,
    },
    ("scheduling.k8s.io/v1", "PriorityClass"): {
        1: _META,
        2: Field("value", "int", keep_zero=True),
        3: Field("globalDefault", "bool"),
        4: Field("description", "string"),
        5: Field("preemptionPolicy", "string", keep_zero=True),
    },
}
_RBAC = "rbac.authorization.k8s.io/v1"
KINDS: dict[tuple[str, str], Message] = {
    (_RBAC, "Role"): {1: _META, 2: _RULES},
    (_RBAC, "ClusterRole"): {
        1: _META,
        2: _RULES,
        3: Field(
            "aggregationRule", {1: Field("clusterRoleSelectors", _LABEL_SELECTOR, repeated=True)}
        ),
    },
    (_RBAC, "RoleBinding"): _BINDING,
    (_RBAC, "ClusterRoleBinding"): _BINDING,
    **_WORKLOADS,
    ("v1", "Namespace"): {
        1: _META,
        2: Field("spec", {1: Field("finalizers", "string", repeated=True)}),
        3: Field("status", {1: Field("phase", "string")}),
    },
    ("v1", "ConfigMap"): {
        1: _META,
        2: Field("data", ("map", "string")),
        3: Field("binaryData", ("map", "bytes")),
        4: Field("immutable", "bool", keep_zero=True),
    },
    ("v1", "Secret"): {
        1: _META,
        2: Field("data", ("map", "bytes")),
        3: Field("type", "string"),
        4: Field("stringData", ("map", "string")),
        5: Field("immutable", "bool", keep_zero=True),
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
                8: Field("expirationSeconds", "int", keep_zero=True),
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
                4: Field("expirationSeconds", "int", keep_zero=True),
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
        4: Field("automountServiceAccountToken", "bool", keep_zero=True),
    },
}
_UNKNOWN: Message = {
    1: Field("typeMeta", {1: Field("apiVersion", "string"), 2: Field("kind", "string")}),
    2: Field("raw", "raw"),
}
_TIME: Message = {1: Field("seconds", "int"), 2: Field("nanos", "int")}
_MAP_ENTRY = {1: "key", 2: "value"}
# How deep an unknown field is looked into for zero values (Go's own messages nest far less).
_MAX_UNKNOWN_DEPTH = 32


class _Malformed(Exception):
    pass


class _Unknown(Exception):
    """A field this decoder does not know, holding a value."""


class UnknownField(StatusError):
    """415: a protobuf body with a field not known here; JSON takes it whole."""

    code = 415
    reason = "UnsupportedMediaType"


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
    except _Unknown as unknown:
        raise UnknownField(
            f"the protobuf {kind} has a field this server does not decode ({unknown}): send "
            "it as application/json (kubectl apply -f) instead"
        ) from None
    return {"apiVersion": api_version, "kind": kind, **obj}


def _fields(data: memoryview) -> Iterator[tuple[int, int, Any]]:
    """(number, wire type, value) of each field: a varint's int, a length-delimited field's
    bytes, a fixed one's bytes."""
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
            size = 8 if wire_type == 1 else 4
            value, pos = data[pos : pos + size], pos + size
        else:
            raise _Malformed(f"unsupported wire type {wire_type}")
        yield number, wire_type, value


def _message(data: memoryview, schema: Message, path: str = "") -> dict[str, Any]:
    """The message as JSON would give it. A field not known here is refused unless it holds
    Go's zero value (which Go writes for every field it has): nothing sent is dropped."""
    obj: dict[str, Any] = {}
    for number, wire_type, value in _fields(data):
        field = schema.get(number)
        if field is None:
            if not _zero(wire_type, value):
                raise _Unknown(f"{path or 'the object'}'s field {number}")
        elif field.type != "skip":
            _set(obj, field, value, f"{path}.{field.name}" if path else field.name)
    # A message sent is kept, empty or not, as Go's JSON writes a struct (`resources: {}`).
    kept = {f.name for f in schema.values() if f.keep_zero or isinstance(f.type, Mapping)}
    return {k: v for k, v in obj.items() if k in kept or not _empty(v)}


def _empty(value: Any) -> bool:
    """Go's zero value, which JSON leaves out (a list holding "" is no zero: [""] is the
    core API group)."""
    return (
        value is None
        or value is False
        or (not isinstance(value, bool) and value in ("", 0, {}, []))
    )


def _zero(wire_type: int, value: Any, depth: int = 0) -> bool:
    """Whether a field holds a zero value whatever its type: 0, nothing, or a message all of
    whose fields are zero. Nested past any Kubernetes message (a stranger's body can nest a
    million deep in 3 MiB), it is taken for a value: refused, not recursed into."""
    if wire_type == 0:
        return bool(value == 0)
    if not any(bytes(value)):
        return True
    if wire_type != 2 or depth >= _MAX_UNKNOWN_DEPTH:
        return False
    try:
        return all(_zero(t, v, depth + 1) for _, t, v in _fields(value))
    except (_Malformed, IndexError):
        return False  # not a message: a string or bytes of its own


def _set(obj: dict[str, Any], field: Field, value: Any, path: str) -> None:
    if isinstance(field.type, tuple):  # a map: one entry per occurrence
        entry = _entry(value)
        key = bytes(entry.get("key", b"")).decode()
        raw = entry.get("value", b"")
        decoded = _scalar(field.type[1], raw, path)
        obj.setdefault(field.name, {})[key] = decoded
        return
    decoded = _scalar(field.type, value, path)
    if field.inline:
        obj.update(decoded)
    elif field.repeated:
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


def _scalar(type_: Any, value: Any, path: str = "") -> Any:
    if isinstance(type_, Mapping):
        return _message(value, type_, path)
    if type_ == "quantity":  # resource.Quantity: its string
        return _message(value, {1: Field("string", "string")}).get("string", "")
    if type_ == "intstr":
        held = _message(value, _INT_OR_STRING_FIELDS, path)
        return held.get("strVal", "") if held.get("type") == 1 else held.get("intVal", 0)
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
