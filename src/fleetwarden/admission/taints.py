"""Taints as the API server validates them: kube's validateNodeTaints for a Node, and
Karmada's lifted ValidateClusterTaints for a Cluster (the same rules, fewer effects)."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from fleetwarden.admission.golang import wire
from fleetwarden.api.core import Taint
from fleetwarden.api.errors import ErrorList, Path
from fleetwarden.semantics.validation import is_label_value, validate_qualified_name


def validate_taints(taints: Sequence[Taint], path: Path, effects: tuple[str, ...]) -> ErrorList:
    """Each taint's key a qualified name, its value a label value, its effect one of
    `effects`; no two with the same key and effect."""
    errors: ErrorList = []
    seen: set[tuple[str, str]] = set()
    for i, taint in enumerate(taints):
        at = path.index(i)
        errors += validate_qualified_name(taint.key, at.child("key"))
        if messages := is_label_value(taint.value or ""):
            errors.append(at.child("value").invalid(taint.value or "", ";".join(messages)))
        if not taint.effect:
            errors.append(at.child("effect").required())
        elif taint.effect not in effects:
            errors.append(at.child("effect").not_supported(taint.effect, effects))
        if (taint.effect, taint.key) in seen:
            duplicate = at.duplicate(wire(taint))
            errors.append(
                dataclasses.replace(
                    duplicate, detail="taints must be unique by key and effect pair"
                )
            )
        seen.add((taint.effect, taint.key))
    return errors
