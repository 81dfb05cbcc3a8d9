"""Where `explain` reads the fleet: a hub through its API, or what `simulate --dump` wrote.

Both answer the same few questions: an object, the objects of a kind, the Events about an
object, an object as it was at a resourceVersion (what the hub still holds of its history;
a dump holds none), and what time it is there.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from fleetwarden.api.errors import Expired, NotFound, StatusError
from fleetwarden.api.kinds import KindInfo
from fleetwarden.api.meta import parse_time
from fleetwarden.api.registry import REGISTRY
from fleetwarden.semantics.selectors import parse_selector

if TYPE_CHECKING:
    from fleetwarden.client import Client

Obj = dict[str, Any]
Objs = list[Obj]  # `list` is a method of the sources: their annotations say Objs
EVENT = REGISTRY.info("v1", "Event")


class Source(Protocol):
    def resolve(self, resource: str) -> KindInfo:
        """What a user means by `deploy`, `rb`, `placements`..."""
        ...

    def get(self, info: KindInfo, name: str, namespace: str = "") -> Obj | None: ...

    def list(
        self, info: KindInfo, namespace: str | None = None, *, label_selector: str | None = None
    ) -> Objs:
        """The objects of the kind (in the namespace, or all when None)."""
        ...

    def events(self, obj: Mapping[str, Any]) -> Objs:
        """The Events whose involvedObject is obj."""
        ...

    def version_at(self, info: KindInfo, name: str, namespace: str, version: str) -> Obj | None:
        """The object as it was at resourceVersion `version`, if that is still known."""
        ...

    def now(self) -> datetime: ...

    # Whether version_at can answer at all.
    history: bool

    @property
    def where(self) -> str:
        """What the fleet was read from, for the output's first line."""
        ...


class ApiSource:
    """A hub, through its API as the user the kubeconfig names: RBAC decides what is read.
    Its time is this machine's, as kubectl's ages are, unless `now` says otherwise."""

    history = True

    def __init__(self, client: Client, now: datetime | None = None) -> None:
        self.client = client
        self._now = now

    @property
    def where(self) -> str:
        return self.client.server

    def resolve(self, resource: str) -> KindInfo:
        return self.client.resolve(resource)

    def get(self, info: KindInfo, name: str, namespace: str = "") -> Obj | None:
        try:
            return self.client.get(info, name, namespace)
        except NotFound:
            return None

    def list(
        self, info: KindInfo, namespace: str | None = None, *, label_selector: str | None = None
    ) -> Objs:
        listed = self.client.list(info, namespace, label_selector=label_selector)
        kind = {"apiVersion": info.api_version, "kind": info.kind}
        # A List's items may leave out their apiVersion and kind.
        return [{**kind, **item} for item in listed.get("items") or []]

    def events(self, obj: Mapping[str, Any]) -> Objs:
        from fleetwarden.cli.describe import events_of

        return events_of(self.client, obj)

    def version_at(self, info: KindInfo, name: str, namespace: str, version: str) -> Obj | None:
        """A watch from just before `version`: its first event about the object, when that
        is the object at `version`. The hub keeps a window of history (the watch cache,
        etcd's until compaction); older versions are gone (410 Expired): None. Other
        refusals (RBAC's: no watch allowed) are raised."""
        if not version.isdigit() or int(version) < 1:
            return None
        try:
            stream = self.client.watch(
                info,
                namespace or None,
                resource_version=str(int(version) - 1),
                field_selector=f"metadata.name={name}",
                timeout_seconds=1,
            )
            with stream:
                for event in stream:
                    if event.type == "BOOKMARK":
                        continue
                    found = event.object
                    meta = found.get("metadata") or {}
                    return found if meta.get("resourceVersion") == version else None
        except Expired:
            return None
        return None

    def now(self) -> datetime:
        return self._now or datetime.now(UTC)


class DumpSource:
    """The objects a file holds: `simulate -o json --dump` output (or the text output's
    `objects:`), a JSON or YAML List, or YAML documents. No history; the time is the
    latest one the objects mention (the scenario's end, near enough)."""

    history = False

    def __init__(self, objects: Iterable[Obj], where: str = "") -> None:
        self.objects = [o for o in objects if isinstance(o, dict) and o.get("kind")]
        self._where = where

    @classmethod
    def read(cls, path: str) -> DumpSource:
        return cls(_objects_in(Path(path).read_text()), path)

    @property
    def where(self) -> str:
        return self._where

    def resolve(self, resource: str) -> KindInfo:
        from fleetwarden.client.discovery import Discovery

        class _Registered(Discovery):
            def kinds(self) -> list[KindInfo]:
                return REGISTRY.kinds()

        return _Registered(lambda *_: {}).resolve(resource)

    def _of(self, info: KindInfo) -> Iterator[Obj]:
        """The objects of the kind, in any of its versions (one collection holds them)."""
        for obj in self.objects:
            group = str(obj.get("apiVersion", "")).rpartition("/")[0]
            if obj.get("kind") == info.kind and group == info.group:
                yield obj

    def get(self, info: KindInfo, name: str, namespace: str = "") -> Obj | None:
        for obj in self._of(info):
            meta = obj.get("metadata") or {}
            if meta.get("name") == name and (meta.get("namespace") or "") == (
                namespace if info.namespaced else ""
            ):
                return obj
        return None

    def list(
        self, info: KindInfo, namespace: str | None = None, *, label_selector: str | None = None
    ) -> Objs:
        selector = parse_selector(label_selector) if label_selector else None
        found = []
        for obj in self._of(info):
            meta = obj.get("metadata") or {}
            if namespace and info.namespaced and meta.get("namespace") != namespace:
                continue
            if selector is not None and not selector.matches(meta.get("labels") or {}):
                continue
            found.append(obj)
        return sorted(found, key=_sort_key)

    def events(self, obj: Mapping[str, Any]) -> Objs:
        meta = obj.get("metadata") or {}
        wanted = {
            "kind": obj.get("kind") or "",
            "name": meta.get("name") or "",
            "namespace": meta.get("namespace") or "",
            "uid": meta.get("uid") or "",
        }
        found = []
        for event in self._of(EVENT):
            involved = event.get("involvedObject") or {}
            if all(
                (involved.get(key) or "") == value
                for key, value in wanted.items()
                if value or key in ("name", "namespace")
            ):
                found.append(event)
        return found

    def version_at(self, info: KindInfo, name: str, namespace: str, version: str) -> Obj | None:
        return None

    def now(self) -> datetime:
        latest = max(_times(self.objects), default=None)
        return latest or datetime.now(UTC)


def _sort_key(obj: Mapping[str, Any]) -> tuple[str, str]:
    meta = obj.get("metadata") or {}
    return str(meta.get("namespace") or ""), str(meta.get("name") or "")


_OBJECTS_HEADING = re.compile(r"^objects:\s*$", re.MULTILINE)


def _objects_in(text: str) -> Objs:
    """The objects of a dump, whichever of the shapes above it has."""
    from fleetwarden.api.codec import load_yaml_documents

    heading = _OBJECTS_HEADING.search(text)
    if heading is not None and not text.lstrip().startswith("{"):
        text = text[heading.end() :]  # simulate's text output: the objects come last
    try:
        docs: list[Any] = [json.loads(text)]
    except json.JSONDecodeError:
        docs = [d for d in load_yaml_documents(text) if d is not None]
    objects: list[Obj] = []
    for doc in docs:
        objects.extend(_flattened(doc))
    return objects


def _flattened(doc: Any) -> Iterator[Obj]:
    if isinstance(doc, list):
        for item in doc:
            yield from _flattened(item)
    elif isinstance(doc, dict):
        if isinstance(doc.get("objects"), list):  # simulate -o json --dump
            yield from _flattened(doc["objects"])
        elif str(doc.get("kind", "")).endswith("List") and isinstance(doc.get("items"), list):
            yield from _flattened(doc["items"])
        else:
            yield doc


_TIME_KEYS = re.compile(r"(Time|Timestamp)$")


def _times(value: Any, key: str = "") -> Iterator[datetime]:
    """Every timestamp in the objects: fields named *Time or *Timestamp."""
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _times(v, k)
    elif isinstance(value, list):
        for item in value:
            yield from _times(item, key)
    elif isinstance(value, str) and _TIME_KEYS.search(key):
        try:
            yield parse_time(value)
        except (ValueError, TypeError):
            return


def read_error(exc: Exception) -> str:
    """How a read that explain could do without failed, in a line."""
    if isinstance(exc, StatusError):
        return f"{exc.reason or 'Error'}: {exc.message}"
    return str(exc)
