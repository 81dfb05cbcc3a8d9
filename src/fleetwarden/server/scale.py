"""The /scale subresource: an autoscaling/v1 Scale, a view of a workload's replicas and pod
selector, as the apps registries' ScaleREST and apiextensions-apiserver's serve it for
Deployments, ReplicaSets, StatefulSets and custom resources whose CRD asks for it. An
update of the view (PUT, or a patch of it) is written back into the workload's spec, and
so is admitted and versioned as the workload; `kubectl scale` and Karmada's FederatedHPA
scale a resource template this way.
"""

from __future__ import annotations

from typing import Any

from fleetwarden.admission.builtin.go_types import decoder
from fleetwarden.api.core import Unstructured
from fleetwarden.api.errors import BadRequest, Conflict, Invalid, Path, StatusError
from fleetwarden.api.kinds import KindInfo, Scale
from fleetwarden.api.meta import LabelSelector
from fleetwarden.semantics.selectors import SelectorError, label_selector_as_selector
from fleetwarden.store.interface import Obj

# The kind a /scale request's body and answer are: not a resource of its own.
SCALE = KindInfo("autoscaling", "v1", "Scale", "scales", True, Unstructured, has_status=False)
_decode = decoder("Scale", "v1", "V1Scale")
# What apiextensions-apiserver's Scale shows for a custom resource without spec replicas,
# while it is updated: a client's patch that leaves it so is refused.
_NO_REPLICAS = -(1 << 31)
_REPLICAS = Path("spec.replicas")


def scale_of(info: KindInfo, obj: Obj) -> Obj:
    """GET .../scale: the object's Scale."""
    scale, found = _scale(info, obj)
    if not found:
        path = _how(info).spec_replicas_path
        raise _internal(f'the spec replicas field "{path}" does not exist')
    return scale


def scaled(info: KindInfo, current: Obj, change: Any) -> Obj:
    """The object with the replicas of `change(its Scale)`, the new Scale (a PUT's body, or
    the patched one), and the Scale's resourceVersion, if any, as the write's precondition."""
    how = _how(info)
    old, found = _scale(info, current)
    if not found:
        old["spec"]["replicas"] = _NO_REPLICAS
    new, _pruned = _decode(change(old))
    replicas = (new.get("spec") or {}).get("replicas", 0)
    name = current["metadata"]["name"]
    if how.builtin:
        _check(info, current, new, name, replicas)
    elif replicas == _NO_REPLICAS:
        raise BadRequest(f'the spec replicas field "{how.spec_replicas_path}" cannot be empty')
    obj = _with(current, _fields(how.spec_replicas_path), replicas)
    obj["metadata"] = {**current["metadata"]}
    given_rv = (new.get("metadata") or {}).get("resourceVersion")
    if given_rv:
        obj["metadata"]["resourceVersion"] = given_rv
    return obj


def _check(info: KindInfo, current: Obj, new: Obj, name: str, replicas: int) -> None:
    """What the apps registries check of a Scale: ValidateScale, and its uid precondition."""
    if replicas < 0:
        error = _REPLICAS.invalid(replicas, "must be greater than or equal to 0")
        raise Invalid(SCALE.kind, SCALE.group, name, [error])
    uid, stored_uid = (new.get("metadata") or {}).get("uid"), current["metadata"].get("uid")
    if uid and uid != stored_uid:
        detail = (
            f"Precondition failed: UID in precondition: {uid}, UID in object meta: {stored_uid}"
        )
        raise Conflict(f"{info.plural}/scale", info.group, name, detail)


def _how(info: KindInfo) -> Scale:
    if info.scale is None:
        raise AssertionError(f"{info.plural} has no scale subresource")  # routes check it
    return info.scale


def _scale(info: KindInfo, obj: Obj) -> tuple[Obj, bool]:
    """The object's Scale, and whether its spec has replicas (the apps kinds default them
    to 1)."""
    how, meta = _how(info), obj["metadata"]
    spec_replicas = _nested_int(obj, how.spec_replicas_path)
    status_replicas = _nested_int(obj, how.status_replicas_path) or 0
    found = spec_replicas is not None or how.builtin
    if spec_replicas is None:
        spec_replicas = 1 if how.builtin else 0
    scale_meta = {"name": meta["name"]}
    if meta.get("namespace"):
        scale_meta["namespace"] = meta["namespace"]
    for key in ("uid", "resourceVersion"):
        if meta.get(key):
            scale_meta[key] = meta[key]
    scale_meta["creationTimestamp"] = meta.get("creationTimestamp")
    status: dict[str, Any] = {"replicas": status_replicas}
    selector = _selector(obj, how)
    if selector:
        status["selector"] = selector
    scale = {
        "kind": SCALE.kind,
        "apiVersion": SCALE.api_version,
        "metadata": scale_meta,
        "spec": {"replicas": spec_replicas} if spec_replicas else {},  # Go's omitempty
        "status": status,
    }
    return scale, found


def _selector(obj: Obj, how: Scale) -> str:
    """A custom resource's selector string at its path; an apps kind's spec.selector,
    printed as a selector string (`app=web,tier in (a,b)`)."""
    if not how.builtin:
        if not how.label_selector_path:
            return ""
        value = _nested(obj, _fields(how.label_selector_path))
        if value is not None and not isinstance(value, str):
            raise _internal(_accessor_error(how.label_selector_path, value, "string"))
        return value or ""
    raw = (obj.get("spec") or {}).get("selector")
    if raw is None:
        return ""
    try:
        return str(label_selector_as_selector(LabelSelector.model_validate(raw)))
    except SelectorError as err:
        raise BadRequest(str(err)) from None


def _nested_int(obj: Obj, path: str) -> int | None:
    value = _nested(obj, _fields(path))
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise _internal(_accessor_error(path, value, "int64"))
    return value


def _nested(obj: Any, fields: list[str]) -> Any:
    for name in fields:
        if not isinstance(obj, dict):
            return None
        obj = obj.get(name)
    return obj


def _with(obj: Obj, fields: list[str], value: int) -> Obj:
    """unstructured.SetNestedField on a copy: the maps on the way made where missing."""
    head, rest = fields[0], fields[1:]
    if not rest:
        return {**obj, head: value}
    inner = obj.get(head)
    if inner is None:
        inner = {}
    elif not isinstance(inner, dict):
        raise _internal(f"value cannot be set because .{head} is not a map[string]interface{{}}")
    return {**obj, head: _with(inner, rest, value)}


def _fields(path: str) -> list[str]:
    return path.removeprefix(".").split(".")


def _accessor_error(path: str, value: Any, wanted: str) -> str:
    go_type = {str: "string", float: "float64", bool: "bool", list: "[]interface {}"}.get(
        type(value), "map[string]interface {}"
    )
    return f"{path} accessor error: {value} is of the type {go_type}, expected {wanted}"


def _internal(text: str) -> StatusError:
    return StatusError(f"Internal error occurred: {text}")
