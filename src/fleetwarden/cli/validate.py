"""`fleetwarden validate`: run objects through the hub's admission chain, offline."""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Annotated, Any

import typer

from fleetwarden.api.errors import DecodeError, Invalid
from fleetwarden.cli.io import load_documents

if TYPE_CHECKING:
    from fleetwarden.api.registry import Registry


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
    from fleetwarden.api.registry import serving_crds

    config = AdmissionConfig(allow_no_execute_taint_policy=allow_no_execute_taint_policy)
    documents = [(path, doc) for path in files for doc in load_documents(path)]
    # The kinds the CRDs given define are served as the hub serves them once established:
    # their objects are pruned, defaulted and validated against the CRD's schema.
    registry = serving_crds(doc for _, doc in documents)
    chain = default_chain(registry)
    refused = 0
    for path, doc in documents:
        unknown = _unknown_kind(doc, registry, path)
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


def _unknown_kind(doc: Mapping[str, Any], registry: Registry, source: str) -> str:
    """kubectl's refusal of a kind no API serves: a misspelled kind, say."""
    api_version, kind = str(doc.get("apiVersion", "")), str(doc.get("kind", ""))
    if registry.get(api_version, kind) is not None:
        return ""
    meta = doc.get("metadata") or {}
    return (
        f"resource mapping not found for name: {json.dumps(meta.get('name', ''))} namespace: "
        f"{json.dumps(meta.get('namespace', ''))} from {json.dumps(source)}: no matches for kind "
        f"{json.dumps(kind)} in version {json.dumps(api_version)}"
    )
