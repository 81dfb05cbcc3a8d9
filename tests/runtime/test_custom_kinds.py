"""Kinds that appear at run time: a hub's registry following the CRDs in its store, and a
controller watching a kind it learns of while it runs, under both drivers."""

from __future__ import annotations

import time
from typing import Any

import pytest

from fleetwarden.api.apiextensions import KIND as CRD
from fleetwarden.api.core import Unstructured
from fleetwarden.api.kinds import KindInfo
from fleetwarden.api.registry import REGISTRY
from fleetwarden.runtime.clock import RealClock, VirtualClock
from fleetwarden.runtime.custom_kinds import CustomKinds
from fleetwarden.runtime.manager import (
    DONE,
    Context,
    Controller,
    ControllerManager,
    RealDriver,
    Result,
    VirtualDriver,
    Watches,
)
from fleetwarden.store import MemoryStore

CONFIGMAP = REGISTRY.info("v1", "ConfigMap")
WIDGET = KindInfo("example.com", "v1", "Widget", "widgetry", False, Unstructured)


def crd(*conditions: str, plural: str = "widgetry", served: bool = True) -> dict[str, Any]:
    """A Widget CRD whose status says the conditions given are true."""
    names = {"plural": plural, "singular": "widget", "kind": "Widget", "listKind": "WidgetList"}
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{plural}.example.com"},
        "spec": {
            "group": "example.com",
            "scope": "Cluster",
            "names": names,
            "versions": [
                {"name": "v1", "served": served, "storage": True},
                {"name": "v1beta1", "served": True, "storage": False},
            ],
        },
        "status": {
            "acceptedNames": names,
            "conditions": [{"type": c, "status": "True"} for c in conditions],
        },
    }


def write(store: MemoryStore, obj: dict[str, Any]) -> None:
    """Create the CRD, then write its status (the store takes none on create)."""
    created = store.create(obj)
    store.update({**created, "status": obj["status"]}, subresource="status")


def served(registry: Any) -> list[tuple[str, str, bool]]:
    return [(i.api_version, i.plural, i.namespaced) for i in registry.custom_kinds()]


# --- the registry following the CRDs -------------------------------------------------------


def test_a_crd_is_served_once_its_names_are_accepted_in_each_served_version() -> None:
    registry = REGISTRY.overlay()
    store = MemoryStore(kinds=registry.info)
    CustomKinds(store, registry)
    store.create(crd())
    assert served(registry) == []
    write(store, crd("NamesAccepted", plural="gadgets"))
    assert served(registry) == [("example.com/v1", "gadgets", False),
                                ("example.com/v1beta1", "gadgets", False)]  # fmt: skip
    info = registry.by_plural("example.com", "v1", "gadgets")
    assert info is not None and info.custom is not None
    assert (info.singular, info.list_kind, info.has_status) == ("widget", "WidgetList", False)
    assert REGISTRY.by_plural("example.com", "v1", "gadgets") is None  # the hub's alone


def test_what_is_there_when_following_starts_is_served_and_a_deletion_ends_it() -> None:
    registry = REGISTRY.overlay()
    store = MemoryStore(kinds=registry.info)
    write(store, crd("Established", served=False))
    custom = CustomKinds(store, registry)
    assert served(registry) == [("example.com/v1beta1", "widgetry", False)]
    store.delete(CRD, "widgetry.example.com")
    assert served(registry) == []
    custom.close()
    write(store, crd("Established"))
    assert served(registry) == []  # no longer followed


def test_a_custom_kind_never_takes_a_registered_kinds_names() -> None:
    registry = REGISTRY.overlay()
    registry.serve(
        [
            KindInfo("", "v1", "ConfigMap", "configmaps", False, Unstructured),
            # Another version of a registered kind's objects.
            KindInfo(
                "policy.karmada.io", "v1", "Policy", "propagationpolicies", True, Unstructured
            ),
        ]
    )
    assert registry.info("v1", "ConfigMap") is CONFIGMAP
    assert registry.custom_kinds() == []


# --- a controller watching a kind it learns of ------------------------------------------------


def learning_controller(seen: list[str], learned: KindInfo) -> Controller:
    """Watches ConfigMaps; the ConfigMap "learn" makes it watch `learned` too."""

    def reconcile(key: str, ctx: Context) -> Result:
        seen.append(key)
        if key == "default/learn":
            ctx.watch(Watches(learned))
        return DONE

    return Controller("learner", [Watches(CONFIGMAP)], reconcile)


def configmap(name: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": "default"},
    }


def widget(name: str) -> dict[str, Any]:
    return {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": name}}


def test_a_kind_watched_at_run_time_in_virtual_time() -> None:
    clock = VirtualClock()
    registry = REGISTRY.overlay()
    registry.serve([WIDGET])
    store = MemoryStore(now=clock.now, kinds=registry.info)
    store.create(widget("before"))
    seen: list[str] = []
    manager = ControllerManager(store, clock, registry=registry)
    manager.add(learning_controller(seen, WIDGET))
    driver = VirtualDriver(manager)
    driver.start()
    store.create(configmap("learn"))
    driver.settle()
    assert seen == ["default/learn", "before"]  # what is there, as added
    store.create(widget("after"))
    driver.settle()
    assert seen[-1] == "after"
    assert manager.cache.informer_for("example.com/v1", "Widget").get("after") is not None


def test_a_kind_watched_at_run_time_under_the_real_driver() -> None:
    registry = REGISTRY.overlay()
    registry.serve([WIDGET])
    store = MemoryStore(kinds=registry.info)
    seen: list[str] = []
    manager = ControllerManager(store, RealClock(), registry=registry)
    manager.add(learning_controller(seen, WIDGET))
    with RealDriver(manager):
        store.create(configmap("learn"))
        deadline = time.monotonic() + 5
        while "default/learn" not in seen and time.monotonic() < deadline:
            time.sleep(0.01)
        store.create(widget("after"))
        while "after" not in seen and time.monotonic() < deadline:
            time.sleep(0.01)
    assert "after" in seen


def test_a_context_of_no_controller_cannot_watch() -> None:
    store = MemoryStore()
    manager = ControllerManager(store, VirtualClock())
    ctx = Context(manager.cache, store, manager.clock, manager.settings, None)  # type: ignore[arg-type]
    with pytest.raises(RuntimeError, match="no controller to watch Widget for"):
        ctx.watch(Watches(WIDGET))
