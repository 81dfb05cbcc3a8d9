"""The in-memory store: the shared core over a backend that keeps nothing."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from itertools import count
from typing import Any, TypeVar, Unpack

from fleetwarden.api.errors import AlreadyExists
from fleetwarden.api.kinds import KindInfo
from fleetwarden.store.core import (
    CoreStore,
    Key,
    StoredEvent,
    StoreOptions,
    _metadata,
    _ns,
    _path,
    _Txn,
)
from fleetwarden.store.interface import EventType, Obj, collection_of

_T = TypeVar("_T")


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

    def restore(
        self,
        objects: Iterable[Mapping[str, Any]],
        read: Callable[[Obj], _T] | None = None,
    ) -> list[tuple[Obj, _T | None]]:
        """Objects as another store keeps them, taken back as they are (as an etcd
        snapshot restore gives kube-apiserver its objects back): each keeps its uid,
        resourceVersion, generation, creationTimestamp, owners and status, and is told to
        subscribers and watches as ADDED at its own resourceVersion, oldest first. Nothing
        is admitted: every object was when first written. One without a resourceVersion
        comes after the others, one without a uid or creationTimestamp gets its own.
        `read`, if given, reads each object as it will be stored (what was missing made),
        before any is written.
        Every object is checked before any is written: a refusal (ValueError, or
        AlreadyExists, or what `read` raised) leaves the store as it was. Dependents whose
        owners did not come are collected, as after a crash. Returns each object as
        stored (canonical, the caller's to keep), oldest first, with what `read` gave."""
        planned = sorted(map(self._planned, objects), key=lambda p: (not p.rv, p.rv))
        taken: set[Key] = set()
        newest = self._rv
        for plan in planned:
            if plan.key in taken or self._lookup(plan.key) is not None:
                raise AlreadyExists(plan.info.plural, plan.info.group, plan.key[1])
            taken.add(plan.key)
            if plan.rv and plan.rv <= newest:
                raise ValueError(
                    f"restore: {plan.describe()}: resourceVersion {plan.rv} is not newer "
                    f"than {newest}, the store's or another restored object's"
                )
            newest = plan.rv or newest
        unversioned = count(newest + 1)  # what comes after the others, in turn
        completed = [self._completed(plan, unversioned) for plan in planned]
        readings = [read(plan.obj) if read else None for plan in completed]
        stored = [self._restore(plan) for plan in completed]
        self._collect_dangling()
        return list(zip(stored, readings, strict=True))

    def _planned(self, obj: Mapping[str, Any]) -> _Restored:
        """The object, where it goes and at which resourceVersion (0: after the others)."""
        info = self._info_of(obj)
        meta = dict(_metadata(obj))
        name, given = meta.get("name"), meta.get("resourceVersion") or "0"
        if not isinstance(name, str) or not name:
            raise ValueError(f"restore: a {info.kind} without a name")
        namespace = _ns(info, str(meta.get("namespace") or ""))
        key = (collection_of(info), _path(namespace, name))
        if _revision(given):  # etcd's revisions are int64s: nothing else is one a store gave
            return _Restored(info, key, int(given), {**obj, "metadata": meta})
        raise ValueError(
            f"restore: {_described(info, key)}: metadata.resourceVersion {repr(given)[:40]} is "
            "not a resourceVersion (a revision of 63 bits at most)"
        )

    def _completed(self, plan: _Restored, unversioned: Iterator[int]) -> _Restored:
        """The object as it will be stored: a uid made only for an object that has none,
        and the next of `unversioned` for one without a resourceVersion."""
        meta = plan.obj["metadata"]
        if "uid" not in meta:
            meta["uid"] = self._new_uid()
        meta.setdefault("creationTimestamp", self._timestamp())
        meta.setdefault("generation", 1)
        rv = plan.rv or next(unversioned)
        meta["resourceVersion"] = str(rv)
        return replace(plan, rv=rv)

    def _restore(self, plan: _Restored) -> Obj:
        def restore(txn: _Txn) -> Obj:
            # The write below takes the next resourceVersion: the object's own.
            self._rv = plan.rv - 1
            return txn.put(plan.key, plan.obj, EventType.ADDED)

        return self._run(restore)


@dataclass(frozen=True)
class _Restored:
    info: KindInfo
    key: Key
    rv: int
    obj: dict[str, Any]

    def describe(self) -> str:
        return _described(self.info, self.key)


def _described(info: KindInfo, key: Key) -> str:
    return f"{info.kind} {key[1]!r}"


def _revision(given: Any) -> bool:
    return (
        isinstance(given, str)
        and given.isascii()
        and given.isdigit()
        and len(given) <= 19
        and int(given) < 1 << 63
    )
