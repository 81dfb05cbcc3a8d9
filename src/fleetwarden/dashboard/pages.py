"""The hub's dashboard as the API server serves it: a page at `/` (and `/dashboard/`) and its
bundle under `/dashboard/`, to anyone, since they carry no data. Everything the page shows it
asks the Kubernetes API for, with the credentials of the person signed in, so it never shows
or does more than RBAC lets them.

The headers keep the page to itself: its own scripts and styles only (no inline script),
requests to its own origin only (the API), no framing, no referrer, no sniffing.
"""

from __future__ import annotations

from functools import cache
from importlib.resources import files

from fleetwarden.server.http import Response

PREFIX = "/dashboard/"
_PAGE_PATHS = frozenset({"/", "/dashboard", PREFIX})
# What the page may load and reach: the bundle, and the API of the hub that served it.
POLICY = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)
SECURITY_HEADERS = (
    ("content-security-policy", POLICY),
    ("x-content-type-options", "nosniff"),
    ("x-frame-options", "DENY"),
    ("referrer-policy", "no-referrer"),
    ("cross-origin-opener-policy", "same-origin"),
    ("cross-origin-resource-policy", "same-origin"),
)
_TYPES = {".js": "text/javascript; charset=utf-8", ".css": "text/css; charset=utf-8",
          ".txt": "text/plain; charset=utf-8"}  # fmt: skip
# The icon is empty and inline: without one the browser asks the API for /favicon.ico.
PAGE = f"""<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>fleetwarden</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="{PREFIX}dashboard.css">
</head>
<body>
<main id="fleetwarden-dashboard"></main>
<script src="{PREFIX}dashboard.js"></script>
</body>
</html>
"""


def is_page_request(method: str, path: str) -> bool:
    """Whether a request is for the dashboard (served before any authentication)."""
    return method == "GET" and (path in _PAGE_PATHS or path.startswith(PREFIX))


def page_response(path: str) -> Response:
    """The page, one of its files, or a 404."""
    if path in _PAGE_PATHS:
        response = Response(200, PAGE.encode(), "text/html; charset=utf-8")
    else:
        name = path.removeprefix(PREFIX)
        body = _assets().get(name)
        if body is None:
            response = Response(404, b"404 page not found\n", "text/plain; charset=utf-8")
        else:
            response = Response(200, body, _TYPES[name[name.rfind(".") :]])
    response.headers += SECURITY_HEADERS
    return response


@cache
def _assets() -> dict[str, bytes]:
    """The built bundle's files by name, read once, on the first request for one."""
    directory = files("fleetwarden.dashboard").joinpath("assets")
    return {
        f.name: f.read_bytes()
        for f in directory.iterdir()
        if f.is_file() and f.name[f.name.rfind(".") :] in _TYPES
    }
