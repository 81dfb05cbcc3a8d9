"""`fleetwarden delete`: remove objects named on the command line or in manifests."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Annotated

import typer

from fleetwarden.api.errors import NotFound, StatusError
from fleetwarden.cli.hub import (
    ContextOption,
    FilenameOption,
    KubeconfigOption,
    NamespaceOption,
    fail,
    fail_with,
    hub,
    in_namespace,
    read_manifests,
    with_source,
)
from fleetwarden.cli.printers import kind_string

if TYPE_CHECKING:
    from fleetwarden.api.kinds import KindInfo
    from fleetwarden.client import Client

    # (the resource type, name, namespace, and the file it came from, if any)
    _Target = tuple[KindInfo, str, str, str]


def delete(
    args: Annotated[
        list[str] | None, typer.Argument(help="RESOURCE NAME...: e.g. clusters member1")
    ] = None,
    filenames: FilenameOption = None,
    namespace: NamespaceOption = None,
    ignore_not_found: Annotated[
        bool, typer.Option(help="Treat an object that is not there as deleted.")
    ] = False,
    kubeconfig: KubeconfigOption = None,
    context: ContextOption = None,
) -> None:
    """Delete objects, by type and name or by the manifests that describe them. An object
    with finalizers stays, terminating, until its controllers let it go."""
    if args and filenames:
        fail(
            "when paths, URLs, or stdin is provided as input, you may not specify resource "
            "arguments as well"
        )
    if not args and not filenames:
        fail("You must provide one or more resources by argument or filename.")
    if args and len(args) == 1:
        fail("resource(s) were provided, but no name was specified")
    errors: list[Exception] = []
    found = 0
    with hub(kubeconfig, context, namespace) as client:
        targets = list(_targets(client, args or [], filenames or [], namespace))
        for info, name, ns, source in targets:
            try:
                client.delete(info, name, ns)
            except StatusError as exc:
                if not (ignore_not_found and isinstance(exc, NotFound)):
                    errors.append(with_source(exc, "deleting", source) if source else exc)
                continue
            found += 1
            where = f" from {ns} namespace" if info.namespaced else ""
            typer.echo(f'{kind_string(info)} "{name}" deleted{where}')
    if errors:
        fail_with(errors)
    if not found:
        typer.echo("No resources found")


def _targets(
    client: Client, args: list[str], filenames: list[str], namespace: str | None
) -> Iterator[_Target]:
    from fleetwarden.client import ClientError

    if args:
        info = client.resolve(args[0])
        for name in args[1:]:
            yield info, name, client.namespace if info.namespaced else "", ""
        return
    for source, manifest in read_manifests(filenames):
        try:
            info = client.info_for(manifest)
            obj = client.with_default_namespace(info, in_namespace(info, manifest, namespace))
        except ClientError as exc:
            raise with_source(exc, "deleting", source) from None
        metadata = obj["metadata"]
        yield info, metadata.get("name", ""), metadata.get("namespace", ""), source
