"""meta.SetStatusCondition: conditions keep their lastTransitionTime until status changes."""

from __future__ import annotations

from datetime import datetime

from fleetwarden.api.meta import Condition


def set_status_condition(
    conditions: list[Condition] | None, new: Condition, now: datetime
) -> list[Condition]:
    """The conditions with `new` set; a copy, the given list is left as it is."""
    result = [c.model_copy() for c in conditions or []]
    for i, existing in enumerate(result):
        if existing.type != new.type:
            continue
        changed = existing.status != new.status
        updated = new.model_copy()
        updated.last_transition_time = (
            (new.last_transition_time or now) if changed else existing.last_transition_time
        )
        result[i] = updated
        return result
    added = new.model_copy()
    added.last_transition_time = new.last_transition_time or now
    result.append(added)
    return result
