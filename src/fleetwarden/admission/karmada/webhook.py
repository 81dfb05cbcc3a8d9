"""What karmada-webhook's handlers share: the JSON round trip through its Go types, and the
permanent ids it stamps.

For a CRD the API server applies the schema's defaults, calls the mutating webhook (whose
patch, marshalled from the Go types, writes every field that has no omitempty and drops empty
omitempty strings), defaults again, checks the schema, and only when that holds calls the
validating webhook.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from pydantic import BaseModel

from fleetwarden.admission.chain import Mutate, Operation, Request
from fleetwarden.admission.schema import Object, apply_defaults
from fleetwarden.api.karmada import well_known
from fleetwarden.api.meta import ObjectMeta, Resource

CREATE = frozenset({Operation.CREATE})
CREATE_UPDATE = frozenset({Operation.CREATE, Operation.UPDATE})


def _marshal_like_go(model: BaseModel) -> None:
    """What json.Marshal of the Go struct writes back: structs and the scalars without
    omitempty (ours have a scalar default) always, nil and empty omitempty ones never. A nil
    slice marshals to null, which the API server prunes, so an unset list stays unset."""
    for name, info in type(model).model_fields.items():
        value = getattr(model, name)
        if info.default is None and value in (None, ""):
            setattr(model, name, None)
            model.model_fields_set.discard(name)
        elif isinstance(value, BaseModel) or isinstance(info.default, str | int | float):
            setattr(model, name, value)
        for item in value if isinstance(value, list) else [value]:
            if isinstance(item, BaseModel):
                _marshal_like_go(item)


def marshal_spec_like_go(obj: Any) -> None:
    """The spec as the webhook's patch writes it; the status belongs to the status subresource."""
    obj.spec = obj.spec  # Go marshals the spec struct even when the request left it out
    _marshal_like_go(obj.spec)


def through_webhook(schema: Object, webhook: Mutate, operations: Collection[Operation]) -> Mutate:
    """A CRD's admission up to validation: its defaults, the mutating webhook (on the operations
    it is registered for) and its Go round trip, then the defaults again."""

    def mutate(request: Request) -> None:
        apply_defaults(schema, request.obj)
        if request.operation in operations:
            webhook(request)
            marshal_spec_like_go(request.obj)
            apply_defaults(schema, request.obj)

    return mutate


def permanent_id(kind: str, meta: ObjectMeta) -> str:
    return well_known.permanent_id(kind, meta.namespace, meta.name)


def set_label(meta: ObjectMeta, key: str, value: str) -> None:
    meta.labels = {**(meta.labels or {}), key: value}


def label_unset_permanent_id(obj: Resource, label: str) -> None:
    """The binding and work webhooks: a permanent id unless one is already there."""
    if not (obj.metadata.labels or {}).get(label):
        set_label(obj.metadata, label, permanent_id(obj.kind, obj.metadata))
