"""Checking a scenario's expectations against the hub's state."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from jmespath.exceptions import JMESPathError

from fleetwarden.sim.scenario import Expectation


class StateReader(Protocol):
    """What expectations may read: objects, lists and the Events recorded so far."""

    def get(
        self, api_version: str, kind: str, name: str, namespace: str, member: str | None = None
    ) -> dict[str, Any] | None: ...

    def list_objects(
        self,
        api_version: str,
        kind: str,
        namespace: str | None,
        label_selector: str | None,
        field_selector: str | None,
        member: str | None = None,
    ) -> list[dict[str, Any]]: ...

    def events(self) -> list[dict[str, Any]]: ...


@dataclass(frozen=True)
class Outcome:
    path: str
    at: str
    passed: bool
    check: str
    expected: Any
    actual: Any
    query: str | None

    def to_dict(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "at": self.at,
            "passed": self.passed,
            "check": self.check,
            "query": self.query,
            "expected": self.expected,
            "actual": self.actual,
        }


def json_equal(a: Any, b: Any) -> bool:
    """Equality of JSON values: unlike Python's ==, true is not 1."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(json_equal(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(json_equal(x, y) for x, y in zip(a, b, strict=True))
    return bool(type(a) is type(b) or (_number(a) and _number(b))) and a == b


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def contains(actual: Any, expected: Any) -> bool:
    """Subset match: maps recursively, each expected list item matched by some actual item."""
    if isinstance(expected, dict):
        return isinstance(actual, dict) and all(
            key in actual and contains(actual[key], value) for key, value in expected.items()
        )
    if isinstance(expected, list):
        return isinstance(actual, list) and all(
            any(contains(item, want) for item in actual) for want in expected
        )
    return json_equal(actual, expected)


def check(expectation: Expectation, reader: StateReader, at: str) -> Outcome:
    subject = _subject(expectation, reader)
    try:
        actual = subject if expectation.query is None else expectation.query.search(subject)
    except JMESPathError as exc:  # sort() of null, say: the state did not have that shape
        return Outcome(
            expectation.path, at, False, expectation.check, expectation.expected,
            f"query error: {exc}", expectation.query_text,
        )  # fmt: skip
    passed = _passes(expectation.check, expectation.expected, actual, subject)
    if expectation.check == "exists":
        actual = (subject if expectation.query is None else actual) is not None
    return Outcome(
        expectation.path, at, passed, expectation.check, expectation.expected, actual,
        expectation.query_text,
    )  # fmt: skip


def _subject(expectation: Expectation, reader: StateReader) -> Any:
    spec = expectation.target.spec
    member = spec.get("member")  # inside a member cluster, not the hub
    if expectation.target.mode == "object":
        return reader.get(
            spec["apiVersion"], spec["kind"], spec["name"], spec.get("namespace", ""), member
        )
    if expectation.target.mode == "list":
        return reader.list_objects(
            spec["apiVersion"], spec["kind"], spec.get("namespace"),
            spec.get("labelSelector"), spec.get("fieldSelector"), member,
        )  # fmt: skip
    return [event for event in reader.events() if contains(event, dict(spec))]


def _passes(kind: str, expected: Any, actual: Any, subject: Any) -> bool:
    if kind == "equals":
        return json_equal(actual, expected)
    if kind == "oneOf":
        return any(json_equal(actual, option) for option in _options(expected))
    if kind == "contains":
        return contains(actual, expected)
    exists = actual is not None and subject is not None
    return exists == bool(expected)


def _options(expected: Any) -> Sequence[Any]:
    return expected if isinstance(expected, list) else [expected]
