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
from fleetwarden.api.core import Taint
from fleetwarden.api.meta import parse_time
from fleetwarden.members.inside.machines import MACHINE_API_VERSION, MachineSetSpec, scale
from fleetwarden.members.inside.nodes import DEFAULT_NODE_ALLOCATABLE, NodeSpec
from fleetwarden.members.simulated import DEFAULT_ALLOCATABLE, MemberState
from fleetwarden.runtime.settings import Settings, SettingsError
from fleetwarden.semantics.durations import DurationError, parse_duration
from fleetwarden.semantics.quantity import QuantityError, parse_quantity

API_VERSION = "fleetwarden.io/v1alpha1"
DEFAULT_START = "2025-01-01T00:00:00Z"
SPEC_FIELDS = (
    "description", "startTime", "settings", "members", "objects", "steps", "until", "expect",
)  # fmt: skip
CHECKS = ("equals", "oneOf", "contains", "exists")
MEMBER_FIELDS = (
    "reachable", "ready", "workloadsHealthy", "workloadReadyAfter", "allocatable", "nodes", "add",
    "machineSets",
)  # fmt: skip
NODE_SWITCHES = {"ready": "ready", "reachable": "reachable", "unschedulable": "unschedulable"}
NODE_FIELDS = ("name", "count", "labels", "taints", "allocatable", *NODE_SWITCHES)
NODE_CHANGES = ("labels", "taints", "delete", *NODE_SWITCHES)
TAINT_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")

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
            changes["allocatable"] = self.quantities(
                spec["allocatable"], f"{path}.allocatable", DEFAULT_ALLOCATABLE
            )
        if "nodes" in spec or "add" in spec:
            changes["nodes"] = self.nodes(state.nodes, spec, path)
        if "machineSets" in spec:
            nodes, made = list(changes.get("nodes", state.nodes) or ()), dict(state.machines_made)
            for machine_set in self.machine_sets(spec["machineSets"], f"{path}.machineSets"):
                nodes, made[machine_set.name] = scale(
                    nodes, made.get(machine_set.name, 0), machine_set
                )
            changes["nodes"], changes["machines_made"] = self.unique(nodes, path), made
        return _replace(state, changes)

    def machine_sets(self, value: Any, path: str) -> list[MachineSetSpec]:
        """MachineSet objects: their name, replicas, and the template's labels and taints."""
        result = []
        for i, item in enumerate(self.items(value, path)):
            where = f"{path}[{i}]"
            obj = self.mapping(item, where)
            if obj.get("apiVersion") != MACHINE_API_VERSION or obj.get("kind") != "MachineSet":
                raise self.fail(where, f"must be a {MACHINE_API_VERSION} MachineSet")
            meta = self.mapping(obj.get("metadata") or {}, f"{where}.metadata")
            name = self.typed(meta.get("name"), f"{where}.metadata.name", str, "a string")
            spec = self.mapping(obj.get("spec") or {}, f"{where}.spec")
            replicas = self.typed(spec.get("replicas", 1), f"{where}.spec.replicas", int,
                                  "an integer")  # fmt: skip
            if replicas < 0:
                raise self.fail(f"{where}.spec.replicas", "must be greater than or equal to 0")
            template = self.mapping(
                self.mapping(spec.get("template") or {}, f"{where}.spec.template").get("spec")
                or {}, f"{where}.spec.template.spec",
            )  # fmt: skip
            node_meta = self.mapping(template.get("metadata") or {},
                                     f"{where}.spec.template.spec.metadata")  # fmt: skip
            labels = self.mapping(node_meta.get("labels") or {},
                                  f"{where}.spec.template.spec.metadata.labels")  # fmt: skip
            taints = self.taints(template.get("taints"), f"{where}.spec.template.spec.taints")
            labels_ = {str(k): str(v) for k, v in labels.items()}
            result.append(MachineSetSpec(name, replicas, labels_, tuple(taints)))
        return result

    def quantities(self, value: Any, path: str, defaults: Mapping[str, str]) -> dict[str, str]:
        given = self.mapping(value, path)
        for key, amount in given.items():
            try:
                parse_quantity(str(amount))
            except QuantityError as exc:
                raise self.fail(f"{path}.{key}", str(exc)) from None
        return {**defaults, **{str(k): str(v) for k, v in given.items()}}

    # nodes inside a member ----------------------------------------------------------------

    def nodes(
        self, current: tuple[NodeSpec, ...] | None, spec: Mapping[str, Any], path: str
    ) -> tuple[NodeSpec, ...]:
        """`nodes` declared (a list), or changed by a step (a mapping by name, and `add`)."""
        value = spec.get("nodes")
        if current is None or isinstance(value, list):
            nodes = self.node_list(value, f"{path}.nodes")
        else:
            nodes = self.node_changes(current, value, f"{path}.nodes")
        nodes += self.node_list(spec.get("add"), f"{path}.add")
        return self.unique(nodes, path)

    def unique(self, nodes: list[NodeSpec], path: str) -> tuple[NodeSpec, ...]:
        names = [n.name for n in nodes]
        for name in names:
            if names.count(name) > 1:
                raise self.fail(f"{path}.nodes", f"node {name!r} declared twice")
        return tuple(nodes)

    def node_list(self, value: Any, path: str) -> list[NodeSpec]:
        nodes = []
        for i, item in enumerate(self.items(value, path)):
            where = f"{path}[{i}]"
            spec = self.mapping(item, where)
            self.only(spec, where, NODE_FIELDS)
            name = self.typed(spec.get("name"), f"{where}.name", str, "a string")
            if "count" in spec:
                count = self.typed(spec["count"], f"{where}.count", int, "an integer")
                names = [f"{name}-{k}" for k in range(count)]
            else:
                names = [name]
            nodes += [self.node(NodeSpec(n), spec, where) for n in names]
        return nodes

    def node_changes(self, current: tuple[NodeSpec, ...], value: Any, path: str) -> list[NodeSpec]:
        changes = self.mapping(value or {}, path)
        known = {node.name for node in current}
        for name in changes:
            if name not in known:
                raise self.fail(f"{path}.{name}", "not a node of this member")
        nodes = []
        for node in current:
            change = self.mapping(changes.get(node.name) or {}, f"{path}.{node.name}")
            self.only(change, f"{path}.{node.name}", NODE_CHANGES)
            delete = change.get("delete", False)
            if not self.typed(delete, f"{path}.{node.name}.delete", bool, "true or false"):
                nodes.append(self.node(node, change, f"{path}.{node.name}"))
        return nodes

    def node(self, node: NodeSpec, spec: Mapping[str, Any], path: str) -> NodeSpec:
        changes: dict[str, Any] = {}
        for flag, attr in NODE_SWITCHES.items():
            if flag in spec:
                changes[attr] = self.typed(spec[flag], f"{path}.{flag}", bool, "true or false")
        if "labels" in spec:
            labels = self.mapping(spec["labels"], f"{path}.labels")
            changes["labels"] = {str(k): str(v) for k, v in labels.items()}
        if "allocatable" in spec:
            changes["allocatable"] = self.quantities(
                spec["allocatable"], f"{path}.allocatable", DEFAULT_NODE_ALLOCATABLE
            )
        if "taints" in spec:
            changes["taints"] = tuple(self.taints(spec["taints"], f"{path}.taints"))
        return replace(node, **changes)

    def taints(self, value: Any, path: str) -> list[Taint]:
        taints = []
        for i, item in enumerate(self.items(value, path)):
            where = f"{path}[{i}]"
            spec = self.mapping(item, where)
            self.only(spec, where, ("key", "value", "effect"))
            key = self.typed(spec.get("key"), f"{where}.key", str, "a string")
            effect = spec.get("effect")
            if effect not in TAINT_EFFECTS:
                raise self.fail(f"{where}.effect", f"must be one of {', '.join(TAINT_EFFECTS)}")
            value_ = self.typed(spec.get("value", ""), f"{where}.value", str, "a string")
            taints.append(Taint(key=key, value=value_ or None, effect=effect))
        return taints

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
            # Node changes are checked against the member's nodes when the step runs.
            shallow = {k: v for k, v in (spec or {}).items() if k not in ("nodes", "add")}
            self.member_state(MemberState(), shallow, f"{path}.members.{name}")
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
        if "member" in target and mode != "events":
            member = self.typed(target["member"], f"{path}.member", str, "a string")
            if member not in self.known_members:
                raise self.fail(f"{path}.member", "not a member declared in spec.members")
            target = {k: v for k, v in target.items() if k != "member"}
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
