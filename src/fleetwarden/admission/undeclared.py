"""Fields a typed kind does not declare, dropped before admission as kube-apiserver drops them.

The typed models keep unknown fields (a decode and encode loses nothing); the API server
serves the Karmada and OCM kinds from CRDs whose structural schemas prune what they do not
declare, and its own kinds from Go types that cannot hold it. So a write keeps only what the
model declares: free-form values (a Work's manifests, a status the members report) are
plain dicts in the models, kept whole, as under the schemas' x-kubernetes-preserve-unknown-
fields. Resource templates (Unstructured) are left alone.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from pydantic import BaseModel

from fleetwarden.api.core import Unstructured
from fleetwarden.api.errors import Path
from fleetwarden.api.meta import Resource


def prune_undeclared(obj: Resource) -> list[str]:
    """Drop, in place, the fields of the object its model does not declare; their paths
    (`spec.taints[0].colour`), as strict field validation names them."""
    if isinstance(obj, Unstructured):
        return []
    return [str(path) for path in _prune(obj, Path())]


def _prune(value: Any, path: Path) -> Iterator[Path]:
    if isinstance(value, BaseModel):
        yield from _prune_model(value, path)
    else:  # a list; a dict is free-form (no model holds a dict of models)
        for i, item in enumerate(value):
            if isinstance(item, _NESTED):
                yield from _prune(item, path.index(i))


_NESTED = (BaseModel, list)


def _prune_model(model: BaseModel, path: Path) -> Iterator[Path]:
    given = model.__pydantic_fields_set__
    for name, info in type(model).__pydantic_fields__.items():  # in the model's order
        if name in given:
            value = getattr(model, name)
            if isinstance(value, _NESTED):
                yield from _prune(value, path.child(info.alias or name))
    extra = model.__pydantic_extra__ or {}
    for name in list(extra):
        del extra[name]
        given.discard(name)
        yield path.child(name)
