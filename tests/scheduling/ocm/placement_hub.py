"""A hub running the placement scheduling controller alone, in virtual time over a
MemoryStore: cluster sets, bindings (their Bound condition written as the binding controller
would), clusters and placements are written as users and the registration controllers would
leave them. Upstream's integration tests (test/integration/placement) in that shape."""

from __future__ import annotations

import dataclasses
import itertools
from collections import Counter
from collections.abc import Iterable
from datetime import datetime, timedelta
from typing import Any

from fleetwarden.api.errors import NotFound
from fleetwarden.api.meta import format_time
from fleetwarden.api.ocm.placement import PLACEMENT_LABEL
from fleetwarden.runtime.clock import DEFAULT_EPOCH, VirtualClock
from fleetwarden.runtime.events import EVENT
from fleetwarden.runtime.manager import Context, ControllerManager, Result, VirtualDriver
from fleetwarden.scheduling.ocm.kinds import (
    MANAGED_CLUSTER,
    MANAGED_CLUSTER_SET,
    MANAGED_CLUSTER_SET_BINDING,
    PLACEMENT,
    PLACEMENT_DECISION,
)
from fleetwarden.scheduling.ocm.scheduling_controller import (
    SCHEDULING_CONTROLLER,
    SchedulingController,
)
from fleetwarden.store import MemoryStore

CLUSTER_SET_LABEL = "cluster.open-cluster-management.io/clusterset"
NAMESPACE = "ns1"

Obj = dict[str, Any]


def bound_condition(status: str = "True") -> Obj:
    return {
        "type": "Bound",
        "status": status,
        "reason": "ClusterSetBound" if status == "True" else "ClusterSetNotFound",
        "message": "",
        "lastTransitionTime": format_time(DEFAULT_EPOCH),
    }


class PlacementHub:
    def __init__(self) -> None:
        self.clock = VirtualClock()
        uids = itertools.count(1)
        self.store = MemoryStore(now=self.clock.now, new_uid=lambda: f"uid-{next(uids)}")
        self.manager = ControllerManager(self.store, self.clock)
        controller = SchedulingController().controller()
        # Which placements were reconciled, how often, since the last reset; and when.
        self.reconciled: Counter[str] = Counter()
        self.history: list[tuple[datetime, str]] = []

        def counted(key: str, ctx: Context) -> Result:
            self.reconciled[key] += 1
            self.history.append((self.clock.now(), key))
            return controller.reconcile(key, ctx)

        self.manager.add(dataclasses.replace(controller, reconcile=counted))
        self.driver = VirtualDriver(self.manager)
        self.driver.start()

    # time -----------------------------------------------------------------------------------

    def settle(self) -> None:
        self.driver.settle()

    def to(self, seconds: float) -> None:
        """Run every timer due by `seconds` after the epoch, at its instant."""
        self.driver.run_until(DEFAULT_EPOCH + timedelta(seconds=seconds))

    def reconcile(self, namespace: str, name: str) -> None:
        self.driver.enqueue(SCHEDULING_CONTROLLER, f"{namespace}/{name}")
        self.settle()

    # writes ---------------------------------------------------------------------------------

    def cluster_set(self, name: str, selector: Obj | None = None) -> None:
        """An exclusive set, or a LabelSelector set when `selector` is given."""
        spec: Obj = {}
        if selector is not None:
            spec["clusterSelector"] = {"selectorType": "LabelSelector", "labelSelector": selector}
        self.store.create(
            {
                "apiVersion": MANAGED_CLUSTER_SET.api_version,
                "kind": "ManagedClusterSet",
                "metadata": {"name": name},
                "spec": spec,
            }
        )
        self.settle()

    def binding(self, cluster_set: str, namespace: str = NAMESPACE, bound: bool = True) -> None:
        created = self.store.create(
            {
                "apiVersion": MANAGED_CLUSTER_SET_BINDING.api_version,
                "kind": "ManagedClusterSetBinding",
                "metadata": {"name": cluster_set, "namespace": namespace},
                "spec": {"clusterSet": cluster_set},
            }
        )
        if bound:
            created["status"] = {"conditions": [bound_condition()]}
            self.store.update(created, subresource="status")
        self.settle()

    def set_bound(self, cluster_set: str, status: str, namespace: str = NAMESPACE) -> None:
        binding = self.store.get(MANAGED_CLUSTER_SET_BINDING, cluster_set, namespace)
        binding["status"] = {"conditions": [bound_condition(status)]}
        self.store.update(binding, subresource="status")
        self.settle()

    def bind(self, cluster_set: str, namespace: str = NAMESPACE) -> None:
        """assertBindingClusterSet: an exclusive set bound to the namespace."""
        self.cluster_set(cluster_set)
        self.binding(cluster_set, namespace)

    def cluster(
        self,
        name: str,
        cluster_set: str | None = None,
        labels: dict[str, str] | None = None,
        taints: Iterable[Obj] = (),
    ) -> None:
        all_labels = dict(labels or {})
        if cluster_set is not None:
            all_labels[CLUSTER_SET_LABEL] = cluster_set
        self.store.create(
            {
                "apiVersion": MANAGED_CLUSTER.api_version,
                "kind": "ManagedCluster",
                "metadata": {"name": name, "labels": all_labels},
                "spec": {"hubAcceptsClient": True, "taints": list(taints)},
            }
        )

    def clusters(
        self, prefix: str, count: int, cluster_set: str | None = None, **labels: str
    ) -> list[str]:
        """assertCreatingClusters: `count` clusters named <prefix>-<i>, in one batch."""
        names = [f"{prefix}-{i}" for i in range(1, count + 1)]
        for name in names:
            self.cluster(name, cluster_set, labels)
        self.settle()
        return names

    def taint(self, cluster: str, key: str, effect: str, added: datetime | None = None) -> None:
        obj = self.store.get(MANAGED_CLUSTER, cluster)
        taint: Obj = {"key": key, "effect": effect}
        if added is not None:
            taint["timeAdded"] = format_time(added)
        obj["spec"]["taints"] = [*obj["spec"].get("taints", []), taint]
        self.store.update(obj)
        self.settle()

    def label(self, cluster: str, **labels: str | None) -> None:
        self.store.patch(MANAGED_CLUSTER, cluster, "", {"metadata": {"labels": labels}})
        self.settle()

    def placement(self, name: str, spec: Obj | None = None, namespace: str = NAMESPACE) -> None:
        self.store.create(
            {
                "apiVersion": PLACEMENT.api_version,
                "kind": "Placement",
                "metadata": {"name": name, "namespace": namespace},
                "spec": spec or {},
            }
        )
        self.settle()

    def patch_placement(self, name: str, spec: Obj, namespace: str = NAMESPACE) -> None:
        self.store.patch(PLACEMENT, name, namespace, {"spec": spec})
        self.settle()

    def delete(self, info: Any, name: str, namespace: str = "") -> None:
        self.store.delete(info, name, namespace)
        self.settle()

    # reads ----------------------------------------------------------------------------------

    def placement_decisions(self, placement: str, namespace: str = NAMESPACE) -> list[Obj]:
        """The placement's PlacementDecisions, by name."""
        return self.store.list(
            PLACEMENT_DECISION, namespace, label_selector=f"{PLACEMENT_LABEL}={placement}"
        ).items

    def decided(self, placement: str, namespace: str = NAMESPACE) -> list[str]:
        """The clusters of the placement's PlacementDecisions, decision after decision."""
        return [
            d["clusterName"]
            for pd in sorted(self.placement_decisions(placement, namespace), key=_index)
            for d in (pd.get("status") or {}).get("decisions") or []
        ]

    def status(self, placement: str, namespace: str = NAMESPACE) -> Obj:
        status: Obj = self.store.get(PLACEMENT, placement, namespace).get("status", {})
        return status

    def condition(self, placement: str, type_: str, namespace: str = NAMESPACE) -> Obj:
        conditions = self.status(placement, namespace).get("conditions", [])
        return next(c for c in conditions if c["type"] == type_)

    def satisfied(self, placement: str, namespace: str = NAMESPACE) -> tuple[str, str]:
        condition = self.condition(placement, "PlacementSatisfied", namespace)
        return condition["status"], condition["reason"]

    def events(self, reason: str | None = None) -> list[Obj]:
        return [e for e in self.store.list(EVENT).items if reason is None or e["reason"] == reason]

    def exists(self, info: Any, name: str, namespace: str = "") -> bool:
        try:
            self.store.get(info, name, namespace)
        except NotFound:
            return False
        return True


def _index(pd: Obj) -> int:
    """n of `<placement>-decision-<n>`."""
    return int(pd["metadata"]["name"].rsplit("-", 1)[1])
