"""`fleetwarden up --ocm-members 2` end to end: two OCM registration agents in processes of
their own create their ManagedClusters (accepted), renew their leases every 2 s and report
Available; a Placement selects both. One agent freezes (SIGSTOP): 5 lease durations
later its cluster is Available=Unknown, tainted unreachable (NoSelect), and the Placement's
decision drops it."""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from fleetwarden.api.registry import REGISTRY
from fleetwarden.client.client import Client

from .test_up import Hub, eventually, kill_leftover_agents

MANAGED_CLUSTER = REGISTRY.info("cluster.open-cluster-management.io/v1", "ManagedCluster")
PLACEMENT_DECISION = REGISTRY.info(
    "cluster.open-cluster-management.io/v1beta1", "PlacementDecision"
)
CLUSTERS = ["cluster1", "cluster2"]
LEASE_SECONDS = 2


@pytest.fixture
def hub(tmp_path: Path) -> Iterator[Hub]:
    hub = Hub(tmp_path, ["--ocm-members=2", f"--ocm-lease-duration-seconds={LEASE_SECONDS}"])
    try:
        yield hub
    finally:
        hub.stop()
        kill_leftover_agents(tmp_path / "members")


def available(client: Client, name: str) -> str | None:
    conditions = client.get(MANAGED_CLUSTER, name).get("status", {}).get("conditions", [])
    return next(
        (c["status"] for c in conditions if c["type"] == "ManagedClusterConditionAvailable"), None
    )


def decided(client: Client) -> list[str]:
    listed = client.list(
        PLACEMENT_DECISION, "default",
        label_selector="cluster.open-cluster-management.io/placement=everywhere",
    )  # fmt: skip
    return sorted(
        d["clusterName"]
        for item in listed["items"]
        for d in item.get("status", {}).get("decisions", [])
    )


def taints(client: Client, name: str) -> list[tuple[str, str]]:
    spec = client.get(MANAGED_CLUSTER, name)["spec"]
    return [(t["key"], t["effect"]) for t in spec.get("taints") or []]


def test_ocm_agents_join_are_placed_and_a_frozen_one_is_dropped(hub: Hub) -> None:
    client = hub.start()
    eventually(
        lambda: all(available(client, c) == "True" for c in CLUSTERS), 20, "Available clusters"
    )
    for name in CLUSTERS:
        spec = client.get(MANAGED_CLUSTER, name)["spec"]
        assert (spec["hubAcceptsClient"], spec["leaseDurationSeconds"]) == (True, LEASE_SECONDS)
    for manifest in PLACEMENT_OBJECTS:
        client.create(manifest)
    eventually(lambda: decided(client) == CLUSTERS, 15, "a decision for both clusters")

    # Frozen rather than killed: `up` starts an agent that exits again.
    frozen = hub.agent_pid("cluster1")
    os.kill(frozen, signal.SIGSTOP)
    stopped = time.monotonic()
    # The lease expires 5 lease durations (10 s) after its last renewal, which was at most
    # one lease duration before it froze.
    eventually(lambda: available(client, "cluster1") == "Unknown", 20, "cluster1 Unknown")
    assert time.monotonic() - stopped > 3 * LEASE_SECONDS
    unreachable = ("cluster.open-cluster-management.io/unreachable", "NoSelect")
    eventually(lambda: unreachable in taints(client, "cluster1"), 10, "the unreachable taint")
    eventually(lambda: decided(client) == ["cluster2"], 10, "the decision without cluster1")
    assert available(client, "cluster2") == "True"
    assert taints(client, "cluster2") == []
    os.kill(frozen, signal.SIGCONT)  # to end with its hub


PLACEMENT_OBJECTS: list[dict[str, Any]] = [
    {
        "apiVersion": "cluster.open-cluster-management.io/v1beta2",
        "kind": "ManagedClusterSet",
        "metadata": {"name": "fleet"},
        "spec": {"clusterSelector": {"selectorType": "LabelSelector", "labelSelector": {}}},
    },
    {
        "apiVersion": "cluster.open-cluster-management.io/v1beta2",
        "kind": "ManagedClusterSetBinding",
        "metadata": {"name": "fleet", "namespace": "default"},
        "spec": {"clusterSet": "fleet"},
    },
    {
        "apiVersion": "cluster.open-cluster-management.io/v1beta1",
        "kind": "Placement",
        "metadata": {"name": "everywhere", "namespace": "default"},
        "spec": {"clusterSets": ["fleet"]},
    },
]
