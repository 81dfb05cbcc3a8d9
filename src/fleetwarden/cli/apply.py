"""`fleetwarden apply -f`: create objects, or bring them in line with their manifests, as
`kubectl apply` does (client-side, with the last-applied-configuration annotation)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

import typer

from fleetwarden.api.errors import StatusError
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
    from fleetwarden.client import Client


def apply(
    filenames: FilenameOption = None,
    namespace: NamespaceOption = None,
    output: Annotated[
        str | None, typer.Option("--output", "-o", help="name: print kind/name only.")
    ] = None,
    kubeconfig: KubeconfigOption = None,
    context: ContextOption = None,
) -> None:
    """Create or update the objects of manifests; report each as created, configured or
    unchanged. Fields the manifests stop setting are removed; fields others set stay."""
    if not filenames:
        fail("must specify one of -f and -k")
    if output not in (None, "name"):
        fail(f'unable to match a printer suitable for the output format "{output}"')
    from fleetwarden.client import ClientError

    errors: list[Exception] = []
    with hub(kubeconfig, context, namespace) as client:
        for source, manifest in list(read_manifests(filenames)):
            try:
                ref, operation = _apply_one(client, manifest, namespace)
            except (StatusError, ClientError) as exc:
                errors.append(with_source(exc, "applying", source))
                continue
            typer.echo(ref if output == "name" else f"{ref} {operation}")
    if errors:
        fail_with(errors)


def _apply_one(client: Client, manifest: dict[str, Any], namespace: str | None) -> tuple[str, str]:
    """`kind.group/name` and what apply did to it."""
    from fleetwarden.client.apply import LAST_APPLIED_ANNOTATION
    from fleetwarden.client.apply import apply as apply_manifest

    info = client.info_for(manifest)
    applied = apply_manifest(client, in_namespace(info, manifest, namespace), info=info)
    name = applied.object["metadata"]["name"]
    if applied.annotation_was_missing:
        resource = f"{info.plural}.{info.group}" if info.group else info.plural
        typer.echo(
            f"Warning: resource {resource}/{name} is missing the {LAST_APPLIED_ANNOTATION} "
            "annotation which is required by fleetwarden apply. fleetwarden apply should only "
            "be used on resources created declaratively by fleetwarden apply. The missing "
            "annotation will be patched automatically.",
            err=True,
        )
    return f"{kind_string(info)}/{name}", applied.operation
