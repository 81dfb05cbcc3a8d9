"""Accepting a ManagedCluster, as `clusteradm accept` does: approve the CertificateSigningRequests
its registration agent made with a bootstrap identity, then let the hub accept the cluster
(spec.hubAcceptsClient). The hub's webhook asks whether the sender may update
managedclusters/accept, and its CertificateApproval whether it may approve for the signer."""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import UTC, datetime

from fleetwarden.api.certificates import (
    APPROVED,
    CSR,
    DENIED,
    CertificateSigningRequest,
    with_approval,
)
from fleetwarden.api.errors import NotFound
from fleetwarden.api.ocm.cluster import AGENT_BOOTSTRAP_GROUP, CLUSTER_NAME_LABEL
from fleetwarden.api.registry import REGISTRY
from fleetwarden.client.client import Client
from fleetwarden.client.errors import ClientError
from fleetwarden.semantics.certificates import ocm_agent_request

MANAGED_CLUSTER = REGISTRY.info("cluster.open-cluster-management.io/v1", "ManagedCluster")
BOOTSTRAP_USER_PREFIX = "system:bootstrap:"
POLL_INTERVAL = 0.5


def accept(
    client: Client,
    cluster: str,
    *,
    wait: float = 0.0,
    say: Callable[[str], None] = lambda line: None,
    command: str = "fleetwarden",
) -> None:
    """Approve the cluster's bootstrap CSRs once the cluster exists (waiting up to `wait`
    seconds for both), then accept it. NotFound when the cluster never came, ClientError
    when no request could be approved; nothing is approved for a missing cluster."""
    deadline = time.monotonic() + wait
    while not (_exists(client, cluster) and _approve_requests(client, cluster, say, command)):
        if time.monotonic() >= deadline:
            client.get(MANAGED_CLUSTER, cluster)  # NotFound, if that is what is missing
            raise ClientError(f"no csr is approved yet for cluster {cluster}")
        time.sleep(POLL_INTERVAL)
    managed = client.get(MANAGED_CLUSTER, cluster)
    if (managed.get("spec") or {}).get("hubAcceptsClient"):
        say(f"hubAcceptsClient already set for managed cluster {cluster}")
        return
    client.patch(MANAGED_CLUSTER, cluster, "", {"spec": {"hubAcceptsClient": True}})
    say(f"set hubAcceptsClient to true for managed cluster {cluster}")


def _exists(client: Client, cluster: str) -> bool:
    try:
        client.get(MANAGED_CLUSTER, cluster)
    except NotFound:
        return False
    return True


def _approve_requests(
    client: Client, cluster: str, say: Callable[[str], None], command: str
) -> bool:
    """Whether one of the cluster's bootstrap CSRs is approved (by now, or before)."""
    listed = client.list(CSR, label_selector=f"{CLUSTER_NAME_LABEL}={cluster}")["items"]
    approved = False
    for item in listed:
        csr = REGISTRY.decode({**item, "apiVersion": CSR.api_version, "kind": CSR.kind})
        assert isinstance(csr, CertificateSigningRequest)
        if not _from_bootstrap(csr) or ocm_agent_request(csr) is None:
            continue  # no agent's first request, or not for this cluster's identity
        if csr.has_condition(DENIED):
            say(f"CSR {csr.name} already denied")
        elif csr.has_condition(APPROVED):
            say(f"CSR {csr.name} already approved")
            approved = True
        else:
            _approve(client, csr, command)
            say(f"CSR {csr.name} approved")
            approved = True
    return approved


def _from_bootstrap(csr: CertificateSigningRequest) -> bool:
    return (csr.spec.username or "").startswith(BOOTSTRAP_USER_PREFIX) and (
        AGENT_BOOTSTRAP_GROUP in (csr.spec.groups or [])
    )


def _approve(client: Client, csr: CertificateSigningRequest, command: str) -> None:
    message = f"This CSR was approved by {command} certificate approve."
    wire = with_approval(csr, f"{command} Approve", message, datetime.now(UTC))
    client.update(wire, info=CSR, subresource="approval")
