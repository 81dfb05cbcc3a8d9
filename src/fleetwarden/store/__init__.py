"""The store: Kubernetes API storage semantics, in memory or in an embedded SQLite file."""

from __future__ import annotations

import os
from typing import Unpack

from fleetwarden.store.core import CoreStore, StoreOptions
from fleetwarden.store.interface import (
    EventType,
    ListResult,
    PatchType,
    Propagation,
    Store,
    Watch,
    WatchEvent,
    collection_of,
)
from fleetwarden.store.memory import MemoryStore
from fleetwarden.store.sqlite import SqliteStore

__all__ = [
    "CoreStore",
    "EventType",
    "ListResult",
    "MemoryStore",
    "PatchType",
    "Propagation",
    "SqliteStore",
    "Store",
    "StoreOptions",
    "Watch",
    "WatchEvent",
    "collection_of",
    "open_store",
]


def open_store(
    path: str | os.PathLike[str] = ":memory:", **options: Unpack[StoreOptions]
) -> CoreStore:
    """A MemoryStore for ":memory:", else a SqliteStore on that file."""
    if os.fspath(path) == ":memory:":
        return MemoryStore(**options)
    return SqliteStore(path, **options)
