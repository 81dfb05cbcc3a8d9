"""What the API server does with hostile requests: documents nested too deep or aliased
too much, bodies too large, patches that would write another object, DeleteOptions that
are not valid. Each is refused as kube-apiserver refuses it, and nothing stored changes."""

from __future__ import annotations

import base64
import contextlib
import json
import threading
import time
from typing import Any

import pytest

from .conftest import DEPLOYMENTS, Api, Kubectl, Reply, deployment

MERGE = "application/merge-patch+json"
JSON_PATCH = "application/json-patch+json"
STRATEGIC = "application/strategic-merge-patch+json"
CONFIGMAPS = "/api/v1/namespaces/{}/configmaps"
SECRETS = "/api/v1/namespaces/{}/secrets"
YAML = "application/yaml"
# 9 levels of 9 aliases: a billion laughs in under 400 bytes.
LAUGHS = "a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n" + "".join(
    f"{new}: &{new} [{', '.join([f'*{old}'] * 9)}]\n"
    for old, new in zip("abcdefgh", "bcdefghi", strict=True)
)
DEEP = b"[" * 100_000 + b"]" * 100_000


def assert_bad_request(reply: Reply, message: str) -> None:
    status = reply.json
    assert (reply.status, status["reason"], status["message"]) == (400, "BadRequest", message)


# --- a patch or update changes the addressed object, no other ------------------------------


def stored(api: Api) -> list[object]:
    """Every ConfigMap and Secret there is, as stored."""
    paths = ("/api/v1/configmaps", "/api/v1/secrets")
    return [item for path in paths for item in api.get(path).json["items"]]


def twins(api: Api) -> None:
    """ConfigMap default/x, and a Secret of the same name and a ConfigMap in team."""
    assert api.post("/api/v1/namespaces", {"metadata": {"name": "team"}}).status == 201
    for path, extra in (
        (CONFIGMAPS.format("default"), {"data": {"a": "1"}}),
        (SECRETS.format("default"), {"data": {"token": "c2VjcmV0"}}),
        (CONFIGMAPS.format("team"), {"data": {"a": "team"}}),
    ):
        assert api.post(path, {"metadata": {"name": "x"}, **extra}).status == 201


def test_a_patch_that_changes_kind_or_api_version_is_refused(api: Api) -> None:
    twins(api)
    before, rv = stored(api), api.store.resource_version
    secret_rv = api.get(f"{SECRETS.format('default')}/x").json["metadata"]["resourceVersion"]
    # Aimed at the Secret: its kind, and its resourceVersion so that a write would succeed.
    to_secret = {"kind": "Secret", "data": {"token": "b3duZWQ="}}
    to_secret["metadata"] = {"resourceVersion": secret_rv}
    for patch, content_type in (
        (to_secret, MERGE),
        ([{"op": "replace", "path": "/kind", "value": "Secret"}], JSON_PATCH),
        ({"apiVersion": "apps/v1"}, MERGE),
    ):
        reply = api.patch(f"{CONFIGMAPS.format('default')}/x", patch, content_type)
        status = reply.json
        assert (reply.status, status["reason"]) == (422, "Invalid"), status
        assert status["message"].startswith(' "" is invalid: patch: Invalid value: "{')
        assert status["details"]["causes"][0]["field"] == "patch"
    assert status["message"].endswith(
        ": the API version in the data (apps/v1) does not match the expected API version (v1)"
    )
    assert (stored(api), api.store.resource_version) == (before, rv)


def test_a_strategic_merge_patch_keeps_the_kind_as_kube_does(api: Api) -> None:
    twins(api)
    secret = api.get(f"{SECRETS.format('default')}/x").json
    patch = {"kind": "Secret", "data": {"b": "2"}}
    reply = api.patch(f"{CONFIGMAPS.format('default')}/x", patch, STRATEGIC)
    assert reply.status == 200, reply.json
    assert (reply.json["kind"], reply.json["data"]) == ("ConfigMap", {"a": "1", "b": "2"})
    assert api.get(f"{SECRETS.format('default')}/x").json == secret


def test_a_patch_or_update_that_moves_the_object_to_another_namespace_is_refused(
    api: Api,
) -> None:
    twins(api)
    before, rv = stored(api), api.store.resource_version
    path = f"{CONFIGMAPS.format('default')}/x"
    team_rv = api.get(f"{CONFIGMAPS.format('team')}/x").json["metadata"]["resourceVersion"]
    moved = {"metadata": {"namespace": "team", "resourceVersion": team_rv}, "data": {"a": "!"}}
    replace = [{"op": "replace", "path": "/metadata/namespace", "value": "team"}]
    for reply in (
        api.patch(path, moved, MERGE),
        api.patch(path, replace, JSON_PATCH),
        api.patch(path, moved, STRATEGIC),
        api.put(path, {"metadata": {"name": "x", **moved["metadata"]}, "data": {"a": "!"}}),
    ):
        assert_bad_request(
            reply,
            "the namespace of the provided object does not match the namespace sent on the request",
        )
    renamed = api.patch(path, {"metadata": {"name": "y"}}, MERGE)
    assert_bad_request(renamed, "the name of the object (y) does not match the name on the URL (x)")
    assert (stored(api), api.store.resource_version) == (before, rv)
    # A patch that removes the namespace leaves the object where the URL says it is.
    cleared = api.patch(path, {"metadata": {"namespace": None}, "data": {"a": "2"}}, MERGE)
    assert (cleared.status, cleared.json["metadata"]["namespace"]) == (200, "default")
    assert api.get(f"{CONFIGMAPS.format('team')}/x").json["data"] == {"a": "team"}


# --- request bodies are read up to kube-apiserver's limit -----------------------------------

LIMIT = 3 * 1024 * 1024


def assert_too_large(reply: Reply) -> None:
    assert reply.status == 413
    assert reply.json == {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": "Request entity too large: limit is 3145728",
        "reason": "RequestEntityTooLarge",
        "code": 413,
    }


def padded(size: int) -> bytes:
    """A ConfigMap's JSON, padded with whitespace to exactly `size` bytes."""
    text = json.dumps({"metadata": {"name": "big"}, "data": {"a": "1"}}).encode()
    return text + b" " * (size - len(text))


def post_while_sending(api: Api, chunks: list[bytes], length: int | None) -> tuple[Reply, int]:
    """POST the chunks (with Content-Length `length`, or chunked if None) from a thread,
    reading the answer meanwhile, as Go's client does: the server may answer and hang up
    before the body is sent. The reply, and how many body bytes were sent."""
    conn = api.connection()
    conn.putrequest("POST", CONFIGMAPS.format("default"))
    conn.putheader("Content-Type", "application/json")
    if length is None:
        conn.putheader("Transfer-Encoding", "chunked")
    else:
        conn.putheader("Content-Length", str(length))
    conn.endheaders()
    sent = [0]

    def send() -> None:
        with contextlib.suppress(OSError):  # the server hung up
            for chunk in chunks:
                conn.send(chunk if length is not None else b"%x\r\n%s\r\n" % (len(chunk), chunk))
                sent[0] += len(chunk)
            if length is None:
                conn.send(b"0\r\n\r\n")

    sender = threading.Thread(target=send, daemon=True)
    sender.start()
    response = conn.getresponse()
    reply = Reply(response.status, response.headers, response.read())
    sender.join(30)
    assert not sender.is_alive()
    conn.close()
    return reply, sent[0]


def test_a_body_of_up_to_3_mib_is_read_and_one_byte_more_is_a_413(api: Api) -> None:
    path = CONFIGMAPS.format("default")
    for length in (LIMIT + 1, None):  # announced, or only counted while read
        reply, _ = post_while_sending(api, [padded(LIMIT + 1)], length)
        assert_too_large(reply)
    assert api.get(f"{path}/big").status == 404
    assert api.post(path, padded(LIMIT)).status == 201


def test_a_body_announced_larger_than_the_limit_is_refused_before_it_is_sent(api: Api) -> None:
    conn = api.connection()
    conn.putrequest("POST", CONFIGMAPS.format("default"))
    conn.putheader("Content-Type", "application/json")
    conn.putheader("Content-Length", str(300 * 1024 * 1024))
    conn.endheaders()
    response = conn.getresponse()  # not one byte of the 300 MB was sent
    assert_too_large(Reply(response.status, response.headers, response.read()))
    assert response.getheader("connection") == "close"
    conn.close()


def test_a_chunked_body_is_refused_once_past_the_limit_without_reading_the_rest(
    api: Api,
) -> None:
    """300 MB sent in chunks with no Content-Length: the server stops reading at 3 MiB,
    answers, and hangs up while the client is still sending."""
    reply, sent = post_while_sending(api, [b" " * 2**20] * 300, None)
    assert_too_large(reply)
    assert sent < 100 * 2**20


# --- documents nested too deep or aliased too much ---------------------------------------


def test_a_body_nested_too_deep_is_a_400_not_a_500(api: Api) -> None:
    for body, content_type, message in (
        (DEEP, "application/json", "json parse error: exceeded max depth of 100"),
        (DEEP, YAML, "yaml: exceeded max depth of 100"),
    ):
        reply = api.post(DEPLOYMENTS, body, content_type=content_type)
        assert_bad_request(reply, f"couldn't get version/kind; {message}")
    assert api.get(DEPLOYMENTS).json["items"] == []


def test_a_yaml_alias_bomb_is_refused_at_once(api: Api) -> None:
    api.post(DEPLOYMENTS, deployment())
    for method, path in (("POST", DEPLOYMENTS), ("PUT", f"{DEPLOYMENTS}/web")):
        started = time.monotonic()
        reply = api.request(method, path, LAUGHS.encode(), content_type=YAML)
        assert time.monotonic() - started < 5  # tens of seconds when it expands
        assert_bad_request(
            reply, "couldn't get version/kind; yaml: document contains excessive aliasing"
        )


def test_a_patch_nested_too_deep_is_refused_and_changes_nothing(api: Api) -> None:
    before = api.post(DEPLOYMENTS, deployment()).json
    deep_patch = b'{"spec": {"x": ' + DEEP + b"}}"
    reply = api.patch(f"{DEPLOYMENTS}/web", deep_patch, MERGE)
    assert_bad_request(reply, "error decoding patch: exceeded max depth of 100")
    assert api.get(f"{DEPLOYMENTS}/web").json == before


def test_a_json_patch_may_not_amplify_the_object(api: Api) -> None:
    """Operations past kube's 10,000 are a 413; copies that double the object past 3 MiB
    and adds that nest values inside each other past the depth bound are a 422, at once."""
    before = api.post(DEPLOYMENTS, deployment()).json
    path = f"{DEPLOYMENTS}/web"
    many = [{"op": "test", "path": "/kind", "value": "Deployment"}] * 10_001
    reply = api.patch(path, many, JSON_PATCH)
    assert (reply.status, reply.json["reason"], reply.json["message"]) == (
        413,
        "RequestEntityTooLarge",
        "Request entity too large: The allowed maximum operations in a JSON patch is 10000, "
        "got 10001",
    )
    doubling = [{"op": "add", "path": "/spec/x", "value": ["y" * 100]}]
    doubling += [{"op": "copy", "from": "/spec/x", "path": "/spec/x/-"}] * 40
    deep = "[" * 60 + "]" * 60
    nesting = [{"op": "add", "path": "/spec/x", "value": json.loads(deep)}]
    nesting += [{"op": "add", "path": "/spec/x" + "/0" * 59, "value": json.loads(deep)}]
    for patch, message in (
        (doubling, "Unable to complete the copy, the accumulated size increase of copy is "),
        (nesting, "exceeded max depth of 100"),
    ):
        started = time.monotonic()
        reply = api.patch(path, patch, JSON_PATCH)
        assert time.monotonic() - started < 5  # tens of seconds when it expands
        assert (reply.status, reply.json["reason"]) == (422, "Invalid")
        assert reply.json["message"].startswith(message)
    assert api.get(path).json == before


def test_a_continue_token_nested_too_deep_is_a_400(api: Api) -> None:
    token = base64.urlsafe_b64encode(b"[" * 5000 + b"]" * 5000).decode().rstrip("=")
    reply = api.get(f"{DEPLOYMENTS}?limit=1&continue={token}")
    assert_bad_request(reply, "invalid continue token: exceeded max depth of 100")


def test_a_label_selector_of_thousands_of_digits_is_a_400(api: Api) -> None:
    many = "9" * 5000  # past int64, and past the digits int() converts at all
    reply = api.get(f"{DEPLOYMENTS}?labelSelector=a>{many}")
    assert reply.status == 400
    assert "the value must be an integer" in reply.json["message"]


def test_nan_is_not_json(api: Api) -> None:
    body = json.dumps(deployment()).replace('"replicas": 1', '"replicas": NaN').encode()
    reply = api.post(DEPLOYMENTS, body)
    assert_bad_request(
        reply, "couldn't get version/kind; json parse error: invalid character 'N' in JSON: NaN"
    )


# --- DeleteOptions -----------------------------------------------------------------------

INVALID = 'DeleteOptions.meta.k8s.io "" is invalid: '
POLICIES = 'supported values: "Foreground", "Background", "Orphan", "nil"'


@pytest.mark.parametrize(
    ("options", "code", "message"),
    [
        ({"propagationPolicy": "Bogus"}, 422,
         f'{INVALID}propagationPolicy: Unsupported value: "Bogus": {POLICIES}'),
        ({"orphanDependents": True, "propagationPolicy": "Orphan"}, 422,
         f'{INVALID}propagationPolicy: Invalid value: "Orphan": orphanDependents and '
         "deletionPropagation cannot be both set"),
        ({"dryRun": ["All", "Foo"]}, 422,
         f'{INVALID}dryRun: Unsupported value: ["All","Foo"]: supported values: "All"'),
        ({"propagationPolicy": "Foreground"}, 422,
         f'{INVALID}propagationPolicy: Unsupported value: "Foreground": supported values: '
         '"Background", "Orphan", "nil"'),
        ({"gracePeriodSeconds": "30"}, 400,
         "json: cannot unmarshal string into Go struct field DeleteOptions.gracePeriodSeconds "
         "of type int64"),
        ({"gracePeriodSeconds": 1.5}, 400,
         "json: cannot unmarshal number 1.5 into Go struct field "
         "DeleteOptions.gracePeriodSeconds of type int64"),
        ({"orphanDependents": "yes"}, 400,
         "json: cannot unmarshal string into Go struct field DeleteOptions.orphanDependents of "
         "type bool"),
        ({"dryRun": "All"}, 400,
         "json: cannot unmarshal string into Go struct field DeleteOptions.dryRun of type "
         "[]string"),
        ({"preconditions": ["uid"]}, 400,
         "json: cannot unmarshal array into Go struct field DeleteOptions.preconditions of "
         "type v1.Preconditions"),
        ({"preconditions": {"uid": 5}}, 400,
         "json: cannot unmarshal number into Go struct field Preconditions.preconditions.uid "
         "of type types.UID"),
        ({"kind": "Pod", "apiVersion": "v1"}, 400,
         "decoded object cannot be converted to DeleteOptions"),
        (["Orphan"], 400, "the body of a delete request must be a DeleteOptions object"),
        (b"{not json", 400,
         "couldn't get version/kind; json parse error: Expecting property name enclosed in "
         "double quotes: line 1 column 2 (char 1)"),
    ],
    ids=["policy", "policy-and-orphan", "dry-run", "foreground", "grace-string",
         "grace-fraction", "orphan-string", "dry-run-string", "preconditions-array",
         "precondition-uid-number", "another-kind", "not-an-object", "not-json"],
)  # fmt: skip
def test_invalid_delete_options_are_refused_and_the_object_stays(
    api: Api, options: Any, code: int, message: str
) -> None:
    created = api.post(DEPLOYMENTS, deployment()).json
    for path in (f"{DEPLOYMENTS}/web", DEPLOYMENTS):  # one object, and a collection
        reply = api.delete(path, options)
        assert (reply.status, reply.json["message"]) == (code, message)
        assert reply.json["reason"] == ("Invalid" if code == 422 else "BadRequest")
    assert api.get(f"{DEPLOYMENTS}/web").json == created


@pytest.mark.parametrize(
    ("query", "code", "message"),
    [
        ("propagationPolicy=Bogus", 422,
         f'{INVALID}propagationPolicy: Unsupported value: "Bogus": {POLICIES}'),
        ("dryRun=Foo", 422, f'{INVALID}dryRun: Unsupported value: ["Foo"]: supported values: "All"'),
        ("gracePeriodSeconds=soon", 400,
         "invalid value for query parameter \"gracePeriodSeconds\": 'soon' is not an integer"),
    ],
    ids=["policy", "dry-run", "grace"],
)  # fmt: skip
def test_invalid_delete_options_in_the_query_are_refused(
    api: Api, query: str, code: int, message: str
) -> None:
    api.post(DEPLOYMENTS, deployment())
    reply = api.delete(f"{DEPLOYMENTS}/web?{query}")
    assert (reply.status, reply.json["message"]) == (code, message)
    assert api.get(f"{DEPLOYMENTS}/web").status == 200


def owner_and_dependent(api: Api) -> str:
    """ConfigMap `owner`, and ConfigMap `dependent` it owns; returns the owner's uid."""
    path = CONFIGMAPS.format("default")
    uid: str = api.post(path, {"metadata": {"name": "owner"}}).json["metadata"]["uid"]
    ref = {"apiVersion": "v1", "kind": "ConfigMap", "name": "owner", "uid": uid}
    dependent = {"metadata": {"name": "dependent", "ownerReferences": [ref]}}
    assert api.post(path, dependent).status == 201
    return uid


@pytest.mark.parametrize(
    ("options", "orphaned"),
    [
        (None, False),
        ({"propagationPolicy": "Background", "gracePeriodSeconds": -5}, False),
        ({"propagationPolicy": "Orphan"}, True),
        ({"kind": "DeleteOptions", "apiVersion": "v1", "orphanDependents": True}, True),
        ("?propagationPolicy=Orphan", True),
    ],
    ids=["default", "background", "orphan", "orphan-dependents", "orphan-in-query"],
)
def test_delete_propagation_collects_or_orphans_the_dependents(
    api: Api, options: Any, orphaned: bool
) -> None:
    owner_and_dependent(api)
    path = f"{CONFIGMAPS.format('default')}/owner"
    query = options if isinstance(options, str) else ""
    body = None if isinstance(options, str) else options
    assert api.delete(path + query, body).status == 200
    assert api.get(path).status == 404
    dependent = api.get(f"{CONFIGMAPS.format('default')}/dependent")
    if orphaned:
        assert dependent.status == 200 and "ownerReferences" not in dependent.json["metadata"]
    else:
        assert dependent.status == 404


def test_delete_preconditions_are_checked_as_kube_checks_them(api: Api) -> None:
    created = api.post(DEPLOYMENTS, deployment()).json
    uid, rv = created["metadata"]["uid"], created["metadata"]["resourceVersion"]
    for preconditions, message in (
        ({"uid": "other"}, f"the UID in the precondition (other) does not match the UID in "
         f"record ({uid}). The object might have been deleted and then recreated"),
        ({"uid": ""}, f"the UID in the precondition () does not match the UID in record "
         f"({uid}). The object might have been deleted and then recreated"),
        ({"uid": uid, "resourceVersion": "1"}, f"the ResourceVersion in the precondition (1) "
         f"does not match the ResourceVersion in record ({rv}). The object might have been "
         "modified"),
    ):  # fmt: skip
        reply = api.delete(f"{DEPLOYMENTS}/web", {"preconditions": preconditions})
        assert (reply.status, reply.json["reason"]) == (409, "Conflict")
        assert reply.json["message"] == (
            f'Operation cannot be fulfilled on Deployment.apps "web": {message}'
        )
    exact = {"preconditions": {"uid": uid, "resourceVersion": rv}}
    assert api.delete(f"{DEPLOYMENTS}/web", exact).status == 200


def test_kubectl_delete_cascade(api: Api, kubectl: Kubectl) -> None:
    owner_and_dependent(api)
    foreground = kubectl("delete", "configmap", "owner", "--cascade=foreground")
    assert foreground.returncode == 1
    assert 'propagationPolicy: Unsupported value: "Foreground"' in foreground.stderr
    orphan = kubectl("delete", "configmap", "owner", "--cascade=orphan")
    assert orphan.stdout == 'configmap "owner" deleted\n', orphan.stderr
    assert kubectl("get", "configmap", "dependent", "-o", "name").stdout == (
        "configmap/dependent\n"
    )
