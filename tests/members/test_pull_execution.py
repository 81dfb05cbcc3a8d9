"""karmada-agent's execution controller for its Pull cluster, as MemberAgents runs it: a
deleted Work keeps its `karmada.io/execution-controller` finalizer until the agent has
removed the workload from its member, which waits for the cluster to be Ready (the hub's
execution controller leaves Pull clusters alone). Virtual time, with the hub's cluster
controller timing out the agent's cluster and the hub's execution controller running."""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from fleetwarden.api.karmada.work import Work
from fleetwarden.api.registry import REGISTRY
from fleetwarden.controllers.karmada.cluster import cluster_controller
from fleetwarden.controllers.karmada.execution import execution_controller
from fleetwarden.members.simulated import MemberAgents, MemberState, SimulatedCluster
from fleetwarden.runtime.clock import DEFAULT_EPOCH, VirtualClock
from fleetwarden.runtime.manager import ControllerManager, VirtualDriver
from fleetwarden.store import MemoryStore

CLUSTER = REGISTRY.info("cluster.karmada.io/v1alpha1", "Cluster")
WORK = REGISTRY.info("work.karmada.io/v1alpha1", "Work")
DEPLOYMENT = REGISTRY.info("apps/v1", "Deployment")
FINALIZER = "karmada.io/execution-controller"
SPACE = "karmada-es-member1"

Obj = dict[str, Any]


@dataclass
class RecordingCluster(SimulatedCluster):
    """A simulated member that records the Works whose workload it was asked to delete, and
    fails the first `failures` of those requests (its API server refusing them)."""

    failures: int = 0
    deletions: list[str] = field(default_factory=list)

    def delete_workload(self, work: Work) -> bool:
        self.deletions.append(work.name)
        if self.failures:
            self.failures -= 1
            return False
        return super().delete_workload(work)


class Fleet:
    """member1's agents (registering a Pull cluster), and the hub's cluster and execution
    controllers, on a virtual clock."""

    def __init__(self, **member: Any) -> None:
        self.clock = VirtualClock()
        uids = itertools.count(1)
        self.store = MemoryStore(now=self.clock.now, new_uid=lambda: f"uid-{next(uids)}")
        self.member = RecordingCluster(MemberState(), [], **member)
        agents = MemberAgents({"member1": self.member})
        manager = ControllerManager(self.store, self.clock)
        for controller in (
            agents.controller(),
            cluster_controller(agents.backs),
            execution_controller(agents.delete_workload),
        ):
            manager.add(controller)
        self.driver = VirtualDriver(manager)
        self.driver.start()
        self.driver.settle()

    def to(self, seconds: float) -> None:
        self.driver.run_until(DEFAULT_EPOCH + timedelta(seconds=seconds))

    def reachable(self, reachable: bool) -> None:
        self.member.state = MemberState(reachable=reachable)

    def create_work(self, **spec: Any) -> None:
        deployment = {"apiVersion": "apps/v1", "kind": "Deployment",
                      "metadata": {"name": "nginx", "namespace": "default"},
                      "spec": {"replicas": 2}}  # fmt: skip
        self.store.create(
            {"apiVersion": WORK.api_version, "kind": "Work",
             "metadata": {"name": "nginx", "namespace": SPACE, "finalizers": [FINALIZER]},
             "spec": {"workload": {"manifests": [deployment]}, **spec}}
        )  # fmt: skip
        self.driver.settle()

    def delete_work(self) -> None:
        self.store.delete(WORK, "nginx", SPACE)
        self.driver.settle()

    def work(self) -> Obj | None:
        works = self.store.list(WORK, SPACE).items
        return works[0] if works else None

    def terminating(self) -> bool:
        work = self.work()
        return work is not None and work["metadata"]["finalizers"] == [FINALIZER]

    def ready(self) -> str | None:
        conditions = self.store.get(CLUSTER, "member1").get("status", {}).get("conditions", [])
        return next((c["status"] for c in conditions if c["type"] == "Ready"), None)


def test_a_work_deleted_while_the_agent_is_away_goes_once_it_is_back_and_ready() -> None:
    """The agent's last renewal is at 60 s and it is unreachable from 65 s; the Work is
    deleted at 70 s, the cluster Unknown at 100 s (cluster-monitor-grace-period 40 s). Back
    at 600 s, the agent's next status loop, at 610 s (its pace is 10 s), reports Ready=True
    at once (its condition cache last saw the member healthy, so no success threshold runs),
    and at that very instant it deletes the workload and releases the Work."""
    fleet = Fleet()
    fleet.create_work()
    assert len(fleet.member.applied) == 1
    fleet.to(65)
    fleet.reachable(False)
    fleet.to(70)
    fleet.delete_work()
    fleet.to(600)
    assert fleet.ready() == "Unknown"
    assert fleet.terminating()
    assert len(fleet.member.applied) == 1
    fleet.reachable(True)
    fleet.to(609)
    assert fleet.ready() == "Unknown"
    assert fleet.terminating()
    assert fleet.member.deletions == []
    fleet.to(610)
    assert fleet.ready() == "True"
    assert fleet.work() is None
    assert fleet.member.applied == {}
    assert fleet.member.deletions == ["nginx"]


def test_a_ready_clusters_agent_deletes_the_workload_then_releases_the_work() -> None:
    fleet = Fleet()
    fleet.create_work()
    fleet.delete_work()
    assert fleet.work() is None
    assert fleet.member.applied == {}
    assert fleet.member.deletions == ["nginx"]


def test_a_deletion_the_member_refuses_is_retried_at_the_agents_pace() -> None:
    """cluster-status-update-frequency, 10 s: the cluster is still Ready meanwhile."""
    fleet = Fleet(failures=1)
    fleet.create_work()
    fleet.to(5)
    fleet.delete_work()
    assert fleet.terminating()
    assert fleet.member.deletions == ["nginx"]
    fleet.to(15)
    assert fleet.work() is None
    assert fleet.member.deletions == ["nginx", "nginx"]


def test_a_preserved_workload_is_left_on_the_member() -> None:
    fleet = Fleet()
    fleet.create_work(preserveResourcesOnDeletion=True)
    fleet.delete_work()
    assert fleet.work() is None
    assert fleet.member.deletions == []
