"""A running hub API server (uvicorn on a thread, over a MemoryStore) and a client for it."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from fleetwarden.admission import default_chain
from fleetwarden.client import Client
from fleetwarden.runtime.clock import RealClock
from fleetwarden.server import Server, create_app
from fleetwarden.store import MemoryStore


@pytest.fixture
def store() -> MemoryStore:
    return MemoryStore()


@pytest.fixture
def server(store: MemoryStore) -> Iterator[Server]:
    with Server(create_app(store, default_chain(), RealClock())) as running:
        yield running


@pytest.fixture
def client(server: Server) -> Iterator[Client]:
    with Client(server.url) as hub:
        yield hub


def cluster(name: str = "member1", **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "cluster.karmada.io/v1alpha1",
        "kind": "Cluster",
        "metadata": {"name": name, "labels": {"location": "us"}},
        "spec": {"syncMode": "Push", **spec},
    }


def deployment(name: str, **metadata: Any) -> dict[str, Any]:
    """The least Deployment the API server admits."""
    labels = {"app": name}
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, **metadata},
        "spec": {
            "selector": {"matchLabels": labels},
            "template": {
                "metadata": {"labels": labels},
                "spec": {"containers": [{"name": "app", "image": "nginx"}]},
            },
        },
    }
