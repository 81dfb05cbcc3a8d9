"""CustomResourceDefinitions applied to the API server at run time: their names accepted,
their kind served (discovery, CRUD, patch, status, Tables, watch), refused when invalid,
and their custom resources deleted with them. Over HTTP, then with the real kubectl.

The server runs as `fleetwarden up` composes it: a registry of the hub's own, followed by
the store's CRDs, and apiextensions-apiserver's controllers under the real-time driver.
"""

from __future__ import annotations

import copy
import json
import time
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

import pytest
import yaml

from fleetwarden.admission import default_chain
from fleetwarden.api.registry import REGISTRY
from fleetwarden.client import Client
from fleetwarden.controllers.apiextensions import apiextensions_controllers
from fleetwarden.members.agent import simulated_member
from fleetwarden.runtime.clock import RealClock
from fleetwarden.runtime.custom_kinds import CustomKinds
from fleetwarden.runtime.manager import ControllerManager, RealDriver
from fleetwarden.server import Server, create_app
from fleetwarden.store import MemoryStore

from .conftest import Api, Kubectl, Reply

CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
CRONTAB_CRD = f"{CRDS}/crontabs.stable.example.com"
GROUP_VERSION = "/apis/stable.example.com/v1"
CRONTABS = f"{GROUP_VERSION}/namespaces/default/crontabs"
MERGE = "application/merge-patch+json"
JSON_PATCH = "application/json-patch+json"
SMP = "application/strategic-merge-patch+json"
TABLE = "application/json;as=Table;v=v1;g=meta.k8s.io"

T = TypeVar("T")


@pytest.fixture
def api() -> Iterator[Api]:
    """The API server with the hub's registry and the CRD controllers (overrides the
    conftest's, so the kubectl fixture talks to this one)."""
    registry = REGISTRY.overlay()
    store = MemoryStore(kinds=registry.info)
    custom_kinds = CustomKinds(store, registry)
    clock = RealClock()
    manager = ControllerManager(store, clock, registry=registry)
    for controller in apiextensions_controllers():
        manager.add(controller)
    driver = RealDriver(manager)
    app = create_app(store, default_chain(registry), clock)
    server = Server(app)
    server.start()
    driver.start()
    try:
        yield Api(server.url, store, server)
    finally:
        driver.stop()
        server.stop()
        custom_kinds.close()


def eventually(check: Callable[[], T | None], what: str, timeout: float = 10) -> T:
    deadline = time.monotonic() + timeout
    last: T | None = None
    while time.monotonic() < deadline:
        last = check()
        if last:
            return last
        time.sleep(0.02)
    raise AssertionError(f"timed out waiting for {what}; last saw {last!r}")


def crontab_crd(**spec: Any) -> dict[str, Any]:
    """The CronTab CRD of the Kubernetes documentation, with a status subresource."""
    schema = {
        "type": "object",
        "properties": {
            "spec": {
                "type": "object",
                "properties": {
                    "cronSpec": {"type": "string"},
                    "image": {"type": "string"},
                    "replicas": {"type": "integer"},
                },
            },
            "status": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
        },
    }
    version = {
        "name": "v1",
        "served": True,
        "storage": True,
        "schema": {"openAPIV3Schema": schema},
        "subresources": {"status": {}},
        "additionalPrinterColumns": [
            {"name": "Spec", "type": "string", "jsonPath": ".spec.cronSpec"},
            {"name": "Replicas", "type": "integer", "jsonPath": ".spec.replicas"},
            {"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"},
        ],
    }
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "crontabs.stable.example.com"},
        "spec": {
            "group": "stable.example.com",
            "scope": "Namespaced",
            "names": {
                "plural": "crontabs",
                "singular": "crontab",
                "kind": "CronTab",
                "shortNames": ["ct"],
                "categories": ["all"],
            },
            "versions": [version],
            **spec,
        },
    }


def crontab(name: str = "my-new-cron-object", **meta: Any) -> dict[str, Any]:
    return {
        "apiVersion": "stable.example.com/v1",
        "kind": "CronTab",
        "metadata": {"name": name, **meta},
        "spec": {"cronSpec": "* * * * */5", "image": "my-awesome-cron-image", "replicas": 2},
    }


def conditions(api: Api, path: str = CRONTAB_CRD) -> dict[str, tuple[str, str]]:
    status = api.get(path).json.get("status", {})
    return {c["type"]: (c["status"], c["reason"]) for c in status.get("conditions", [])}


def established(api: Api, path: str = CRONTAB_CRD) -> dict[str, Any]:
    """Wait for the CRD to be established; the CRD then."""
    eventually(lambda: conditions(api, path).get("Established", ("",))[0] == "True", "Established")
    crd: dict[str, Any] = api.get(path).json
    return crd


def create_established(api: Api, crd: dict[str, Any] | None = None) -> dict[str, Any]:
    crd = crd or crontab_crd()
    created = api.post(CRDS, crd)
    assert created.status == 201, created.body
    return established(api, f"{CRDS}/{crd['metadata']['name']}")


def reason(reply: Reply) -> tuple[int, str]:
    return reply.status, reply.json.get("message", "")


# --- the definition ------------------------------------------------------------------------


def test_a_crd_gets_its_names_accepted_and_is_established(api: Api) -> None:
    crd = create_established(api)
    status = crd["status"]
    assert status["acceptedNames"] == {
        "plural": "crontabs",
        "singular": "crontab",
        "kind": "CronTab",
        "listKind": "CronTabList",
        "shortNames": ["ct"],
        "categories": ["all"],
    }
    assert status["storedVersions"] == ["v1"]
    assert conditions(api) == {
        "NamesAccepted": ("True", "NoConflicts"),
        "Established": ("True", "InitialNamesAccepted"),
    }
    # The defaults of apiextensions/v1.
    assert crd["spec"]["conversion"] == {"strategy": "None"}
    assert crd["spec"]["names"]["listKind"] == "CronTabList"


def test_discovery_lists_the_kind_once_established(api: Api) -> None:
    assert api.get(GROUP_VERSION).status == 404
    create_established(api)
    resources = {r["name"]: r for r in api.get(GROUP_VERSION).json["resources"]}
    assert resources["crontabs"] == {
        "name": "crontabs",
        "singularName": "crontab",
        "namespaced": True,
        "kind": "CronTab",
        "verbs": ["create", "delete", "deletecollection", "get", "list", "patch", "update",
                  "watch"],
        "shortNames": ["ct"],
        "categories": ["all"],
    }  # fmt: skip
    assert resources["crontabs/status"]["verbs"] == ["get", "patch", "update"]
    group = api.get("/apis/stable.example.com").json
    assert group["preferredVersion"] == {"groupVersion": "stable.example.com/v1", "version": "v1"}
    aggregated = api.get(
        "/apis",
        headers={"Accept": "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"},
    ).json
    (item,) = [i for i in aggregated["items"] if i["metadata"].get("name") == "stable.example.com"]
    (resource,) = item["versions"][0]["resources"]
    assert resource["resource"] == "crontabs" and resource["scope"] == "Namespaced"
    assert resource["subresources"][0]["subresource"] == "status"


def test_openapi_v3_has_the_crds_schema(api: Api) -> None:
    create_established(api)
    index = api.get("/openapi/v3").json["paths"]
    url = index["apis/stable.example.com/v1"]["serverRelativeURL"]
    document = api.get(url).json
    schema = document["components"]["schemas"]["com.example.stable.v1.CronTab"]
    assert schema["properties"]["spec"]["properties"]["replicas"] == {"type": "integer"}
    assert schema["x-kubernetes-group-version-kind"] == [
        {"group": "stable.example.com", "kind": "CronTab", "version": "v1"}
    ]
    assert api.get("/openapi/v2", headers={"Accept": "application/json"}).status == 200


def with_scale(**paths: str) -> Callable[[dict[str, Any]], None]:
    """A change giving the CRD's version a scale subresource with these paths."""
    return lambda crd: crd["spec"]["versions"][0]["subresources"].update(scale=paths)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (
            lambda crd: crd["metadata"].update(name="crontab.stable.example.com"),
            'CustomResourceDefinition.apiextensions.k8s.io "crontab.stable.example.com" is '
            'invalid: metadata.name: Invalid value: "crontab.stable.example.com": must be '
            'spec.names.plural+"."+spec.group',
        ),
        (
            lambda crd: crd["spec"]["versions"][0].update(storage=False),
            "spec.versions: Invalid value: ",
        ),
        (
            lambda crd: crd["spec"]["versions"][0].update(storage=False),
            "must have exactly one version marked as storage version",
        ),
        (
            lambda crd: crd["spec"]["names"].pop("kind"),
            "[spec.names.kind: Required value, spec.names.listKind: Required value]",
        ),
        (
            lambda crd: crd["spec"].update(scope="Global"),
            'spec.scope: Unsupported value: "Global": supported values: "Cluster", "Namespaced"',
        ),
        (
            lambda crd: crd["spec"]["versions"][0].pop("schema"),
            "spec.versions[0].schema.openAPIV3Schema: Required value",
        ),
        (
            lambda crd: crd["spec"]["names"].update(shortNames=["CT"]),
            'spec.names.shortNames[0]: Invalid value: "CT": a DNS-1035 label must consist of '
            "lower case alphanumeric characters or '-', start with an alphabetic character, and "
            "end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for "
            "validation is '[a-z]([-a-z0-9]*[a-z0-9])?')",
        ),
        (
            with_scale(specReplicasPath="spec.replicas", statusReplicasPath=".spec.x"),
            "[spec.versions[0].subresources.scale.specReplicasPath: Invalid value: "
            '"spec.replicas": must be a simple json path starting with ., '
            "spec.versions[0].subresources.scale.statusReplicasPath: Invalid value: "
            '".spec.x": should be a json path under .status]',
        ),
        (
            with_scale(statusReplicasPath=".status.replicas", labelSelectorPath=".metadata.x"),
            "[spec.versions[0].subresources.scale.specReplicasPath: Required value, "
            "spec.versions[0].subresources.scale.labelSelectorPath: Invalid value: "
            '".metadata.x": should be a json path under either .spec or .status]',
        ),
    ],
)
def test_an_invalid_crd_is_refused_in_upstreams_words(
    api: Api, change: Callable[[dict[str, Any]], None], message: str
) -> None:
    crd = crontab_crd()
    change(crd)
    reply = api.post(CRDS, crd)
    assert reply.status == 422
    assert message in reply.json["message"]


def test_names_taken_in_the_group_wait_until_they_are_free(api: Api) -> None:
    create_established(api)
    other = crontab_crd()
    other["metadata"]["name"] = "crontables.stable.example.com"
    other["spec"]["names"] = {"plural": "crontables", "kind": "CronTable", "shortNames": ["ct"]}
    assert api.post(CRDS, other).status == 201
    other_path = f"{CRDS}/crontables.stable.example.com"
    eventually(lambda: "NamesAccepted" in conditions(api, other_path), "NamesAccepted")
    assert conditions(api, other_path) == {
        "NamesAccepted": ("False", "ShortNamesConflict"),
        "Established": ("False", "NotAccepted"),
    }
    message = api.get(other_path).json["status"]["conditions"][0]["message"]
    assert message == '"ct" is already in use'
    assert api.get(f"{GROUP_VERSION}/namespaces/default/crontables").status == 404

    assert api.delete(CRONTAB_CRD).status == 200
    established(api, other_path)  # the short name freed, the other CRD takes it
    assert api.get(f"{GROUP_VERSION}/namespaces/default/crontables").status == 200


# --- its custom resources ------------------------------------------------------------------


def test_custom_resources_are_served_with_crud_patch_and_status(api: Api) -> None:
    create_established(api)
    created = api.post(CRONTABS, crontab())
    assert created.status == 201, created.body
    assert created.json["metadata"]["namespace"] == "default"
    listed = api.get(CRONTABS).json
    assert listed["kind"] == "CronTabList" and len(listed["items"]) == 1
    path = f"{CRONTABS}/my-new-cron-object"

    merged = api.patch(path, {"spec": {"replicas": 3}}, MERGE)
    assert merged.status == 200 and merged.json["spec"]["replicas"] == 3
    patched = api.patch(path, [{"op": "replace", "path": "/spec/image", "value": "v2"}], JSON_PATCH)
    assert patched.status == 200 and patched.json["spec"]["image"] == "v2"
    assert reason(api.patch(path, {"spec": {"replicas": 4}}, SMP)) == (
        415,
        "the body of the request was in an unknown format - accepted media types include: "
        "application/json-patch+json, application/merge-patch+json",
    )

    # The status subresource the CRD declares: status only there, the rest only here.
    ignored = api.patch(path, {"status": {"lastScheduleTime": "now"}}, MERGE)
    assert "status" not in ignored.json
    status = api.patch(f"{path}/status", {"status": {"lastScheduleTime": "now"}}, MERGE)
    assert status.status == 200 and status.json["status"] == {"lastScheduleTime": "now"}

    table = api.get(CRONTABS, headers={"Accept": TABLE}).json
    assert [c["name"] for c in table["columnDefinitions"]] == ["Name", "Spec", "Replicas", "Age"]
    assert table["rows"][0]["cells"][:3] == ["my-new-cron-object", "* * * * */5", 3]

    assert api.delete(path).status == 200
    assert api.get(path).status == 404


def test_a_crd_with_a_scale_subresource_serves_the_scale_of_its_resources(api: Api) -> None:
    crd = crontab_crd()
    crd["spec"]["versions"][0]["subresources"]["scale"] = {
        "specReplicasPath": ".spec.replicas",
        "statusReplicasPath": ".status.replicas",
        "labelSelectorPath": ".status.labelSelector",
    }
    create_established(api, crd)
    groups = api.get("/apis/stable.example.com/v1").json["resources"]
    assert {r["name"]: r.get("kind") for r in groups}["crontabs/scale"] == "Scale"
    created = api.post(CRONTABS, crontab())
    path = f"{CRONTABS}/my-new-cron-object"
    status = {"status": {"replicas": 1, "labelSelector": "app=cron"}}
    assert api.patch(f"{path}/status", status, MERGE).status == 200

    scale = api.get(f"{path}/scale").json
    assert scale["kind"] == "Scale" and scale["apiVersion"] == "autoscaling/v1"
    assert scale["metadata"]["uid"] == created.json["metadata"]["uid"]
    assert scale["spec"] == {"replicas": 2}
    assert scale["status"] == {"replicas": 1, "selector": "app=cron"}
    scaled = api.patch(f"{path}/scale", {"spec": {"replicas": 5}}, MERGE)
    assert scaled.status == 200 and scaled.json["spec"] == {"replicas": 5}
    stored = api.get(path).json
    assert stored["spec"]["replicas"] == 5
    assert stored["metadata"]["resourceVersion"] == scaled.json["metadata"]["resourceVersion"]
    # A Scale takes a strategic merge patch, though its custom resource does not.
    assert api.patch(f"{path}/scale", {"spec": {"replicas": 6}}, SMP).status == 200


def test_a_custom_resource_without_spec_replicas_has_no_scale_until_one_is_given(
    api: Api,
) -> None:
    crd = crontab_crd()
    scale = {"specReplicasPath": ".spec.replicas", "statusReplicasPath": ".status.replicas"}
    crd["spec"]["versions"][0]["subresources"]["scale"] = scale
    create_established(api, crd)
    body = crontab()
    del body["spec"]["replicas"]
    assert api.post(CRONTABS, body).status == 201
    path = f"{CRONTABS}/my-new-cron-object/scale"
    assert reason(api.get(path)) == (
        500,
        'Internal error occurred: the spec replicas field ".spec.replicas" does not exist',
    )
    assert reason(api.patch(path, {"metadata": {"labels": {"a": "b"}}}, MERGE)) == (
        400,
        'the spec replicas field ".spec.replicas" cannot be empty',
    )
    assert api.patch(path, {"spec": {"replicas": 3}}, MERGE).json["spec"] == {"replicas": 3}
    assert api.get(f"{CRONTABS}/my-new-cron-object").json["spec"]["replicas"] == 3


def test_a_custom_resource_of_a_wrong_type_is_refused_with_its_field(api: Api) -> None:
    create_established(api)
    bad = crontab()
    bad["spec"]["replicas"] = "two"
    refused = api.post(CRONTABS, bad)
    assert refused.status == 422
    assert refused.json["message"] == (
        'CronTab.stable.example.com "my-new-cron-object" is invalid: spec.replicas: Invalid '
        'value: "string": spec.replicas in body must be of type integer: "string"'
    )
    assert refused.json["details"]["causes"][0]["field"] == "spec.replicas"


def test_custom_resources_are_defaulted_and_pruned_or_refused_under_strict(api: Api) -> None:
    crd = crontab_crd()
    spec = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]
    spec["properties"]["replicas"]["default"] = 1
    create_established(api, crd)
    given = crontab()
    del given["spec"]["replicas"]
    given["spec"]["color"] = "red"
    strict = api.post(f"{CRONTABS}?fieldValidation=Strict", given)
    assert reason(strict) == (
        400,
        'CronTab in version "v1" cannot be handled as a CronTab: strict decoding error: '
        'unknown field "spec.color"',
    )
    created = api.post(CRONTABS, given)
    assert created.status == 201
    assert created.headers.get("Warning") == '299 - "unknown field \\"spec.color\\""'
    assert created.json["spec"] == {
        "cronSpec": "* * * * */5",
        "image": "my-awesome-cron-image",
        "replicas": 1,
    }


def test_a_kind_without_a_status_subresource_takes_status_in_the_object(api: Api) -> None:
    crd = crontab_crd()
    del crd["spec"]["versions"][0]["subresources"]
    del crd["spec"]["versions"][0]["additionalPrinterColumns"]
    create_established(api, crd)
    assert "crontabs/status" not in {r["name"] for r in api.get(GROUP_VERSION).json["resources"]}
    created = api.post(CRONTABS, {**crontab(), "status": {"active": 1}})
    assert created.json["status"] == {"active": 1}
    assert api.get(f"{CRONTABS}/my-new-cron-object/status").status == 404
    table = api.get(CRONTABS, headers={"Accept": TABLE}).json
    assert [c["name"] for c in table["columnDefinitions"]] == ["Name", "Age"]


def test_a_cluster_scoped_kind_is_served_without_namespace(api: Api) -> None:
    crd = crontab_crd(scope="Cluster")
    create_established(api, crd)
    assert api.post(f"{GROUP_VERSION}/crontabs", crontab()).status == 201
    assert (
        api.get(f"{GROUP_VERSION}/crontabs/my-new-cron-object").json["metadata"].get("namespace")
        is None
    )
    assert api.get(CRONTABS).status == 404


def test_unserved_versions_and_unknown_kinds_are_not_found(api: Api) -> None:
    crd = crontab_crd()
    beta = {**copy.deepcopy(crd["spec"]["versions"][0]), "name": "v1beta1", "served": False}
    beta["storage"] = False
    crd["spec"]["versions"].append(beta)
    create_established(api, crd)
    assert api.get(CRONTABS).status == 200
    assert reason(api.get("/apis/stable.example.com/v1beta1/namespaces/default/crontabs")) == (
        404,
        "the server could not find the requested resource",
    )
    assert api.get("/apis/stable.example.com/v1/namespaces/default/crontables").status == 404
    assert (
        api.post("/apis/other.example.com/v1/namespaces/default/crontabs", crontab()).status == 404
    )


def test_a_watch_sees_custom_resources_come_and_go(api: Api) -> None:
    create_established(api)
    listed = api.get(CRONTABS).json
    conn = api.connection()
    rv = listed["metadata"]["resourceVersion"]
    conn.request("GET", f"{CRONTABS}?watch=true&resourceVersion={rv}")
    response = conn.getresponse()
    api.post(CRONTABS, crontab())
    api.delete(f"{CRONTABS}/my-new-cron-object")
    events = [json.loads(response.readline()) for _ in range(2)]
    conn.close()
    assert [(e["type"], e["object"]["kind"]) for e in events] == [
        ("ADDED", "CronTab"),
        ("DELETED", "CronTab"),
    ]


# --- deleting the definition ---------------------------------------------------------------


def test_deleting_a_crd_deletes_its_custom_resources_first(api: Api) -> None:
    create_established(api)
    api.post(CRONTABS, crontab("plain"))
    api.post(CRONTABS, crontab("held", finalizers=["example.com/hold"]))

    deleted = api.delete(CRONTAB_CRD)
    assert deleted.status == 200
    assert deleted.json["metadata"]["finalizers"] == ["customresourcecleanup.apiextensions.k8s.io"]
    eventually(lambda: api.get(f"{CRONTABS}/plain").status == 404, "the plain one deleted")
    held = api.get(f"{CRONTABS}/held").json
    assert held["metadata"]["deletionTimestamp"]
    assert conditions(api)["Terminating"] == ("True", "InstanceDeletionInProgress")
    # Terminating: no new objects, and discovery says so.
    assert reason(api.post(CRONTABS, crontab("late"))) == (
        403,
        'crontabs.stable.example.com "late" is forbidden: create not allowed while custom '
        "resource definition is terminating",
    )
    verbs = {r["name"]: r["verbs"] for r in api.get(GROUP_VERSION).json["resources"]}
    assert verbs["crontabs"] == ["delete", "deletecollection", "get", "list", "watch"]

    api.patch(f"{CRONTABS}/held", {"metadata": {"finalizers": None}}, MERGE)
    eventually(lambda: api.get(CRONTAB_CRD).status == 404, "the CRD gone", timeout=15)
    assert api.get(CRONTABS).status == 404


def test_deleting_a_crd_of_a_kind_the_hub_serves_itself_leaves_its_objects(api: Api) -> None:
    """Karmada's own CRDs applied to the hub: its kinds are the hub's, and stay."""
    policies = "/apis/policy.karmada.io/v1alpha1/namespaces/default/propagationpolicies"
    policy = {
        "apiVersion": "policy.karmada.io/v1alpha1",
        "kind": "PropagationPolicy",
        "metadata": {"name": "nginx"},
        "spec": {"resourceSelectors": [{"apiVersion": "apps/v1", "kind": "Deployment"}]},
    }
    assert api.post(policies, policy).status == 201
    karmadas = crontab_crd()
    karmadas["metadata"]["name"] = "propagationpolicies.policy.karmada.io"
    karmadas["spec"].update(
        group="policy.karmada.io",
        names={"plural": "propagationpolicies", "kind": "PropagationPolicy", "shortNames": ["pp"]},
    )
    karmadas["spec"]["versions"][0]["name"] = "v1alpha1"
    path = f"{CRDS}/propagationpolicies.policy.karmada.io"
    create_established(api, karmadas)
    assert api.delete(path).status == 200
    eventually(lambda: api.get(path).status == 404, "the CRD gone")
    assert api.get(f"{policies}/nginx").status == 200


# --- clients and member agents ---------------------------------------------------------------


def test_a_client_finds_a_kind_served_since_it_read_discovery(api: Api) -> None:
    with Client(api.url) as client:
        assert client.resolve("crds").kind == "CustomResourceDefinition"
        client.create(crontab_crd())
        established(api)
        assert client.resolve("ct").plural == "crontabs"
        created = client.create({**crontab(), "metadata": {"name": "c", "namespace": "default"}})
        assert created["kind"] == "CronTab"


def test_a_simulated_member_serves_the_kinds_of_its_hubs_crds(api: Api) -> None:
    def served(member: Any) -> set[str]:
        return {e.group_version for e in member.report().api_enablements}

    with Client(api.url) as client:
        member = simulated_member(hub=client)
        assert "apps/v1" in served(member) and "stable.example.com/v1" not in served(member)
        create_established(api)
        assert "stable.example.com/v1" in served(member)
        (enablement,) = [
            e for e in member.report().api_enablements if e.group_version == "stable.example.com/v1"
        ]
        assert enablement.to_dict()["resources"] == [{"name": "crontabs", "kind": "CronTab"}]
        api.server.stop()  # the hub gone: what was read last stands
        assert "stable.example.com/v1" in served(member)


# --- kubectl -------------------------------------------------------------------------------


def test_kubectl_applies_a_crd_and_its_custom_resources(kubectl: Kubectl) -> None:
    applied = kubectl("apply", "-f", "-", stdin=yaml.safe_dump(crontab_crd()))
    assert applied.stdout == (
        "customresourcedefinition.apiextensions.k8s.io/crontabs.stable.example.com created\n"
    ), applied.stderr
    waited = kubectl(
        "wait", "--for", "condition=established", "--timeout=10s",
        "crd/crontabs.stable.example.com",
    )  # fmt: skip
    assert waited.returncode == 0, waited.stderr
    assert kubectl("get", "crontabs").stderr == "No resources found in default namespace.\n"

    watch = kubectl.popen("get", "crontabs", "--watch", "--output-watch-events")
    try:
        created = kubectl("apply", "-f", "-", stdin=yaml.safe_dump(crontab()))
        assert created.stdout == "crontab.stable.example.com/my-new-cron-object created\n"
        assert watch.stdout is not None
        header, added = watch.stdout.readline().split(), watch.stdout.readline().split()
    finally:
        watch.kill()
        watch.communicate()
    assert header == ["EVENT", "NAME", "SPEC", "REPLICAS", "AGE"]
    assert added[:4] == ["ADDED", "my-new-cron-object", "*", "*"]

    got = kubectl("get", "ct")
    assert got.returncode == 0, got.stderr
    rows = [line.split() for line in got.stdout.splitlines()]
    assert rows[0] == ["NAME", "SPEC", "REPLICAS", "AGE"]
    assert rows[1][:7] == ["my-new-cron-object", "*", "*", "*", "*", "*/5", "2"]
    listed = kubectl("get", "crd")
    assert listed.stdout.splitlines()[0].split() == ["NAME", "CREATED", "AT"]

    deleted = kubectl("delete", "crd", "crontabs.stable.example.com")
    assert deleted.returncode == 0, deleted.stderr
    gone = kubectl("get", "crontabs")
    assert gone.returncode != 0
    assert "the server could not find the requested resource" in gone.stderr or (
        'the server doesn\'t have a resource type "crontabs"' in gone.stderr
    )


def test_kubectl_is_told_an_unknown_kind_is_not_served(kubectl: Kubectl) -> None:
    result = kubectl("apply", "-f", "-", stdin=yaml.safe_dump(crontab()))
    assert result.returncode != 0
    assert 'no matches for kind "CronTab" in version "stable.example.com/v1"' in result.stderr
