"""`fleetwarden get`: the hub's objects as `kubectl get` shows them."""

from __future__ import annotations

import math
from collections.abc import Iterable
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Annotated, Any

import typer

from fleetwarden.api.errors import StatusError
from fleetwarden.cli.hub import (
    ContextOption,
    KubeconfigOption,
    NamespaceOption,
    fail,
    fail_with,
    hub,
)
from fleetwarden.cli.io import dump
from fleetwarden.cli.printers import TablePrinter, kind_string, object_table
from fleetwarden.semantics.durations import DurationError, parse_duration

if TYPE_CHECKING:
    from fleetwarden.api.kinds import KindInfo
    from fleetwarden.client import Client

Obj = dict[str, Any]
OUTPUTS = ("json", "name", "wide", "yaml")


def get(
    resource: Annotated[
        str,
        typer.Argument(
            help="The resource type: clusters, cluster, mcl, deploy, "
            "managedclusters.cluster.open-cluster-management.io..."
        ),
    ],
    names: Annotated[
        list[str] | None, typer.Argument(help="Objects to show (default: all).")
    ] = None,
    namespace: NamespaceOption = None,
    all_namespaces: Annotated[
        bool, typer.Option("--all-namespaces", "-A", help="List across every namespace.")
    ] = False,
    selector: Annotated[
        str | None, typer.Option("--selector", "-l", help="A label selector, e.g. env=prod.")
    ] = None,
    output: Annotated[
        str | None, typer.Option("--output", "-o", help="yaml, json, wide or name.")
    ] = None,
    watch: Annotated[
        bool, typer.Option("--watch", "-w", help="After listing, print each change.")
    ] = False,
    request_timeout: Annotated[
        str,
        typer.Option(
            help="How long to wait for an answer, e.g. 30s; a watch ends after it. "
            "0 waits for ever."
        ),
    ] = "0",
    kubeconfig: KubeconfigOption = None,
    context: ContextOption = None,
) -> None:
    """Show objects of the hub: a table (NAME, AGE and the kind's columns), or yaml, json,
    names. With -w, keep printing them as they change."""
    if output not in (None, *OUTPUTS):
        fail(
            f'unable to match a printer suitable for the output format "{output}", '
            f"allowed formats are: {','.join(OUTPUTS)}"
        )
    names = names or []
    if watch and len(names) > 1:
        fail(
            "watch is only supported on individual resources and resource collections, "
            f"but {len(names)} resources were found"
        )
    seconds = _seconds(request_timeout)
    with hub(kubeconfig, context, namespace, timeout=seconds or None) as client:
        info = client.resolve(resource)
        query = _Query(client, info, None if all_namespaces else client.namespace, selector)
        show = _Show(output, info, with_namespace=all_namespaces and info.namespaced)
        docs, errors = query.read(names, tables=show.tables)
        shown = show.documents(docs, single=len(names) == 1 and not errors)
        if not shown and not names and not watch and not show.structured:
            where = f" in {client.namespace} namespace." if query.namespace else ""
            typer.echo(f"No resources found{where}", err=True)
        if errors:
            fail_with(errors)
        if watch:
            query.watch(show, _resource_version(docs), names, seconds)


class _Query:
    """What `get` asks the server for: one kind, in one namespace or all, by selector."""

    def __init__(
        self, client: Client, info: KindInfo, namespace: str | None, selector: str | None
    ) -> None:
        self.client, self.info, self.selector = client, info, selector
        self.namespace = namespace if info.namespaced else None

    def read(self, names: list[str], *, tables: bool) -> tuple[list[Obj], list[Exception]]:
        """The documents (Tables, or objects and Lists) and the errors of missing names."""
        if not names:
            fetch = self.client.table if tables else self.client.list
            return [fetch(self.info, self.namespace, label_selector=self.selector)], []
        docs: list[Obj] = []
        errors: list[Exception] = []
        for name in names:
            try:
                docs.append(
                    self.client.table(self.info, self.namespace, name=name)
                    if tables
                    else self.client.get(self.info, name, self.namespace or "")
                )
            except StatusError as exc:
                errors.append(exc)
        return docs, errors

    def watch(self, show: _Show, resource_version: str, names: list[str], seconds: float) -> None:
        stream = self.client.watch(
            self.info,
            self.namespace,
            resource_version=resource_version or None,
            label_selector=self.selector,
            field_selector=f"metadata.name={names[0]}" if names else None,
            timeout_seconds=math.ceil(seconds) or None,
            table=show.tables,
        )
        with stream:
            for event in stream:
                if event.type != "BOOKMARK":
                    show.documents([event.object], single=True)


class _Show:
    """How `get` prints: kubectl's table printer, or yaml/json/name."""

    def __init__(self, output: str | None, info: KindInfo, *, with_namespace: bool) -> None:
        self.output, self.info = output, info
        self.tables = output in (None, "wide")
        self.structured = output in ("yaml", "json")
        self._table = TablePrinter(wide=output == "wide", with_namespace=with_namespace)
        self._printed = 0

    def documents(self, docs: list[Obj], *, single: bool) -> int:
        """Print what the server sent; how many objects that was."""
        if self.tables:
            return self._print_tables(docs)
        objects = [item for doc in docs for item in _items(doc)]
        if self.output == "name":
            for obj in objects:
                typer.echo(f"{kind_string(self.info)}/{obj['metadata']['name']}")
        elif single and len(objects) == 1:
            self._print_structured(objects[0])
        else:
            self._print_structured(_list_of(objects))
        return len(objects)

    def _print_tables(self, docs: Iterable[Obj]) -> int:
        now = datetime.now(UTC)
        count = 0
        for doc in docs:
            table = doc if doc.get("kind") == "Table" else object_table(_items(doc), now)
            count += len(table.get("rows") or [])
            for line in self._table.lines(table):
                typer.echo(line)
        return count

    def _print_structured(self, obj: Obj) -> None:
        assert self.output is not None
        if self.output == "yaml" and self._printed:
            typer.echo("---")
        typer.echo(dump(obj, self.output).rstrip("\n"))
        self._printed += 1


def _items(doc: Obj) -> list[Obj]:
    items = doc.get("items")
    return list(items) if isinstance(items, list) else [doc]


def _list_of(objects: list[Obj]) -> Obj:
    """kubectl's List of what it printed."""
    return {
        "apiVersion": "v1",
        "items": objects,
        "kind": "List",
        "metadata": {"resourceVersion": ""},
    }


def _resource_version(docs: list[Obj]) -> str:
    """Where a watch after the listing starts: the list's (or the object's) version."""
    for doc in docs:
        version = (doc.get("metadata") or {}).get("resourceVersion")
        if version:
            return str(version)
        for row in doc.get("rows") or []:
            version = ((row.get("object") or {}).get("metadata") or {}).get("resourceVersion")
            if version:
                return str(version)
    return ""


def _seconds(text: str) -> float:
    """--request-timeout: a Go duration, or bare seconds."""
    try:
        return parse_duration(int(text) if text.isdigit() else text).total_seconds()
    except DurationError as exc:
        fail(f"invalid --request-timeout: {exc}")
