"""The client against the real API server: discovery, the verbs, watch, errors."""

from __future__ import annotations

import re
import threading
from typing import Any

import httpx
import pytest

from fleetwarden.admission import default_chain
from fleetwarden.api.errors import (
    AlreadyExists,
    BadRequest,
    Conflict,
    Expired,
    Invalid,
    NotFound,
    StatusError,
)
from fleetwarden.client import (
    Client,
    KindNotFound,
    ResourceTypeNotFound,
    ServerUnreachable,
    retry_on_conflict,
)
from fleetwarden.runtime.clock import RealClock
from fleetwarden.server import Server, create_app
from fleetwarden.store import MemoryStore

from .conftest import cluster, deployment


@pytest.mark.parametrize(
    ("typed", "group", "kind"),
    [
        ("clusters", "cluster.karmada.io", "Cluster"),
        ("cluster", "cluster.karmada.io", "Cluster"),
        ("Cluster", "cluster.karmada.io", "Cluster"),
        ("clusters.cluster.karmada.io", "cluster.karmada.io", "Cluster"),
        ("clusters.v1alpha1.cluster.karmada.io", "cluster.karmada.io", "Cluster"),
        ("mcl", "cluster.open-cluster-management.io", "ManagedCluster"),
        ("managedclusters", "cluster.open-cluster-management.io", "ManagedCluster"),
        (
            "managedclusters.cluster.open-cluster-management.io",
            "cluster.open-cluster-management.io",
            "ManagedCluster",
        ),
        (
            "managedcluster.v1.cluster.open-cluster-management.io",
            "cluster.open-cluster-management.io",
            "ManagedCluster",
        ),
        ("deploy", "apps", "Deployment"),
        ("deployments.apps", "apps", "Deployment"),
        ("ev", "", "Event"),
        ("pp", "policy.karmada.io", "PropagationPolicy"),
    ],
)
def test_resource_names_resolve_as_kubectl_resolves_them(
    client: Client, typed: str, group: str, kind: str
) -> None:
    info = client.resolve(typed)
    assert (info.group, info.kind) == (group, kind)


def test_a_resolved_kind_has_the_registry_model_scope_and_status(client: Client) -> None:
    mcl, deploy, event = client.resolve("mcl"), client.resolve("deploy"), client.resolve("events")
    assert (mcl.model.__name__, mcl.namespaced, mcl.has_status) == ("ManagedCluster", False, True)
    assert (deploy.model.__name__, deploy.namespaced) == ("Unstructured", True)
    assert (event.model.__name__, event.has_status) == ("Event", False)


def test_an_unknown_resource_type_is_refused_in_kubectls_words(client: Client) -> None:
    with pytest.raises(ResourceTypeNotFound) as caught:
        client.resolve("clusterz")
    assert str(caught.value) == 'the server doesn\'t have a resource type "clusterz"'
    with pytest.raises(
        KindNotFound, match=re.escape('no matches for kind "Widget" in version "x.io/v1"')
    ):
        client.info_for({"apiVersion": "x.io/v1", "kind": "Widget"})


class _LegacyDiscoveryOnly(httpx.HTTPTransport):
    """A server as old ones were: it never answers with aggregated discovery."""

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        request.headers["Accept"] = "application/json"
        return super().handle_request(request)


def test_legacy_discovery_finds_the_same_kinds(server: Server, client: Client) -> None:
    with Client(server.url, transport=_LegacyDiscoveryOnly()) as legacy:
        assert legacy.discovery.kinds() == client.discovery.kinds()
        assert legacy.resolve("mcl").kind == "ManagedCluster"


def test_create_get_list_update_patch_delete(client: Client) -> None:
    clusters = client.resolve("clusters")
    created = client.create(cluster("member1"))
    client.create({**cluster("member2"), "metadata": {"name": "member2"}})
    assert client.get(clusters, "member1")["metadata"]["uid"] == created["metadata"]["uid"]
    listed = client.list(clusters, label_selector="location=us")
    assert [c["metadata"]["name"] for c in listed["items"]] == ["member1"]
    assert listed["metadata"]["resourceVersion"]

    changed = {**created, "spec": {**created["spec"], "provider": "aws"}}
    updated = client.update(changed)
    assert updated["spec"]["provider"] == "aws"
    with pytest.raises(
        Conflict,
        match=re.escape('Operation cannot be fulfilled on clusters.cluster.karmada.io "member1"'),
    ):
        client.update(changed)  # the resourceVersion read is no longer the stored one

    merged = client.patch(clusters, "member1", "", {"spec": {"region": "us-east-1"}})
    assert (merged["spec"]["provider"], merged["spec"]["region"]) == ("aws", "us-east-1")
    patched = client.patch(
        clusters, "member1", "", [{"op": "remove", "path": "/spec/provider"}], patch_type="json"
    )
    assert "provider" not in patched["spec"]

    client.delete(clusters, "member1")
    with pytest.raises(
        NotFound, match=re.escape('clusters.cluster.karmada.io "member1" not found')
    ):
        client.get(clusters, "member1")


def test_namespaced_objects_default_to_the_clients_namespace(server: Server) -> None:
    with Client(server.url, namespace="kube-system") as client:
        deploy = client.resolve("deploy")
        created = client.create(deployment("web"))
        client.create(deployment("api", namespace="default"))
        assert created["metadata"]["namespace"] == "kube-system"
        assert client.get(deploy, "web")["metadata"]["name"] == "web"
        assert [d["metadata"]["name"] for d in client.list(deploy, "kube-system")["items"]] == [
            "web"
        ]
        everywhere = client.list(deploy)["items"]
        assert sorted(d["metadata"]["namespace"] for d in everywhere) == ["default", "kube-system"]


def test_status_is_written_through_its_subresource(client: Client) -> None:
    created = client.create(cluster())
    status = {
        "conditions": [
            {
                "type": "Ready",
                "status": "True",
                "reason": "ClusterReady",
                "message": "ok",
                "lastTransitionTime": "2024-01-01T00:00:00Z",
            }
        ]
    }
    written = client.update({**created, "status": status}, subresource="status")
    assert written["status"]["conditions"][0]["type"] == "Ready"
    # The main resource ignores status, as the API server does.
    again = client.update({**written, "status": {}})
    assert again["status"]["conditions"][0]["type"] == "Ready"


def test_a_refused_object_raises_invalid_with_every_cause(client: Client) -> None:
    bad = cluster(taints=[{"key": "a", "effect": "NoRun"}, {"key": "-b", "effect": "NoSchedule"}])
    with pytest.raises(Invalid) as caught:
        client.create(bad)
    error = caught.value
    assert (error.code, error.kind, error.group, error.name) == (
        422,
        "Cluster",
        "cluster.karmada.io",
        "member1",
    )
    assert str(error.errors[0]) == (
        'spec.taints[0].effect: Unsupported value: "NoRun": supported values: "NoSchedule", "NoExecute"'
    )
    assert error.errors[1].field == "spec.taints[1].key"
    assert error.message.startswith('Cluster.cluster.karmada.io "member1" is invalid: [')
    assert error.status()["details"]["causes"][0]["reason"] == "FieldValueNotSupported"


def test_creating_twice_is_already_exists(client: Client) -> None:
    client.create(cluster())
    with pytest.raises(
        AlreadyExists, match=re.escape('clusters.cluster.karmada.io "member1" already exists')
    ):
        client.create(cluster())


def test_watch_streams_changes_after_the_listed_version(client: Client) -> None:
    clusters = client.resolve("clusters")
    version = client.list(clusters)["metadata"]["resourceVersion"]
    client.create(cluster("member1"))
    client.patch(clusters, "member1", "", {"spec": {"provider": "aws"}})
    client.delete(clusters, "member1")
    with client.watch(clusters, resource_version=version, timeout_seconds=1) as stream:
        seen = [(e.type, e.object["metadata"]["name"]) for e in stream]
    assert seen == [("ADDED", "member1"), ("MODIFIED", "member1"), ("DELETED", "member1")]


def test_watch_by_label_selector_and_namespace(client: Client) -> None:
    deploy = client.resolve("deploy")
    version = client.list(deploy)["metadata"]["resourceVersion"]
    for name, namespace, app in (
        ("a", "default", "web"),
        ("b", "default", "db"),
        ("c", "kube-system", "web"),
    ):
        client.create(deployment(name, namespace=namespace, labels={"app": app}))
    with client.watch(
        deploy, "default", resource_version=version, label_selector="app=web", timeout_seconds=1
    ) as stream:
        assert [e.object["metadata"]["name"] for e in stream] == ["a"]


def test_closing_a_watch_from_another_thread_ends_the_iteration(client: Client) -> None:
    stream = client.watch(client.resolve("clusters"))
    seen: list[str] = []
    reader = threading.Thread(target=lambda: seen.extend(e.type for e in stream))
    reader.start()
    client.create(cluster())
    for _ in range(200):
        if seen:
            break
        threading.Event().wait(0.01)
    stream.close()
    reader.join(5)
    assert not reader.is_alive()
    assert seen == ["ADDED"]


def test_a_watch_from_a_compacted_version_raises_expired() -> None:
    store = MemoryStore(event_log_size=2)
    with (
        Server(create_app(store, default_chain(), RealClock())) as server,
        Client(server.url) as client,
    ):
        clusters = client.resolve("clusters")
        for name in ("a", "b", "c", "d"):
            client.create(cluster(name))
        with pytest.raises(Expired), client.watch(clusters, resource_version="1") as stream:
            list(stream)


def test_an_absent_server_is_unreachable_in_kubectls_words() -> None:
    with Client("http://127.0.0.1:1") as client, pytest.raises(ServerUnreachable) as caught:
        client.get_json("/api")
    assert str(caught.value) == (
        "The connection to the server 127.0.0.1:1 was refused - did you specify the right host or port?"
    )


def _answering(status: int, body: bytes, content_type: str = "text/plain") -> Client:
    transport = httpx.MockTransport(
        lambda request: httpx.Response(status, content=body, headers={"Content-Type": content_type})
    )
    return Client("http://hub", transport=transport)


@pytest.mark.parametrize(
    ("status", "body", "error", "reason", "message"),
    [
        (
            404,
            b"404 page not found",
            NotFound,
            "NotFound",
            "the server could not find the requested resource",
        ),
        (
            400,
            b"",
            BadRequest,
            "BadRequest",
            "the server rejected our request for an unknown reason",
        ),
        (
            500,
            b"boom",
            StatusError,
            "InternalError",
            'an error on the server ("boom") has prevented the request from succeeding',
        ),
    ],
)
def test_an_answer_without_a_status_body_is_named_by_its_code(
    status: int, body: bytes, error: type[Exception], reason: str, message: str
) -> None:
    with _answering(status, body) as client, pytest.raises(error) as caught:
        client.get_json("/api")
    assert isinstance(caught.value, StatusError)
    assert (caught.value.code, caught.value.reason, caught.value.message) == (
        status,
        reason,
        message,
    )


def test_retry_on_conflict_reads_again_until_the_write_lands(client: Client) -> None:
    clusters = client.resolve("clusters")
    client.create(cluster())
    attempts: list[int] = []

    def relabel() -> dict[str, Any]:
        current = client.get(clusters, "member1")
        attempts.append(1)
        if len(attempts) == 1:  # someone else writes between our read and our write
            client.patch(clusters, "member1", "", {"metadata": {"labels": {"other": "x"}}})
        version = current["metadata"]["resourceVersion"]
        patch = {"metadata": {"resourceVersion": version, "labels": {"mine": "y"}}}
        return client.patch(clusters, "member1", "", patch)

    labels = retry_on_conflict(relabel)["metadata"]["labels"]
    assert len(attempts) == 2
    assert labels == {"location": "us", "other": "x", "mine": "y"}


def test_retry_on_conflict_gives_up_after_its_attempts() -> None:
    calls: list[int] = []

    def always_stale() -> None:
        calls.append(1)
        raise Conflict("clusters", "cluster.karmada.io", "member1")

    with pytest.raises(Conflict):
        retry_on_conflict(always_stale, attempts=3, backoff=0)
    assert len(calls) == 3
