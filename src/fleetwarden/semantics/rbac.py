"""RBAC's rules, as pure functions: whether a policy rule allows a request, and whether a set
of rules covers another (the escalation check), worded as Kubernetes words a rule.

A rule is compiled once into frozensets (`Rule`), since the authorizer matches each request
against many of them.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from fleetwarden.api.authorization import Attributes
from fleetwarden.api.rbac import PolicyRule

ALL = "*"


@dataclass(frozen=True)
class Rule:
    """A PolicyRule's lists as sets (rbacv1helpers' matching reads them as sets)."""

    verbs: frozenset[str]
    api_groups: frozenset[str]
    resources: frozenset[str]
    resource_names: frozenset[str]
    non_resource_urls: tuple[str, ...]

    @classmethod
    def of(cls, rule: PolicyRule) -> Rule:
        return cls(
            frozenset(rule.verbs),
            frozenset(rule.api_groups or ()),
            frozenset(rule.resources or ()),
            frozenset(rule.resource_names or ()),
            tuple(rule.non_resource_urls or ()),
        )

    def allows(self, attributes: Attributes) -> bool:
        """RuleAllows: the verb, and then the group, resource and name, or the path."""
        if not (ALL in self.verbs or attributes.verb in self.verbs):
            return False
        if not attributes.resource_request:
            return any(url_matches(url, attributes.path) for url in self.non_resource_urls)
        return (
            (ALL in self.api_groups or attributes.api_group in self.api_groups)
            and self._resource_matches(attributes.resource, attributes.subresource)
            and (not self.resource_names or attributes.name in self.resource_names)
        )

    def _resource_matches(self, resource: str, subresource: str) -> bool:
        resources = self.resources
        if ALL in resources:
            return True
        if not subresource:
            return resource in resources
        return f"{resource}/{subresource}" in resources or f"*/{subresource}" in resources


def url_matches(rule_url: str, path: str) -> bool:
    """NonResourceURLMatches (and nonResourceURLCovers): the path itself, or a prefix ending
    in `*` (`*` alone: every path)."""
    return rule_url == path or (rule_url.endswith("*") and path.startswith(rule_url.rstrip("*")))


def compile_rules(rules: Iterable[PolicyRule]) -> tuple[Rule, ...]:
    return tuple(Rule.of(rule) for rule in rules)


# --- covering: may a user grant these rules? -------------------------------------------


def covers(owner: Sequence[PolicyRule], servant: Iterable[PolicyRule]) -> list[PolicyRule]:
    """validation.Covers: the parts of `servant` (broken down to one verb on one resource,
    or one URL) that no rule of `owner` covers; empty when the owner holds them all."""
    return [
        part
        for rule in servant
        for part in breakdown(rule)
        if not any(_rule_covers(o, part) for o in owner)
    ]


def breakdown(rule: PolicyRule) -> list[PolicyRule]:
    """BreakdownRule: one rule per group, resource, verb and name (if it names any), and
    one per non-resource URL and verb."""
    names: list[list[str] | None] = [[n] for n in rule.resource_names or []] or [None]
    parts = [
        PolicyRule(api_groups=[group], resources=[resource], verbs=[verb], resource_names=name)
        for group in rule.api_groups or ()
        for resource in rule.resources or ()
        for verb in rule.verbs
        for name in names
    ]
    parts += [
        PolicyRule(non_resource_urls=[url], verbs=[verb])
        for url in rule.non_resource_urls or ()
        for verb in rule.verbs
    ]
    return parts


def _rule_covers(owner: PolicyRule, sub: PolicyRule) -> bool:
    owner_names = owner.resource_names or []
    if sub.resource_names:
        names = not owner_names or set(sub.resource_names) <= set(owner_names)
    else:
        names = not owner_names
    return (
        _has_all(owner.verbs, sub.verbs)
        and _has_all(owner.api_groups or [], sub.api_groups or [])
        and _resources_cover(owner.resources or [], sub.resources or [])
        and names
        and all(
            any(url_matches(o, path) for o in owner.non_resource_urls or [])
            for path in sub.non_resource_urls or []
        )
    )


def _has_all(owner: Sequence[str], wanted: Sequence[str]) -> bool:
    return ALL in owner or set(wanted) <= set(owner)


def _resources_cover(owner: Sequence[str], wanted: Sequence[str]) -> bool:
    """resourceCoversAll: `*`, the resource itself, or `*/sub` for a subresource."""
    if _has_all(owner, wanted):
        return True
    return all(
        path in owner or ("/" in path and "*/" + path.split("/", 1)[1] in owner) for path in wanted
    )


# --- words ----------------------------------------------------------------------------


def compact_rules(rules: Sequence[PolicyRule]) -> list[PolicyRule]:
    """CompactRules: simple rules (one group, one resource, one name at most) on the same
    resource and name merged into one with all their verbs; the others as they are."""
    merged: dict[tuple[str, str, str | None], PolicyRule] = {}
    compacted: list[PolicyRule] = []
    for rule in rules:
        groups, resources = rule.api_groups or [], rule.resources or []
        names = rule.resource_names or []
        simple = (
            len(groups) == 1
            and len(resources) == 1
            and len(names) <= 1
            and not rule.non_resource_urls
        )
        if not simple:
            compacted.append(rule)
            continue
        key = (groups[0], resources[0], names[0] if names else None)
        if key in merged:
            verbs = merged[key].verbs
            verbs.extend(v for v in rule.verbs if v not in verbs)
        else:
            merged[key] = rule.model_copy(update={"verbs": list(rule.verbs)})
            compacted.append(merged[key])
    return compacted


def compact_string(rule: PolicyRule) -> str:
    """CompactString: `{APIGroups:["apps"], Resources:["deployments"], Verbs:["get" "list"]}`."""
    parts = [
        f"{name}:{go_quoted(values)}"
        for name, values in (
            ("APIGroups", rule.api_groups),
            ("Resources", rule.resources),
            ("NonResourceURLs", rule.non_resource_urls),
            ("ResourceNames", rule.resource_names),
            ("Verbs", rule.verbs),
        )
        if values
    ]
    return "{" + ", ".join(parts) + "}"


def go_quoted(values: Iterable[str]) -> str:
    """Go's %q of a []string: `["a" "b"]`."""
    return "[" + " ".join(json.dumps(v, ensure_ascii=False) for v in values) + "]"
