from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import NamedTuple

import pytest

from fleetwarden.cli.serving import Serving
from fleetwarden.cli.up import Hub
from fleetwarden.client.client import Client
from fleetwarden.runtime.settings import Settings


class JoiningHub(NamedTuple):
    admin: Client
    bootstrap: Path  # the bootstrap kubeconfig `up` gives its agents


@pytest.fixture
def joining_hub(tmp_path: Path, admin_client: Callable[[Hub], Client]) -> Iterator[JoiningHub]:
    """A started hub, as its administrator, and a bootstrap kubeconfig to join it with."""
    hub = Hub(tmp_path / "hub", Serving(port=0), Settings())
    hub.start()
    flags = hub.agent_credentials(tmp_path / "members")("cluster1")
    yield JoiningHub(admin_client(hub), Path(flags[0].removeprefix("--bootstrap-kubeconfig=")))
    hub.stop()
