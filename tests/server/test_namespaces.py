"""NamespaceLifecycle reads the namespace from the cache, as upstream reads its informer's,
and asks the store itself only when the cache does not have it."""

from __future__ import annotations

from typing import Any

import pytest

from fleetwarden.api.errors import Forbidden, NotFound
from fleetwarden.api.kinds import KindInfo
from fleetwarden.api.registry import REGISTRY
from fleetwarden.server.namespaces import require_namespace

from .conftest import Api

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


def test_the_api_server_lets_the_cluster_webhook_read_a_terminating_namespace(api: Api) -> None:
    """OCM's ManagedCluster webhook reads the cluster's namespace through the server's store:
    a namespace held by a finalizer while it is deleted refuses the cluster's acceptance."""
    held = {"apiVersion": "v1", "kind": "Namespace",
            "metadata": {"name": "c1", "finalizers": ["example.com/hold"]}}  # fmt: skip
    assert api.post("/api/v1/namespaces", held).status == 201
    assert api.delete("/api/v1/namespaces/c1").status == 200
    accepted = {"apiVersion": "cluster.open-cluster-management.io/v1", "kind": "ManagedCluster",
                "metadata": {"name": "c1"}, "spec": {"hubAcceptsClient": True}}  # fmt: skip
    reply = api.post("/apis/cluster.open-cluster-management.io/v1/managedclusters", accepted)
    assert (reply.status, reply.json["message"]) == (
        403,
        'admission webhook "managedclustervalidators.admission.cluster.open-cluster-management.io"'
        ' denied the request: managedclusters/accept.cluster.open-cluster-management.io "c1" is'
        ' forbidden: cluster namespace "c1" is terminating',
    )
    accepted["metadata"]["name"] = "c2"
    reply = api.post("/apis/cluster.open-cluster-management.io/v1/managedclusters", accepted)
    assert reply.status == 201
