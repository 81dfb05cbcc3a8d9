"""Test benches for OCM's registration hub controllers, over a MemoryStore on a VirtualClock.

- Bench: objects as upstream's tests seed their fake clients and informers, one reconcile
  at a time, and the writes it made.
- OcmHub: simulated members running OCM's registration agent, and the registration hub's
  controllers in the order the hub starts them, in virtual time.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Mapping
from dataclasses import replace
from datetime import timedelta
from typing import Any

from fleetwarden.api.meta import format_micro_time, format_time
from fleetwarden.controllers.ocm.addon import (
    MANAGED_CLUSTER_ADDON,
    addon_feature_discovery_controller,
    managed_cluster_addon_health_check_controller,
)
from fleetwarden.controllers.ocm.lease import LEASE, clock_sync_controller, lease_controller
from fleetwarden.controllers.ocm.managed_cluster import (
    MANAGED_CLUSTER,
    NAMESPACE,
    managed_cluster_controller,
)
from fleetwarden.controllers.ocm.taint import taint_controller
from fleetwarden.members.simulated import MemberState, SimulatedFleet
from fleetwarden.runtime.clock import DEFAULT_EPOCH, VirtualClock
from fleetwarden.runtime.events import EVENT, EventRecorder
from fleetwarden.runtime.informer import Cache
from fleetwarden.runtime.manager import (
    Context,
    Controller,
    ControllerManager,
    Result,
    VirtualDriver,
)
from fleetwarden.runtime.settings import Settings
from fleetwarden.store import MemoryStore
from fleetwarden.store.interface import WatchEvent

Obj = dict[str, Any]
Reconcile = Callable[[str, Context], Result]

CLUSTER_NAME = "testmanagedcluster"  # testinghelpers.TestManagedClusterName
FINALIZER = "cluster.open-cluster-management.io/api-resource-cleanup"


def at(seconds: float) -> str:
    return format_time(DEFAULT_EPOCH + timedelta(seconds=seconds))


def condition(type_: str, status: str, reason: str = "", message: str = "") -> Obj:
    return {
        "type": type_,
        "status": status,
        "reason": reason,
        "message": message,
        "lastTransitionTime": at(0),
    }


def hub_accepted(status: str = "True") -> Obj:
    return condition(
        "HubAcceptedManagedCluster", status, "HubClusterAdminAccepted",
        "Accepted by hub cluster admin",
    )  # fmt: skip


def available(status: str) -> Obj:
    return condition("ManagedClusterConditionAvailable", status, "Reported", "Reported")


def managed_cluster(
    *conditions: Obj,
    name: str = CLUSTER_NAME,
    finalizers: Iterable[str] = (),
    labels: Mapping[str, str] | None = None,
    **spec: Any,
) -> Obj:
    metadata: Obj = {"name": name}
    if finalizers:
        metadata["finalizers"] = list(finalizers)
    if labels:
        metadata["labels"] = dict(labels)
    cluster: Obj = {
        "apiVersion": MANAGED_CLUSTER.api_version,
        "kind": "ManagedCluster",
        "metadata": metadata,
        "spec": spec,
    }
    if conditions:
        cluster["status"] = {"conditions": list(conditions)}
    return cluster


# testinghelpers' clusters: accepted ones have a 1 s lease duration (TestLeaseDurationSeconds).
def new_cluster() -> Obj:
    return managed_cluster()


def accepting_cluster() -> Obj:
    return managed_cluster(finalizers=[FINALIZER], hubAcceptsClient=True)


def accepted_cluster(*conditions: Obj) -> Obj:
    return managed_cluster(
        hub_accepted(), *conditions, finalizers=[FINALIZER], hubAcceptsClient=True,
        leaseDurationSeconds=1,
    )  # fmt: skip


def denied_cluster(accepted_status: str) -> Obj:
    accepted = condition("HubAcceptedManagedCluster", accepted_status)
    return managed_cluster(
        accepted, finalizers=[FINALIZER], hubAcceptsClient=False, leaseDurationSeconds=1
    )


def cluster_lease(renewed: float, name: str = "managed-cluster-lease", **labels: str) -> Obj:
    metadata: Obj = {"name": name, "namespace": CLUSTER_NAME}
    if labels:
        metadata["labels"] = labels
    return {
        "apiVersion": LEASE.api_version,
        "kind": "Lease",
        "metadata": metadata,
        "spec": {"renewTime": format_micro_time(DEFAULT_EPOCH + timedelta(seconds=renewed))},
    }


def addon(name: str, *conditions: Obj, cluster: str = CLUSTER_NAME, **metadata: Any) -> Obj:
    obj: Obj = {
        "apiVersion": MANAGED_CLUSTER_ADDON.api_version,
        "kind": "ManagedClusterAddOn",
        "metadata": {"name": name, "namespace": cluster, **metadata},
        "spec": {},
    }
    if conditions:
        obj["status"] = {"conditions": list(conditions)}
    return obj


def _new_store(clock: VirtualClock) -> MemoryStore:
    uids = itertools.count(1)
    return MemoryStore(now=clock.now, new_uid=lambda: f"uid-{next(uids)}")


def _create(store: MemoryStore, obj: Obj) -> None:
    """Create an object, with its status as given (written through the status subresource)."""
    stored = store.create(obj)
    if "status" in obj:
        stored["status"] = obj["status"]
        store.update(stored, subresource="status")


# --- Bench ---------------------------------------------------------------------------------------


class Bench:
    """The objects as they are at `now` seconds, read by a synced cache that follows the
    store's writes; `run` reconciles one key and keeps the writes it made."""

    def __init__(self, *objects: Obj, now: float = 0, deleting: Iterable[str] = ()) -> None:
        self.clock = VirtualClock()
        self.store = _new_store(self.clock)
        for obj in objects:
            _create(self.store, obj)
        for name in deleting:  # held by its finalizer: deletionTimestamp set
            self.store.delete(MANAGED_CLUSTER, name)
        self.clock.set(DEFAULT_EPOCH + timedelta(seconds=now))
        self.cache = Cache(self.store)
        self.cache.sync()
        self.store.subscribe(self.cache.handle)
        self.writes: list[WatchEvent] = []
        self.store.subscribe(self.writes.append)

    def run(self, reconcile: Reconcile, key: str = CLUSTER_NAME) -> Result:
        self.writes.clear()
        recorder = EventRecorder(self.store, self.clock, "test")
        return reconcile(key, Context(self.cache, self.store, self.clock, Settings(), recorder))

    def written(self, kind: str) -> list[Obj]:
        """What the last run wrote of one kind ("ManagedCluster", "Lease", "Event"...)."""
        return [e.object for e in self.writes if e.object.get("kind") == kind]

    def get(self, name: str = CLUSTER_NAME) -> Obj:
        return self.store.get(MANAGED_CLUSTER, name)


# --- OcmHub --------------------------------------------------------------------------------------


def registration_controllers() -> list[Controller]:
    """The registration hub's controllers, in the order it starts them."""
    return [
        managed_cluster_controller(),
        taint_controller(),
        lease_controller(),
        clock_sync_controller(),
        managed_cluster_addon_health_check_controller(),
        addon_feature_discovery_controller(),
    ]


class OcmHub:
    """Simulated members (OCM's registration agent) and the registration hub's controllers."""

    def __init__(self, members: Mapping[str, MemberState] | Iterable[str] = ()) -> None:
        states = (
            dict(members) if isinstance(members, Mapping) else {m: MemberState() for m in members}
        )
        self.clock = VirtualClock()
        self.store = _new_store(self.clock)
        self.fleet = SimulatedFleet(states, [])
        manager = ControllerManager(self.store, self.clock)
        # The agents wait for their ManagedCluster (join) rather than register at start.
        agents = replace(self.fleet.controller(), start_keys=())
        for controller in [agents, *registration_controllers()]:
            manager.add(controller)
        self.driver = VirtualDriver(manager)
        self.driver.start()

    # time -------------------------------------------------------------------------------------

    def to(self, seconds: float) -> None:
        """Run every timer due by `seconds` after the epoch, at its instant."""
        self.driver.run_until(DEFAULT_EPOCH + timedelta(seconds=seconds))

    # writes -----------------------------------------------------------------------------------

    def join(self, name: str, **spec: Any) -> None:
        """The cluster's ManagedCluster, as its agent registers it (which wakes the agent)."""
        self.create(managed_cluster(name=name, **spec))

    def create(self, obj: Obj) -> None:
        _create(self.store, obj)
        self.driver.settle()

    def update_spec(self, name: str, **spec: Any) -> None:
        cluster = self.get(name)
        cluster["spec"] = {**cluster["spec"], **spec}
        self.store.update(cluster)
        self.driver.settle()

    def addon_status(self, cluster: str, name: str, *conditions: Obj) -> None:
        obj = self.store.get(MANAGED_CLUSTER_ADDON, name, cluster)
        obj["status"] = {"conditions": list(conditions)}
        self.store.update(obj, subresource="status")
        self.driver.settle()

    def delete(self, info: Any, name: str, namespace: str = "") -> None:
        self.store.delete(info, name, namespace)
        self.driver.settle()

    def member(self, name: str, **changes: Any) -> None:
        self.fleet.set_state(name, replace(self.fleet.state(name), **changes))

    # reads ------------------------------------------------------------------------------------

    def get(self, name: str) -> Obj:
        return self.store.get(MANAGED_CLUSTER, name)

    def condition(self, name: str, type_: str) -> Obj | None:
        conditions = self.get(name).get("status", {}).get("conditions") or []
        return next((c for c in conditions if c["type"] == type_), None)

    def available(self, name: str) -> tuple[str, str] | None:
        found = self.condition(name, "ManagedClusterConditionAvailable")
        return (found["status"], found["reason"]) if found else None

    def taints(self, name: str) -> list[tuple[str, str | None]]:
        """(key, timeAdded) of each taint, in order."""
        return [(t["key"], t.get("timeAdded")) for t in self.get(name)["spec"].get("taints") or []]

    def labels(self, name: str) -> dict[str, str]:
        return dict(self.get(name)["metadata"].get("labels") or {})

    def renewed(self, name: str) -> str:
        return str(self.store.get(LEASE, "managed-cluster-lease", name)["spec"]["renewTime"])

    def namespace(self, name: str) -> Obj:
        return self.store.get(NAMESPACE, name)

    def events(self, reason: str) -> list[Obj]:
        return [e for e in self.store.list(EVENT).items if e["reason"] == reason]
