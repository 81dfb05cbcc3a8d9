"""Writing a status the way upstream controllers do: only when it changed."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from fleetwarden.api.meta import Condition
from fleetwarden.semantics.conditions import set_status_condition
from fleetwarden.store.interface import Store


def update_status_if_changed(store: Store, obj: Any, status: Any) -> str | None:
    """Write `status` for the cached `obj` through the status subresource, if it differs;
    the new resourceVersion when it wrote, None when there was nothing to write.

    The write carries the resourceVersion read, so a stale cache fails with a conflict
    and the reconcile is retried on fresh data.
    """
    wire = status.to_dict()
    if wire == obj.status.to_dict():
        return None
    # The status serialised once: obj with `status` set would dump as obj plus this field.
    updated = obj.to_dict()
    updated["status"] = wire
    stored = store.update(updated, subresource="status")
    return str(stored["metadata"]["resourceVersion"])


def set_condition_if_changed(store: Store, obj: Any, condition: Condition, now: datetime) -> bool:
    """meta.SetStatusCondition on the cached `obj`'s status.conditions, then a status write
    if that changed anything (update_status_if_changed): whether it wrote."""
    conditions = set_status_condition(obj.status.conditions, condition, now)
    status = obj.status.model_copy(update={"conditions": conditions})
    return update_status_if_changed(store, obj, status) is not None
