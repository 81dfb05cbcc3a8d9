"""Reading manifests and printing objects the way kubectl does."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import typer
import yaml

from fleetwarden.api.codec import load_yaml_documents


def load_documents(path: str) -> Iterator[dict[str, Any]]:
    """Every non-empty YAML document of a file (`-` for standard input)."""
    try:
        text = sys.stdin.read() if path == "-" else Path(path).read_text()
    except OSError as exc:  # missing, a directory, unreadable: one line, as kubectl says it
        raise typer.BadParameter(f"{path}: {exc.strerror or exc}") from None
    try:
        for doc in load_yaml_documents(text):
            if doc is None:
                continue
            if not isinstance(doc, dict):
                raise typer.BadParameter(f"{path}: a document is not an object")
            yield doc
    except (yaml.YAMLError, ValueError) as exc:  # ValueError: codec's bounds, bad timestamps
        raise typer.BadParameter(f"{path}: {exc}") from None


def dump(obj: dict[str, Any], output: str) -> str:
    if output == "json":
        return json.dumps(obj, indent=4)
    return yaml.safe_dump(obj, sort_keys=False)
