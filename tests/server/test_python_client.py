"""The official `kubernetes` Python client against the server: typed core objects, the
dynamic client over discovery, custom objects, errors and watch."""

from __future__ import annotations

from typing import Any

import pytest
from kubernetes import client, dynamic, watch
from kubernetes.client.rest import ApiException

from .conftest import CLUSTERS, Api, cluster


@pytest.fixture
def api_client(api: Api) -> Any:
    configuration = client.Configuration()
    configuration.host = api.url
    with client.ApiClient(configuration) as api_client:
        yield api_client


def test_typed_core_client(api_client: Any) -> None:
    core = client.CoreV1Api(api_client)
    core.create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(name="team")))
    names = [ns.metadata.name for ns in core.list_namespace().items]
    assert names == ["default", "kube-public", "kube-system", "team"]
    assert core.read_namespace("team").status.phase == "Active"
    with pytest.raises(ApiException) as missing:
        core.read_namespace("nope")
    assert missing.value.status == 404


def test_custom_objects_and_their_errors(api_client: Any) -> None:
    custom = client.CustomObjectsApi(api_client)
    group, version, plural = "cluster.karmada.io", "v1alpha1", "clusters"
    created = custom.create_cluster_custom_object(group, version, plural, cluster())
    assert created["metadata"]["name"] == "member1"
    patched = custom.patch_cluster_custom_object(
        group, version, plural, "member1", {"metadata": {"labels": {"env": "prod"}}}
    )
    assert patched["metadata"]["labels"] == {"env": "prod"}
    with pytest.raises(ApiException) as refused:
        custom.create_cluster_custom_object(
            group, version, plural, cluster("bad", taints=[{"key": "k", "effect": "NoRun"}])
        )
    assert refused.value.status == 422
    assert "spec.taints[0].effect" in refused.value.body


def test_dynamic_client_finds_kinds_by_discovery(api_client: Any) -> None:
    dyn = dynamic.DynamicClient(api_client)
    policies = dyn.resources.get(api_version="policy.karmada.io/v1alpha1", kind="PropagationPolicy")
    body = {
        "apiVersion": "policy.karmada.io/v1alpha1",
        "kind": "PropagationPolicy",
        "metadata": {"name": "nginx"},
        "spec": {"resourceSelectors": [{"apiVersion": "apps/v1", "kind": "Deployment"}]},
    }
    policies.create(body=body, namespace="default")
    listed = policies.get(namespace="default")
    assert [p.metadata.name for p in listed.items] == ["nginx"]


def test_watch_stream(api: Api, api_client: Any) -> None:
    api.post(CLUSTERS, cluster("first"))
    custom = client.CustomObjectsApi(api_client)
    stream = watch.Watch().stream(
        custom.list_cluster_custom_object,
        "cluster.karmada.io",
        "v1alpha1",
        "clusters",
        timeout_seconds=5,
    )
    seen = []
    for event in stream:
        seen.append((event["type"], event["object"]["metadata"]["name"]))
        if len(seen) == 1:
            api.post(CLUSTERS, cluster("second"))
        if len(seen) == 2:
            break
    assert seen == [("ADDED", "first"), ("ADDED", "second")]
