"""Built-in kinds over HTTP: bad input refused as kube-apiserver refuses it, so that nothing
stored can break a client that reads it back."""

from __future__ import annotations

import base64
from typing import Any

from kubernetes import client

from .conftest import DEPLOYMENTS, Api, deployment

CONFIG_MAPS = "/api/v1/namespaces/default/configmaps"
SECRETS = "/api/v1/namespaces/default/secrets"
MERGE = "application/merge-patch+json"


def config_map(name: str, **fields: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, **fields}


def test_a_config_map_of_the_wrong_shape_is_a_bad_request(api: Api) -> None:
    refused = api.post(CONFIG_MAPS, config_map("bad", data=[1]))
    assert (refused.status, refused.json) == (400, {
        "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
        "message": 'ConfigMap in version "v1" cannot be handled as a ConfigMap: json: cannot '
        "unmarshal array into Go struct field ConfigMap.data of type map[string]string",
        "reason": "BadRequest", "code": 400,
    })  # fmt: skip
    assert api.post(CONFIG_MAPS, config_map("good", data={"a": "1"})).status == 201
    # A patch that breaks the type is refused too (quoting the patched object), and the
    # stored object stays readable.
    patched = api.patch(f"{CONFIG_MAPS}/good", {"data": {"a": 1}}, MERGE)
    assert patched.status == 422
    assert patched.json["message"].startswith(' "" is invalid: patch: Invalid value: "{')
    (cause,) = patched.json["details"]["causes"]
    assert cause["field"] == "patch" and '\\"data\\":{\\"a\\":1}' in cause["message"]
    assert cause["message"].endswith(
        '": json: cannot unmarshal number into Go struct field ConfigMap.data of type string'
    )
    configuration = client.Configuration()
    configuration.host = api.url
    with client.ApiClient(configuration) as api_client:
        listed = client.CoreV1Api(api_client).list_namespaced_config_map("default").items
    assert [(c.metadata.name, c.data) for c in listed] == [("good", {"a": "1"})]


def test_rules_refused_with_422_naming_object_field_and_rule(api: Api) -> None:
    namespace = api.post("/api/v1/namespaces", {"metadata": {"name": "a.b"}})
    assert (namespace.status, namespace.json["message"]) == (
        422,
        'Namespace "a.b" is invalid: metadata.name: Invalid value: "a.b": must not contain dots',
    )
    scaled = deployment()
    scaled["spec"]["replicas"] = -1
    refused = api.post(DEPLOYMENTS, scaled)
    assert refused.status == 422
    assert refused.json["details"] == {
        "name": "web", "group": "apps", "kind": "Deployment",
        "causes": [{"reason": "FieldValueInvalid", "field": "spec.replicas",
                    "message": "Invalid value: -1: must be greater than or equal to 0"}],
    }  # fmt: skip
    huge = api.post(CONFIG_MAPS, config_map("huge", data={"a": "x" * 2_000_000}))
    assert (huge.status, huge.json["message"]) == (
        422,
        'ConfigMap "huge" is invalid: []: Too long: may not be more than 1048576 bytes',
    )
    assert [c["metadata"]["name"] for c in api.get(CONFIG_MAPS).json["items"]] == []


def test_unknown_fields_of_a_built_in_kind_are_dropped_warned_of_or_refused(api: Api) -> None:
    given = deployment()
    given["spec"]["template"]["spec"]["containers"][0]["imagePullPolice"] = "Always"
    strict = api.post(f"{DEPLOYMENTS}?fieldValidation=Strict", given)
    assert (strict.status, strict.json["message"]) == (
        400,
        'Deployment in version "v1" cannot be handled as a Deployment: strict decoding error: '
        'unknown field "spec.template.spec.containers[0].imagePullPolice"',
    )
    created = api.post(DEPLOYMENTS, given)
    assert created.status == 201
    assert created.headers.get_all("warning") == [
        '299 - "unknown field \\"spec.template.spec.containers[0].imagePullPolice\\""'
    ]
    stored = api.get(f"{DEPLOYMENTS}/web").json
    assert stored["spec"]["template"]["spec"]["containers"] == [{"name": "app", "image": "nginx"}]


def test_secret_string_data_is_stored_in_data(api: Api) -> None:
    body = {"metadata": {"name": "creds"}, "stringData": {"password": "s3cret"}}
    created = api.post(SECRETS, body)
    assert created.status == 201
    stored = api.get(f"{SECRETS}/creds").json
    assert stored["data"] == {"password": base64.b64encode(b"s3cret").decode()}
    assert "stringData" not in stored and stored["type"] == "Opaque"
    changed = api.patch(f"{SECRETS}/creds", {"type": "kubernetes.io/tls"}, MERGE)
    assert (changed.status, changed.json["message"]) == (
        422,
        'Secret "creds" is invalid: [type: Invalid value: "kubernetes.io/tls": field is '
        "immutable, data[tls.crt]: Required value, data[tls.key]: Required value]",
    )
