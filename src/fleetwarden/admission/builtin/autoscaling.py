"""HorizontalPodAutoscaler (autoscaling/v2) as kube-apiserver validates it
(pkg/apis/autoscaling/validation): its replica bounds, its scale target, each metric (one
source, of its type, with a target that can be met) and its scaling behaviour. Karmada
users propagate HPAs beside the workloads they scale.
"""

from __future__ import annotations

from typing import Any

from fleetwarden.admission.builtin.pods import Obj
from fleetwarden.api.errors import ErrorList, Path
from fleetwarden.semantics.quantity import QuantityError, parse_quantity
from fleetwarden.semantics.validation import is_dns1123_label, is_path_segment_name

SPEC = Path("spec")
MAX_STABILIZATION_WINDOW_SECONDS = 3600
MAX_PERIOD_SECONDS = 1800
# Each metric source type, and the field that holds it.
_SOURCES = {
    "Object": "object",
    "Pods": "pods",
    "Resource": "resource",
    "ContainerResource": "containerResource",
    "External": "external",
}
_SOURCE_TYPES = tuple(sorted(_SOURCES))
_POPULATE = "must populate information for the given metric source"
_STANDARD_CONTAINER_RESOURCES = ("cpu", "memory", "ephemeral-storage")


def validate_horizontal_pod_autoscaler(obj: Obj, old: Obj | None) -> ErrorList:
    """validateHorizontalPodAutoscalerSpec; scale to zero only for an HPA that had it."""
    spec = obj.get("spec") or {}
    had_zero = old is not None and (old.get("spec") or {}).get("minReplicas") == 0
    lowest = 0 if had_zero else 1
    least, most = spec.get("minReplicas"), spec.get("maxReplicas", 0)
    errs: ErrorList = []
    if least is not None and least < lowest:
        detail = f"must be greater than or equal to {lowest}"
        errs.append(SPEC.child("minReplicas").invalid(least, detail))
    if most < 1:
        errs.append(SPEC.child("maxReplicas").invalid(most, "must be greater than 0"))
    if least is not None and most < least:
        detail = "must be greater than or equal to `minReplicas`"
        errs.append(SPEC.child("maxReplicas").invalid(most, detail))
    errs += _reference(spec.get("scaleTargetRef") or {}, SPEC.child("scaleTargetRef"))
    errs += _metrics(spec.get("metrics") or [], SPEC.child("metrics"), least)
    behavior = spec.get("behavior") or {}
    for direction in ("scaleUp", "scaleDown"):
        if behavior.get(direction) is not None:
            errs += _rules(behavior[direction], SPEC.child("behavior", direction))
    return errs


def _reference(ref: Obj, path: Path) -> ErrorList:
    """ValidateCrossVersionObjectReference."""
    errs: ErrorList = []
    for field in ("kind", "name"):
        value = ref.get(field) or ""
        if not value:
            errs.append(path.child(field).required())
        errs += [path.child(field).invalid(value, m) for m in is_path_segment_name(value)]
    return errs


def _metrics(metrics: list[Obj], path: Path, least: int | None) -> ErrorList:
    errs: ErrorList = []
    for i, metric in enumerate(metrics):
        errs += _metric(metric, path.index(i))
    if least == 0 and not any(m.get("type") in ("Object", "External") for m in metrics):
        detail = (
            "must specify at least one Object or External metric to support scaling to zero "
            "replicas"
        )
        errs.append(path.forbidden(detail))
    return errs


def _metric(metric: Obj, path: Path) -> ErrorList:
    """validateMetricSpec: a known type, its source given and no other."""
    kind, errs = _type_of(metric, path, "metric source")
    unsupported = path.child("type").not_supported(kind, _SOURCE_TYPES)
    if kind not in _SOURCES:
        errs.append(unsupported)
    present = [field for field in _SOURCES.values() if metric.get(field) is not None]
    if present:  # the first source given is checked, as upstream checks it
        errs += _SOURCE_CHECKS[present[0]](metric[present[0]], path.child(present[0]))
    expected = _SOURCES.get(kind)
    if expected is None:
        errs.append(unsupported)  # upstream's switch says so a second time
    elif metric.get(expected) is None:
        errs.append(path.child(expected).required(_POPULATE))
    if len(present) != 1:
        errs += [
            path.child(f).forbidden("must populate the given metric source only")
            for f in present
            if f != expected
        ]
    return errs


def _type_of(obj: Obj, path: Path, what: str) -> tuple[str, ErrorList]:
    """The `type` an object names, and the error when it names none."""
    kind = obj.get("type") or ""
    missing = [] if kind else [path.child("type").required(f"must specify a {what} type")]
    return kind, missing


def _named_metric(source: Obj, path: Path) -> tuple[Obj, ErrorList]:
    """A source's metric identifier and target checked; and the target."""
    target = source.get("target") or {}
    errs = _identifier(source.get("metric") or {}, path.child("metric"))
    return target, errs + _target(target, path.child("target"))


def _object_source(source: Obj, path: Path) -> ErrorList:
    errs = _reference(source.get("describedObject") or {}, path.child("describedObject"))
    target, metric_errs = _named_metric(source, path)
    errs += metric_errs
    if target.get("value") is None and target.get("averageValue") is None:
        detail = "must set either a target value or averageValue"
        errs.append(path.child("target", "averageValue").required(detail))
    return errs


def _external_source(source: Obj, path: Path) -> ErrorList:
    target, errs = _named_metric(source, path)
    value, average = target.get("value"), target.get("averageValue")
    if value is None and average is None:
        detail = "must set either a target value for metric or a per-pod target"
        errs.append(path.child("target", "averageValue").required(detail))
    if value is not None and average is not None:
        detail = "may not set both a target value for metric and a per-pod target"
        errs.append(path.child("target", "value").forbidden(detail))
    return errs


def _pods_source(source: Obj, path: Path) -> ErrorList:
    target, errs = _named_metric(source, path)
    if target.get("averageValue") is None:
        detail = "must specify a positive target averageValue"
        errs.append(path.child("target", "averageValue").required(detail))
    return errs


def _resource_source(source: Obj, path: Path) -> ErrorList:
    errs: ErrorList = []
    if not source.get("name"):
        errs.append(path.child("name").required("must specify a resource name"))
    return errs + _utilization_or_value(source.get("target") or {}, path.child("target"))


def _container_resource_source(source: Obj, path: Path) -> ErrorList:
    errs: ErrorList = []
    name = source.get("name") or ""
    if not name:
        errs.append(path.child("name").required("must specify a resource name"))
    elif "/" not in name and not (
        name in _STANDARD_CONTAINER_RESOURCES or name.startswith("hugepages-")
    ):
        errs.append(path.child("name").invalid(name, "must be a standard resource for containers"))
    container = source.get("container") or ""
    if not container:
        errs.append(path.child("container").required("must specify a container"))
    errs += [
        path.child("container").invalid(container, m)
        for m in (is_dns1123_label(container) if container else [])
    ]
    return errs + _utilization_or_value(source.get("target") or {}, path.child("target"))


def _utilization_or_value(target: Obj, path: Path) -> ErrorList:
    errs = _target(target, path)
    utilization, average = target.get("averageUtilization"), target.get("averageValue")
    if utilization is None and average is None:
        detail = "must set either a target raw value or a target utilization"
        errs.append(path.child("averageUtilization").required(detail))
    if utilization is not None and average is not None:
        detail = "may not set both a target raw value and a target utilization"
        errs.append(path.child("averageValue").forbidden(detail))
    return errs


def _target(target: Obj, path: Path) -> ErrorList:
    """validateMetricTarget."""
    kind, errs = _type_of(target, path, "metric target")
    if kind not in ("Utilization", "Value", "AverageValue"):
        detail = "must be either Utilization, Value, or AverageValue"
        errs.append(path.child("type").invalid(kind, detail))
    for field in ("value", "averageValue"):
        if target.get(field) is not None and not _positive(target[field]):
            errs.append(path.child(field).invalid(target[field], "must be positive"))
    utilization = target.get("averageUtilization")
    if utilization is not None and utilization < 1:
        errs.append(path.child("averageUtilization").invalid(utilization, "must be greater than 0"))
    return errs


def _positive(quantity: Any) -> bool:
    try:
        return parse_quantity(quantity) > 0
    except QuantityError:
        return False  # decoding refused it already


def _identifier(metric: Obj, path: Path) -> ErrorList:
    """validateMetricIdentifier."""
    name = metric.get("name") or ""
    if not name:
        return [path.child("name").required("must specify a metric name")]
    return [path.child("name").invalid(name, m) for m in is_path_segment_name(name)]


_SOURCE_CHECKS = {
    "object": _object_source,
    "pods": _pods_source,
    "resource": _resource_source,
    "containerResource": _container_resource_source,
    "external": _external_source,
}


def _rules(rules: Obj, path: Path) -> ErrorList:
    """validateScalingRules."""
    errs: ErrorList = []
    window = rules.get("stabilizationWindowSeconds")
    at = path.child("stabilizationWindowSeconds")
    if window is not None and window < 0:
        errs.append(at.invalid(window, "must be greater than or equal to zero"))
    if window is not None and window > MAX_STABILIZATION_WINDOW_SECONDS:
        detail = f"must be less than or equal to {MAX_STABILIZATION_WINDOW_SECONDS}"
        errs.append(at.invalid(window, detail))
    select = rules.get("selectPolicy")
    if select is not None and select not in ("Disabled", "Max", "Min"):
        errs.append(path.child("selectPolicy").not_supported(select, ("Disabled", "Max", "Min")))
    policies = rules.get("policies") or []
    if not policies:
        errs.append(path.child("policies").required("must specify at least one Policy"))
    for i, policy in enumerate(policies):
        errs += _policy(policy, path.child("policies").index(i))
    return errs


def _policy(policy: Obj, path: Path) -> ErrorList:
    """validateScalingPolicy."""
    errs: ErrorList = []
    kind = policy.get("type") or ""
    if kind not in ("Percent", "Pods"):
        errs.append(path.child("type").not_supported(kind, ("Percent", "Pods")))
    value, period = policy.get("value", 0), policy.get("periodSeconds", 0)
    if value <= 0:
        errs.append(path.child("value").invalid(value, "must be greater than zero"))
    if period <= 0:
        errs.append(path.child("periodSeconds").invalid(period, "must be greater than zero"))
    if period > MAX_PERIOD_SECONDS:
        detail = f"must be less than or equal to {MAX_PERIOD_SECONDS}"
        errs.append(path.child("periodSeconds").invalid(period, detail))
    return errs
