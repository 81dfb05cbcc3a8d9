"""The clusterrole-aggregation controller (kube-controller-manager's): a ClusterRole with an
aggregationRule gets the rules of every ClusterRole its selectors match, selector by
selector, each role's in name order, without duplicates. Aggregating into a role that is
itself aggregated converges as each write wakes the others."""

from __future__ import annotations

from fleetwarden.api.meta import Resource
from fleetwarden.api.rbac import CLUSTER_ROLE_KIND, ClusterRole, PolicyRule
from fleetwarden.runtime.manager import DONE, Context, Controller, Result, Watches
from fleetwarden.semantics.selectors import label_selector_matches

CONTROLLER = "clusterrole-aggregation-controller"


def cluster_role_aggregation_controller() -> Controller:
    return Controller(
        name=CONTROLLER,
        watches=[Watches(CLUSTER_ROLE_KIND, _aggregated_roles)],
        reconcile=reconcile,
    )


def _aggregated_roles(obj: Resource) -> list[str]:
    """Any ClusterRole's change may concern every aggregated one: enqueue them all (as
    upstream does), the changed role included when it is one."""
    return [_ALL]


_ALL = ""  # the key that stands for every aggregated ClusterRole


def reconcile(key: str, ctx: Context) -> Result:
    roles = sorted(
        (r for r in ctx.cache.informer(CLUSTER_ROLE_KIND).list() if isinstance(r, ClusterRole)),
        key=lambda r: r.name,
    )
    for role in roles:
        if role.aggregation_rule is not None:
            _aggregate(role, roles, ctx)
    return DONE


def _aggregate(role: ClusterRole, roles: list[ClusterRole], ctx: Context) -> None:
    rules: list[PolicyRule] = []
    assert role.aggregation_rule is not None
    for selector in role.aggregation_rule.cluster_role_selectors or []:
        for other in roles:
            if other.name == role.name:
                continue
            if label_selector_matches(selector, other.metadata.labels, nil_matches=False):
                rules += [r for r in other.rules or [] if r not in rules]
    if rules == (role.rules or []):
        return
    updated = role.to_dict()
    updated["rules"] = [r.to_dict() for r in rules]
    ctx.store.update(updated)
