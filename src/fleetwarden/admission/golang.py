"""How Go prints what admission quotes back to the user."""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel


def go_quote(text: str) -> str:
    """Go's %q, for the strings met here (encoding/json agrees with it on them)."""
    return json.dumps(text, ensure_ascii=False)


def wire(value: BaseModel | list[Any]) -> Any:
    """A struct given as a field error's value, rendered as Go renders it: as its JSON."""
    if isinstance(value, list):
        return [wire(item) for item in value]
    return value.model_dump(by_alias=True, exclude_unset=True, mode="json")
