"""What the API server does with hostile requests: documents nested too deep or aliased
too much, bodies too large, patches that would write another object, DeleteOptions that
are not valid. Each is refused as kube-apiserver refuses it, and nothing stored changes."""

from __future__ import annotations

import base64
import json
import time

from .conftest import DEPLOYMENTS, Api, Reply, deployment

MERGE = "application/merge-patch+json"
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
        assert time.monotonic() - started < 2
        assert_bad_request(
            reply, "couldn't get version/kind; yaml: document contains excessive aliasing"
        )


def test_a_patch_nested_too_deep_is_refused_and_changes_nothing(api: Api) -> None:
    before = api.post(DEPLOYMENTS, deployment()).json
    deep_patch = b'{"spec": {"x": ' + DEEP + b"}}"
    reply = api.patch(f"{DEPLOYMENTS}/web", deep_patch, MERGE)
    assert_bad_request(reply, "error decoding patch: exceeded max depth of 100")
    assert api.get(f"{DEPLOYMENTS}/web").json == before


def test_a_continue_token_nested_too_deep_is_a_400(api: Api) -> None:
    token = base64.urlsafe_b64encode(b"[" * 5000 + b"]" * 5000).decode().rstrip("=")
    reply = api.get(f"{DEPLOYMENTS}?limit=1&continue={token}")
    assert_bad_request(reply, "invalid continue token: exceeded max depth of 100")


def test_nan_is_not_json(api: Api) -> None:
    body = json.dumps(deployment()).replace('"replicas": 1', '"replicas": NaN').encode()
    reply = api.post(DEPLOYMENTS, body)
    assert_bad_request(
        reply, "couldn't get version/kind; json parse error: invalid character 'N' in JSON: NaN"
    )
