import itertools

import pytest

from fleetwarden.runtime.clock import VirtualClock
from fleetwarden.store import MemoryStore


@pytest.fixture
def clock() -> VirtualClock:
    return VirtualClock()


@pytest.fixture
def store(clock: VirtualClock) -> MemoryStore:
    uids = itertools.count(1)
    return MemoryStore(now=clock.now, new_uid=lambda: f"uid-{next(uids)}")
