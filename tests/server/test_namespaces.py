"""NamespaceLifecycle reads the namespace from the cache, as upstream reads its informer's,
and asks the store itself only when the cache does not have it."""

from __future__ import annotations

from typing import Any

import pytest

from fleetwarden.api.errors import Forbidden, NotFound
from fleetwarden.api.kinds import KindInfo
from fleetwarden.api.registry import REGISTRY
from fleetwarden.server.namespaces import require_namespace

CONFIGMAPS = REGISTRY.info("v1", "ConfigMap")


class Namespaces:
    """A store's namespaces: those its cache has, and those it holds (the cache may lag)."""

    def __init__(self, cached: dict[str, Any], stored: dict[str, Any]) -> None:
        self.cached, self.stored = cached, stored
        self.asked: list[str] = []

    def get(
        self, info: KindInfo, name: str, namespace: str = "", *, resource_version: str = ""
    ) -> Any:
        self.asked.append(resource_version)
        found = (self.cached if resource_version == "0" else self.stored).get(name)
        if found is None:
            raise NotFound(info.plural, info.group, name)
        return found


def active(name: str) -> dict[str, Any]:
    return {"metadata": {"name": name}, "status": {"phase": "Active"}}


def terminating(name: str) -> dict[str, Any]:
    return {"metadata": {"name": name, "deletionTimestamp": "2025-01-01T00:00:00Z"}}


def new_configmap(namespace: str) -> dict[str, Any]:
    return {"metadata": {"name": "cm", "namespace": namespace}}


def test_a_namespace_in_the_cache_is_not_read_from_the_store() -> None:
    store = Namespaces({"team": active("team")}, {"team": active("team")})
    require_namespace(store, CONFIGMAPS, new_configmap("team"))  # type: ignore[arg-type]
    assert store.asked == ["0"]


def test_a_namespace_the_cache_has_not_heard_of_yet_is_read_from_the_store() -> None:
    store = Namespaces({}, {"team": active("team")})  # just created on another replica
    require_namespace(store, CONFIGMAPS, new_configmap("team"))  # type: ignore[arg-type]
    assert store.asked == ["0", ""]


def test_a_namespace_missing_from_both_is_not_found() -> None:
    with pytest.raises(NotFound, match='namespaces "team" not found'):
        require_namespace(Namespaces({}, {}), CONFIGMAPS, new_configmap("team"))  # type: ignore[arg-type]


def test_a_terminating_namespace_in_the_cache_refuses_new_content() -> None:
    store = Namespaces({"team": terminating("team")}, {"team": terminating("team")})
    with pytest.raises(Forbidden, match="because it is being terminated"):
        require_namespace(store, CONFIGMAPS, new_configmap("team"))  # type: ignore[arg-type]
