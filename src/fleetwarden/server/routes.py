"""The API server's URL layout: which resource, namespace, name and subresource a path names.

/api/v1/namespaces/{namespace}/{plural}[/{name}[/{subresource}]]
/apis/{group}/{version}/{plural}[/{name}[/{subresource}]]
/api/v1/watch/...                     (the legacy watch paths)
/api/v1/namespaces/{name}/status      (the namespace's own subresources)
"""

from __future__ import annotations

from dataclasses import dataclass

from fleetwarden.api.errors import NotFound, StatusError
from fleetwarden.api.kinds import KindInfo
from fleetwarden.api.registry import REGISTRY, Registry

# Subresources of a Namespace, whose path would otherwise read as a resource in it.
NAMESPACE_SUBRESOURCES = ("status", "finalize")


class PathNotFound(NotFound):
    """404 for a path that names no resource, worded as the API server words it."""

    def __init__(self) -> None:
        StatusError.__init__(self, "the server could not find the requested resource")


@dataclass(frozen=True)
class ResourcePath:
    """A request for a resource collection, or one object of it."""

    info: KindInfo
    namespace: str | None  # None: cluster-scoped, or every namespace (a list or watch)
    name: str | None = None
    subresource: str | None = None


def group_version(path: str) -> tuple[str, str, list[str]] | None:
    """(group, version, the segments after them) of an API path, or None."""
    parts = [p for p in path.split("/") if p]
    if len(parts) >= 2 and parts[0] == "api":
        return "", parts[1], parts[2:]
    if len(parts) >= 3 and parts[0] == "apis":
        return parts[1], parts[2], parts[3:]
    return None


def resource_path(
    group: str, version: str, segments: list[str], registry: Registry = REGISTRY
) -> ResourcePath:
    """The resource the segments after `/api/v1` or `/apis/{group}/{version}` name; 404 if
    none is served there."""
    if segments and segments[0] == "watch":  # a watch: requestinfo's verb says so
        segments = segments[1:]
    namespace: str | None = None
    if (
        len(segments) >= 3
        and segments[0] == "namespaces"
        and not (len(segments) == 3 and segments[2] in NAMESPACE_SUBRESOURCES and not group)
    ):
        namespace, segments = segments[1], segments[2:]
    if not 1 <= len(segments) <= 3:
        raise PathNotFound()
    info = registry.by_plural(group, version, segments[0])
    if info is None or (namespace is not None and not info.namespaced):
        raise PathNotFound()
    name = segments[1] if len(segments) > 1 else None
    subresource = segments[2] if len(segments) > 2 else None
    if subresource is not None and subresource not in info.subresources:
        raise PathNotFound()
    if info.namespaced and namespace is None and name is not None:
        raise PathNotFound()  # a namespaced object is addressed in its namespace
    return ResourcePath(info, namespace, name, subresource)
