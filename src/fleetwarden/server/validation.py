"""Server-side field validation (`fieldValidation=Strict|Warn|Ignore`): the fields that
decoding dropped from the object as given, because its kind's type (a built-in kind's Go
type, a typed kind's model, a custom kind's CRD schema) does not declare them. Admission
drops them and records them on its request; here they are, as the API server does, refused
(Strict: 400) or reported in a `Warning` header (Warn, the default). Resource templates of
kinds without a type are taken as they are, whatever their fields.
"""

from __future__ import annotations

import json
from enum import StrEnum

from fleetwarden.api.errors import BadRequest
from fleetwarden.api.kinds import KindInfo


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


def check_fields(info: KindInfo, pruned: list[str], directive: FieldValidation) -> list[str]:
    """The warnings to send back for a write whose admission dropped the fields `pruned`
    (its Request's); raises BadRequest for them under Strict."""
    if directive is FieldValidation.IGNORE:
        return []
    found = [f"unknown field {json.dumps(path)}" for path in pruned]
    if found and directive is FieldValidation.STRICT:
        raise BadRequest(
            f'{info.kind} in version "{info.version}" cannot be handled as a {info.kind}: '
            f"strict decoding error: {', '.join(found)}"
        )
    return found
