"""`fleetwarden up` elects a leader per upstream binary: its Leases, held by this hub, and
leader_election_master_status on /metrics; after `kill -9` the next `up` takes its own
stale Leases at once (the SQLite store is its alone); `--leader-elect=false` writes none."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from fleetwarden.api.registry import REGISTRY
from fleetwarden.client.client import Client

from .test_up import Hub, eventually

LEASE = REGISTRY.info("coordination.k8s.io/v1", "Lease")
CLUSTER_SET = REGISTRY.info("cluster.open-cluster-management.io/v1beta2", "ManagedClusterSet")
LOCKS = {
    ("karmada-system", "karmada-controller-manager"),
    ("karmada-system", "karmada-scheduler"),
    ("open-cluster-management-hub", "registration-controller-lock"),
    ("open-cluster-management-hub", "placement-lock"),
    ("kube-system", "kube-controller-manager"),
}


@pytest.fixture
def hub(tmp_path: Path) -> Iterator[Hub]:
    hub = Hub(tmp_path, args=())
    try:
        yield hub
    finally:
        hub.stop()


def holders(client: Client) -> dict[tuple[str, str], dict[str, object]]:
    """The spec of every Lease of a lock, by namespace and name."""
    leases = client.list(LEASE)["items"]
    return {
        key: lease["spec"]
        for lease in leases
        if (key := (lease["metadata"]["namespace"], lease["metadata"]["name"])) in LOCKS
    }


def held(client: Client) -> set[str] | None:
    """The identities holding every lock, once each is held."""
    specs = holders(client)
    identities = {str(spec["holderIdentity"]) for spec in specs.values()}
    return identities if specs.keys() == LOCKS and "" not in identities else None


def test_the_hub_leads_each_lock_and_takes_its_own_leases_back_after_kill_9(hub: Hub) -> None:
    client = hub.start()
    (identity,) = eventually(lambda: held(client), 10, "every lock held")
    assert identity.startswith(f"{socket.gethostname()}_")
    metrics = client.get_raw("/metrics").text
    for _, name in LOCKS:
        assert f'leader_election_master_status{{name="{name}"}} 1.0' in metrics
    hub.kill()

    client = hub.start()

    # Well within the 15 s lease: the store is this process's, so the lease is stale.
    def taken_back() -> set[str] | None:
        identities = held(client)
        return identities if identities and identity not in identities else None

    (again,) = eventually(taken_back, 10, "every lock taken back")
    assert again.startswith(f"{socket.gethostname()}_")
    assert all(spec["leaseTransitions"] == 1 for spec in holders(client).values())


def test_without_leader_election_no_lease_is_written(tmp_path: Path) -> None:
    hub = Hub(tmp_path, args=("--leader-elect=false",))
    try:
        client = hub.start()
        # The controllers run at once: OCM's registration controller makes the default set.
        eventually(lambda: client.get(CLUSTER_SET, "default"), 10, "the default ManagedClusterSet")
        assert client.list(LEASE)["items"] == []
        assert "leader_election_master_status{" not in client.get_raw("/metrics").text
    finally:
        hub.stop()
