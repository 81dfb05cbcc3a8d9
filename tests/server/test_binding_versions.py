"""ResourceBinding and ClusterResourceBinding served at work.karmada.io/v1alpha1 besides
v1alpha2, stored as v1alpha2 and converted both ways as karmada-webhook's conversion does
(pkg/apis/work/v1alpha1/binding_types_conversion.go): upstream's own
artifacts/example/binding.yaml applied with kubectl, read back in both versions, and
watched at v1alpha1."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml

from .conftest import Api, Kubectl

EXAMPLE = Path(__file__).parents[1] / "data" / "karmada" / "example-binding.yaml"
V1 = "/apis/work.karmada.io/v1alpha1"
V2 = "/apis/work.karmada.io/v1alpha2"

Obj = dict[str, Any]


def test_upstream_example_binding_applies_at_v1alpha1(kubectl: Kubectl, api: Api) -> None:
    applied = kubectl("apply", "-f", str(EXAMPLE))
    assert applied.returncode == 0, applied.stderr
    assert "resourcebinding.work.karmada.io/binding-foo created" in applied.stdout
    stored = api.get(f"{V2}/namespaces/default/resourcebindings/binding-foo").json
    assert stored["apiVersion"] == "work.karmada.io/v1alpha2"
    assert stored["spec"]["clusters"] == [{"name": "cluster1"}, {"name": "cluster3"}]
    # The v1alpha2 webhook stamped its permanent id; the v1alpha1 view keeps the metadata.
    assert "resourcebinding.karmada.io/permanent-id" in stored["metadata"]["labels"]
    old = json.loads(
        kubectl(
            "get", "resourcebindings.v1alpha1.work.karmada.io", "binding-foo", "-o", "json"
        ).stdout
    )
    assert old["apiVersion"] == "work.karmada.io/v1alpha1"
    assert old["spec"] == yaml.safe_load(EXAMPLE.read_text())["spec"]
    assert old["metadata"]["uid"] == stored["metadata"]["uid"]
    # kubectl's preferred version is v1alpha2.
    preferred = json.loads(kubectl("get", "rb", "binding-foo", "-o", "json").stdout)
    assert preferred["apiVersion"] == "work.karmada.io/v1alpha2"


def test_conversion_moves_replicas_and_requests(api: Api) -> None:
    old: Obj = {
        "apiVersion": "work.karmada.io/v1alpha1",
        "kind": "ClusterResourceBinding",
        "metadata": {"name": "crb"},
        "spec": {
            "resource": {"apiVersion": "v1", "kind": "Namespace", "name": "ns",
                         "replicas": 3, "resourcePerReplicas": {"cpu": "100m"}},
            "clusters": [{"name": "member1", "replicas": 2}, {"name": "member2", "replicas": 1}],
            "placement": {"clusterAffinity": {"clusterNames": ["member1"]}},
        },
    }  # fmt: skip
    created = api.post(f"{V1}/clusterresourcebindings", old)
    assert created.status == 201, created.body
    assert created.json["apiVersion"] == "work.karmada.io/v1alpha1"
    assert created.headers.get("warning") == '299 - "unknown field \\"spec.placement\\""'
    hub = api.get(f"{V2}/clusterresourcebindings/crb").json
    assert hub["spec"]["resource"] == {"apiVersion": "v1", "kind": "Namespace", "name": "ns"}
    assert hub["spec"]["replicas"] == 3
    assert hub["spec"]["replicaRequirements"] == {"resourceRequest": {"cpu": "100m"}}
    assert "placement" not in hub["spec"]
    # A v1alpha2 field v1alpha1 lacks is left out of the v1alpha1 view, and an update at
    # v1alpha1 loses it, as upstream's conversion does.
    hub["spec"]["schedulerName"] = "custom"
    assert api.put(f"{V2}/clusterresourcebindings/crb", hub).status == 200
    view = api.get(f"{V1}/clusterresourcebindings/crb").json
    assert view["spec"]["resource"]["replicas"] == 3
    assert "schedulerName" not in view["spec"]
    view["spec"]["clusters"] = [{"name": "member3", "replicas": 3}]
    updated = api.put(f"{V1}/clusterresourcebindings/crb", view)
    assert updated.status == 200, updated.body
    hub = api.get(f"{V2}/clusterresourcebindings/crb").json
    assert hub["spec"]["clusters"] == [{"name": "member3", "replicas": 3}]
    assert "schedulerName" not in hub["spec"]
    listed = api.get(f"{V1}/clusterresourcebindings").json
    assert [i["apiVersion"] for i in listed["items"]] == ["work.karmada.io/v1alpha1"]
    assert api.delete(f"{V1}/clusterresourcebindings/crb").status == 200
    assert api.get(f"{V2}/clusterresourcebindings/crb").status == 404


def test_watch_at_v1alpha1_converts_each_event(api: Api) -> None:
    binding: Obj = {
        "apiVersion": "work.karmada.io/v1alpha2",
        "kind": "ResourceBinding",
        "metadata": {"name": "rb", "namespace": "default"},
        "spec": {"resource": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
                 "replicas": 2},
    }  # fmt: skip
    assert api.post(f"{V2}/namespaces/default/resourcebindings", binding).status == 201
    watched = api.get(
        f"{V1}/namespaces/default/resourcebindings?watch=true&resourceVersion=0&timeoutSeconds=1"
    )
    (event,) = [json.loads(line) for line in watched.body.splitlines()]
    assert event["type"] == "ADDED"
    assert event["object"]["apiVersion"] == "work.karmada.io/v1alpha1"
    assert event["object"]["spec"]["resource"]["replicas"] == 2
