"""Field errors and the Invalid status error, worded exactly as Kubernetes words them.

`spec.taints[1].effect: Unsupported value: "NoRun": supported values: "NoSchedule", "NoExecute"`
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum
from typing import Any


class ErrorType(StrEnum):
    """field.ErrorType: the value is the Status cause reason, str() the human text."""

    NOT_FOUND = "FieldValueNotFound"
    REQUIRED = "FieldValueRequired"
    DUPLICATE = "FieldValueDuplicate"
    INVALID = "FieldValueInvalid"
    NOT_SUPPORTED = "FieldValueNotSupported"
    FORBIDDEN = "FieldValueForbidden"
    TOO_LONG = "FieldValueTooLong"
    TOO_MANY = "FieldValueTooMany"
    TYPE_INVALID = "FieldValueTypeInvalid"

    @property
    def text(self) -> str:
        return _TEXT[self]


_TEXT = {
    ErrorType.NOT_FOUND: "Not found",
    ErrorType.REQUIRED: "Required value",
    ErrorType.DUPLICATE: "Duplicate value",
    ErrorType.INVALID: "Invalid value",
    ErrorType.NOT_SUPPORTED: "Unsupported value",
    ErrorType.FORBIDDEN: "Forbidden",
    ErrorType.TOO_LONG: "Too long",
    ErrorType.TOO_MANY: "Too many",
    ErrorType.TYPE_INVALID: "Invalid value",
}
_NO_VALUE = {ErrorType.REQUIRED, ErrorType.FORBIDDEN, ErrorType.TOO_LONG}


def _render(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return str(value)
    # Go's %q and encoding/json agree for the strings we meet.
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


@dataclass(frozen=True)
class FieldError:
    type: ErrorType
    field: str
    value: Any = ""
    detail: str = ""

    def body(self) -> str:
        text = (
            self.type.text if self.type in _NO_VALUE else f"{self.type.text}: {_render(self.value)}"
        )
        return f"{text}: {self.detail}" if self.detail else text

    def __str__(self) -> str:
        return f"{self.field}: {self.body()}"


class Path:
    """field.Path: `spec.taints[1].key`."""

    __slots__ = ("_text",)

    def __init__(self, text: str = "") -> None:
        self._text = text

    def child(self, *names: str) -> Path:
        text = self._text
        for name in names:
            text = f"{text}.{name}" if text else name
        return Path(text)

    def index(self, i: int) -> Path:
        return Path(f"{self._text}[{i}]")

    def key(self, k: str) -> Path:
        return Path(f"{self._text}[{k}]")

    def __str__(self) -> str:
        return self._text

    def __repr__(self) -> str:
        return f"Path({self._text!r})"

    def required(self, detail: str = "") -> FieldError:
        return FieldError(ErrorType.REQUIRED, self._text, "", detail)

    def invalid(self, value: Any, detail: str = "") -> FieldError:
        return FieldError(ErrorType.INVALID, self._text, value, detail)

    def not_supported(self, value: Any, supported: Iterable[str]) -> FieldError:
        detail = "supported values: " + ", ".join(json.dumps(v) for v in supported)
        return FieldError(ErrorType.NOT_SUPPORTED, self._text, value, detail)

    def duplicate(self, value: Any) -> FieldError:
        return FieldError(ErrorType.DUPLICATE, self._text, value)

    def forbidden(self, detail: str) -> FieldError:
        return FieldError(ErrorType.FORBIDDEN, self._text, "", detail)

    def too_long(self, max_length: int) -> FieldError:
        return FieldError(
            ErrorType.TOO_LONG, self._text, "", f"may not be more than {max_length} bytes"
        )

    def too_many(self, actual: int, max_items: int) -> FieldError:
        detail = f"must have at most {max_items} items"
        return FieldError(ErrorType.TOO_MANY, self._text, actual, detail)

    def type_invalid(self, value: Any, detail: str) -> FieldError:
        return FieldError(ErrorType.TYPE_INVALID, self._text, value, detail)


ErrorList = list[FieldError]


class StatusError(Exception):
    """An API error with the shape of metav1.Status."""

    code = 500
    reason = "InternalError"

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def status(self) -> dict[str, Any]:
        return {
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": self.message,
            "reason": self.reason,
            "code": self.code,
        }


class Invalid(StatusError):
    """422: `Cluster.cluster.karmada.io "member1" is invalid: spec.taints[0].key: ...`."""

    code = 422
    reason = "Invalid"

    def __init__(self, kind: str, group: str, name: str, errors: ErrorList) -> None:
        self.kind, self.group, self.name, self.errors = kind, group, name, list(errors)
        qualified = f"{kind}.{group}" if group else kind
        rendered = [str(e) for e in self.errors]
        joined = rendered[0] if len(rendered) == 1 else "[" + ", ".join(rendered) + "]"
        super().__init__(f"{qualified} {json.dumps(name)} is invalid: {joined}")

    def status(self) -> dict[str, Any]:
        status = super().status()
        named = {"name": self.name, "group": self.group, "kind": self.kind}
        status["details"] = {
            **{key: value for key, value in named.items() if value},  # Go's omitempty
            "causes": [
                {"reason": e.type.value, "message": e.body(), "field": e.field} for e in self.errors
            ],
        }
        return status


class BadRequest(StatusError):
    code = 400
    reason = "BadRequest"


class DecodeError(BadRequest):
    """400: an object that its kind's type cannot hold (`json: cannot unmarshal ...`, the
    decoder's own words, kept as `detail`: a patch's refusal quotes them)."""

    def __init__(self, kind: str, version: str, detail: str) -> None:
        self.detail = detail
        super().__init__(f'{kind} in version "{version}" cannot be handled as a {kind}: {detail}')


class RequestEntityTooLarge(StatusError):
    """413: `Request entity too large: limit is 3145728`."""

    code = 413
    reason = "RequestEntityTooLarge"

    def __init__(self, detail: str) -> None:
        super().__init__(f"Request entity too large: {detail}")


def type_mismatch(key: str, given: Any, expected: str) -> str:
    """A body's apiVersion or kind that is not the URL's."""
    what = "API version" if key == "apiVersion" else key
    return f"the {what} in the data ({given}) does not match the expected {what} ({expected})"


def namespace_mismatch() -> BadRequest:
    """rest.EnsureObjectNamespaceMatchesRequestNamespace's refusal."""
    return BadRequest(
        "the namespace of the provided object does not match the namespace sent on the request"
    )


def name_mismatch(given: Any, expected: str) -> BadRequest:
    """checkName's refusal of a body named otherwise than the URL."""
    return BadRequest(
        f"the name of the object ({given or ''}) does not match the name on the URL ({expected})"
    )


def _qualified(resource: str, group: str) -> str:
    """schema.GroupResource.String(): `clusters.cluster.karmada.io`."""
    return f"{resource}.{group}" if group else resource


class NotFound(StatusError):
    code = 404
    reason = "NotFound"

    def __init__(self, resource: str, group: str, name: str) -> None:
        super().__init__(f"{_qualified(resource, group)} {json.dumps(name)} not found")


class Forbidden(StatusError):
    code = 403
    reason = "Forbidden"

    def __init__(self, resource: str, group: str, name: str, detail: str) -> None:
        self.resource, self.group, self.name = resource, group, name
        if not resource and not group:
            super().__init__(f"forbidden: {detail}")
            return
        named = (
            f"{_qualified(resource, group)} {json.dumps(name)}"
            if name
            else _qualified(resource, group)
        )
        super().__init__(f"{named} is forbidden: {detail}")

    def status(self) -> dict[str, Any]:
        status = super().status()
        details = {"name": self.name, "group": self.group, "kind": self.resource}
        status["details"] = {k: v for k, v in details.items() if v}
        return status


class WebhookDenied(StatusError):
    """A validating admission webhook's refusal, as the API server relays it: the webhook's
    own error (code, reason, details) under `admission webhook "<name>" denied the request`."""

    def __init__(self, webhook: str, error: StatusError) -> None:
        super().__init__(
            f"admission webhook {json.dumps(webhook)} denied the request: {error.message}"
        )
        self.code, self.reason, self.error = error.code, error.reason, error

    def status(self) -> dict[str, Any]:
        return {**self.error.status(), "message": self.message}


class Unauthorized(StatusError):
    """401: no credentials, or credentials no authenticator accepts."""

    code = 401
    reason = "Unauthorized"

    def __init__(self, message: str = "Unauthorized") -> None:
        super().__init__(message)


class AlreadyExists(StatusError):
    code = 409
    reason = "AlreadyExists"

    def __init__(self, resource: str, group: str, name: str) -> None:
        super().__init__(f"{_qualified(resource, group)} {json.dumps(name)} already exists")


class Conflict(StatusError):
    """409: a write whose resourceVersion precondition is stale."""

    code = 409
    reason = "Conflict"

    def __init__(self, resource: str, group: str, name: str, detail: str | None = None) -> None:
        detail = detail or (
            "the object has been modified; please apply your changes to the latest version "
            "and try again"
        )
        super().__init__(
            f"Operation cannot be fulfilled on {_qualified(resource, group)} {json.dumps(name)}: "
            f"{detail}"
        )


class Expired(StatusError):
    """410: a watch or list continuation from a resourceVersion that was compacted away."""

    code = 410
    reason = "Expired"


def aggregate(messages: Iterable[str]) -> str:
    """utilerrors.NewAggregate(errs).Error(): one message bare, several deduplicated in brackets."""
    unique = list(dict.fromkeys(messages))
    return unique[0] if len(unique) == 1 else "[" + ", ".join(unique) + "]"
