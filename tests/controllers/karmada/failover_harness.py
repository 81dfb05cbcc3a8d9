"""A whole hub for failover tests: hub_controllers() (taint manager and graceful eviction
controllers included), simulated Push members, in virtual time over a MemoryStore.
Deployments and PropagationPolicies go through admission, so bindings are made by the
detector and placed by the scheduler; taints are put on Clusters directly."""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Mapping
from datetime import datetime, timedelta
from typing import Any

from hub_harness import CLUSTER, CLUSTER_ROLE, CRB, DEPLOYMENT, EVENT, RB, WORK

from fleetwarden.admission import default_chain
from fleetwarden.api.errors import NotFound
from fleetwarden.api.meta import format_time
from fleetwarden.hub import hub_controllers
from fleetwarden.members.simulated import MemberState, SimulatedFleet
from fleetwarden.runtime.clock import VirtualClock
from fleetwarden.runtime.manager import ControllerManager, VirtualDriver
from fleetwarden.runtime.settings import FlagValue, Settings
from fleetwarden.store import MemoryStore

# The failover settings every test starts from; a test adds or overrides flags.
FAILOVER: dict[str, FlagValue] = {
    "feature-gates": "Failover=true",
    "enable-no-execute-taint-eviction": True,
}

Obj = dict[str, Any]


def toleration(key: str, seconds: int | None = None, effect: str = "NoExecute") -> Obj:
    given: Obj = {"key": key, "operator": "Exists", "effect": effect}
    if seconds is not None:
        given["tolerationSeconds"] = seconds
    return given


class FailoverHub:
    def __init__(
        self,
        members: Mapping[str, MemberState] | Iterable[str],
        flags: Mapping[str, FlagValue] = FAILOVER,
    ) -> None:
        states = (
            dict(members) if isinstance(members, Mapping) else {m: MemberState() for m in members}
        )
        self.settings = Settings.from_flags(flags)
        self.clock = VirtualClock()
        self.start = self.clock.now()
        uids = itertools.count(1)
        self.store = MemoryStore(now=self.clock.now, new_uid=lambda: f"uid-{next(uids)}")
        self.chain = default_chain()
        self.fleet = SimulatedFleet(states, [DEPLOYMENT, CLUSTER_ROLE])
        manager = ControllerManager(self.store, self.clock, self.settings)
        controllers = [self.fleet.controller(), *hub_controllers(self.fleet, [CLUSTER_ROLE])]
        for controller in controllers:
            manager.add(controller)
        self.driver = VirtualDriver(manager)
        for name in states:
            self.store.create(
                {"apiVersion": CLUSTER.api_version, "kind": "Cluster",
                 "metadata": {"name": name, "labels": {"name": name}},
                 "spec": {"syncMode": "Push"}}
            )  # fmt: skip
        self.driver.start()
        self.settle()

    # time -----------------------------------------------------------------------------------

    def settle(self) -> None:
        self.driver.settle()

    def now(self) -> datetime:
        return self.clock.now()

    def run(self, seconds: float) -> None:
        self.run_to(self.now() + timedelta(seconds=seconds))

    def run_to(self, instant: datetime) -> None:
        self.driver.run_until(instant)

    # objects --------------------------------------------------------------------------------

    def admit(self, doc: Obj) -> Obj:
        admitted = self.chain.admit(
            doc, None, now=self.now(), config=self.settings.admission_config()
        )
        created = self.store.create(admitted.to_dict())
        self.settle()
        return created

    def propagate(
        self,
        name: str,
        clusters: list[str],
        *,
        replicas: int = 2,
        divided: bool = False,
        tolerations: list[Obj] | None = None,
        purge_mode: str | None = None,
        max_groups: int | None = None,
    ) -> None:
        """A Deployment and the PropagationPolicy that places it on some of the clusters
        named (all of them when max_groups is None)."""
        placement: Obj = {"clusterAffinity": {"clusterNames": clusters}}
        if divided:
            placement["replicaScheduling"] = {
                "replicaSchedulingType": "Divided",
                "replicaDivisionPreference": "Weighted",
            }
        if tolerations:
            placement["clusterTolerations"] = tolerations
        if max_groups is not None:
            placement["spreadConstraints"] = [
                {"spreadByField": "cluster", "minGroups": 1, "maxGroups": max_groups}
            ]
        spec: Obj = {
            "resourceSelectors": [{"apiVersion": "apps/v1", "kind": "Deployment", "name": name}],
            "placement": placement,
        }
        if purge_mode is not None:
            spec["failover"] = {"cluster": {"purgeMode": purge_mode}}
        self.admit(
            {"apiVersion": "policy.karmada.io/v1alpha1", "kind": "PropagationPolicy",
             "metadata": {"name": name, "namespace": "default"}, "spec": spec}
        )  # fmt: skip
        labels = {"app": name}
        self.admit(
            {"apiVersion": "apps/v1", "kind": "Deployment",
             "metadata": {"name": name, "namespace": "default", "labels": labels},
             "spec": {"replicas": replicas, "selector": {"matchLabels": labels},
                      "template": {"metadata": {"labels": labels},
                                   "spec": {"containers": [{"name": name, "image": "nginx"}]}}}}
        )  # fmt: skip

    def propagate_cluster_role(self, clusters: list[str], max_groups: int = 1) -> None:
        """A ClusterRole and the ClusterPropagationPolicy placing it (a ClusterResourceBinding)."""
        self.admit(
            {"apiVersion": "policy.karmada.io/v1alpha1", "kind": "ClusterPropagationPolicy",
             "metadata": {"name": "reader"},
             "spec": {"resourceSelectors": [{"apiVersion": CLUSTER_ROLE.api_version,
                                             "kind": "ClusterRole", "name": "reader"}],
                      "placement": {"clusterAffinity": {"clusterNames": clusters},
                                    "spreadConstraints": [{"spreadByField": "cluster",
                                                           "minGroups": 1,
                                                           "maxGroups": max_groups}]}}}
        )  # fmt: skip
        self.admit(
            {"apiVersion": CLUSTER_ROLE.api_version, "kind": "ClusterRole",
             "metadata": {"name": "reader"},
             "rules": [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]}]}
        )  # fmt: skip

    def taint(
        self, cluster: str, key: str, effect: str = "NoExecute", added: datetime | None = None
    ) -> None:
        obj = self.store.get(CLUSTER, cluster)
        taint: Obj = {"key": key, "effect": effect}
        if effect == "NoExecute":
            taint["timeAdded"] = format_time(added or self.now())
        obj["spec"]["taints"] = [*(obj["spec"].get("taints") or []), taint]
        self.store.update(obj)
        self.settle()

    def untaint(self, cluster: str, key: str) -> None:
        obj = self.store.get(CLUSTER, cluster)
        obj["spec"]["taints"] = [t for t in obj["spec"].get("taints") or [] if t["key"] != key]
        self.store.update(obj)
        self.settle()

    def fail(self, cluster: str) -> None:
        """The member stops answering and its Cluster gets the NoExecute unreachable taint
        (as a ClusterTaintPolicy on Ready Unknown would put it)."""
        self.member(cluster, reachable=False)
        self.taint(cluster, "cluster.karmada.io/unreachable")

    def member(self, name: str, **changes: Any) -> None:
        state = self.fleet.state(name)
        self.fleet.set_state(name, MemberState(**{**state.__dict__, **changes}))

    # reading --------------------------------------------------------------------------------

    def binding(self, name: str) -> Obj:
        if name.endswith("-clusterrole"):
            return self.store.get(CRB, name)
        return self.store.get(RB, f"{name}-deployment", "default")

    def targets(self, name: str) -> dict[str, int]:
        clusters = self.binding(name)["spec"].get("clusters") or []
        return {c["name"]: c.get("replicas", 0) for c in clusters}

    def tasks(self, name: str) -> list[Obj]:
        tasks: list[Obj] = self.binding(name)["spec"].get("gracefulEvictionTasks") or []
        return tasks

    def evicting(self, name: str) -> list[str]:
        return [task["fromCluster"] for task in self.tasks(name)]

    def work(self, cluster: str, binding: str) -> Obj | None:
        """The binding's Work in the cluster's execution space (None when there is none)."""
        for work in self.store.list(WORK, f"karmada-es-{cluster}").items:
            annotations = work["metadata"].get("annotations") or {}
            if annotations.get("resourcebinding.karmada.io/name") == f"{binding}-deployment":
                return work
            if annotations.get("clusterresourcebinding.karmada.io/name") == binding:
                return work
        return None

    def work_clusters(self, binding: str) -> dict[str, str]:
        """Where the binding has a Work: cluster -> "live" or "deleting"."""
        found = {}
        for cluster in self.fleet.members:
            work = self.work(cluster, binding)
            if work is not None:
                deleting = work["metadata"].get("deletionTimestamp")
                found[cluster] = "deleting" if deleting else "live"
        return found

    def healthy_on(self, name: str) -> dict[str, str]:
        items = self.binding(name).get("status", {}).get("aggregatedStatus") or []
        return {item["clusterName"]: item.get("health", "") for item in items}

    def events(self, reason: str) -> list[Obj]:
        return [e for e in self.store.list(EVENT).items if e["reason"] == reason]

    def cluster(self, name: str) -> Obj | None:
        try:
            return self.store.get(CLUSTER, name)
        except NotFound:
            return None
