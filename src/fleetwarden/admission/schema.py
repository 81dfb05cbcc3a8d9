"""One engine for the CRD schemas of both dialects: structural defaulting and validation.

Each kind's openAPIV3Schema is transcribed as far as admission needs it: defaults, enums,
patterns, lengths, ranges, item counts and required fields. Defaulting works on the typed
object and, as the API server's does, fills in only objects that exist (or that the schema
itself defaults). Validation works on the object as it goes on the wire and words each error
as apiextensions-apiserver turns kube-openapi's results into field errors, followed by the
duplicates in lists the schema types as sets or maps (x-kubernetes-list-type).

Errors come in a fixed order: an object's required fields, then its properties as the
schema lists them. Upstream reports the required ones last and walks the properties in Go
map order, which varies from call to call.
"""

from __future__ import annotations

import binascii
import json
import re
from base64 import b64decode
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cache
from typing import Any, Literal, get_args

from fleetwarden.admission.chain import Authorize, Mutate, Plugin, Request, Validate
from fleetwarden.admission.golang import go_quote
from fleetwarden.api.errors import ErrorList, Path
from fleetwarden.api.meta import Model

# Schemas are compared and cached by identity (eq=False): each is a constant of its module.


@dataclass(frozen=True, kw_only=True, eq=False)
class String:
    """A string; with x-kubernetes-int-or-string a number passes unchecked, as upstream."""

    enum: tuple[str, ...] = ()
    pattern: str | None = None  # every CRD pattern here is anchored at both ends
    min_length: int | None = None
    max_length: int | None = None
    byte: bool = False  # format: byte, base64 as []byte travels in JSON
    default: str | None = None


@dataclass(frozen=True, kw_only=True, eq=False)
class Integer:
    minimum: int | None = None
    maximum: int | None = None
    default: int | None = None


@dataclass(frozen=True, kw_only=True, eq=False)
class Array:
    """x-kubernetes-list-type "set" holds each item once, "map" each combination of the
    x-kubernetes-list-map-keys fields; an atomic list (the default) may repeat anything."""

    items: Schema
    min_items: int | None = None
    max_items: int | None = None
    list_type: Literal["set", "map"] | None = None
    list_map_keys: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        # The API server refuses a CRD that keys a list of another type, or a map list by nothing.
        if (self.list_type == "map") != bool(self.list_map_keys):
            raise ValueError("list_map_keys are for a list_type 'map' alone, and it needs some")


@dataclass(frozen=True, kw_only=True, eq=False)
class Map:
    values: Schema


@dataclass(frozen=True, kw_only=True, eq=False)
class Object:
    properties: Mapping[str, Schema] = field(default_factory=dict)
    required: tuple[str, ...] = ()
    # The CRD defaults this object when absent. Every such default upstream is the object its
    # own fields' defaults make, so an empty one is created and defaulting carries on inside.
    defaulted: bool = False


Schema = String | Integer | Array | Map | Object


# --- defaulting ---------------------------------------------------------------------------


def apply_defaults(schema: Object, obj: Model) -> None:
    """Fill absent fields with their defaults, descending only into what exists."""
    for wire, prop in schema.properties.items():
        # Only where a default may apply: the walk needs the model to declare each field.
        if not _has_defaults(prop):
            continue
        value = _given(obj, wire)
        if value is None:
            value = _default_value(prop, obj, wire)
            if value is not None:
                setattr(obj, _attributes(type(obj))[wire], value)
        _default_within(prop, value)


@cache
def _has_defaults(schema: Schema) -> bool:
    match schema:
        case Object():
            return schema.defaulted or any(map(_has_defaults, schema.properties.values()))
        case Array():
            return _has_defaults(schema.items)
        case Map():
            return False  # no CRD here defaults inside a map
    return schema.default is not None


@cache
def _attributes(model: type[Model]) -> dict[str, str]:
    """Wire name -> attribute name."""
    return {info.alias or name: name for name, info in model.model_fields.items()}


def _given(obj: Model, wire: str) -> object:
    """The field's value if the object was given it (or defaulting set it), else None."""
    name = _attributes(type(obj))[wire]
    return getattr(obj, name) if name in obj.model_fields_set else None


def _default_value(prop: Schema, owner: Model, wire: str) -> object:
    if isinstance(prop, Object):
        return _empty_object(owner, wire) if prop.defaulted else None
    return None if isinstance(prop, Array | Map) else prop.default


def _empty_object(owner: Model, wire: str) -> Model:
    """A new instance of the model class the field holds."""
    annotation = type(owner).model_fields[_attributes(type(owner))[wire]].annotation
    return next(
        t()
        for t in (*get_args(annotation), annotation)
        if isinstance(t, type) and issubclass(t, Model)
    )


def _default_within(prop: Schema, value: object) -> None:
    if isinstance(prop, Object) and isinstance(value, Model):
        apply_defaults(prop, value)
    elif isinstance(prop, Array) and isinstance(value, list):
        for item in value:
            _default_within(prop.items, item)


# --- validation ---------------------------------------------------------------------------


def schema_errors(schema: Object, obj: Model, old: Model | None = None) -> ErrorList:
    """The schema's errors, then the list types', as the API server's CRD strategy reports
    them. On update it reports no duplicates if the stored object already had some."""
    value = obj.to_dict()
    errs = _check(schema, value, Path())
    duplicates = _list_type_errors(schema, value, Path())
    if duplicates and old is not None and _list_type_errors(schema, old.to_dict(), Path()):
        duplicates = []
    return errs + duplicates


def _check(schema: Schema, value: Any, path: Path) -> ErrorList:
    """A value of another type is the decoder's to refuse, and passes here."""
    match schema:
        case Object() if isinstance(value, dict):
            return _check_object(schema, value, path)
        case Array() if isinstance(value, list):
            return _check_array(schema, value, path)
        case Map() if isinstance(value, dict):
            return [e for k, v in value.items() for e in _check(schema.values, v, path.child(k))]
        case Integer() if isinstance(value, int):
            return _check_integer(schema, value, path)
        case String() if isinstance(value, str):
            return _check_string(schema, value, path)
    return []


def _check_object(schema: Object, value: dict[str, Any], path: Path) -> ErrorList:
    # A null is pruned before validation, so it is as good as absent.
    errs = [path.child(name).required() for name in schema.required if value.get(name) is None]
    for name, prop in schema.properties.items():
        if value.get(name) is not None:
            errs += _check(prop, value[name], path.child(name))
    return errs


def _check_array(schema: Array, items: list[Any], path: Path) -> ErrorList:
    """The items, then their count, as kube-openapi's slice validator goes."""
    errs = [e for i, item in enumerate(items) for e in _check(schema.items, item, path.index(i))]
    if schema.min_items is not None and len(items) < schema.min_items:
        detail = f"{path} in body should have at least {schema.min_items} items"
        errs.append(path.invalid(len(items), detail))
    if schema.max_items is not None and len(items) > schema.max_items:
        errs.append(path.too_many(len(items), schema.max_items))
    return errs


def _check_integer(schema: Integer, value: int, path: Path) -> ErrorList:
    errs: ErrorList = []
    if schema.minimum is not None and value < schema.minimum:
        detail = f"{path} in body should be greater than or equal to {schema.minimum}"
        errs.append(path.invalid(value, detail))
    if schema.maximum is not None and value > schema.maximum:
        detail = f"{path} in body should be less than or equal to {schema.maximum}"
        errs.append(path.invalid(value, detail))
    return errs


def _check_string(schema: String, value: str, path: Path) -> ErrorList:
    """kube-openapi's order: the first of maxLength, minLength and pattern to fail (its
    string validator stops there), then the format, then the enum."""
    errs = _length_and_pattern_errors(schema, value, path)[:1]
    if schema.byte and not is_base64(value):
        detail = f"{path} in body must be of type byte: {go_quote(value)}"
        errs.append(path.invalid(value, detail))
    if schema.enum and value not in schema.enum:
        errs.append(path.not_supported(value, schema.enum))
    return errs


def _length_and_pattern_errors(schema: String, value: str, path: Path) -> ErrorList:
    errs: ErrorList = []
    if schema.max_length is not None and len(value) > schema.max_length:
        errs.append(path.too_long(schema.max_length))
    if schema.min_length is not None and len(value) < schema.min_length:
        detail = f"{path} in body should be at least {schema.min_length} chars long"
        errs.append(path.invalid(value, detail))
    # fullmatch: Python's `$` also matches before a final newline, Go's does not.
    if schema.pattern is not None and not re.fullmatch(schema.pattern, value):
        errs.append(path.invalid(value, f"{path} in body should match '{schema.pattern}'"))
    return errs


def is_base64(value: str) -> bool:
    """Go's base64.StdEncoding, which skips line breaks."""
    try:
        b64decode(value.replace("\r", "").replace("\n", ""), validate=True)
    except binascii.Error:
        return False
    return True


# --- list types: upstream's listtype.ValidateListSetsAndMaps --------------------------------


@cache
def _has_list_types(schema: Schema) -> bool:
    match schema:
        case Object():
            return any(map(_has_list_types, schema.properties.values()))
        case Array():
            return schema.list_type is not None or _has_list_types(schema.items)
        case Map():
            return _has_list_types(schema.values)
    return False


def _list_type_errors(schema: Schema, value: Any, path: Path) -> ErrorList:
    """A list's own duplicates before those within its items."""
    if not _has_list_types(schema):
        return []
    match schema:
        case Object() if isinstance(value, dict):
            return [
                e
                for name, prop in schema.properties.items()
                if name in value
                for e in _list_type_errors(prop, value[name], path.child(name))
            ]
        case Map() if isinstance(value, dict):
            return [
                e
                for key, item in value.items()
                for e in _list_type_errors(schema.values, item, path.key(key))
            ]
        case Array() if isinstance(value, list):
            errs = _duplicates(schema, value, path)
            for i, item in enumerate(value):
                errs += _list_type_errors(schema.items, item, path.index(i))
            return errs
    return []


def _duplicates(schema: Array, items: list[Any], path: Path) -> ErrorList:
    match schema.list_type:
        case "set":
            return _second_occurrences(items, path)
        # An item that is not an object is the decoder's to refuse.
        case "map" if all(item is None or isinstance(item, dict) for item in items):
            return _second_occurrences([_map_key(schema, item) for item in items], path)
    return []


def _map_key(schema: Array, item: dict[str, Any] | None) -> dict[str, Any]:
    """The item's key fields; a null item has none."""
    key = {name: _key_field(schema.items, item, name) for name in schema.list_map_keys}
    return {name: value for name, value in key.items() if value is not None}


def _key_field(items: Schema, item: dict[str, Any] | None, name: str) -> object:
    """A key field the item lacks (or nulls) counts as its default: the API server applies
    defaults before it validates."""
    if item is None:
        return None
    value = item.get(name)
    if value is None and isinstance(items, Object):
        prop = items.properties.get(name)
        value = prop.default if isinstance(prop, String | Integer) else None
    return value


def _second_occurrences(values: list[Any], path: Path) -> ErrorList:
    """Each value at the index where it comes a second time (a third is not reported).
    Values are the same if their JSON is: so 1 and 1.0, or 1 and true, differ, as in Go."""
    seen: Counter[str] = Counter()
    errs: ErrorList = []
    for i, value in enumerate(values):
        identity = json.dumps(value, sort_keys=True, separators=(",", ":"))
        seen[identity] += 1
        if seen[identity] == 2:
            # Parsed back, the value has its maps' keys sorted, as Go's json.Marshal writes them.
            errs.append(path.index(i).duplicate(json.loads(identity)))
    return errs


# --- plugins ------------------------------------------------------------------------------


def defaulter(schema: Object) -> Mutate:
    return lambda request: apply_defaults(schema, request.obj)


def validation(schema: Object, webhook: Validate | None = None) -> Validate:
    """The schema, then the validating webhook: the API server calls a webhook only on an
    object its own validation passed."""

    def validate(request: Request) -> ErrorList:
        errors = schema_errors(schema, request.obj, request.old)
        return errors if errors or webhook is None else webhook(request)

    return validate


def schema_plugin(
    api_version: str,
    kind: str,
    schema: Object,
    webhook: Validate | None = None,
    authorize: Authorize | None = None,
) -> Plugin:
    """A CRD without a mutating webhook: its defaults, its schema, its validating webhook
    (and what that webhook asks of the sender's rights)."""
    return Plugin(
        api_version, kind, defaulter(schema), validation(schema, webhook), authorize=authorize
    )


# --- schemas the CRDs share ---------------------------------------------------------------

QUALIFIED_NAME = (
    r"^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?"
    r"(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$"
)
DNS1123_LABEL = r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$"
QUANTITY = (
    r"^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|"
    r"([eE](\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?$"
)
REASON = r"^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$"

# metav1.Condition, its properties in the order the CRDs list them.
_CONDITION = Object(
    properties={
        "message": String(max_length=32768),
        "observedGeneration": Integer(minimum=0),
        "reason": String(min_length=1, max_length=1024, pattern=REASON),
        "status": String(enum=("True", "False", "Unknown")),
        "type": String(max_length=316, pattern=QUALIFIED_NAME),
    },
    required=("lastTransitionTime", "message", "reason", "status", "type"),
)
CONDITIONS = Array(items=_CONDITION)
# Where the Go type marks them `+listType=map` and `+listMapKey=type`: one of each type.
CONDITIONS_BY_TYPE = Array(items=_CONDITION, list_type="map", list_map_keys=("type",))

# The requirements of a label, field or node selector term.
REQUIREMENTS = Array(items=Object(required=("key", "operator")))
SELECTOR = Object(properties={"matchExpressions": REQUIREMENTS})
