"""Releasing a finalizer, as controllers do once their clean-up is done."""

from __future__ import annotations

from fleetwarden.api.meta import Resource
from fleetwarden.api.registry import REGISTRY
from fleetwarden.store.interface import Store


def remove_finalizer(store: Store, obj: Resource, finalizer: str) -> None:
    """controllerutil.RemoveFinalizer and an update carrying the resourceVersion read."""
    finalizers = obj.metadata.finalizers or []
    if finalizer not in finalizers:
        return
    remaining = [f for f in finalizers if f != finalizer] or None
    patch = {
        "metadata": {"resourceVersion": obj.metadata.resource_version, "finalizers": remaining}
    }
    info = REGISTRY.info(obj.api_version, obj.kind)
    store.patch(info, obj.name, obj.namespace, patch)
