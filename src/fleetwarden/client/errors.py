"""The server's Status bodies as our `fleetwarden.api.errors` exceptions, and the client's own.

An error from the server keeps the server's message and Status whole; it is also an
instance of the matching api error class (`except NotFound:` works on either side of the
wire), and a 422's causes are its `errors`, each printing as `field: message`.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from fleetwarden.api.errors import (
    AlreadyExists,
    BadRequest,
    Conflict,
    ErrorType,
    Expired,
    FieldError,
    Invalid,
    NotFound,
    StatusError,
)


class ClientError(Exception):
    """A failure on this side of the wire: no answer, or nothing to ask for."""


class ResourceTypeNotFound(ClientError):
    """meta.NoResourceMatchError: the server has no such resource type."""

    def __init__(self, resource: str) -> None:
        super().__init__(f'the server doesn\'t have a resource type "{resource}"')
        self.resource = resource


class KindNotFound(ClientError):
    """meta.NoKindMatchError: no resource of the server serves this kind."""

    def __init__(self, kind: str, api_version: str) -> None:
        super().__init__(f'no matches for kind "{kind}" in version "{api_version}"')


class ServerUnreachable(ClientError):
    """No HTTP answer at all, worded as kubectl words it."""


class ServerError(StatusError):
    """An error the server returned, its Status body kept whole."""

    def __init__(self, status: Mapping[str, Any]) -> None:
        StatusError.__init__(self, str(status.get("message") or ""))
        self.body = dict(status)
        self.code = int(status.get("code") or self.code)
        self.reason = str(status.get("reason") or "")

    def status(self) -> dict[str, Any]:
        return copy.deepcopy(self.body)

    @property
    def details(self) -> dict[str, Any]:
        details = self.body.get("details")
        return details if isinstance(details, dict) else {}


class ServerNotFound(ServerError, NotFound):
    pass


class ServerAlreadyExists(ServerError, AlreadyExists):
    pass


class ServerConflict(ServerError, Conflict):
    pass


class ServerBadRequest(ServerError, BadRequest):
    pass


class ServerExpired(ServerError, Expired):
    pass


@dataclass(frozen=True)
class StatusCause(FieldError):
    """A Status cause: a field error whose text is the server's."""

    message: str = ""

    def body(self) -> str:
        return self.message


class ServerInvalid(ServerError, Invalid):
    def __init__(self, status: Mapping[str, Any]) -> None:
        super().__init__(status)
        details = self.details
        self.kind = str(details.get("kind") or "")
        self.group = str(details.get("group") or "")
        self.name = str(details.get("name") or "")
        self.errors = [_cause(c) for c in details.get("causes") or [] if isinstance(c, dict)]


def _cause(cause: Mapping[str, Any]) -> FieldError:
    reason = str(cause.get("reason") or "")
    known = reason in ErrorType._value2member_map_
    return StatusCause(
        ErrorType(reason) if known else ErrorType.INVALID,
        str(cause.get("field") or ""),
        message=str(cause.get("message") or ""),
    )


_BY_REASON: dict[str, type[ServerError]] = {
    "NotFound": ServerNotFound,
    "AlreadyExists": ServerAlreadyExists,
    "Conflict": ServerConflict,
    "Invalid": ServerInvalid,
    "BadRequest": ServerBadRequest,
    "Expired": ServerExpired,
    "Gone": ServerExpired,
}

# apimachinery's NewGenericServerResponse: what a bare status code means.
_BY_CODE: dict[int, tuple[str, str]] = {
    400: ("BadRequest", "the server rejected our request for an unknown reason"),
    401: ("Unauthorized", "the server has asked for the client to provide credentials"),
    403: ("Forbidden", "the server does not allow access to the requested resource"),
    404: ("NotFound", "the server could not find the requested resource"),
    405: ("MethodNotAllowed", "the server does not allow this method on the requested resource"),
    409: ("Conflict", "the server reported a conflict"),
    410: ("Expired", "the requested resource is no longer available"),
    415: ("UnsupportedMediaType", "the server does not support the media type of the request"),
    422: ("Invalid", "the server rejected our request due to an error in our request"),
    429: (
        "TooManyRequests",
        "the server has received too many requests and has asked us to try again later",
    ),
    503: ("ServiceUnavailable", "the server is currently unable to handle the request"),
    504: ("Timeout", "the server was unable to return a response in the time allotted"),
}


def status_error(status: Mapping[str, Any]) -> ServerError:
    """The exception for a metav1.Status of a failure."""
    return _BY_REASON.get(str(status.get("reason") or ""), ServerError)(status)


def error_for_response(code: int, body: Any, text: str) -> ServerError:
    """A failed response: its Status when it has one, else what its code means."""
    if isinstance(body, dict) and body.get("kind") == "Status":
        return status_error({**body, "code": body.get("code") or code})
    generic = f"an error on the server ({json.dumps(text.strip())}) has prevented the request"
    reason, message = _BY_CODE.get(code, ("InternalError", f"{generic} from succeeding"))
    return status_error({"code": code, "reason": reason, "message": message})
