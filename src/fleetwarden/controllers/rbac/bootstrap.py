"""kube-apiserver's rbac/bootstrap-roles post-start hook: create the bootstrap roles and
bindings that are missing, and add to those still marked for autoupdate what they lack
(rules, aggregation selectors, subjects, labels), keeping whatever else a user added."""

from __future__ import annotations

import logging
from collections.abc import Iterable
from typing import Any

from fleetwarden.api import rbac
from fleetwarden.api.errors import AlreadyExists, Conflict, NotFound
from fleetwarden.api.registry import REGISTRY
from fleetwarden.store.interface import Obj, Store

logger = logging.getLogger(__name__)

# Attempts at one object whose stored copy keeps changing under it.
_ATTEMPTS = 5


def ensure_bootstrap_policy(store: Store, objects: Iterable[Obj]) -> None:
    for obj in objects:
        for _ in range(_ATTEMPTS):
            try:
                _ensure(store, obj)
                break
            except (Conflict, AlreadyExists):
                continue  # changed meanwhile: look again


def _ensure(store: Store, wanted: Obj) -> None:
    info = REGISTRY.info(wanted["apiVersion"], wanted["kind"])
    name = wanted["metadata"]["name"]
    try:
        current = store.get(info, name)
    except NotFound:
        store.create(wanted)
        logger.info("created bootstrap %s %s", info.kind, name)
        return
    annotations = current["metadata"].get("annotations") or {}
    if annotations.get(rbac.AUTOUPDATE_ANNOTATION) == "false":
        return
    reconciled = _reconciled(current, wanted)
    if reconciled != current:
        store.update(reconciled)
        logger.info("reconciled bootstrap %s %s", info.kind, name)


def _reconciled(current: Obj, wanted: Obj) -> Obj:
    new = {**current, "metadata": dict(current["metadata"])}
    meta, wanted_meta = new["metadata"], wanted["metadata"]
    for field in ("labels", "annotations"):
        meta[field] = {**wanted_meta.get(field, {}), **(meta.get(field) or {})}
    if "aggregationRule" in wanted:
        # Its rules are the aggregation controller's; only the selectors are the policy's.
        new["aggregationRule"] = wanted["aggregationRule"]
    for field in ("rules", "subjects"):
        if field in wanted:
            new[field] = _union(current.get(field) or [], wanted[field])
    return new


def _union(have: list[Any], want: list[Any]) -> list[Any]:
    return [*have, *(item for item in want if item not in have)]
