"""The store a simulated member's API serves: the member's objects published there, and
users' edits of its Nodes and Pods taken back by the member's control plane."""

from __future__ import annotations

import threading
from datetime import timedelta
from typing import Any

from fleetwarden.members.inside.api_store import NODE, POD, MemberApiStore
from fleetwarden.members.inside.cluster import MemberKube
from fleetwarden.members.inside.nodes import NodeSpec
from fleetwarden.store.interface import PatchType

from .test_member_nodes import T0, workload

SECOND = timedelta(seconds=1)


class Member:
    """A member's control plane and its API store, run as the agent runs them."""

    def __init__(self, *names: str) -> None:
        self.nodes = tuple(NodeSpec(name) for name in names)
        self.kube = MemberKube(self.nodes, T0)
        self.api = MemberApiStore()
        self.woken = threading.Event()
        self.api.wake = self.woken.set
        self.now = T0

    def run(self) -> None:
        self.now += SECOND
        nodes = self.api.take_edits(self.nodes, self.kube, self.now)
        if nodes is not None:
            self.nodes = nodes
            self.kube.set_nodes(nodes, self.now)
        self.api.publish(self.kube.objects(self.now))

    def pods(self) -> dict[str, str | None]:
        items = self.api.store.list(POD, "default").items
        return {p["metadata"]["name"]: p["spec"].get("nodeName") for p in items}

    def node(self, name: str) -> dict[str, Any]:
        return self.api.store.get(NODE, name)

    def patch_node(self, name: str, patch: dict[str, Any]) -> None:
        """A user's patch, through another thread than the publisher's (the server's)."""
        thread = threading.Thread(
            target=self.api.store.patch, args=(NODE, name, "", patch),
            kwargs={"patch_type": PatchType.MERGE},
        )  # fmt: skip
        thread.start()
        thread.join()


def test_the_member_objects_are_published_and_only_changes_written_again() -> None:
    member = Member("node1", "node2")
    member.kube.apply(workload("Deployment", "web", 2), T0)
    member.run()
    assert set(member.pods().values()) <= {"node1", "node2"} and len(member.pods()) == 2
    pod = member.api.store.get(POD, next(iter(member.pods())), "default")
    assert pod["status"]["phase"] == "Running"
    assert member.node("node1")["status"]["conditions"] == [{"type": "Ready", "status": "True"}]
    version = member.api.store.resource_version
    member.run()
    assert member.api.store.resource_version == version
    assert not member.woken.is_set()  # the member's own writes are no user's edits


def test_a_no_execute_taint_a_user_puts_on_a_node_evicts_its_pods_elsewhere() -> None:
    member = Member("node1", "node2")
    member.kube.apply(workload("Deployment", "web", 2), T0)
    member.run()
    before = member.pods()
    taint = {"key": "dedicated", "value": "gpu", "effect": "NoExecute"}
    member.patch_node("node1", {"spec": {"taints": [taint]}})
    assert member.woken.is_set()
    member.run()
    after = member.pods()
    assert set(after.values()) == {"node2"}
    moved = [name for name, node in before.items() if node == "node1"]
    assert moved and not set(moved) & set(after)  # evicted, made again under other names
    [kept] = member.node("node1")["spec"]["taints"]
    assert (kept["key"], kept["value"], kept["effect"]) == ("dedicated", "gpu", "NoExecute")


def test_a_cordoned_node_gets_the_controller_taint_which_stays_the_controllers() -> None:
    member = Member("node1")
    member.run()
    member.patch_node("node1", {"spec": {"unschedulable": True}})
    member.run()
    taints = member.node("node1")["spec"]["taints"]
    assert [t["key"] for t in taints] == ["node.kubernetes.io/unschedulable"]
    # A label added later leaves the controller's taint out of what the node declares.
    member.patch_node("node1", {"metadata": {"labels": {"zone": "a"}}})
    member.run()
    assert member.nodes[0].taints == () and member.nodes[0].labels == {"zone": "a"}
    member.patch_node("node1", {"spec": {"unschedulable": None}})
    member.run()
    assert "taints" not in member.node("node1")["spec"]


def test_a_pod_a_user_deletes_is_made_again_by_its_workload() -> None:
    member = Member("node1")
    member.kube.apply(workload("ReplicaSet", "web", 1), T0)
    member.run()
    [name] = member.pods()
    threading.Thread(target=member.api.store.delete, args=(POD, name, "default")).start()
    assert member.woken.wait(10)
    member.run()
    [other] = member.pods()
    assert other != name


def test_a_node_a_user_deletes_leaves_the_member_with_its_pods_and_one_created_joins() -> None:
    member = Member("node1", "node2")
    member.kube.apply(workload("ReplicaSet", "web", 2), T0)
    member.run()
    thread = threading.Thread(target=member.api.store.delete, args=(NODE, "node1"))
    thread.start()
    thread.join()
    member.run()
    assert [n.name for n in member.nodes] == ["node2"]
    assert set(member.pods().values()) == {"node2"}
    assert [n["metadata"]["name"] for n in member.api.store.list(NODE).items] == ["node2"]
    node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "node9"}}
    thread = threading.Thread(target=member.api.store.create, args=(node,))
    thread.start()
    thread.join()
    member.run()
    assert [n.name for n in member.nodes] == ["node2", "node9"]
    ready = member.node("node9")["status"]["conditions"]
    assert ready == [{"type": "Ready", "status": "True"}]
