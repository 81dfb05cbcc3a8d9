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
    if _valid(kubeconfig, identity, now()):
        return kubeconfig
    key = new_key()
    with Client.from_kubeconfig(bootstrap) as client:
        name = _request(
            client, identity, new_certificate_request(key, identity.user, identity.groups)
        )
        logger.info("asked the hub for a certificate as %s (%s)", identity.user, name)
        before_waiting(client)
        certificate = _wait_for_certificate(client, name, timeout)
    _write(kubeconfig, bootstrap, KeyPair(x509.load_pem_x509_certificate(certificate), key))
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


def _valid(kubeconfig: Path, identity: Identity, now: datetime) -> bool:
    """Whether the kubeconfig holds a certificate of this identity with time left."""
    if not kubeconfig.exists():
        return False
    try:
        pem = load_kubeconfig(str(kubeconfig)).client_certificate
    except KubeConfigError:
        return False
    if pem is None:
        return False
    certificate = x509.load_pem_x509_certificate(pem)
    names = certificate.subject.get_attributes_for_oid(x509.NameOID.COMMON_NAME)
    mine = bool(names) and names[0].value == identity.user
    return mine and certificate.not_valid_after_utc - now > RENEW_BEFORE


def _write(kubeconfig: Path, bootstrap: KubeConfig, client: KeyPair) -> None:
    kubeconfig.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    write_kubeconfig(
        kubeconfig, bootstrap.server, ca=bootstrap.certificate_authority,
        certificate=client.certificate_pem(), key=client.key_pem(),
    )  # fmt: skip
