"""The REST verbs over HTTP: admission, conflicts, the status subresource, deletion, and the
Status objects every error comes back as."""

from __future__ import annotations

from typing import Any

from .conftest import CLUSTERS, DEPLOYMENTS, Api, cluster, deployment

MERGE = "application/merge-patch+json"
JSON_PATCH = "application/json-patch+json"


def test_create_get_list_and_the_created_object(api: Api) -> None:
    created = api.post(CLUSTERS, cluster())
    assert created.status == 201
    obj = created.json
    assert obj["metadata"]["uid"] and obj["metadata"]["resourceVersion"]
    assert api.get(f"{CLUSTERS}/member1").json == obj
    listed = api.get(CLUSTERS).json
    assert listed["kind"] == "ClusterList"
    assert listed["apiVersion"] == "cluster.karmada.io/v1alpha1"
    assert [o["metadata"]["name"] for o in listed["items"]] == ["member1"]
    assert int(listed["metadata"]["resourceVersion"]) >= int(obj["metadata"]["resourceVersion"])


def test_create_goes_through_admission_defaulting(api: Api) -> None:
    policy = {
        "apiVersion": "policy.karmada.io/v1alpha1",
        "kind": "PropagationPolicy",
        "metadata": {"name": "nginx"},
        "spec": {"resourceSelectors": [{"apiVersion": "apps/v1", "kind": "Deployment"}]},
    }
    created = api.post(
        "/apis/policy.karmada.io/v1alpha1/namespaces/default/propagationpolicies", policy
    )
    assert created.status == 201, created.json
    assert created.json["metadata"]["namespace"] == "default"
    # karmada-webhook's defaulting: the policy gets its placement's default spread.
    assert created.json["spec"] != policy["spec"]


def test_a_refused_object_is_a_422_naming_each_field(api: Api) -> None:
    bad = cluster("member1", taints=[{"key": "a", "effect": "NoRun"}])
    reply = api.post(CLUSTERS, bad)
    assert reply.status == 422
    status = reply.json
    assert status["kind"] == "Status" and status["reason"] == "Invalid" and status["code"] == 422
    assert status["message"].startswith('Cluster.cluster.karmada.io "member1" is invalid: ')
    assert status["details"]["name"] == "member1"
    assert status["details"]["group"] == "cluster.karmada.io"
    cause = status["details"]["causes"][0]
    assert cause["field"] == "spec.taints[0].effect"
    assert cause["reason"] == "FieldValueNotSupported"
    assert cause["message"].startswith('Unsupported value: "NoRun"')
    assert api.get(f"{CLUSTERS}/member1").status == 404


def test_errors_are_status_objects_with_the_api_servers_words(api: Api) -> None:
    missing = api.get(f"{CLUSTERS}/nope")
    assert (missing.status, missing.json["reason"]) == (404, "NotFound")
    assert missing.json["message"] == 'clusters.cluster.karmada.io "nope" not found'
    api.post(CLUSTERS, cluster())
    again = api.post(CLUSTERS, cluster())
    assert (again.status, again.json["reason"]) == (409, "AlreadyExists")
    assert again.json["message"] == 'clusters.cluster.karmada.io "member1" already exists'
    garbage = api.post(CLUSTERS, b"{not json")
    assert (garbage.status, garbage.json["reason"]) == (400, "BadRequest")
    assert api.put(CLUSTERS, cluster()).status == 405
    assert api.request("POST", f"{CLUSTERS}/member1", cluster()).status == 405
    protobuf = api.post(CLUSTERS, b"k8s\x00", content_type="application/vnd.kubernetes.protobuf")
    assert protobuf.status == 415
    table_only = api.get(CLUSTERS, headers={"Accept": "application/vnd.kubernetes.protobuf"})
    assert (table_only.status, table_only.json["reason"]) == (406, "NotAcceptable")


def test_yaml_in_and_out(api: Api) -> None:
    body = b"apiVersion: cluster.karmada.io/v1alpha1\nkind: Cluster\nmetadata:\n  name: m2\nspec:\n  syncMode: Pull\n"
    assert api.post(CLUSTERS, body, content_type="application/yaml").status == 201
    reply = api.get(f"{CLUSTERS}/m2", headers={"Accept": "application/yaml"})
    assert reply.content_type == "application/yaml"
    assert b"syncMode: Pull" in reply.body


def test_create_in_a_missing_namespace_is_not_found(api: Api) -> None:
    reply = api.post("/apis/apps/v1/namespaces/nope/deployments", deployment(namespace="nope"))
    assert reply.status == 404
    assert reply.json["message"] == 'namespaces "nope" not found'


def test_create_in_a_terminating_namespace_is_forbidden_naming_the_new_object(api: Api) -> None:
    held = {"metadata": {"name": "going", "finalizers": ["example.com/hold"]}}
    assert api.post("/api/v1/namespaces", held).status == 201
    assert api.delete("/api/v1/namespaces/going").status in (200, 202)
    reply = api.post("/apis/apps/v1/namespaces/going/deployments", deployment(namespace="going"))
    assert (reply.status, reply.json["reason"]) == (403, "Forbidden")
    assert reply.json["message"] == (
        'deployments.apps "web" is forbidden: unable to create new content in namespace going '
        "because it is being terminated"
    )


def test_the_system_namespaces_exist_are_active_and_stay(api: Api) -> None:
    names = {ns["metadata"]["name"]: ns for ns in api.get("/api/v1/namespaces").json["items"]}
    assert set(names) == {"default", "kube-system", "kube-public"}
    assert names["default"]["status"] == {"phase": "Active"}
    refused = api.delete("/api/v1/namespaces/default")
    assert (refused.status, refused.json["reason"]) == (403, "Forbidden")
    created = api.post("/api/v1/namespaces", {"metadata": {"name": "team"}})
    assert created.json["status"] == {"phase": "Active"}


def test_body_must_match_the_url(api: Api) -> None:
    elsewhere = api.post(DEPLOYMENTS, deployment(namespace="kube-system"))
    assert elsewhere.status == 400
    assert "does not match the namespace" in elsewhere.json["message"]
    wrong_kind = api.post(DEPLOYMENTS, {**deployment(), "kind": "StatefulSet"})
    assert wrong_kind.status == 400
    api.post(DEPLOYMENTS, deployment())
    renamed = api.put(f"{DEPLOYMENTS}/web", deployment("other"))
    assert renamed.status == 400
    assert (
        renamed.json["message"]
        == "the name of the object (other) does not match the name on the URL (web)"
    )


def test_update_with_a_stale_resource_version_is_a_conflict(api: Api) -> None:
    created = api.post(CLUSTERS, cluster()).json
    first = {**created, "spec": {**created["spec"], "region": "eu"}}
    assert api.put(f"{CLUSTERS}/member1", first).status == 200
    stale = {**created, "spec": {**created["spec"], "region": "us"}}
    reply = api.put(f"{CLUSTERS}/member1", stale)
    assert (reply.status, reply.json["reason"]) == (409, "Conflict")
    assert reply.json["message"] == (
        'Operation cannot be fulfilled on clusters.cluster.karmada.io "member1": the object has '
        "been modified; please apply your changes to the latest version and try again"
    )
    unconditional = {**stale, "metadata": {"name": "member1"}}
    assert api.put(f"{CLUSTERS}/member1", unconditional).json["spec"]["region"] == "us"


def test_updates_are_admitted_against_the_stored_object(api: Api) -> None:
    created = api.post(CLUSTERS, cluster()).json
    bad = {**created, "spec": {**created["spec"], "taints": [{"key": "k", "effect": "NoRun"}]}}
    reply = api.put(f"{CLUSTERS}/member1", bad)
    assert reply.status == 422
    assert reply.json["details"]["causes"][0]["field"] == "spec.taints[0].effect"


def test_merge_and_json_patches(api: Api) -> None:
    api.post(CLUSTERS, cluster())
    merged = api.patch(f"{CLUSTERS}/member1", {"metadata": {"labels": {"env": "prod"}}}, MERGE)
    assert merged.status == 200
    assert merged.json["metadata"]["labels"] == {"env": "prod"}
    ops = [
        {"op": "add", "path": "/spec/region", "value": "eu"},
        {"op": "remove", "path": "/metadata/labels"},
    ]
    patched = api.patch(f"{CLUSTERS}/member1", ops, JSON_PATCH).json
    assert patched["spec"]["region"] == "eu" and "labels" not in patched["metadata"]
    failed = api.patch(
        f"{CLUSTERS}/member1", [{"op": "test", "path": "/spec/region", "value": "us"}], JSON_PATCH
    )
    assert failed.status == 422
    stale = api.patch(f"{CLUSTERS}/member1", {"metadata": {"resourceVersion": "1"}}, MERGE)
    assert stale.status == 409
    refused = api.patch(
        f"{CLUSTERS}/member1", {"spec": {"taints": [{"key": "k", "effect": "NoRun"}]}}, MERGE
    )
    assert refused.status == 422
    assert api.patch(f"{CLUSTERS}/member1", {}, "application/apply-patch+yaml").status == 415


def test_status_subresource(api: Api) -> None:
    api.post(CLUSTERS, {**cluster(), "status": {"kubernetesVersion": "ignored on create"}})
    stored = api.get(f"{CLUSTERS}/member1/status").json
    assert "status" not in stored
    with_status = {
        **stored,
        "spec": {"syncMode": "Pull"},
        "status": {"kubernetesVersion": "v1.31.0"},
    }
    updated = api.put(f"{CLUSTERS}/member1/status", with_status).json
    assert updated["status"] == {"kubernetesVersion": "v1.31.0"}
    assert updated["spec"]["syncMode"] == "Push"  # only the status is written there
    patched = api.patch(
        f"{CLUSTERS}/member1/status", {"status": {"kubernetesVersion": "v1.32.0"}}, MERGE
    )
    assert patched.json["status"]["kubernetesVersion"] == "v1.32.0"
    # The main resource leaves the status alone.
    spec_only = api.patch(f"{CLUSTERS}/member1", {"status": {"kubernetesVersion": "x"}}, MERGE).json
    assert spec_only["status"]["kubernetesVersion"] == "v1.32.0"
    assert api.get("/api/v1/namespaces/default/events/x/status").status == 404


def test_delete_waits_for_finalizers(api: Api) -> None:
    created = api.post(
        CLUSTERS, {**cluster(), "metadata": {"name": "member1", "finalizers": ["test/hold"]}}
    ).json
    terminating = api.delete(f"{CLUSTERS}/member1")
    assert terminating.status == 200
    assert terminating.json["metadata"]["deletionTimestamp"]
    assert api.get(f"{CLUSTERS}/member1").json["metadata"]["deletionTimestamp"]
    released = api.patch(f"{CLUSTERS}/member1", {"metadata": {"finalizers": None}}, MERGE)
    assert released.status == 200
    assert api.get(f"{CLUSTERS}/member1").status == 404
    assert created["metadata"]["uid"] == released.json["metadata"]["uid"]


def test_delete_answers_a_status_for_built_in_kinds_and_the_object_for_custom_ones(
    api: Api,
) -> None:
    deployed = api.post(DEPLOYMENTS, deployment()).json
    status = api.delete(f"{DEPLOYMENTS}/web").json
    assert status["kind"] == "Status" and status["status"] == "Success"
    assert status["details"] == {
        "name": "web",
        "group": "apps",
        "kind": "deployments",
        "uid": deployed["metadata"]["uid"],
    }
    api.post(CLUSTERS, cluster())
    assert api.delete(f"{CLUSTERS}/member1").json["kind"] == "Cluster"
    assert api.delete(f"{CLUSTERS}/member1").status == 404


def test_delete_preconditions(api: Api) -> None:
    api.post(CLUSTERS, cluster())
    reply = api.delete(f"{CLUSTERS}/member1", {"preconditions": {"uid": "other"}})
    assert reply.status == 409
    assert "the UID in the precondition (other) does not match" in reply.json["message"]
    assert api.get(f"{CLUSTERS}/member1").status == 200


def test_delete_collection_with_a_selector(api: Api) -> None:
    for name, tier in (("a", "web"), ("b", "web"), ("c", "db")):
        api.post(DEPLOYMENTS, deployment(name, tier=tier))
    reply = api.delete(f"{DEPLOYMENTS}?labelSelector=tier%3Dweb")
    assert reply.status == 200
    left = api.get(DEPLOYMENTS).json["items"]
    assert [d["metadata"]["name"] for d in left] == ["c"]


def test_dry_run_changes_nothing(api: Api) -> None:
    dry = api.post(f"{CLUSTERS}?dryRun=All", cluster())
    assert dry.status == 201 and dry.json["metadata"]["name"] == "member1"
    assert api.get(f"{CLUSTERS}/member1").status == 404
    api.post(CLUSTERS, cluster())
    patched = api.patch(f"{CLUSTERS}/member1?dryRun=All", {"spec": {"region": "eu"}}, MERGE)
    assert patched.json["spec"]["region"] == "eu"
    assert "region" not in api.get(f"{CLUSTERS}/member1").json["spec"]
    assert api.delete(f"{CLUSTERS}/member1", {"dryRun": ["All"]}).status == 200
    assert api.get(f"{CLUSTERS}/member1").status == 200
    assert api.post(f"{CLUSTERS}?dryRun=Some", cluster("m2")).status == 400


def test_field_validation(api: Api) -> None:
    unknown = cluster()
    unknown["spec"]["colour"] = "blue"
    strict = api.post(f"{CLUSTERS}?fieldValidation=Strict", unknown)
    assert strict.status == 400
    assert strict.json["message"] == (
        'Cluster in version "v1alpha1" cannot be handled as a Cluster: strict decoding error: '
        'unknown field "spec.colour"'
    )
    warned = api.post(CLUSTERS, unknown)
    assert warned.status == 201
    assert warned.headers.get_all("warning") == ['299 - "unknown field \\"spec.colour\\""']
    ignored = api.post(f"{CLUSTERS}?fieldValidation=Ignore", cluster("m2") | {"extra": 1})
    assert ignored.status == 201 and ignored.headers.get("warning") is None
    # Warned of or not, what the schema does not declare is not stored, as the CRD prunes it.
    assert "colour" not in api.get(f"{CLUSTERS}/member1").json["spec"]
    assert "extra" not in api.get(f"{CLUSTERS}/m2").json


def list_names(api: Api, path: str) -> list[str]:
    return [o["metadata"]["name"] for o in api.get(path).json["items"]]


def test_list_selectors_and_pages(api: Api) -> None:
    api.post("/api/v1/namespaces", {"metadata": {"name": "team"}})
    for name, namespace, tier in (
        ("a", "default", "web"),
        ("b", "default", "db"),
        ("c", "team", "web"),
    ):
        api.post(
            f"/apis/apps/v1/namespaces/{namespace}/deployments",
            deployment(name, namespace, tier=tier),
        )
    assert list_names(api, "/apis/apps/v1/deployments") == ["a", "b", "c"]
    assert list_names(api, "/apis/apps/v1/deployments?labelSelector=tier%3Dweb") == ["a", "c"]
    assert list_names(api, "/apis/apps/v1/deployments?fieldSelector=metadata.namespace%3Dteam") == [
        "c"
    ]
    assert list_names(api, DEPLOYMENTS) == ["a", "b"]
    first: Any = api.get("/apis/apps/v1/deployments?limit=2").json
    assert [o["metadata"]["name"] for o in first["items"]] == ["a", "b"]
    assert first["metadata"]["remainingItemCount"] == 1
    token = first["metadata"]["continue"]
    rest = api.get(f"/apis/apps/v1/deployments?limit=2&continue={token}").json
    assert [o["metadata"]["name"] for o in rest["items"]] == ["c"]
    assert "continue" not in rest["metadata"]
    bad = api.get("/apis/apps/v1/deployments?labelSelector=a%20in")
    assert bad.status == 400
