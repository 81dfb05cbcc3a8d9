"""CEL cluster selectors (ocm pkg/placement/helpers/cel.go): a Placement predicate's
`requiredClusterSelector.celSelector.celExpressions`, in OCM's CEL environment
(semantics/cel.py) with the variable `managedCluster` (the ManagedCluster as it is on the
wire) and `managedCluster.scores("<AddOnPlacementScore name>")`, that score's items for the
cluster as `[{name, value}]` (an error, so no match, where there is no such score).

A cluster matches when every expression evaluates to true; an error, or a value that is not
a boolean, does not match. An expression that does not compile is reported as upstream
does: `compilation failed: <cel's error>`.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from fleetwarden.semantics.cel import CelError, compile_expression, evaluate

Scores = Callable[[str, str], list[dict[str, Any]] | None]
VARIABLES = ("managedCluster",)


@dataclass(frozen=True)
class CelSelector:
    """helpers.CELSelector: the compiled expressions, all of which must hold."""

    programs: tuple[Any, ...]

    @classmethod
    def compile(cls, expressions: list[str]) -> CelSelector:
        """Raises CelError naming what does not compile in the first expression that fails."""
        try:
            return cls(tuple(compile_expression(e, VARIABLES, ("scores",)) for e in expressions))
        except CelError as err:
            raise CelError(f"compilation failed: {err}") from None

    def matches(self, cluster: Mapping[str, Any], scores: Scores) -> bool:
        functions = {"scores": functools.partial(_scores, scores)}
        for program in self.programs:
            try:
                if evaluate(program, {"managedCluster": cluster}, functions) is not True:
                    return False
            except CelError:
                return False
        return True


def _scores(lookup: Scores, cluster: Mapping[str, Any], name: str) -> list[dict[str, Any]]:
    items = lookup(str((cluster.get("metadata") or {}).get("name", "")), name)
    if items is None:
        raise ValueError(f"failed to get score: {name} not found")
    return items
