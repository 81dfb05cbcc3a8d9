"""`fleetwarden accept managedclusters`, as `clusteradm accept`: it approves a cluster's
first certificate request only when it asks for that cluster's agent identity, and only
for a cluster that exists."""

from __future__ import annotations

import base64
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from fleetwarden.api.certificates import CSR, KUBE_APISERVER_CLIENT_SIGNER
from fleetwarden.api.errors import NotFound
from fleetwarden.auth.pki import new_certificate_request, new_key
from fleetwarden.cli.serving import Serving
from fleetwarden.cli.up import Hub
from fleetwarden.client.client import Client
from fleetwarden.client.kubeconfig import load_kubeconfig
from fleetwarden.members.accept import MANAGED_CLUSTER, accept
from fleetwarden.runtime.settings import Settings

AGENT = "system:open-cluster-management:cluster1:agent"
AGENT_GROUPS = ["system:open-cluster-management:cluster1"]


@pytest.fixture
def clients(
    tmp_path: Path, admin_client: Callable[[Hub], Client]
) -> Iterator[tuple[Client, Client]]:
    """(the administrator, an agent holding the bootstrap token `up` gives its agents)."""
    hub = Hub(tmp_path / "hub", Serving(port=0), Settings())
    hub.start()
    admin = admin_client(hub)
    flags = hub.agent_credentials(tmp_path / "members")("cluster1")
    bootstrap = flags[0].removeprefix("--bootstrap-kubeconfig=")
    with Client.from_kubeconfig(load_kubeconfig(bootstrap)) as agent:
        yield admin, agent
    hub.stop()


def ask(agent: Client, name: str, user: str, groups: list[str]) -> None:
    pem = new_certificate_request(new_key(), user, groups)
    agent.create(
        {"apiVersion": CSR.api_version, "kind": CSR.kind,
         "metadata": {"name": name,
                      "labels": {"open-cluster-management.io/cluster-name": "cluster1"}},
         "spec": {"request": base64.b64encode(pem).decode(),
                  "signerName": KUBE_APISERVER_CLIENT_SIGNER,
                  "usages": ["digital signature", "key encipherment", "client auth"]}},
        info=CSR,
    )  # fmt: skip


def approved(admin: Client, name: str) -> bool:
    conditions = admin.get(CSR, name).get("status", {}).get("conditions") or []
    return any(c["type"] == "Approved" for c in conditions)


def test_only_the_request_for_the_clusters_agent_is_approved(
    clients: tuple[Client, Client],
) -> None:
    admin, agent = clients
    admin.create(
        {"apiVersion": MANAGED_CLUSTER.api_version, "kind": "ManagedCluster",
         "metadata": {"name": "cluster1"}, "spec": {}},
        info=MANAGED_CLUSTER,
    )  # fmt: skip
    ask(agent, "honest", AGENT, AGENT_GROUPS)
    other = "system:open-cluster-management:cluster2"
    ask(agent, "other", f"{other}:agent", [other])
    ask(agent, "admin", "admin", ["platform-admins"])
    accept(admin, "cluster1")
    assert approved(admin, "honest")
    assert not approved(admin, "other") and not approved(admin, "admin")
    assert admin.get(MANAGED_CLUSTER, "cluster1")["spec"]["hubAcceptsClient"] is True


def test_a_missing_cluster_is_refused_before_anything_is_approved(
    clients: tuple[Client, Client],
) -> None:
    admin, agent = clients
    ask(agent, "honest", AGENT, AGENT_GROUPS)
    with pytest.raises(NotFound):
        accept(admin, "cluster1")
    assert not approved(admin, "honest")
