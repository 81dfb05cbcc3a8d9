"""ServiceAccount tokens, as kube-apiserver issues and checks them: JWTs signed with the
hub's service account key (RS256, kubeadm's sa.key), issued by the TokenRequest API
(`kubectl create token`), and taken as bearer tokens from then on.

A token names its issuer, its audiences, when it expires, and the account (namespace, name
and uid) and the object it may be bound to (a Secret, a Pod or a Node, by name and uid). It is
taken only while all of that still holds: signed by the key, issued by this hub, for one of
its audiences, not expired (a minute's leeway, as go-jose's), and the account and bound
object still those it was issued for, so deleting either revokes it.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import padding, rsa

from fleetwarden.api.authentication import (
    SERVICE_ACCOUNTS_GROUP,
    UserInfo,
    service_account_user,
)
from fleetwarden.api.errors import Unauthorized
from fleetwarden.api.meta import parse_time

DEFAULT_ISSUER = "https://kubernetes.default.svc.cluster.local"
# The legacy tokens kube-controller-manager writes into token Secrets: no expiry, no
# audience, valid while their Secret holds them.
LEGACY_ISSUER = "kubernetes/serviceaccount"
TOKEN_SECRET_TYPE = "kubernetes.io/service-account-token"
_LEGACY = "kubernetes.io/serviceaccount/"
# A legacy token Secret marked so by the cleaner upstream: its token is no longer taken.
INVALID_SINCE = "kubernetes.io/legacy-token-invalid-since"
LEEWAY = timedelta(minutes=1)  # jwt.DefaultLeeway
# The objects a token may be bound to, and the claim naming them.
BOUND_KINDS = {"Secret": "secret", "Pod": "pod", "Node": "node"}
# The bound objects a user's extra names (authentication.kubernetes.io/pod-name...).
_EXTRA_OF = ("pod", "node")
CREDENTIAL_ID = "authentication.kubernetes.io/credential-id"


class InvalidToken(Unauthorized):
    """A token of this issuer that does not hold: a 401 saying no more (as kube-apiserver's),
    and why, for a TokenReview's status.error."""

    def __init__(self, why: str) -> None:
        super().__init__()
        self.why = why


@dataclass(frozen=True)
class Taken:
    """A token taken: its user, and the audiences it was taken for."""

    user: UserInfo
    audiences: tuple[str, ...]


# An object of the hub by kind, namespace and name; None when there is none.
Lookup = Callable[[str, str, str], Mapping[str, Any] | None]


class SigningKey:
    """The RSA key service account tokens are signed with, and its key id (the base64url
    SHA-256 of its public key's DER, as kube-apiserver's keyIDFromPublicKey)."""

    def __init__(self, key: rsa.RSAPrivateKey) -> None:
        self._key = key
        der = key.public_key().public_bytes(
            serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
        )
        self.kid = _b64(hashlib.sha256(der).digest())

    @classmethod
    def ensure(cls, path: Path) -> SigningKey:
        """The key in the PEM file, made there first if missing (kubeadm's sa.key: 2048-bit
        RSA, readable by the owner alone)."""
        if not path.exists():
            key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
            pem = key.private_bytes(
                serialization.Encoding.PEM,
                serialization.PrivateFormat.TraditionalOpenSSL,
                serialization.NoEncryption(),
            )
            path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            path.touch(mode=0o600)
            path.write_bytes(pem)
        return cls.read(path)

    @classmethod
    def read(cls, path: Path) -> SigningKey:
        key = serialization.load_pem_private_key(path.read_bytes(), password=None)
        if not isinstance(key, rsa.RSAPrivateKey):
            raise ValueError(f"{path}: a service account signing key must be an RSA key")
        return cls(key)

    def jwk(self) -> dict[str, str]:
        """The public key as a JSON Web Key, as go-jose writes it."""
        numbers = self._key.public_key().public_numbers()
        return {
            "use": "sig",
            "kty": "RSA",
            "kid": self.kid,
            "alg": "RS256",
            "n": _b64(_unsigned(numbers.n)),
            "e": _b64(_unsigned(numbers.e)),
        }

    def sign(self, claims: Mapping[str, Any]) -> str:
        header = _b64(_json({"alg": "RS256", "kid": self.kid}))
        signed = f"{header}.{_b64(_json(claims))}"
        signature = self._key.sign(signed.encode(), padding.PKCS1v15(), hashes.SHA256())
        return f"{signed}.{_b64(signature)}"

    def verify(self, header: str, payload: str, signature: bytes) -> bool:
        try:
            self._key.public_key().verify(
                signature, f"{header}.{payload}".encode(), padding.PKCS1v15(), hashes.SHA256()
            )
        except InvalidSignature:
            return False
        return True


@dataclass(frozen=True)
class ServiceAccountTokens:
    """Issues tokens for `issuer` (--service-account-issuer) and takes those it issued for
    one of `audiences` (--api-audiences, by default the issuer)."""

    key: SigningKey
    lookup: Lookup
    now: Callable[[], datetime]
    issuer: str = DEFAULT_ISSUER
    audiences: tuple[str, ...] = (DEFAULT_ISSUER,)

    def issue(
        self,
        account: Mapping[str, Any],
        audiences: Sequence[str],
        seconds: int,
        bound: tuple[str, Mapping[str, Any]] | None = None,
    ) -> tuple[str, datetime]:
        """A token for the account, with its expiry: serviceaccount.Claims, signed."""
        meta = account["metadata"]
        now = self.now()
        expiry = now + timedelta(seconds=seconds)
        private: dict[str, Any] = {
            "namespace": meta["namespace"],
            "serviceaccount": {"name": meta["name"], "uid": meta.get("uid", "")},
        }
        if bound is not None:
            kind, obj = bound
            private[BOUND_KINDS[kind]] = {
                "name": obj["metadata"]["name"],
                "uid": obj["metadata"].get("uid", ""),
            }
        claims = {
            "iss": self.issuer,
            "sub": service_account_user(meta["namespace"], meta["name"]),
            "aud": list(audiences),
            "exp": int(expiry.timestamp()),
            "nbf": int(now.timestamp()),
            "iat": int(now.timestamp()),
            "jti": str(uuid.uuid4()),
            "kubernetes.io": private,
        }
        return self.key.sign(claims), expiry

    def openid_configuration(self, jwks_uri: str) -> dict[str, Any] | None:
        """The OIDC discovery document of the issuer (ServiceAccountIssuerDiscovery), for
        relying parties that check the hub's tokens themselves; None when the issuer is no
        https URL without query or fragment, as OIDC requires (nothing is served then)."""
        parts = urlsplit(self.issuer)
        if parts.scheme != "https" or parts.query or parts.fragment:
            return None
        return {
            "issuer": self.issuer,
            "jwks_uri": jwks_uri,
            "response_types_supported": ["id_token"],
            "subject_types_supported": ["public"],
            "id_token_signing_alg_values_supported": ["RS256"],
        }

    def legacy_token(self, account: Mapping[str, Any], secret: str) -> str:
        """The token of a token Secret (serviceaccount.LegacyClaims, signed)."""
        meta = account["metadata"]
        namespace, name = meta["namespace"], meta["name"]
        return self.key.sign(
            {
                "iss": LEGACY_ISSUER,
                f"{_LEGACY}namespace": namespace,
                f"{_LEGACY}secret.name": secret,
                f"{_LEGACY}service-account.name": name,
                f"{_LEGACY}service-account.uid": meta.get("uid", ""),
                "sub": service_account_user(namespace, name),
            }
        )

    def authenticate(self, token: str, audiences: Sequence[str] = ()) -> Taken | None:
        """The token's account as a user, for the audiences it shares with those asked for
        (default: the API's); None when it is no token of this issuer (another
        authenticator's); InvalidToken when it is one that does not hold."""
        parts = token.split(".")
        if len(parts) != 3:
            return None
        header, payload, signature = (_unb64(part) for part in parts)
        claims = _object(payload)
        if claims is None or claims.get("iss") not in (self.issuer, LEGACY_ISSUER):
            return None
        # The key's algorithm only: never "none", nor HS256 keyed with the public key.
        if (_object(header) or {}).get("alg") != "RS256":
            raise InvalidToken("invalid signature")
        if signature is None or not self.key.verify(parts[0], parts[1], signature):
            raise InvalidToken("invalid signature")
        wanted = tuple(audiences) or self.audiences
        if claims["iss"] == LEGACY_ISSUER:  # no audience of its own: the API's
            return Taken(self._legacy_user(claims, token), _agreed(wanted, self.audiences))
        self._check_times(claims)
        return Taken(self._account_user(claims), _agreed(wanted, _audiences(claims.get("aud"))))

    def _legacy_user(self, claims: Mapping[str, Any], token: str) -> UserInfo:
        """A legacy token's account, while its Secret still holds it, not marked invalid,
        and the account is the one it was written for."""
        fields = ("namespace", "secret.name", "service-account.name", "service-account.uid")
        values = [claims.get(_LEGACY + f) for f in fields]
        if not all(isinstance(v, str) and v for v in values):
            raise InvalidToken("service account token claims are missing")
        namespace, secret_name, name, uid = (str(v) for v in values)
        secret = self.lookup("Secret", namespace, secret_name) or {}
        meta = secret.get("metadata") or {}
        held = secret_text((secret.get("data") or {}).get("token")) or ""
        if (
            not hmac.compare_digest(held.encode(), token.encode())
            or meta.get("deletionTimestamp")
            or INVALID_SINCE in (meta.get("labels") or {})
        ):
            raise InvalidToken("service account token has been invalidated")
        account_uid = self._current_uid("ServiceAccount", namespace, {"name": name, "uid": uid})
        groups = [SERVICE_ACCOUNTS_GROUP, f"{SERVICE_ACCOUNTS_GROUP}:{namespace}"]
        return UserInfo.of(service_account_user(namespace, name), groups, account_uid)

    def _check_times(self, claims: Mapping[str, Any]) -> None:
        now, leeway = self.now().timestamp(), LEEWAY.total_seconds()
        expiry, not_before, issued = (_number(claims.get(n)) for n in ("exp", "nbf", "iat"))
        if now > expiry + leeway:
            raise InvalidToken("service account token has expired")
        if now < not_before - leeway:
            raise InvalidToken("service account token is not valid yet")
        if issued > now + leeway:
            raise InvalidToken("service account token is issued in the future")

    def _account_user(self, claims: Mapping[str, Any]) -> UserInfo:
        """The account the claims name, if it is still the one they were issued for, and
        still bound to the object they name."""
        private = claims.get("kubernetes.io")
        if not isinstance(private, dict):
            raise InvalidToken("service account token claims are missing")
        namespace = private.get("namespace")
        account = private.get("serviceaccount")
        if not isinstance(namespace, str) or not isinstance(account, dict):
            raise InvalidToken("service account token claims are missing")
        uid = self._current_uid("ServiceAccount", namespace, account)
        extra = {}
        for kind, claim in BOUND_KINDS.items():
            if claim not in private:
                continue
            ref = private[claim]
            self._current_uid(kind, "" if kind == "Node" else namespace, ref)
            if claim in _EXTRA_OF:
                extra[f"authentication.kubernetes.io/{claim}-name"] = [ref["name"]]
                extra[f"authentication.kubernetes.io/{claim}-uid"] = [ref["uid"]]
        if isinstance(claims.get("jti"), str):
            extra[CREDENTIAL_ID] = [f"JTI={claims['jti']}"]
        groups = [SERVICE_ACCOUNTS_GROUP, f"{SERVICE_ACCOUNTS_GROUP}:{namespace}"]
        return UserInfo.of(service_account_user(namespace, account["name"]), groups, uid, extra)

    def _current_uid(self, kind: str, namespace: str, ref: Any) -> str:
        """The uid of the object a claim names, when it is still there, as it was."""
        if not isinstance(ref, dict) or not isinstance(ref.get("name"), str):
            raise InvalidToken("service account token claims are missing")
        obj = self.lookup(kind, namespace, ref["name"])
        # Gone, or deleted and made again (not the one it was issued for), or deleted.
        meta = obj["metadata"] if obj is not None else {}
        deleted = meta.get("deletionTimestamp")
        if (
            obj is None
            or meta.get("uid") != ref.get("uid")
            or (deleted and parse_time(deleted) < self.now() - LEEWAY)
        ):
            raise InvalidToken("service account token has been invalidated")
        return str(meta.get("uid", ""))


def _number(value: Any) -> float:
    """A NumericDate claim; a token without one, or with another type, is refused."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise InvalidToken("service account token claims are missing")
    return float(value)


def _agreed(wanted: Sequence[str], granted: Sequence[str]) -> tuple[str, ...]:
    """The audiences asked for that the token is for; InvalidToken when there are none."""
    agreed = tuple(a for a in wanted if a in granted)
    if not agreed:
        raise InvalidToken(
            f"token audiences {_go_list(granted)} is invalid for the target audiences "
            f"{_go_list(wanted)}"
        )
    return agreed


def secret_text(value: Any) -> str | None:
    """A Secret's data value as text; None when it is not base64 of UTF-8."""
    if not isinstance(value, str):
        return None
    try:
        return base64.b64decode(value, validate=True).decode()
    except (binascii.Error, UnicodeDecodeError, ValueError):
        return None


def _go_list(values: Sequence[str]) -> str:
    """%q of a []string: ["a" "b"]."""
    return "[" + " ".join(json.dumps(v) for v in values) + "]"


def _audiences(aud: Any) -> list[str]:
    """`aud`: one audience or several (go-jose writes one as a string)."""
    if isinstance(aud, str):
        return [aud]
    if isinstance(aud, list):
        return [a for a in aud if isinstance(a, str)]
    return []


def _object(data: bytes | None) -> dict[str, Any] | None:
    """A JWT part's JSON object; None for anything else, however a stranger wrote it (a
    token nested a thousand deep included)."""
    if data is None:
        return None
    try:
        value = json.loads(data)
    except (ValueError, RecursionError):
        return None
    return value if isinstance(value, dict) else None


def _json(value: Mapping[str, Any]) -> bytes:
    return json.dumps(value, separators=(",", ":")).encode()


def _unsigned(number: int) -> bytes:
    """A JWK's big-endian unsigned integer, without leading zeros."""
    return number.to_bytes((number.bit_length() + 7) // 8, "big")


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _unb64(text: str) -> bytes | None:
    try:
        return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    except (binascii.Error, ValueError):
        return None
