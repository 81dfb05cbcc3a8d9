"""meta/v1: the base of every typed object, and the shapes shared by all API groups.

Every model speaks camelCase on the wire, keeps fields it does not know (so a round
trip never loses what a newer client wrote), and is strict about scalar types the
way a Kubernetes API server is: a string where an integer belongs is an error, not
a coercion.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated, Any

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, PlainSerializer
from pydantic.alias_generators import to_camel

# Text -> parsed time, for every decode of an object repeats its timestamps (creation,
# conditions' transitions). Datetimes are immutable, so sharing one is safe.
_PARSED: dict[str, datetime] = {}
_PARSED_MAX = 4096


def parse_time(value: Any) -> datetime:
    """RFC 3339 (as metav1.Time accepts it) to an aware UTC datetime."""
    if type(value) is str:
        parsed = _PARSED.get(value)
        if parsed is None:
            parsed = _parse_time(value)
            if len(_PARSED) >= _PARSED_MAX:
                _PARSED.clear()
            _PARSED[value] = parsed
        return parsed
    return _parse_time(value)


def _parse_time(value: Any) -> datetime:
    if isinstance(value, datetime):
        return value if value.tzinfo else value.replace(tzinfo=UTC)
    if not isinstance(value, str):
        raise ValueError("must be an RFC 3339 timestamp string")
    text = value.strip()
    if text.endswith(("Z", "z")):
        text = text[:-1] + "+00:00"
    try:
        parsed = datetime.fromisoformat(text)
    except ValueError:
        raise ValueError(f"{value!r} is not an RFC 3339 timestamp") from None
    if parsed.tzinfo is None:
        raise ValueError(f"{value!r} is not an RFC 3339 timestamp: it has no time zone")
    return parsed.astimezone(UTC)


# Datetime -> text, for every encode of an object repeats its timestamps as well (and a
# fleet's Leases are renewed at one instant). Only plain UTC datetimes are kept: for them
# equal keys are the same instant, the same text.
_FORMATTED: dict[datetime, str] = {}
_FORMATTED_MICRO: dict[datetime, str] = {}


def format_time(value: datetime) -> str:
    """metav1.Time serialises to whole seconds in UTC."""
    return _format(value, "%Y-%m-%dT%H:%M:%SZ", _FORMATTED)


def format_micro_time(value: datetime) -> str:
    """metav1.MicroTime (Lease renewTime, Event eventTime) keeps microseconds."""
    return _format(value, "%Y-%m-%dT%H:%M:%S.%fZ", _FORMATTED_MICRO)


def _format(value: datetime, layout: str, cache: dict[datetime, str]) -> str:
    if type(value) is datetime and value.tzinfo is UTC:
        text = cache.get(value)
        if text is None:
            text = value.strftime(layout)
            if len(cache) >= _PARSED_MAX:
                cache.clear()
            cache[value] = text
        return text
    return value.astimezone(UTC).strftime(layout)


Time = Annotated[datetime, BeforeValidator(parse_time), PlainSerializer(format_time)]
MicroTime = Annotated[datetime, BeforeValidator(parse_time), PlainSerializer(format_micro_time)]
# resource.Quantity and intstr.IntOrString both arrive as a string or a number.
Quantity = str | int | float
IntOrString = int | str


class Model(BaseModel):
    """Base of every wire object: camelCase aliases, unknown fields kept, strict scalars."""

    model_config = ConfigDict(
        alias_generator=to_camel,
        populate_by_name=True,
        extra="allow",
        strict=True,
        serialize_by_alias=True,
    )

    def to_dict(self) -> dict[str, Any]:
        """The object as it goes on the wire: only fields that were given or set."""
        return self.model_dump(by_alias=True, exclude_unset=True, mode="json")


class OwnerReference(Model):
    api_version: str = ""
    kind: str = ""
    name: str = ""
    uid: str = ""
    controller: bool | None = None
    block_owner_deletion: bool | None = None


class ObjectMeta(Model):
    name: str = ""
    generate_name: str | None = None
    namespace: str = ""
    uid: str | None = None
    resource_version: str | None = None
    generation: int | None = None
    creation_timestamp: Time | None = None
    deletion_timestamp: Time | None = None
    deletion_grace_period_seconds: int | None = None
    labels: dict[str, str] | None = None
    annotations: dict[str, str] | None = None
    owner_references: list[OwnerReference] | None = None
    finalizers: list[str] | None = None
    # The server's own: kept as given, read by no one here.
    managed_fields: list[dict[str, Any]] | None = None
    self_link: str | None = None


class ListMeta(Model):
    resource_version: str | None = None
    continue_: str | None = Field(default=None, alias="continue")
    remaining_item_count: int | None = None


class Condition(Model):
    """metav1.Condition."""

    type: str = ""
    status: str = ""
    observed_generation: int | None = None
    last_transition_time: Time | None = None
    reason: str = ""
    message: str = ""


class LabelSelectorRequirement(Model):
    key: str = ""
    operator: str = ""
    values: list[str] | None = None


class LabelSelector(Model):
    match_labels: dict[str, str] | None = None
    match_expressions: list[LabelSelectorRequirement] | None = None


class Resource(Model):
    """Any object with apiVersion, kind and metadata."""

    api_version: str = ""
    kind: str = ""
    metadata: ObjectMeta = Field(default_factory=ObjectMeta)

    @property
    def name(self) -> str:
        return self.metadata.name

    @property
    def namespace(self) -> str:
        return self.metadata.namespace


def find_condition(conditions: list[Condition] | None, type_: str) -> Condition | None:
    """The condition of the given type, as meta.FindStatusCondition."""
    return next((c for c in conditions or [] if c.type == type_), None)
