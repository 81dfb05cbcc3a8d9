"""One shared suite, run against every backend: the `store` fixture is parametrised."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from etcd_cluster import EtcdCluster

from fleetwarden.api.registry import REGISTRY
from fleetwarden.store import CoreStore, MemoryStore, SqliteStore
from fleetwarden.store.core import StoreOptions
from fleetwarden.store.etcd import EtcdStore

DEPLOYMENTS = REGISTRY.info("apps/v1", "Deployment")  # namespaced, status subresource
LEASES = REGISTRY.info("coordination.k8s.io/v1", "Lease")  # namespaced, no status subresource
CONFIGMAPS = REGISTRY.info("v1", "ConfigMap")
NAMESPACES = REGISTRY.info("v1", "Namespace")  # cluster-scoped
CLUSTERS = REGISTRY.info("cluster.karmada.io/v1alpha1", "Cluster")  # cluster-scoped

START = datetime(2025, 1, 1, 12, 0, 0, 500_000, tzinfo=UTC)


class Clock:
    def __init__(self) -> None:
        self.now = START

    def __call__(self) -> datetime:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += timedelta(seconds=seconds)


def uid_counter() -> Callable[[], str]:
    counter = itertools.count(1)
    return lambda: f"uid-{next(counter)}"


MakeStore = Callable[..., CoreStore]


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture(scope="session")
def etcd(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EtcdCluster]:
    """One etcd for the session's stores, each under a prefix of its own."""
    cluster = EtcdCluster(tmp_path_factory.mktemp("etcd")).start()
    yield cluster
    cluster.stop()


@pytest.fixture(params=["memory", "sqlite", "etcd"])
def make_store(request: pytest.FixtureRequest, tmp_path: Path, clock: Clock) -> Iterator[MakeStore]:
    """Opens a store of the backend under test (each sqlite one on its own file, each etcd
    one under its own prefix)."""
    opened: list[CoreStore] = []

    def make(**options: Any) -> CoreStore:
        defaults: StoreOptions = {"now": clock, "new_uid": uid_counter()}
        merged: StoreOptions = {**defaults, **options}  # type: ignore[typeddict-item]
        if request.param == "memory":
            store: CoreStore = MemoryStore(**merged)
        elif request.param == "etcd":
            etcd: EtcdCluster = request.getfixturevalue("etcd")
            prefix = f"/{request.node.name}/{len(opened)}"
            store = EtcdStore(etcd.urls, prefix=prefix, **merged)
        else:
            store = SqliteStore(tmp_path / f"store-{len(opened)}.db", **merged)
        opened.append(store)
        return store

    yield make
    for store in opened:
        store.close()


@pytest.fixture
def store(make_store: MakeStore) -> CoreStore:
    return make_store()


Revisions = Callable[[int], int]


def revisions(store: CoreStore) -> Revisions:
    """The resourceVersion of the store's n-th write from now: etcd's revisions count the
    writes of the whole cluster (and a fresh etcd is at 1 already), so a test counts from
    where the store stands when it starts, not from 0."""
    base = store.resource_version
    return lambda n: base + n


@pytest.fixture
def rv(store: CoreStore) -> Revisions:
    """revisions() of the test's `store`."""
    return revisions(store)


def deployment(
    name: str = "web", namespace: str = "default", replicas: int = 1, **metadata: Any
) -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "namespace": namespace, **metadata},
        "spec": {"replicas": replicas},
    }


def lease(name: str = "lock", namespace: str = "default", **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "coordination.k8s.io/v1",
        "kind": "Lease",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"holderIdentity": "a", **spec},
    }


def namespace(name: str, **metadata: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name, **metadata}}


def owner_ref(owner: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": owner["apiVersion"],
        "kind": owner["kind"],
        "name": owner["metadata"]["name"],
        "uid": owner["metadata"]["uid"],
    }
