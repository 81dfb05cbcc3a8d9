"""CEL cluster selectors: OCM's CEL environment for a Placement's
`requiredClusterSelector.celSelector.celExpressions` (ocm pkg/placement/helpers/cel.go,
sdk-go pkg/cel/library), through the `common-expression-language` bindings of cel-rust.

The environment: the variable `managedCluster` (the ManagedCluster as it is on the wire),
CEL's standard functions and macros, and
- `managedCluster.scores("<AddOnPlacementScore name>")`: that score's items for the cluster,
  as `[{name, value}]`; an error (the cluster does not match) when there is no such score;
- `parseJSON(string)`;
- Kubernetes' semver library: `semver("1.2.3")`, `isSemver(s)`, and on a semver `major()`,
  `minor()`, `patch()`, `isGreaterThan(v)`, `isLessThan(v)`, `compareTo(v)`;
- Kubernetes' quantity library: `quantity("1Gi")`, `isQuantity(s)`, and on a quantity
  `isGreaterThan(q)`, `isLessThan(q)`, `compareTo(q)`, `asInteger()`,
  `asApproximateFloat()`, `isInteger()`, `sign()`, `add(q)`, `sub(q)`.

A cluster matches when every expression evaluates to true; an error, or a value that is not
a boolean, does not match. Compile errors are reported as upstream words them
(`compilation failed: ERROR: <input>:1:7: Syntax error: ...`, with cel-go's ` | ` snippet
lines), a call of a function the environment does not declare included (cel-rust checks no
types: such a call is found in the compiled program's references).

Not as upstream: no static type check (`1 + "a"` fails when evaluated, not compiled), no cost
budget, and of the other Kubernetes libraries (lists, regex, URLs, IP, CIDR, format,
ext.Strings, optional types) only what CEL's standard library has.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import cel

from fleetwarden.semantics.quantity import QuantityError, parse_quantity

Scores = Callable[[str, str], list[dict[str, Any]] | None]

_SEMVER = re.compile(
    r"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)"
    r"(?:-((?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?"
    r"(?:\+([0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?$"
)
# Functions of CEL's standard library the program may call (cel-go's standard declarations).
_STANDARD = frozenset({
    "!_", "-_", "@in", "@not_strictly_false", "_!=_", "_%_", "_&&_", "_*_", "_+_", "_-_", "_/_",
    "_<=_", "_<_", "_==_", "_>=_", "_>_", "_?_:_", "_[_]", "_||_", "bool", "bytes", "contains",
    "double", "duration", "dyn", "endsWith", "getDate", "getDayOfMonth", "getDayOfWeek",
    "getDayOfYear", "getFullYear", "getHours", "getMilliseconds", "getMinutes", "getMonth",
    "getSeconds", "has", "int", "matches", "size", "startsWith", "string", "timestamp", "type",
    "uint",
})  # fmt: skip
_MACRO_VARIABLE = re.compile(r"\.\s*(?:all|exists|exists_one|map|filter)\s*\(\s*([A-Za-z_]\w*)")
_SEMVER_TAG, _QUANTITY_TAG = "@semver", "@quantity"


class CelError(ValueError):
    """An expression that does not compile: upstream's words for it."""


@dataclass(frozen=True)
class CelSelector:
    """helpers.CELSelector: the compiled expressions, all of which must hold."""

    programs: tuple[Any, ...]

    @classmethod
    def compile(cls, expressions: list[str]) -> CelSelector:
        """Raises CelError naming the first expression that does not compile."""
        return cls(tuple(_compile(e) for e in expressions))

    def matches(self, cluster: Mapping[str, Any], scores: Scores) -> bool:
        context = _context(cluster, scores)
        for program in self.programs:
            try:
                if program.execute(context) is not True:
                    return False
            except Exception:  # any evaluation error: the cluster does not match
                return False
        return True


def _compile(expression: str) -> Any:
    try:
        program = cel.compile(expression)
    except ValueError as err:
        detail = str(err).split(": ", 1)[1] if ": ERROR: " in str(err) else str(err)
        raise CelError("compilation failed: " + detail.replace("\n| ", "\n | ")) from None
    bound = set(_MACRO_VARIABLE.findall(expression))
    for name in program.functions():
        if name not in _STANDARD and name not in _ENVIRONMENT:
            raise CelError("compilation failed: " + _undeclared(expression, name))
    for name in program.variables():
        if name != "managedCluster" and name not in bound:
            raise CelError("compilation failed: " + _undeclared(expression, name))
    return program


def _undeclared(expression: str, name: str) -> str:
    """cel-go's error for a name the environment does not declare, with its snippet."""
    found = re.search(rf"(?<![\w.]){re.escape(name)}\b", expression) or re.search(
        rf"\b{re.escape(name)}\b", expression
    )
    column = found.start() if found else 0
    line = expression.splitlines()[0] if expression else ""
    return (
        f"ERROR: <input>:1:{column + 1}: undeclared reference to '{name}' (in container '')"
        f"\n | {line}\n | {'.' * column}^"
    )


def _context(cluster: Mapping[str, Any], scores: Scores) -> Any:
    context = cel.Context()
    context.add_variable("managedCluster", cluster)
    for name, function in _ENVIRONMENT.items():
        context.add_function(name, function)
    context.add_function("scores", functools.partial(_scores, scores))
    return context


def _scores(lookup: Scores, cluster: Mapping[str, Any], name: str) -> list[dict[str, Any]]:
    items = lookup(str((cluster.get("metadata") or {}).get("name", "")), name)
    if items is None:
        raise ValueError(f"failed to get score: {name} not found")
    return items


# --- Kubernetes' semver and quantity libraries ------------------------------------------------


def _semver(text: str) -> dict[str, str]:
    if not _SEMVER.match(text):
        raise ValueError(f"could not parse {text!r} as semver")
    return {_SEMVER_TAG: text}


def _semver_key(value: Mapping[str, str]) -> tuple[Any, ...]:
    """Semantic Versioning's precedence: numbers, then a release above its prereleases,
    whose identifiers compare numerically or as text."""
    match = _SEMVER.match(value[_SEMVER_TAG])
    assert match is not None
    major, minor, patch, pre, _ = match.groups()
    identifiers = tuple(
        (0, int(p), "") if p.isdigit() else (1, 0, p) for p in (pre or "").split(".") if pre
    )
    return (int(major), int(minor), int(patch), not pre, identifiers)


def _quantity(text: str) -> dict[str, str]:
    try:
        parse_quantity(text)
    except QuantityError as err:
        raise ValueError(str(err)) from err
    return {_QUANTITY_TAG: text}


def _amount(value: Mapping[str, str]) -> Fraction:
    return parse_quantity(value[_QUANTITY_TAG])


def _order(a: Mapping[str, str], b: Mapping[str, str]) -> int:
    """compareTo for two semvers or two quantities."""
    if _SEMVER_TAG in a and _SEMVER_TAG in b:
        left, right = _semver_key(a), _semver_key(b)
    elif _QUANTITY_TAG in a and _QUANTITY_TAG in b:
        left, right = _amount(a), _amount(b)  # type: ignore[assignment]
    else:
        raise ValueError("no such overload")
    return (left > right) - (left < right)


def _valid(parse: Callable[[str], object]) -> Callable[[str], bool]:
    def check(text: str) -> bool:
        try:
            parse(text)
        except ValueError:
            return False
        return True

    return check


def _as_quantity(amount: Fraction) -> dict[str, str]:
    text = str(amount.numerator) if amount.denominator == 1 else str(float(amount))
    return {_QUANTITY_TAG: text}


_ENVIRONMENT: dict[str, Callable[..., Any]] = {
    "scores": _scores,  # replaced per evaluation by one bound to the score lister
    "parseJSON": json.loads,
    "semver": _semver,
    "isSemver": _valid(_semver),
    "major": lambda v: _semver_key(v)[0],
    "minor": lambda v: _semver_key(v)[1],
    "patch": lambda v: _semver_key(v)[2],
    "quantity": _quantity,
    "isQuantity": _valid(_quantity),
    "compareTo": _order,
    "isGreaterThan": lambda a, b: _order(a, b) > 0,
    "isLessThan": lambda a, b: _order(a, b) < 0,
    "asInteger": lambda q: _checked_integer(_amount(q)),
    "asApproximateFloat": lambda q: float(_amount(q)),
    "isInteger": lambda q: _amount(q).denominator == 1,
    "sign": lambda q: (_amount(q) > 0) - (_amount(q) < 0),
    "add": lambda a, b: _as_quantity(_amount(a) + (_amount(b) if isinstance(b, Mapping) else b)),
    "sub": lambda a, b: _as_quantity(_amount(a) - (_amount(b) if isinstance(b, Mapping) else b)),
}


def _checked_integer(amount: Fraction) -> int:
    if amount.denominator != 1:
        raise ValueError("cannot convert value to integer")
    return amount.numerator
