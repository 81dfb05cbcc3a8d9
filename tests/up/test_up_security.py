"""`fleetwarden up` as a trustworthy hub: HTTPS by default, its files its owner's alone, a
kubeconfig every client takes (kubectl 1.20 and 1.32, the official Python client,
@kubernetes/client-node), agents that joined with bootstrap tokens and may touch only their
own cluster, `fleetwarden token create` and `fleetwarden accept` for agents of one's own,
and no plain HTTP beyond the loopback."""

from __future__ import annotations

import json
import os
import shutil
import ssl
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from kubernetes import client as kube_client
from kubernetes import config as kube_config
from typer.testing import CliRunner

from fleetwarden.api.registry import REGISTRY
from fleetwarden.cli import app
from fleetwarden.cli.up import fleetwarden_command
from fleetwarden.client.client import Client
from fleetwarden.client.errors import ServerError
from fleetwarden.client.kubeconfig import load_kubeconfig

from .test_up import Hub, eventually, kill_leftover_agents, ready

CLUSTER = REGISTRY.info("cluster.karmada.io/v1alpha1", "Cluster")
MANAGED_CLUSTER = REGISTRY.info("cluster.open-cluster-management.io/v1", "ManagedCluster")
PROPAGATION_POLICY = REGISTRY.info("policy.karmada.io/v1alpha1", "PropagationPolicy")
WORK = REGISTRY.info("work.karmada.io/v1alpha1", "Work")
SECRET = REGISTRY.info("v1", "Secret")
ROOT = Path(__file__).parents[2]
DEBIAN_KUBECTL = ROOT / ".ci" / "kubectl" / "usr" / "bin" / "kubectl"
CLIENT_NODE_DIR = ROOT / ".ci" / "node"
CLIENT_NODE = CLIENT_NODE_DIR / "node_modules" / "@kubernetes" / "client-node" / "dist" / "index.js"
SETTINGS = ["--cluster-lease-duration=2s", "--cluster-status-update-frequency=1s"]

runner = CliRunner()


@pytest.fixture(scope="module")
def hub(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Hub]:
    data_dir = tmp_path_factory.mktemp("hub")
    audit = data_dir / "audit.log"
    hub = Hub(data_dir, ["--members=2", "--ocm-members=1", f"--audit-log-path={audit}", *SETTINGS])
    try:  # stopped even when it never got ready: no hub outlives the tests
        client = hub.start()
        eventually(
            lambda: all(ready(client, m) for m in ("member1", "member2")), 30, "Ready members"
        )
        eventually(lambda: accepted(client, "cluster1"), 30, "cluster1 accepted and joined")
        yield hub
    finally:
        hub.stop()
        kill_leftover_agents(data_dir / "members")


def accepted(client: Client, name: str) -> bool:
    conditions = client.get(MANAGED_CLUSTER, name).get("status", {}).get("conditions", [])
    return any(c["type"] == "ManagedClusterJoined" and c["status"] == "True" for c in conditions)


def mode(path: Path) -> int:
    return path.stat().st_mode & 0o777


def test_the_hub_serves_https_and_keeps_its_secrets_to_its_owner(hub: Hub) -> None:
    assert hub.client is not None and hub.client.server.startswith("https://127.0.0.1:")
    data = hub.data_dir
    assert mode(data) == 0o700
    private = [
        data / "kubeconfig", data / "fleetwarden.db", data / "audit.log",
        *(data / "pki").glob("*"), *(data / "members").glob("*.kubeconfig"),
    ]  # fmt: skip
    assert {p.name for p in (data / "pki").glob("*.key")} == {
        "ca.key",
        "apiserver.key",
        "admin.key",
        "sa.key",  # the service account tokens' signing key
    }
    assert {p.name: mode(p) for p in private} == {p.name: 0o600 for p in private}


def test_a_service_account_token_of_the_hub_is_taken_by_it(hub: Hub) -> None:
    kubeconfig = load_kubeconfig(str(hub.data_dir / "kubeconfig"))
    admin = httpx.Client(base_url=kubeconfig.server, verify=kubeconfig.ssl_context())
    account = {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "deployer"}}
    with admin:
        assert admin.post("/api/v1/namespaces/default/serviceaccounts", json=account).is_success
        asked = admin.post("/api/v1/namespaces/default/serviceaccounts/deployer/token", json={})
    assert asked.status_code == 201, asked.text
    token = asked.json()["status"]["token"]
    with httpx.Client(
        base_url=kubeconfig.server,
        verify=ssl.create_default_context(cadata=kubeconfig.certificate_authority.decode()),
        headers={"Authorization": f"Bearer {token}"},
    ) as account_client:
        review = {"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"}
        who = account_client.post("/apis/authentication.k8s.io/v1/selfsubjectreviews", json=review)
    assert who.json()["status"]["userInfo"]["username"] == "system:serviceaccount:default:deployer"
    with httpx.Client(base_url=kubeconfig.server, verify=kubeconfig.ssl_context()) as admin:
        discovered = admin.get("/.well-known/openid-configuration").json()
    assert discovered["jwks_uri"] == f"{kubeconfig.server}/openid/v1/jwks"


def kubectl_paths() -> list[str]:
    return [
        str(p) for p in (DEBIAN_KUBECTL, shutil.which("kubectl")) if p and os.access(p, os.X_OK)
    ]


def test_kubectl_of_both_versions_takes_the_kubeconfig(hub: Hub) -> None:
    paths = kubectl_paths()
    assert paths, f"no kubectl: neither {DEBIAN_KUBECTL} (.ci/run unpacks it) nor on PATH"
    env = {"KUBECONFIG": str(hub.data_dir / "kubeconfig"), "HOME": str(hub.data_dir)}
    for path in paths:
        listed = subprocess.run([path, "get", "clusters", "-o", "name"], capture_output=True,
                                text=True, env=env, timeout=30)  # fmt: skip
        assert listed.returncode == 0, listed.stderr
        assert listed.stdout.split() == ["cluster.cluster.karmada.io/member1",
                                         "cluster.cluster.karmada.io/member2"]  # fmt: skip


def test_the_official_python_client_takes_the_kubeconfig(hub: Hub) -> None:
    with kube_config.new_client_from_config(str(hub.data_dir / "kubeconfig")) as api:
        custom = kube_client.CustomObjectsApi(api)
        clusters = custom.list_cluster_custom_object("cluster.karmada.io", "v1alpha1", "clusters")
    assert [c["metadata"]["name"] for c in clusters["items"]] == ["member1", "member2"]


@pytest.fixture(scope="module")
def client_node() -> Path:
    """@kubernetes/client-node, installed with npm into .ci/node on first use."""
    if not CLIENT_NODE.exists():
        npm = shutil.which("npm")
        assert npm, "no npm: .ci/run installs Debian's nodejs and npm"
        CLIENT_NODE_DIR.mkdir(parents=True, exist_ok=True)
        subprocess.run(
            [npm, "install", "--no-audit", "--no-fund", "--no-save", "@kubernetes/client-node@^1.4"],
            cwd=CLIENT_NODE_DIR, check=True, capture_output=True, timeout=300,
        )  # fmt: skip
    return CLIENT_NODE


def test_client_node_takes_the_kubeconfig(hub: Hub, client_node: Path) -> None:
    script = Path(__file__).parent / "node" / "list-clusters.mjs"
    listed = subprocess.run(
        ["node", str(script), str(hub.data_dir / "kubeconfig")], capture_output=True, text=True,
        env={**os.environ, "CLIENT_NODE": str(client_node)}, timeout=60,
    )  # fmt: skip
    assert listed.returncode == 0, listed.stderr
    assert listed.stdout.split() == ["member1", "member2"]


def agent(hub: Hub, name: str) -> Client:
    """The hub as a member's agent: the kubeconfig it wrote after its certificate came."""
    return Client.from_kubeconfig(
        load_kubeconfig(str(hub.data_dir / "members" / f"{name}.kubeconfig"))
    )


def refused(call: Any) -> ServerError:
    with pytest.raises(ServerError) as caught:
        call()
    assert caught.value.code == 403, caught.value.message
    return caught.value


def test_a_karmada_agent_may_touch_only_its_own_cluster(hub: Hub) -> None:
    whoami = {"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"}
    with agent(hub, "member1") as member1:
        me = member1._send("POST", "/apis/authentication.k8s.io/v1/selfsubjectreviews", json=whoami)
        assert me["status"]["userInfo"]["username"] == "system:karmada:agent:member1"
        own = member1.get(CLUSTER, "member1")
        member1.update({**own, "status": own.get("status", {})}, info=CLUSTER, subresource="status")
        # Listing every Cluster is karmada-agent's right; getting another one is not.
        (other,) = [c for c in member1.list(CLUSTER)["items"] if c["metadata"]["name"] == "member2"]
        refused(lambda: member1.get(CLUSTER, "member2"))
        other = {"apiVersion": CLUSTER.api_version, "kind": CLUSTER.kind, **other}
        denied = refused(lambda: member1.update(other, info=CLUSTER, subresource="status"))
        assert denied.message == (
            'clusters.cluster.karmada.io "member2" is forbidden: User '
            '"system:karmada:agent:member1" cannot update resource "clusters/status" in API '
            'group "cluster.karmada.io" at the cluster scope'
        )
        refused(lambda: member1.delete(CLUSTER, "member2"))
        refused(lambda: member1.list(WORK, "karmada-es-member2"))
        member1.list(WORK, "karmada-es-member1")
        refused(lambda: member1.list(SECRET, "kube-system"))
        policy = {"apiVersion": "policy.karmada.io/v1alpha1", "kind": "PropagationPolicy",
                  "metadata": {"name": "p", "namespace": "default"},
                  "spec": {"resourceSelectors": [{"apiVersion": "v1", "kind": "ConfigMap"}]}}  # fmt: skip
        refused(lambda: member1.create(policy, info=PROPAGATION_POLICY))


def test_an_ocm_agent_may_touch_only_its_own_managed_cluster(hub: Hub) -> None:
    with agent(hub, "cluster1") as cluster1:
        own = cluster1.get(MANAGED_CLUSTER, "cluster1")
        cluster1.update(own, info=MANAGED_CLUSTER, subresource="status")
        refused(lambda: cluster1.list(MANAGED_CLUSTER))  # only its own, by name
        moved = {**own, "metadata": {**own["metadata"], "labels": {
            **own["metadata"].get("labels", {}),
            "cluster.open-cluster-management.io/clusterset": "elsewhere"}}}  # fmt: skip
        assert (
            "cannot add/remove a ManagedCluster"
            in refused(lambda: cluster1.update(moved, info=MANAGED_CLUSTER)).message
        )


def test_an_agent_joins_with_a_token_of_ones_own(hub: Hub, tmp_path: Path) -> None:
    kubeconfig = str(hub.data_dir / "kubeconfig")
    bootstrap = tmp_path / "bootstrap.kubeconfig"
    created = runner.invoke(
        app, ["token", "create", "--ttl=1h", f"--bootstrap-kubeconfig={bootstrap}",
              f"--kubeconfig={kubeconfig}"],
    )  # fmt: skip
    assert created.exit_code == 0, created.stderr
    assert mode(bootstrap) == 0o600
    assert created.stdout.strip().count(".") == 1
    own = tmp_path / "cluster9.kubeconfig"
    command = fleetwarden_command(
        "agent", "--mode=ocm", "--cluster-name=cluster9", f"--bootstrap-kubeconfig={bootstrap}",
        f"--hub-kubeconfig={own}", "--exit-on-stdin-close", *SETTINGS,
    )  # fmt: skip
    assert hub.client is not None
    with subprocess.Popen(command, stdin=subprocess.PIPE, stderr=subprocess.DEVNULL,
                          stdout=subprocess.DEVNULL) as process:  # fmt: skip
        try:
            eventually(
                lambda: hub.client.get(MANAGED_CLUSTER, "cluster9"), 30, "cluster9 registered"
            )
            assert not own.exists()  # not before an administrator accepts it
            accepting = runner.invoke(
                app, ["accept", "managedclusters", "cluster9", "--wait=30",
                      f"--kubeconfig={kubeconfig}"],
            )  # fmt: skip
            assert accepting.exit_code == 0, accepting.stderr
            assert "approved" in accepting.stdout
            assert "set hubAcceptsClient to true for managed cluster cluster9" in accepting.stdout
            eventually(lambda: accepted(hub.client, "cluster9"), 30, "cluster9 joined")
            assert mode(own) == 0o600
        finally:
            process.communicate(timeout=15)


def test_the_audit_log_names_agents_and_their_requests(hub: Hub) -> None:
    lines = (hub.data_dir / "audit.log").read_text().splitlines()
    users = {json.loads(line)["user"].get("username") for line in lines}
    assert {"admin", "system:karmada:agent:member1", "system:bootstrap:"} <= {
        u if not (u or "").startswith("system:bootstrap:") else "system:bootstrap:" for u in users
    }


def test_plain_http_is_refused_beyond_the_loopback(tmp_path: Path) -> None:
    result = runner.invoke(
        app, ["up", f"--data-dir={tmp_path}", "--insecure-serving", "--bind-address=0.0.0.0"]
    )
    assert result.exit_code == 1
    assert "--insecure-serving: plain HTTP is served on the loopback only" in result.stderr
    assert not (tmp_path / "kubeconfig").exists()


def test_members_are_refused_with_a_client_ca_of_yours(tmp_path: Path) -> None:
    result = runner.invoke(
        app, ["up", f"--data-dir={tmp_path / 'hub'}", "--members=1",
              f"--client-ca-file={tmp_path / 'ca.crt'}"],
    )  # fmt: skip
    assert result.exit_code == 1
    assert "--client-ca-file: the agents of --members and --ocm-members join with" in (
        result.stderr
    )
    assert not (tmp_path / "hub").exists()
