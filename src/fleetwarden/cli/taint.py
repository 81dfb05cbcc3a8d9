"""`fleetwarden taint`: `karmadactl taint` for Clusters, `kubectl taint` for ManagedClusters."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated, Any, NoReturn

import typer

from fleetwarden.admission import default_chain
from fleetwarden.api.errors import NotFound, StatusError
from fleetwarden.api.meta import Resource
from fleetwarden.cli.io import dump, load_documents
from fleetwarden.semantics.taint_edit import KARMADACTL, OCM, TaintCommand, TaintError

# resource names as kubectl resolves them: plural, singular, short name
_RESOURCES: dict[str, tuple[TaintCommand, str, str, str]] = {}
for _names, _entry in (
    (("clusters", "cluster"), (KARMADACTL, "cluster.karmada.io/v1alpha1", "Cluster", "clusters")),
    (
        ("managedclusters", "managedcluster", "mcl", "mcls"),
        (OCM, "cluster.open-cluster-management.io/v1", "ManagedCluster", "managedclusters"),
    ),
):
    for _name in _names:
        _RESOURCES[_name] = _entry


def taint(
    args: Annotated[
        list[str],
        typer.Argument(
            help="RESOURCE NAME... KEY[=VALUE]:EFFECT... | KEY[:EFFECT]-  "
            "(RESOURCE: clusters or managedclusters)"
        ),
    ],
    overwrite: Annotated[
        bool, typer.Option(help="Replace a taint with the same key and effect.")
    ] = False,
    local: Annotated[
        bool, typer.Option(help="Edit the manifest given with -f instead of a hub's objects.")
    ] = False,
    filename: Annotated[
        str | None, typer.Option("--filename", "-f", help="Manifest to edit (with --local).")
    ] = None,
    output: Annotated[
        str | None, typer.Option("--output", "-o", help="Print the result as yaml or json.")
    ] = None,
) -> None:
    """Update the taints on clusters, as `karmadactl taint` / `kubectl taint` do.

    The changed object goes through the hub's admission (NoExecute taints get their
    timeAdded, bad keys and effects are refused with the field named).
    """
    if output not in (None, "yaml", "json"):
        _fail(f'unable to match a printer suitable for the output format "{output}"')
    if not local or filename is None:
        _fail("no hub to talk to yet (it arrives with `fleetwarden up`): use --local -f FILE")
    resource, *rest = args
    if resource not in _RESOURCES:
        _fail(f'the server doesn\'t have a resource type "{resource}"')
    command, api_version, kind, plural = _RESOURCES[resource]
    try:
        request = command.complete([resource, *rest])
        command.validate(request)
        objects = _objects_named(filename, api_version, kind, plural, request.resources[1:])
        for obj in objects:
            admitted = _retaint(obj, command, request, overwrite)
            typer.echo(
                dump(admitted[1].to_dict(), output)
                if output
                else f"{command.kind}/{obj.metadata.name} {admitted[0]}"
            )
    except (TaintError, StatusError) as exc:
        _fail(str(exc))


def _objects_named(
    filename: str, api_version: str, kind: str, plural: str, names: tuple[str, ...]
) -> list[Resource]:
    chain = default_chain()
    now = datetime.now(UTC)
    found = {
        doc.get("metadata", {}).get("name"): chain.admit(doc, now=now)
        for doc in load_documents(filename)
        if doc.get("apiVersion") == api_version and doc.get("kind") == kind
    }
    group = api_version.split("/")[0]
    missing = [n for n in names if n not in found]
    if missing:
        raise NotFound(plural, group, missing[0])
    return [found[n] for n in names]


def _retaint(
    obj: Any, command: TaintCommand, request: Any, overwrite: bool
) -> tuple[str, Resource]:
    update = command.update_taints(obj.metadata.name, obj.spec.taints, request, overwrite=overwrite)
    changed = obj.model_copy(deep=True)
    changed.spec.taints = update.taints
    admitted = default_chain().admit(changed, old=obj, now=datetime.now(UTC))
    return update.operation, admitted


def _fail(message: str) -> NoReturn:
    typer.echo(f"error: {message}", err=True)
    raise typer.Exit(1)
