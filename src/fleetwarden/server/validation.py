"""Server-side field validation (`fieldValidation=Strict|Warn|Ignore`): fields the kind's
schema does not declare. The typed models keep such fields (a round trip loses nothing);
here they are found and, as the API server does, refused (Strict: 400) or reported in a
`Warning` header (Warn, the default). A custom resource's are those its CRD's schema
prunes from the object as given. Resource templates of kinds without a model are taken as
they are, whatever their fields.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator, Mapping
from enum import StrEnum
from typing import Any

from pydantic import BaseModel

from fleetwarden.admission import custom_resource
from fleetwarden.api.core import Unstructured
from fleetwarden.api.errors import BadRequest
from fleetwarden.api.kinds import KindInfo
from fleetwarden.api.meta import ObjectMeta, Resource

# ObjectMeta fields the model leaves to the server (it neither reads nor writes them).
_SERVER_METADATA = {"managedFields", "selfLink"}


class FieldValidation(StrEnum):
    STRICT = "Strict"
    WARN = "Warn"
    IGNORE = "Ignore"

    @classmethod
    def parse(cls, value: str | None) -> FieldValidation:
        if not value:
            return cls.WARN
        try:
            return cls(value)
        except ValueError:
            raise BadRequest(
                f"fieldValidation must be one of Ignore, Warn or Strict, got {value!r}"
            ) from None


def unknown_fields(obj: Resource) -> list[str]:
    """The paths of the fields the object's schema does not declare (`spec.taints[0].foo`)."""
    if isinstance(obj, Unstructured):
        return []
    return list(_unknown(obj, ""))


def _unknown(value: Any, path: str) -> Iterator[str]:
    if isinstance(value, BaseModel):
        extra = value.__pydantic_extra__ or {}
        for name in extra:
            if not (isinstance(value, ObjectMeta) and name in _SERVER_METADATA):
                yield _join(path, name)
        fields = type(value).model_fields
        for name in value.model_fields_set:
            if name in fields:
                yield from _unknown(getattr(value, name), _join(path, fields[name].alias or name))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from _unknown(item, f"{path}[{i}]")
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _unknown(item, f"{path}[{key}]")


def _join(path: str, name: str) -> str:
    return f"{path}.{name}" if path else name


def check_fields(
    info: KindInfo,
    given: Mapping[str, Any],
    obj: Resource,
    directive: FieldValidation,
    pruned: list[str] | None = None,
) -> list[str]:
    """The warnings to send back for the object `given` and admitted as `obj`; raises
    BadRequest for unknown fields under Strict. `pruned` is what admission's schema pruning
    took from `given` (its Request's); only if it did not prune is `given` pruned here."""
    if directive is FieldValidation.IGNORE:
        return []
    schema = info.custom.schema if info.custom is not None else None
    if schema is None:
        paths = unknown_fields(obj)
    elif pruned is not None:
        paths = pruned
    else:
        paths = custom_resource.prune(schema, copy.deepcopy(dict(given)))
    found = [f"unknown field {json.dumps(path)}" for path in paths]
    if found and directive is FieldValidation.STRICT:
        raise BadRequest(
            f'{info.kind} in version "{info.version}" cannot be handled as a {info.kind}: '
            f"strict decoding error: {', '.join(found)}"
        )
    return found
