"""The resource detector and custom resources: a kind a CustomResourceDefinition comes to
serve while the detector runs is watched from then on, and its objects propagated like any
template. In virtual time, as `fleetwarden up` composes the hub: its own registry, following
the store's CRDs, and apiextensions-apiserver's controllers beside the detector."""

from __future__ import annotations

import itertools
from datetime import timedelta
from typing import Any

from fleetwarden.admission import default_chain
from fleetwarden.api.errors import NotFound
from fleetwarden.api.kinds import KindInfo
from fleetwarden.api.registry import REGISTRY
from fleetwarden.controllers.apiextensions import apiextensions_controllers
from fleetwarden.controllers.karmada.detector import (
    CLUSTER_RESOURCE_BINDING,
    RESOURCE_BINDING,
    detector_controllers,
)
from fleetwarden.runtime.clock import VirtualClock
from fleetwarden.runtime.custom_kinds import CustomKinds
from fleetwarden.runtime.manager import ControllerManager, VirtualDriver
from fleetwarden.store import MemoryStore

MINUTE = timedelta(minutes=1)


def cactus_crd(scope: str = "Namespaced") -> dict[str, Any]:
    """A kind whose plural no RESTMapper would guess (cactuses)."""
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "cacti.botany.example.com"},
        "spec": {
            "group": "botany.example.com",
            "scope": scope,
            "names": {"plural": "cacti", "singular": "cactus", "kind": "Cactus"},
            "versions": [
                {"name": "v1", "served": True, "storage": True,
                 "schema": {"openAPIV3Schema": {"type": "object",
                                                "x-kubernetes-preserve-unknown-fields": True}}}
            ],
        },
    }  # fmt: skip


def cactus(name: str = "saguaro", namespace: str | None = "default") -> dict[str, Any]:
    meta = {"name": name, **({"namespace": namespace} if namespace else {})}
    return {"apiVersion": "botany.example.com/v1", "kind": "Cactus", "metadata": meta,
            "spec": {"height": 12}}  # fmt: skip


CACTI_POLICY = {
    "apiVersion": "policy.karmada.io/v1alpha1",
    "kind": "ClusterPropagationPolicy",
    "metadata": {"name": "cacti"},
    "spec": {
        "resourceSelectors": [{"apiVersion": "botany.example.com/v1", "kind": "Cactus"}],
        "placement": {"clusterAffinity": {"clusterNames": ["member1", "member2"]}},
    },
}


class Hub:
    def __init__(self, *docs: dict[str, Any]) -> None:
        self.clock = VirtualClock()
        uids = itertools.count(1)
        self.registry = REGISTRY.overlay()
        self.store = MemoryStore(
            now=self.clock.now, new_uid=lambda: f"uid-{next(uids)}", kinds=self.registry.info
        )
        self.custom_kinds = CustomKinds(self.store, self.registry)
        self.chain = default_chain(self.registry)
        self.apply(*docs)  # before the controllers start, when given
        manager = ControllerManager(self.store, self.clock, registry=self.registry)
        for controller in [*apiextensions_controllers(), *detector_controllers()]:
            manager.add(controller)
        self.driver = VirtualDriver(manager)
        self.driver.start()
        self.settle()

    def apply(self, *docs: dict[str, Any]) -> None:
        for doc in docs:
            self.store.create(self.chain.admit(doc, now=self.clock.now()).to_dict())
            if doc["kind"] == "CustomResourceDefinition" and hasattr(self, "driver"):
                self.settle()  # established before what follows is admitted

    def settle(self) -> None:
        self.driver.run_until(self.clock.now() + MINUTE)

    def binding(self, info: KindInfo, name: str, namespace: str = "") -> dict[str, Any] | None:
        try:
            return self.store.get(info, name, namespace)
        except NotFound:
            return None


def test_a_kind_a_crd_comes_to_serve_is_propagated_from_then_on() -> None:
    hub = Hub()
    hub.apply(CACTI_POLICY, cactus_crd())
    hub.apply(cactus())
    hub.settle()
    binding = hub.binding(RESOURCE_BINDING, "saguaro-cactus", "default")
    assert binding is not None
    assert binding["spec"]["resource"] == {
        "apiVersion": "botany.example.com/v1",
        "kind": "Cactus",
        "namespace": "default",
        "name": "saguaro",
        "uid": binding["spec"]["resource"]["uid"],
        "resourceVersion": binding["spec"]["resource"]["resourceVersion"],
    }
    info = hub.registry.info("botany.example.com/v1", "Cactus")
    claimed = hub.store.get(info, "saguaro", "default")
    assert claimed["metadata"]["annotations"]["clusterpropagationpolicy.karmada.io/name"] == "cacti"


def test_custom_resources_there_before_the_detector_starts_are_propagated() -> None:
    hub = Hub(cactus_crd())  # established by the controllers as they start
    hub.apply(cactus("saguaro"), CACTI_POLICY)
    hub.settle()
    assert hub.binding(RESOURCE_BINDING, "saguaro-cactus", "default") is not None


def test_a_cluster_scoped_custom_resource_gets_a_cluster_resource_binding() -> None:
    hub = Hub()
    hub.apply(cactus_crd(scope="Cluster"), cactus("barrel", namespace=None), CACTI_POLICY)
    hub.settle()
    assert hub.binding(CLUSTER_RESOURCE_BINDING, "barrel-cactus") is not None


def test_a_custom_resource_goes_with_its_definition_and_so_does_its_binding() -> None:
    hub = Hub()
    hub.apply(cactus_crd(), cactus(), CACTI_POLICY)
    hub.settle()
    assert hub.binding(RESOURCE_BINDING, "saguaro-cactus", "default") is not None
    crd = hub.store.get(REGISTRY.info("apiextensions.k8s.io/v1", "CustomResourceDefinition"),
                        "cacti.botany.example.com")  # fmt: skip
    crd["metadata"]["finalizers"] = ["customresourcecleanup.apiextensions.k8s.io"]
    hub.store.update(crd)  # as the API server's delete does, then deletes it
    hub.store.delete(REGISTRY.info("apiextensions.k8s.io/v1", "CustomResourceDefinition"),
                     "cacti.botany.example.com")  # fmt: skip
    hub.settle()
    assert hub.registry.custom_kinds() == []
    # Collected with its template; the binding controller (not run here) lets it go.
    binding = hub.binding(RESOURCE_BINDING, "saguaro-cactus", "default")
    assert binding is not None and binding["metadata"]["deletionTimestamp"]
