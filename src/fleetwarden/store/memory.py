"""The in-memory store: the shared core over a backend that keeps nothing."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Unpack

from fleetwarden.api.errors import AlreadyExists
from fleetwarden.store.core import (
    CoreStore,
    StoredEvent,
    StoreOptions,
    _metadata,
    _ns,
    _path,
    _Txn,
)
from fleetwarden.store.interface import EventType, collection_of


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

    def restore(self, objects: Iterable[Mapping[str, Any]]) -> None:
        """Objects as another store keeps them, taken back as they are (as an etcd
        snapshot restore gives kube-apiserver its objects back): each keeps its uid,
        resourceVersion, generation, creationTimestamp, owners and status, and is told to
        subscribers and watches as ADDED at its own resourceVersion, oldest first. Nothing
        is admitted: every object was when first written. One without a resourceVersion
        comes after the others, one without a uid or creationTimestamp gets its own.
        Dependents whose owners did not come are collected, as after a crash."""
        given = [dict(obj) for obj in objects]
        given.sort(key=lambda obj: int(_metadata(obj).get("resourceVersion") or 0) or 1 << 62)
        for obj in given:
            self._restore(obj)
        self._collect_dangling()

    def _restore(self, obj: dict[str, Any]) -> None:
        info = self._info_of(obj)
        meta = obj["metadata"] = dict(_metadata(obj))
        if not meta.get("name"):
            raise ValueError(f"restore: a {info.kind} without a name")
        rv = int(meta.get("resourceVersion") or 0) or self._rv + 1
        if rv <= self._rv:
            raise ValueError(
                f"restore: {info.kind} {meta.get('name')!r}: resourceVersion {rv} is not "
                f"newer than the store's {self._rv}"
            )
        namespace = _ns(info, str(meta.get("namespace") or ""))
        key = (collection_of(info), _path(namespace, str(meta.get("name") or "")))

        def restore(txn: _Txn) -> None:
            if self._lookup(key) is not None:
                raise AlreadyExists(info.plural, info.group, key[1])
            meta.setdefault("uid", self._new_uid())
            meta.setdefault("creationTimestamp", self._timestamp())
            meta.setdefault("generation", 1)
            self._rv = rv - 1  # the write below takes the next resourceVersion: the object's
            txn.put(key, obj, EventType.ADDED)

        self._run(restore)
