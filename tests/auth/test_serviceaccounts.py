"""Service account tokens: what kube-apiserver's JWT authenticator takes and refuses, on
tokens issued here and on tokens made to look like them."""

from __future__ import annotations

import base64
import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec as ec_key

from fleetwarden.api.errors import Unauthorized
from fleetwarden.auth.serviceaccounts import InvalidToken, ServiceAccountTokens, SigningKey

NOW = datetime(2026, 11, 27, 10, 0, tzinfo=UTC)
HOUR = 3600
ISSUER = "https://kubernetes.default.svc.cluster.local"


class Hub:
    """The objects tokens name, and the time, as a test sets them."""

    def __init__(self) -> None:
        self.objects: dict[tuple[str, str, str], dict[str, Any]] = {}
        self.now = NOW

    def add(self, kind: str, name: str, namespace: str = "default", **meta: Any) -> dict[str, Any]:
        obj = {"metadata": {"name": name, "namespace": namespace, "uid": f"uid-{name}", **meta}}
        self.objects[(kind, namespace, name)] = obj
        return obj

    def lookup(self, kind: str, namespace: str, name: str) -> dict[str, Any] | None:
        return self.objects.get((kind, namespace, name))


@pytest.fixture(scope="module")
def key(tmp_path_factory: pytest.TempPathFactory) -> SigningKey:
    return SigningKey.ensure(tmp_path_factory.mktemp("pki") / "sa.key")


@pytest.fixture
def hub() -> Hub:
    return Hub()


def tokens_of(key: SigningKey, hub: Hub, issuer: str = ISSUER) -> ServiceAccountTokens:
    return ServiceAccountTokens(key, hub.lookup, lambda: hub.now, issuer, (ISSUER,))


INVALIDATED = "service account token has been invalidated"


def why_refused(tokens: ServiceAccountTokens, token: str) -> str:
    with pytest.raises(InvalidToken) as refused:
        tokens.authenticate(token)
    return refused.value.why


def claims_of(token: str) -> dict[str, Any]:
    payload = token.split(".")[1]
    decoded: dict[str, Any] = json.loads(base64.urlsafe_b64decode(payload + "=" * 4))
    return decoded


def test_a_token_names_its_account_and_is_taken_as_it(key: SigningKey, hub: Hub) -> None:
    account = hub.add("ServiceAccount", "builder", "ci")
    tokens = tokens_of(key, hub)
    token, expiry = tokens.issue(account, [ISSUER], HOUR)
    assert expiry == NOW + timedelta(hours=1)
    claims = claims_of(token)
    assert claims["iss"] == ISSUER and claims["aud"] == [ISSUER]
    assert claims["sub"] == "system:serviceaccount:ci:builder"
    assert (claims["iat"], claims["exp"]) == (int(NOW.timestamp()), int(expiry.timestamp()))
    assert claims["kubernetes.io"] == {
        "namespace": "ci",
        "serviceaccount": {"name": "builder", "uid": "uid-builder"},
    }
    taken = tokens.authenticate(token)
    assert taken is not None and taken.audiences == (ISSUER,)
    user = taken.user
    assert user.name == "system:serviceaccount:ci:builder" and user.uid == "uid-builder"
    assert user.groups == ("system:serviceaccounts", "system:serviceaccounts:ci")
    assert dict(user.extra) == {
        "authentication.kubernetes.io/credential-id": (f"JTI={claims['jti']}",)
    }


def test_a_token_for_another_issuer_is_left_to_other_authenticators(
    key: SigningKey, hub: Hub
) -> None:
    account = hub.add("ServiceAccount", "builder")
    theirs = tokens_of(key, hub, issuer="https://elsewhere.example")
    token, _ = theirs.issue(account, [ISSUER], HOUR)
    assert tokens_of(key, hub).authenticate(token) is None
    assert tokens_of(key, hub).authenticate("not-a-jwt") is None
    assert tokens_of(key, hub).authenticate("a.b.c") is None
    nested = base64.urlsafe_b64encode(b"[" * 100_000).decode()
    assert tokens_of(key, hub).authenticate(f"e30.{nested}.c") is None


def test_a_token_not_signed_by_the_key_is_refused(
    key: SigningKey, hub: Hub, tmp_path: Path
) -> None:
    account = hub.add("ServiceAccount", "builder")
    other = tokens_of(SigningKey.ensure(tmp_path / "other.key"), hub)
    forged, _ = other.issue(account, [ISSUER], HOUR)
    tokens = tokens_of(key, hub)
    with pytest.raises(Unauthorized):
        tokens.authenticate(forged)
    token, _ = tokens.issue(account, [ISSUER], HOUR)
    header, payload, signature = token.split(".")
    claims = claims_of(token)
    claims["kubernetes.io"]["serviceaccount"]["name"] = "admin"
    edited = base64.urlsafe_b64encode(json.dumps(claims).encode()).rstrip(b"=").decode()
    with pytest.raises(Unauthorized):
        tokens.authenticate(f"{header}.{edited}.{signature}")
    unsigned = base64.urlsafe_b64encode(b'{"alg":"none"}').rstrip(b"=").decode()
    with pytest.raises(Unauthorized):
        tokens.authenticate(f"{unsigned}.{payload}.")


@pytest.mark.parametrize(
    ("later", "taken"),
    [
        (timedelta(hours=1, seconds=59), True),  # a minute's leeway past its expiry
        (timedelta(hours=1, seconds=61), False),
        (timedelta(seconds=-59), True),  # a clock a little behind the issuer's
        (timedelta(seconds=-61), False),
    ],
)
def test_a_token_is_taken_only_while_it_is_valid(
    key: SigningKey, hub: Hub, later: timedelta, taken: bool
) -> None:
    account = hub.add("ServiceAccount", "builder")
    tokens = tokens_of(key, hub)
    token, _ = tokens.issue(account, [ISSUER], HOUR)
    hub.now = NOW + later
    if taken:
        assert tokens.authenticate(token) is not None
    else:
        with pytest.raises(Unauthorized):
            tokens.authenticate(token)


def test_a_token_for_another_audience_is_refused(key: SigningKey, hub: Hub) -> None:
    account = hub.add("ServiceAccount", "builder")
    tokens = tokens_of(key, hub)
    token, _ = tokens.issue(account, ["vault"], HOUR)
    with pytest.raises(InvalidToken) as refused:
        tokens.authenticate(token)
    assert refused.value.why == (
        'token audiences ["vault"] is invalid for the target audiences '
        '["https://kubernetes.default.svc.cluster.local"]'
    )
    taken = tokens.authenticate(token, ["vault", "nomad"])  # as a TokenReview asks
    assert taken is not None and taken.audiences == ("vault",)
    also, _ = tokens.issue(account, ["vault", ISSUER], HOUR)
    assert tokens.authenticate(also) is not None


def test_deleting_the_account_or_making_it_again_revokes_its_tokens(
    key: SigningKey, hub: Hub
) -> None:
    account = hub.add("ServiceAccount", "builder")
    tokens = tokens_of(key, hub)
    token, _ = tokens.issue(account, [ISSUER], HOUR)
    hub.add("ServiceAccount", "builder", uid="uid-builder-2")  # deleted and made again
    with pytest.raises(Unauthorized):
        tokens.authenticate(token)
    del hub.objects[("ServiceAccount", "default", "builder")]
    with pytest.raises(InvalidToken) as refused:
        tokens.authenticate(token)
    assert refused.value.why == "service account token has been invalidated"
    # Being deleted (finalizers pending) for less than the leeway: still taken.
    hub.add("ServiceAccount", "builder", deletionTimestamp="2026-11-27T09:59:30Z")
    assert tokens.authenticate(token) is not None
    hub.add("ServiceAccount", "builder", deletionTimestamp="2026-11-27T09:58:00Z")
    with pytest.raises(Unauthorized):
        tokens.authenticate(token)


def test_a_bound_token_lives_as_long_as_its_object(key: SigningKey, hub: Hub) -> None:
    account = hub.add("ServiceAccount", "runner")
    pod = hub.add("Pod", "web-0")
    node = hub.add("Node", "n1", namespace="")
    tokens = tokens_of(key, hub)
    token, _ = tokens.issue(account, [ISSUER], HOUR, ("Pod", pod))
    node_token, _ = tokens.issue(account, [ISSUER], HOUR, ("Node", node))
    taken = tokens.authenticate(token)
    assert taken is not None
    assert dict(taken.user.extra)["authentication.kubernetes.io/pod-name"] == ("web-0",)
    assert dict(taken.user.extra)["authentication.kubernetes.io/pod-uid"] == ("uid-web-0",)
    node_taken = tokens.authenticate(node_token)
    assert node_taken is not None
    assert dict(node_taken.user.extra)["authentication.kubernetes.io/node-name"] == ("n1",)
    del hub.objects[("Pod", "default", "web-0")]
    with pytest.raises(Unauthorized):
        tokens.authenticate(token)


def test_the_key_is_made_once_for_its_owner_alone(tmp_path: Path) -> None:
    path = tmp_path / "pki" / "sa.key"
    first = SigningKey.ensure(path)
    assert path.stat().st_mode & 0o777 == 0o600
    assert SigningKey.ensure(path).kid == first.kid
    ec = ec_key.generate_private_key(ec_key.SECP256R1()).private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.TraditionalOpenSSL,
        serialization.NoEncryption(),
    )
    (tmp_path / "ec.key").write_bytes(ec)
    with pytest.raises(ValueError, match="must be an RSA key"):
        SigningKey.read(tmp_path / "ec.key")


def test_a_legacy_token_holds_while_its_secret_holds_it(key: SigningKey, hub: Hub) -> None:
    account = hub.add("ServiceAccount", "deployer")
    tokens = tokens_of(key, hub)
    token = tokens.legacy_token(account, "deployer-token")
    assert why_refused(tokens, token) == INVALIDATED  # no Secret holds it
    secret = hub.add("Secret", "deployer-token")
    secret["data"] = {"token": base64.b64encode(token.encode()).decode()}
    taken = tokens.authenticate(token)
    assert taken is not None and taken.user.name == "system:serviceaccount:default:deployer"
    assert taken.audiences == (ISSUER,)  # no audience of its own: the API's
    hub.now = NOW + timedelta(days=3650)  # no expiry
    assert tokens.authenticate(token) is not None
    with pytest.raises(InvalidToken):
        tokens.authenticate(token, ["vault"])
    secret["metadata"]["labels"] = {"kubernetes.io/legacy-token-invalid-since": "2026-11-27"}
    assert why_refused(tokens, token) == INVALIDATED
    del secret["metadata"]["labels"]
    secret["data"]["token"] = base64.b64encode(b"another").decode()
    assert why_refused(tokens, token) == INVALIDATED
    del hub.objects[("Secret", "default", "deployer-token")]
    assert why_refused(tokens, token) == INVALIDATED


def test_only_an_https_issuer_is_discoverable(key: SigningKey, hub: Hub) -> None:
    jwks = "https://hub.example/openid/v1/jwks"
    assert tokens_of(key, hub).openid_configuration(jwks) is not None
    for issuer in ("kubernetes/serviceaccount", "http://hub.example", "https://hub.example?a=b"):
        assert tokens_of(key, hub, issuer).openid_configuration(jwks) is None
