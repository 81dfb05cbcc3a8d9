"""autoscaling/v1 HorizontalPodAutoscaler: served beside autoscaling/v2, in which it is
stored, with kube-apiserver's conversion (pkg/apis/autoscaling/v1/conversion.go).

v1 knows one metric, the pods' average CPU utilization (`targetCPUUtilizationPercentage`);
every other v2 metric, the behavior and the status's metrics and conditions travel in the
`autoscaling.alpha.kubernetes.io/*` annotations, in v1's metric shapes (v2beta1's), so that
a v1 client's read-modify-write keeps them. A v1 object without any metric gets upstream's
implicit default, 80% CPU utilization. `kubectl autoscale` writes v1.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

GROUP = "autoscaling"
V1, V2 = f"{GROUP}/v1", f"{GROUP}/v2"
DEFAULT_CPU_UTILIZATION = 80
METRICS = "autoscaling.alpha.kubernetes.io/metrics"
CURRENT_METRICS = "autoscaling.alpha.kubernetes.io/current-metrics"
CONDITIONS = "autoscaling.alpha.kubernetes.io/conditions"
BEHAVIOR = "autoscaling.alpha.kubernetes.io/behavior"
_ROUND_TRIP = (METRICS, CURRENT_METRICS, CONDITIONS, BEHAVIOR)
_STATUS_FIELDS = ("observedGeneration", "lastScaleTime", "currentReplicas", "desiredReplicas")

Obj = dict[str, Any]
# Where each v1 field of a metric source is in v2, in the v1 Go struct's field order (which
# is how Go writes the annotations' JSON): (v1 field, v2 path).
_Pairs = tuple[tuple[str, tuple[str, ...]], ...]
_RESOURCE_SPEC: _Pairs = (
    ("name", ("name",)),
    ("targetAverageUtilization", ("target", "averageUtilization")),
    ("targetAverageValue", ("target", "averageValue")),
)
_SPEC_PAIRS: dict[str, _Pairs] = {
    "object": (
        ("target", ("describedObject",)),
        ("metricName", ("metric", "name")),
        ("targetValue", ("target", "value")),
        ("selector", ("metric", "selector")),
        ("averageValue", ("target", "averageValue")),
    ),
    "pods": (
        ("metricName", ("metric", "name")),
        ("targetAverageValue", ("target", "averageValue")),
        ("selector", ("metric", "selector")),
    ),
    "resource": _RESOURCE_SPEC,
    "containerResource": (*_RESOURCE_SPEC, ("container", ("container",))),
    "external": (
        ("metricName", ("metric", "name")),
        ("metricSelector", ("metric", "selector")),
        ("targetValue", ("target", "value")),
        ("targetAverageValue", ("target", "averageValue")),
    ),
}
_RESOURCE_STATUS: _Pairs = (
    ("name", ("name",)),
    ("currentAverageUtilization", ("current", "averageUtilization")),
    ("currentAverageValue", ("current", "averageValue")),
)
_STATUS_PAIRS: dict[str, _Pairs] = {
    "object": (
        ("target", ("describedObject",)),
        ("metricName", ("metric", "name")),
        ("currentValue", ("current", "value")),
        ("selector", ("metric", "selector")),
        ("averageValue", ("current", "averageValue")),
    ),
    "pods": (
        ("metricName", ("metric", "name")),
        ("currentAverageValue", ("current", "averageValue")),
        ("selector", ("metric", "selector")),
    ),
    "resource": _RESOURCE_STATUS,
    "containerResource": (*_RESOURCE_STATUS, ("container", ("container",))),
    "external": (
        ("metricName", ("metric", "name")),
        ("metricSelector", ("metric", "selector")),
        ("currentValue", ("current", "value")),
        ("currentAverageValue", ("current", "averageValue")),
    ),
}
# The v1 quantities that are no pointers: Go writes them even unset, as "0".
_SPEC_ZEROS = {("object", "targetValue"), ("pods", "targetAverageValue")}
_STATUS_ZEROS = {
    ("object", "currentValue"), ("pods", "currentAverageValue"),
    ("resource", "currentAverageValue"), ("containerResource", "currentAverageValue"),
    ("external", "currentValue"),
}  # fmt: skip
_SOURCES = tuple(_SPEC_PAIRS)  # v1.MetricSpec's field order


# --- v1 to v2 (written by a v1 client, stored as v2) ---------------------------------------------


def to_v2(obj: Mapping[str, Any]) -> Obj:
    meta = dict(obj.get("metadata") or {})
    annotations = dict(meta.get("annotations") or {})
    spec, status = obj.get("spec") or {}, obj.get("status") or {}
    metrics = [
        _metric_v2(m, _SPEC_PAIRS, _target_type) for m in _annotation(annotations, METRICS, list)
    ]
    if spec.get("targetCPUUtilizationPercentage") is not None:
        metrics.append(_cpu_utilization(spec["targetCPUUtilizationPercentage"]))
    new_spec = {k: spec[k] for k in ("scaleTargetRef", "minReplicas", "maxReplicas") if k in spec}
    new_spec["metrics"] = metrics or [_cpu_utilization(DEFAULT_CPU_UTILIZATION)]
    behavior = _annotation(annotations, BEHAVIOR, dict)
    if behavior:
        new_spec["behavior"] = behavior
    new_status = {k: status[k] for k in _STATUS_FIELDS if k in status}
    current = [
        _metric_v2(m, _STATUS_PAIRS) for m in _annotation(annotations, CURRENT_METRICS, list)
    ]
    if CURRENT_METRICS not in annotations and "currentCPUUtilizationPercentage" in status:
        used = {"averageUtilization": status["currentCPUUtilizationPercentage"]}
        current = [{"type": "Resource", "resource": {"name": "cpu", "current": used}}]
    if current:
        new_status["currentMetrics"] = current
    conditions = _annotation(annotations, CONDITIONS, list)
    if conditions:
        new_status["conditions"] = conditions
    for key in _ROUND_TRIP:
        annotations.pop(key, None)
    _set_annotations(meta, annotations)
    return {"apiVersion": V2, "kind": obj.get("kind"), "metadata": meta, "spec": new_spec,
            "status": new_status}  # fmt: skip


def _annotation(annotations: Mapping[str, str], key: str, kind: type) -> Any:
    """What a round-trip annotation holds, a list or an object; one that does not parse as
    that is ignored, as upstream ignores it."""
    try:
        value = json.loads(annotations.get(key) or "null")
    except ValueError:
        return kind()
    return value if isinstance(value, kind) else kind()


def _cpu_utilization(percent: Any) -> Obj:
    target = {"type": "Utilization", "averageUtilization": percent}
    return {"type": "Resource", "resource": {"name": "cpu", "target": target}}


def _target_type(field: str, source: Obj) -> str:
    """The v2 target type a v1 metric source means."""
    if field in ("resource", "containerResource"):
        utilization = source.get("targetAverageUtilization") is not None
        return "Utilization" if utilization else "AverageValue"
    if field == "object":
        return "AverageValue" if source.get("averageValue") is not None else "Value"
    if field == "external":
        return "Value" if source.get("targetValue") is not None else "AverageValue"
    return "AverageValue"


def _metric_v2(metric: Any, pairs: dict[str, _Pairs], target_type: Any = None) -> Obj:
    if not isinstance(metric, dict):
        return {}
    out: Obj = {"type": metric.get("type", "")}
    for field, fields in pairs.items():
        source = metric.get(field)
        if not isinstance(source, dict):
            continue
        converted: Obj = {}
        if target_type is not None:
            converted["target"] = {"type": target_type(field, source)}
        for v1_field, path in fields:
            if source.get(v1_field) is not None:
                _put(converted, path, source[v1_field])
        out[field] = converted
    return out


def _put(obj: Obj, path: tuple[str, ...], value: Any) -> None:
    for key in path[:-1]:
        obj = obj.setdefault(key, {})
    obj[path[-1]] = value


# --- v2 to v1 (stored as v2, read by a v1 client) ------------------------------------------------


def to_v1(obj: Mapping[str, Any]) -> Obj:
    meta = dict(obj.get("metadata") or {})
    annotations = {k: v for k, v in (meta.get("annotations") or {}).items() if k not in _ROUND_TRIP}
    spec, status = obj.get("spec") or {}, obj.get("status") or {}
    metrics = spec.get("metrics") or []
    others = [
        _metric_v1(m, _SPEC_PAIRS, _SPEC_ZEROS) for m in metrics if not _is_cpu_utilization(m)
    ]
    current = [
        _metric_v1(m, _STATUS_PAIRS, _STATUS_ZEROS) for m in status.get("currentMetrics") or []
    ]
    kept = {METRICS: others, CURRENT_METRICS: current, BEHAVIOR: spec.get("behavior"),
            CONDITIONS: status.get("conditions")}  # fmt: skip
    for key, value in kept.items():
        if value:
            annotations[key] = json.dumps(value, separators=(",", ":"))
    _set_annotations(meta, annotations)
    new_spec = {k: spec[k] for k in ("scaleTargetRef", "minReplicas", "maxReplicas") if k in spec}
    cpu = next((m for m in metrics if _resource_name(m) == "cpu"), None)
    target = ((cpu or {}).get("resource") or {}).get("target") or {}
    if target.get("averageUtilization") is not None:
        new_spec["targetCPUUtilizationPercentage"] = target["averageUtilization"]
    new_status = {k: status[k] for k in _STATUS_FIELDS if k in status}
    for metric in status.get("currentMetrics") or []:
        used = ((metric.get("resource") or {}).get("current") or {}).get("averageUtilization")
        if _resource_name(metric) == "cpu" and used is not None:
            new_status["currentCPUUtilizationPercentage"] = used
    return {"apiVersion": V1, "kind": obj.get("kind"), "metadata": meta, "spec": new_spec,
            "status": new_status}  # fmt: skip


def _resource_name(metric: Mapping[str, Any]) -> str | None:
    """The resource of a Resource metric."""
    if metric.get("type") != "Resource":
        return None
    return (metric.get("resource") or {}).get("name")


def _is_cpu_utilization(metric: Mapping[str, Any]) -> bool:
    """What targetCPUUtilizationPercentage says, and the metrics annotation leaves out."""
    target = (metric.get("resource") or {}).get("target") or {}
    return _resource_name(metric) == "cpu" and target.get("averageUtilization") is not None


def _metric_v1(
    metric: Mapping[str, Any], pairs: dict[str, _Pairs], zeros: set[tuple[str, str]]
) -> Obj:
    out: Obj = {"type": metric.get("type", "")}
    for field in _SOURCES:
        source = metric.get(field)
        if not isinstance(source, Mapping):
            continue
        converted: Obj = {}
        for v1_field, path in pairs[field]:
            value = _at(source, path)
            if value is None and (field, v1_field) in zeros:
                value = "0"
            if value is not None:
                converted[v1_field] = value
        out[field] = converted
    return out


def _at(obj: Mapping[str, Any], path: tuple[str, ...]) -> Any:
    value: Any = obj
    for key in path:
        value = value.get(key) if isinstance(value, Mapping) else None
    return value


def _set_annotations(meta: Obj, annotations: Obj) -> None:
    if annotations:
        meta["annotations"] = annotations
    else:
        meta.pop("annotations", None)
