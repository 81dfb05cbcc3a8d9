"""The /scale subresource of Deployments, ReplicaSets and StatefulSets: an autoscaling/v1
Scale read and written as the apps registries' ScaleREST does, found by kubectl through
discovery, authorized as `deployments/scale`. (Custom resources' scale: test_crd.py.)"""

from __future__ import annotations

import json
from typing import Any

import pytest
from kubernetes import client, config
from kubernetes.client.exceptions import ApiException

from fleetwarden.api.registry import REGISTRY

from .conftest import DEPLOYMENTS, Api, Kubectl, SecureApi, deployment

WEB = f"{DEPLOYMENTS}/web"
SCALE = f"{WEB}/scale"
MERGE = "application/merge-patch+json"
JSON_PATCH = "application/json-patch+json"
TABLE = "application/json;as=Table;v=v1;g=meta.k8s.io"


def message(reply: Any) -> tuple[int, str]:
    return reply.status, reply.json.get("message", "")


def scale_body(replicas: Any, **meta: Any) -> dict[str, Any]:
    return {
        "apiVersion": "autoscaling/v1",
        "kind": "Scale",
        "metadata": {"name": "web", "namespace": "default", **meta},
        "spec": {"replicas": replicas},
    }


@pytest.fixture
def web(api: Api) -> dict[str, Any]:
    body = deployment()
    body["spec"]["selector"] = {
        "matchLabels": {"app": "web"},
        "matchExpressions": [{"key": "tier", "operator": "In", "values": ["b", "a"]}],
    }
    body["spec"]["template"]["metadata"]["labels"]["tier"] = "a"
    created = api.post(DEPLOYMENTS, body)
    assert created.status == 201, created.body
    assert api.patch(f"{WEB}/status", {"status": {"replicas": 1}}, MERGE).status == 200
    return dict(api.get(WEB).json)


def test_a_deployments_scale_shows_its_replicas_and_selector(api: Api, web: dict[str, Any]) -> None:
    scale = api.get(SCALE).json
    meta = web["metadata"]
    assert scale == {
        "kind": "Scale",
        "apiVersion": "autoscaling/v1",
        "metadata": {
            "name": "web",
            "namespace": "default",
            "uid": meta["uid"],
            "resourceVersion": meta["resourceVersion"],
            "creationTimestamp": meta["creationTimestamp"],
        },
        "spec": {"replicas": 1},
        "status": {"replicas": 1, "selector": "app=web,tier in (a,b)"},
    }


def test_spec_replicas_default_to_one_as_the_apps_kinds_default_them(api: Api) -> None:
    body = deployment("bare")
    del body["spec"]["replicas"]
    assert api.post(DEPLOYMENTS, body).status == 201
    assert api.get(f"{DEPLOYMENTS}/bare/scale").json["spec"] == {"replicas": 1}


def test_scaling_writes_the_replicas_into_the_deployments_spec(
    api: Api, web: dict[str, Any]
) -> None:
    scaled = api.patch(SCALE, {"spec": {"replicas": 5}}, MERGE)
    assert scaled.status == 200, scaled.body
    assert scaled.json["kind"] == "Scale" and scaled.json["spec"] == {"replicas": 5}
    stored = api.get(WEB).json
    assert stored["spec"]["replicas"] == 5
    assert stored["metadata"]["generation"] == web["metadata"]["generation"] + 1
    assert stored["metadata"]["resourceVersion"] == scaled.json["metadata"]["resourceVersion"]
    assert stored["status"] == {"replicas": 1}  # the status is the controller's
    replaced = api.put(SCALE, scale_body(0))
    assert replaced.status == 200 and replaced.json["spec"] == {}  # Go's omitempty
    assert api.get(WEB).json["spec"]["replicas"] == 0
    # Zero replicas are left out of the Scale, as Go leaves them: a JSON patch adds them.
    replace = [{"op": "replace", "path": "/spec/replicas", "value": 2}]
    assert api.patch(SCALE, replace, JSON_PATCH).status == 422
    add = [{"op": "add", "path": "/spec/replicas", "value": 2}]
    assert api.patch(SCALE, add, JSON_PATCH).json["spec"] == {"replicas": 2}


def test_a_scale_with_a_stale_version_or_another_uid_is_a_conflict(
    api: Api, web: dict[str, Any]
) -> None:
    current = web["metadata"]["resourceVersion"]
    assert api.patch(SCALE, {"spec": {"replicas": 2}}, MERGE).status == 200
    stale = api.put(SCALE, scale_body(3, resourceVersion=current))
    assert message(stale) == (
        409,
        'Operation cannot be fulfilled on deployments.apps "web": the object has been '
        "modified; please apply your changes to the latest version and try again",
    )
    other = api.put(SCALE, scale_body(3, uid="6a3b0f9e-0000-4000-8000-000000000000"))
    assert message(other) == (
        409,
        'Operation cannot be fulfilled on deployments/scale.apps "web": Precondition failed: '
        "UID in precondition: 6a3b0f9e-0000-4000-8000-000000000000, UID in object meta: "
        f"{web['metadata']['uid']}",
    )
    latest = api.get(SCALE).json["metadata"]["resourceVersion"]
    assert api.put(SCALE, scale_body(3, resourceVersion=latest)).status == 200
    assert api.get(WEB).json["spec"]["replicas"] == 3


@pytest.mark.parametrize(
    ("body", "status", "text"),
    [
        (
            scale_body(-1),
            422,
            'Scale.autoscaling "web" is invalid: spec.replicas: Invalid value: -1: must be '
            "greater than or equal to 0",
        ),
        (
            scale_body("three"),
            400,
            'Scale in version "v1" cannot be handled as a Scale: json: cannot unmarshal '
            "string into Go struct field ScaleSpec.spec.replicas of type int32",
        ),
        (
            {**deployment(), "spec": {"replicas": 3}},
            400,
            "the API version in the data (apps/v1) does not match the expected API version "
            "(autoscaling/v1)",
        ),
        ({**scale_body(3), "metadata": {"name": "other"}}, 400, "the name of the object"),
    ],
    ids=["negative", "not-a-number", "not-a-scale", "another-name"],
)
def test_a_bad_scale_is_refused_and_the_deployment_is_unchanged(
    api: Api, web: dict[str, Any], body: dict[str, Any], status: int, text: str
) -> None:
    reply = api.put(SCALE, body)
    assert reply.status == status and reply.json["message"].startswith(text), reply.json
    assert api.get(WEB).json == web


def test_only_the_scaled_kinds_have_a_scale(api: Api) -> None:
    assert message(api.get(f"{DEPLOYMENTS}/nope/scale")) == (
        404,
        'deployments.apps "nope" not found',
    )
    cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cm"}}
    assert api.post("/api/v1/namespaces/default/configmaps", cm).status == 201
    assert api.get("/api/v1/namespaces/default/configmaps/cm/scale").status == 404
    scaled = {i.kind for i in REGISTRY.kinds() if "scale" in i.subresources}
    assert scaled == {"Deployment", "ReplicaSet", "StatefulSet"}


def test_discovery_names_the_scale_kind_for_kubectls_scale_client(api: Api) -> None:
    resources = {r["name"]: r for r in api.get("/apis/apps/v1").json["resources"]}
    assert resources["deployments/scale"] == {
        "name": "deployments/scale",
        "singularName": "",
        "namespaced": True,
        "group": "autoscaling",
        "version": "v1",
        "kind": "Scale",
        "verbs": ["get", "patch", "update"],
    }
    assert resources["deployments/status"]["kind"] == "Deployment"
    aggregated = api.get(
        "/apis",
        headers={"Accept": "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"},
    ).json
    apps = next(g for g in aggregated["items"] if g["metadata"].get("name") == "apps")
    deployments = next(
        r for r in apps["versions"][0]["resources"] if r["resource"] == "deployments"
    )
    assert deployments["subresources"][1] == {
        "subresource": "scale",
        "responseKind": {"group": "autoscaling", "version": "v1", "kind": "Scale"},
        "verbs": ["get", "patch", "update"],
    }


def test_a_scale_as_a_table(api: Api, web: dict[str, Any]) -> None:
    table = api.get(SCALE, headers={"Accept": TABLE}).json
    assert [c["name"] for c in table["columnDefinitions"]] == [
        "Name",
        "Desired",
        "Available",
        "Age",
    ]
    assert table["rows"][0]["cells"][:3] == ["web", 1, 1]


def test_kubectl_scale(api: Api, kubectl: Kubectl, web: dict[str, Any]) -> None:
    scaled = kubectl("scale", "deployment/web", "--replicas=3")
    assert scaled.returncode == 0, scaled.stderr
    assert scaled.stdout == "deployment.apps/web scaled\n"
    assert api.get(WEB).json["spec"]["replicas"] == 3
    # --current-replicas: kubectl reads the Scale, then writes it with its version.
    refused = kubectl("scale", "deployment/web", "--current-replicas=2", "--replicas=4")
    assert refused.returncode != 0
    assert "Expected replicas to be 2, was 3" in refused.stderr
    again = kubectl("scale", "deployment/web", "--current-replicas=3", "--replicas=4")
    assert again.returncode == 0, again.stderr
    assert api.get(WEB).json["spec"]["replicas"] == 4


def test_scale_is_authorized_as_its_own_subresource(secure_api: SecureApi) -> None:
    admin = config.new_client_from_config(str(secure_api.kubeconfig("admin", "system:masters")))
    dora = config.new_client_from_config(str(secure_api.kubeconfig("dora")))
    with admin, dora:
        client.AppsV1Api(admin).create_namespaced_deployment("default", deployment())
        rbac = client.RbacAuthorizationV1Api(admin)
        rbac.create_namespaced_role("default", _role("deployments"))
        rbac.create_namespaced_role_binding("default", _binding())
        apps = client.AppsV1Api(dora)
        with pytest.raises(ApiException) as denied:
            apps.patch_namespaced_deployment_scale("web", "default", {"spec": {"replicas": 2}})
        assert denied.value.status == 403
        assert json.loads(denied.value.body)["message"] == (
            'deployments.apps "web" is forbidden: User "dora" cannot patch resource '
            '"deployments/scale" in API group "apps" in the namespace "default"'
        )
        rbac.replace_namespaced_role("scaler", "default", _role("deployments", "deployments/scale"))
        scale = apps.patch_namespaced_deployment_scale("web", "default", {"spec": {"replicas": 2}})
        assert scale.spec.replicas == 2
        assert apps.read_namespaced_deployment_scale("web", "default").status.selector == "app=web"


def _role(*resources: str) -> dict[str, Any]:
    return {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "Role",
        "metadata": {"name": "scaler", "namespace": "default"},
        "rules": [{"apiGroups": ["apps"], "resources": list(resources), "verbs": ["get", "patch"]}],
    }


def _binding() -> dict[str, Any]:
    return {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "RoleBinding",
        "metadata": {"name": "dora-scales", "namespace": "default"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "scaler"},
        "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "dora"}],
    }
