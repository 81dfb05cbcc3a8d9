"""How `fleetwarden up` serves its API, by kube-apiserver's flags: HTTPS by default, with a CA,
a serving certificate and an administrator's client certificate made in <data-dir>/pki on
first start (or your own files); who may connect (client certificates, --token-auth-file,
bootstrap tokens, --anonymous-auth); the audit log; and plain HTTP only when asked for,
on the loopback.
"""

from __future__ import annotations

import base64
import ipaddress
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import yaml

from fleetwarden.api.authentication import SYSTEM_MASTERS
from fleetwarden.auth.audit import AuditLog
from fleetwarden.auth.authn import Authenticator, load_token_file
from fleetwarden.auth.pki import HubPKI, KeyPair, write_private
from fleetwarden.runtime.access import bootstrap_tokens, rbac_authorizer
from fleetwarden.runtime.clock import Clock
from fleetwarden.server.security import Security
from fleetwarden.server.tls import TLS
from fleetwarden.store.interface import Store

PKI_DIR = "pki"
ADMIN_USER = "admin"
KUBECONFIG_NAME = "fleetwarden"


class ServingError(ValueError):
    """Flags that cannot be served as given; the message names the flag."""


@dataclass(frozen=True)
class Serving:
    bind_address: str = "127.0.0.1"
    port: int = 6443
    insecure_serving: bool = False
    tls_cert_file: Path | None = None
    tls_private_key_file: Path | None = None
    client_ca_file: Path | None = None
    tls_sans: tuple[str, ...] = ()
    token_auth_file: Path | None = None
    anonymous_auth: bool = False
    enable_bootstrap_token_auth: bool = True
    audit_log_path: Path | None = None

    def check(self) -> None:
        """Refuse what would expose the hub: plain HTTP beyond the loopback."""
        try:
            loopback = ipaddress.ip_address(self.bind_address).is_loopback
        except ValueError:
            raise ServingError(
                f"--bind-address: {self.bind_address!r} is not an IP address"
            ) from None
        if self.insecure_serving and not loopback:
            raise ServingError(
                f"--insecure-serving: plain HTTP is served on the loopback only, not on "
                f"{self.bind_address}; drop it to serve HTTPS with authentication"
            )
        if bool(self.tls_cert_file) != bool(self.tls_private_key_file):
            raise ServingError("--tls-cert-file and --tls-private-key-file go together")

    @property
    def client_address(self) -> str:
        """Where a client on this machine reaches the hub (an unspecified bind address,
        0.0.0.0 or ::, through the loopback)."""
        address = ipaddress.ip_address(self.bind_address)
        if address.is_unspecified:
            return "127.0.0.1" if address.version == 4 else "::1"
        return self.bind_address

    def tls(self, pki: HubPKI, now: datetime) -> TLS | None:
        if self.insecure_serving:
            return None
        pki.ensure(self.tls_sans, now)
        if self.tls_cert_file and self.tls_private_key_file:
            cert, key = self.tls_cert_file, self.tls_private_key_file
        else:
            cert, key = pki.serving_cert, pki.serving_key
        return TLS(cert, key, self.client_ca_file or pki.ca_cert)

    def security(self, store: Store, clock: Clock) -> Security:
        if self.insecure_serving:
            return Security()  # the insecure port's: every request an administrator's
        tokens = load_token_file(self.token_auth_file) if self.token_auth_file else {}
        bootstrap = bootstrap_tokens(store, clock) if self.enable_bootstrap_token_auth else None
        authenticator = Authenticator(
            tokens=tokens, bootstrap=bootstrap, anonymous=self.anonymous_auth
        )
        audit = AuditLog(self.audit_log_path) if self.audit_log_path else None
        return Security(authenticator, rbac_authorizer(store), audit)

    def admin_credentials(self, pki: HubPKI, now: datetime) -> KeyPair | None:
        """The administrator's client certificate, when the hub's CA signs client
        certificates (not with a --client-ca-file of yours)."""
        if self.insecure_serving or self.client_ca_file:
            return None
        return pki.client(ADMIN_USER, ADMIN_USER, [SYSTEM_MASTERS], now)


def write_kubeconfig(
    path: Path,
    server: str,
    *,
    ca: bytes | None = None,
    client: KeyPair | None = None,
    token: str | None = None,
) -> None:
    """A kubeconfig whose current context is this hub, 0600: it holds credentials."""
    cluster: dict[str, Any] = {"server": server}
    if ca is not None:
        cluster["certificate-authority-data"] = _b64(ca)
    user: dict[str, Any] = {}
    if client is not None:
        user["client-certificate-data"] = _b64(client.certificate_pem())
        user["client-key-data"] = _b64(client.key_pem())
    if token is not None:
        user["token"] = token
    name = KUBECONFIG_NAME
    config = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": name, "cluster": cluster}],
        "users": [{"name": name, "user": user}],
        "contexts": [{"name": name, "context": {"cluster": name, "user": name}}],
        "current-context": name,
    }
    write_private(path, yaml.safe_dump(config, sort_keys=False).encode())


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode()
