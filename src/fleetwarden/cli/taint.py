"""`fleetwarden taint`: `karmadactl taint` for Clusters, `kubectl taint` for ManagedClusters.

Against the hub, each cluster is read, its taints edited and written back by a patch that
carries the resourceVersion read, so an edit made meanwhile (the cluster controller's
not-ready taint, say) is never lost: the command reads again and retries. With
`--local -f FILE` it edits a manifest offline instead and prints the admitted result.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from functools import partial
from typing import TYPE_CHECKING, Annotated, Any

import typer

from fleetwarden.api.errors import NotFound, StatusError
from fleetwarden.cli.hub import ContextOption, KubeconfigOption, fail, hub
from fleetwarden.cli.io import dump, load_documents

if TYPE_CHECKING:
    from fleetwarden.admission.chain import AdmissionChain
    from fleetwarden.api.kinds import KindInfo
    from fleetwarden.api.meta import Resource
    from fleetwarden.client import Client
    from fleetwarden.semantics.taint_edit import TaintCommand, TaintRequest


def _cluster_kinds() -> tuple[KindInfo, KindInfo]:
    """Cluster and ManagedCluster: the kinds taint edits."""
    from fleetwarden.api.registry import REGISTRY

    return (
        REGISTRY.info("cluster.karmada.io/v1alpha1", "Cluster"),
        REGISTRY.info("cluster.open-cluster-management.io/v1", "ManagedCluster"),
    )


def _local_names() -> dict[str, KindInfo]:
    """With --local there is no server to resolve names: these are the names it would know."""
    return {
        name: info
        for info in _cluster_kinds()
        for name in (info.plural, info.singular, *info.short_names, f"{info.plural}.{info.group}")
    }


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
    kubeconfig: KubeconfigOption = None,
    context: ContextOption = None,
) -> None:
    """Update the taints on clusters, as `karmadactl taint` / `kubectl taint` do.

    The changed object goes through the hub's admission (NoExecute taints get their
    timeAdded, bad keys and effects are refused with the field named).
    """
    if output not in (None, "yaml", "json"):
        fail(f'unable to match a printer suitable for the output format "{output}"')
    if local != (filename is not None):
        fail("--local and -f FILE go together: --local edits the manifest -f names")
    from fleetwarden.client import retry_on_conflict

    resource, *rest = args
    if filename is not None:
        info = _local_names().get(resource.lower())
        if info is None:
            fail(f'the server doesn\'t have a resource type "{resource}"')
        _taint_manifest(filename, info, [resource, *rest], overwrite, output)
        return
    with hub(kubeconfig, context) as client, _refusals():
        info = client.resolve(resource)
        command, request = _request(info, [resource, *rest])
        for name in request.resources[1:]:
            edit = partial(_taint_on_hub, client, info, name, command, request, overwrite)
            operation, obj = retry_on_conflict(edit)
            _report(command, name, operation, obj, output)


@contextmanager
def _refusals() -> Iterator[None]:
    """The command's own refusals (a bad spec, a taint already there): `error: ...`."""
    from fleetwarden.semantics.taint_edit import TaintError

    try:
        yield
    except TaintError as exc:
        fail(str(exc))


def _request(info: KindInfo, args: list[str]) -> tuple[TaintCommand, TaintRequest]:
    from fleetwarden.semantics.taint_edit import KARMADACTL, OCM

    cluster, managed_cluster = _cluster_kinds()
    # Which dialect of the command edits which kind.
    commands = {cluster.group_kind: KARMADACTL, managed_cluster.group_kind: OCM}
    command = commands.get(info.group_kind)
    if command is None:
        fail(f"invalid resource type {args[0]}, only clusters and managedclusters can be tainted")
    request = command.complete(args)
    command.validate(request)
    return command, request


def _taint_on_hub(
    client: Client,
    info: KindInfo,
    name: str,
    command: TaintCommand,
    request: TaintRequest,
    overwrite: bool,
) -> tuple[str, dict[str, Any]]:
    """One read-edit-write of a cluster's taints; a Conflict means someone wrote between."""
    from fleetwarden.api.core import Taint

    current = client.get(info, name)
    taints = [Taint.model_validate(t) for t in (current.get("spec") or {}).get("taints") or []]
    update = command.update_taints(name, taints, request, overwrite=overwrite)
    patch = {
        "metadata": {"resourceVersion": current["metadata"]["resourceVersion"]},
        "spec": {"taints": [t.to_dict() for t in update.taints]},
    }
    return update.operation, client.patch(info, name, "", patch)


def _taint_manifest(
    filename: str, info: KindInfo, args: list[str], overwrite: bool, output: str | None
) -> None:
    from fleetwarden.admission import default_chain
    from fleetwarden.semantics.taint_edit import TaintError

    try:
        command, request = _request(info, args)
        chain, now = default_chain(), datetime.now(UTC)  # one chain and one time for the run
        for obj in _objects_named(chain, now, filename, info, request.resources[1:]):
            operation, admitted = _retaint(chain, now, obj, command, request, overwrite)
            _report(command, obj.metadata.name, operation, admitted.to_dict(), output)
    except (TaintError, StatusError) as exc:
        fail(str(exc))


def _objects_named(
    chain: AdmissionChain, now: datetime, filename: str, info: KindInfo, names: tuple[str, ...]
) -> list[Resource]:
    found = {
        doc.get("metadata", {}).get("name"): chain.admit(doc, now=now)
        for doc in load_documents(filename)
        if doc.get("apiVersion") == info.api_version and doc.get("kind") == info.kind
    }
    missing = [n for n in names if n not in found]
    if missing:
        raise NotFound(info.plural, info.group, missing[0])
    return [found[n] for n in names]


def _retaint(
    chain: AdmissionChain,
    now: datetime,
    obj: Any,
    command: TaintCommand,
    request: TaintRequest,
    overwrite: bool,
) -> tuple[str, Resource]:
    update = command.update_taints(obj.metadata.name, obj.spec.taints, request, overwrite=overwrite)
    changed = obj.model_copy(deep=True)
    changed.spec.taints = update.taints
    admitted = chain.admit(changed, old=obj, now=now)
    return update.operation, admitted


def _report(
    command: TaintCommand, name: str, operation: str, obj: dict[str, Any], output: str | None
) -> None:
    typer.echo(dump(obj, output) if output else f"{command.kind}/{name} {operation}")
