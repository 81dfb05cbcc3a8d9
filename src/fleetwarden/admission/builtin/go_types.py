"""Built-in kinds decoded as kube-apiserver decodes them: into their Go types.

The types are the official Python client's (kubernetes.client.models): every model class
names its attributes' types (`openapi_types`: 'V1DeploymentSpec', 'List[V1Container]',
'Dict[str, str]', 'int', 'str', 'bool', 'datetime', 'bytes', 'object') and JSON names
(`attribute_map`). What the client's types leave out is taken from k8s.io/api by JSON name,
over the kinds served here: which integers are int64 (the others are int32), which strings
are resource.Quantity (a number passes) and which `object`s are intstr.IntOrString (the
others are raw JSON, taken as given).

As the API server's decoder (sigs.k8s.io/json, case-sensitive) does, a field the type does
not declare is dropped, and reported for field validation; a null leaves a field unset; a
value of the wrong type fails the whole request with a 400 naming the first one found, in
encoding/json's words: `json: cannot unmarshal array into Go struct field ConfigMap.data of
type map[string]string`. Go's named string types (v1.Protocol...) are printed as `string`.
"""

from __future__ import annotations

import binascii
import re
from base64 import b64decode
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cache
from typing import Any

from fleetwarden.admission.chain import Decode
from fleetwarden.admission.golang import go_quote
from fleetwarden.api.errors import DecodeError, Path
from fleetwarden.api.meta import parse_time
from fleetwarden.semantics.quantity import QuantityError, parse_quantity

_INT64 = frozenset({
    "activeDeadlineSeconds", "capacity", "defaultUser", "deletionGracePeriodSeconds",
    "expirationSeconds", "fsGroup", "generation", "gid", "observedGeneration", "runAsGroup",
    "runAsUser", "seconds", "sizeBytes", "startingDeadlineSeconds", "supplementalGroups",
    "terminationGracePeriodSeconds", "tolerationSeconds", "uid", "user",
})  # fmt: skip
_QUANTITIES = frozenset({
    "allocatable", "allocatedResources", "capacity", "default", "defaultRequest", "divisor",
    "hard", "limits", "max", "maxLimitRequestRatio", "min", "overhead", "perContainer",
    "perPod", "quantity", "requests", "sizeLimit", "used",
})  # fmt: skip
_INT_OR_STRING = frozenset({"port", "targetPort", "maxSurge", "maxUnavailable", "minAvailable"})
_INT_RANGE = {"int32": 1 << 31, "int64": 1 << 63}
_LIST = re.compile(r"^(?:List\[|list\[)(.*)\]$")
_MAP = re.compile(r"^(?:Dict\[str, |dict\(str, )(.*)[\])]$")
# V1DeploymentSpec, V1beta1X, CoreV1Event: the Go package (v1) and the type's own name.
_MODEL = re.compile(r"^(?:[A-Z][a-z]+)?(V\d+(?:alpha\d+|beta\d+)?)(\w+)$")
_TIME_LAYOUT = '"2006-01-02T15:04:05Z07:00"'


class _DecodeError(Exception):
    """The decoder's error text, before the API server says which kind it was decoding."""


@dataclass(frozen=True)
class _Type:
    kind: str  # string, int, float, bool, time, bytes, quantity, int-or-string, raw,
    #            list, map or struct
    go: str  # the Go type, as encoding/json names it in errors
    item: _Type | None = None  # a list's or map's values
    model: str = ""  # a struct's Python client class


# Where a value is, kept cheap (most values are never reported): None for the object, else
# (where its holder is, its step there, the Go struct whose field it is). A step is a field's
# JSON name (with its struct), a list index, or a map key (with no struct).
_At = tuple[Any, str | int, str] | None


def _path(at: _At) -> Path:
    if at is None:
        return Path()
    holder, step, struct = at
    if isinstance(step, int):
        return _path(holder).index(step)
    return _path(holder).child(step) if struct else _path(holder).key(step)


def _go_field(at: _At) -> tuple[str, str]:
    """What encoding/json's errors name: the struct holding the innermost field, and the JSON
    names of the fields from the object down to it (no indices, no keys)."""
    names, struct = [], ""
    while at is not None:
        at, step, holder = at
        if holder:
            names.append(str(step))
            struct = struct or holder
    return struct, ".".join(reversed(names))


def decoder(kind: str, version: str, model: str) -> Decode:
    """The decoding of one kind, whose Go type the client's `model` class describes."""

    def decode(data: Mapping[str, Any]) -> tuple[dict[str, Any], list[str]]:
        pruned: list[str] = []
        try:
            obj = _struct(_struct_type(model), data, None, pruned)
        except _DecodeError as exc:
            raise DecodeError(kind, version, str(exc)) from None
        return obj, pruned

    return decode


# --- the types -----------------------------------------------------------------------------------


@cache
def _models() -> Any:
    # Imported on first use: the client's models take a while to load.
    from kubernetes.client import models

    return models


@cache
def _struct_type(model: str) -> _Type:
    match = _MODEL.match(model)
    if match is None or not hasattr(_models(), model):
        raise ValueError(f"no Python client model {model!r}")
    return _Type("struct", f"{match[1].lower()}.{match[2]}", model=model)


@cache
def _type(spec: str, name: str) -> _Type:
    """The type of the field `name` that the client types `spec`."""
    if match := _LIST.match(spec):
        item = _type(match[1], name)
        return _Type("list", f"[]{item.go}", item)
    if match := _MAP.match(spec):
        item = _type(match[1], name)
        go = "v1.ResourceList" if item.kind == "quantity" else f"map[string]{item.go}"
        return _Type("map", go, item)
    if spec == "str" and name in _QUANTITIES:
        return _Type("quantity", "resource.Quantity")
    if spec == "int":
        return _Type("int", "int64" if name in _INT64 else "int32")
    if spec == "object":
        return _Type("int-or-string", "int32") if name in _INT_OR_STRING else _Type("raw", "")
    scalar = _SCALARS.get(spec)
    return scalar if scalar is not None else _struct_type(spec)


_SCALARS = {
    "str": _Type("string", "string"),
    "bool": _Type("bool", "bool"),
    "float": _Type("float", "float64"),
    "datetime": _Type("time", "string"),  # metav1.Time unmarshals a string first
    "bytes": _Type("bytes", "[]uint8"),
}


@cache
def _fields(model: str) -> dict[str, _Type]:
    """A struct's fields by JSON name."""
    cls = getattr(_models(), model)
    names: dict[str, str] = cls.attribute_map
    return {names[attr]: _type(spec, names[attr]) for attr, spec in cls.openapi_types.items()}


# --- decoding ------------------------------------------------------------------------------------


def _value(t: _Type, value: Any, at: _At, pruned: list[str]) -> Any:
    if t.kind == "struct":
        return _struct(t, value, at, pruned)
    if t.kind in ("list", "map"):
        return _collection(t, value, at, pruned)
    return _SCALAR_DECODERS[t.kind](t, value, at)


def _struct(t: _Type, value: Any, at: _At, pruned: list[str]) -> dict[str, Any]:
    if not isinstance(value, Mapping):
        raise _mismatch(t, value, at)
    fields, name = _fields(t.model), t.go.split(".", 1)[1]
    out: dict[str, Any] = {}
    for key, item in value.items():
        field = fields.get(key)
        if field is None:
            pruned.append(str(_path(at).child(key)))
        elif item is not None:  # null leaves the field unset
            out[key] = _value(field, item, (at, key, name), pruned)
    return out


def _collection(t: _Type, value: Any, at: _At, pruned: list[str]) -> Any:
    assert t.item is not None
    item_type = t.item
    if t.kind == "list" and isinstance(value, list):
        return [_item(item_type, v, (at, i, ""), pruned) for i, v in enumerate(value)]
    if t.kind == "map" and isinstance(value, Mapping):
        return {k: _item(item_type, v, (at, k, ""), pruned) for k, v in value.items()}
    raise _mismatch(t, value, at)


def _item(t: _Type, value: Any, at: _At, pruned: list[str]) -> Any:
    """A list's or map's value: a null is the type's zero value."""
    if value is None:
        return {} if t.kind == "struct" else _ZERO.get(t.kind)
    return _value(t, value, at, pruned)


_ZERO: dict[str, Any] = {"string": "", "int": 0, "float": 0, "bool": False}


def _json_type(value: Any) -> str:
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    return "array" if isinstance(value, list) else "object"


def _mismatch(t: _Type, value: Any, at: _At, what: str | None = None) -> _DecodeError:
    """encoding/json's UnmarshalTypeError, with the field it was decoding."""
    what = what or _json_type(value)
    struct, fields = _go_field(at)
    where = f"Go struct field {struct}.{fields}" if fields else "Go value"
    return _DecodeError(f"json: cannot unmarshal {what} into {where} of type {t.go}")


def _int(t: _Type, value: Any, at: _At) -> int:
    """An integral float passes (YAML's 2.0); a fraction or an overflow is refused."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise _mismatch(t, value, at)
    limit = _INT_RANGE[t.go]
    if (isinstance(value, float) and not value.is_integer()) or not -limit <= value < limit:
        raise _mismatch(t, value, at, f"number {value}")
    return int(value)


def _scalar(*types: type) -> Callable[[_Type, Any, _At], Any]:
    """A value of one of these Python types; a bool is a number for no one."""

    def check(t: _Type, value: Any, at: _At) -> Any:
        if isinstance(value, bool) is not (bool in types) or not isinstance(value, types):
            raise _mismatch(t, value, at)
        return value

    return check


_string = _scalar(str)


def _time(t: _Type, value: Any, at: _At) -> str:
    text = _string(t, value, at)
    try:
        parse_time(text)
    except ValueError:
        raise _DecodeError(
            f"parsing time {go_quote(text)} as {_TIME_LAYOUT}: cannot parse {go_quote(text)} "
            'as "2006"'
        ) from None
    return str(text)


def _bytes(t: _Type, value: Any, at: _At) -> str:
    text: str = _string(t, value, at)
    offset = _base64_error_offset(text)
    if offset is not None:
        raise _DecodeError(f"illegal base64 data at input byte {offset}")
    return text


def _base64_error_offset(text: str) -> int | None:
    """Where base64.StdEncoding (line breaks skipped) fails on the text, or None."""
    try:
        b64decode(text.replace("\r", "").replace("\n", ""), validate=True)
    except binascii.Error:
        bad = re.search(r"[^A-Za-z0-9+/=\r\n]|=[^=\r\n]", text)
        return bad.start() if bad else len(text) - len(text) % 4
    return None


def _quantity(t: _Type, value: Any, at: _At) -> Any:
    """resource.Quantity takes a string or a number; anything else fails as its parse does."""
    text = value if isinstance(value, str | int | float) and not isinstance(value, bool) else "?"
    try:
        parse_quantity(text)
    except QuantityError as exc:
        raise _DecodeError(str(exc)) from None
    return value


def _int_or_string(t: _Type, value: Any, at: _At) -> Any:
    """intstr.IntOrString: a string as it is, else an int32."""
    return value if isinstance(value, str) else _int(t, value, at)


_SCALAR_DECODERS: dict[str, Callable[[_Type, Any, _At], Any]] = {
    "string": _string,
    "bool": _scalar(bool),
    "float": _scalar(int, float),
    "int": _int,
    "time": _time,
    "bytes": _bytes,
    "quantity": _quantity,
    "int-or-string": _int_or_string,
    "raw": lambda t, value, at: value,
}
