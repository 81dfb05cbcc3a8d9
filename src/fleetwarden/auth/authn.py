"""Who a request is, as kube-apiserver's authenticators decide: an x509 client certificate
(CN the user, O its groups), a bearer token from --token-auth-file, a service account's
token (auth/serviceaccounts) or a bootstrap token Secret, else anonymous when allowed, else
401.

The TLS layer has verified the certificate against the client CA before a request is
read: here its subject is only read.
"""

from __future__ import annotations

import base64
import csv
import hmac
import re
import secrets
import string
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from fleetwarden.api.authentication import ANONYMOUS, UNAUTHENTICATED, UserInfo
from fleetwarden.api.errors import Unauthorized
from fleetwarden.api.meta import format_time, parse_time
from fleetwarden.auth.serviceaccounts import InvalidToken, ServiceAccountTokens, secret_text

# A certificate's subject as ssl.SSLSocket.getpeercert() gives it: RDNs of (name, value).
PeerCertificate = Mapping[str, Any]
# A Secret of kube-system by name, or None.
SecretLookup = Callable[[str], Mapping[str, Any] | None]
Now = Callable[[], datetime]

# Bootstrap tokens (k8s.io/cluster-bootstrap): `<id>.<secret>`, kept in kube-system.
BOOTSTRAP_TOKEN_RE = re.compile(r"^([a-z0-9]{6})\.([a-z0-9]{16})$")
BOOTSTRAP_SECRET_PREFIX = "bootstrap-token-"
BOOTSTRAP_SECRET_TYPE = "bootstrap.kubernetes.io/token"
BOOTSTRAP_USER_PREFIX = "system:bootstrap:"
BOOTSTRAPPERS_GROUP = "system:bootstrappers"
_EXTRA_GROUP_RE = re.compile(r"^system:bootstrappers:[a-z0-9:-]{0,255}[a-z0-9]$")


class TokenFileError(ValueError):
    """A --token-auth-file that cannot be read, worded as kube-apiserver words it."""


def load_token_file(path: str | Path) -> dict[str, UserInfo]:
    """tokenfile.NewCSV: `token,user,uid[,"group1,group2"]` per line; blank tokens skipped."""
    tokens: dict[str, UserInfo] = {}
    try:
        with open(path, newline="") as file:
            rows = list(csv.reader(file))  # as encoding/csv reads: leading spaces kept
    except (OSError, csv.Error) as exc:
        raise TokenFileError(f"token file {str(path)!r}: {exc}") from None
    for record in rows:
        if not record:
            continue  # a blank line
        if len(record) < 3:
            raise TokenFileError(
                f"token file '{path}' must have at least 3 columns (token, user name, user "
                f"uid), found {len(record)}"
            )
        if not record[0]:
            continue
        groups = record[3].split(",") if len(record) >= 4 else []
        tokens[record[0]] = UserInfo.of(record[1], [g for g in groups if g], record[2])
    return tokens


def new_bootstrap_token() -> str:
    """`<id>.<secret>`: 6 and 16 characters of [a-z0-9], as kubeadm generates them."""
    alphabet = string.ascii_lowercase + string.digits
    token_id = "".join(secrets.choice(alphabet) for _ in range(6))
    return f"{token_id}.{''.join(secrets.choice(alphabet) for _ in range(16))}"


def bootstrap_token_secret(
    token: str, groups: Sequence[str], expiration: datetime | None, description: str = ""
) -> dict[str, Any]:
    """The kube-system Secret that makes `token` a bootstrap token for these extra groups
    (each must be `system:bootstrappers:...`)."""
    match = BOOTSTRAP_TOKEN_RE.match(token)
    if match is None:
        raise ValueError(f"{token!r} is not a bootstrap token: <6 of [a-z0-9]>.<16 of [a-z0-9]>")
    for extra in groups:
        if not _EXTRA_GROUP_RE.match(extra):
            raise ValueError(
                f'bootstrap group "{extra}" is invalid (must match {_EXTRA_GROUP_RE.pattern})'
            )
    token_id, token_secret = match.groups()
    data = {
        "token-id": token_id,
        "token-secret": token_secret,
        "usage-bootstrap-authentication": "true",
        "usage-bootstrap-signing": "true",
        "auth-extra-groups": ",".join(groups),
    }
    if expiration is not None:
        data["expiration"] = format_time(expiration)
    if description:
        data["description"] = description
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": BOOTSTRAP_SECRET_PREFIX + token_id, "namespace": "kube-system"},
        "type": BOOTSTRAP_SECRET_TYPE,
        "data": {k: base64.b64encode(v.encode()).decode() for k, v in data.items()},
    }


class BootstrapTokens:
    """The bootstrap token authenticator: a token names its Secret; the Secret must be of
    the bootstrap type, hold the same secret, allow authentication and not have expired."""

    def __init__(self, secret: SecretLookup, now: Now) -> None:
        self._secret, self._now = secret, now

    def authenticate(self, token: str) -> UserInfo | None:
        """The token's user; None when it is no bootstrap token or not a valid one."""
        match = BOOTSTRAP_TOKEN_RE.match(token)
        if match is None:
            return None
        token_id, token_secret = match.groups()
        secret = self._secret(BOOTSTRAP_SECRET_PREFIX + token_id)
        if secret is None or secret.get("type") != BOOTSTRAP_SECRET_TYPE:
            return None
        if (secret.get("metadata") or {}).get("deletionTimestamp"):
            return None
        data = _secret_data(secret)
        if not hmac.compare_digest(data.get("token-secret", ""), token_secret):
            return None
        if data.get("token-id") != token_id:
            return None
        expiration = expiration_of(secret)
        if expiration is not None and expiration <= self._now():
            return None
        if data.get("usage-bootstrap-authentication") != "true":
            return None
        listed = data.get("auth-extra-groups")
        extra = [g.strip() for g in listed.split(",")] if listed else []
        if not all(_EXTRA_GROUP_RE.match(g) for g in extra):
            return None
        groups = sorted({BOOTSTRAPPERS_GROUP, *extra})
        return UserInfo.of(BOOTSTRAP_USER_PREFIX + token_id, groups)


def _secret_data(secret: Mapping[str, Any]) -> dict[str, str]:
    """A Secret's data decoded (values that are not base64 UTF-8 text are left out)."""
    decoded = {k: secret_text(v) for k, v in (secret.get("data") or {}).items()}
    return {k: v for k, v in decoded.items() if v is not None}


def expiration_of(secret: Mapping[str, Any]) -> datetime | None:
    """When a bootstrap token's Secret expires; None: never. One nobody can read has."""
    expiration = _secret_data(secret).get("expiration")
    if not expiration:
        return None
    try:
        return parse_time(expiration)
    except ValueError:
        return datetime.min.replace(tzinfo=UTC)  # an expiration nobody can read is no promise


@dataclass(frozen=True)
class TokenVerdict:
    """What a TokenReview answers: the token's user (None: not authenticated), the
    audiences it was taken for, and why it was not, if an authenticator said."""

    user: UserInfo | None
    audiences: tuple[str, ...] = ()
    error: str = ""


class Authenticator:
    """The union of authenticators: a client certificate, then a bearer token; without any
    credentials, anonymous (when allowed). With `default`, every request is that user,
    whatever credentials it carries: the old insecure port's rule."""

    def __init__(
        self,
        *,
        tokens: Mapping[str, UserInfo] | None = None,
        service_accounts: ServiceAccountTokens | None = None,
        bootstrap: BootstrapTokens | None = None,
        anonymous: bool = False,
        default: UserInfo | None = None,
    ) -> None:
        self.tokens = dict(tokens or {})
        self.service_accounts = service_accounts
        self.bootstrap = bootstrap
        self.anonymous = anonymous
        self.default = default

    def authenticate(
        self, certificate: PeerCertificate | None, authorization: str | None
    ) -> UserInfo:
        """The request's user, with system:authenticated; raises Unauthorized."""
        if self.default is not None:
            return self.default
        user = certificate_user(certificate) if certificate else None
        if user is None and authorization:
            user = self._token_user(authorization)
        if user is not None:
            return user.authenticated()
        if self.anonymous:
            return UserInfo(ANONYMOUS, (UNAUTHENTICATED,))
        raise Unauthorized()

    def review(self, token: str, audiences: Sequence[str] = ()) -> TokenVerdict:
        """A TokenReview: the token as a request carrying it alone would be authenticated
        (never as the insecure port's default), for these audiences (default: the API's).
        The token file's and bootstrap tokens know no audience: they are the API's."""
        api = self.service_accounts.audiences if self.service_accounts else ()
        wanted = tuple(audiences) or api
        if self.service_accounts is not None:
            try:
                taken = self.service_accounts.authenticate(token, wanted)
            except InvalidToken as refused:
                return TokenVerdict(None, error=refused.why)
            if taken is not None:
                return TokenVerdict(taken.user.authenticated(), taken.audiences)
        agreed = tuple(a for a in wanted if a in api)
        if wanted and not agreed:
            return TokenVerdict(None)
        user = self.tokens.get(token)
        if user is None and self.bootstrap is not None:
            user = self.bootstrap.authenticate(token)
        if user is None:
            return TokenVerdict(None, error="invalid bearer token")
        return TokenVerdict(user.authenticated(), agreed)

    def _token_user(self, authorization: str) -> UserInfo | None:
        """The bearer token's user; None for another scheme (no credential of ours); a
        token nobody knows is a 401."""
        scheme, _, token = authorization.strip().partition(" ")
        token = token.strip()
        if scheme.lower() != "bearer" or not token:
            return None
        user = self.tokens.get(token)
        if user is None and self.service_accounts is not None:
            taken = self.service_accounts.authenticate(token)
            user = taken.user if taken else None
        if user is None and self.bootstrap is not None:
            user = self.bootstrap.authenticate(token)
        if user is None:
            raise Unauthorized()
        return user


def certificate_user(certificate: PeerCertificate) -> UserInfo | None:
    """x509.CommonNameUserConversion: the subject's CN is the user, each O a group; None
    for a certificate without a CN (no credential)."""
    names = _subject(certificate)
    common_names = names.get("commonName", [])
    if not common_names or not common_names[0]:
        return None
    return UserInfo.of(common_names[0], names.get("organizationName", []))


def _subject(certificate: PeerCertificate) -> dict[str, list[str]]:
    names: dict[str, list[str]] = {}
    rdns: Sequence[Sequence[tuple[str, str]]] = certificate.get("subject") or ()
    for rdn in rdns:
        for name, value in rdn:
            names.setdefault(name, []).append(value)
    return names
