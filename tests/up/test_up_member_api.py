"""`fleetwarden up --members 2`: each simulated member serves its own Kubernetes API, reached
with `kubectl --context memberN` from the kubeconfig `up` writes. A workload propagated from
the hub runs as pods on the member's nodes; a node tainted with kubectl keeps new pods off,
and a NoExecute taint evicts the pods that do not tolerate it, which their ReplicaSet makes
again on the other nodes; the hub sees what runs. The member's API refuses a stranger."""

from __future__ import annotations

import json
from typing import Any

import httpx

from . import test_up_override
from .test_up import Hub, eventually, ready
from .test_up_override import Kubectl

MEMBERS = test_up_override.MEMBERS
hub = test_up_override.hub  # the fixture: `up --members 2` with short leases

DEPLOYMENT = {
    "apiVersion": "apps/v1",
    "kind": "Deployment",
    "metadata": {"name": "web", "namespace": "default"},
    "spec": {
        "replicas": 3,
        "selector": {"matchLabels": {"app": "web"}},
        "template": {
            "metadata": {"labels": {"app": "web"}},
            "spec": {"containers": [{"name": "web", "image": "nginx"}]},
        },
    },
}


def to_member1(api_version: str, kind: str, name: str) -> dict[str, Any]:
    """A PropagationPolicy that places the default namespace's object on member1."""
    return {
        "apiVersion": "policy.karmada.io/v1alpha1",
        "kind": "PropagationPolicy",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {
            "resourceSelectors": [{"apiVersion": api_version, "kind": kind, "name": name}],
            "placement": {"clusterAffinity": {"clusterNames": ["member1"]}},
        },
    }


POLICY = to_member1("apps/v1", "Deployment", "web")


CONFIG_MAP = {
    "apiVersion": "v1",
    "kind": "ConfigMap",
    "metadata": {"name": "web-config", "namespace": "default"},
    "data": {"mode": "fast"},
}
CONFIG_MAP_POLICY = to_member1("v1", "ConfigMap", "web-config")


def member1(kubectl: Kubectl, *args: str) -> str:
    return kubectl.ok("--context=member1", *args)


def running_pods(kubectl: Kubectl) -> dict[str, str]:
    """Running pods of the workload on member1, name to node."""
    listed = json.loads(member1(kubectl, "get", "pods", "-l", "app=web", "-o", "json"))
    return {
        pod["metadata"]["name"]: pod["spec"]["nodeName"]
        for pod in listed["items"]
        if pod["status"]["phase"] == "Running"
    }


def wide_rows(kubectl: Kubectl) -> dict[str, list[str]]:
    """`get pods -o wide`, as kubectl prints it: each pod's cells by its name."""
    lines = member1(kubectl, "get", "pods", "-o", "wide").splitlines()
    assert lines[0].split()[:7] == ["NAME", "READY", "STATUS", "RESTARTS", "AGE", "IP", "NODE"]
    return {line.split()[0]: line.split() for line in lines[1:]}


def hub_status(kubectl: Kubectl, *args: str) -> Any:
    return json.loads(kubectl.ok("get", *args, "-o", "json"))["status"]


def allocated_pods(kubectl: Kubectl) -> str | None:
    summary = hub_status(kubectl, "cluster", "member1")["resourceSummary"]
    pods: str | None = (summary.get("allocated") or {}).get("pods")
    return pods


def test_kubectl_reaches_a_member_and_its_taints_move_pods(hub: Hub) -> None:
    client = hub.start()
    kubectl = Kubectl(hub.data_dir / "kubeconfig")
    eventually(lambda: all(ready(client, m) for m in MEMBERS), 60, "two Ready clusters")
    # The member's context is written once its agent serves the API.
    nodes = eventually(
        lambda: kubectl.run("--context=member1", "get", "nodes").stdout, 60, "member1's nodes"
    )
    assert [line.split()[:2] for line in nodes.splitlines()[1:]] == [
        ["node1", "Ready"], ["node2", "Ready"], ["node3", "Ready"],
    ]  # fmt: skip

    kubectl.apply(DEPLOYMENT, POLICY)
    pods = eventually(lambda: running_pods(kubectl) if len(running_pods(kubectl)) == 3 else None,
                      60, "three running pods on member1")  # fmt: skip
    rows = wide_rows(kubectl)
    assert {name: rows[name][1:3] + rows[name][6:7] for name in pods} == {
        name: ["1/1", "Running", node] for name, node in pods.items()
    }

    assert member1(kubectl, "taint", "nodes", "node2", "dedicated=gpu:NoSchedule").strip() == (
        "node/node2 tainted"
    )
    node2 = json.loads(member1(kubectl, "get", "node", "node2", "-o", "json"))
    assert [(t["key"], t["value"], t["effect"]) for t in node2["spec"]["taints"]] == [
        ("dedicated", "gpu", "NoSchedule")
    ]
    # A taint kubectl taint would not write, patched in: refused, the node as it was.
    bad = '{"spec":{"taints":[{"key":"x","effect":"NoRun"}]}}'
    refused = kubectl.run("--context=member1", "patch", "node", "node2", "-p", bad)
    assert refused.returncode != 0
    assert 'spec.taints[0].effect: Unsupported value: "NoRun"' in refused.stderr
    again = json.loads(member1(kubectl, "get", "node", "node2", "-o", "json"))
    assert again["spec"]["taints"] == node2["spec"]["taints"]

    # A NoExecute taint on a node that runs pods of the workload: they are evicted, and
    # made again where they fit: neither there nor on node2, which takes no new pods.
    tainted = sorted(pods.values())[0]
    member1(kubectl, "taint", "nodes", tainted, "maintenance=true:NoExecute")
    evicted = {name for name, node in pods.items() if node == tainted}
    kept = {name: node for name, node in pods.items() if node != tainted}

    def moved() -> dict[str, str] | None:
        now = running_pods(kubectl)
        return now if len(now) == 3 and not evicted & set(now) else None

    now = eventually(moved, 60, f"the pods on {tainted} evicted and made again")
    new_nodes = {node for name, node in now.items() if name not in kept}
    assert new_nodes and tainted not in new_nodes and "node2" not in new_nodes

    # The hub sees the member's nodes and what runs there.
    summary = hub_status(kubectl, "cluster", "member1")["resourceSummary"]
    assert summary["allocatable"]["cpu"] == "48"
    eventually(
        # No allocated at all while the member reports none (the pods were just moved).
        lambda: allocated_pods(kubectl) == "3",
        60, "the three pods in member1's resource summary",
    )  # fmt: skip
    eventually(
        lambda: hub_status(kubectl, "deployment", "web").get("readyReplicas") == 3,
        60, "the hub's Deployment with three ready replicas",
    )  # fmt: skip

    # The administrator of the hub is the member's too; RBAC of the member's own says so.
    assert member1(kubectl, "auth", "can-i", "delete", "nodes").strip() == "yes"
    # The hub's own context is still the current one.
    assert "member1" in kubectl.ok("get", "clusters")
    # A request without the administrator's certificate is refused.
    server = kubectl.ok("config", "view", "-o", "jsonpath={.clusters[?(@.name=='member1')]"
                        ".cluster.server}")  # fmt: skip
    assert server.startswith("https://127.0.0.1:")
    refused = httpx.get(f"{server}/api/v1/nodes", verify=False, timeout=30)
    assert refused.status_code == 401
    assert refused.json()["reason"] == "Unauthorized"

    a_propagated_config_map_is_kept_by_the_member_until_it_goes(kubectl)


def a_propagated_config_map_is_kept_by_the_member_until_it_goes(kubectl: Kubectl) -> None:
    """Not only workloads: every object of a Work is on the member, as the agent applied it."""
    kubectl.apply(CONFIG_MAP, CONFIG_MAP_POLICY)

    def mode() -> str | None:
        done = kubectl.run("--context=member1", "get", "configmap", "web-config",
                           "-o", "jsonpath={.data.mode}")  # fmt: skip
        return done.stdout if done.returncode == 0 else None

    assert eventually(mode, 60, "the ConfigMap on member1") == "fast"
    kubectl.ok("delete", "configmap", "web-config")

    def gone() -> bool:
        done = kubectl.run("--context=member1", "get", "configmap", "web-config")
        return done.returncode != 0 and "NotFound" in done.stderr

    eventually(gone, 60, "the ConfigMap gone from member1 with its Work")
