"""What the commands that talk to a hub share: the kubeconfig flags, the client, reading
manifests, and printing errors the way kubectl prints them (exit status 1).

The client (httpx, and the package's every module) is imported where a command uses it,
not here: `fleetwarden --help` and the offline commands never load it.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, NoReturn

import typer

from fleetwarden.api.errors import Invalid, StatusError

if TYPE_CHECKING:
    from fleetwarden.api.kinds import KindInfo
    from fleetwarden.client import Client

KubeconfigOption = Annotated[
    str | None,
    typer.Option(
        "--kubeconfig",
        help="The kubeconfig file (default: the files in $KUBECONFIG, else ~/.kube/config).",
    ),
]
ContextOption = Annotated[
    str | None, typer.Option("--context", help="The kubeconfig context to use.")
]
NamespaceOption = Annotated[
    str | None,
    typer.Option("--namespace", "-n", help="The namespace (default: the context's, or default)."),
]
FilenameOption = Annotated[
    list[str] | None,
    typer.Option("--filename", "-f", help="A manifest file, a directory of them, or - (stdin)."),
]

# What kubectl reads from a directory.
MANIFEST_SUFFIXES = (".json", ".yaml", ".yml")


@contextmanager
def hub(
    kubeconfig: str | None,
    context: str | None,
    namespace: str | None = None,
    *,
    timeout: float | None = 30.0,
) -> Iterator[Client]:
    """A client for the hub the kubeconfig names. An API or client error raised in the
    block ends the command as kubectl ends it."""
    from fleetwarden.client import Client, ClientError, load_kubeconfig

    try:
        config = load_kubeconfig(kubeconfig, context=context, namespace=namespace)
        with Client.from_kubeconfig(config, timeout=timeout) as client:
            yield client
    except (StatusError, ClientError) as exc:
        fail_with([exc])


def fail_with(errors: Sequence[Exception]) -> NoReturn:
    """cmdutil.CheckErr: one error in full, several one line each; exit status 1."""
    if len(errors) == 1:
        typer.echo(error_message(errors[0]), err=True)
    else:
        for exc in errors:
            typer.echo(standard_message(exc), err=True)
    raise typer.Exit(1)


def fail(message: str) -> NoReturn:
    typer.echo(f"error: {message}", err=True)
    raise typer.Exit(1)


def error_message(exc: Exception) -> str:
    """How kubectl prints one error: a 422 as its causes, one per line when several."""
    from fleetwarden.client import ServerError

    if not (isinstance(exc, ServerError) and isinstance(exc, Invalid)):
        return standard_message(exc)
    details = exc.details
    if not details:
        return f"The request is invalid: {exc.message}" if exc.message else "The request is invalid"
    if details.get("kind") or details.get("name"):
        prefix = f"The {details.get('kind', '')} {json.dumps(details.get('name', ''))} is invalid"
    elif not exc.errors and exc.message:
        prefix = f"The request is invalid: {exc.message}"
    else:
        prefix = "The request is invalid"
    causes = list(dict.fromkeys(str(e) for e in exc.errors))
    if not causes:
        return prefix
    if len(causes) == 1:
        return f"{prefix}: {causes[0]}"
    return f"{prefix}: \n" + "\n".join(f"* {cause}" for cause in causes)


def standard_message(exc: Exception) -> str:
    """StandardErrorMessage: `Error from server (Reason): message`, or `error: message`."""
    from fleetwarden.client import ServerUnreachable

    if isinstance(exc, StatusError):
        if exc.reason == "Unauthorized":
            return f"error: You must be logged in to the server ({exc.message})"
        if exc.reason:
            return f"Error from server ({exc.reason}): {exc.message}"
        return f"Error from server: {exc.message}"
    if isinstance(exc, ServerUnreachable):
        return str(exc)
    message = str(exc)
    return message if message.startswith("error: ") else f"error: {message}"


def with_source(exc: Exception, verb: str, source: str) -> Exception:
    """cmdutil.AddSourceToErr: `error when creating "FILE": ...`."""
    from fleetwarden.client.errors import ClientError, ServerError, status_error

    prefix = f"error when {verb} {json.dumps(source)}: "
    if isinstance(exc, ServerError):
        return status_error({**exc.status(), "message": prefix + exc.message})
    return ClientError(prefix + str(exc))


def read_manifests(paths: Sequence[str]) -> Iterator[tuple[str, dict[str, Any]]]:
    """(source, object) for every object of every file: a directory's .json/.yaml/.yml
    files in name order, `-` as STDIN, and the items of a `kind: List` one by one."""
    from fleetwarden.cli.io import load_documents

    for path in paths:
        for file in _files(path):
            source = "STDIN" if file == "-" else file
            for doc in load_documents(file):
                for obj in _flattened(doc):
                    yield source, obj


def _files(path: str) -> list[str]:
    from fleetwarden.client import ClientError

    if path == "-" or Path(path).is_file():
        return [path]
    if not Path(path).exists():
        raise ClientError(f"the path {json.dumps(path)} does not exist")
    return sorted(str(p) for p in Path(path).iterdir() if p.suffix in MANIFEST_SUFFIXES)


def _flattened(doc: dict[str, Any]) -> Iterator[dict[str, Any]]:
    if str(doc.get("kind", "")).endswith("List") and isinstance(doc.get("items"), list):
        for item in doc["items"]:
            yield from _flattened(item)
    else:
        yield doc


def in_namespace(info: KindInfo, manifest: dict[str, Any], namespace: str | None) -> dict[str, Any]:
    """The manifest in the namespace -n names; refused when it names another one."""
    from fleetwarden.client import ClientError

    given = (manifest.get("metadata") or {}).get("namespace")
    if not info.namespaced or namespace is None:
        return manifest
    if given and given != namespace:
        raise ClientError(
            f"the namespace from the provided object {json.dumps(given)} does not match the "
            f"namespace {json.dumps(namespace)}. You must pass '--namespace={given}' to "
            "perform this operation."
        )
    return {**manifest, "metadata": {**(manifest.get("metadata") or {}), "namespace": namespace}}
