"""`fleetwarden describe`: an object and the Events about it, as kubectl's generic describer
prints a custom resource."""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Mapping
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Annotated, Any

import typer

from fleetwarden.api.errors import StatusError
from fleetwarden.cli.hub import ContextOption, KubeconfigOption, NamespaceOption, fail_with, hub
from fleetwarden.cli.printers import go_value, tabbed
from fleetwarden.semantics.durations import since

if TYPE_CHECKING:
    from fleetwarden.client import Client

Obj = dict[str, Any]

# What the generic describer prints itself, above the object's own content.
_SKIPPED = (
    ".metadata.managedFields",
    ".metadata.name",
    ".metadata.namespace",
    ".metadata.labels",
    ".metadata.annotations",
)
_MAX_ANNOTATION = 140
_EVENTS_CHUNK = 500  # kubectl's --chunk-size
_ACRONYMS = ("API", "URL", "UID", "GUID")


def describe(
    resource: Annotated[str, typer.Argument(help="The resource type: clusters, mcl, ...")],
    names: Annotated[list[str] | None, typer.Argument(help="Objects (default: all).")] = None,
    namespace: NamespaceOption = None,
    kubeconfig: KubeconfigOption = None,
    context: ContextOption = None,
) -> None:
    """Show objects in detail: metadata, spec, status and conditions, and the Events
    involving them."""
    with hub(kubeconfig, context, namespace) as client:
        info = client.resolve(resource)
        ns = client.namespace if info.namespaced else ""
        objects: list[Obj] = []
        errors: list[Exception] = []
        for name in names or []:
            try:
                objects.append(client.get(info, name, ns))
            except StatusError as exc:
                errors.append(exc)
        if not names:
            # A List's items may leave out their apiVersion and kind.
            kind = {"apiVersion": info.api_version, "kind": info.kind}
            objects = [{**kind, **item} for item in client.list(info, ns or None)["items"]]
        now = datetime.now(UTC)
        texts = [
            describe_object(obj, events_of(client, obj), now, region_lines(client, obj))
            for obj in objects
        ]
        if texts:
            typer.echo("\n\n".join(texts), nl=False)
        if errors:
            fail_with(errors)


def describe_object(
    obj: Mapping[str, Any], events: list[Obj], now: datetime, extra: list[str] | None = None
) -> str:
    """genericDescriber.Describe: the tabwriter lays out each part up to a flush; `extra`
    lines go between the object's content and its Events."""
    metadata = obj.get("metadata") or {}
    head = [
        f"Name:\t{metadata.get('name', '')}",
        f"Namespace:\t{metadata.get('namespace', '')}",
        *_multiline("Labels", metadata.get("labels"), _label_lines),
        *_multiline("Annotations", _annotations(metadata), _annotation_lines),
        *content_lines(obj),
        *(extra or []),
    ]
    if not events:
        return tabbed("\n".join([*head, "Events:\t<none>", ""]))
    return tabbed("\n".join([*head, ""])) + tabbed("\n".join([*_event_lines(events, now), ""]))


def events_of(client: Client, obj: Mapping[str, Any]) -> list[Obj]:
    """The Events about obj, asked for as kubectl's searchEvents asks: by a field selector on
    the involvedObject's name and namespace, and its kind and uid where obj has them; in
    obj's namespace (every one, for a cluster-scoped object), a chunk at a time."""
    from fleetwarden.api.registry import REGISTRY
    from fleetwarden.semantics.selectors import FieldRequirement, FieldSelector, Operator

    metadata = obj.get("metadata") or {}
    involved = {  # in key order, as fields.Set.AsSelector writes them
        "kind": obj.get("kind") or "",
        "name": metadata.get("name") or "",
        "namespace": metadata.get("namespace") or "",
        "uid": metadata.get("uid") or "",
    }
    selector = FieldSelector(
        tuple(
            FieldRequirement(f"involvedObject.{key}", Operator.EQUALS, value)
            for key, value in involved.items()
            if value or key in ("name", "namespace")
        )
    )
    namespace = involved["namespace"] or None
    events: list[Obj] = []
    token: str | None = None
    while True:
        page = client.list(
            REGISTRY.info("v1", "Event"),
            namespace,
            field_selector=str(selector),
            limit=_EVENTS_CHUNK,
            continue_=token,
        )
        events.extend(page.get("items") or [])
        token = (page.get("metadata") or {}).get("continue") or None
        if token is None:
            return events


def region_lines(client: Client, obj: Mapping[str, Any]) -> list[str]:
    """A Karmada Cluster's region and its state (fleet protection), from the hub's
    karmada-system/cluster-region-status; none for other objects."""
    if obj.get("kind") != "Cluster" or not str(obj.get("apiVersion")).startswith(
        "cluster.karmada.io/"
    ):
        return []
    from fleetwarden.api.errors import NotFound
    from fleetwarden.controllers.karmada.names import NAMESPACE_KARMADA_SYSTEM
    from fleetwarden.controllers.karmada.region_disruption import (
        CONFIG_MAP,
        STATUS_NAME,
        RegionStatus,
        describe_region,
        region_name,
    )

    region = (obj.get("spec") or {}).get("region") or ""
    try:
        stored = client.get(CONFIG_MAP, STATUS_NAME, NAMESPACE_KARMADA_SYSTEM)
    except NotFound:
        stored = {}  # never disrupted: every region Normal
    except StatusError as exc:
        return [f"Region:\t{region_name(region)}: state unknown ({exc.message})"]
    return [f"Region:\t{describe_region(region, RegionStatus.from_data(stored.get('data')))}"]


def _annotations(metadata: Mapping[str, Any]) -> dict[str, str]:
    """The annotations but kubectl's last-applied one, which describe never shows."""
    from fleetwarden.client.apply import LAST_APPLIED_ANNOTATION

    annotations = metadata.get("annotations") or {}
    return {k: v for k, v in annotations.items() if k != LAST_APPLIED_ANNOTATION}


def _multiline(
    title: str, values: Mapping[str, str] | None, lines: Callable[[dict[str, str]], list[str]]
) -> list[str]:
    """printLabelsMultiline and printAnnotationsMultiline: sorted, one per line."""
    if not values:
        return [f"{title}:\t<none>"]
    body = lines(dict(sorted(values.items())))
    return [f"{title}:\t{body[0]}", *(f"\t{line}" for line in body[1:])]


def _label_lines(labels: Mapping[str, str]) -> list[str]:
    return [f"{key}={value}" for key, value in labels.items()]


def _annotation_lines(annotations: Mapping[str, str]) -> list[str]:
    """printAnnotationsMultiline: a long or multi-line value goes below its key, cut short."""
    lines = []
    for key, raw in annotations.items():
        value = raw.removesuffix("\n")
        if len(value) + len(key) + 2 > _MAX_ANNOTATION or "\n" in value:
            lines.append(f"{key}:")
            lines.extend(f"  {_shorten(part)}" for part in value.split("\n"))
        else:
            lines.append(f"{key}: {value}")
    return lines


def _shorten(text: str) -> str:
    limit = _MAX_ANNOTATION - 2
    return text[:limit] + "..." if len(text) > limit else text


def content_lines(
    content: Mapping[str, Any], skip: Collection[str] = _SKIPPED, level: int = 0, prefix: str = ""
) -> list[str]:
    """printUnstructuredContent: fields in name order, maps and lists indented below them,
    and none of the `.path.to.field`s in skip."""
    lines = []
    indent = "  " * level
    for field in sorted(content):
        value, path = content[field], f"{prefix}.{field}"
        if path in skip:
            continue
        if isinstance(value, dict):
            lines.append(f"{indent}{smart_label(field)}:")
            lines.extend(content_lines(value, skip, level + 1, path))
        elif isinstance(value, list):
            lines.append(f"{indent}{smart_label(field)}:")
            for item in value:
                if isinstance(item, dict):
                    lines.extend(content_lines(item, skip, level + 1, path))
                else:
                    lines.append(f"{indent}  {go_value(item)}")
        else:
            lines.append(f"{indent}{smart_label(field)}:\t{go_value(value)}")
    return lines


_CAMEL_RUNS = re.compile(r"[a-z]+|[A-Z]+|[0-9]+|[^a-zA-Z0-9]+")


def smart_label(field: str) -> str:
    """smartLabelFor: `lastTransitionTime` -> `Last Transition Time`, `apiVersion` ->
    `API Version`; a name with anything but letters and `-` is left as it is."""
    if not all(c.isalpha() or c == "-" for c in field):
        return field
    words = _camel_split(field)
    merged: list[str] = []
    i = 0
    while i < len(words):
        word = words[i]
        nxt = words[i + 1] if i + 1 < len(words) else ""
        if len(word) >= 2 and word.isupper() and nxt[:1].isupper():
            merged.append(word + nxt)
            i += 2
            continue
        merged.append(word)
        i += 1
    return " ".join(_titled(word) for word in merged if word != "_")


def _titled(word: str) -> str:
    if word.upper() in _ACRONYMS:
        return word.upper()
    return word.title() if word.islower() else word


def _camel_split(text: str) -> list[str]:
    """fatih/camelcase.Split: runs of one character class; an upper-case run followed by
    a lower-case one gives its last letter to it (`HTMLParser` -> `HTML`, `Parser`)."""
    runs = _CAMEL_RUNS.findall(text)
    for i in range(len(runs) - 1):
        if runs[i].isupper() and runs[i + 1].islower():
            runs[i + 1] = runs[i][-1] + runs[i + 1]
            runs[i] = runs[i][:-1]
    return [run for run in runs if run]


def _event_lines(events: list[Obj], now: datetime) -> list[str]:
    """DescribeEvents: oldest last-seen first, with how often and since when."""
    rows = ["Events:", "  Type\tReason\tAge\tFrom\tMessage", "  ----\t------\t----\t----\t-------"]
    for event in sorted(events, key=lambda e: e.get("lastTimestamp") or ""):
        involved = event.get("involvedObject") or {}
        message = str(event.get("message") or "").strip()
        if involved.get("fieldPath"):
            message = f"{involved['fieldPath']}: {message}"
        source = (event.get("source") or {}).get("component") or event.get("reportingComponent", "")
        rows.append(
            f"  {event.get('type', '')}\t{event.get('reason', '')}\t{_interval(event, now)}"
            f"\t{source}\t{message}"
        )
    return rows


def _interval(event: Mapping[str, Any], now: datetime) -> str:
    first = since(event.get("eventTime") or event.get("firstTimestamp"), now)
    series = event.get("series")
    if series:
        last = since(series.get("lastObservedTime"), now)
        return f"{last} (x{series.get('count', 0)} over {first})"
    count = event.get("count") or 0
    if count > 1:
        return f"{since(event.get('lastTimestamp'), now)} (x{count} over {first})"
    return first
