"""The patch types the server takes, by the request's Content-Type."""

from __future__ import annotations

from fleetwarden.server.http import MediaType, unsupported_media_type
from fleetwarden.store.interface import PatchType


def patch_type_of(media: MediaType) -> PatchType:
    for patch_type in PatchType:
        if media.mime == patch_type.value:
            return patch_type
    raise unsupported_media_type(media, [t.value for t in PatchType])
