"""`fleetwarden validate`: run objects through the hub's admission chain, offline."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated

import typer

from fleetwarden.admission import AdmissionConfig, default_chain
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
    chain = default_chain()
    config = AdmissionConfig(allow_no_execute_taint_policy=allow_no_execute_taint_policy)
    refused = 0
    for path in files:
        for doc in load_documents(path):
            try:
                obj = chain.admit(doc, now=datetime.now(UTC), config=config)
            except (Invalid, DecodeError) as exc:
                refused += 1
                typer.echo(f"{path}: {exc.message}", err=True)
                continue
            typer.echo(f"{path}: {obj.kind} {obj.metadata.name!r} admitted")
    raise typer.Exit(1 if refused else 0)
