"""What a read answers in the media type the client asked for: the object or list as JSON
or YAML, or the Table kubectl prints (`Accept: application/json;as=Table;v=v1;g=meta.k8s.io`,
with `includeObject=None|Metadata|Object`)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any

from fleetwarden.api.kinds import KindInfo
from fleetwarden.server.http import TABLE, MediaType, Request, Response, respond
from fleetwarden.server.tables import table
from fleetwarden.store.interface import Obj


def respond_list(
    info: KindInfo, listed: Obj, media: MediaType, request: Request, now: datetime
) -> Response:
    if media is not TABLE:
        return respond(200, listed, media)
    meta = listed["metadata"]
    rows = table(
        info,
        listed["items"],
        include_object=request.param("includeObject") or "Metadata",
        now=now,
        resource_version=meta.get("resourceVersion", ""),
        continue_=meta.get("continue", ""),
        remaining_item_count=meta.get("remainingItemCount"),
    )
    return respond(200, rows, media)


def respond_object(
    info: KindInfo, obj: Obj, media: MediaType, request: Request, now: datetime
) -> Response:
    return respond(200, renderer(info, media, request, lambda: now)(obj), media)


def renderer(
    info: KindInfo, media: MediaType, request: Request, now: Callable[[], datetime]
) -> Callable[[Obj], Any]:
    """How an object is sent: as it is, or as a one-row Table (a get, each watch event)."""
    if media is not TABLE:
        return lambda obj: obj
    include_object = request.param("includeObject") or "Metadata"
    return lambda obj: table(info, [obj], include_object=include_object, now=now())
