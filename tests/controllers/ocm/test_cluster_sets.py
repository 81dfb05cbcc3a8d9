"""ManagedClusterSets on the hub: the set status controller, the `default` and `global`
sets, and the ManagedClusterSetBinding controller, in virtual time over a MemoryStore with
the hub's admission in front.

Ported from ocm pkg/registration/hub/managedclusterset/*_test.go,
pkg/registration/hub/managedclustersetbinding/controller_test.go and
test/integration/registration/{managedclusterset,default_managedclusterset_controller,
global_managedclusterset_controller}_test.go.
"""

from __future__ import annotations

import copy
import itertools
import logging
from datetime import timedelta
from typing import Any

import pytest

from fleetwarden.admission import default_chain
from fleetwarden.api.errors import NotFound
from fleetwarden.api.kinds import KindInfo
from fleetwarden.api.registry import REGISTRY
from fleetwarden.controllers.ocm.cluster_set import (
    MANAGED_CLUSTER_SET,
    managed_cluster_set_controller,
)
from fleetwarden.controllers.ocm.cluster_set_binding import (
    MANAGED_CLUSTER_SET_BINDING,
    managed_cluster_set_binding_controller,
)
from fleetwarden.controllers.ocm.default_cluster_set import (
    AUTO_UPDATE_ANNOTATION,
    DEFAULT_MANAGED_CLUSTER_SET_CONTROLLER,
    GLOBAL_MANAGED_CLUSTER_SET_CONTROLLER,
    default_managed_cluster_set_controller,
    global_managed_cluster_set_controller,
)
from fleetwarden.controllers.ocm.managed_cluster import MANAGED_CLUSTER
from fleetwarden.runtime.clock import VirtualClock
from fleetwarden.runtime.manager import Controller, ControllerManager, VirtualDriver
from fleetwarden.store import MemoryStore

GROUP = "cluster.open-cluster-management.io"
CLUSTER_SET_LABEL = "cluster.open-cluster-management.io/clusterset"

Obj = dict[str, Any]

EMPTY = ("True", "NoClusterMatched", "No ManagedCluster selected")
BOUND = ("True", "ClusterSetBound", "")
NOT_FOUND = ("False", "ClusterSetNotFound", "")


def selected(count: int) -> tuple[str, str, str]:
    return ("False", "ClustersSelected", f"{count} ManagedClusters selected")


def cluster_set(name: str, selector: Obj | None = None, version: str = "v1beta2") -> Obj:
    spec = {"clusterSelector": selector} if selector is not None else {}
    return {
        "apiVersion": f"{GROUP}/{version}",
        "kind": "ManagedClusterSet",
        "metadata": {"name": name},
        "spec": spec,
    }


def label_selector(**match_labels: str) -> Obj:
    return {"selectorType": "LabelSelector", "labelSelector": {"matchLabels": match_labels}}


def managed_cluster(name: str, labels: dict[str, str] | None = None) -> Obj:
    return {
        "apiVersion": f"{GROUP}/v1",
        "kind": "ManagedCluster",
        "metadata": {"name": name, "labels": labels or {}},
        "spec": {"hubAcceptsClient": True},
    }


def in_set(name: str, **labels: str) -> dict[str, str]:
    return {CLUSTER_SET_LABEL: name, **labels}


def binding(name: str, namespace: str, version: str = "v1beta2") -> Obj:
    return {
        "apiVersion": f"{GROUP}/{version}",
        "kind": "ManagedClusterSetBinding",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"clusterSet": name},
    }


def every_controller() -> list[Controller]:
    return [
        managed_cluster_set_controller(),
        managed_cluster_set_binding_controller(),
        default_managed_cluster_set_controller(),
        global_managed_cluster_set_controller(),
    ]


class Hub:
    """The given controllers (all four by default) behind the hub's admission."""

    def __init__(self, controllers: list[Controller] | None = None) -> None:
        self.clock = VirtualClock()
        uids = itertools.count(1)
        self.store = MemoryStore(now=self.clock.now, new_uid=lambda: f"uid-{next(uids)}")
        self.chain = default_chain()
        manager = ControllerManager(self.store, self.clock)
        self.controllers = controllers if controllers is not None else every_controller()
        for controller in self.controllers:
            manager.add(controller)
        self.driver = VirtualDriver(manager)

    def start(self) -> Hub:
        """Start the driver: it queues the kept sets' start keys."""
        self.driver.start()
        self.driver.settle()
        return self

    def apply(self, doc: Obj) -> Obj:
        """Create or update through admission, then let the controllers settle."""
        info = REGISTRY.info(doc["apiVersion"], doc["kind"])
        meta = doc["metadata"]
        try:
            current = self.store.get(info, meta["name"], meta.get("namespace", ""))
        except NotFound:
            current = None
        old = REGISTRY.decode(current) if current else None
        admitted = self.chain.admit(doc, old, now=self.clock.now()).to_dict()
        if current is None:
            written = self.store.create(admitted)
        else:
            admitted["metadata"]["resourceVersion"] = current["metadata"]["resourceVersion"]
            written = self.store.update(admitted)
        self.driver.settle()
        return written

    def edit(self, info: KindInfo, name: str, change: Any, namespace: str = "") -> Obj:
        """Apply the stored object as `change(obj)` leaves it."""
        obj = self.must(info, name, namespace)
        change(obj)
        return self.apply(obj)

    def delete(self, info: KindInfo, name: str, namespace: str = "") -> None:
        self.store.delete(info, name, namespace)
        self.driver.settle()

    def get(self, info: KindInfo, name: str, namespace: str = "") -> Obj | None:
        try:
            return copy.deepcopy(self.store.get(info, name, namespace))
        except NotFound:
            return None

    def must(self, info: KindInfo, name: str, namespace: str = "") -> Obj:
        obj = self.get(info, name, namespace)
        assert obj is not None, f"{info.kind} {name} is not there"
        return obj

    def condition(
        self, info: KindInfo, name: str, type_: str, namespace: str = ""
    ) -> tuple[str, str, str] | None:
        obj = self.must(info, name, namespace)
        for c in (obj.get("status") or {}).get("conditions") or []:
            if c["type"] == type_:
                return c["status"], c["reason"], c["message"]
        return None

    def empty(self, name: str) -> tuple[str, str, str] | None:
        return self.condition(MANAGED_CLUSTER_SET, name, "ClusterSetEmpty")

    def bound(self, name: str, namespace: str) -> tuple[str, str, str] | None:
        return self.condition(MANAGED_CLUSTER_SET_BINDING, name, "Bound", namespace)


def set_status_hub() -> Hub:
    return Hub([managed_cluster_set_controller()]).start()


# --- controller_test.go: TestSyncClusterSet ------------------------------------------------------


@pytest.mark.parametrize(
    ("selector", "clusters", "expected"),
    [
        # sync a empty cluster set
        (None, [managed_cluster("cluster1", in_set("mcs1"))], selected(1)),
        # sync a legacy clusterset
        ({"selectorType": "ExclusiveClusterSetLabel"},
         [managed_cluster("cluster1", in_set("mcs1"))], selected(1)),
        # sync a legacy clusterset, and no cluster matched
        ({"selectorType": "ExclusiveClusterSetLabel"},
         [managed_cluster("cluster1", {"vendor": "openShift"})], EMPTY),
        # sync a labelselector clusterset
        (label_selector(vendor="openShift"),
         [managed_cluster("cluster1", in_set("mcs1", vendor="openShift")),
          managed_cluster("cluster2", in_set("mcs2", vendor="openShift"))], selected(2)),
        # sync a global clusterset
        ({"selectorType": "LabelSelector", "labelSelector": {}},
         [managed_cluster("cluster1", in_set("mcs1", vendor="openShift")),
          managed_cluster("cluster2", in_set("mcs2", vendor="openShift"))], selected(2)),
        # sync a label clusterset with no labelselector specified (no cluster matched)
        ({"selectorType": "LabelSelector"},
         [managed_cluster("cluster1", in_set("mcs1", vendor="openShift")),
          managed_cluster("cluster2", in_set("mcs2", vendor="openShift"))], EMPTY),
    ],
)  # fmt: skip
def test_sync_cluster_set(
    selector: Obj | None, clusters: list[Obj], expected: tuple[str, str, str]
) -> None:
    hub = set_status_hub()
    for cluster in clusters:
        hub.apply(cluster)
    hub.apply(cluster_set("mcs1", selector))
    assert hub.empty("mcs1") == expected


def test_a_set_whose_selector_type_is_unknown_is_left_alone() -> None:
    """ignore any other clusterset: admission refuses it, and a stored one gets no status
    and no retries (only a spec change can mend it)."""
    hub = set_status_hub()
    hub.apply(managed_cluster("cluster1", in_set("mcs1")))
    hub.store.create(cluster_set("mcs1", {"selectorType": "SingleClusterLabel"}))
    hub.driver.settle()
    assert hub.empty("mcs1") is None
    assert hub.driver.next_timer() is None


def test_v1beta1_sets_select_as_v1beta2_ones() -> None:
    hub = set_status_hub()
    hub.apply(managed_cluster("cluster1", in_set("legacy", vendor="openShift")))
    hub.apply(cluster_set("legacy", version="v1beta1"))  # defaulted to LegacyClusterSetLabel
    hub.apply(cluster_set("vendors", label_selector(vendor="openShift"), version="v1beta1"))
    hub.apply(cluster_set("none", label_selector(vendor="other"), version="v1beta1"))
    stored = hub.must(MANAGED_CLUSTER_SET, "legacy")
    assert stored["spec"]["clusterSelector"] == {"selectorType": "LegacyClusterSetLabel"}
    assert hub.empty("legacy") == selected(1)
    assert hub.empty("vendors") == selected(1)
    assert hub.empty("none") == EMPTY


# --- TestEnqueueUpdateClusterClusterSet, and managedclusterset_test.go ---------------------------


def relabel(labels: dict[str, str]) -> Any:
    def change(obj: Obj) -> None:
        obj["metadata"]["labels"] = labels

    return change


def test_exclusive_set_follows_its_clusters() -> None:
    """should create empty (and legacy) cluster set and keep it synced successfully"""
    hub = set_status_hub()
    hub.apply(cluster_set("cs1", {"selectorType": "ExclusiveClusterSetLabel"}))
    assert hub.empty("cs1") == EMPTY

    hub.apply(managed_cluster("cluster1", in_set("cs1")))
    assert hub.empty("cs1") == selected(1)

    # Move the cluster to another set: both sets see it.
    hub.apply(cluster_set("cs2"))
    assert hub.empty("cs2") == EMPTY
    hub.edit(MANAGED_CLUSTER, "cluster1", relabel(in_set("cs2")))
    assert hub.empty("cs2") == selected(1)
    assert hub.empty("cs1") == EMPTY


def test_label_selector_set_follows_its_clusters() -> None:
    """should create labelSelector cluster set and keep it synced successfully"""
    hub = set_status_hub()
    hub.apply(cluster_set("cs1", label_selector(vendor="openShift")))
    assert hub.empty("cs1") == EMPTY

    hub.apply(managed_cluster("cluster1", {"vendor": "openShift"}))
    assert hub.empty("cs1") == selected(1)

    hub.apply(cluster_set("cs2", label_selector(region="apac")))
    hub.edit(MANAGED_CLUSTER, "cluster1", relabel({"region": "apac"}))
    assert hub.empty("cs2") == selected(1)
    assert hub.empty("cs1") == EMPTY


def test_global_set_counts_every_cluster() -> None:
    """should create global cluster set and keep it synced successfully"""
    hub = set_status_hub()
    hub.apply(managed_cluster("cluster1", {"vendor": "openShift"}))
    hub.apply(cluster_set("cs1", {"selectorType": "LabelSelector", "labelSelector": {}}))
    assert hub.empty("cs1") == selected(1)
    hub.apply(managed_cluster("cluster2"))
    assert hub.empty("cs1") == selected(2)


@pytest.mark.parametrize(
    ("before", "after", "expected"),
    [
        # update a cluster's clusterset
        (in_set("mcs1"), in_set("mcs2"), {"mcs1": EMPTY, "mcs2": selected(1)}),
        # add a cluster's clusterset (the webhook had put it in `default`)
        ({}, in_set("mcs2"), {"mcs1": EMPTY, "mcs2": selected(1), "default": EMPTY}),
        # remove a cluster's clusterset (back to `default`, by the webhook)
        (in_set("mcs2"), {}, {"mcs1": EMPTY, "mcs2": EMPTY, "default": selected(1)}),
    ],
)
def test_relabelled_cluster_updates_the_sets_it_left_and_joined(
    before: dict[str, str], after: dict[str, str], expected: dict[str, tuple[str, str, str]]
) -> None:
    hub = set_status_hub()
    for name in ("mcs1", "mcs2", "default"):
        hub.apply(cluster_set(name))
    hub.apply(managed_cluster("c1", before))
    hub.edit(MANAGED_CLUSTER, "c1", relabel(after))
    assert {name: hub.empty(name) for name in expected} == expected


def test_deleted_cluster_leaves_its_sets() -> None:
    hub = set_status_hub()
    hub.apply(cluster_set("mcs1"))
    hub.apply(cluster_set("vendors", label_selector(vendor="openShift")))
    hub.apply(managed_cluster("c1", in_set("mcs1", vendor="openShift")))
    assert (hub.empty("mcs1"), hub.empty("vendors")) == (selected(1), selected(1))
    hub.delete(MANAGED_CLUSTER, "c1")
    assert (hub.empty("mcs1"), hub.empty("vendors")) == (EMPTY, EMPTY)


def test_changed_selector_recounts() -> None:
    hub = set_status_hub()
    hub.apply(managed_cluster("c1", {"vendor": "openShift"}))
    hub.apply(cluster_set("cs1", label_selector(vendor="other")))
    assert hub.empty("cs1") == EMPTY

    def select_openshift(obj: Obj) -> None:
        obj["spec"]["clusterSelector"] = label_selector(vendor="openShift")

    hub.edit(MANAGED_CLUSTER_SET, "cs1", select_openshift)
    assert hub.empty("cs1") == selected(1)


def test_sets_present_at_start_are_synced() -> None:
    hub = Hub([managed_cluster_set_controller()])
    hub.store.create(
        hub.chain.admit(managed_cluster("c1", in_set("cs1")), now=hub.clock.now()).to_dict()
    )
    hub.store.create(hub.chain.admit(cluster_set("cs1"), now=hub.clock.now()).to_dict())
    hub.start()
    assert hub.empty("cs1") == selected(1)


def test_a_set_being_deleted_is_left_alone() -> None:
    hub = set_status_hub()
    doc = cluster_set("cs1")
    doc["metadata"]["finalizers"] = ["example.com/hold"]
    hub.apply(doc)
    assert hub.empty("cs1") == EMPTY
    hub.delete(MANAGED_CLUSTER_SET, "cs1")
    hub.apply(managed_cluster("c1", in_set("cs1")))
    assert hub.empty("cs1") == EMPTY


def test_unchanged_status_is_not_written_again() -> None:
    hub = set_status_hub()
    hub.apply(cluster_set("mcs1"))
    hub.apply(managed_cluster("c1", in_set("mcs1")))
    version = hub.must(MANAGED_CLUSTER_SET, "mcs1")["metadata"]["resourceVersion"]
    hub.edit(MANAGED_CLUSTER, "c1", relabel(in_set("mcs1", vendor="openShift")))
    hub.apply(managed_cluster("c2", in_set("other")))
    assert hub.must(MANAGED_CLUSTER_SET, "mcs1")["metadata"]["resourceVersion"] == version


# --- default and global sets: TestSync{Default,Global}ClusterSet and the integration tests -----

DEFAULT_SELECTOR = {"selectorType": "ExclusiveClusterSetLabel"}
GLOBAL_SELECTOR = {"selectorType": "LabelSelector", "labelSelector": {}}
EDITED_SELECTOR = label_selector(vendor="openshift")
KEPT = [("default", DEFAULT_SELECTOR), ("global", GLOBAL_SELECTOR)]
KEPT_SET_CONTROLLERS = [
    (DEFAULT_MANAGED_CLUSTER_SET_CONTROLLER, "default"),
    (GLOBAL_MANAGED_CLUSTER_SET_CONTROLLER, "global"),
]
MANAGED_NAMESPACES = [{"name": "test-namespace-1"}, {"name": "test-namespace-2"}]


def kept_sets_hub() -> Hub:
    return Hub(
        [default_managed_cluster_set_controller(), global_managed_cluster_set_controller()]
    ).start()


def spec_of(hub: Hub, name: str) -> Obj:
    spec: Obj = hub.must(MANAGED_CLUSTER_SET, name)["spec"]
    return spec


def test_default_and_global_sets_are_created_at_start(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO)
    hub = kept_sets_hub()
    assert [r.getMessage().split(":")[0] for r in caplog.records] == [
        "DefaultManagedClusterSetCreated",
        "GlobalManagedClusterSetCreated",
    ]
    assert spec_of(hub, "default") == {"clusterSelector": DEFAULT_SELECTOR}
    assert spec_of(hub, "global") == {"clusterSelector": GLOBAL_SELECTOR}
    assert hub.must(MANAGED_CLUSTER_SET, "global")["apiVersion"] == f"{GROUP}/v1beta2"


@pytest.mark.parametrize(("name", "selector"), KEPT)
def test_kept_set_is_recreated_after_delete(name: str, selector: Obj) -> None:
    hub = kept_sets_hub()
    uid = hub.must(MANAGED_CLUSTER_SET, name)["metadata"]["uid"]
    hub.delete(MANAGED_CLUSTER_SET, name)
    recreated = hub.must(MANAGED_CLUSTER_SET, name)
    assert recreated["metadata"]["uid"] != uid
    assert recreated["spec"] == {"clusterSelector": selector}


@pytest.mark.parametrize(("controller", "name"), KEPT_SET_CONTROLLERS)
def test_kept_set_in_sync_is_not_written(controller: str, name: str) -> None:
    """sync default/global cluster set: no actions"""
    hub = kept_sets_hub()
    version = hub.store.resource_version
    hub.driver.enqueue(controller, name)
    hub.driver.settle()
    assert hub.store.resource_version == version


@pytest.mark.parametrize(("name", "selector"), KEPT)
def test_edited_selector_is_rolled_back_and_the_rest_kept(name: str, selector: Obj) -> None:
    """sync edited cluster selector (and managed namespaces): only the selector is rolled
    back; users' labels, annotations and managedNamespaces stay."""
    hub = kept_sets_hub()

    def edit(obj: Obj) -> None:
        obj["metadata"]["labels"] = {"label-test": "l1"}
        obj["metadata"]["annotations"] = {"annotation-test": "a1"}
        obj["spec"]["clusterSelector"] = EDITED_SELECTOR
        obj["spec"]["managedNamespaces"] = MANAGED_NAMESPACES

    hub.edit(MANAGED_CLUSTER_SET, name, edit)
    stored = hub.must(MANAGED_CLUSTER_SET, name)
    assert stored["spec"] == {"clusterSelector": selector, "managedNamespaces": MANAGED_NAMESPACES}
    assert stored["metadata"]["labels"] == {"label-test": "l1"}
    assert stored["metadata"]["annotations"] == {"annotation-test": "a1"}


@pytest.mark.parametrize(("name", "selector"), KEPT)
def test_edited_managed_namespaces_alone_are_kept(name: str, selector: Obj) -> None:
    hub = kept_sets_hub()

    def edit(obj: Obj) -> None:
        obj["spec"]["managedNamespaces"] = MANAGED_NAMESPACES

    written = hub.edit(MANAGED_CLUSTER_SET, name, edit)
    stored = hub.must(MANAGED_CLUSTER_SET, name)
    assert stored["metadata"]["resourceVersion"] == written["metadata"]["resourceVersion"]
    assert stored["spec"] == {"clusterSelector": selector, "managedNamespaces": MANAGED_NAMESPACES}


@pytest.mark.parametrize(("name", "selector"), KEPT)
def test_auto_update_false_leaves_the_selector_alone(name: str, selector: Obj) -> None:
    hub = kept_sets_hub()

    def edit(obj: Obj) -> None:
        obj["metadata"]["annotations"] = {AUTO_UPDATE_ANNOTATION: "false"}
        obj["spec"]["clusterSelector"] = EDITED_SELECTOR

    hub.edit(MANAGED_CLUSTER_SET, name, edit)
    assert spec_of(hub, name) == {"clusterSelector": EDITED_SELECTOR}
    # Deleted, it comes back all the same, as the hub has it.
    hub.delete(MANAGED_CLUSTER_SET, name)
    assert spec_of(hub, name) == {"clusterSelector": selector}


@pytest.mark.parametrize(("name", "selector"), KEPT)
def test_kept_set_being_deleted_is_left_then_recreated(name: str, selector: Obj) -> None:
    """sync deleting default cluster set: no actions until it is gone"""
    hub = kept_sets_hub()

    def hold(obj: Obj) -> None:
        obj["metadata"]["finalizers"] = ["example.com/hold"]

    hub.edit(MANAGED_CLUSTER_SET, name, hold)
    uid = hub.must(MANAGED_CLUSTER_SET, name)["metadata"]["uid"]
    hub.delete(MANAGED_CLUSTER_SET, name)
    terminating = hub.must(MANAGED_CLUSTER_SET, name)
    assert "deletionTimestamp" in terminating["metadata"]

    def release(obj: Obj) -> None:
        obj["metadata"]["finalizers"] = []

    hub.edit(MANAGED_CLUSTER_SET, name, release)
    recreated = hub.must(MANAGED_CLUSTER_SET, name)
    assert recreated["metadata"]["uid"] != uid
    assert recreated["spec"] == {"clusterSelector": selector}


def test_kept_sets_given_before_start_are_kept_not_recreated() -> None:
    hub = Hub([default_managed_cluster_set_controller(), global_managed_cluster_set_controller()])
    for name in ("default", "global"):
        doc = hub.chain.admit(cluster_set(name, EDITED_SELECTOR), now=hub.clock.now()).to_dict()
        hub.store.create(doc)
    uids = {n: hub.must(MANAGED_CLUSTER_SET, n)["metadata"]["uid"] for n in ("default", "global")}
    hub.start()
    for name, selector in KEPT:
        stored = hub.must(MANAGED_CLUSTER_SET, name)
        assert (stored["metadata"]["uid"], stored["spec"]) == (
            uids[name],
            {"clusterSelector": selector},
        )


def test_v1beta1_default_set_is_equivalent_and_kept() -> None:
    """LegacyClusterSetLabel is v1beta1's ExclusiveClusterSetLabel: nothing to roll back."""
    hub = Hub([default_managed_cluster_set_controller()])
    hub.store.create(
        hub.chain.admit(cluster_set("default", version="v1beta1"), now=hub.clock.now()).to_dict()
    )
    version = hub.store.resource_version
    hub.start()
    assert hub.store.resource_version == version
    assert spec_of(hub, "default") == {"clusterSelector": {"selectorType": "LegacyClusterSetLabel"}}


def test_v1beta1_global_set_edited_is_rolled_back_in_v1beta2() -> None:
    hub = kept_sets_hub()
    hub.delete(MANAGED_CLUSTER_SET, "global")  # recreated at once
    hub.apply(cluster_set("global", EDITED_SELECTOR, version="v1beta1"))
    stored = hub.must(MANAGED_CLUSTER_SET, "global")
    assert stored["apiVersion"] == f"{GROUP}/v1beta2"
    assert stored["spec"] == {"clusterSelector": GLOBAL_SELECTOR}


def test_default_and_global_sets_count_clusters() -> None:
    """The whole hub: a cluster without a set lands in `default`, every one in `global`."""
    hub = Hub().start()
    assert (hub.empty("default"), hub.empty("global")) == (EMPTY, EMPTY)
    hub.apply(managed_cluster("c1"))
    hub.apply(managed_cluster("c2", in_set("prod")))
    assert (hub.empty("default"), hub.empty("global")) == (selected(1), selected(2))


# --- managedclustersetbinding/controller_test.go: TestSync and TestEnqueue -----------------------


def binding_hub() -> Hub:
    return Hub([managed_cluster_set_binding_controller()]).start()


def test_binding_without_its_set_is_not_bound() -> None:
    """no clusterset"""
    hub = binding_hub()
    hub.apply(binding("test", "testns"))
    assert hub.bound("test", "testns") == NOT_FOUND


def test_binding_of_an_existing_set_is_bound() -> None:
    """bound clusterset"""
    hub = binding_hub()
    hub.apply(cluster_set("test"))
    hub.apply(binding("test", "testns"))
    assert hub.bound("test", "testns") == BOUND


def test_bound_binding_is_not_written_again() -> None:
    """no update"""
    hub = binding_hub()
    hub.apply(cluster_set("test"))
    written = hub.apply(binding("test", "testns"))
    stored = hub.must(MANAGED_CLUSTER_SET_BINDING, "test", "testns")
    version = stored["metadata"]["resourceVersion"]
    assert version != written["metadata"]["resourceVersion"]  # Bound was written once
    hub.edit(MANAGED_CLUSTER_SET, "test", lambda obj: obj["metadata"].update(labels={"a": "b"}))
    stored = hub.must(MANAGED_CLUSTER_SET_BINDING, "test", "testns")
    assert stored["metadata"]["resourceVersion"] == version


def test_set_coming_and_going_binds_and_unbinds_its_bindings_in_every_namespace() -> None:
    """TestEnqueue: multiple bindings found; a binding of another set is not touched."""
    hub = binding_hub()
    for name, namespace in (("test", "testns1"), ("test1", "testns1"), ("test", "testns2")):
        hub.apply(binding(name, namespace))
    hub.apply(cluster_set("test"))
    assert hub.bound("test", "testns1") == BOUND
    assert hub.bound("test", "testns2") == BOUND
    assert hub.bound("test1", "testns1") == NOT_FOUND

    hub.delete(MANAGED_CLUSTER_SET, "test")
    assert hub.bound("test", "testns1") == NOT_FOUND
    assert hub.bound("test", "testns2") == NOT_FOUND

    hub.apply(cluster_set("test", version="v1beta1"))
    assert hub.bound("test", "testns1") == BOUND


def test_v1beta1_binding_is_bound() -> None:
    hub = binding_hub()
    hub.apply(cluster_set("test", version="v1beta1"))
    hub.apply(binding("test", "testns", version="v1beta1"))
    assert hub.bound("test", "testns") == BOUND
    stored = hub.must(MANAGED_CLUSTER_SET_BINDING, "test", "testns")
    assert stored["apiVersion"] == f"{GROUP}/v1beta1"


def test_binding_of_default_set_is_bound_once_the_hub_creates_it() -> None:
    hub = Hub()
    hub.store.create(hub.chain.admit(binding("default", "app"), now=hub.clock.now()).to_dict())
    hub.start()
    assert hub.bound("default", "app") == BOUND
    hub.delete(MANAGED_CLUSTER_SET, "default")  # recreated at once, and bound again
    assert hub.bound("default", "app") == BOUND


def test_bound_transition_time_moves_when_the_set_appears() -> None:
    hub = binding_hub()
    hub.apply(binding("test", "testns"))
    first = hub.must(MANAGED_CLUSTER_SET_BINDING, "test", "testns")
    hub.clock.advance(timedelta(minutes=5))
    hub.apply(cluster_set("test"))
    second = hub.must(MANAGED_CLUSTER_SET_BINDING, "test", "testns")
    assert first["status"]["conditions"][0]["lastTransitionTime"] == "2025-01-01T00:00:00Z"
    assert second["status"]["conditions"][0]["lastTransitionTime"] == "2025-01-01T00:05:00Z"
