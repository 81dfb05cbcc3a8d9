"""The page of `fleetwarden simulate --html`: one self-contained HTML file, the rendering
bundle and the run's recording inlined, that loads nothing from anywhere when viewed."""

from __future__ import annotations

import json
from importlib.resources import files
from typing import Any

from fleetwarden.sim.recording import Recording

# Nothing the page did not bring: no network at view time, and nothing a hostile string in
# the data could make the browser fetch.
_POLICY = "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:"
# What would end the <script> element or start markup inside it, and the two line
# separators older JavaScript parsers refuse in strings: as JSON escapes, read back the same.
_JSON_ESCAPES = str.maketrans(
    {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028", "\u2029": "\\u2029"}
)


def asset(name: str) -> str:
    return files("fleetwarden.dashboard").joinpath("assets", name).read_text("utf-8")


def script_json(data: Any) -> str:
    """JSON to put inside a <script> element: no `</script>` in it can end the element."""
    return json.dumps(data, separators=(",", ":")).translate(_JSON_ESCAPES)


def render_report(recording: Recording) -> str:
    # The bundle is code: "</script" in it can only be inside a string, a comment or a
    # regular expression, where "<\/script" means the same.
    bundle = asset("report.js").replace("</script", "<\\/script")
    return (
        '<!doctype html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        f'<meta http-equiv="Content-Security-Policy" content="{_POLICY}">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        "<title>fleetwarden simulation</title>\n"
        f"<style>\n{asset('report.css')}</style>\n</head>\n<body>\n"
        '<main id="fleetwarden-report"></main>\n'
        '<script type="application/json" id="fleetwarden-recording">'
        f"{script_json(recording)}</script>\n"
        f"<script>\n{bundle}</script>\n</body>\n</html>\n"
    )
