"""Requests, responses and content negotiation, as the Kubernetes API server does them.

A request's body is read whole, up to kube-apiserver's limit; a response is one JSON
document, or a stream of watch events (see watch.py). Media types are matched with their parameters,
so `application/json;as=Table;v=v1;g=meta.k8s.io` is a different offer from plain JSON.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs, unquote

import yaml

from fleetwarden.api.codec import DocumentError, load_json, load_yaml
from fleetwarden.api.errors import BadRequest, RequestEntityTooLarge, StatusError
from fleetwarden.server import protobuf

JSON = "application/json"
YAML = "application/yaml"
# kube-apiserver's --max-request-body-bytes default: twice etcd's recommended request size.
MAX_REQUEST_BODY = 3 * 1024 * 1024
# Parameters a client may add to a media range that do not change what is sent.
_IGNORED_PARAMS = {"q", "charset", "pretty", "stream"}


class MediaType:
    """`type/subtype;k=v...` with its parameters (lower-case type, parameters as given)."""

    __slots__ = ("mime", "params", "quality")

    def __init__(self, mime: str, params: Mapping[str, str] | None = None) -> None:
        self.mime = mime.lower()
        self.params = dict(params or {})
        self.quality = 1.0

    @classmethod
    def parse(cls, text: str) -> MediaType:
        mime, *rest = (part.strip() for part in text.split(";"))
        params = {}
        for part in rest:
            key, _, value = part.partition("=")
            if key:
                params[key.strip().lower()] = value.strip().strip('"')
        media = cls(mime, {k: v for k, v in params.items() if k not in _IGNORED_PARAMS})
        try:
            media.quality = float(params.get("q", "1"))
        except ValueError:
            media.quality = 0.0
        return media

    def accepts(self, offer: MediaType) -> bool:
        """Whether this media range (from an Accept header) admits the offer."""
        kind, _, sub = self.mime.partition("/")
        offer_kind, _, offer_sub = offer.mime.partition("/")
        if kind not in ("*", offer_kind) or sub not in ("*", offer_sub):
            return False
        return self.params == offer.params

    def __str__(self) -> str:
        return ";".join([self.mime, *(f"{k}={v}" for k, v in self.params.items())])

    def __repr__(self) -> str:
        return f"MediaType({str(self)!r})"


PLAIN_JSON = MediaType(JSON)
PLAIN_YAML = MediaType(YAML)
TABLE = MediaType(JSON, {"as": "Table", "v": "v1", "g": "meta.k8s.io"})
AGGREGATED_DISCOVERY = MediaType(
    JSON, {"g": "apidiscovery.k8s.io", "v": "v2", "as": "APIGroupDiscoveryList"}
)


class NotAcceptable(StatusError):
    code = 406
    reason = "NotAcceptable"


class UnsupportedMediaType(StatusError):
    code = 415
    reason = "UnsupportedMediaType"


async def read_body(
    scope: Mapping[str, Any],
    receive: Callable[[], Awaitable[Mapping[str, Any]]],
    limit: int = MAX_REQUEST_BODY,
) -> bytes:
    """The request's body; 413 once it has more than `limit` bytes, or announces them,
    without reading further (what is read is never more than the limit and a chunk)."""
    for name, value in scope.get("headers", ()):
        if name.lower() == b"content-length" and value.isdigit() and int(value) > limit:
            raise RequestEntityTooLarge(f"limit is {limit}")
    chunks, size = [], 0
    while True:
        message = await receive()
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > limit:
            raise RequestEntityTooLarge(f"limit is {limit}")
        chunks.append(chunk)
        if not message.get("more_body"):
            return b"".join(chunks)


def negotiate(accept: str | None, offers: Sequence[MediaType]) -> MediaType:
    """The offer the client prefers (by quality, then header order); 406 if none fits."""
    if not accept or not accept.strip():
        return offers[0]
    ranges = [MediaType.parse(part) for part in accept.split(",") if part.strip()]
    ranked = sorted((r for r in ranges if r.quality > 0), key=lambda r: -r.quality)
    for media_range in ranked:
        for offer in offers:
            if media_range.accepts(offer):
                return offer
    accepted = ", ".join(str(o) for o in offers)
    raise NotAcceptable(f"only the following media types are accepted: {accepted}")


@dataclass
class Request:
    method: str
    path: str
    query: dict[str, list[str]] = field(default_factory=dict)
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes = b""
    # Every header line as sent (lower-case names): where repeats count (Impersonate-Group).
    raw_headers: list[tuple[str, str]] = field(default_factory=list)

    @classmethod
    def from_scope(cls, scope: Mapping[str, Any], body: bytes = b"") -> Request:
        headers: dict[str, str] = {}
        raw_headers = []
        for raw_name, raw_value in scope.get("headers", ()):
            name, value = raw_name.decode("latin-1").lower(), raw_value.decode("latin-1")
            raw_headers.append((name, value))
            headers[name] = f"{headers[name]},{value}" if name in headers else value
        query = parse_qs(scope.get("query_string", b"").decode("latin-1"), keep_blank_values=True)
        path = scope.get("path") or unquote(scope.get("raw_path", b"/").decode("latin-1"))
        return cls(scope["method"], path, query, headers, body, raw_headers)

    def param(self, name: str, default: str | None = None) -> str | None:
        values = self.query.get(name)
        return values[0] if values else default

    def params(self, name: str) -> list[str]:
        return self.query.get(name, [])

    def flag(self, name: str) -> bool:
        """A boolean query parameter as Go's strconv.ParseBool reads it."""
        value = self.param(name)
        if value is None:
            return False
        if value in ("1", "t", "T", "true", "TRUE", "True"):
            return True
        if value in ("", "0", "f", "F", "false", "FALSE", "False"):
            return False
        raise BadRequest(f'invalid value for query parameter "{name}": {value!r}')

    def integer(self, name: str) -> int | None:
        value = self.param(name)
        if value is None or value == "":
            return None
        try:
            return int(value)
        except ValueError:
            raise BadRequest(
                f'invalid value for query parameter "{name}": {value!r} is not an integer'
            ) from None

    @property
    def content_type(self) -> MediaType:
        return MediaType.parse(self.headers.get("content-type") or JSON)

    def accept(self, offers: Sequence[MediaType]) -> MediaType:
        return negotiate(self.headers.get("accept"), offers)

    def document(self) -> Any:
        """The body as a JSON or YAML document; 415 for any other media type."""
        media = self.content_type
        if media.mime == JSON:
            return decode_json(self.body)
        if media.mime == YAML:
            return decode_yaml(self.body)
        if media.mime == protobuf.PROTOBUF:
            obj = protobuf.decode(self.body)
            if obj is not None:
                return obj
        raise unsupported_media_type(media, (JSON, YAML))


def decode_json(body: bytes) -> Any:
    try:
        return load_json(body)
    except ValueError as err:
        raise BadRequest(f"couldn't get version/kind; json parse error: {err}") from None


def decode_yaml(body: bytes) -> Any:
    try:
        return load_yaml(body)
    except DocumentError as err:  # worded as go-yaml words it: "yaml: ..."
        raise BadRequest(f"couldn't get version/kind; {err}") from None
    except (yaml.YAMLError, ValueError) as err:  # ValueError: a !!timestamp out of range, say
        raise BadRequest(f"couldn't get version/kind; yaml parse error: {err}") from None


def unsupported_media_type(media: MediaType, accepted: Iterable[str]) -> UnsupportedMediaType:
    return UnsupportedMediaType(
        f"the body of the request was in an unknown format ({media.mime}) - accepted media "
        f"types include: {', '.join(accepted)}"
    )


@dataclass
class Response:
    status: int
    body: bytes
    content_type: str = JSON
    headers: list[tuple[str, str]] = field(default_factory=list)

    def raw_headers(self) -> list[tuple[bytes, bytes]]:
        pairs = [("content-type", self.content_type), ("content-length", str(len(self.body)))]
        if not any(name == "cache-control" for name, _ in self.headers):
            pairs.append(("cache-control", "no-cache, private"))  # unless it says otherwise
        pairs += self.headers
        return [(k.encode("latin-1"), v.encode("latin-1")) for k, v in pairs]


_encode = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False).encode


def encode(document: Any) -> bytes:
    """A document as the API server writes it: compact JSON and a newline."""
    return (_encode(document) + "\n").encode()


def respond(status: int, document: Any, media: MediaType = PLAIN_JSON) -> Response:
    if media.mime == YAML:
        text = yaml.safe_dump(document, sort_keys=False, allow_unicode=True)
        return Response(status, text.encode(), YAML)
    return Response(status, encode(document), str(media))


def text(status: int, body: str, content_type: str = "text/plain; charset=utf-8") -> Response:
    return Response(status, body.encode(), content_type)


def status_response(error: StatusError) -> Response:
    return respond(error.code, error.status())
