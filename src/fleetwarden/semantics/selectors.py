"""Label and field selectors as apimachinery evaluates them, and Karmada's cluster field selector.

- labels.Selector: built from a metav1.LabelSelector (`label_selector_as_selector`) or parsed
  from its string form (`parse_selector`: "a=b,c in (x,y),!d"), with apimachinery's errors.
- fields.Selector: "metadata.name=x,metadata.namespace!=y" against a flat mapping of fields.
- Karmada's ClusterAffinity.fieldSelector: provider/region/zone requirements on a Cluster.

A nil LabelSelector converts to a selector matching nothing, an empty one to a selector
matching everything (metav1.LabelSelectorAsSelector). Karmada's cluster affinity instead
skips a nil selector; `label_selector_matches` makes callers say which they mean.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Protocol

from fleetwarden.api.errors import FieldError, Path, aggregate
from fleetwarden.api.meta import LabelSelector
from fleetwarden.semantics.validation import is_label_value, is_qualified_name

Labels = Mapping[str, str]


class SelectorError(ValueError):
    """A selector apimachinery would refuse, with its message."""


class Operator(StrEnum):
    """selection.Operator."""

    IN = "in"
    NOT_IN = "notin"
    EQUALS = "="
    DOUBLE_EQUALS = "=="
    NOT_EQUALS = "!="
    GREATER_THAN = "gt"
    LESS_THAN = "lt"
    EXISTS = "exists"
    DOES_NOT_EXIST = "!"


_BINARY = (
    Operator.IN,
    Operator.NOT_IN,
    Operator.EQUALS,
    Operator.DOUBLE_EQUALS,
    Operator.NOT_EQUALS,
    Operator.GREATER_THAN,
    Operator.LESS_THAN,
)
_SUPPORTED = (*_BINARY, Operator.EXISTS, Operator.DOES_NOT_EXIST)
_EXACT = (Operator.EQUALS, Operator.DOUBLE_EQUALS, Operator.NOT_EQUALS)
_INT64 = re.compile(r"[+-]?[0-9]+")
# How Requirement.String writes an operator, where it differs from the operator's value.
_SPELLING = {
    Operator.IN: " in ",
    Operator.NOT_IN: " notin ",
    Operator.GREATER_THAN: ">",
    Operator.LESS_THAN: "<",
}


def _int64(text: str) -> int | None:
    """strconv.ParseInt(text, 10, 64), or None where Go reports an error."""
    if not _INT64.fullmatch(text):
        return None
    sign, digits = (text[0], text[1:]) if text[0] in "+-" else ("", text)
    digits = digits.lstrip("0") or "0"
    if len(digits) > 19:  # past int64, and a few thousand past what int() will convert
        return None
    value = int(sign + digits)
    return value if -(1 << 63) <= value < (1 << 63) else None


@dataclass(frozen=True, slots=True)
class Requirement:
    """labels.Requirement: one key, one operator, its values (kept in the order given)."""

    key: str
    operator: Operator
    values: tuple[str, ...] = ()

    def matches(self, labels: Labels) -> bool:
        value = labels.get(self.key)
        match self.operator:
            case Operator.IN | Operator.EQUALS | Operator.DOUBLE_EQUALS:
                return value is not None and value in self.values
            case Operator.NOT_IN | Operator.NOT_EQUALS:
                return value is None or value not in self.values
            case Operator.EXISTS:
                return value is not None
            case Operator.DOES_NOT_EXIST:
                return value is None
        return self._compares(value)

    def _compares(self, value: str | None) -> bool:
        """Gt and Lt: both sides must be int64s, else no match."""
        have = None if value is None else _int64(value)
        want = _int64(self.values[0]) if len(self.values) == 1 else None
        if have is None or want is None:
            return False
        return have > want if self.operator is Operator.GREATER_THAN else have < want

    def __str__(self) -> str:
        if self.operator is Operator.EXISTS:
            return self.key
        if self.operator is Operator.DOES_NOT_EXIST:
            return "!" + self.key
        values = self.values[0] if len(self.values) == 1 else ",".join(sorted(self.values))
        if self.operator in (Operator.IN, Operator.NOT_IN):
            values = f"({values})"
        return f"{self.key}{_SPELLING.get(self.operator, self.operator)}{values}"


def new_requirement(key: str, operator: str, values: Sequence[str] | None = None) -> Requirement:
    """labels.NewRequirement: the requirement, or SelectorError with every rule it breaks.

    values None is Go's nil slice: an error shows it as `null`, an empty list as `[]`.
    """
    errs: list[FieldError] = [Path("key").invalid(key, m) for m in _key_errors(key)]
    vpath, shown = Path("values"), None if values is None else list(values)
    values = values or ()
    if operator in (Operator.IN, Operator.NOT_IN) and not values:
        errs.append(vpath.invalid(shown, "for 'in', 'notin' operators, values set can't be empty"))
    elif operator in _EXACT and len(values) != 1:
        errs.append(vpath.invalid(shown, "exact-match compatibility requires one single value"))
    elif operator in (Operator.EXISTS, Operator.DOES_NOT_EXIST) and values:
        errs.append(vpath.invalid(shown, "values set must be empty for exists and does not exist"))
    elif operator in (Operator.GREATER_THAN, Operator.LESS_THAN):
        if len(values) != 1:
            errs.append(
                vpath.invalid(shown, "for 'Gt', 'Lt' operators, exactly one value is required")
            )
        errs += [
            vpath.index(i).invalid(v, "for 'Gt', 'Lt' operators, the value must be an integer")
            for i, v in enumerate(values)
            if _int64(v) is None
        ]
    elif operator not in _SUPPORTED:
        errs.append(Path("operator").not_supported(operator, _SUPPORTED))
    for i, value in enumerate(values):
        if msgs := is_label_value(value):
            errs.append(vpath.index(i).key(key).invalid(value, "; ".join(msgs)))
    if errs:
        raise SelectorError(aggregate(str(e) for e in errs))
    return Requirement(key, Operator(operator), tuple(values))


def _key_errors(key: str) -> list[str]:
    """validateLabelKey's one message, or none."""
    msgs = is_qualified_name(key)
    return ["; ".join(msgs)] if msgs else []


class Selector:
    """labels.Selector: the AND of its requirements, kept sorted by key as apimachinery does."""

    __slots__ = ("requirements",)

    def __init__(self, requirements: Iterable[Requirement] = ()) -> None:
        self.requirements = tuple(sorted(requirements, key=lambda r: r.key))

    def matches(self, labels: Labels | None) -> bool:
        labels = labels or {}
        return all(r.matches(labels) for r in self.requirements)

    def empty(self) -> bool:
        return not self.requirements

    def __str__(self) -> str:
        return ",".join(str(r) for r in self.requirements)


class _Nothing(Selector):
    """labels.Nothing(): what a nil LabelSelector converts to."""

    __slots__ = ()

    def matches(self, labels: Labels | None) -> bool:
        return False

    def empty(self) -> bool:
        return False


EVERYTHING = Selector()
NOTHING: Selector = _Nothing()

_LABEL_SELECTOR_OPERATORS = {
    "In": Operator.IN,
    "NotIn": Operator.NOT_IN,
    "Exists": Operator.EXISTS,
    "DoesNotExist": Operator.DOES_NOT_EXIST,
}


def label_selector_as_selector(selector: LabelSelector | None) -> Selector:
    """metav1.LabelSelectorAsSelector: nil matches nothing, empty matches everything."""
    if selector is None:
        return NOTHING
    match_labels = selector.match_labels or {}
    expressions = selector.match_expressions or []
    if not match_labels and not expressions:
        return EVERYTHING
    requirements = [new_requirement(k, Operator.EQUALS, [v]) for k, v in match_labels.items()]
    for expr in expressions:
        operator = _LABEL_SELECTOR_OPERATORS.get(expr.operator)
        if operator is None:
            raise SelectorError(
                f"{_go_quote(expr.operator)} is not a valid label selector operator"
            )
        # Go copies the values into a nil slice, so none at all reads as nil.
        requirements.append(new_requirement(expr.key, operator, expr.values or None))
    return Selector(requirements)


def label_selector_matches(
    selector: LabelSelector | None, labels: Labels | None, *, nil_matches: bool
) -> bool:
    """Whether labels satisfy a LabelSelector; an invalid selector matches nothing.

    nil_matches says what a nil selector means at the call site: Karmada's cluster affinity
    and resource selectors skip it (True); metav1's conversion matches nothing (False).
    """
    if selector is None:
        return nil_matches
    try:
        return label_selector_as_selector(selector).matches(labels)
    except SelectorError:
        return False


def _go_quote(text: str) -> str:
    """%q for the ASCII text selectors carry."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


# --- labels.Parse --------------------------------------------------------------------------------

_WHITESPACE = " \t\r\n"
_SPECIAL = "=!(),><"
_SYMBOLS = ("==", "!=", "=", "!", "(", ")", ",", ">", "<")  # longest first
_KEYWORDS = ("in", "notin")
_END = ""  # the end-of-string token; its literal is empty too
_IDENT = "identifier"


@dataclass(frozen=True, slots=True)
class _Token:
    kind: str  # a symbol, a keyword, _IDENT or _END
    text: str


def _lex(text: str) -> list[_Token]:
    """labels.Lexer: symbols (longest match), keywords `in`/`notin`, identifiers."""
    tokens: list[_Token] = []
    pos = 0
    while True:
        while pos < len(text) and text[pos] in _WHITESPACE:
            pos += 1
        if pos == len(text):
            return [*tokens, _Token(_END, "")]
        if text[pos] in _SPECIAL:
            symbol = next(s for s in _SYMBOLS if text.startswith(s, pos))
            tokens.append(_Token(symbol, symbol))
            pos += len(symbol)
            continue
        start = pos
        while pos < len(text) and text[pos] not in _SPECIAL and text[pos] not in _WHITESPACE:
            pos += 1
        word = text[start:pos]
        tokens.append(_Token(word if word in _KEYWORDS else _IDENT, word))


_OPERATOR_TOKENS = {
    "in": Operator.IN,
    "notin": Operator.NOT_IN,
    "=": Operator.EQUALS,
    "==": Operator.DOUBLE_EQUALS,
    "!=": Operator.NOT_EQUALS,
    ">": Operator.GREATER_THAN,
    "<": Operator.LESS_THAN,
}


class _Parser:
    """labels.Parser: a recursive descent over the tokens, with apimachinery's messages.

    Where a value is expected (`values=True`) the keywords `in` and `notin` are identifiers.
    """

    def __init__(self, text: str) -> None:
        self.tokens = _lex(text)
        self.pos = 0

    def peek(self, *, values: bool = True) -> _Token:
        return self._as(self.tokens[self.pos], values)

    def take(self, *, values: bool = True) -> _Token:
        self.pos += 1
        return self._as(self.tokens[self.pos - 1], values)

    @staticmethod
    def _as(token: _Token, values: bool) -> _Token:
        return _Token(_IDENT, token.text) if values and token.kind in _KEYWORDS else token

    def parse(self) -> list[Requirement]:
        requirements: list[Requirement] = []
        while True:
            token = self.peek()
            if token.kind == _END:
                return requirements
            if token.kind not in (_IDENT, "!"):
                raise SelectorError(
                    f"found '{token.text}', expected: !, identifier, or 'end of string'"
                )
            try:
                requirements.append(self.requirement())
            except SelectorError as err:
                raise SelectorError(f"unable to parse requirement: {err}") from None
            after = self.take()
            if after.kind == _END:
                return requirements
            if after.kind != ",":
                raise SelectorError(f"found '{after.text}', expected: ',' or 'end of string'")
            if (following := self.peek()).kind not in (_IDENT, "!"):
                raise SelectorError(f"found '{following.text}', expected: identifier after ','")

    def requirement(self) -> Requirement:
        key, operator = self.key_and_inferred_operator()
        if operator is not None:
            return new_requirement(key, operator)
        operator = self.operator()
        if operator in (Operator.IN, Operator.NOT_IN):
            values = self.value_set()
        else:
            values = self.exact_value()
        return new_requirement(key, operator, sorted(values))

    def key_and_inferred_operator(self) -> tuple[str, Operator | None]:
        """The key, and Exists or DoesNotExist when nothing but `,` or the end follows it."""
        token = self.take()
        operator = None
        if token.kind == "!":
            operator, token = Operator.DOES_NOT_EXIST, self.take()
        if token.kind != _IDENT:
            raise SelectorError(f"found '{token.text}', expected: identifier")
        if msgs := _key_errors(token.text):
            # apimachinery validates the key against a nil field path, hence "<nil>".
            raise SelectorError(str(Path("<nil>").invalid(token.text, msgs[0])))
        if operator is None and self.peek().kind in (_END, ","):
            operator = Operator.EXISTS
        return token.text, operator

    def operator(self) -> Operator:
        token = self.take(values=False)
        if token.kind not in _OPERATOR_TOKENS:
            expected = ", ".join(_BINARY)
            raise SelectorError(f"found '{token.text}', expected: {expected}")
        return _OPERATOR_TOKENS[token.kind]

    def value_set(self) -> set[str]:
        """`(a,b,c)`; empty members, as in `(a,,)` or `()`, are the empty value."""
        token = self.take()
        if token.kind != "(":
            raise SelectorError(f"found '{token.text}' expected: '('")
        token = self.peek()
        if token.kind == ")":
            self.take()
            return {""}
        if token.kind not in (_IDENT, ","):
            raise SelectorError(f"found '{token.text}', expected: ',', ')' or identifier")
        values = self.identifiers()
        self.take()  # the ")" identifiers() stopped at
        return values

    def identifiers(self) -> set[str]:
        values: set[str] = set()
        while True:
            token = self.take()
            if token.kind == _IDENT:
                values.add(token.text)
                following = self.peek()
                if following.kind == ")":
                    return values
                if following.kind != ",":
                    raise SelectorError(f"found '{following.text}', expected: ',' or ')'")
            elif token.kind == ",":
                # A comma with nothing before or after it stands for the empty value.
                after_comma = self.peek().kind
                if not values or after_comma in (")", ","):
                    values.add("")
                if after_comma == ")":
                    return values
            else:
                raise SelectorError(f"found '{token.text}', expected: ',', or identifier")

    def exact_value(self) -> set[str]:
        if self.peek().kind in (_END, ","):
            return {""}
        token = self.take()
        if token.kind != _IDENT:
            raise SelectorError(f"found '{token.text}', expected: identifier")
        return {token.text}


def parse_selector(text: str) -> Selector:
    """labels.Parse of "x in (a,b),y!=c,!z,w"; SelectorError worded as apimachinery words it."""
    return Selector(_Parser(text).parse())


# --- fields.Selector -----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class FieldRequirement:
    """fields.Requirement: `field=value` or `field!=value` (`==` reads as `=`)."""

    field: str
    operator: Operator
    value: str

    def matches(self, fields: Mapping[str, str]) -> bool:
        # A missing field reads as the empty string.
        equal = fields.get(self.field, "") == self.value
        return equal if self.operator is Operator.EQUALS else not equal

    def __str__(self) -> str:
        return f"{self.field}{self.operator}{escape_field_value(self.value)}"


@dataclass(frozen=True, slots=True)
class FieldSelector:
    """fields.Selector: the AND of its requirements; an empty one matches everything."""

    requirements: tuple[FieldRequirement, ...] = ()

    def matches(self, fields: Mapping[str, str]) -> bool:
        return all(r.matches(fields) for r in self.requirements)

    def __str__(self) -> str:
        return ",".join(str(r) for r in self.requirements)


_FIELD_OPERATORS = (("!=", Operator.NOT_EQUALS), ("==", Operator.EQUALS), ("=", Operator.EQUALS))


def escape_field_value(value: str) -> str:
    return value.replace("\\", "\\\\").replace(",", "\\,").replace("=", "\\=")


def unescape_field_value(value: str) -> str:
    """fields.UnescapeValue: the escapes are `\\,` `\\=` `\\\\`; a bare `,` or `=` is an error."""
    out, escaped = [], False
    for ch in value:
        if escaped:
            if ch not in "\\,=":
                raise SelectorError(f"invalid field selector: invalid escape sequence: \\{ch}")
            out.append(ch)
            escaped = False
        elif ch == "\\":
            escaped = True
        elif ch in ",=":
            # Go prints the rune as its code point.
            raise SelectorError(f"invalid field selector: unescaped character in value: {ord(ch)}")
        else:
            out.append(ch)
    if escaped:
        raise SelectorError("invalid field selector: invalid escape sequence: \\")
    return "".join(out)


def _split_field_terms(text: str) -> list[str]:
    """Split on commas that are not escaped."""
    if not text:
        return []
    terms, start, escaped = [], 0, False
    for i, ch in enumerate(text):
        if escaped:
            escaped = False
        elif ch == "\\":
            escaped = True
        elif ch == ",":
            terms.append(text[start:i])
            start = i + 1
    return [*terms, text[start:]]


def _split_field_term(term: str) -> tuple[str, Operator, str] | None:
    """The first operator from the left, `!=` and `==` before `=` at the same place."""
    for i in range(len(term)):
        for symbol, operator in _FIELD_OPERATORS:
            if term.startswith(symbol, i):
                return term[:i], operator, term[i + len(symbol) :]
    return None


def parse_field_selector(text: str) -> FieldSelector:
    """fields.ParseSelector: "metadata.name=x,spec.nodeName!=" with apimachinery's errors."""
    requirements = []
    for term in sorted(_split_field_terms(text)):
        if not term:
            continue
        split = _split_field_term(term)
        if split is None:
            raise SelectorError(f"invalid selector: '{text}'; can't understand '{term}'")
        field, operator, value = split
        requirements.append(FieldRequirement(field, operator, unescape_field_value(value)))
    return FieldSelector(tuple(requirements))


# --- Karmada's cluster field selector ------------------------------------------------------------


class SelectorRequirement(Protocol):
    """corev1.NodeSelectorRequirement, and metav1.LabelSelectorRequirement alike."""

    @property
    def key(self) -> str: ...
    @property
    def operator(self) -> str: ...
    @property
    def values(self) -> Sequence[str] | None: ...


_NODE_SELECTOR_OPERATORS = {
    **_LABEL_SELECTOR_OPERATORS,
    "Gt": Operator.GREATER_THAN,
    "Lt": Operator.LESS_THAN,
}
PROVIDER_FIELD = "provider"
REGION_FIELD = "region"
ZONE_FIELD = "zone"


def node_selector_requirements_as_selector(
    requirements: Sequence[SelectorRequirement],
) -> Selector:
    """nodeaffinity.NodeSelectorRequirementsAsSelector: no requirements select nothing."""
    if not requirements:
        return NOTHING
    errors, converted = [], []
    for req in requirements:
        operator = _NODE_SELECTOR_OPERATORS.get(req.operator)
        if operator is None:
            errors.append(f"{_go_quote(req.operator)} is not a valid node selector operator")
            continue
        try:
            converted.append(new_requirement(req.key, operator, req.values))
        except SelectorError as err:
            errors.append(str(err))
    if errors:
        raise SelectorError(aggregate(errors))
    return Selector(converted)


def match_zones(requirement: SelectorRequirement, zones: Sequence[str] | None) -> bool:
    """Karmada's matchZones: a cluster spans several zones, so `zone` is matched as a set.

    In wants any zone listed, NotIn none, Exists some zone, DoesNotExist none; anything
    else never matches.
    """
    wanted = set(requirement.values or ())
    zones = zones or ()
    match requirement.operator:
        case "In":
            return any(z in wanted for z in zones)
        case "NotIn":
            return not any(z in wanted for z in zones)
        case "Exists":
            return bool(zones)
        case "DoesNotExist":
            return not zones
    return False


def cluster_fields_match(
    requirements: Sequence[SelectorRequirement],
    *,
    provider: str | None,
    region: str | None,
    zones: Sequence[str] | None,
) -> bool:
    """The fieldSelector half of Karmada's ClusterMatches (pkg/util/selector.go).

    `zone` requirements go to match_zones; the rest are a node selector over the cluster's
    provider and region (only the non-empty ones). The deprecated singular spec.zone is not
    read: Karmada's API server moves it into zones. An invalid requirement matches nothing.
    """
    others = [r for r in requirements if r.key != ZONE_FIELD]
    if not all(match_zones(r, zones) for r in requirements if r.key == ZONE_FIELD):
        return False
    if not others:
        return True
    fields = {k: v for k, v in ((PROVIDER_FIELD, provider), (REGION_FIELD, region)) if v}
    try:
        return node_selector_requirements_as_selector(others).matches(fields)
    except SelectorError:
        return False
