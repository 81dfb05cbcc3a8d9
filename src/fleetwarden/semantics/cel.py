"""OCM's CEL environment (sdk-go pkg/cel: common.BaseEnvOpts and its libraries), through
the `common-expression-language` bindings of cel-rust: for Placement cluster selectors
(scheduling/ocm/cel.py) and ManifestWork condition rules (members/condition_rules.py).

Besides CEL's standard functions and macros, and the variables and functions each use
declares:
- `parseJSON(string)` and `hasConditions(map)` (sdk-go's json and conditions libraries);
- Kubernetes' semver library: `semver("1.2.3")`, `isSemver(s)`, and on a semver `major()`,
  `minor()`, `patch()`, `isGreaterThan(v)`, `isLessThan(v)`, `compareTo(v)`;
- Kubernetes' quantity library: `quantity("1Gi")`, `isQuantity(s)`, and on a quantity
  `isGreaterThan(q)`, `isLessThan(q)`, `compareTo(q)`, `asInteger()`,
  `asApproximateFloat()`, `isInteger()`, `sign()`, `add(q)`, `sub(q)`.

Compile errors are worded as cel-go's (`ERROR: <input>:1:7: Syntax error: ...` with its
` | ` snippet lines), a name the environment does not declare included (cel-rust checks no
types: such a name is found in the compiled program's references).

Not as upstream: no static type check (`1 + "a"` fails when evaluated, not compiled), no cost
budget, and of the other Kubernetes libraries (lists, regex, URLs, IP, CIDR, format,
ext.Strings, optional types) only what CEL's standard library has.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Mapping
from fractions import Fraction
from typing import Any

import cel

from fleetwarden.api.codec import load_json
from fleetwarden.semantics.quantity import QuantityError, parse_quantity

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
    """An expression that does not compile, or fails when evaluated: cel's words for it."""


def compile_expression(
    expression: str, variables: Collection[str], functions: Collection[str] = ()
) -> Any:
    """The program, once every name it uses is declared: the variables, the library's
    functions and `functions`. Raises CelError with cel-go's words."""
    try:
        program = cel.compile(expression)
    except ValueError as err:
        detail = str(err).split(": ", 1)[1] if ": ERROR: " in str(err) else str(err)
        raise CelError(detail.replace("\n| ", "\n | ")) from None
    bound = set(_MACRO_VARIABLE.findall(expression))
    for name in program.functions():
        if name not in _STANDARD and name not in LIBRARY and name not in functions:
            raise CelError(_undeclared(expression, name))
    for name in program.variables():
        if name not in variables and name not in bound:
            raise CelError(_undeclared(expression, name))
    return program


def evaluate(
    program: Any,
    variables: Mapping[str, Any],
    functions: Mapping[str, Callable[..., Any]] | None = None,
) -> Any:
    """The program's value; raises CelError for whatever fails in evaluating it."""
    context = cel.Context()
    for name, value in variables.items():
        context.add_variable(name, value)
    for name, function in {**LIBRARY, **(functions or {})}.items():
        context.add_function(name, function)
    try:
        return program.execute(context)
    except Exception as err:  # cel raises ValueError, TypeError, KeyError, RuntimeError...
        raise CelError(str(err)) from err


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


def has_conditions(status: Any) -> bool:
    """hasConditions: a map whose `conditions` is a list with something in it."""
    conditions = status.get("conditions") if isinstance(status, Mapping) else None
    return isinstance(conditions, list) and bool(conditions)


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


LIBRARY: dict[str, Callable[..., Any]] = {
    "parseJSON": load_json,  # bounded: claims and manifests are the members' to write
    "hasConditions": has_conditions,
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
