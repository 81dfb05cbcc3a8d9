"""How an agent gets an identity of its own: with a bootstrap token (a kubeconfig that
`fleetwarden token create`, `karmadactl token create` or `clusteradm get token` would give)
it asks the hub for a client certificate through a CertificateSigningRequest, waits until
the hub has approved and signed it, and writes the kubeconfig it runs with from then on:
the hub's CA, and the new certificate and key (0600).

Karmada's agent asks as `system:karmada:agent:<cluster>` in `system:karmada:agents`, which
the hub's agent CSR approver approves at once; OCM's registration agent asks as
`system:open-cluster-management:<cluster>:<agent>`, approved when an administrator accepts
the cluster (`fleetwarden accept managedclusters NAME`, as `clusteradm accept`). A
kubeconfig kept from an earlier join is used again while its certificate is valid.
"""

from __future__ import annotations

import base64
import logging
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from cryptography import x509

from fleetwarden.api.certificates import (
    CLIENT_USAGES,
    CSR,
    DENIED,
    FAILED,
    KUBE_APISERVER_CLIENT_SIGNER,
    CertificateSigningRequest,
)
from fleetwarden.api.karmada.cluster import AGENT_USER_PREFIX, AGENTS_GROUP
from fleetwarden.api.ocm.cluster import (
    AGENT_GROUP_PREFIX,
    CLUSTER_NAME_LABEL,
    MANAGED_CLUSTERS_GROUP,
)
from fleetwarden.api.registry import REGISTRY
from fleetwarden.auth.pki import KeyPair, new_certificate_request, new_key
from fleetwarden.client.client import Client
from fleetwarden.client.errors import ClientError
from fleetwarden.client.kubeconfig import (
    KubeConfig,
    KubeConfigError,
    load_kubeconfig,
    write_kubeconfig,
)

logger = logging.getLogger(__name__)

# Renew a kept certificate rather than use it when less than this is left of it.
RENEW_BEFORE = timedelta(days=1)
POLL_INTERVAL = 0.5


class JoinError(ClientError):
    """The hub denied the request, its signer failed it, or it did not answer in time."""


@dataclass(frozen=True)
class Identity:
    """The client certificate an agent asks for, and how its request is found."""

    user: str
    groups: tuple[str, ...]
    generate_name: str
    labels: Mapping[str, str] = field(default_factory=dict)


def karmada_identity(cluster: str) -> Identity:
    """karmadactl register's: `<cluster>-<5 random>` requests."""
    return Identity(AGENT_USER_PREFIX + cluster, (AGENTS_GROUP,), f"{cluster}-")


def ocm_identity(cluster: str, agent: str) -> Identity:
    """The registration agent's: `<cluster>-<random>` requests labelled with the cluster."""
    return Identity(
        f"{AGENT_GROUP_PREFIX}{cluster}:{agent}",
        (f"{AGENT_GROUP_PREFIX}{cluster}", MANAGED_CLUSTERS_GROUP),
        f"{cluster}-",
        {CLUSTER_NAME_LABEL: cluster},
    )


def joined_kubeconfig(
    bootstrap: KubeConfig,
    identity: Identity,
    kubeconfig: Path,
    *,
    timeout: float,
    before_waiting: Callable[[Client], None] = lambda client: None,
    now: Callable[[], datetime] = lambda: datetime.now(UTC),
) -> Path:
    """The agent's own kubeconfig: kept from before while valid, else asked for and
    written. `before_waiting` runs with the bootstrap client once the request is made (OCM's
    agent creates its ManagedCluster then, for an administrator to accept)."""
    kept = _kept(kubeconfig, identity, now())
    # Another CA is another hub (made anew), which never issued the kept certificate.
    if kept is not None and kept.certificate_authority == bootstrap.certificate_authority:
        if kept.server != bootstrap.server:  # the hub moved (a new port, say)
            _write(kubeconfig, bootstrap, kept.client_certificate, kept.client_key)
        return kubeconfig
    key = new_key()
    with Client.from_kubeconfig(bootstrap) as client:
        name = _request(
            client, identity, new_certificate_request(key, identity.user, identity.groups)
        )
        logger.info("asked the hub for a certificate as %s (%s)", identity.user, name)
        before_waiting(client)
        certificate = _wait_for_certificate(client, name, timeout)
    pair = KeyPair(x509.load_pem_x509_certificate(certificate), key)
    _write(kubeconfig, bootstrap, pair.certificate_pem(), pair.key_pem())
    logger.info("joined as %s; kubeconfig %s", identity.user, kubeconfig)
    return kubeconfig


def _request(client: Client, identity: Identity, pem: bytes) -> str:
    csr: dict[str, Any] = {
        "apiVersion": CSR.api_version,
        "kind": CSR.kind,
        "metadata": {"generateName": identity.generate_name, "labels": dict(identity.labels)},
        "spec": {
            "request": base64.b64encode(pem).decode(),
            "signerName": KUBE_APISERVER_CLIENT_SIGNER,
            "usages": list(CLIENT_USAGES),
        },
    }
    created = client.create(csr, info=CSR)
    return str(created["metadata"]["name"])


def _wait_for_certificate(client: Client, name: str, timeout: float) -> bytes:
    deadline = time.monotonic() + timeout
    while True:
        csr = REGISTRY.decode({**client.get(CSR, name), "apiVersion": CSR.api_version,
                               "kind": CSR.kind})  # fmt: skip
        assert isinstance(csr, CertificateSigningRequest)
        for refusal in (DENIED, FAILED):
            if csr.has_condition(refusal):
                why = next(c for c in csr.status.conditions or [] if c.type == refusal)
                said = why.message or why.reason
                raise JoinError(f"certificate signing request {name} {refusal.lower()}: {said}")
        if csr.status.certificate:
            return base64.b64decode(csr.status.certificate)
        if time.monotonic() > deadline:
            raise JoinError(
                f"certificate signing request {name} was not approved and signed within "
                f"{timeout:g} s"
            )
        time.sleep(POLL_INTERVAL)


def _kept(kubeconfig: Path, identity: Identity, now: datetime) -> KubeConfig | None:
    """The kubeconfig, if it holds a certificate of this identity with time left."""
    if not kubeconfig.exists():
        return None
    try:
        config = load_kubeconfig(str(kubeconfig))
    except KubeConfigError:
        return None
    if config.client_certificate is None or config.client_key is None:
        return None
    try:
        certificate = x509.load_pem_x509_certificate(config.client_certificate)
    except ValueError:
        return None  # not a certificate: join again
    names = certificate.subject.get_attributes_for_oid(x509.NameOID.COMMON_NAME)
    mine = bool(names) and names[0].value == identity.user
    return config if mine and certificate.not_valid_after_utc - now > RENEW_BEFORE else None


def _write(
    kubeconfig: Path, bootstrap: KubeConfig, certificate: bytes | None, key: bytes | None
) -> None:
    kubeconfig.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    write_kubeconfig(
        kubeconfig, bootstrap.server, ca=bootstrap.certificate_authority,
        certificate=certificate, key=key,
    )  # fmt: skip
