"""A hub that runs what follows the scheduler (binding, execution and binding status
controllers) with simulated members, in virtual time over a MemoryStore. Bindings are
written as the detector and the scheduler would leave them."""

from __future__ import annotations

import copy
import itertools
from collections.abc import Callable, Iterable, Mapping
from datetime import timedelta
from typing import Any

from fleetwarden.api.errors import NotFound
from fleetwarden.api.registry import REGISTRY
from fleetwarden.controllers.karmada.binding import (
    cluster_resource_binding_controller,
    resource_binding_controller,
)
from fleetwarden.controllers.karmada.binding_status import (
    cluster_resource_binding_status_controller,
    resource_binding_status_controller,
)
from fleetwarden.controllers.karmada.cluster_status import ClusterStatusController
from fleetwarden.controllers.karmada.execution import execution_controller
from fleetwarden.members.simulated import MemberState, SimulatedFleet
from fleetwarden.runtime.clock import VirtualClock
from fleetwarden.runtime.manager import ControllerManager, VirtualDriver
from fleetwarden.store import MemoryStore

DEPLOYMENT = REGISTRY.info("apps/v1", "Deployment")
CLUSTER_ROLE = REGISTRY.info("rbac.authorization.k8s.io/v1", "ClusterRole")
RB = REGISTRY.info("work.karmada.io/v1alpha2", "ResourceBinding")
CRB = REGISTRY.info("work.karmada.io/v1alpha2", "ClusterResourceBinding")
WORK = REGISTRY.info("work.karmada.io/v1alpha1", "Work")
CLUSTER = REGISTRY.info("cluster.karmada.io/v1alpha1", "Cluster")
EVENT = REGISTRY.info("v1", "Event")

RB_ID = "9f1d6c52-0000-4000-8000-000000000001"
CRB_ID = "9f1d6c52-0000-4000-8000-000000000002"
NGINX_WORK = "nginx-687f7fb96f"  # GenerateWorkName("Deployment", "nginx", "default")
S = timedelta(seconds=1)

Obj = dict[str, Any]

# What the scheduler writes besides schedulerObservedGeneration once it placed a binding.
SCHEDULED: Obj = {
    "lastScheduledTime": "2025-01-01T00:00:00Z",
    "conditions": [
        {"type": "Scheduled", "status": "True", "reason": "Success",
         "message": "Binding has been scheduled successfully.",
         "lastTransitionTime": "2025-01-01T00:00:00Z"}
    ],
}  # fmt: skip


def ready_condition(status: str) -> Obj:
    return {
        "type": "Ready",
        "status": status,
        "reason": "ClusterReady" if status == "True" else "ClusterNotReady",
        "message": "",
        "lastTransitionTime": "2025-01-01T00:00:00Z",
    }


class Hub:
    def __init__(self, members: Mapping[str, MemberState] | Iterable[str] = ()) -> None:
        states = (
            dict(members) if isinstance(members, Mapping) else {m: MemberState() for m in members}
        )
        self.clock = VirtualClock()
        uids = itertools.count(1)
        self.store = MemoryStore(now=self.clock.now, new_uid=lambda: f"uid-{next(uids)}")
        self.fleet = SimulatedFleet(states, [DEPLOYMENT, CLUSTER_ROLE])
        manager = ControllerManager(self.store, self.clock)
        for controller in (
            ClusterStatusController(self.fleet.probe, self.fleet.report).controller(),
            resource_binding_controller(),
            cluster_resource_binding_controller(),
            execution_controller(self.fleet.delete_workload),
            resource_binding_status_controller(),
            cluster_resource_binding_status_controller(),
            self.fleet.controller(),
        ):
            manager.add(controller)
        self.driver = VirtualDriver(manager)
        for name in states:
            self.store.create(
                {"apiVersion": CLUSTER.api_version, "kind": "Cluster",
                 "metadata": {"name": name}, "spec": {"syncMode": "Push"}}
            )  # fmt: skip
        self.driver.start()
        self.settle()

    # time -----------------------------------------------------------------------------------

    def settle(self) -> None:
        self.driver.settle()

    def run(self, seconds: float) -> None:
        self.driver.run_until(self.clock.now() + timedelta(seconds=seconds))

    # clusters -------------------------------------------------------------------------------

    def external_cluster(self, name: str, ready: bool = True) -> None:
        """A cluster no simulated member backs: its status is what we write."""
        self.store.create(
            {"apiVersion": CLUSTER.api_version, "kind": "Cluster", "metadata": {"name": name},
             "spec": {"syncMode": "Push"}}
        )  # fmt: skip
        self.set_ready(name, ready)

    def set_ready(self, name: str, ready: bool) -> None:
        cluster = self.store.get(CLUSTER, name)
        cluster["status"] = {"conditions": [ready_condition("True" if ready else "False")]}
        self.store.update(cluster, subresource="status")
        self.settle()

    def delete_cluster(self, name: str) -> None:
        cluster = self.store.get(CLUSTER, name)
        cluster["metadata"]["finalizers"] = ["karmada.io/cluster-controller"]
        self.store.update(cluster)
        self.store.delete(CLUSTER, name)
        self.settle()

    def member(self, name: str, **changes: Any) -> None:
        state = self.fleet.state(name)
        self.fleet.set_state(name, MemberState(**{**state.__dict__, **changes}))

    def applied_on(self, name: str) -> int:
        """How many Works' workloads the member runs."""
        return len(self.fleet.members[name].applied)

    # templates and bindings -----------------------------------------------------------------

    def deployment(self, name: str = "nginx", replicas: int = 3, image: str = "nginx") -> Obj:
        return self.store.create(
            {
                "apiVersion": "apps/v1",
                "kind": "Deployment",
                "metadata": {"name": name, "namespace": "default", "labels": {"app": name}},
                "spec": {
                    "replicas": replicas,
                    "selector": {"matchLabels": {"app": name}},
                    "template": {
                        "metadata": {"labels": {"app": name}},
                        "spec": {"containers": [{"name": name, "image": image}]},
                    },
                },
            }
        )

    def update_template(self, template: Obj, change: Callable[[Obj], None]) -> Obj:
        """Change a template, and its binding's resource reference as the detector does."""
        current = self.store.get(DEPLOYMENT, template["metadata"]["name"], "default")
        change(current)
        updated = self.store.update(current)
        self.update_binding(
            f"{template['metadata']['name']}-deployment",
            lambda spec: spec["resource"].update(
                resourceVersion=updated["metadata"]["resourceVersion"]
            ),
        )
        return updated

    def binding(
        self,
        template: Obj,
        clusters: Iterable[tuple[str, int]] | Iterable[str],
        *,
        divided: bool = True,
        **spec: Any,
    ) -> Obj:
        """A ResourceBinding as scheduled: spec.clusters, lastScheduledTime and Scheduled."""
        meta = template["metadata"]
        targets = [
            {"name": c[0], "replicas": c[1]} if isinstance(c, tuple) else {"name": c}
            for c in clusters
        ]
        strategy = {"replicaSchedulingType": "Divided" if divided else "Duplicated"}
        binding = {
            "apiVersion": RB.api_version,
            "kind": RB.kind,
            "metadata": {
                "name": f"{meta['name']}-deployment",
                "namespace": "default",
                "labels": {"resourcebinding.karmada.io/permanent-id": RB_ID},
                "finalizers": ["karmada.io/binding-controller"],
            },
            "spec": {
                "resource": {
                    "apiVersion": "apps/v1", "kind": "Deployment", "namespace": "default",
                    "name": meta["name"], "uid": meta["uid"],
                    "resourceVersion": meta["resourceVersion"],
                },
                "replicas": template["spec"]["replicas"],
                "placement": {"replicaScheduling": strategy},
                "clusters": targets,
                **spec,
            },
        }  # fmt: skip
        return self._scheduled(binding)

    def cluster_role_binding(self, clusters: Iterable[str]) -> Obj:
        role = self.store.create(
            {
                "apiVersion": CLUSTER_ROLE.api_version,
                "kind": "ClusterRole",
                "metadata": {"name": "system:reader"},
                "rules": [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]}],
            }
        )
        binding = {
            "apiVersion": CRB.api_version,
            "kind": CRB.kind,
            "metadata": {
                "name": "system.reader-clusterrole",
                "labels": {"clusterresourcebinding.karmada.io/permanent-id": CRB_ID},
                "finalizers": ["karmada.io/cluster-resource-binding-controller"],
            },
            "spec": {
                "resource": {
                    "apiVersion": CLUSTER_ROLE.api_version, "kind": "ClusterRole",
                    "name": "system:reader", "uid": role["metadata"]["uid"],
                    "resourceVersion": role["metadata"]["resourceVersion"],
                },
                "clusters": [{"name": c} for c in clusters],
            },
        }  # fmt: skip
        return self._scheduled(binding)

    def _scheduled(self, binding: Obj) -> Obj:
        """Created without clusters (as the detector does), then given its clusters and its
        Scheduled condition (as the scheduler does)."""
        info = RB if binding["kind"] == RB.kind else CRB
        clusters = binding["spec"].pop("clusters")
        stored = self.store.create(binding)
        self.settle()
        stored["spec"]["clusters"] = clusters
        stored = self.store.update(stored)
        stored["status"] = {
            "schedulerObservedGeneration": stored["metadata"]["generation"],
            **copy.deepcopy(SCHEDULED),
        }
        stored = self.store.update(stored, subresource="status")
        self.settle()
        return self.store.get(
            info, stored["metadata"]["name"], binding["metadata"].get("namespace", "")
        )

    def update_binding(self, name: str, change: Callable[[Obj], None]) -> None:
        binding = self.store.get(RB, name, "default")
        change(binding["spec"])
        self.store.update(binding)
        self.settle()

    def get_binding(self, name: str = "nginx-deployment") -> Obj:
        return self.store.get(RB, name, "default")

    # works and events -----------------------------------------------------------------------

    def work(self, cluster: str, name: str = NGINX_WORK) -> Obj | None:
        try:
            return self.store.get(WORK, name, f"karmada-es-{cluster}")
        except NotFound:
            return None

    def manifest(self, cluster: str, name: str = NGINX_WORK) -> Obj:
        work = self.work(cluster, name)
        assert work is not None, f"no Work {name} for {cluster}"
        manifest: Obj = work["spec"]["workload"]["manifests"][0]
        return manifest

    def work_clusters(self) -> list[str]:
        works = self.store.list(WORK).items
        return sorted(w["metadata"]["namespace"].removeprefix("karmada-es-") for w in works)

    def events(self, reason: str) -> list[Obj]:
        return [e for e in self.store.list(EVENT).items if e["reason"] == reason]
