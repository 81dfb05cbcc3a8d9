"""`fleetwarden validate`: run objects through the hub's admission chain, offline."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from typing import Annotated, Any

import typer

from fleetwarden.api.errors import DecodeError, Invalid
from fleetwarden.cli.io import load_documents


def validate(
    files: Annotated[list[str], typer.Argument(help="YAML files (`-` for stdin).")],
    allow_no_execute_taint_policy: Annotated[
        bool, typer.Option(help="Admit ClusterTaintPolicies with NoExecute taints.")
    ] = False,
) -> None:
    """Check objects against fleetwarden's admission (defaulting and validation), as the hub would.

    Exit status 1 when any object is refused.
    """
    from fleetwarden.admission import AdmissionConfig, default_chain

    chain = default_chain()
    config = AdmissionConfig(allow_no_execute_taint_policy=allow_no_execute_taint_policy)
    documents = [(path, doc) for path in files for doc in load_documents(path)]
    defined = _defined_kinds(doc for _, doc in documents)
    refused = 0
    for path, doc in documents:
        unknown = _unknown_kind(doc, defined, path)
        if unknown:
            refused += 1
            typer.echo(f"error: {unknown}", err=True)
            continue
        try:
            obj = chain.admit(doc, now=datetime.now(UTC), config=config)
        except (Invalid, DecodeError) as exc:
            refused += 1
            typer.echo(f"{path}: {exc.message}", err=True)
            continue
        typer.echo(f"{path}: {obj.kind} {obj.metadata.name!r} admitted")
    raise typer.Exit(1 if refused else 0)


def _defined_kinds(documents: Iterable[Mapping[str, Any]]) -> set[tuple[str, str]]:
    """(apiVersion, kind) of every version the CustomResourceDefinitions given serve."""
    from fleetwarden.api.apiextensions import KIND as CRD

    kinds: set[tuple[str, str]] = set()
    for doc in documents:
        if (doc.get("apiVersion"), doc.get("kind")) != (CRD.api_version, CRD.kind):
            continue
        spec = doc.get("spec") or {}
        kind = (spec.get("names") or {}).get("kind", "")
        for version in spec.get("versions") or []:
            if version.get("served", True):
                kinds.add((f"{spec.get('group', '')}/{version.get('name', '')}", kind))
    return kinds


def _unknown_kind(doc: Mapping[str, Any], defined: set[tuple[str, str]], source: str) -> str:
    """kubectl's refusal of a kind no API serves: a misspelled kind, say."""
    from fleetwarden.api.registry import REGISTRY

    api_version, kind = str(doc.get("apiVersion", "")), str(doc.get("kind", ""))
    if REGISTRY.get(api_version, kind) is not None or (api_version, kind) in defined:
        return ""
    meta = doc.get("metadata") or {}
    return (
        f"resource mapping not found for name: {json.dumps(meta.get('name', ''))} namespace: "
        f"{json.dumps(meta.get('namespace', ''))} from {json.dumps(source)}: no matches for kind "
        f"{json.dumps(kind)} in version {json.dumps(api_version)}"
    )
