"""How `fleetwarden up` serves its API, by kube-apiserver's flags: HTTPS by default, with a CA,
a serving certificate and an administrator's client certificate made in <data-dir>/pki on
first start (or your own files); who may connect (client certificates, --token-auth-file,
bootstrap tokens, --anonymous-auth); the audit log; and plain HTTP only when asked for,
on the loopback.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from fleetwarden.api.authentication import SYSTEM_MASTERS
from fleetwarden.auth.audit import AuditLog
from fleetwarden.auth.authn import Authenticator, load_token_file
from fleetwarden.auth.pki import HubPKI, KeyPair
from fleetwarden.runtime.access import bootstrap_tokens, rbac_authorizer
from fleetwarden.runtime.clock import Clock
from fleetwarden.server.security import Security
from fleetwarden.server.tls import TLS
from fleetwarden.store.interface import Store

PKI_DIR = "pki"
ADMIN_USER = "admin"


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

    @property
    def signs_client_certificates(self) -> bool:
        """Whether the hub's CA signs client certificates (the administrator's, agents'):
        over TLS, unless a --client-ca-file of yours says who clients are."""
        return not self.insecure_serving and not self.client_ca_file

    def admin_credentials(self, pki: HubPKI, now: datetime) -> KeyPair | None:
        """The administrator's client certificate, when the hub's CA signs them."""
        if not self.signs_client_certificates:
            return None
        return pki.client(ADMIN_USER, ADMIN_USER, [SYSTEM_MASTERS], now)
