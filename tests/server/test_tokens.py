"""The TokenRequest API and ServiceAccount tokens over HTTPS with RBAC: a token asked for
(with the official Python client, and with kubectl), then used as the account (RBAC
bindings to ServiceAccounts apply), refused once the account is gone; requests the API
server refuses, in its words."""

from __future__ import annotations

import base64
import json
import ssl
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import padding, rsa
from kubernetes import client, config

from fleetwarden.client.kubeconfig import load_kubeconfig
from fleetwarden.controllers.serviceaccounts.tokens import NAME as ANNOTATION
from fleetwarden.controllers.serviceaccounts.tokens import tokens_controller
from fleetwarden.runtime.clock import RealClock
from fleetwarden.runtime.manager import ControllerManager, RealDriver

from .conftest import Kubectl, SecureApi, kubectl_binaries
from .test_crd import eventually
from .test_security import as_user

TOKEN = "/api/v1/namespaces/default/serviceaccounts/builder/token"


def https(api: SecureApi, token: str | None = None) -> httpx.Client:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    verify = ssl.create_default_context(cadata=api.ca.certificate_pem().decode())
    return httpx.Client(base_url=api.url, verify=verify, headers=headers)


def http_as(api: SecureApi, user: str, *groups: str) -> httpx.Client:
    """An HTTPS client with the user's client certificate."""
    kubeconfig = load_kubeconfig(str(api.kubeconfig(user, *groups)))
    return httpx.Client(base_url=kubeconfig.server, verify=kubeconfig.ssl_context())


def admin_client(api: SecureApi) -> Any:
    return config.new_client_from_config(str(api.kubeconfig("admin", "system:masters")))


def builder_reads_configmaps() -> list[dict[str, Any]]:
    """The account, and a Role reading ConfigMaps bound to it."""
    return [
        {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "builder"}},
        {
            "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
            "metadata": {"name": "cm-reader"},
            "rules": [{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["list"]}],
        },
        {
            "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
            "metadata": {"name": "builder-reads"},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "cm-reader"},
            "subjects": [{"kind": "ServiceAccount", "name": "builder", "namespace": "default"}],
        },
    ]  # fmt: skip


@pytest.fixture
def builder(secure_api: SecureApi) -> SecureApi:
    with https(secure_api) as http, secure_api.client("admin", "system:masters") as admin:
        assert http.get("/api").status_code == 401  # no credentials
        for obj in builder_reads_configmaps():
            admin.create({**obj, "metadata": {**obj["metadata"], "namespace": "default"}})
    return secure_api


def test_a_token_asked_for_is_taken_as_its_account(builder: SecureApi) -> None:
    with admin_client(builder) as api_client:
        spec = client.V1TokenRequestSpec(audiences=[], expiration_seconds=1200)
        answer = client.CoreV1Api(api_client).create_namespaced_service_account_token(
            "builder", "default", client.AuthenticationV1TokenRequest(spec=spec)
        )
    assert answer.spec.audiences == ["https://kubernetes.default.svc.cluster.local"]
    assert answer.metadata.name == "builder" and answer.status.token
    assert (answer.status.expiration_timestamp - answer.metadata.creation_timestamp).seconds == 1200
    with https(builder, answer.status.token) as http:
        assert http.get("/api/v1/namespaces/default/configmaps").status_code == 200
        refused = http.get("/api/v1/namespaces/default/secrets")
        assert refused.status_code == 403
        assert refused.json()["message"] == (
            'secrets is forbidden: User "system:serviceaccount:default:builder" cannot list '
            'resource "secrets" in API group "" in the namespace "default"'
        )
        review = {"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"}
        who = http.post("/apis/authentication.k8s.io/v1/selfsubjectreviews", json=review)
        user = who.json()["status"]["userInfo"]
        assert user["username"] == "system:serviceaccount:default:builder"
        assert user["groups"] == [
            "system:serviceaccounts",
            "system:serviceaccounts:default",
            "system:authenticated",
        ]
        with http_as(builder, "admin", "system:masters") as admin:
            account = admin.get("/api/v1/namespaces/default/serviceaccounts/builder").json()
            assert user["uid"] == account["metadata"]["uid"]
            admin.delete("/api/v1/namespaces/default/serviceaccounts/builder")
        assert http.get("/api/v1/namespaces/default/configmaps").status_code == 401


@pytest.mark.parametrize("binary", kubectl_binaries())
def test_kubectl_asks_for_a_token_and_uses_it(builder: SecureApi, binary: str) -> None:
    admin = as_user(builder, binary, "admin", "system:masters")
    body = json.dumps({"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest"})
    created = admin("create", "--raw", TOKEN, "-f", "-", stdin=body)
    assert created.returncode == 0, created.stderr
    token = json.loads(created.stdout)["status"]["token"]
    kubeconfig = builder.kubeconfig("builder", token=token)
    env = {"KUBECONFIG": str(kubeconfig), "HOME": str(builder.directory)}
    account = Kubectl(binary, env)
    listed = account("get", "configmaps")
    assert listed.returncode == 0, listed.stderr
    refused = account("get", "secrets")
    assert 'User "system:serviceaccount:default:builder" cannot list' in refused.stderr


@pytest.mark.parametrize(
    ("path", "body", "status", "message"),
    [
        (
            TOKEN,
            {"spec": {"expirationSeconds": 60}},
            422,
            'TokenRequest.authentication.k8s.io "" is invalid: spec.expirationSeconds: Invalid '
            "value: 60: may not specify a duration less than 10 minutes",
        ),
        (
            TOKEN,
            {"metadata": {"name": "other"}},
            422,
            'TokenRequest.authentication.k8s.io "builder" is invalid: metadata.name: Invalid '
            'value: "other": must match the service account name if specified',
        ),
        (
            "/api/v1/namespaces/default/serviceaccounts/nobody/token",
            {},
            404,
            'serviceaccounts "nobody" not found',
        ),
        (
            TOKEN,
            {
                "spec": {
                    "boundObjectRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "x"}
                }
            },
            400,
            "cannot bind token to object of type apps/v1, Kind=Deployment",
        ),
        (
            TOKEN,
            {"spec": {"boundObjectRef": {"apiVersion": "v1", "kind": "Secret", "name": "gone"}}},
            404,
            'secrets "gone" not found',
        ),
        (
            TOKEN,
            {"spec": {"expirationSeconds": "soon"}},
            400,
            'TokenRequest in version "v1" cannot be handled as a TokenRequest: json: cannot '
            "unmarshal string into Go struct field TokenRequestSpec.spec.expirationSeconds of "
            "type int64",
        ),
    ],
    ids=["too-short", "another-name", "no-account", "unbindable", "bound-missing", "not-a-number"],
)
def test_a_token_request_refused_in_upstreams_words(
    builder: SecureApi, path: str, body: dict[str, Any], status: int, message: str
) -> None:
    with http_as(builder, "admin", "system:masters") as admin:
        reply = admin.post(path, json={"apiVersion": "authentication.k8s.io/v1", **body})
    assert (reply.status_code, reply.json()["message"]) == (status, message)


def test_a_token_bound_to_a_secret_is_refused_once_the_secret_goes(builder: SecureApi) -> None:
    with http_as(builder, "admin", "system:masters") as admin:
        body = {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"}}
        secret = admin.post("/api/v1/namespaces/default/secrets", json=body).json()
        ref = {"apiVersion": "v1", "kind": "Secret", "name": "s", "uid": "not-its-uid"}
        stale = admin.post(TOKEN, json={"spec": {"boundObjectRef": ref}})
        assert stale.status_code == 409
        assert "the UID in the bound object reference (not-its-uid)" in stale.json()["message"]
        ref["uid"] = secret["metadata"]["uid"]
        token = admin.post(TOKEN, json={"spec": {"boundObjectRef": ref}}).json()
        with https(builder, token["status"]["token"]) as http:
            assert http.get("/api/v1/namespaces/default/configmaps").status_code == 200
            admin.delete("/api/v1/namespaces/default/secrets/s")
            assert http.get("/api/v1/namespaces/default/configmaps").status_code == 401


def test_asking_for_a_token_is_authorized_as_serviceaccounts_token(builder: SecureApi) -> None:
    with http_as(builder, "bob") as bob:
        refused = bob.post(TOKEN, json={})
    assert refused.status_code == 403
    assert refused.json()["message"] == (
        'serviceaccounts "builder" is forbidden: User "bob" cannot create resource '
        '"serviceaccounts/token" in API group "" in the namespace "default"'
    )
    with http_as(builder, "admin", "system:masters") as admin:
        assert admin.get(TOKEN).status_code == 405
        resources = admin.get("/api/v1").json()["resources"]
    assert next(r for r in resources if r["name"] == "serviceaccounts/token") == {
        "name": "serviceaccounts/token",
        "singularName": "",
        "namespaced": True,
        "group": "authentication.k8s.io",
        "version": "v1",
        "kind": "TokenRequest",
        "verbs": ["create"],
    }


def review(http: httpx.Client, token: str | None, *audiences: str) -> httpx.Response:
    spec: dict[str, Any] = {"token": token} if token is not None else {}
    if audiences:
        spec["audiences"] = list(audiences)
    body = {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenReview", "spec": spec}
    return http.post("/apis/authentication.k8s.io/v1/tokenreviews", json=body)


def test_a_token_review_says_who_a_token_is(builder: SecureApi) -> None:
    with http_as(builder, "admin", "system:masters") as admin:
        token = admin.post(TOKEN, json={"spec": {"audiences": ["vault"]}}).json()
        token = token["status"]["token"]
        reviewed = review(admin, token, "vault", "nomad")
        assert reviewed.status_code == 201
        status = reviewed.json()["status"]
        assert status["authenticated"] is True and status["audiences"] == ["vault"]
        assert status["user"]["username"] == "system:serviceaccount:default:builder"
        assert "system:authenticated" in status["user"]["groups"]
        # The API's own audience is not the token's: not authenticated, and why.
        assert review(admin, token).json()["status"] == {
            "user": {},
            "error": 'token audiences ["vault"] is invalid for the target audiences '
            '["https://kubernetes.default.svc.cluster.local"]',
        }
        assert review(admin, "tok-carol").json()["status"]["user"]["username"] == "carol"
        assert review(admin, "nonsense").json()["status"] == {
            "user": {},
            "error": "invalid bearer token",
        }
        missing = review(admin, None)
        assert (missing.status_code, missing.json()["message"]) == (
            400,
            "token is required for TokenReview in authentication",
        )
    with http_as(builder, "bob") as bob:
        assert review(bob, token).status_code == 403  # system:auth-delegator's right


@pytest.fixture
def token_controller(builder: SecureApi) -> Iterator[SecureApi]:
    """kube-controller-manager's token controller over the hub's store, in real time."""
    manager = ControllerManager(builder.store, RealClock())
    app = builder.server.app
    assert app.service_accounts is not None
    manager.add(tokens_controller(app.service_accounts, builder.ca.certificate_pem()))
    driver = RealDriver(manager)
    driver.start()
    try:
        yield builder
    finally:
        driver.stop()


def test_a_token_secret_is_filled_in_and_goes_with_its_account(token_controller: SecureApi) -> None:
    secrets = "/api/v1/namespaces/default/secrets"
    body = {
        "apiVersion": "v1", "kind": "Secret", "type": "kubernetes.io/service-account-token",
        "metadata": {"name": "builder-token", "annotations": {ANNOTATION: "builder"}},
    }  # fmt: skip
    with http_as(token_controller, "admin", "system:masters") as admin:
        assert admin.post(secrets, json=body).status_code == 201
        filled = eventually(
            lambda: (
                (got := admin.get(f"{secrets}/builder-token").json()).get("data", {}).get("token")
                and got
            ),
            "the token written into the Secret",
            timeout=30,
        )
        account = admin.get("/api/v1/namespaces/default/serviceaccounts/builder").json()
        meta, data = filled["metadata"], filled["data"]
        assert (
            meta["annotations"]["kubernetes.io/service-account.uid"] == account["metadata"]["uid"]
        )
        assert base64.b64decode(data["namespace"]) == b"default"
        assert base64.b64decode(data["ca.crt"]) == token_controller.ca.certificate_pem()
        token = base64.b64decode(data["token"]).decode()
        with https(token_controller, token) as http:
            assert http.get("/api/v1/namespaces/default/configmaps").status_code == 200
            assert review(admin, token).json()["status"]["user"]["username"] == (
                "system:serviceaccount:default:builder"
            )
            admin.delete("/api/v1/namespaces/default/serviceaccounts/builder")
            eventually(
                lambda: admin.get(f"{secrets}/builder-token").status_code == 404,
                "the Secret deleted with its account",
                timeout=30,
            )
            assert http.get("/api/v1/namespaces/default/configmaps").status_code == 401


def test_the_issuer_is_discoverable_and_its_keys_check_its_tokens(builder: SecureApi) -> None:
    builder.server.app.jwks_uri = "https://hub.example:6443/openid/v1/jwks"
    with http_as(builder, "admin", "system:masters") as admin:
        token = admin.post(TOKEN, json={}).json()["status"]["token"]
    with https(builder, token) as account:  # system:serviceaccounts may read them
        discovered = account.get("/.well-known/openid-configuration")
        keys = account.get("/openid/v1/jwks")
    assert discovered.json() == {
        "issuer": "https://kubernetes.default.svc.cluster.local",
        "jwks_uri": "https://hub.example:6443/openid/v1/jwks",
        "response_types_supported": ["id_token"],
        "subject_types_supported": ["public"],
        "id_token_signing_alg_values_supported": ["RS256"],
    }
    assert keys.headers["content-type"] == "application/jwk-set+json"
    assert keys.headers["cache-control"] == "public, max-age=3600"
    # A relying party checks a token with the published key alone.
    (jwk,) = keys.json()["keys"]
    header, payload, signature = token.split(".")
    assert json.loads(unpadded(header))["kid"] == jwk["kid"]
    numbers = rsa.RSAPublicNumbers(
        int.from_bytes(unpadded(jwk["e"]), "big"), int.from_bytes(unpadded(jwk["n"]), "big")
    )
    numbers.public_key().verify(
        unpadded(signature), f"{header}.{payload}".encode(), padding.PKCS1v15(), hashes.SHA256()
    )
    with http_as(builder, "bob") as bob:
        assert bob.get("/openid/v1/jwks").status_code == 403


def unpadded(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


# What kubectl 1.32 sends for `kubectl create token builder --duration=15m --audience=a1
# --audience=a2 --bound-object-kind=Secret --bound-object-name=s1`: a protobuf TokenRequest.
KUBECTL_CREATE_TOKEN = (
    b"k8s\x00\n(\n\x18authentication.k8s.io/v1\x12\x0cTokenRequest\x129\n\x10\n\x00\x12\x00"
    b'\x1a\x00"\x00*\x002\x008\x00B\x00\x12\x1f\n\x02a1\n\x02a2\x1a\x12\n\x06Secret\x12\x02v1'
    b'\x1a\x02s1"\x00 \x84\x07\x1a\x04\n\x00\x12\x00\x1a\x00"\x00'
)


def test_kubectl_create_token_sends_protobuf_which_the_hub_reads(builder: SecureApi) -> None:
    with http_as(builder, "admin", "system:masters") as admin:
        body = {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s1"}}
        assert admin.post("/api/v1/namespaces/default/secrets", json=body).status_code == 201
        headers = {"Content-Type": "application/vnd.kubernetes.protobuf"}
        created = admin.post(TOKEN, content=KUBECTL_CREATE_TOKEN, headers=headers)
    assert created.status_code == 201, created.text
    assert created.json()["spec"] == {
        "audiences": ["a1", "a2"],
        "expirationSeconds": 900,
        "boundObjectRef": {"kind": "Secret", "apiVersion": "v1", "name": "s1"},
    }
