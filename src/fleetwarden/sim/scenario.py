"""Loading and checking scenario files (../shared/spec/scenario.md).

Everything that can be checked before the run is checked here, so that an invalid
scenario fails at once with the file, the path inside it and the reason (exit 2).
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import Any, TypeVar

import jmespath
import yaml
from jmespath.exceptions import JMESPathError

from fleetwarden.api.authentication import UserInfo
from fleetwarden.api.codec import load_yaml
from fleetwarden.api.meta import parse_time
from fleetwarden.members.simulated import DEFAULT_ALLOCATABLE, MemberState
from fleetwarden.runtime.settings import Settings, SettingsError
from fleetwarden.semantics.durations import DurationError, parse_duration

API_VERSION = "fleetwarden.io/v1alpha1"
DEFAULT_START = "2025-01-01T00:00:00Z"
SPEC_FIELDS = (
    "description", "startTime", "settings", "members", "objects", "steps", "until", "expect",
)  # fmt: skip
CHECKS = ("equals", "oneOf", "contains", "exists")
MEMBER_FIELDS = ("reachable", "ready", "workloadsHealthy", "workloadReadyAfter", "allocatable")

T = TypeVar("T")


class ScenarioError(Exception):
    """An invalid scenario: `FILE: spec.steps[1].at: must not be before ...`."""

    def __init__(self, file: str, path: str, reason: str) -> None:
        super().__init__(f"{file}: {path}: {reason}" if path else f"{file}: {reason}")
        self.file, self.path, self.reason = file, path, reason


@dataclass(frozen=True)
class Target:
    """What an expectation looks at: one object, a list, or the Events recorded so far."""

    mode: str  # "object" | "list" | "events"
    spec: Mapping[str, Any]


@dataclass(frozen=True)
class Expectation:
    path: str
    target: Target
    query: jmespath.parser.ParsedResult | None
    query_text: str | None
    check: str
    expected: Any


@dataclass(frozen=True)
class Reject:
    path: str
    object: Mapping[str, Any]
    reason: str


@dataclass(frozen=True)
class ObjectRef:
    api_version: str
    kind: str
    name: str
    namespace: str = ""


@dataclass(frozen=True)
class Step:
    path: str
    at: timedelta
    apply: list[tuple[str, dict[str, Any]]]
    delete: list[tuple[str, ObjectRef]]
    members: dict[str, dict[str, Any]]
    reject: list[Reject]
    expect: list[Expectation]
    # Who sends the step's apply, delete and reject (`as`); None: the cluster administrator.
    sender: UserInfo | None = None


@dataclass(frozen=True)
class Scenario:
    file: str
    name: str
    description: str
    start_time: datetime
    settings: Settings
    members: dict[str, MemberState]
    objects: list[tuple[str, dict[str, Any]]]
    steps: list[Step]
    until: timedelta
    expect: list[Expectation]


def load(path: str) -> Scenario:
    try:
        with open(path, encoding="utf-8") as fh:
            doc = load_yaml(fh.read())
    except OSError as exc:
        raise ScenarioError(path, "", exc.strerror or str(exc)) from None
    except (yaml.YAMLError, ValueError) as exc:  # ValueError: codec's bounds, bad timestamps
        raise ScenarioError(path, "", f"not valid YAML: {exc}") from None
    return parse(doc, path)


def parse(doc: Any, file: str) -> Scenario:
    return _Parser(file).scenario(doc)


class _Parser:
    def __init__(self, file: str) -> None:
        self.file = file
        self.known_members: set[str] = set()

    def fail(self, path: str, reason: str) -> ScenarioError:
        return ScenarioError(self.file, path, reason)

    def mapping(self, value: Any, path: str) -> Mapping[str, Any]:
        if not isinstance(value, Mapping):
            raise self.fail(path, "must be a mapping")
        return value

    def items(self, value: Any, path: str) -> list[Any]:
        if value is None:
            return []
        if not isinstance(value, list):
            raise self.fail(path, "must be a list")
        return value

    def only(self, value: Mapping[str, Any], path: str, allowed: tuple[str, ...]) -> None:
        for key in value:
            if key not in allowed:
                raise self.fail(
                    _join(path, str(key)), f"unknown field; expected one of {', '.join(allowed)}"
                )

    def typed(self, value: Any, path: str, type_: type[T], what: str) -> T:
        if not isinstance(value, type_) or (type_ is not bool and isinstance(value, bool)):
            raise self.fail(path, f"must be {what}")
        return value

    def duration(self, value: Any, path: str) -> timedelta:
        try:
            return parse_duration(value)
        except (DurationError, TypeError) as exc:
            raise self.fail(path, str(exc)) from None

    def scenario(self, doc: Any) -> Scenario:
        doc = self.mapping(doc, "")
        if doc.get("apiVersion") != API_VERSION:
            raise self.fail("apiVersion", f"must be {API_VERSION}")
        if doc.get("kind") != "Scenario":
            raise self.fail("kind", "must be Scenario")
        name = self.mapping(doc.get("metadata") or {}, "metadata").get("name", "")
        spec = self.mapping(doc.get("spec"), "spec")
        self.only(spec, "spec", SPEC_FIELDS)
        members = self.members(spec.get("members") or {})
        self.known_members = set(members)
        steps = [
            self.step(s, f"spec.steps[{i}]")
            for i, s in enumerate(self.items(spec.get("steps"), "spec.steps"))
        ]
        for before, after in itertools.pairwise(steps):
            if after.at < before.at:
                raise self.fail(f"{after.path}.at", "steps must be in ascending order of `at`")
        last = steps[-1].at if steps else timedelta(0)
        until = self.duration(spec["until"], "spec.until") if "until" in spec else last
        if until < last:
            raise self.fail("spec.until", "must not be before the last step")
        return Scenario(
            file=self.file,
            name=str(name),
            description=str(spec.get("description", "")),
            start_time=self.start_time(spec.get("startTime", DEFAULT_START)),
            settings=self.settings(spec.get("settings") or {}),
            members=members,
            objects=self.objects(spec.get("objects"), "spec.objects"),
            steps=steps,
            until=until,
            expect=self.expectations(spec.get("expect"), "spec.expect"),
        )

    def start_time(self, value: Any) -> datetime:
        try:
            return parse_time(value)
        except ValueError as exc:
            raise self.fail("spec.startTime", str(exc)) from None

    def settings(self, value: Any) -> Settings:
        flags = self.mapping(value, "spec.settings")
        try:
            return Settings.from_flags(flags)
        except SettingsError as exc:
            raise self.fail(f"spec.settings.{exc.setting}", str(exc)) from None

    def members(self, value: Any) -> dict[str, MemberState]:
        members = self.mapping(value, "spec.members")
        return {
            str(name): self.member_state(MemberState(), spec or {}, f"spec.members.{name}")
            for name, spec in members.items()
        }

    def member_state(self, state: MemberState, value: Any, path: str) -> MemberState:
        spec = self.mapping(value, path)
        self.only(spec, path, MEMBER_FIELDS)
        changes: dict[str, Any] = {}
        for flag, attr in (
            ("reachable", "reachable"),
            ("ready", "ready"),
            ("workloadsHealthy", "workloads_healthy"),
        ):
            if flag in spec:
                changes[attr] = self.typed(spec[flag], f"{path}.{flag}", bool, "true or false")
        if "workloadReadyAfter" in spec:
            changes["workload_ready_after"] = self.duration(
                spec["workloadReadyAfter"], f"{path}.workloadReadyAfter"
            )
        if "allocatable" in spec:
            given = self.mapping(spec["allocatable"], f"{path}.allocatable")
            changes["allocatable"] = {
                **DEFAULT_ALLOCATABLE,
                **{str(k): str(v) for k, v in given.items()},
            }
        return _replace(state, changes)

    def objects(self, value: Any, path: str) -> list[tuple[str, dict[str, Any]]]:
        result = []
        for i, obj in enumerate(self.items(value, path)):
            where = f"{path}[{i}]"
            obj = self.mapping(obj, where)
            for required in ("apiVersion", "kind"):
                if not isinstance(obj.get(required), str) or not obj[required]:
                    raise self.fail(f"{where}.{required}", "required")
            result.append((where, dict(obj)))
        return result

    def ref(self, value: Any, path: str) -> ObjectRef:
        ref = self.mapping(value, path)
        self.only(ref, path, ("apiVersion", "kind", "name", "namespace"))
        fields_ = {}
        for key in ("apiVersion", "kind", "name"):
            fields_[key] = self.typed(ref.get(key), f"{path}.{key}", str, "a string")
        namespace = self.typed(ref.get("namespace", ""), f"{path}.namespace", str, "a string")
        return ObjectRef(fields_["apiVersion"], fields_["kind"], fields_["name"], namespace)

    def step(self, value: Any, path: str) -> Step:
        step = self.mapping(value, path)
        self.only(step, path, ("at", "apply", "delete", "members", "reject", "expect", "as"))
        if "at" not in step:
            raise self.fail(f"{path}.at", "required")
        members = self.mapping(step.get("members") or {}, f"{path}.members")
        for name, spec in members.items():
            if name not in self.known_members:
                raise self.fail(f"{path}.members.{name}", "not a member declared in spec.members")
            self.member_state(MemberState(), spec or {}, f"{path}.members.{name}")
        return Step(
            path=path,
            at=self.duration(step["at"], f"{path}.at"),
            apply=self.objects(step.get("apply"), f"{path}.apply"),
            delete=[
                (f"{path}.delete[{i}]", self.ref(r, f"{path}.delete[{i}]"))
                for i, r in enumerate(self.items(step.get("delete"), f"{path}.delete"))
            ],
            members={str(k): dict(v or {}) for k, v in members.items()},
            reject=[
                self.reject(r, f"{path}.reject[{i}]")
                for i, r in enumerate(self.items(step.get("reject"), f"{path}.reject"))
            ],
            expect=self.expectations(step.get("expect"), f"{path}.expect"),
            sender=self.sender(step["as"], f"{path}.as") if "as" in step else None,
        )

    def sender(self, value: Any, path: str) -> UserInfo:
        """`as: {user: NAME, groups: [...]}`: that user, authenticated."""
        spec = self.mapping(value, path)
        self.only(spec, path, ("user", "groups"))
        name = self.typed(spec.get("user"), f"{path}.user", str, "a string")
        if not name:
            raise self.fail(f"{path}.user", "required")
        groups = [
            self.typed(g, f"{path}.groups[{i}]", str, "a string")
            for i, g in enumerate(self.items(spec.get("groups"), f"{path}.groups"))
        ]
        return UserInfo.of(name, groups).authenticated()

    def reject(self, value: Any, path: str) -> Reject:
        spec = self.mapping(value, path)
        self.only(spec, path, ("object", "reason"))
        (_, obj), = self.objects([spec.get("object")], f"{path}.object")  # fmt: skip
        reason = self.typed(spec.get("reason", ""), f"{path}.reason", str, "a string")
        return Reject(path, obj, reason)

    def expectations(self, value: Any, path: str) -> list[Expectation]:
        return [self.expectation(e, f"{path}[{i}]") for i, e in enumerate(self.items(value, path))]

    def expectation(self, value: Any, path: str) -> Expectation:
        spec = self.mapping(value, path)
        self.only(spec, path, ("object", "list", "events", "query", *CHECKS))
        modes = [m for m in ("object", "list", "events") if m in spec]
        if len(modes) != 1:
            raise self.fail(path, "needs exactly one of object, list, events")
        checks = [c for c in CHECKS if c in spec]
        if len(checks) != 1:
            raise self.fail(path, f"needs exactly one check of {', '.join(CHECKS)}")
        mode, check = modes[0], checks[0]
        target = self.mapping(spec[mode], f"{path}.{mode}")
        self.target(mode, target, f"{path}.{mode}")
        if check == "oneOf":
            self.typed(spec[check], f"{path}.oneOf", list, "a list of possible values")
        if check == "exists":
            self.typed(spec[check], f"{path}.exists", bool, "true or false")
        query_text = spec.get("query")
        return Expectation(
            path,
            Target(mode, target),
            self.query(query_text, f"{path}.query"),
            query_text,
            check,
            spec[check],
        )

    def target(self, mode: str, target: Mapping[str, Any], path: str) -> None:
        if mode == "object":
            self.ref(target, path)
        elif mode == "list":
            self.only(
                target, path, ("apiVersion", "kind", "namespace", "labelSelector", "fieldSelector")
            )
            for key in ("apiVersion", "kind"):
                self.typed(target.get(key), f"{path}.{key}", str, "a string")

    def query(self, text: Any, path: str) -> jmespath.parser.ParsedResult | None:
        if text is None:
            return None
        text = self.typed(text, path, str, "a JMESPath expression")
        try:
            return jmespath.compile(text)
        except JMESPathError as exc:
            raise self.fail(path, f"invalid JMESPath: {exc}") from None


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _replace(state: MemberState, changes: Mapping[str, Any]) -> MemberState:
    return replace(state, **changes)


def apply_member_changes(
    state: MemberState, changes: Mapping[str, Any], file: str, path: str
) -> MemberState:
    """A step's `members` entry applied to a member's current switches."""
    return _Parser(file).member_state(state, changes, path)
