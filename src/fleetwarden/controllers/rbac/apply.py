"""Applying the RBAC objects a hub controller owns for someone (an agent): created when
missing, their rules, subjects and role put back when changed, removed when due."""

from __future__ import annotations

from typing import Any

from fleetwarden.api import rbac
from fleetwarden.api.errors import AlreadyExists, Conflict, NotFound
from fleetwarden.runtime.manager import Context

Obj = dict[str, Any]
_RBAC_KINDS = {info.kind: info for info in rbac.KINDS}


def apply(ctx: Context, wanted: Obj) -> None:
    """resourceapply: create the object, or put back its rules, subjects and role (a
    binding whose role changed is made anew: roleRef cannot change)."""
    info = _RBAC_KINDS[wanted["kind"]]
    meta = wanted["metadata"]
    current = ctx.cache.informer(info).get(meta["name"], meta.get("namespace", ""))
    if current is None:
        try:
            ctx.store.create(wanted)
        except AlreadyExists:
            raise Conflict(info.plural, info.group, meta["name"]) from None  # not seen yet
        return
    stored = current.to_dict()
    fields = ("rules", "subjects", "roleRef")
    if all(stored.get(f) == wanted.get(f) for f in fields) and _has_labels(stored, meta):
        return
    if stored.get("roleRef", wanted.get("roleRef")) != wanted.get("roleRef"):
        ctx.store.delete(info, meta["name"], meta.get("namespace", ""))
        ctx.store.create(wanted)
        return
    labels = {**(stored["metadata"].get("labels") or {}), **meta.get("labels", {})}
    updated = {**stored, **{f: wanted[f] for f in fields if f in wanted}}
    updated["metadata"] = {**stored["metadata"], "labels": labels}
    ctx.store.update(updated)


def remove(ctx: Context, obj: Obj) -> None:
    info = _RBAC_KINDS[obj["kind"]]
    meta = obj["metadata"]
    try:
        ctx.store.delete(info, meta["name"], meta.get("namespace", ""))
    except NotFound:
        return


def _has_labels(stored: Obj, meta: Obj) -> bool:
    labels = stored["metadata"].get("labels") or {}
    return all(labels.get(k) == v for k, v in (meta.get("labels") or {}).items())
