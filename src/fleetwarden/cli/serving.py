"""How `fleetwarden up` serves its API, by kube-apiserver's flags: HTTPS by default, with a CA,
a serving certificate, an administrator's client certificate and the service account
signing key made in <data-dir>/pki on first start (or your own files); who may connect
(client certificates, --token-auth-file, service account tokens, bootstrap tokens,
--anonymous-auth); the audit log; and plain HTTP only when asked for, on the loopback.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from fleetwarden.api.authentication import SYSTEM_MASTERS
from fleetwarden.api.errors import NotFound
from fleetwarden.api.registry import REGISTRY
from fleetwarden.auth.audit import AuditLog
from fleetwarden.auth.authn import Authenticator, load_token_file
from fleetwarden.auth.pki import HubPKI, KeyPair
from fleetwarden.auth.serviceaccounts import DEFAULT_ISSUER, ServiceAccountTokens, SigningKey
from fleetwarden.runtime.access import bootstrap_tokens, rbac_authorizer
from fleetwarden.runtime.clock import Clock
from fleetwarden.server.security import Security
from fleetwarden.server.tls import TLS
from fleetwarden.store.interface import Store

PKI_DIR = "pki"
ADMIN_USER = "admin"
SERVICE_ACCOUNT_KEY = "sa.key"  # kubeadm's name for it


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
    service_account_issuer: str | None = None  # None: DEFAULT_ISSUER
    service_account_signing_key_file: Path | None = None
    service_account_jwks_uri: str | None = None  # None: the hub's address
    api_audiences: tuple[str, ...] = ()

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

    def service_accounts(self, pki: HubPKI, store: Store, clock: Clock) -> ServiceAccountTokens:
        """Service account tokens, signed with --service-account-signing-key-file or the
        key made in the PKI directory (which replicas of one hub share, with its CA)."""
        if self.service_account_signing_key_file is not None:
            key = SigningKey.read(self.service_account_signing_key_file)
        else:
            key = SigningKey.ensure(pki.dir / SERVICE_ACCOUNT_KEY)

        def lookup(kind: str, namespace: str, name: str) -> dict[str, Any] | None:
            try:
                return store.get(REGISTRY.info("v1", kind), name, namespace)
            except NotFound:
                return None

        issuer = self.service_account_issuer or DEFAULT_ISSUER
        return ServiceAccountTokens(key, lookup, clock.now, issuer, self.api_audiences or (issuer,))

    def security(
        self, store: Store, clock: Clock, service_accounts: ServiceAccountTokens | None = None
    ) -> Security:
        if self.insecure_serving:
            return Security()  # the insecure port's: every request an administrator's
        tokens = load_token_file(self.token_auth_file) if self.token_auth_file else {}
        bootstrap = bootstrap_tokens(store, clock) if self.enable_bootstrap_token_auth else None
        authenticator = Authenticator(
            tokens=tokens,
            service_accounts=service_accounts,
            bootstrap=bootstrap,
            anonymous=self.anonymous_auth,
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
