import itertools
from typing import Any

import pytest

from fleetwarden.api.meta import Resource
from fleetwarden.api.registry import REGISTRY
from fleetwarden.runtime.clock import VirtualClock
from fleetwarden.store import MemoryStore


@pytest.fixture
def clock() -> VirtualClock:
    return VirtualClock()


@pytest.fixture
def store(clock: VirtualClock) -> MemoryStore:
    uids = itertools.count(1)
    return MemoryStore(now=clock.now, new_uid=lambda: f"uid-{next(uids)}")


@pytest.fixture
def decoded(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The names of the objects decoded (wire dict to typed object) from now on."""
    names: list[str] = []
    decode = REGISTRY.decode

    def counting(data: Any) -> Resource:
        names.append(data["metadata"]["name"])
        return decode(data)

    monkeypatch.setattr(REGISTRY, "decode", counting)
    return names
