"""The placement scheduler's plugins (pkg/placement/plugins), one module each.

Filters run in upstream's order, Predicate then TaintToleration. Prioritizers: the built-in
ones by the name a placement's scoreCoordinate.builtIn gives, and AddOn, made for each
scoreCoordinate of type AddOn. Every plugin is stateless: what one scheduling pass shares
travels in its ScheduleContext.
"""

from __future__ import annotations

from collections.abc import Mapping

from fleetwarden.scheduling.ocm.framework import FilterPlugin, Prioritizer
from fleetwarden.scheduling.ocm.plugins.addon import AddOn
from fleetwarden.scheduling.ocm.plugins.balance import Balance
from fleetwarden.scheduling.ocm.plugins.predicate import Predicate
from fleetwarden.scheduling.ocm.plugins.resource import RESOURCES, ResourceAllocatable
from fleetwarden.scheduling.ocm.plugins.steady import Steady
from fleetwarden.scheduling.ocm.plugins.taint_toleration import TaintToleration

FILTERS: tuple[FilterPlugin, ...] = (Predicate(), TaintToleration())

BUILT_IN_PRIORITIZERS: Mapping[str, Prioritizer] = {
    Balance.name: Balance(),
    Steady.name: Steady(),
    **{name: ResourceAllocatable(name) for name in RESOURCES},
}

__all__ = ["BUILT_IN_PRIORITIZERS", "FILTERS", "AddOn"]
