"""Discovery, /version and the health and metrics endpoints."""

from __future__ import annotations

from typing import Any

from fleetwarden.server.discovery import version_priority

from .conftest import Api, MakeApi

AGGREGATED = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"
KUBECTL_ACCEPT = (
    f"{AGGREGATED},application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,"
    "application/json"
)


def resource(resources: list[dict[str, Any]], name: str) -> dict[str, Any]:
    return next(r for r in resources if r["name"] == name)


def test_core_group_lists_its_version_and_resources(api: Api) -> None:
    assert api.get("/api").json == {"kind": "APIVersions", "versions": ["v1"]}
    resources = api.get("/api/v1").json
    assert resources["groupVersion"] == "v1"
    namespaces = resource(resources["resources"], "namespaces")
    assert namespaces == {
        "name": "namespaces",
        "singularName": "namespace",
        "namespaced": False,
        "kind": "Namespace",
        "verbs": [
            "create",
            "delete",
            "deletecollection",
            "get",
            "list",
            "patch",
            "update",
            "watch",
        ],
        "shortNames": ["ns"],
    }
    assert resource(resources["resources"], "namespaces/status")["verbs"] == [
        "get",
        "patch",
        "update",
    ]
    events = resource(resources["resources"], "events")
    assert events["namespaced"] and events["shortNames"] == ["ev"]
    assert not any(r["name"] == "events/status" for r in resources["resources"])


def test_named_groups_prefer_their_newest_stable_version(api: Api) -> None:
    groups = {g["name"]: g for g in api.get("/apis").json["groups"]}
    karmada = groups["cluster.karmada.io"]
    assert karmada["preferredVersion"] == {
        "groupVersion": "cluster.karmada.io/v1alpha1",
        "version": "v1alpha1",
    }
    ocm = groups["cluster.open-cluster-management.io"]
    assert ocm["versions"][0]["version"] == "v1"
    assert [v["version"] for v in ocm["versions"]] == sorted(
        (v["version"] for v in ocm["versions"]), key=version_priority
    )
    assert api.get("/apis/cluster.karmada.io").json == {
        **karmada,
        "kind": "APIGroup",
        "apiVersion": "v1",
    }
    clusters = api.get("/apis/cluster.karmada.io/v1alpha1").json["resources"]
    assert resource(clusters, "clusters")["namespaced"] is False
    assert resource(clusters, "clusters/status")["kind"] == "Cluster"


def test_kube_version_priority_orders_stable_beta_alpha() -> None:
    versions = ["v1alpha1", "v2beta1", "foo", "v1", "v1beta2", "v2", "v1beta1"]
    assert sorted(versions, key=version_priority) == [
        "v2", "v1", "v2beta1", "v1beta2", "v1beta1", "v1alpha1", "foo",
    ]  # fmt: skip


def test_aggregated_discovery_answers_kubectl_in_one_document(api: Api) -> None:
    reply = api.get("/apis", headers={"Accept": KUBECTL_ACCEPT})
    assert reply.content_type == AGGREGATED
    groups = {g["metadata"]["name"]: g for g in reply.json["items"]}
    [version] = groups["policy.karmada.io"]["versions"]
    policies = next(r for r in version["resources"] if r["resource"] == "propagationpolicies")
    assert policies["scope"] == "Namespaced"
    assert policies["responseKind"] == {
        "group": "policy.karmada.io",
        "version": "v1alpha1",
        "kind": "PropagationPolicy",
    }
    assert "subresources" not in policies  # upstream's CRD has no status subresource
    [clusters] = groups["cluster.karmada.io"]["versions"][0]["resources"]
    assert clusters["scope"] == "Cluster"
    assert clusters["subresources"] == [
        {
            "subresource": "status",
            "responseKind": clusters["responseKind"],
            "verbs": ["get", "patch", "update"],
        }
    ]
    core = api.get("/api", headers={"Accept": KUBECTL_ACCEPT}).json
    assert [item["versions"][0]["version"] for item in core["items"]] == ["v1"]


def test_version_and_health(make_api: MakeApi) -> None:
    api = make_api(ready=lambda: False, metrics=lambda: b"fleetwarden_up 1\n")
    version = api.get("/version").json
    assert version["major"] == "1" and version["gitVersion"].startswith("v1.")
    assert api.get("/healthz").body == b"ok"
    assert api.get("/livez").body == b"ok"
    assert api.get("/readyz").status == 500
    metrics = api.get("/metrics")
    assert metrics.body == b"fleetwarden_up 1\n"
    assert metrics.content_type.startswith("text/plain; version=0.0.4")


def test_unknown_paths_are_not_found(api: Api) -> None:
    for path in ("/apis/nope.io/v1", "/apis/apps/v1/namespaces/default/nopes", "/nope", "/metrics"):
        reply = api.get(path)
        assert reply.status == 404, path
        assert reply.json["message"] == "the server could not find the requested resource"
