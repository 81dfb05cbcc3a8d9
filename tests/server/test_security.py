"""The API server as kube-apiserver guards it, over TLS: who a request is (client
certificates, tokens, bootstrap tokens, nobody), what RBAC lets it do, impersonation, the
access reviews kubectl asks, escalation, and the audit log."""

from __future__ import annotations

import base64
import http.client
import json
import ssl
import subprocess
from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest
from kubernetes import client, config

from fleetwarden.api.registry import REGISTRY
from fleetwarden.auth import pki
from fleetwarden.auth.authn import bootstrap_token_secret
from fleetwarden.client.errors import ServerError
from fleetwarden.client.kubeconfig import write_kubeconfig

from .conftest import DEBIAN_KUBECTL, Kubectl, SecureApi, kubectl_binaries

CONFIG_MAP = REGISTRY.info("v1", "ConfigMap")
ROLE = REGISTRY.info("rbac.authorization.k8s.io/v1", "Role")
CONFIGMAPS = "/api/v1/namespaces/default/configmaps"


def raw(api: SecureApi, **kwargs: Any) -> httpx.Client:
    """An HTTPS client trusting the server's CA, with nothing else of its own."""
    return httpx.Client(
        base_url=api.url,
        verify=ssl.create_default_context(cadata=api.ca.certificate_pem().decode()),
        **kwargs,
    )


def reader_role(namespace: str = "default") -> list[dict[str, Any]]:
    """A Role reading ConfigMaps in the namespace, bound to bob."""
    return [
        {
            "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
            "metadata": {"name": "cm-reader", "namespace": namespace},
            "rules": [{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get", "list"]}],
        },
        {
            "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
            "metadata": {"name": "bob-reads", "namespace": namespace},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "cm-reader"},
            "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "bob"}],
        },
    ]  # fmt: skip


# --- authentication ------------------------------------------------------------------------


def test_no_credentials_is_401_as_a_status(secure_api: SecureApi) -> None:
    with raw(secure_api) as client:
        for path in (CONFIGMAPS, "/healthz", "/version"):
            response = client.get(path)
            assert response.status_code == 401
            assert response.json() == {
                "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                "message": "Unauthorized", "reason": "Unauthorized", "code": 401,
            }  # fmt: skip


def test_an_unknown_token_is_401(secure_api: SecureApi) -> None:
    with raw(secure_api, headers={"Authorization": "Bearer not-a-token"}) as client:
        assert client.get(CONFIGMAPS).status_code == 401


def test_a_certificate_from_another_ca_is_refused_in_the_handshake(secure_api: SecureApi) -> None:
    now = datetime.now(UTC)
    stranger = pki.client_certificate(pki.new_ca("other-ca", now), "admin", ["system:masters"], now)
    stranger.write(secure_api.directory / "s.crt", secure_api.directory / "s.key")
    context = ssl.create_default_context(cadata=secure_api.ca.certificate_pem().decode())
    context.load_cert_chain(secure_api.directory / "s.crt", secure_api.directory / "s.key")
    with (
        httpx.Client(base_url=secure_api.url, verify=context) as client,
        pytest.raises(httpx.HTTPError),
    ):
        client.get(CONFIGMAPS)


def test_certificate_token_and_bootstrap_token_users(secure_api: SecureApi) -> None:
    whoami = "/apis/authentication.k8s.io/v1/selfsubjectreviews"
    body = {"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"}
    with secure_api.client("alice", "team-a") as alice:
        assert alice._send("POST", whoami, json=body)["status"]["userInfo"] == {
            "username": "alice", "groups": ["team-a", "system:authenticated"],
        }  # fmt: skip
    with secure_api.client("carol", token="tok-carol") as carol:
        assert carol._send("POST", whoami, json=body)["status"]["userInfo"] == {
            "username": "carol", "uid": "1001",
            "groups": ["team-b", "auditors", "system:authenticated"],
        }  # fmt: skip
    token = "abcdef.0123456789abcdef"
    expiry = datetime.now(UTC) + timedelta(hours=1)
    secure_api.store.create(bootstrap_token_secret(token, ["system:bootstrappers:test"], expiry))
    with secure_api.client("joiner", token=token) as joiner:
        assert joiner._send("POST", whoami, json=body)["status"]["userInfo"] == {
            "username": "system:bootstrap:abcdef",
            "groups": ["system:bootstrappers", "system:bootstrappers:test", "system:authenticated"],
        }  # fmt: skip


def test_an_expired_bootstrap_token_is_401(secure_api: SecureApi) -> None:
    token = "zyxwvu.0123456789abcdef"
    expired = datetime.now(UTC) - timedelta(seconds=1)
    secure_api.store.create(bootstrap_token_secret(token, [], expired))
    with raw(secure_api, headers={"Authorization": f"Bearer {token}"}) as client:
        assert client.get("/version").status_code == 401


def test_a_body_is_read_only_once_its_sender_is_known_and_allowed(secure_api: SecureApi) -> None:
    """Headers announcing a large body, and a few bytes of it: a stranger gets 401 and a
    user without the right 403 at once, the server waiting for none of the rest (the
    connection's timeout is 5 s) and hanging up rather than reading it."""
    bob_cert = pki.client_certificate(secure_api.ca, "bob", [], datetime.now(UTC))
    bob_cert.write(secure_api.directory / "b.crt", secure_api.directory / "b.key")
    bob = ssl.create_default_context(cadata=secure_api.ca.certificate_pem().decode())
    bob.load_cert_chain(secure_api.directory / "b.crt", secure_api.directory / "b.key")
    stranger = ssl.create_default_context(cadata=secure_api.ca.certificate_pem().decode())
    url = urlsplit(secure_api.url)
    for context, code in ((stranger, 401), (bob, 403)):
        for length in (2 * 1024 * 1024, 300 * 1024 * 1024, None):  # None: chunked
            conn = http.client.HTTPSConnection(url.hostname or "", url.port, context=context,
                                               timeout=5)  # fmt: skip
            conn.putrequest("POST", CONFIGMAPS)
            conn.putheader("Content-Type", "application/json")
            if length is None:
                conn.putheader("Transfer-Encoding", "chunked")
            else:
                conn.putheader("Content-Length", str(length))
            conn.endheaders()
            start = b'{"metadata": {"name": "big"}, "data": {"a": "'
            conn.send(start if length is not None else b"%x\r\n%s\r\n" % (len(start), start))
            response = conn.getresponse()
            assert (response.status, length) == (code, length)
            assert json.loads(response.read())["code"] == code
            assert response.getheader("connection") == "close"
            conn.close()
    assert secure_api.store.list(CONFIG_MAP, "default").items == []


# --- authorization -------------------------------------------------------------------------


def test_rbac_decides_and_forbidden_is_worded_as_kube_apiserver_words_it(
    secure_api: SecureApi,
) -> None:
    admin = secure_api.client("admin", "system:masters")
    bob = secure_api.client("bob")
    with admin, bob:
        admin.create({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cm"}})
        with pytest.raises(ServerError) as denied:
            bob.list(CONFIG_MAP, "default")
        assert denied.value.code == 403
        assert denied.value.message == (
            'configmaps is forbidden: User "bob" cannot list resource "configmaps" in API '
            'group "" in the namespace "default"'
        )
        assert denied.value.body["details"] == {"kind": "configmaps"}
        for obj in reader_role():
            admin.create(obj)
        assert [i["metadata"]["name"] for i in bob.list(CONFIG_MAP, "default")["items"]] == ["cm"]
        with pytest.raises(ServerError) as named:
            bob.delete(CONFIG_MAP, "cm", "default")
        assert named.value.message == (
            'configmaps "cm" is forbidden: User "bob" cannot delete resource "configmaps" in '
            'API group "" in the namespace "default"'
        )
        with pytest.raises(ServerError) as elsewhere:
            bob.list(CONFIG_MAP, "kube-system")
        assert elsewhere.value.code == 403
        with pytest.raises(ServerError) as path:
            bob.get_raw("/metrics")
        assert path.value.message == 'forbidden: User "bob" cannot get path "/metrics"'
        # Discovery and health are everyone's who is authenticated.
        assert bob.get_raw("/healthz").text == "ok"
        assert bob.get_json("/api")["kind"] == "APIVersions"


def test_a_binding_to_a_missing_role_says_so_in_the_refusal(secure_api: SecureApi) -> None:
    with secure_api.client("admin", "system:masters") as admin, secure_api.client("bob") as bob:
        admin.create(reader_role()[1])  # the binding, without its Role
        with pytest.raises(ServerError) as denied:
            bob.list(CONFIG_MAP, "default")
    assert denied.value.message.endswith(
        ': RBAC: role.rbac.authorization.k8s.io "cm-reader" not found'
    )


def test_nobody_grants_what_they_do_not_hold(secure_api: SecureApi) -> None:
    with secure_api.client("admin", "system:masters") as admin:
        for obj in reader_role():
            admin.create(obj)
        admin.create(
            {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
             "metadata": {"name": "rbac-writer", "namespace": "default"},
             "rules": [{"apiGroups": ["rbac.authorization.k8s.io"],
                        "resources": ["roles", "rolebindings"], "verbs": ["create"]}]}
        )  # fmt: skip
        admin.create(
            {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
             "metadata": {"name": "bob-writes-rbac", "namespace": "default"},
             "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "rbac-writer"},
             "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "bob"}]}
        )  # fmt: skip
    escalating = {
        "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
        "metadata": {"name": "more", "namespace": "default"},
        "rules": [{"apiGroups": [""], "resources": ["configmaps", "secrets"], "verbs": ["get", "delete"]}],
    }  # fmt: skip
    with secure_api.client("bob") as bob:
        with pytest.raises(ServerError) as refused:
            bob.create(escalating)
        assert refused.value.code == 403
        assert refused.value.message == (
            'roles.rbac.authorization.k8s.io "more" is forbidden: user "bob" '
            '(groups=["system:authenticated"]) is attempting to grant RBAC permissions not '
            'currently held:\n{APIGroups:[""], Resources:["configmaps"], Verbs:["delete"]}\n'
            '{APIGroups:[""], Resources:["secrets"], Verbs:["get" "delete"]}'
        )
        # What he holds he may grant: a Role reading ConfigMaps, and a binding to it.
        bob.create(
            {
                **escalating,
                "rules": [{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get"]}],
            }
        )
        with pytest.raises(ServerError) as binding:
            bob.create(
                {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
                 "metadata": {"name": "carol-admin", "namespace": "default"},
                 "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "cluster-admin"},
                 "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "carol"}]}
            )  # fmt: skip
        assert binding.value.code == 403
        assert "is attempting to grant RBAC permissions not currently held" in binding.value.message
    # The refused Role left nothing; the one he could grant is what is stored.
    stored = secure_api.store.get(ROLE, "more", "default")["rules"]
    assert stored == [{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get"]}]


def test_impersonation_needs_the_impersonate_verb(secure_api: SecureApi) -> None:
    with secure_api.client("admin", "system:masters") as admin:
        for obj in reader_role():
            admin.create(obj)
    admin_headers = {"Impersonate-User": "bob"}
    context = ssl.create_default_context(cadata=secure_api.ca.certificate_pem().decode())
    admin_cert = pki.client_certificate(
        secure_api.ca, "admin", ["system:masters"], datetime.now(UTC)
    )
    admin_cert.write(secure_api.directory / "a.crt", secure_api.directory / "a.key")
    context.load_cert_chain(secure_api.directory / "a.crt", secure_api.directory / "a.key")
    with httpx.Client(base_url=secure_api.url, verify=context) as client:
        as_bob = client.get(CONFIGMAPS, headers=admin_headers)
        assert as_bob.status_code == 200
        denied = client.get("/api/v1/namespaces/kube-system/configmaps", headers=admin_headers)
        assert denied.json()["message"].startswith('configmaps is forbidden: User "bob"')
        no_user = client.get(CONFIGMAPS, headers={"Impersonate-Group": "system:masters"})
        assert no_user.status_code == 400
        assert no_user.json()["message"] == (
            "requested [{Group  system:masters    }] without impersonating a user"
        )
    with secure_api.client("bob") as bob:
        response = bob._http.get(CONFIGMAPS, headers={"Impersonate-User": "admin"})
    assert response.status_code == 403
    assert response.json()["message"] == (
        'users "admin" is forbidden: User "bob" cannot impersonate resource "users" in API '
        'group "" at the cluster scope'
    )


def test_the_audit_log_has_one_event_per_request(secure_api: SecureApi) -> None:
    with secure_api.client("bob") as bob:
        with pytest.raises(ServerError):
            bob.get(CONFIG_MAP, "missing", "default")
        bob.get_raw("/healthz")
    with raw(secure_api) as anonymous:
        anonymous.get("/version")
    events = [json.loads(line) for line in secure_api.audit_log.read_text().splitlines()]
    forbidden, health, unauthorized = events[-3:]
    assert forbidden["apiVersion"] == "audit.k8s.io/v1"
    assert forbidden["level"] == "Metadata"
    assert forbidden["stage"] == "ResponseComplete"
    assert forbidden["verb"] == "get"
    assert forbidden["user"] == {"username": "bob", "groups": ["system:authenticated"]}
    assert forbidden["objectRef"] == {
        "resource": "configmaps", "namespace": "default", "name": "missing", "apiVersion": "v1",
    }  # fmt: skip
    assert forbidden["responseStatus"]["code"] == 403
    assert forbidden["annotations"]["authorization.k8s.io/decision"] == "forbid"
    assert health["requestURI"] == "/healthz" and health["responseStatus"]["code"] == 200
    assert unauthorized["responseStatus"]["code"] == 401 and unauthorized["user"] == {}
    assert (secure_api.audit_log.stat().st_mode & 0o777) == 0o600


# --- watch ---------------------------------------------------------------------------------


def configmap_role(*verbs: str) -> list[dict[str, Any]]:
    """A Role with these verbs on ConfigMaps in default, bound to bob."""
    role, binding = reader_role()
    return [{**role, "rules": [{**role["rules"][0], "verbs": list(verbs)}]}, binding]


def test_a_named_get_with_watch_true_is_a_get_and_a_watch_needs_the_watch_verb(
    secure_api: SecureApi,
) -> None:
    with secure_api.client("admin", "system:masters") as admin:
        admin.create({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cm"}})
        for obj in configmap_role("get"):
            admin.create(obj)
    once = {"watch": "true", "timeoutSeconds": "1"}
    with secure_api.client("bob") as bob:
        # As kube-apiserver serves it: a get of one object, authorized as get, not a stream.
        named = bob._http.get(f"{CONFIGMAPS}/cm", params=once)
        assert named.status_code == 200
        assert named.json()["kind"] == "ConfigMap"
        assert named.json()["metadata"]["name"] == "cm"
        # A watch, of the collection or (the legacy path) of the one object, needs watch.
        for path in (CONFIGMAPS, "/api/v1/watch/namespaces/default/configmaps/cm"):
            denied = bob._http.get(path, params=once)
            assert denied.status_code == 403, path
            assert 'cannot watch resource "configmaps"' in denied.json()["message"]
    with secure_api.client("admin", "system:masters") as admin:
        role = admin.get(ROLE, "cm-reader", "default")
        role["rules"][0]["verbs"] = ["get", "watch"]
        admin.update(role)
    with secure_api.client("bob") as bob:
        for path in (CONFIGMAPS, "/api/v1/watch/namespaces/default/configmaps/cm"):
            watched = bob._http.get(path, params=once)
            assert watched.status_code == 200, path
            events = [json.loads(line) for line in watched.text.splitlines()]
            assert [(e["type"], e["object"]["metadata"]["name"]) for e in events] == [
                ("ADDED", "cm")
            ]
        # A watch path serves watches only: watch rights write nothing through it.
        legacy = "/api/v1/watch/namespaces/default/configmaps"
        for method, path, body in (
            ("DELETE", f"{legacy}/cm", None),
            ("PUT", f"{legacy}/cm", {"apiVersion": "v1", "kind": "ConfigMap",
                                      "metadata": {"name": "cm"}, "data": {"a": "b"}}),
            ("POST", legacy, {"apiVersion": "v1", "kind": "ConfigMap",
                              "metadata": {"name": "new"}}),
        ):  # fmt: skip
            refused = bob._http.request(method, path, json=body)
            assert refused.status_code == 405, method
            assert refused.json()["reason"] == "MethodNotAllowed"
    assert "data" not in secure_api.store.get(CONFIG_MAP, "cm", "default")
    names = [o["metadata"]["name"] for o in secure_api.store.list(CONFIG_MAP, "default").items]
    assert names == ["cm"]


def test_a_watch_of_a_subresource_or_of_a_kind_never_stored_is_refused(
    secure_api: SecureApi,
) -> None:
    deployments = "/apis/apps/v1/namespaces/default/deployments"
    reviews = "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews"
    once = {"watch": "true", "timeoutSeconds": "1"}
    with secure_api.client("admin", "system:masters") as admin:
        admin.create(
            {"apiVersion": "apps/v1", "kind": "Deployment",
             "metadata": {"name": "web", "namespace": "default"},
             "spec": {"selector": {"matchLabels": {"app": "web"}},
                      "template": {"metadata": {"labels": {"app": "web"}},
                                   "spec": {"containers": [{"name": "a", "image": "nginx"}]}}}}
        )  # fmt: skip
        http = admin._http
        # No watch of a subresource: the legacy path is refused, like other verbs it lacks...
        legacy = http.get("/apis/apps/v1/watch/namespaces/default/deployments/web/status")
        assert legacy.status_code == 405
        assert legacy.json()["reason"] == "MethodNotAllowed"
        # ...and watch=true on it is a get of it, as for any named object.
        status = http.get(f"{deployments}/web/status", params=once)
        assert status.status_code == 200
        assert status.json()["kind"] == "Deployment"
        # Access reviews are never stored: nothing to list, nothing to watch.
        assert http.get(reviews).status_code == 405
        for path in (reviews, "/apis/authorization.k8s.io/v1/watch/selfsubjectaccessreviews"):
            refused = http.get(path, params=once)
            assert refused.status_code == 405, path
            assert refused.json()["reason"] == "MethodNotAllowed"


# --- kubectl -------------------------------------------------------------------------------


@pytest.fixture(params=kubectl_binaries())
def kubectl_binary(request: pytest.FixtureRequest) -> str:
    path: str | None = request.param
    if path is None:
        pytest.fail(f"no kubectl: neither {DEBIAN_KUBECTL} (.ci/run unpacks it) nor on PATH")
    return path


def as_user(api: SecureApi, binary: str, user: str, *groups: str) -> Kubectl:
    kubeconfig = api.kubeconfig(user, *groups)
    return Kubectl(binary, {"KUBECONFIG": str(kubeconfig), "HOME": str(api.directory)})


def test_kubectl_auth_can_i_and_its_list(secure_api: SecureApi, kubectl_binary: str) -> None:
    admin = as_user(secure_api, kubectl_binary, "admin", "system:masters")
    for obj in reader_role():
        assert admin("apply", "-f", "-", stdin=json.dumps(obj)).returncode == 0
    bob = as_user(secure_api, kubectl_binary, "bob")
    yes = bob("auth", "can-i", "list", "configmaps")
    assert (yes.returncode, yes.stdout.strip()) == (0, "yes"), yes.stderr
    no = bob("auth", "can-i", "delete", "configmaps")
    assert (no.returncode, no.stdout.strip()) == (1, "no")
    assert admin("auth", "can-i", "delete", "configmaps", "--as", "bob").stdout.strip() == "no"
    listed = bob("auth", "can-i", "--list")
    assert listed.returncode == 0, listed.stderr
    assert any(
        line.split()[:1] == ["configmaps"] and "[get list]" in line
        for line in listed.stdout.splitlines()
    )
    got = bob("get", "configmaps")
    assert got.returncode == 0, got.stderr
    refused = bob("get", "secrets")
    assert refused.returncode == 1
    assert (
        'Error from server (Forbidden): secrets is forbidden: User "bob" cannot list resource '
        '"secrets" in API group "" in the namespace "default"'
    ) in refused.stderr


def test_the_official_python_client_with_a_client_certificate(secure_api: SecureApi) -> None:
    kubeconfig = secure_api.kubeconfig("admin", "system:masters")
    with config.new_client_from_config(str(kubeconfig)) as api_client:
        names = [n.metadata.name for n in client.CoreV1Api(api_client).list_namespace().items]
    assert names == ["default", "kube-public", "kube-system"]


def test_kubectl_without_credentials_is_told_to_log_in(
    secure_api: SecureApi, kubectl_binary: str
) -> None:
    path = secure_api.directory / "nobody.kubeconfig"
    write_kubeconfig(path, secure_api.url, ca=secure_api.ca.certificate_pem())
    result = subprocess.run(
        [kubectl_binary, "get", "configmaps"], capture_output=True, text=True, timeout=30,
        env={"KUBECONFIG": str(path), "HOME": str(secure_api.directory)},
    )  # fmt: skip
    assert result.returncode == 1
    # kubectl 1.20 asks for a username and password on a 401 first (a basic-auth prompt).
    asked = "Please enter Username" in result.stdout
    assert asked or "error: You must be logged in to the server (Unauthorized)" in result.stderr


SEED_003_RBAC = """
apiVersion: v1
kind: Namespace
metadata: {name: project1}
---
apiVersion: cluster.open-cluster-management.io/v1beta2
kind: ManagedClusterSet
metadata: {name: clusterset1}
---
apiVersion: cluster.open-cluster-management.io/v1beta2
kind: ManagedClusterSet
metadata: {name: clusterset2}
---
# Seed 003: binding clusterset1 to a namespace needs create on managedclustersets/bind.
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: clusterrole1}
rules:
  - apiGroups: ["cluster.open-cluster-management.io"]
    resources: ["managedclustersets/bind"]
    resourceNames: ["clusterset1"]
    verbs: ["create"]
  - apiGroups: ["cluster.open-cluster-management.io"]
    resources: ["managedclustersetbindings"]
    verbs: ["create", "get"]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: alice}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: clusterrole1}
subjects: [{apiGroup: rbac.authorization.k8s.io, kind: User, name: alice}]
---
# Seed 003: adding a cluster to clusterset1 needs create on managedclustersets/join.
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: clusterrole2}
rules:
  - apiGroups: ["cluster.open-cluster-management.io"]
    resources: ["managedclustersets/join"]
    resourceNames: ["clusterset1"]
    verbs: ["create"]
  - apiGroups: ["cluster.open-cluster-management.io"]
    resources: ["managedclusters"]
    verbs: ["create", "get", "patch", "update"]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: bob}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: clusterrole2}
subjects: [{apiGroup: rbac.authorization.k8s.io, kind: User, name: bob}]
"""


def binding_yaml(cluster_set: str) -> str:
    return (
        "apiVersion: cluster.open-cluster-management.io/v1beta2\n"
        "kind: ManagedClusterSetBinding\n"
        f"metadata: {{namespace: project1, name: {cluster_set}}}\n"
        f"spec: {{clusterSet: {cluster_set}}}\n"
    )


def cluster_yaml(cluster_set: str) -> str:
    return (
        "apiVersion: cluster.open-cluster-management.io/v1\n"
        "kind: ManagedCluster\n"
        "metadata:\n  name: cluster1\n"
        f"  labels: {{cluster.open-cluster-management.io/clusterset: {cluster_set}}}\n"
        "spec: {hubAcceptsClient: false}\n"
    )


def test_seed_003_cluster_set_permissions_with_kubectl_as_two_users(
    secure_api: SecureApi, kubectl_binary: str
) -> None:
    admin = as_user(secure_api, kubectl_binary, "admin", "system:masters")
    applied = admin("apply", "-f", "-", stdin=SEED_003_RBAC)
    assert applied.returncode == 0, applied.stderr
    alice = as_user(secure_api, kubectl_binary, "alice")
    bound = alice("create", "-f", "-", stdin=binding_yaml("clusterset1"))
    assert bound.returncode == 0, bound.stderr
    refused = alice("create", "-f", "-", stdin=binding_yaml("clusterset2"))
    assert refused.returncode == 1
    assert (
        'Error from server (Forbidden): error when creating "STDIN": admission webhook '
        '"managedclustersetbindingvalidators.admission.cluster.open-cluster-management.io" '
        'denied the request: managedclustersets/bind.apps "clusterset2" is forbidden: user '
        '"alice" is not allowed to bind cluster set "clusterset2"'
    ) in refused.stderr
    bob = as_user(secure_api, kubectl_binary, "bob")
    joined = bob("create", "-f", "-", stdin=cluster_yaml("clusterset1"))
    assert joined.returncode == 0, joined.stderr
    moved = bob("replace", "-f", "-", stdin=cluster_yaml("clusterset2"))
    assert moved.returncode == 1
    assert (
        'user "bob" cannot add/remove a ManagedCluster to/from ManagedClusterSet "clusterset2"'
    ) in moved.stderr
    accepted = bob(
        "patch", "managedcluster", "cluster1", "--type=merge",
        "-p", '{"spec":{"hubAcceptsClient":true}}',
    )  # fmt: skip
    assert accepted.returncode == 1
    assert 'user "bob" cannot update the HubAcceptsClient field' in accepted.stderr
    # Alice may not write clusters at all: RBAC refuses before any webhook is asked.
    alice_join = alice(
        "create", "-f", "-", stdin=cluster_yaml("clusterset1").replace("cluster1", "cluster2")
    )
    assert 'User "alice" cannot create resource "managedclusters"' in alice_join.stderr
    cluster = admin("get", "managedcluster", "cluster1", "-o", "json")
    labels = json.loads(cluster.stdout)["metadata"]["labels"]
    assert labels["cluster.open-cluster-management.io/clusterset"] == "clusterset1"


def test_kubectl_certificate_approve_and_the_signer_check(
    secure_api: SecureApi, kubectl_binary: str
) -> None:
    pem = pki.new_certificate_request(
        pki.new_key(), "system:karmada:agent:m1", ["system:karmada:agents"]
    )
    csr = {
        "apiVersion": "certificates.k8s.io/v1", "kind": "CertificateSigningRequest",
        "metadata": {"name": "m1"},
        "spec": {"request": base64.b64encode(pem).decode(), "usages": ["client auth"],
                 "signerName": "kubernetes.io/kube-apiserver-client"},
    }  # fmt: skip
    admin = as_user(secure_api, kubectl_binary, "admin", "system:masters")
    created = admin("create", "-f", "-", stdin=json.dumps(csr))
    assert created.returncode == 0, created.stderr
    # May update approvals, but not approve for the signer: the CertificateApproval check.
    with secure_api.client("admin", "system:masters") as root:
        for obj in (
            {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
             "metadata": {"name": "approvals"},
             "rules": [{"apiGroups": ["certificates.k8s.io"], "verbs": ["get", "update"],
                        "resources": ["certificatesigningrequests",
                                      "certificatesigningrequests/approval"]}]},
            {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
             "metadata": {"name": "bob-approvals"},
             "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "approvals"},
             "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "bob"}]},
        ):  # fmt: skip
            root.create(obj)
    bob = as_user(secure_api, kubectl_binary, "bob")
    refused = bob("certificate", "approve", "m1")
    assert refused.returncode == 1
    assert (
        'certificatesigningrequests.certificates.k8s.io "m1" is forbidden: user not permitted '
        'to approve requests with signerName "kubernetes.io/kube-apiserver-client"'
    ) in refused.stderr
    approved = admin("certificate", "approve", "m1")
    assert approved.returncode == 0, approved.stderr
    stored = json.loads(admin("get", "csr", "m1", "-o", "json").stdout)
    (condition,) = stored["status"]["conditions"]
    assert (condition["type"], condition["reason"]) == ("Approved", "KubectlApprove")
    assert stored["spec"]["username"] == "admin"  # the requester, whatever the body said
