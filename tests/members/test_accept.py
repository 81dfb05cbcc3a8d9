"""`fleetwarden accept managedclusters`, as `clusteradm accept`: it approves a cluster's
first certificate request only when it asks for that cluster's agent identity, and only
for a cluster that exists."""

from __future__ import annotations

import base64

import pytest

from fleetwarden.api.certificates import CSR, KUBE_APISERVER_CLIENT_SIGNER
from fleetwarden.api.errors import NotFound
from fleetwarden.auth.pki import new_certificate_request, new_key
from fleetwarden.client.client import Client
from fleetwarden.client.kubeconfig import load_kubeconfig
from fleetwarden.members.accept import MANAGED_CLUSTER, accept

from .conftest import JoiningHub

AGENT = "system:open-cluster-management:cluster1:agent"
AGENT_GROUPS = ["system:open-cluster-management:cluster1"]


def bootstrap_client(hub: JoiningHub) -> Client:
    return Client.from_kubeconfig(load_kubeconfig(str(hub.bootstrap)))


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


def test_only_the_request_for_the_clusters_agent_is_approved(joining_hub: JoiningHub) -> None:
    admin, agent = joining_hub.admin, bootstrap_client(joining_hub)
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
    joining_hub: JoiningHub,
) -> None:
    admin, agent = joining_hub.admin, bootstrap_client(joining_hub)
    ask(agent, "honest", AGENT, AGENT_GROUPS)
    with pytest.raises(NotFound):
        accept(admin, "cluster1")
    assert not approved(admin, "honest")
