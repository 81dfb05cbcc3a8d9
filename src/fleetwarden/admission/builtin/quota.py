"""A namespace's resource policies as kube-apiserver validates them
(pkg/apis/core/validation: ValidateResourceQuota, ValidateLimitRange, and the resource name
rules of pkg/apis/core/helper they share). Karmada users propagate them to every member
beside the workloads they bound.

Covered: ResourceQuota's hard and used amounts (known resource names, not negative, whole
numbers for counted resources), scopes and scope selectors (known scopes, their operators
and values, conflicting pairs, scopes that do not apply to a resource), scopes immutable on
update; LimitRange's types (known, not repeated), resource names per type, min ≤ default
request ≤ default ≤ max, the limit/request ratio, no defaults for Pod limits, equal default
and request for resources that may not be overcommitted, a storage bound for PVC limits.

Where upstream shows a quantity in a message it shows its canonical text; the hub keeps a
quantity as it was written, and shows that. A value upstream prints as a Go struct (a
Quantity refused for not being whole) is shown as its text.
"""

from __future__ import annotations

from typing import Any

from fleetwarden.admission.builtin.pods import Obj, quantity_amount
from fleetwarden.api.errors import ErrorList, Path
from fleetwarden.semantics.quantity import milli_value
from fleetwarden.semantics.validation import NEGATIVE_ERROR, is_qualified_name

SPEC = Path("spec")
HUGE_PAGES = "hugepages-"
_REQUESTS_HUGE_PAGES = "requests.hugepages-"
_COMPUTE = ("cpu", "memory", "ephemeral-storage")
_COUNTED = (
    "pods", "resourcequotas", "services", "replicationcontrollers", "secrets", "configmaps",
    "persistentvolumeclaims", "services.nodeports", "services.loadbalancers",
)  # fmt: skip
_QUOTA_RESOURCES = frozenset({
    *_COMPUTE, *_COUNTED, "requests.cpu", "requests.memory", "requests.storage",
    "requests.ephemeral-storage", "limits.cpu", "limits.memory", "limits.ephemeral-storage",
})  # fmt: skip
_STANDARD_RESOURCES = _QUOTA_RESOURCES | {"storage"}
_POD_COMPUTE = frozenset(
    {"cpu", "memory", "limits.cpu", "limits.memory", "requests.cpu", "requests.memory"}
)
_SCOPES = (
    "Terminating", "NotTerminating", "BestEffort", "NotBestEffort", "PriorityClass",
    "CrossNamespacePodAffinity",
)  # fmt: skip
# The scopes that only select pods, and of those the one that selects pods without requests.
_POD_SCOPES = frozenset(_SCOPES) - {"BestEffort"}
_CONFLICTING_SCOPES = (("BestEffort", "NotBestEffort"), ("Terminating", "NotTerminating"))
_EXISTS_ONLY = (
    "must be 'Exists' when scope is any of ResourceQuotaScopeTerminating, "
    "ResourceQuotaScopeNotTerminating, ResourceQuotaScopeBestEffort, "
    "ResourceQuotaScopeNotBestEffort or ResourceQuotaScopeCrossNamespacePodAffinity"
)
_LIMIT_TYPES = ("Pod", "Container", "PersistentVolumeClaim")


# --- resource names (pkg/apis/core/helper) -------------------------------------------------------


def _is_native(name: str) -> bool:
    return "/" not in name or "kubernetes.io/" in name


def _is_extended(name: str) -> bool:
    return (
        not _is_native(name)
        and not name.startswith("requests.")
        and not is_qualified_name("requests." + name)
    )


def _is_quota_huge_pages(name: str) -> bool:
    return name.startswith((HUGE_PAGES, _REQUESTS_HUGE_PAGES))


def _is_integer_resource(name: str) -> bool:
    return name in _COUNTED or _is_extended(name)


def _is_overcommit_allowed(name: str) -> bool:
    return _is_native(name) and not name.startswith(HUGE_PAGES)


def _resource_name(name: str, path: Path) -> ErrorList:
    """validateResourceName: a qualified name, and a known one unless it has a prefix."""
    errs = [path.invalid(name, m) for m in is_qualified_name(name)]
    if errs:
        return errs
    if "/" not in name and not (name in _STANDARD_RESOURCES or _is_quota_huge_pages(name)):
        return [path.invalid(name, "must be a standard resource type or fully qualified")]
    return []


def _quota_resource_name(name: str, path: Path) -> ErrorList:
    errs = _resource_name(name, path)
    if "/" not in name and not (name in _QUOTA_RESOURCES or _is_quota_huge_pages(name)):
        errs.append(path.invalid(name, "must be a standard resource for quota"))
    return errs


def _container_resource_name(name: str, path: Path) -> ErrorList:
    errs = _resource_name(name, path)
    if "/" not in name:
        if name not in _COMPUTE and not name.startswith(HUGE_PAGES):
            errs.append(path.invalid(name, "must be a standard resource for containers"))
    elif not _is_native(name) and not _is_extended(name):
        errs.append(path.invalid(name, "doesn't follow extended resource name standard"))
    return errs


def _quantity_value(name: str, quantity: Any, path: Path) -> ErrorList:
    """ValidateResourceQuantityValue: not negative; whole for a counted resource."""
    amount = quantity_amount(quantity)
    errs: ErrorList = []
    if amount < 0:
        errs.append(path.invalid(str(quantity), NEGATIVE_ERROR))
    if _is_integer_resource(name) and milli_value(amount) % 1000:
        errs.append(path.invalid(str(quantity), "must be an integer"))
    return errs


# --- ResourceQuota -------------------------------------------------------------------------------


def validate_resource_quota(obj: Obj, old: Obj | None) -> ErrorList:
    """ValidateResourceQuota's spec rules (a create's status is dropped before they run);
    on update, scopes that may not change."""
    spec = obj.get("spec") or {}
    errs = _amounts(spec.get("hard") or {}, SPEC.child("hard"))
    errs += _scopes(spec)
    if spec.get("scopeSelector") is not None:
        errs += _scope_selector(spec, SPEC.child("scopeSelector", "matchExpressions"))
    if old is None:
        return errs
    scopes = spec.get("scopes") or []
    if set(scopes) != set((old.get("spec") or {}).get("scopes") or []):
        errs.append(SPEC.child("scopes").invalid(scopes, "field is immutable"))
    return errs


def validate_resource_quota_status(obj: Obj, old: Obj | None) -> ErrorList:
    """ValidateResourceQuotaStatusUpdate: the hard and used amounts the quota controller
    writes."""
    status = obj.get("status") or {}
    path = Path("status")
    return [e for f in ("hard", "used") for e in _amounts(status.get(f) or {}, path.child(f))]


def _amounts(amounts: dict[str, Any], path: Path) -> ErrorList:
    errs: ErrorList = []
    for name, quantity in amounts.items():
        errs += _quota_resource_name(name, path.key(name))
        errs += _quantity_value(name, quantity, path.key(name))
    return errs


def _misapplied(scope: str, hard: dict[str, Any]) -> bool:
    """Whether a scope that selects pods is given for a resource other than theirs."""
    return any(
        (name in _QUOTA_RESOURCES or _is_quota_huge_pages(name)) and not _scope_applies(scope, name)
        for name in sorted(hard)
    )


def _scope_applies(scope: str, name: str) -> bool:
    """IsResourceQuotaScopeValidForResource."""
    if scope == "BestEffort":
        return name == "pods"
    return scope not in _POD_SCOPES or name == "pods" or name in _POD_COMPUTE


def _scopes(spec: Obj) -> ErrorList:
    """validateResourceQuotaScopes: each error shows the whole list, as upstream's does."""
    scopes: list[str] = spec.get("scopes") or []
    path, hard = SPEC.child("scopes"), spec.get("hard") or {}
    errs: ErrorList = []
    for scope in scopes:
        if scope not in _SCOPES:
            errs.append(path.invalid(scopes, "unsupported scope"))
        if _misapplied(scope, hard):
            errs.append(path.invalid(scopes, "unsupported scope applied to resource"))
    return errs + _conflicts(set(scopes), path, scopes)


def _conflicts(scopes: set[str], path: Path, shown: Any) -> ErrorList:
    return [
        path.invalid(shown, "conflicting scopes")
        for pair in _CONFLICTING_SCOPES
        if scopes.issuperset(pair)
    ]


def _scope_selector(spec: Obj, path: Path) -> ErrorList:
    """validateScopedResourceSelectorRequirement; its paths name no index, as upstream's."""
    selector, hard = spec["scopeSelector"], spec.get("hard") or {}
    errs: ErrorList = []
    names: set[str] = set()
    for req in selector.get("matchExpressions") or []:
        scope, operator = req.get("scopeName") or "", req.get("operator") or ""
        values = req.get("values") or []
        if scope not in _SCOPES:
            errs.append(path.child("scopeName").invalid(scope, "unsupported scope"))
        if _misapplied(scope, hard):
            errs.append(path.invalid(selector, "unsupported scope applied to resource"))
        if scope in _SCOPES and scope != "PriorityClass" and operator != "Exists":
            errs.append(path.child("operator").invalid(operator, _EXISTS_ONLY))
        errs += _scope_operator(operator, values, path)
        names.add(scope)
    return errs + _conflicts(names, path, spec.get("scopes"))


def _scope_operator(operator: str, values: list[str], path: Path) -> ErrorList:
    if operator in ("In", "NotIn"):
        if values:
            return []
        detail = "must be at least one value when `operator` is 'In' or 'NotIn' for scope selector"
        return [path.child("values").required(detail)]
    if operator in ("Exists", "DoesNotExist"):
        if not values:
            return []
        detail = "must be no value when `operator` is 'Exist' or 'DoesNotExist' for scope selector"
        return [path.child("values").invalid(values, detail)]
    return [path.child("operator").invalid(operator, "not a valid selector operator")]


# --- LimitRange ----------------------------------------------------------------------------------

# The bounds a limit may give, in the order upstream checks them.
_BOUNDS = ("max", "min", "default", "defaultRequest", "maxLimitRequestRatio")


def validate_limit_range(obj: Obj, old: Obj | None) -> ErrorList:
    """ValidateLimitRange: the same rules on create and update."""
    path = SPEC.child("limits")
    errs: ErrorList = []
    seen: set[str] = set()
    for i, limit in enumerate((obj.get("spec") or {}).get("limits") or []):
        kind = limit.get("type") or ""
        errs += _limit_type(kind, path.index(i).child("type"))
        if kind in seen:
            errs.append(path.index(i).child("type").duplicate(kind))
        seen.add(kind)
        errs += _limit(limit, kind, path.index(i))
    return errs


def _limit_type(kind: str, path: Path) -> ErrorList:
    errs = [path.invalid(kind, m) for m in is_qualified_name(kind)]
    if not errs and "/" not in kind and kind not in _LIMIT_TYPES:
        errs.append(path.invalid(kind, "must be a standard limit type or fully qualified"))
    return errs


def _limit(limit: Obj, kind: str, path: Path) -> ErrorList:
    name_rule = _container_resource_name if kind in ("Pod", "Container") else _resource_name
    errs: ErrorList = []
    bounds: dict[str, dict[str, Any]] = {}
    for bound in _BOUNDS:
        given = limit.get(bound) or {}
        if kind == "Pod" and bound in ("default", "defaultRequest"):
            if given:
                errs.append(
                    path.child(bound).forbidden("may not be specified when `type` is 'Pod'")
                )
            continue
        bounds[bound] = given
        errs += [e for name in given for e in name_rule(name, path.child(bound).key(name))]
    if kind == "PersistentVolumeClaim" and not any("storage" in bounds[b] for b in ("min", "max")):
        detail = "either minimum or maximum storage value is required, but neither was provided"
        errs.append(path.child("limits").required(detail))
    names = dict.fromkeys(name for given in bounds.values() for name in given)
    for name in names:
        errs += _ordered(
            name, {b: given[name] for b, given in bounds.items() if name in given}, path
        )
    return errs


# Each pair of bounds one must not exceed the other: (lower, higher, where the error is,
# whose value it shows, what the higher is called), in upstream's order.
_ORDER = (
    ("min", "max", "min", "min", "max"),
    ("min", "defaultRequest", "defaultRequest", "defaultRequest", "default request"),
    ("defaultRequest", "max", "defaultRequest", "defaultRequest", "max"),
    ("defaultRequest", "default", "defaultRequest", "defaultRequest", "default limit"),
    ("min", "default", "default", "min", "default"),
    ("default", "max", "default", "max", "max"),
)
_CALLED = {"min": "min", "defaultRequest": "default request", "default": "default"}


def _ordered(name: str, given: dict[str, Any], path: Path) -> ErrorList:
    """One resource's bounds: each below the next, and a sensible limit/request ratio."""
    errs: ErrorList = []
    for low, high, at, shown, called in _ORDER:
        if (
            low in given
            and high in given
            and quantity_amount(given[low]) > quantity_amount(given[high])
        ):
            detail = (
                f"{_CALLED[low]} value {given[low]} is greater than {called} value {given[high]}"
            )
            errs.append(path.child(at).key(name).invalid(str(given[shown]), detail))
    if "maxLimitRequestRatio" in given:
        errs += _ratio(given, path.child("maxLimitRequestRatio").key(name))
    if (
        not _is_overcommit_allowed(name)
        and "default" in given
        and "defaultRequest" in given
        and quantity_amount(given["default"]) != quantity_amount(given["defaultRequest"])
    ):
        detail = (
            f"default value {given['default']} must equal to defaultRequest value "
            f"{given['defaultRequest']} in {name}"
        )
        errs.append(
            path.child("defaultRequest").key(name).invalid(str(given["defaultRequest"]), detail)
        )
    return errs


def _ratio(given: dict[str, Any], path: Path) -> ErrorList:
    """At least 1, and not above what max/min allows (in milli-units, as upstream)."""
    ratio = given["maxLimitRequestRatio"]
    errs: ErrorList = []
    if quantity_amount(ratio) < 1:
        errs.append(path.invalid(str(ratio), f"ratio {ratio} is less than 1"))
    if "min" not in given or "max" not in given:
        return errs
    least = milli_value(quantity_amount(given["min"]))
    most = milli_value(quantity_amount(given["max"]))
    if least == 0:  # Go divides by zero into +Inf (or NaN): no ratio is above it
        return errs
    highest = most / least
    if milli_value(quantity_amount(ratio)) / 1000 > highest:
        errs.append(
            path.invalid(str(ratio), f"ratio {ratio} is greater than max/min = {highest:f}")
        )
    return errs
