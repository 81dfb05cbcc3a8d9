"""The RBAC authorizer, as kube-apiserver's: a request is allowed when a ClusterRoleBinding,
or a RoleBinding in the request's namespace, binds a rule that allows it to the user or
one of the user's groups; members of system:masters are allowed everything first (the
privileged-groups authorizer before RBAC).

The authorizer keeps its own index of the Roles, ClusterRoles and bindings it is fed
(`observe`, in the order they were committed), by subject, and caches its decisions until
the next change: the cache is replaced whole on a change, and a decision made from the
older index lands in the older cache, so a reader never needs the lock.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

from pydantic import ValidationError

from fleetwarden.api import rbac
from fleetwarden.api.authentication import SYSTEM_MASTERS, UserInfo, service_account_user
from fleetwarden.api.authorization import Attributes, BoundRules, Decision
from fleetwarden.api.errors import aggregate
from fleetwarden.api.rbac import PolicyRule, Subject
from fleetwarden.semantics.rbac import Rule, compile_rules

# A cached decision per distinct request; past this many the cache starts again. Only
# requests whose URL names fit in CACHED_NAMES characters are cached, so names made up
# by a client cannot hold more than a few tens of MB.
CACHE_SIZE = 32_768
CACHED_NAMES = 512

_COLLECTIONS = {f"{info.group}/{info.plural}": info.kind for info in rbac.KINDS}
# A subject as a user matches it: ("User", name) or ("Group", name).
_SubjectKey = tuple[str, str]


@dataclass(frozen=True)
class _Role:
    rules: tuple[PolicyRule, ...]
    compiled: tuple[Rule, ...]


@dataclass(frozen=True)
class _Binding:
    kind: str  # RoleBinding or ClusterRoleBinding
    name: str
    namespace: str
    role_kind: str
    role_name: str
    subjects: tuple[Subject, ...]

    def describe(self, subject: Subject) -> str:
        """The allow reason's words: `ClusterRoleBinding "x" of ClusterRole "y" to User "z"`."""
        name = f"{self.name}/{self.namespace}" if self.namespace else self.name
        return (
            f"{self.kind} {json.dumps(name)} of {self.role_kind} {json.dumps(self.role_name)} "
            f"to {_describe_subject(subject, self.namespace)}"
        )


class RBAC:
    """The authorizer; see the module docstring. Thread-safe."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._cluster_roles: dict[str, _Role] = {}
        self._roles: dict[tuple[str, str], _Role] = {}
        self._bindings: dict[tuple[str, str, str], _Binding] = {}  # (kind, namespace, name)
        # Binding keys by the subject they name: cluster-wide, and per namespace.
        self._cluster_index: dict[_SubjectKey, set[tuple[str, str, str]]] = {}
        self._namespace_index: dict[tuple[str, _SubjectKey], set[tuple[str, str, str]]] = {}
        self._cache: dict[Attributes, Decision] = {}

    # feeding -----------------------------------------------------------------------------

    def observe(self, collection: str, obj: Mapping[str, Any], deleted: bool = False) -> None:
        """Take a stored object's change; objects of other collections are ignored."""
        kind = _COLLECTIONS.get(collection)
        if kind is None:
            return
        meta = obj.get("metadata") or {}
        name, namespace = str(meta.get("name", "")), str(meta.get("namespace") or "")
        with self._lock:
            self._forget(kind, namespace, name)
            if not deleted:
                self._learn(kind, namespace, name, obj)
            self._cache = {}

    def _forget(self, kind: str, namespace: str, name: str) -> None:
        if kind == rbac.CLUSTER_ROLE:
            self._cluster_roles.pop(name, None)
        elif kind == rbac.ROLE:
            self._roles.pop((namespace, name), None)
        else:
            binding = self._bindings.pop((kind, namespace, name), None)
            if binding is not None:
                for key in _subject_keys(binding):
                    self._index_of(binding, key).discard((kind, namespace, name))

    def _learn(self, kind: str, namespace: str, name: str, obj: Mapping[str, Any]) -> None:
        if kind in (rbac.CLUSTER_ROLE, rbac.ROLE):
            rules = tuple(_valid(PolicyRule, obj.get("rules")))
            role = _Role(rules, compile_rules(rules))
            if kind == rbac.CLUSTER_ROLE:
                self._cluster_roles[name] = role
            else:
                self._roles[(namespace, name)] = role
            return
        ref = obj.get("roleRef") or {}
        subjects = tuple(_valid(Subject, obj.get("subjects")))
        binding = _Binding(
            kind, name, namespace, str(ref.get("kind", "")), str(ref.get("name", "")), subjects
        )
        self._bindings[(kind, namespace, name)] = binding
        for key in _subject_keys(binding):
            self._index_of(binding, key).add((kind, namespace, name))

    def _index_of(self, binding: _Binding, key: _SubjectKey) -> set[tuple[str, str, str]]:
        if binding.kind == rbac.CLUSTER_ROLE_BINDING_KIND.kind:
            return self._cluster_index.setdefault(key, set())
        return self._namespace_index.setdefault((binding.namespace, key), set())

    # deciding ----------------------------------------------------------------------------

    def authorize(self, attributes: Attributes) -> Decision:
        if SYSTEM_MASTERS in attributes.user.groups:
            return Decision(True)
        if not _cacheable(attributes):
            return self._decide(attributes)
        cache = self._cache
        decision = cache.get(attributes)
        if decision is None:
            decision = self._decide(attributes)
            if len(cache) >= CACHE_SIZE:
                cache.clear()
            cache[attributes] = decision
        return decision

    def _decide(self, attributes: Attributes) -> Decision:
        user = attributes.user
        errors: list[str] = []
        with self._lock:
            for binding, subject, role in self._applicable(user, attributes.namespace, errors):
                if any(rule.allows(attributes) for rule in role.compiled):
                    return Decision(True, f"RBAC: allowed by {binding.describe(subject)}")
        return Decision(False, f"RBAC: {aggregate(errors)}" if errors else "")

    def rules_for(self, user: UserInfo, namespace: str) -> BoundRules:
        """RulesFor: every rule bound to the user cluster-wide and in the namespace."""
        errors: list[str] = []
        with self._lock:
            applicable = self._applicable(user, namespace, errors)
            rules = [rule for _, _, role in applicable for rule in role.rules]
        return BoundRules(rules, errors)

    def role_rules(self, kind: str, name: str, namespace: str) -> list[PolicyRule] | None:
        with self._lock:
            role = self._role_of(kind, name, namespace)
        return list(role.rules) if role is not None else None

    def _applicable(
        self, user: UserInfo, namespace: str, errors: list[str]
    ) -> Iterable[tuple[_Binding, Subject, _Role]]:
        """(binding, the subject that names the user, its role) for each binding that
        applies: ClusterRoleBindings first, then the namespace's RoleBindings, each by
        name. A binding whose role is missing adds an error instead."""
        keys = [(rbac.USER, user.name), *((rbac.GROUP_KIND, g) for g in user.groups)]
        cluster = {k for key in keys for k in self._cluster_index.get(key, ())}
        local = (
            {k for key in keys for k in self._namespace_index.get((namespace, key), ())}
            if namespace
            else set()
        )
        for key in [*sorted(cluster), *sorted(local)]:
            binding = self._bindings[key]
            subject = next(s for s in binding.subjects if _applies(s, user, binding.namespace))
            role = self._role_of(binding.role_kind, binding.role_name, binding.namespace)
            if role is not None:
                yield binding, subject, role
            elif binding.role_kind in (rbac.ROLE, rbac.CLUSTER_ROLE):
                errors.append(_missing_role(binding))
            else:
                errors.append(f"unsupported role reference kind: {json.dumps(binding.role_kind)}")

    def _role_of(self, kind: str, name: str, namespace: str) -> _Role | None:
        if kind == rbac.CLUSTER_ROLE:
            return self._cluster_roles.get(name)
        if kind == rbac.ROLE and namespace:
            return self._roles.get((namespace, name))
        return None


_M = TypeVar("_M", PolicyRule, Subject)


def _valid(model: type[_M], items: Any) -> Iterator[_M]:
    """The items that are what they should be; one stored before validation said what
    that is grants nothing rather than failing every decision."""
    for item in items if isinstance(items, list) else ():
        try:
            yield model.model_validate(item)
        except ValidationError:
            continue


def _cacheable(attributes: Attributes) -> bool:
    a = attributes
    names = (a.path, a.namespace, a.name, a.resource, a.subresource, a.api_group)
    return sum(map(len, names)) <= CACHED_NAMES


def _subject_keys(binding: _Binding) -> set[_SubjectKey]:
    """The keys the binding is found by: a User or Group by its name, a ServiceAccount by
    the user name it authenticates as."""
    keys: set[_SubjectKey] = set()
    for subject in binding.subjects:
        if subject.kind in (rbac.USER, rbac.GROUP_KIND):
            keys.add((subject.kind, subject.name))
        elif subject.kind == rbac.SERVICE_ACCOUNT:
            namespace = subject.namespace or binding.namespace
            if namespace:
                keys.add((rbac.USER, service_account_user(namespace, subject.name)))
    return keys


def _applies(subject: Subject, user: UserInfo, binding_namespace: str) -> bool:
    """appliesToUser."""
    if subject.kind == rbac.USER:
        return subject.name == user.name
    if subject.kind == rbac.GROUP_KIND:
        return subject.name in user.groups
    if subject.kind == rbac.SERVICE_ACCOUNT:
        namespace = subject.namespace or binding_namespace
        return bool(namespace) and user.name == service_account_user(namespace, subject.name)
    return False


def _describe_subject(subject: Subject, binding_namespace: str) -> str:
    name = subject.name
    if subject.kind == rbac.SERVICE_ACCOUNT:
        name = f"{name}/{subject.namespace or binding_namespace}"
    return f"{subject.kind} {json.dumps(name)}"


def _missing_role(binding: _Binding) -> str:
    resource = "clusterrole" if binding.role_kind == rbac.CLUSTER_ROLE else "role"
    return f'{resource}.rbac.authorization.k8s.io "{binding.role_name}" not found'
