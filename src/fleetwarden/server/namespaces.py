"""Namespaces as the API server keeps them: the system ones always there, new content only
in a namespace that exists and is not terminating (the NamespaceLifecycle admission plugin),
and a new namespace Active from its creation (the namespace strategy's PrepareForCreate)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from fleetwarden.api.errors import Forbidden, NotFound
from fleetwarden.api.kinds import KindInfo
from fleetwarden.api.registry import REGISTRY
from fleetwarden.store.interface import Obj, Store

NAMESPACE = REGISTRY.info("v1", "Namespace")
# What kube-apiserver creates at start, and refuses to delete.
SYSTEM_NAMESPACES = ("default", "kube-system", "kube-public")
ACTIVE = "Active"


def ensure_system_namespaces(store: Store) -> None:
    """Create the system namespaces that do not exist yet."""
    for name in SYSTEM_NAMESPACES:
        ensure_namespace(store, name)


def ensure_namespace(store: Store, name: str) -> None:
    """Create the namespace, Active, unless it exists."""
    try:
        store.get(NAMESPACE, name)
    except NotFound:
        new = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}
        activate(store, store.create(new))


def activate(store: Store, namespace: Obj) -> Obj:
    """A namespace just created, with the Active phase it is born with."""
    return store.update({**namespace, "status": {"phase": ACTIVE}}, subresource="status")


def require_namespace(store: Store, info: KindInfo, obj: Mapping[str, Any]) -> None:
    """NamespaceLifecycle: refuse a new object in a namespace that is missing or being
    deleted, naming the object being created as upstream does. As upstream, the namespace
    is read from the cache (the plugin's informer; here the store's watch cache), and only
    if it is not there from the store itself (a namespace just created on another replica)."""
    meta = obj["metadata"]
    name = meta["namespace"]
    try:
        namespace = store.get(NAMESPACE, name, resource_version="0")
    except NotFound:
        try:
            namespace = store.get(NAMESPACE, name)
        except NotFound:
            raise NotFound("namespaces", "", name) from None
    if "deletionTimestamp" in namespace["metadata"]:
        detail = f"unable to create new content in namespace {name} because it is being terminated"
        raise Forbidden(info.plural, info.group, meta.get("name") or "", detail)


def check_deletable(name: str) -> None:
    if name in SYSTEM_NAMESPACES:
        raise Forbidden("namespaces", "", name, "this namespace may not be deleted")
