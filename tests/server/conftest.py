"""A running API server on 127.0.0.1 (uvicorn in a thread) over a fresh MemoryStore, and a
small HTTP client for it (the standard library's, so the tests need no client package)."""

from __future__ import annotations

import http.client
import json
import os
import shutil
import socket
import subprocess
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
import yaml

from fleetwarden.admission import default_chain
from fleetwarden.runtime.clock import RealClock
from fleetwarden.server import Server, create_app
from fleetwarden.store import CoreStore, MemoryStore


@dataclass
class Reply:
    status: int
    headers: http.client.HTTPMessage
    body: bytes

    @property
    def json(self) -> Any:
        return json.loads(self.body)

    @property
    def content_type(self) -> str:
        return self.headers.get("content-type", "")


@dataclass
class Api:
    """Requests to the server under test; a body given as a dict is sent as JSON."""

    url: str
    store: CoreStore
    server: Server
    default_headers: dict[str, str] = field(default_factory=dict)

    def connection(self, timeout: float = 10) -> http.client.HTTPConnection:
        parts = urlsplit(self.url)
        conn = http.client.HTTPConnection(parts.hostname or "", parts.port, timeout=timeout)
        conn.connect()
        # As Go's clients do: without it each request with a body waits for a delayed ACK.
        conn.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        return conn

    def request(
        self,
        method: str,
        path: str,
        body: Any = None,
        headers: dict[str, str] | None = None,
        content_type: str = "application/json",
    ) -> Reply:
        data = body if isinstance(body, bytes | None) else json.dumps(body).encode()
        sent = {**self.default_headers, **(headers or {})}
        if data is not None:
            sent.setdefault("Content-Type", content_type)
        conn = self.connection()
        try:
            conn.request(method, path, body=data, headers=sent)
            response = conn.getresponse()
            return Reply(response.status, response.headers, response.read())
        finally:
            conn.close()

    def get(self, path: str, **kw: Any) -> Reply:
        return self.request("GET", path, **kw)

    def post(self, path: str, body: Any, **kw: Any) -> Reply:
        return self.request("POST", path, body, **kw)

    def put(self, path: str, body: Any, **kw: Any) -> Reply:
        return self.request("PUT", path, body, **kw)

    def patch(self, path: str, body: Any, content_type: str, **kw: Any) -> Reply:
        return self.request("PATCH", path, body, content_type=content_type, **kw)

    def delete(self, path: str, body: Any = None, **kw: Any) -> Reply:
        return self.request("DELETE", path, body, **kw)


MakeApi = Callable[..., Api]


@pytest.fixture
def make_api() -> Iterator[MakeApi]:
    """Starts a server over a new store; every one is stopped at the end of the test."""
    servers: list[Server] = []

    def make(store: CoreStore | None = None, **options: Any) -> Api:
        store = store or MemoryStore()
        server = Server(create_app(store, default_chain(), RealClock(), **options))
        server.start()
        servers.append(server)
        return Api(server.url, store, server)

    yield make
    for server in servers:
        server.stop()


@pytest.fixture
def api(make_api: MakeApi) -> Api:
    return make_api()


def cluster(name: str = "member1", **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "cluster.karmada.io/v1alpha1",
        "kind": "Cluster",
        "metadata": {"name": name},
        "spec": {"syncMode": "Push", **spec},
    }


def deployment(name: str = "web", namespace: str = "default", **labels: str) -> dict[str, Any]:
    labels = labels or {"app": name}
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "namespace": namespace, "labels": labels},
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": labels},
            "template": {
                "metadata": {"labels": labels},
                "spec": {"containers": [{"name": "app", "image": "nginx"}]},
            },
        },
    }


CLUSTERS = "/apis/cluster.karmada.io/v1alpha1/clusters"
DEPLOYMENTS = "/apis/apps/v1/namespaces/default/deployments"


# --- the real kubectl -------------------------------------------------------------------

DEBIAN_KUBECTL = Path(__file__).parents[2] / ".ci" / "kubectl" / "usr" / "bin" / "kubectl"


def kubectl_binaries() -> list[Any]:
    """Each distinct kubectl (by what `kubectl version --client` says), as a parameter
    named by its version (kubectl-1.20)."""
    found: dict[str, Any] = {}
    for path in (str(DEBIAN_KUBECTL), shutil.which("kubectl")):
        if path is None or not os.access(path, os.X_OK):
            continue
        version = subprocess.run(
            [path, "version", "--client", "-o", "json"], capture_output=True, text=True, timeout=30
        )
        info = json.loads(version.stdout)["clientVersion"]
        name = f"kubectl-{info['major']}.{info['minor'].rstrip('+')}"
        found.setdefault(version.stdout, pytest.param(path, id=name))
    return list(found.values()) or [pytest.param(None, id="no-kubectl")]


@dataclass(frozen=True)
class Kubectl:
    """Runs one kubectl binary against the server under test."""

    path: str
    env: dict[str, str]

    def __call__(self, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [self.path, *args], input=stdin, capture_output=True, text=True, env=self.env,
            timeout=30,
        )  # fmt: skip

    def popen(self, *args: str) -> subprocess.Popen[str]:
        return subprocess.Popen(
            [self.path, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            env=self.env,
        )  # fmt: skip


@pytest.fixture(params=kubectl_binaries())
def kubectl(request: pytest.FixtureRequest, api: Api, tmp_path: Path) -> Kubectl:
    path: str | None = request.param
    if path is None:
        pytest.fail(f"no kubectl: neither {DEBIAN_KUBECTL} (.ci/run unpacks it) nor on PATH")
    config = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "hub", "cluster": {"server": api.url}}],
        "users": [{"name": "admin", "user": {}}],
        "contexts": [{"name": "hub", "context": {"cluster": "hub", "user": "admin"}}],
        "current-context": "hub",
    }
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(yaml.safe_dump(config))
    return Kubectl(path, {"KUBECONFIG": str(kubeconfig), "HOME": str(tmp_path)})


# --- a hub that authenticates and authorizes: TLS, client certificates, tokens, RBAC ------------


@dataclass
class SecureApi:
    """A TLS server over a MemoryStore with the bootstrap RBAC policy; users are made by
    minting client certificates from its CA (or by the token file's tokens)."""

    url: str
    store: CoreStore
    server: Server
    ca: Any  # auth.pki.KeyPair
    directory: Path
    audit_log: Path

    def kubeconfig(self, user: str, *groups: str, token: str | None = None) -> Path:
        """A kubeconfig for this user: a client certificate (CN user, O groups), or a token."""
        from fleetwarden.auth.pki import client_certificate
        from fleetwarden.client.kubeconfig import write_kubeconfig

        path = self.directory / f"{user}.kubeconfig"
        ca = self.ca.certificate_pem()
        if token is not None:
            write_kubeconfig(path, self.url, ca=ca, token=token)
            return path
        pair = client_certificate(self.ca, user, groups, datetime.now(UTC))
        write_kubeconfig(
            path, self.url, ca=ca, certificate=pair.certificate_pem(), key=pair.key_pem()
        )
        return path

    def client(self, user: str, *groups: str, token: str | None = None) -> Any:
        from fleetwarden.client.client import Client
        from fleetwarden.client.kubeconfig import load_kubeconfig

        config = load_kubeconfig(str(self.kubeconfig(user, *groups, token=token)))
        return Client.from_kubeconfig(config)


TOKENS = 'tok-carol,carol,1001,"team-b,auditors"\n'


@pytest.fixture
def secure_api(tmp_path: Path) -> Iterator[SecureApi]:
    from fleetwarden.auth import pki
    from fleetwarden.auth.audit import AuditLog
    from fleetwarden.auth.authn import Authenticator, load_token_file
    from fleetwarden.auth.bootstrap import kubernetes_policy
    from fleetwarden.auth.pki import HubPKI
    from fleetwarden.cli.serving import Serving
    from fleetwarden.controllers.rbac.bootstrap import ensure_bootstrap_policy
    from fleetwarden.runtime.access import bootstrap_tokens, rbac_authorizer
    from fleetwarden.server.security import Security
    from fleetwarden.server.tls import TLS

    now = datetime.now(UTC)
    ca = pki.new_ca("test-ca", now)
    ca.write(tmp_path / "ca.crt", tmp_path / "ca.key")
    pki.serving_certificate(ca, [], now).write(tmp_path / "tls.crt", tmp_path / "tls.key")
    (tmp_path / "tokens.csv").write_text(TOKENS)
    store = MemoryStore()
    ensure_bootstrap_policy(store, kubernetes_policy())
    audit = tmp_path / "audit.log"
    service_accounts = Serving().service_accounts(HubPKI(tmp_path), store, RealClock())
    authenticator = Authenticator(
        tokens=load_token_file(tmp_path / "tokens.csv"),
        service_accounts=service_accounts,
        bootstrap=bootstrap_tokens(store, RealClock()),
    )
    security = Security(authenticator, rbac_authorizer(store), AuditLog(audit))
    app = create_app(
        store, default_chain(), RealClock(), security=security, service_accounts=service_accounts
    )
    tls = TLS(tmp_path / "tls.crt", tmp_path / "tls.key", tmp_path / "ca.crt")
    server = Server(app, tls=tls)
    server.start()
    try:
        yield SecureApi(server.url, store, server, ca, tmp_path, audit)
    finally:
        server.stop()
        assert security.audit is not None
        security.audit.close()
