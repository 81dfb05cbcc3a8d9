"""DeleteOptions, read and checked as kube-apiserver's delete handler reads and checks them.

The options come from the body when there is one, else from the query (propagationPolicy,
orphanDependents, gracePeriodSeconds, dryRun); the other is then ignored, as upstream.
A field of the wrong JSON type is a 400 worded as Go's decoder words it; a value
ValidateDeleteOptions refuses is a 422 on `DeleteOptions.meta.k8s.io ""`; either way the
object is left alone. Unknown fields are ignored (the decoder is not strict).

What the store does with them: Background and Orphan propagation are honoured (the store
collects or orphans dependents in the delete's own write); Foreground, which keeps the
owner until its dependents are gone, is refused, since nothing would hold it. There is no
graceful deletion, so gracePeriodSeconds is checked, then has no effect, as for any kind
but Pods upstream.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from fleetwarden.api.errors import BadRequest, FieldError, Invalid, Path
from fleetwarden.server.http import Request
from fleetwarden.store.interface import Propagation

_GROUP = "meta.k8s.io"
_POLICIES = ("Foreground", "Background", "Orphan")
_INT64 = range(-(2**63), 2**63)


@dataclass(frozen=True)
class DeleteOptions:
    propagation: Propagation = Propagation.BACKGROUND
    dry_run: bool = False
    # preconditions: what the object must still have
    uid: str | None = None
    resource_version: str | None = None


def delete_options(request: Request) -> DeleteOptions:
    """The request's DeleteOptions; 400 or 422 for options kube-apiserver refuses."""
    raw = _from_body(request) if request.body.strip() else _from_query(request)
    _validate(raw)
    policy, orphan = raw.get("propagationPolicy"), raw.get("orphanDependents")
    if policy == "Foreground":
        supported = Path("propagationPolicy").not_supported(policy, ["Background", "Orphan", "nil"])
        raise Invalid("DeleteOptions", _GROUP, "", [supported])
    orphaning = policy == "Orphan" or orphan is True
    preconditions = raw.get("preconditions") or {}
    return DeleteOptions(
        propagation=Propagation.ORPHAN if orphaning else Propagation.BACKGROUND,
        dry_run=bool(raw.get("dryRun")),
        uid=preconditions.get("uid"),
        resource_version=preconditions.get("resourceVersion"),
    )


def _from_body(request: Request) -> dict[str, Any]:
    body = request.document()
    if not isinstance(body, dict):
        raise BadRequest("the body of a delete request must be a DeleteOptions object")
    kind = body.get("kind")
    if kind and kind != "DeleteOptions":
        raise BadRequest("decoded object cannot be converted to DeleteOptions")
    _typed(body, "gracePeriodSeconds", "int64", _is_int64)
    _typed(body, "orphanDependents", "bool", _of(bool))
    _typed(body, "propagationPolicy", "v1.DeletionPropagation", _of(str))
    _typed(body, "dryRun", "[]string", _of(list))
    for item in body.get("dryRun") or ():
        if not isinstance(item, str):
            raise _type_error(item, "DeleteOptions.dryRun", "string")
    preconditions = _typed(body, "preconditions", "v1.Preconditions", _of(dict))
    if preconditions is not None:
        path = "Preconditions.preconditions"
        _typed(preconditions, "uid", "types.UID", _of(str), path)
        _typed(preconditions, "resourceVersion", "string", _of(str), path)
    return body


def _from_query(request: Request) -> dict[str, Any]:
    """Query parameters as the parameter codec converts them (400 for a bad value)."""
    raw: dict[str, Any] = {"gracePeriodSeconds": request.integer("gracePeriodSeconds")}
    raw["propagationPolicy"] = request.param("propagationPolicy")
    if request.param("orphanDependents") is not None:
        raw["orphanDependents"] = request.flag("orphanDependents")
    raw["dryRun"] = request.params("dryRun")
    return raw


def _validate(raw: dict[str, Any]) -> None:
    """ValidateDeleteOptions."""
    errors: list[FieldError] = []
    policy, path = raw.get("propagationPolicy"), Path("propagationPolicy")
    if raw.get("orphanDependents") is not None and policy is not None:
        detail = "orphanDependents and deletionPropagation cannot be both set"
        errors.append(path.invalid(policy, detail))
    if policy is not None and policy not in _POLICIES:
        errors.append(path.not_supported(policy, [*_POLICIES, "nil"]))
    dry_run = raw.get("dryRun") or []
    if any(value != "All" for value in dry_run):
        errors.append(Path("dryRun").not_supported(dry_run, ["All"]))
    if errors:
        raise Invalid("DeleteOptions", _GROUP, "", errors)


def _typed(
    body: dict[str, Any],
    key: str,
    go_type: str,
    accepts: Callable[[Any], bool],
    struct: str = "DeleteOptions",
) -> Any:
    """The field's value if it is null or of its Go type; else Go's unmarshal error."""
    value = body.get(key)
    if value is None or accepts(value):
        return value
    raise _type_error(value, f"{struct}.{key}", go_type)


def _type_error(value: Any, field: str, go_type: str) -> BadRequest:
    return BadRequest(
        f"json: cannot unmarshal {_json_type(value, go_type)} into Go struct field {field} "
        f"of type {go_type}"
    )


def _json_type(value: Any, go_type: str) -> str:
    """How Go's UnmarshalTypeError names the JSON value (a number meant for an integer
    field by its literal)."""
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int | float):
        return f"number {value}" if go_type == "int64" else "number"
    if isinstance(value, str):
        return "string"
    return "array" if isinstance(value, list) else "object"


def _of(kind: type) -> Callable[[Any], bool]:
    """isinstance for JSON values: a bool is not a number, nor a number a bool."""
    return lambda value: type(value) is kind


def _is_int64(value: Any) -> bool:
    return type(value) is int and value in _INT64
