"""`fleetwarden explain`: why a workload is where it is, cluster by cluster.

Against the hub it reads through the API as the kubeconfig's user, so RBAC decides what it
may read; with `--local -f FILE` it reads what `simulate --dump` wrote instead.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from fleetwarden.cli.hub import ContextOption, KubeconfigOption, NamespaceOption, fail, hub

if TYPE_CHECKING:
    from fleetwarden.explain import Explanation, Source

OUTPUTS = ("text", "json", "yaml")


def explain(
    args: Annotated[
        list[str],
        typer.Argument(
            metavar="TYPE/NAME | TYPE NAME",
            help="A resource template (deployment/nginx), a "
            "resourcebinding, a clusterresourcebinding or an OCM placement.",
        ),
    ],
    namespace: NamespaceOption = None,
    output: Annotated[
        str, typer.Option("--output", "-o", help="text (default), json or yaml.")
    ] = "text",
    local: Annotated[
        bool,
        typer.Option(help="Read the objects of the file -f names instead of a hub's."),
    ] = False,
    filename: Annotated[
        str | None,
        typer.Option(
            "--filename",
            "-f",
            help="With --local: `simulate -o json --dump` output (or its text output, or a "
            "List or YAML documents of objects).",
        ),
    ] = None,
    graceful_eviction_timeout: Annotated[
        str,
        typer.Option(
            help="The hub's graceful-eviction-timeout (not in its API): how long an "
            "eviction task waits for health at most, unless it says otherwise."
        ),
    ] = "10m",
    kubeconfig: KubeconfigOption = None,
    context: ContextOption = None,
) -> None:
    """Why a workload is where it is: every cluster, selected or not and why, in the words
    of the scheduler plugins that decided; the eviction history; what it waits for now."""
    if output not in OUTPUTS:
        fail(f'unknown output format "{output}": use {", ".join(OUTPUTS)}')
    if local != (filename is not None):
        fail("--local and -f FILE go together: --local reads the objects -f names")
    resource, name = _target(args)
    if filename is not None:
        from fleetwarden.explain import DumpSource

        try:
            source = DumpSource.read(filename)
        except (OSError, ValueError) as exc:
            fail(f"{filename}: {exc}")
        _print(
            _explained(source, resource, name, namespace or "default", graceful_eviction_timeout),
            output,
        )
        return
    from fleetwarden.explain import ApiSource

    with hub(kubeconfig, context, namespace) as client:
        explained = _explained(
            ApiSource(client), resource, name, client.namespace, graceful_eviction_timeout
        )
    _print(explained, output)


def _target(args: list[str]) -> tuple[str, str]:
    """kubectl's TYPE/NAME or TYPE NAME, for one object."""
    if len(args) == 1 and "/" in args[0]:
        resource, _, name = args[0].partition("/")
    elif len(args) == 2 and "/" not in args[0]:
        resource, name = args
    else:
        fail("explain one object: TYPE/NAME or TYPE NAME, e.g. deployment/nginx")
    if not resource or not name:
        fail("explain one object: TYPE/NAME or TYPE NAME, e.g. deployment/nginx")
    return resource, name


def _explained(
    source: Source, resource: str, name: str, namespace: str, timeout: str
) -> Explanation:
    from fleetwarden.api.errors import NotFound
    from fleetwarden.client import ResourceTypeNotFound
    from fleetwarden.explain import NotFoundError, explain
    from fleetwarden.semantics.durations import DurationError

    try:
        return explain(source, resource, name, namespace, graceful_eviction_timeout=timeout)
    except DurationError as exc:
        fail(f"invalid --graceful-eviction-timeout: {exc}")
    except ResourceTypeNotFound as exc:
        fail(str(exc))
    except NotFoundError as exc:
        typer.echo(f"Error from server (NotFound): {exc}", err=True)
        raise typer.Exit(1) from None
    except NotFound as exc:  # pragma: no cover - a read that raced a delete
        typer.echo(f"Error from server (NotFound): {exc.message}", err=True)
        raise typer.Exit(1) from None


def _print(explained: Explanation, output: str) -> None:
    if output == "text":
        from fleetwarden.explain.render import to_text

        typer.echo(to_text(explained))
        return
    from fleetwarden.cli.io import dump

    typer.echo(dump(explained.to_dict(), output).rstrip("\n"))
