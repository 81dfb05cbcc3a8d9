"""Which (Cluster)PropagationPolicy a resource template belongs to (upstream's
pkg/util/selector.go and pkg/detector/compare.go).

A ResourceSelector matches a template of its apiVersion and kind (and namespace, if it
names one); then by name if it gives one (its labelSelector is then ignored), else by its
labelSelector, else all of them. How it matched is its implicit priority: by name beats by
label selector beats by kind alone. Among the policies that match, the highest explicit
`spec.priority` wins, then the highest implicit priority, then the name first in
alphabetical order.
"""

from __future__ import annotations

import weakref
from collections.abc import Iterable, Sequence
from enum import IntEnum
from typing import Generic, TypeVar

from fleetwarden.api.karmada.policy import (
    ClusterPropagationPolicy,
    PropagationPolicy,
    ResourceSelector,
)
from fleetwarden.api.meta import LabelSelector, Resource
from fleetwarden.semantics.selectors import Selector, SelectorError, label_selector_as_selector


class ImplicitPriority(IntEnum):
    MISMATCH = 0
    MATCH_ALL = 1
    MATCH_LABEL_SELECTOR = 2
    MATCH_NAME = 3


Policy = TypeVar("Policy", PropagationPolicy, ClusterPropagationPolicy)


def selector_priority(template: Resource, selector: ResourceSelector) -> ImplicitPriority:
    """How a selector matches the template (ResourceSelectorPriority)."""
    meta = template.metadata
    if (
        template.api_version != selector.api_version
        or template.kind != selector.kind
        or (selector.namespace and meta.namespace != selector.namespace)
    ):
        return ImplicitPriority.MISMATCH
    if selector.name:
        matched = selector.name == meta.name
        return ImplicitPriority.MATCH_NAME if matched else ImplicitPriority.MISMATCH
    if selector.label_selector is None:
        return ImplicitPriority.MATCH_ALL
    compiled = _compile(selector.label_selector)
    if compiled is None or not compiled.matches(meta.labels):
        return ImplicitPriority.MISMATCH
    return ImplicitPriority.MATCH_LABEL_SELECTOR


# Label selectors converted once per selector object: every template is matched against
# every policy, and a cached policy (with its selectors) stays the same object until it
# changes. Keyed by id, checked through a weak reference, dropped when the object goes.
_COMPILED: dict[int, tuple[weakref.ref[LabelSelector], Selector | None]] = {}


def _compile(label_selector: LabelSelector) -> Selector | None:
    """The selector, or None for one the webhook would have refused (it matches nothing)."""
    key = id(label_selector)
    hit = _COMPILED.get(key)
    if hit is not None and hit[0]() is label_selector:
        return hit[1]
    try:
        compiled: Selector | None = label_selector_as_selector(label_selector)
    except SelectorError:
        compiled = None
    _COMPILED[key] = (weakref.ref(label_selector, lambda _: _COMPILED.pop(key, None)), compiled)
    return compiled


def selectors_priority(
    template: Resource, selectors: Sequence[ResourceSelector]
) -> ImplicitPriority:
    """The best match of any of the selectors (ResourceMatchSelectorsPriority)."""
    return max(
        (selector_priority(template, s) for s in selectors), default=ImplicitPriority.MISMATCH
    )


def matches_any(template: Resource, selectors: Sequence[ResourceSelector]) -> bool:
    return selectors_priority(template, selectors) > ImplicitPriority.MISMATCH


def highest_priority_policy(policies: Iterable[Policy], template: Resource) -> Policy | None:
    """The policy that claims the template, of those given (getHighestPriority*Policy)."""
    best: tuple[int, int, str] | None = None
    chosen: Policy | None = None
    for policy in policies:
        implicit = selectors_priority(template, policy.spec.resource_selectors)
        if implicit == ImplicitPriority.MISMATCH:
            continue
        rank = (-(policy.spec.priority or 0), -implicit, policy.metadata.name)
        if best is None or rank < best:
            best, chosen = rank, policy
    return chosen


def selector_filing(selector: ResourceSelector) -> tuple[str, ...]:
    """What a template must have for the selector to match it, as one key: its name, one
    label of the selector's matchLabels, or only its apiVersion and kind."""
    kind = (selector.api_version, selector.kind)
    if selector.name:
        return (*kind, "name", selector.name)
    match_labels = selector.label_selector.match_labels if selector.label_selector else None
    if match_labels:
        return (*kind, "label", *min(match_labels.items()))
    return kind


def template_filings(template: Resource) -> list[tuple[str, ...]]:
    """Every key of selector_filing under which a selector matching the template is filed."""
    api_version, kind, meta = template.api_version, template.kind, template.metadata
    keys = [(api_version, kind), (api_version, kind, "name", meta.name)]
    keys += [(api_version, kind, "label", k, v) for k, v in (meta.labels or {}).items()]
    return keys


class PolicyIndex(Generic[Policy]):
    """Policies filed by selector_filing: `best` looks only at those filed under one of
    the template's keys, and picks among them as highest_priority_policy among all."""

    def __init__(self, policies: Sequence[Policy]) -> None:
        self.policies: tuple[Policy, ...] = tuple(policies)
        self._filed: dict[tuple[str, ...], list[Policy]] = {}
        for policy in self.policies:
            for key in {selector_filing(s) for s in policy.spec.resource_selectors}:
                self._filed.setdefault(key, []).append(policy)

    def best(self, template: Resource) -> Policy | None:
        filed = (self._filed.get(key, ()) for key in template_filings(template))
        candidates = {id(p): p for policies in filed for p in policies}
        return highest_priority_policy(candidates.values(), template)
