"""Custom resources against their CRD's schema: what apiextensions-apiserver does to one of a
kind it serves, with the served version's openAPIV3Schema as it was given.

First the decoder's work: fields the schema does not declare are pruned (kept under
x-kubernetes-preserve-unknown-fields, and apiVersion, kind and metadata at the root and in
x-kubernetes-embedded-resource objects); nulls the schema does not allow are dropped, or
replaced by the field's default; absent fields are defaulted, inside what exists. Then the
schema's validation, each error worded as apiextensions-apiserver turns kube-openapi's
results into field errors, in the order of admission/schema.py (an object's required
fields, then its properties as the schema lists them).

Not checked: x-kubernetes-list-type duplicates, CEL rules, allOf/anyOf/oneOf/not, and the
formats other than byte, date, date-time, uuid, ipv4, ipv6 and cidr.
"""

from __future__ import annotations

import copy
import ipaddress
import json
import re
from collections.abc import Iterator, Mapping
from datetime import date, datetime
from typing import Any

from fleetwarden.admission.chain import Plugin, Request
from fleetwarden.admission.golang import go_quote
from fleetwarden.admission.schema import is_base64
from fleetwarden.api.errors import ErrorList, FieldError, Path

Schema = Mapping[str, Any]

# What every object of a kind keeps whatever its schema, and leaves to ObjectMeta's rules.
_RESOURCE_FIELDS = ("apiVersion", "kind", "metadata")


# --- decoding: pruning, nulls, defaults ------------------------------------------------------


def prune(schema: Schema, obj: dict[str, Any]) -> list[str]:
    """Drop the object's undeclared fields; their paths, as strict decoding names them."""
    return [str(path) for path in _prune(schema, obj, Path(), resource=True)]


def _prune(schema: Schema, value: Any, path: Path, *, resource: bool = False) -> Iterator[Path]:
    if isinstance(value, list):
        items = _items(schema)
        for i, item in enumerate(value if items is not None else ()):
            yield from _prune(items or {}, item, path.index(i))
    if not isinstance(value, dict):
        return
    resource = resource or bool(schema.get("x-kubernetes-embedded-resource"))
    for key in list(value):
        if resource and key in _RESOURCE_FIELDS:
            continue
        sub = _property(schema, key)
        if sub is not None:
            yield from _prune(sub, value[key], path.child(key))
        elif not schema.get("x-kubernetes-preserve-unknown-fields"):
            del value[key]
            yield path.child(key)


def _property(schema: Schema, key: str) -> Schema | None:
    """The schema of an object's field: a declared property's, else additionalProperties'."""
    properties = schema.get("properties") or {}
    if key in properties:
        sub: Schema = properties[key]
        return sub
    extra = schema.get("additionalProperties")
    return extra if isinstance(extra, Mapping) else None


def _items(schema: Schema) -> Schema | None:
    items = schema.get("items")
    return items if isinstance(items, Mapping) else None


def apply_defaults(schema: Schema, value: Any, *, resource: bool = True) -> None:
    """Nulls the field does not allow become its default or go; absent fields with a
    default get it; then the same within every value."""
    if isinstance(value, list):
        items = _items(schema)
        for item in value if items is not None else ():
            apply_defaults(items or {}, item, resource=False)
    if not isinstance(value, dict):
        return
    for key, prop in (schema.get("properties") or {}).items():
        if key not in value and "default" in prop:
            value[key] = copy.deepcopy(prop["default"])
    for key in list(value):
        sub = None if resource and key == "metadata" else _property(schema, key)
        if sub is None:
            continue
        if value[key] is None and not sub.get("nullable"):
            if "default" not in sub:
                del value[key]
                continue
            value[key] = copy.deepcopy(sub["default"])
        apply_defaults(sub, value[key], resource=bool(sub.get("x-kubernetes-embedded-resource")))


# --- validation ------------------------------------------------------------------------------


def schema_errors(schema: Schema, value: Any, path: Path | None = None) -> ErrorList:
    """The value's errors against the schema; a value of the wrong type is not looked into."""
    path = path or Path()
    if value is None:
        allowed = schema.get("nullable") or not _types(schema)
        return [] if allowed else [_type_error(schema, path, "null")]
    actual = _json_type(value)
    if not _type_matches(_types(schema), actual, value):
        return [_type_error(schema, path, actual)]
    errs: ErrorList = []
    if isinstance(value, str):
        errs += _string_errors(schema, value, path)
    elif isinstance(value, int | float) and not isinstance(value, bool):
        errs += _number_errors(schema, value, path)
    elif isinstance(value, list):
        errs += _array_errors(schema, value, path)
    if "enum" in schema and not any(_same(value, allowed) for allowed in schema["enum"]):
        supported = [v if isinstance(v, str) else _json(v) for v in schema["enum"]]
        errs.append(path.not_supported(value, supported))
    if isinstance(value, dict):
        errs += _object_errors(schema, value, path)
    return errs


def _types(schema: Schema) -> tuple[str, ...]:
    if schema.get("x-kubernetes-int-or-string"):
        return ("integer", "string")
    given = schema.get("type")
    return (given,) if isinstance(given, str) and given else ()


def _json_type(value: Any) -> str:
    match value:
        case bool():
            return "boolean"
        case int():
            return "integer"
        case float():
            return "number"
        case str():
            return "string"
        case list():
            return "array"
    return "object"


def _type_matches(types: tuple[str, ...], actual: str, value: Any) -> bool:
    """An integer is a number too; a float of no fraction passes as an integer, as in Go."""
    return (
        not types
        or actual in types
        or (actual == "integer" and "number" in types)
        or (actual == "number" and "integer" in types and float(value).is_integer())
    )


def _type_error(schema: Schema, path: Path, actual: str) -> FieldError:
    detail = f"{path} in body must be of type {','.join(_types(schema))}: {go_quote(actual)}"
    return path.type_invalid(actual, detail)


def _string_errors(schema: Schema, value: str, path: Path) -> ErrorList:
    """The first of maxLength, minLength and pattern to fail, then the format."""
    errs: ErrorList = []
    if "maxLength" in schema and len(value) > schema["maxLength"]:
        errs.append(path.too_long(schema["maxLength"]))
    elif "minLength" in schema and len(value) < schema["minLength"]:
        detail = f"{path} in body should be at least {schema['minLength']} chars long"
        errs.append(path.invalid(value, detail))
    elif "pattern" in schema and not re.search(schema["pattern"], value):
        errs.append(path.invalid(value, f"{path} in body should match '{schema['pattern']}'"))
    check = _FORMATS.get(schema.get("format", ""))
    if check is not None and not check(value):
        detail = f"{path} in body must be of type {schema['format']}: {go_quote(value)}"
        errs.append(path.invalid(value, detail))
    return errs


def _number_errors(schema: Schema, value: float, path: Path) -> ErrorList:
    errs: ErrorList = []
    factor = schema.get("multipleOf")
    if factor and not (value / factor).is_integer():
        detail = f"{path} in body should be a multiple of {_number(factor)}"
        errs.append(path.invalid(value, detail))
    for bound, exclusive, below, words in (
        ("maximum", "exclusiveMaximum", False, "less than"),
        ("minimum", "exclusiveMinimum", True, "greater than"),
    ):
        limit = schema.get(bound)
        if limit is None:
            continue
        strict = bool(schema.get(exclusive))
        passes = (value > limit if below else value < limit) or (not strict and value == limit)
        if not passes:
            relation = words if strict else f"{words} or equal to"
            detail = f"{path} in body should be {relation} {_number(limit)}"
            errs.append(path.invalid(value, detail))
    return errs


def _array_errors(schema: Schema, items: list[Any], path: Path) -> ErrorList:
    """The items, then their count, then their uniqueness."""
    item_schema = _items(schema)
    errs = [
        e
        for i, item in enumerate(items if item_schema is not None else ())
        for e in schema_errors(item_schema or {}, item, path.index(i))
    ]
    if "minItems" in schema and len(items) < schema["minItems"]:
        detail = f"{path} in body should have at least {schema['minItems']} items"
        errs.append(path.invalid(len(items), detail))
    if "maxItems" in schema and len(items) > schema["maxItems"]:
        errs.append(path.too_many(len(items), schema["maxItems"]))
    if schema.get("uniqueItems") and len({_json(item) for item in items}) < len(items):
        errs.append(path.invalid("", f"{path} in body shouldn't contain duplicates"))
    return errs


def _object_errors(schema: Schema, value: dict[str, Any], path: Path) -> ErrorList:
    errs = [path.child(name).required() for name in schema.get("required", ()) if name not in value]
    for name, prop in (schema.get("properties") or {}).items():
        if name in value:
            errs += schema_errors(prop, value[name], path.child(name))
    extra = schema.get("additionalProperties")
    if isinstance(extra, Mapping):
        declared = schema.get("properties") or {}
        for name, item in value.items():
            if name not in declared:
                errs += schema_errors(extra, item, path.child(name))
    return errs


def _json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _same(a: Any, b: Any) -> bool:
    """Equal as JSON: so true is not 1, as in Go."""
    return _json(a) == _json(b)


def _number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else str(value)


def _parses(parse: Any) -> Any:
    def check(value: str) -> bool:
        try:
            parse(value)
        except ValueError:
            return False
        return True

    return check


_UUID = re.compile(r"^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$", re.I)
_FORMATS = {
    "byte": is_base64,
    "date": _parses(date.fromisoformat),
    "date-time": _parses(lambda v: datetime.fromisoformat(v.replace("Z", "+00:00"))),
    "uuid": lambda v: bool(_UUID.match(v)),
    "ipv4": _parses(ipaddress.IPv4Address),
    "ipv6": _parses(ipaddress.IPv6Address),
    "cidr": _parses(lambda v: ipaddress.ip_network(v, strict=False)),
}


# --- the plugin -------------------------------------------------------------------------------


def _schema(request: Request) -> Schema | None:
    custom = request.info.custom
    return custom.schema if custom is not None else None


def _mutate(request: Request) -> None:
    schema = _schema(request)
    if schema is None:
        return
    obj = request.obj.to_dict()
    request.pruned = prune(schema, obj)
    apply_defaults(schema, obj)
    request.obj = type(request.obj).model_validate(obj)


def _validate(request: Request) -> ErrorList:
    schema = _schema(request)
    return [] if schema is None else schema_errors(schema, request.obj.to_dict())


# Every custom kind's: registered as the chain's fallback, not for one kind.
PLUGIN = Plugin("", "", _mutate, _validate)
