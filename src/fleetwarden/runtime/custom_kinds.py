"""A hub's custom kinds: its registry kept serving what the CustomResourceDefinitions in its
store define, as apiextensions-apiserver's handler follows its CRD informer.

Each write of a CRD reaches the registry before the write returns (Store.subscribe): once
a client sees a CRD's names accepted, its kind is served.
"""

from __future__ import annotations

import logging
import threading

from fleetwarden.api import apiextensions
from fleetwarden.api.apiextensions import CustomResourceDefinition, served_kinds
from fleetwarden.api.registry import Registry
from fleetwarden.store.interface import EventType, Obj, Store, WatchEvent, collection_of

logger = logging.getLogger(__name__)

_COLLECTION = collection_of(apiextensions.KIND)


class CustomKinds:
    """Follows the CRDs of `store` into `registry` until closed."""

    def __init__(self, store: Store, registry: Registry) -> None:
        self._registry = registry
        self._lock = threading.Lock()
        # name -> (resourceVersion, the CRD or None once deleted), the newest seen of each:
        # the list below and the events may arrive in either order.
        self._seen: dict[str, tuple[int, CustomResourceDefinition | None]] = {}
        self._unsubscribe = store.subscribe(self._observe)
        listed = store.list(apiextensions.KIND)
        with self._lock:
            for item in listed.items:
                self._take(item, deleted=False)
            self._publish()

    def close(self) -> None:
        self._unsubscribe()

    def _observe(self, event: WatchEvent) -> None:
        if event.collection != _COLLECTION:
            return
        with self._lock:
            self._take(event.object, deleted=event.type is EventType.DELETED)
            self._publish()

    def _take(self, obj: Obj, *, deleted: bool) -> None:
        meta = obj["metadata"]
        name, rv = meta["name"], int(meta["resourceVersion"])
        if name in self._seen and self._seen[name][0] >= rv:
            return
        try:
            crd = None if deleted else CustomResourceDefinition.model_validate(obj)
        except ValueError as exc:  # not what admission lets through: serve nothing of it
            logger.warning("CustomResourceDefinition %s: %s", name, exc)
            crd = None
        self._seen[name] = (rv, crd)

    def _publish(self) -> None:
        self._registry.serve(
            info
            for _, (_, crd) in sorted(self._seen.items())
            if crd is not None
            for info in served_kinds(crd)
        )
