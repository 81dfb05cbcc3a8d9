"""The in-memory store: the shared core over a backend that keeps nothing."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Unpack

from fleetwarden.store.core import CoreStore, StoredEvent, StoreOptions


class MemoryBackend:
    """Nothing to persist: the core's cache and event log are the whole state."""

    keeps_text = False
    groups_commits = False  # nothing to commit

    def load(
        self, max_events: int, max_bytes: int
    ) -> tuple[list[tuple[str, str]], list[StoredEvent]]:
        return [], []

    def commit(self, events: Sequence[StoredEvent], compacted: int) -> None:
        pass

    def close(self) -> None:
        pass


class MemoryStore(CoreStore):
    def __init__(self, **options: Unpack[StoreOptions]) -> None:
        super().__init__(MemoryBackend(), **options)
