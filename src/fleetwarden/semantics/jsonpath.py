"""The JSONPath of kubectl, of CRD printer columns and of OCM's status feedback (client-go's
util/jsonpath), for one expression: `.status.conditions[?(@.type=="Ready")].status`,
`.spec.items[*].kind`, `..name`, `['a.b']`, `[0]`, `[-1]`, `[1:3]`, `[0,2]`.

Missing keys yield nothing rather than an error, as the API server asks of client-go for
its printer columns (AllowMissingKeys).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any


class JSONPathError(ValueError):
    """An expression that does not parse."""


Step = Callable[[list[Any]], list[Any]]

_NAME = re.compile(r"(?:\\.|[^\s.,\[\](){}=!<>\\])+")
_INDEX = re.compile(r"\s*(-?\d+)\s*$")
_SLICE = re.compile(r"\s*(-?\d*)\s*:\s*(-?\d*)\s*(?::\s*(-?\d*)\s*)?$")
_COMPARISON = re.compile(r"^(.*?)\s*(==|!=|<=|>=|<|>)\s*(.*)$", re.S)


@dataclass(frozen=True)
class JSONPath:
    expression: str
    steps: tuple[Step, ...]

    def find(self, data: Any) -> list[Any]:
        """Every value the expression selects, in document order."""
        values = [data]
        for step in self.steps:
            values = step(values)
        return values


def compile_path(expression: str) -> JSONPath:
    """`.a.b[0]`, with or without kubectl's template braces `{...}` and a leading `$`."""
    text = expression.strip()
    if text.startswith("{") and text.endswith("}"):
        text = text[1:-1].strip()
    text = text.removeprefix("$")
    return JSONPath(expression, tuple(_Parser(text).steps()))


class _Parser:
    def __init__(self, text: str) -> None:
        self.text, self.at = text, 0

    def steps(self) -> Iterator[Step]:
        while self.at < len(self.text):
            if self.text.startswith("..", self.at):
                self.at += 2
                yield _descendants
                if self.at < len(self.text) and self.text[self.at] not in ".[":
                    yield self._name()
            elif self.text[self.at] == ".":
                self.at += 1
                if self.text.startswith("*", self.at):
                    self.at += 1
                    yield _children
                elif self.at < len(self.text) and self.text[self.at] not in ".[":
                    yield self._name()
            elif self.text[self.at] == "[":
                yield self._bracket()
            else:
                raise JSONPathError(f"unrecognized character in {self.text!r} at {self.at}")

    def _name(self) -> Step:
        match = _NAME.match(self.text, self.at)
        if not match:
            raise JSONPathError(f"expected a field name in {self.text!r} at {self.at}")
        self.at = match.end()
        return _field(re.sub(r"\\(.)", r"\1", match.group()))

    def _bracket(self) -> Step:
        end = _closing(self.text, self.at, "[", "]")
        inner, self.at = self.text[self.at + 1 : end], end + 1
        if inner.strip() == "*":
            return _children
        if inner.startswith("?(") and inner.endswith(")"):
            return _filter(inner[2:-1].strip())
        if slice_ := _SLICE.match(inner):
            return _slice(*(int(p) if p else None for p in slice_.groups()))
        return _union([_literal_or_index(part) for part in _split(inner, ",")])


def _closing(text: str, start: int, opening: str, closing: str) -> int:
    """The index of the bracket that closes the one at start, quotes respected."""
    depth, quote = 0, ""
    for at in range(start, len(text)):
        char = text[at]
        if quote:
            quote = "" if char == quote and text[at - 1] != "\\" else quote
        elif char in "'\"":
            quote = char
        elif char == opening:
            depth += 1
        elif char == closing:
            depth -= 1
            if depth == 0:
                return at
    raise JSONPathError(f"unclosed {opening} in {text!r}")


def _split(text: str, separator: str) -> list[str]:
    parts, start, quote = [], 0, ""
    for at, char in enumerate(text):
        if quote:
            quote = "" if char == quote else quote
        elif char in "'\"":
            quote = char
        elif char == separator:
            parts.append(text[start:at])
            start = at + 1
    return [*parts, text[start:]]


def _literal_or_index(text: str) -> str | int:
    index = _INDEX.match(text)
    if index:
        return int(index.group(1))
    value = _literal(text)
    if not isinstance(value, str):
        raise JSONPathError(f"invalid array index {text!r}")
    return value


def _literal(text: str) -> Any:
    text = text.strip()
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
        return text[1:-1]
    if text in ("true", "false"):
        return text == "true"
    try:
        return int(text)
    except ValueError:
        pass
    try:
        return float(text)
    except ValueError:
        raise JSONPathError(f"unrecognized literal {text!r}") from None


# --- steps ----------------------------------------------------------------------------------


def _field(name: str) -> Step:
    return lambda values: [v[name] for v in values if isinstance(v, dict) and name in v]


def _children(values: list[Any]) -> list[Any]:
    found: list[Any] = []
    for value in values:
        if isinstance(value, dict):
            found += [value[k] for k in sorted(value)]
        elif isinstance(value, list):
            found += value
    return found


def _descendants(values: list[Any]) -> list[Any]:
    """Each value and everything beneath it, depth first."""
    found: list[Any] = []
    for value in values:
        found.append(value)
        found += _descendants(_children([value]))
    return found


def _union(keys: list[str | int]) -> Step:
    def select(values: list[Any]) -> list[Any]:
        found = []
        for value in values:
            for key in keys:
                if isinstance(key, int) and isinstance(value, list):
                    if -len(value) <= key < len(value):
                        found.append(value[key])
                elif isinstance(key, str) and isinstance(value, dict) and key in value:
                    found.append(value[key])
        return found

    return select


def _slice(start: int | None, stop: int | None, step: int | None) -> Step:
    if step == 0:
        raise JSONPathError("slice step cannot be zero")
    return lambda values: [
        item for v in values if isinstance(v, list) for item in v[start:stop:step]
    ]


def _filter(condition: str) -> Step:
    """`[?(@.type=="Ready")]`, `[?(@.count > 1)]`, `[?(@.name)]` (the field exists)."""
    comparison = _COMPARISON.match(condition)
    if comparison is None:
        exists = _operand(condition)
        return lambda values: [i for i in _items(values) if exists(i)]
    left, operator, right = comparison.groups()
    lhs, rhs, compare = _operand(left), _operand(right), _COMPARE[operator]
    return lambda values: [item for item in _items(values) if _holds(compare, lhs(item), rhs(item))]


def _items(values: list[Any]) -> list[Any]:
    return [item for v in values if isinstance(v, list) for item in v]


def _operand(text: str) -> Callable[[Any], list[Any]]:
    """`@.a.b` (relative to the item) or a literal, as a function of the item."""
    text = text.strip()
    if text.startswith("@"):
        path = compile_path(text[1:])
        return path.find
    literal = _literal(text)
    return lambda _item: [literal]


def _holds(compare: Callable[[Any, Any], bool], lefts: list[Any], rights: list[Any]) -> bool:
    if not lefts or not rights:
        return False
    left, right = lefts[0], rights[0]
    if not _comparable(left, right):
        return False
    return compare(left, right)


def _comparable(left: Any, right: Any) -> bool:
    """Go templates compare a string with a string and a number with a number."""
    if isinstance(left, bool) or isinstance(right, bool):
        return isinstance(left, bool) and isinstance(right, bool)
    numbers = (int, float)
    if isinstance(left, numbers) and isinstance(right, numbers):
        return True
    return isinstance(left, str) and isinstance(right, str)


_COMPARE: dict[str, Callable[[Any, Any], bool]] = {
    "==": lambda a, b: bool(a == b),
    "!=": lambda a, b: bool(a != b),
    "<": lambda a, b: bool(a < b),
    ">": lambda a, b: bool(a > b),
    "<=": lambda a, b: bool(a <= b),
    ">=": lambda a, b: bool(a >= b),
}
