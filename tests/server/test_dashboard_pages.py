"""The dashboard's page and bundle as the API server serves them: to anyone (they carry no
data), with headers that keep the page to its own code and its own origin, while every
path of the API still asks who is there."""

from __future__ import annotations

import json

from fleetwarden.dashboard.pages import POLICY

from .conftest import SecureApi
from .test_security import raw

STRICT = {
    "x-content-type-options": "nosniff",
    "x-frame-options": "DENY",
    "referrer-policy": "no-referrer",
    "cross-origin-opener-policy": "same-origin",
}


def test_the_page_is_served_without_credentials_with_strict_headers(
    secure_api: SecureApi,
) -> None:
    with raw(secure_api) as client:
        for path in ("/", "/dashboard", "/dashboard/"):
            page = client.get(path)
            assert page.status_code == 200, path
            assert page.headers["content-type"] == "text/html; charset=utf-8"
            assert page.headers["content-security-policy"] == POLICY
            assert {k: page.headers[k] for k in STRICT} == STRICT
            assert '<script src="/dashboard/dashboard.js"></script>' in page.text
            assert "<script>" not in page.text  # no inline script
    directives = dict(d.strip().split(" ", 1) for d in POLICY.split(";"))
    assert directives["script-src"] == "'self'"
    assert directives["connect-src"] == "'self'"
    assert directives["default-src"] == "'none'"
    assert directives["frame-ancestors"] == "'none'"


def test_the_bundle_is_served_and_nothing_else_of_the_package(secure_api: SecureApi) -> None:
    with raw(secure_api) as client:
        bundle = client.get("/dashboard/dashboard.js")
        assert bundle.status_code == 200
        assert bundle.headers["content-type"] == "text/javascript; charset=utf-8"
        assert bundle.headers["content-security-policy"] == POLICY
        assert client.get("/dashboard/dashboard.css").headers["content-type"].startswith("text/css")
        for path in (
            "/dashboard/build.json",
            "/dashboard/assets/report.js",
            "/dashboard/nothing.js",
        ):
            assert client.get(path).status_code == 404, path


def test_the_api_still_asks_who_is_there(secure_api: SecureApi) -> None:
    with raw(secure_api) as client:
        assert client.get("/api/v1/namespaces").status_code == 401
        assert client.get("/favicon.ico").status_code == 401
        # Only GET is the page's: a write to `/` is the API's, and refused alike.
        assert client.post("/", content=b"{}").status_code == 401
    with raw(secure_api, headers={"Authorization": "Bearer tok-carol"}) as carol:
        listed = carol.get("/api/v1/namespaces")
        assert listed.status_code == 403
        assert json.loads(listed.text)["message"] == (
            'namespaces is forbidden: User "carol" cannot list resource "namespaces" in API '
            'group "" at the cluster scope'
        )
