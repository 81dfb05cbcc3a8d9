"""What tests that run a hub in-process share: reaching it as its administrator, through
the kubeconfig `fleetwarden up` would write (HTTPS, the hub's CA, an admin certificate)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from fleetwarden.cli.up import Hub
from fleetwarden.client.client import Client
from fleetwarden.client.kubeconfig import load_kubeconfig


@pytest.fixture
def admin_client(tmp_path: Path) -> Iterator[Callable[[Hub], Client]]:
    """Clients of a started hub as its administrator; closed at the end of the test."""
    clients: list[Client] = []

    def connect(hub: Hub) -> Client:
        kubeconfig = tmp_path / "admin.kubeconfig"
        hub.write_kubeconfig(kubeconfig)
        client = Client.from_kubeconfig(load_kubeconfig(str(kubeconfig)))
        clients.append(client)
        return client

    yield connect
    for client in clients:
        client.close()
