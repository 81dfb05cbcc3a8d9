"""The ClusterTaintPolicy controller (pkg/controllers/taint/clustertaintpolicy_controller.go):
taints on clusters from their status conditions, Karmada's or any third party's.

It runs only with the Failover feature gate on, as karmada-controller-manager starts it.
Per Cluster, the policies in order of creation: each whose targetClusters (a
ClusterAffinity; none means every cluster) matches the cluster adds its taints when all of
its addOnConditions match (In / NotIn over the condition's status; a condition the cluster
lacks matches neither; no conditions match nothing), then removes them when all of its
removeOnConditions match, so removal wins when both do. A taint is there already when one
with its key and effect is; an added taint gets timeAdded. All changes to one cluster go
in one write, with the resourceVersion read.

A cluster is looked at when it appears or its conditions change, and a policy's target
clusters when the policy appears or its spec changes (those of its old spec too).
Nothing is looked at when a policy is deleted: as documented, deleting a policy, or
changing its taints or its targets, leaves the taints it applied in place.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from fleetwarden.api.core import Taint
from fleetwarden.api.errors import StatusError
from fleetwarden.api.karmada.cluster import Cluster
from fleetwarden.api.karmada.policy import ClusterAffinity, ClusterTaintPolicy, MatchCondition
from fleetwarden.api.karmada.policy import Taint as PolicyTaint
from fleetwarden.api.meta import Condition, Resource
from fleetwarden.api.registry import REGISTRY
from fleetwarden.controllers.karmada.cluster import (
    TAINT_CLUSTER_FAILED,
    TAINT_CLUSTER_SUCCEED,
    generate_taints_message,
)
from fleetwarden.controllers.karmada.work import CLUSTER
from fleetwarden.runtime.events import NORMAL, WARNING
from fleetwarden.runtime.informer import Cache
from fleetwarden.runtime.manager import DONE, Context, Controller, Result, Watches
from fleetwarden.semantics.affinity import cluster_matches

CLUSTER_TAINT_POLICY_CONTROLLER = "cluster-taint-policy-controller"
CLUSTER_TAINT_POLICY = REGISTRY.info("policy.karmada.io/v1alpha1", "ClusterTaintPolicy")

MATCH_IN = "In"
MATCH_NOT_IN = "NotIn"


def condition_matches(
    conditions: Sequence[Condition] | None, match_conditions: Sequence[MatchCondition] | None
) -> bool:
    """conditionMatches: every match condition holds (AND); none given matches nothing.

    In holds when the cluster's condition of that type has one of the values, NotIn when
    it has none of them; a condition type the cluster lacks holds for neither. An unknown
    operator matches nothing.
    """
    if not match_conditions:
        return False
    for wanted in match_conditions:
        match = False
        for condition in conditions or ():
            if condition.type != wanted.condition_type:
                continue
            if wanted.operator == MATCH_IN:
                match = match or condition.status in wanted.status_values
            elif wanted.operator == MATCH_NOT_IN:
                match = condition.status not in wanted.status_values
            else:
                return False
        if not match:
            return False
    return True


def _same(taint: Taint, policy_taint: PolicyTaint) -> bool:
    return taint.key == policy_taint.key and taint.effect == policy_taint.effect


def add_taints_on_cluster(
    taints: Sequence[Taint], policy_taints: Iterable[PolicyTaint], now: datetime
) -> list[Taint]:
    """addTaintsOnCluster: each policy taint whose key and effect no taint has, with
    timeAdded `now`; a taint already there keeps its value and timeAdded."""
    result = list(taints)
    for wanted in policy_taints:
        if not any(_same(t, wanted) for t in result):
            added = Taint(key=wanted.key, effect=wanted.effect, time_added=now)
            if wanted.value:
                added.value = wanted.value
            result.append(added)
    return result


def remove_taints_from_cluster(
    taints: Sequence[Taint], policy_taints: Iterable[PolicyTaint]
) -> list[Taint]:
    """removeTaintsFromCluster: the first taint with each policy taint's key and effect."""
    result = list(taints)
    for unwanted in policy_taints:
        index = next((i for i, t in enumerate(result) if _same(t, unwanted)), None)
        if index is not None:
            del result[index]
    return result


def _creation_order(policy: ClusterTaintPolicy) -> tuple[str, str]:
    created = policy.metadata.creation_timestamp
    return (created.isoformat() if created else "", policy.name)


def _targets(affinity: ClusterAffinity | None, cluster: Cluster) -> bool:
    return affinity is None or cluster_matches(cluster, affinity)


def policy_taints(
    cluster: Cluster, policies: Iterable[ClusterTaintPolicy], now: datetime
) -> list[Taint]:
    """The cluster's taints after every policy, oldest first (ties by name), had its say."""
    taints = list(cluster.spec.taints or [])
    conditions = cluster.status.conditions
    for policy in sorted(policies, key=_creation_order):
        spec = policy.spec
        if not _targets(spec.target_clusters, cluster):
            continue
        if condition_matches(conditions, spec.add_on_conditions):
            taints = add_taints_on_cluster(taints, spec.taints, now)
        if condition_matches(conditions, spec.remove_on_conditions):
            taints = remove_taints_from_cluster(taints, spec.taints)
    return taints


@dataclass
class ClusterTaintPolicyController:
    # What the event filters last let through, as upstream's predicates compare old and
    # new: a cluster's conditions, a policy's spec (and its target clusters), by uid.
    _conditions: dict[str, tuple[str, list[dict[str, Any]]]] = field(default_factory=dict)
    _specs: dict[str, tuple[str, dict[str, Any], ClusterAffinity | None]] = field(
        default_factory=dict
    )
    _cache: Cache | None = None  # the manager's, known from the first reconcile

    def controller(self) -> Controller:
        return Controller(
            name=CLUSTER_TAINT_POLICY_CONTROLLER,
            watches=[
                Watches(CLUSTER, self._cluster_keys),
                Watches(CLUSTER_TAINT_POLICY, self._policy_keys),
            ],
            reconcile=self.reconcile,
        )

    def _cluster_keys(self, cluster: Resource) -> list[str]:
        """A new cluster, or one whose conditions changed; not a deleted one."""
        if not isinstance(cluster, Cluster):
            return []
        seen = (cluster.metadata.uid or "", [c.to_dict() for c in cluster.status.conditions or []])
        if self._conditions.get(cluster.name) == seen:
            return []
        self._conditions[cluster.name] = seen
        return [cluster.name]

    def _policy_keys(self, policy: Resource) -> list[str]:
        """The clusters a new policy, or one whose spec changed, targets or targeted."""
        if not isinstance(policy, ClusterTaintPolicy):
            return []
        uid, spec = policy.metadata.uid or "", policy.spec.to_dict()
        before = self._specs.get(policy.name)
        if before is not None and before[:2] == (uid, spec):
            return []
        self._specs[policy.name] = (uid, spec, policy.spec.target_clusters)
        affinities = [policy.spec.target_clusters]
        if before is not None and before[0] == uid:
            affinities.append(before[2])
        if self._cache is None:
            return []  # nothing reconciled yet: every cluster is queued as it is listed
        return [
            cluster.name
            for cluster in self._cache.informer(CLUSTER).list()
            if isinstance(cluster, Cluster) and any(_targets(a, cluster) for a in affinities)
        ]

    def reconcile(self, key: str, ctx: Context) -> Result:
        self._cache = ctx.cache
        if not ctx.settings.gate("Failover"):
            return DONE
        cluster = ctx.cache.informer(CLUSTER).get(key)
        if not isinstance(cluster, Cluster):
            return DONE
        policies = [
            p
            for p in ctx.cache.informer(CLUSTER_TAINT_POLICY).list()
            if isinstance(p, ClusterTaintPolicy)
        ]
        taints = policy_taints(cluster, policies, ctx.clock.now())
        current = cluster.spec.taints or []
        if [t.to_dict() for t in taints] == [t.to_dict() for t in current]:
            return DONE
        patch = {
            "metadata": {"resourceVersion": cluster.metadata.resource_version},
            "spec": {"taints": [t.to_dict() for t in taints] or None},
        }
        try:
            stored = ctx.store.patch(CLUSTER, cluster.name, "", patch)
        except StatusError as exc:
            ctx.recorder.event(cluster, WARNING, TAINT_CLUSTER_FAILED, exc.message)
            raise
        message = (
            f"Update Cluster({cluster.name}) with taints({generate_taints_message(taints)}) succeed"
        )
        ctx.recorder.event(REGISTRY.decode(stored), NORMAL, TAINT_CLUSTER_SUCCEED, message)
        return DONE


def cluster_taint_policy_controller() -> Controller:
    """The ClusterTaintPolicy controller (karmada-controller-manager's `clustertaintpolicy`)."""
    return ClusterTaintPolicyController().controller()
