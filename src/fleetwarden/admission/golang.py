"""How Go prints what admission quotes back to the user."""

from __future__ import annotations

import json


def go_quote(text: str) -> str:
    """Go's %q, for the strings met here (encoding/json agrees with it on them)."""
    return json.dumps(text, ensure_ascii=False)
