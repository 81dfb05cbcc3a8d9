"""Namespaces as the API server keeps them: the system ones always there, new content only
in a namespace that exists and is not terminating (the NamespaceLifecycle admission plugin),
and a new namespace Active from its creation (the namespace strategy's PrepareForCreate)."""

from __future__ import annotations

import json

from fleetwarden.api.errors import NotFound, StatusError
from fleetwarden.api.registry import REGISTRY
from fleetwarden.store.interface import Obj, Store

NAMESPACE = REGISTRY.info("v1", "Namespace")
# What kube-apiserver creates at start, and refuses to delete.
SYSTEM_NAMESPACES = ("default", "kube-system", "kube-public")
ACTIVE = "Active"


class Forbidden(StatusError):
    code = 403
    reason = "Forbidden"


def ensure_system_namespaces(store: Store) -> None:
    """Create the system namespaces that do not exist yet."""
    for name in SYSTEM_NAMESPACES:
        try:
            store.get(NAMESPACE, name)
        except NotFound:
            new = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}
            activate(store, store.create(new))


def activate(store: Store, namespace: Obj) -> Obj:
    """A namespace just created, with the Active phase it is born with."""
    return store.update({**namespace, "status": {"phase": ACTIVE}}, subresource="status")


def require_namespace(store: Store, name: str) -> None:
    """Refuse new content for a namespace that is missing or being deleted."""
    try:
        namespace = store.get(NAMESPACE, name)
    except NotFound:
        raise NotFound("namespaces", "", name) from None
    if "deletionTimestamp" in namespace["metadata"]:
        raise Forbidden(
            f"unable to create new content in namespace {name} because it is being terminated"
        )


def check_deletable(name: str) -> None:
    if name in SYSTEM_NAMESPACES:
        raise Forbidden(
            f"namespaces {json.dumps(name)} is forbidden: this namespace may not be deleted"
        )
