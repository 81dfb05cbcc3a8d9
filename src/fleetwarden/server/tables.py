"""meta.k8s.io/v1 Table: what the API server answers kubectl's
`Accept: application/json;as=Table;v=v1;g=meta.k8s.io`.

A custom resource's columns are its CRD's additionalPrinterColumns (printer_columns.py),
evaluated as apiextensions-apiserver's table convertor does. Built-in kinds (and Karmada's
aggregated Cluster) have the columns of the API server's printers; those without one here
get the custom resources' default, Name and Age. The server computes the wide (priority 1)
columns too: kubectl shows them with `-o wide`.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from decimal import Decimal
from functools import cache
from typing import Any

from fleetwarden.api import autoscaling
from fleetwarden.api.errors import BadRequest
from fleetwarden.api.kinds import KindInfo, PrinterColumn
from fleetwarden.api.meta import LabelSelector
from fleetwarden.semantics.durations import since
from fleetwarden.semantics.jsonpath import JSONPath, compile_path
from fleetwarden.semantics.selectors import SelectorError, label_selector_as_selector
from fleetwarden.server.printer_columns import DEFAULT_COLUMNS, PRINTER_COLUMNS

Obj = Mapping[str, Any]

_NAME_DOC = (
    "Name must be unique within a namespace. Is required when creating resources, although "
    "some resources may allow a client to request the generation of an appropriate name "
    "automatically. Name is primarily intended for creation idempotence and configuration "
    "definition. Cannot be updated. More info: "
    "https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names"
)
_AGE_DOC = DEFAULT_COLUMNS[0].description
_CONTAINERS_DOC = "Names of each container in the template."
_IMAGES_DOC = "Images referenced by each container in the template."


def table(
    info: KindInfo,
    objects: Sequence[Obj],
    *,
    include_object: str = "Metadata",
    now: datetime,
    resource_version: str = "",
    continue_: str = "",
    remaining_item_count: int | None = None,
) -> dict[str, Any]:
    """The Table of these objects (one for a get, all of a list's items for a list).

    include_object is the request's `includeObject`: None, Metadata (the default: each row
    carries a PartialObjectMetadata) or Object (the whole object)."""
    row_object = _ROW_OBJECTS.get(include_object or "Metadata")
    if row_object is None:
        raise BadRequest(f'unrecognized includeObject value: "{include_object}"')
    columns, cells = _printer(info)
    metadata: dict[str, Any] = {}
    if resource_version:
        metadata["resourceVersion"] = resource_version
    if continue_:
        metadata["continue"] = continue_
    if remaining_item_count is not None:
        metadata["remainingItemCount"] = remaining_item_count
    return {
        "kind": "Table",
        "apiVersion": "meta.k8s.io/v1",
        "metadata": metadata,
        "columnDefinitions": [dict(c) for c in columns],
        "rows": [{"cells": cells(obj, now), "object": row_object(obj)} for obj in objects],
    }


def _partial_metadata(obj: Obj) -> dict[str, Any]:
    return {
        "kind": "PartialObjectMetadata",
        "apiVersion": "meta.k8s.io/v1",
        "metadata": dict(obj.get("metadata") or {}),
    }


_ROW_OBJECTS: dict[str, Callable[[Obj], Any]] = {
    "None": lambda _obj: None,
    "Metadata": _partial_metadata,
    "Object": dict,
}

Column = dict[str, Any]
Cells = Callable[[Obj, datetime], list[Any]]


def _column(
    name: str, type_: str = "string", description: str = "", *, format_: str = "", priority: int = 0
) -> Column:
    """metav1.TableColumnDefinition, every field present as Go encodes it."""
    return {
        "name": name,
        "type": type_,
        "format": format_,
        "description": description,
        "priority": priority,
    }


_NAME_COLUMN = _column("Name", description=_NAME_DOC, format_="name")
_AGE_COLUMN = _column("Age", description=_AGE_DOC)


Printer = tuple[tuple[Column, ...], Cells]


def _printer(info: KindInfo) -> Printer:
    if info.custom is not None:  # served by a CRD of the hub's
        return _crd_printer(info.custom.printer_columns or DEFAULT_COLUMNS)
    printer = _PRINTERS.get((info.group, info.kind))
    if printer is not None:
        return printer
    documented = _DOCUMENTED_PRINTERS.get((info.group, info.kind))
    if documented is not None:
        return documented()
    crd = PRINTER_COLUMNS.get((info.group, info.version, info.kind), DEFAULT_COLUMNS)
    return _crd_printer(crd)


# --- custom resources: the CRD's printer columns ------------------------------------------


@cache
def _crd_printer(crd: tuple[PrinterColumn, ...]) -> Printer:
    columns = [
        _column(
            c.name,
            c.type,
            c.description
            or f"Custom resource definition column (in JSONPath format): {c.json_path}",
            format_=c.format,
            priority=c.priority,
        )
        for c in crd
    ]
    paths = [(compile_path(c.json_path), c.type) for c in crd]

    def cells(obj: Obj, now: datetime) -> list[Any]:
        return [_name(obj), *(_crd_cell(path, type_, obj, now) for path, type_ in paths)]

    return (_NAME_COLUMN, *columns), cells


def _crd_cell(path: JSONPath, type_: str, obj: Obj, now: datetime) -> Any:
    """The first value the column's JSONPath finds, as the column's type shows it."""
    found = path.find(obj)
    if not found or found[0] is None:
        return None
    value = found[0]
    if type_ == "string":
        return _text(value)
    if type_ == "integer" and _is_number(value):
        return int(value)
    if type_ == "number" and _is_number(value):
        return float(value)
    if type_ == "boolean" and isinstance(value, bool):
        return value
    if type_ == "date" and isinstance(value, str):
        return since(None if value == "null" else value, now)
    return None


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _text(value: Any) -> str:
    """client-go jsonpath's printing of one value: maps and lists as JSON, the rest as Go's
    fmt prints them."""
    if isinstance(value, str):
        return value
    if isinstance(value, dict | list):
        text = json.dumps(value, separators=(",", ":"), sort_keys=True, ensure_ascii=False)
        return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return _go_float(value)
    return str(value)


def _go_float(value: float) -> str:
    """fmt's %v of a float64: the shortest digits, with an exponent below 1e-4 or from 1e6."""
    if value != value or value in (float("inf"), float("-inf")):
        return {"nan": "NaN", "inf": "+Inf", "-inf": "-Inf"}[repr(value)]
    sign, digits, exponent = Decimal(repr(value)).normalize().as_tuple()
    assert isinstance(exponent, int)
    magnitude = len(digits) + exponent - 1 if any(digits) else 0
    if -4 <= magnitude < 6:
        text = format(Decimal(repr(abs(value))).normalize(), "f")
    else:
        mantissa = "".join(map(str, digits))
        mantissa = mantissa[0] + ("." + mantissa[1:] if len(mantissa) > 1 else "")
        text = f"{mantissa}e{'-' if magnitude < 0 else '+'}{abs(magnitude):02d}"
    return ("-" if sign else "") + text


# --- built-in kinds: the API server's printers (pkg/printers/internalversion) ---------------


def _name(obj: Obj) -> str:
    return str(_get(obj, "metadata", "name") or "")


def _get(obj: Any, *path: str) -> Any:
    for key in path:
        obj = obj.get(key) if isinstance(obj, Mapping) else None
    return obj


def _age(obj: Obj, now: datetime) -> str:
    return since(_get(obj, "metadata", "creationTimestamp"), now)


def _containers(obj: Obj) -> tuple[str, str]:
    """layoutContainerCells: the template's container names and images, comma separated."""
    containers = _get(obj, "spec", "template", "spec", "containers") or []
    names = ",".join(str(c.get("name", "")) for c in containers)
    return names, ",".join(str(c.get("image", "")) for c in containers)


def _selector(obj: Obj) -> str:
    raw = _get(obj, "spec", "selector")
    try:
        selector = None if raw is None else LabelSelector.model_validate(raw)
        return str(label_selector_as_selector(selector))
    except (SelectorError, ValueError):
        return "<invalid>"


def _namespace_cells(obj: Obj, now: datetime) -> list[Any]:
    # The API server sets the phase on create and on delete; an object without one is new.
    phase = _get(obj, "status", "phase") or (
        "Terminating" if _get(obj, "metadata", "deletionTimestamp") else "Active"
    )
    return [_name(obj), phase, _age(obj, now)]


def _event_cells(obj: Obj, now: datetime) -> list[Any]:
    first = since(obj.get("firstTimestamp"), now)
    if not obj.get("firstTimestamp"):
        first = since(obj.get("eventTime"), now)
    last = since(obj.get("lastTimestamp"), now) if obj.get("lastTimestamp") else first
    count = obj.get("count") or 1  # a singleton event of the new API has no count
    series = obj.get("series")
    if series is not None:
        last, count = since(series.get("lastObservedTime"), now), series.get("count", 0)
    involved = obj.get("involvedObject") or {}
    target = str(involved.get("kind", "")).lower()
    if involved.get("name"):
        target = f"{target}/{involved['name']}"
    source = obj.get("source") or {}
    component = source.get("component") or obj.get("reportingController") or ""
    instance = source.get("host") or obj.get("reportingInstance") or ""
    return [
        last,
        obj.get("type", ""),
        obj.get("reason", ""),
        target,
        involved.get("fieldPath", ""),
        f"{component}, {instance}" if instance else component,
        str(obj.get("message", "")).strip(),
        first,
        count,
        _name(obj),
    ]


def _deployment_cells(obj: Obj, now: datetime) -> list[Any]:
    status = obj.get("status") or {}
    desired = _get(obj, "spec", "replicas")
    ready = f"{status.get('readyReplicas', 0)}/{1 if desired is None else desired}"
    names, images = _containers(obj)
    return [
        _name(obj),
        ready,
        status.get("updatedReplicas", 0),
        status.get("availableReplicas", 0),
        _age(obj, now),
        names,
        images,
        _selector(obj),
    ]


def _stateful_set_cells(obj: Obj, now: datetime) -> list[Any]:
    desired = _get(obj, "spec", "replicas")
    ready = f"{_get(obj, 'status', 'readyReplicas') or 0}/{1 if desired is None else desired}"
    return [_name(obj), ready, _age(obj, now), *_containers(obj)]


def _replica_set_cells(obj: Obj, now: datetime) -> list[Any]:
    desired = _get(obj, "spec", "replicas")
    status = obj.get("status") or {}
    return [
        _name(obj), 1 if desired is None else desired, status.get("replicas", 0),
        status.get("readyReplicas", 0), _age(obj, now), *_containers(obj), _selector(obj),
    ]  # fmt: skip


def _pod_cells(obj: Obj, now: datetime) -> list[Any]:
    """printPod, for pods whose containers wait for nothing: ready containers of all, the
    phase (or the reason the kubelet gives, or Terminating), restarts, where it runs."""
    spec, status = obj.get("spec") or {}, obj.get("status") or {}
    statuses = status.get("containerStatuses") or []
    ready = sum(1 for c in statuses if c.get("ready"))
    reason = status.get("reason") or status.get("phase") or ""
    if _get(obj, "metadata", "deletionTimestamp"):
        reason = "Terminating"
    gates = spec.get("readinessGates") or []
    met = {c.get("type") for c in status.get("conditions") or [] if c.get("status") == "True"}
    return [
        _name(obj), f"{ready}/{len(spec.get('containers') or [])}", reason,
        str(sum(int(c.get("restartCount") or 0) for c in statuses)), _age(obj, now),
        status.get("podIP") or "<none>", spec.get("nodeName") or "<none>",
        status.get("nominatedNodeName") or "<none>",
        f"{sum(1 for g in gates if g.get('conditionType') in met)}/{len(gates)}"
        if gates else "<none>",
    ]  # fmt: skip


def _node_cells(obj: Obj, now: datetime) -> list[Any]:
    """printNode: Ready or NotReady (Unknown without the condition), SchedulingDisabled when
    cordoned; roles from the node-role.kubernetes.io/ labels."""
    status = obj.get("status") or {}
    ready = next((c.get("status") for c in status.get("conditions") or []
                  if c.get("type") == "Ready"), None)  # fmt: skip
    shown = "Unknown" if ready is None else "Ready" if ready == "True" else "NotReady"
    if _get(obj, "spec", "unschedulable"):
        shown += ",SchedulingDisabled"
    labels = _get(obj, "metadata", "labels") or {}
    roles = sorted(k.removeprefix(_NODE_ROLE) for k in labels if k.startswith(_NODE_ROLE))
    if labels.get("kubernetes.io/role"):
        roles.append(labels["kubernetes.io/role"])
    info = status.get("nodeInfo") or {}
    addresses = {a.get("type"): a.get("address") for a in status.get("addresses") or []}
    return [
        _name(obj), shown, ",".join(r for r in roles if r) or "<none>", _age(obj, now),
        info.get("kubeletVersion", ""), addresses.get("InternalIP") or "<none>",
        addresses.get("ExternalIP") or "<none>", info.get("osImage") or "<unknown>",
        info.get("kernelVersion") or "<unknown>",
        info.get("containerRuntimeVersion") or "<unknown>",
    ]  # fmt: skip


_NODE_ROLE = "node-role.kubernetes.io/"


def _pdb_cells(obj: Obj, now: datetime) -> list[Any]:
    spec = obj.get("spec") or {}
    allowed = _get(obj, "status", "disruptionsAllowed") or 0
    bounds = [str(spec[f]) if f in spec else "N/A" for f in ("minAvailable", "maxUnavailable")]
    return [_name(obj), *bounds, allowed, _age(obj, now)]


def _resource_quota_cells(obj: Obj, now: datetime) -> list[Any]:
    """printResourceQuota: `used/hard` of each resource the status holds, by name; those
    named limits.* in the Limit column, the others in the Request column."""
    status = obj.get("status") or {}
    hard, used = status.get("hard") or {}, status.get("used") or {}
    columns: dict[bool, list[str]] = {True: [], False: []}
    for name in sorted(hard):
        columns[name.split(".")[0] == "limits" and "." in name].append(
            f"{name}: {used.get(name, 0)}/{hard[name]}"
        )
    return [_name(obj), _age(obj, now), ", ".join(columns[False]), ", ".join(columns[True])]


def _network_policy_cells(obj: Obj, now: datetime) -> list[Any]:
    """printNetworkPolicy: metav1.FormatLabelSelector of the pod selector."""
    raw = _get(obj, "spec", "podSelector") or {}
    try:
        shown = str(label_selector_as_selector(LabelSelector.model_validate(raw))) or "<none>"
    except (SelectorError, ValueError):
        shown = "<error>"
    return [_name(obj), shown, _age(obj, now)]


def _scale_cells(obj: Obj, now: datetime) -> list[Any]:
    desired = _get(obj, "spec", "replicas") or 0
    return [_name(obj), desired, _get(obj, "status", "replicas") or 0, _age(obj, now)]


def _service_cells(obj: Obj, now: datetime) -> list[Any]:
    """printService: the type (ClusterIP unless said), the first cluster IP, the external
    address by type, the ports (`80/TCP,443:30443/TCP`), the selector."""
    spec = obj.get("spec") or {}
    kind = spec.get("type") or "ClusterIP"
    cluster_ips = spec.get("clusterIPs") or ([spec["clusterIP"]] if spec.get("clusterIP") else [])
    ports = ",".join(_service_port(p) for p in spec.get("ports") or []) or "<none>"
    selector = spec.get("selector") or {}
    labels = ",".join(f"{k}={v}" for k, v in sorted(selector.items())) or "<none>"
    return [
        _name(obj), kind, cluster_ips[0] if cluster_ips else "<none>",
        _external_address(obj, kind), ports, _age(obj, now), labels,
    ]  # fmt: skip


def _service_port(port: Obj) -> str:
    protocol = port.get("protocol") or "TCP"
    node_port = f":{port['nodePort']}" if port.get("nodePort") else ""
    return f"{port.get('port', 0)}{node_port}/{protocol}"


def _external_address(obj: Obj, kind: str) -> str:
    """getServiceExternalIP, as the server prints it (wide: nothing shortened)."""
    spec = obj.get("spec") or {}
    external = list(spec.get("externalIPs") or [])
    if kind in ("ClusterIP", "NodePort"):
        return ",".join(external) or "<none>"
    if kind == "LoadBalancer":
        ingress = _get(obj, "status", "loadBalancer", "ingress") or []
        balanced = [i.get("ip") or i.get("hostname") or "" for i in ingress]
        return ",".join([*[b for b in balanced if b], *external]) or "<pending>"
    if kind == "ExternalName":
        return str(spec.get("externalName", ""))
    return "<unknown>"


def _service_account_cells(obj: Obj, now: datetime) -> list[Any]:
    return [_name(obj), len(obj.get("secrets") or []), _age(obj, now)]


def _binding_cells(obj: Obj, now: datetime) -> list[Any]:
    """printRoleBinding and printClusterRoleBinding: the role as Kind/name, the subjects by
    kind (a ServiceAccount as namespace/name)."""
    ref = obj.get("roleRef") or {}
    subjects = obj.get("subjects") or []

    def named(kind: str) -> str:
        return ", ".join(s.get("name", "") for s in subjects if s.get("kind") == kind)

    accounts = ", ".join(
        f"{s.get('namespace', '')}/{s.get('name', '')}"
        for s in subjects
        if s.get("kind") == "ServiceAccount"
    )
    role = f"{ref.get('kind', '')}/{ref.get('name', '')}"
    return [_name(obj), role, _age(obj, now), named("User"), named("Group"), accounts]


def _ingress_cells(obj: Obj, now: datetime) -> list[Any]:
    """printIngress: its class, at most three hosts (`*` for none), the load balancer's
    address, 80 (and 443 with TLS)."""
    spec = obj.get("spec") or {}
    rules = spec.get("rules") or []
    hosts = [r["host"] for r in rules[:3] if r.get("host")]
    shown = ",".join(hosts) or "*"
    if len(rules) > 3:
        shown = f"{shown} + {len(rules) - 3} more..."
    ingress = _get(obj, "status", "loadBalancer", "ingress") or []
    address = ",".join(i.get("ip") or i.get("hostname") or "" for i in ingress)
    ports = "80, 443" if spec.get("tls") else "80"
    return [
        _name(obj), spec.get("ingressClassName") or "<none>", shown, address, ports,
        _age(obj, now),
    ]  # fmt: skip


def _hpa_cells(obj: Obj, now: datetime) -> list[Any]:
    """printHorizontalPodAutoscaler: the target as Kind/name, each metric's current and
    target value (two at most), the replica bounds and count. Upstream prints the internal
    type whatever the version asked: a v1 object is read as v2."""
    if obj.get("apiVersion") == autoscaling.V1:
        obj = autoscaling.to_v2(obj)
    spec = obj.get("spec") or {}
    ref = spec.get("scaleTargetRef") or {}
    statuses = _get(obj, "status", "currentMetrics") or []
    targets = [
        _hpa_metric(m, statuses[i] if i < len(statuses) else {})
        for i, m in enumerate(spec.get("metrics") or [])
    ]
    shown = ", ".join(targets[:2]) or "<none>"
    if len(targets) > 2:
        shown = f"{shown} + {len(targets) - 2} more..."
    least = spec.get("minReplicas")
    return [
        _name(obj), f"{ref.get('kind', '')}/{ref.get('name', '')}", shown,
        "<unset>" if least is None else least, spec.get("maxReplicas", 0),
        _get(obj, "status", "currentReplicas") or 0, _age(obj, now),
    ]  # fmt: skip


def _hpa_metric(metric: Obj, status: Obj) -> str:
    """formatHPAMetrics' text of one metric: `cpu: 40%/80%`, `<unknown>/1k (avg)`."""
    kind = metric.get("type")
    field = {"Resource": "resource", "ContainerResource": "containerResource"}.get(kind or "")
    if field is not None:
        source, current = metric.get(field) or {}, (status.get(field) or {}).get("current") or {}
        target = source.get("target") or {}
        if target.get("averageValue") is not None:
            now_value = current.get("averageValue", "<unknown>")
            return f"{source.get('name', '')}: {now_value}/{target['averageValue']}"
        used = current.get("averageUtilization")
        wanted = target.get("averageUtilization")
        now_text = "<unknown>" if used is None else f"{used}%"
        return (
            f"{source.get('name', '')}: {now_text}/{'<auto>' if wanted is None else f'{wanted}%'}"
        )
    field = {"Pods": "pods", "Object": "object", "External": "external"}.get(kind or "")
    if field is None:
        return "<unknown type>"
    target = (metric.get(field) or {}).get("target") or {}
    current = (status.get(field) or {}).get("current") or {}
    if field == "pods" or target.get("averageValue") is not None:
        average = current.get("averageValue", "<unknown>")
        suffix = "" if field == "pods" else " (avg)"
        return f"{average}/{target.get('averageValue', '')}{suffix}"
    return f"{current.get('value', '<unknown>')}/{target.get('value', '')}"


def _config_map_cells(obj: Obj, now: datetime) -> list[Any]:
    data = len(obj.get("data") or {}) + len(obj.get("binaryData") or {})
    return [_name(obj), data, _age(obj, now)]


def _secret_cells(obj: Obj, now: datetime) -> list[Any]:
    type_ = obj.get("type") or "Opaque"  # the API server defaults it on create
    return [_name(obj), type_, len(obj.get("data") or {}), _age(obj, now)]


def _lease_cells(obj: Obj, now: datetime) -> list[Any]:
    return [_name(obj), _get(obj, "spec", "holderIdentity") or "", _age(obj, now)]


def _created_at_cells(obj: Obj, now: datetime) -> list[Any]:
    """rest.NewDefaultTableConvertor's: the name, and the creation time as RFC 3339."""
    return [_name(obj), _get(obj, "metadata", "creationTimestamp") or "0001-01-01T00:00:00Z"]


def _cluster_cells(obj: Obj, now: datetime) -> list[Any]:
    """Karmada's aggregated API server prints its Cluster itself (pkg/printers)."""
    spec, status = obj.get("spec") or {}, obj.get("status") or {}
    ready = next(
        (c.get("status") for c in status.get("conditions") or [] if c.get("type") == "Ready"),
        "Unknown",
    )
    return [
        _name(obj),
        status.get("kubernetesVersion", ""),
        spec.get("syncMode", ""),
        ready,
        _age(obj, now),
        ",".join(spec.get("zones") or []) or "<none>",
        spec.get("region") or "<none>",
        spec.get("provider") or "<none>",
        spec.get("apiEndpoint", ""),
        spec.get("proxyURL") or "<none>",
    ]


def _wide(name: str, description: str) -> Column:
    return _column(name, description=description, priority=1)


# The column descriptions are the API types' swagger docs, as upstream's printers take them.
_EVENT_COLUMNS = (
    _column(
        "Last Seen",
        description="The time at which the most recent occurrence of this event was recorded.",
    ),
    _column(
        "Type",
        description="Type of this event (Normal, Warning), new types could be added in the future",
    ),
    _column(
        "Reason",
        description="This should be a short, machine understandable string that gives the "
        "reason for the transition into the object's current status.",
    ),
    _column("Object", description="The object that this event is about."),
    _wide(
        "Subobject",
        "If referring to a piece of an object instead of an entire object, this string should "
        "contain a valid JSON/Go field access statement, such as "
        "desiredState.manifest.containers[2]. For example, if the object reference is to a "
        'container within a pod, this would take on a value like: "spec.containers{name}" '
        '(where "name" refers to the name of the container that triggered the event) or if no '
        'container name is specified "spec.containers[2]" (container with index 2 in this '
        "pod). This syntax is chosen only to have some well-defined way of referencing a part "
        "of an object.",
    ),
    _wide(
        "Source",
        "The component reporting this event. Should be a short machine understandable string.",
    ),
    _column("Message", description="A human-readable description of the status of this operation."),
    _wide(
        "First Seen",
        "The time at which the event was first recorded. (Time of server receipt is in TypeMeta.)",
    ),
    _wide("Count", "The number of times this event has occurred."),
    {**_NAME_COLUMN, "priority": 1},
)

_DEPLOYMENT_COLUMNS = (
    _NAME_COLUMN,
    _column("Ready", description="Number of the pod with ready state"),
    _column(
        "Up-to-date",
        description="Total number of non-terminated pods targeted by this deployment that have "
        "the desired template spec.",
    ),
    _column(
        "Available",
        description="Total number of available pods (ready for at least minReadySeconds) "
        "targeted by this deployment.",
    ),
    _AGE_COLUMN,
    _wide("Containers", _CONTAINERS_DOC),
    _wide("Images", _IMAGES_DOC),
    _wide(
        "Selector",
        "Label selector for pods. Existing ReplicaSets whose pods are selected by this will be "
        "the ones affected by this deployment.",
    ),
)

_STATEFUL_SET_COLUMNS = (
    _NAME_COLUMN,
    _column("Ready", description="Number of the pod with ready state"),
    _AGE_COLUMN,
    _wide("Containers", _CONTAINERS_DOC),
    _wide("Images", _IMAGES_DOC),
)

_REPLICA_SET_COLUMNS = (
    _NAME_COLUMN,
    _column("Desired", "integer", "Number of desired pods."),
    _column("Current", "integer", "Number of actual replicas."),
    _column("Ready", "integer", "Number of ready replicas."),
    _AGE_COLUMN,
    _wide("Containers", _CONTAINERS_DOC),
    _wide("Images", _IMAGES_DOC),
    _wide("Selector", "Label selector for pods."),
)

_POD_COLUMNS = (
    _NAME_COLUMN,
    _column(
        "Ready", description="The aggregate readiness state of this pod for accepting traffic."
    ),
    _column("Status", description="The aggregate status of the containers in this pod."),
    _column(
        "Restarts",
        description="The number of times the containers in this pod have been restarted and "
        "when the last container in this pod has restarted.",
    ),
    _AGE_COLUMN,
    _wide("IP", "podIP address allocated to the pod. Routable at least within the cluster."),
    _wide("Node", "NodeName indicates in which node this pod is scheduled."),
    _wide("Nominated Node", "nominatedNodeName is set when this pod preempts other pods."),
    _wide(
        "Readiness Gates", "If specified, all readiness gates will be evaluated for pod readiness."
    ),
)

_NODE_COLUMNS = (
    _NAME_COLUMN,
    _column("Status", description="The status of the node"),
    _column("Roles", description="The roles of the node"),
    _AGE_COLUMN,
    _column("Version", description="Kubelet Version reported by the node."),
    _wide("Internal-IP", "List of addresses reachable to the node."),
    _wide("External-IP", "List of addresses reachable to the node."),
    _wide("OS-Image", "OS Image reported by the node from /etc/os-release."),
    _wide("Kernel-Version", "Kernel Version reported by the node from 'uname -r'."),
    _wide("Container-Runtime", "ContainerRuntime Version reported by the node."),
)

_CONFIG_MAP_COLUMNS = (
    _NAME_COLUMN,
    _column(
        "Data",
        description="Data contains the configuration data. Each key must consist of "
        "alphanumeric characters, '-', '_' or '.'. Values with non-UTF-8 byte sequences must "
        "use the BinaryData field. The keys stored in Data must not overlap with the keys in "
        "the BinaryData field, this is enforced during validation process.",
    ),
    _AGE_COLUMN,
)

_SECRET_COLUMNS = (
    _NAME_COLUMN,
    _column(
        "Type",
        description="Used to facilitate programmatic handling of secret data. More info: "
        "https://kubernetes.io/docs/concepts/configuration/secret/#secret-types",
    ),
    _column(
        "Data",
        description="Data contains the secret data. Each key must consist of alphanumeric "
        "characters, '-', '_' or '.'. The serialized form of the secret data is a base64 "
        "encoded string, representing the arbitrary (possibly non-string) data value here. "
        "Described in https://tools.ietf.org/html/rfc4648#section-4",
    ),
    _AGE_COLUMN,
)

_LEASE_COLUMNS = (
    _NAME_COLUMN,
    _column(
        "Holder",
        description="holderIdentity contains the identity of the holder of a current lease. If "
        "Coordinated Leader Election is used, the holder identity must be equal to the elected "
        "LeaseCandidate.metadata.name field.",
    ),
    _AGE_COLUMN,
)

# karmada-io/karmada pkg/printers/internalversion/printers.go
_CLUSTER_COLUMNS = (
    _NAME_COLUMN,
    _column("Version", description="KubernetesVersion represents version of the member cluster."),
    _column(
        "Mode",
        description="SyncMode describes how a cluster sync resources from karmada control plane.",
    ),
    _column(
        "Ready",
        description="The aggregate readiness state of this cluster for accepting workloads.",
    ),
    _AGE_COLUMN,
    _wide(
        "Zones",
        "Zones represents the failure zones(also called availability zones) of the member "
        "cluster. The zones are presented as a slice to support the case that cluster runs "
        "across multiple failure zones.",
    ),
    _wide("Region", "Region represents the region of the member cluster locate in."),
    _wide("Provider", "Provider represents the cloud provider name of the member cluster."),
    _wide("API-Endpoint", "The API endpoint of the member cluster."),
    _wide("Proxy-URL", "ProxyURL is the proxy URL for the cluster."),
)

_POD_DISRUPTION_BUDGET_COLUMNS = (
    _NAME_COLUMN,
    _column("Min Available", description="The minimum number of pods that must be available."),
    _column("Max Unavailable", description="The maximum number of pods that may be unavailable."),
    _column(
        "Allowed Disruptions",
        "integer",
        "Calculated number of pods that may be disrupted at this time.",
    ),
    _AGE_COLUMN,
)

_RESOURCE_QUOTA_COLUMNS = (
    _NAME_COLUMN,
    _AGE_COLUMN,
    _column(
        "Request",
        description="Request represents a minimum amount of cpu/memory that a container may "
        "consume.",
    ),
    _column(
        "Limit",
        description="Limits control the maximum amount of cpu/memory that a container may use "
        "independent of contention on the node.",
    ),
)

# The Table of a /scale subresource (kubectl get deployment web --subresource=scale).
_SCALE_COLUMNS = (
    _column("Name", description=_NAME_DOC),
    _column(
        "Desired", "integer", "replicas is the desired number of instances for the scaled object."
    ),
    _column(
        "Available",
        "integer",
        "replicas is the actual number of observed instances of the scaled object.",
    ),
    _AGE_COLUMN,
)


@cache
def _service_printer() -> Printer:
    documented = _documented("V1ServiceSpec", ("Type", "type"), ("Cluster-IP", "cluster_ip"),
                             ("External-IP", "external_ips"), ("Port(s)", "ports"))  # fmt: skip
    selector = _wide("Selector", _swagger("V1ServiceSpec", "selector"))
    return (_NAME_COLUMN, *documented, _AGE_COLUMN, selector), _service_cells


def _documented(model: str, *columns: tuple[str, str]) -> tuple[Column, ...]:
    """Columns described by the fields of a model they show."""
    return tuple(_column(name, description=_swagger(model, field)) for name, field in columns)


def _swagger(model: str, field: str) -> str:
    """A field's API documentation, as the official client carries it (the same swagger
    the API server's column descriptions quote); read only when a Table asks."""
    from kubernetes import client

    return str(getattr(client, model).model_fields[field].description or "")


@cache
def _service_account_printer() -> Printer:
    secrets = _column("Secrets", description=_swagger("V1ServiceAccount", "secrets"))
    return (_NAME_COLUMN, secrets, _AGE_COLUMN), _service_account_cells


@cache
def _hpa_printer() -> Printer:
    spec = _documented("V2HorizontalPodAutoscalerSpec", ("Reference", "scale_target_ref"),
                       ("Targets", "metrics"), ("MinPods", "min_replicas"),
                       ("MaxPods", "max_replicas"))  # fmt: skip
    replicas = _documented("V2HorizontalPodAutoscalerStatus", ("Replicas", "current_replicas"))
    return (_NAME_COLUMN, *spec, *replicas, _AGE_COLUMN), _hpa_cells


@cache
def _network_policy_printer() -> Printer:
    selector = _documented("V1NetworkPolicySpec", ("Pod-Selector", "pod_selector"))
    return (_NAME_COLUMN, *selector, _AGE_COLUMN), _network_policy_cells


# Printers whose column descriptions are read from the API's documentation when first used.
_DOCUMENTED_PRINTERS: dict[tuple[str, str], Callable[[], Printer]] = {
    ("", "Service"): _service_printer,
    ("", "ServiceAccount"): _service_account_printer,
    ("autoscaling", "HorizontalPodAutoscaler"): _hpa_printer,
    ("networking.k8s.io", "NetworkPolicy"): _network_policy_printer,
}


def _binding_columns(kind: str) -> tuple[Column, ...]:
    return (
        _NAME_COLUMN,
        _column("Role", description=_ROLE_REF_DOC),
        _AGE_COLUMN,
        _wide("Users", f"Users in the {kind}"),
        _wide("Groups", f"Groups in the {kind}"),
        _wide("ServiceAccounts", f"ServiceAccounts in the {kind}"),
    )


_ROLE_REF_DOC = (
    "RoleRef can reference a Role in the current namespace or a ClusterRole in the global "
    "namespace. If the RoleRef cannot be resolved, the Authorizer must return an error."
)
_INGRESS_COLUMNS = (
    _NAME_COLUMN,
    _column(
        "Class",
        description="The name of the IngressClass resource that should be used for additional "
        "configuration",
    ),
    _column(
        "Hosts",
        description="Hosts that incoming requests are matched against before the ingress rule",
    ),
    _column(
        "Address", description="Address is a list containing ingress points for the load-balancer"
    ),
    _column("Ports", description="Ports of TLS configurations that open"),
    _AGE_COLUMN,
)
# Kinds kube-apiserver prints with the default table convertor: name and creation time.
_CREATED_AT = ((_NAME_COLUMN, _column("Created At", "date", _AGE_DOC)), _created_at_cells)

_PRINTERS: dict[tuple[str, str], Printer] = {
    ("", "Namespace"): (
        (_NAME_COLUMN, _column("Status", description="The status of the namespace"), _AGE_COLUMN),
        _namespace_cells,
    ),
    ("", "Event"): (_EVENT_COLUMNS, _event_cells),
    ("", "ConfigMap"): (_CONFIG_MAP_COLUMNS, _config_map_cells),
    ("", "Secret"): (_SECRET_COLUMNS, _secret_cells),
    ("apps", "Deployment"): (_DEPLOYMENT_COLUMNS, _deployment_cells),
    ("apps", "StatefulSet"): (_STATEFUL_SET_COLUMNS, _stateful_set_cells),
    ("apps", "ReplicaSet"): (_REPLICA_SET_COLUMNS, _replica_set_cells),
    ("", "Pod"): (_POD_COLUMNS, _pod_cells),
    ("", "Node"): (_NODE_COLUMNS, _node_cells),
    ("coordination.k8s.io", "Lease"): (_LEASE_COLUMNS, _lease_cells),
    ("cluster.karmada.io", "Cluster"): (_CLUSTER_COLUMNS, _cluster_cells),
    ("autoscaling", "Scale"): (_SCALE_COLUMNS, _scale_cells),
    ("policy", "PodDisruptionBudget"): (_POD_DISRUPTION_BUDGET_COLUMNS, _pdb_cells),
    ("networking.k8s.io", "Ingress"): (_INGRESS_COLUMNS, _ingress_cells),
    ("rbac.authorization.k8s.io", "RoleBinding"): (_binding_columns("roleBinding"), _binding_cells),
    ("rbac.authorization.k8s.io", "ClusterRoleBinding"): (
        _binding_columns("clusterRoleBinding"),
        _binding_cells,
    ),
    ("", "ResourceQuota"): (_RESOURCE_QUOTA_COLUMNS, _resource_quota_cells),
    ("", "LimitRange"): _CREATED_AT,  # kube-apiserver has no printer of its own for it
    ("rbac.authorization.k8s.io", "Role"): _CREATED_AT,
    ("rbac.authorization.k8s.io", "ClusterRole"): _CREATED_AT,
    # apiextensions-apiserver 1.32 serves CRDs with the default table convertor.
    ("apiextensions.k8s.io", "CustomResourceDefinition"): _CREATED_AT,
}
