"""OCM's placement scheduling controller (pkg/placement/controllers/scheduling:
scheduling_controller.go, helpers.go): schedules each Placement and writes its
PlacementDecisions and status.

Candidates: the clusters of the ManagedClusterSets bound to the Placement's namespace by a
ManagedClusterSetBinding with condition Bound=True whose set exists, narrowed to
spec.clusterSets when it names any; clusters being deleted are left out (set_members.py
keeps each set's clusters as events come). The scheduler (fleetwarden.scheduling.ocm)
selects among them; decisions.py groups and writes the result.

Status: numberOfSelectedClusters, decisionGroups, and two conditions worded as upstream:
PlacementMisconfigured (True, reason Misconfigured, `<plugin>:<message>`, when the scheduler
or the group strategy finds the placement misconfigured) and PlacementSatisfied (True with
AllDecisionsScheduled; else False with NoManagedClusterSetBindings, NoIntersection,
AllManagedClusterSetsEmpty, NotAllDecisionsScheduled or NoManagedClusterMatched).

When: on the events enqueue.py routes here, and again when the scheduler says its answer
will change by itself (a toleration running out): requeue_after. A status other than Success
(a warning, an error, a misconfiguration) is retried with the rate limiter's backoff, as
upstream returns it as the sync's error; a pending requeue_after then takes its place.
Upstream's informers also resync every 10 minutes, replaying every Placement; that is not
done here: every input of a schedule has an event, and time-driven changes a requeue.

A Placement being deleted, or annotated
cluster.open-cluster-management.io/experimental-scheduling-disable: "true", is left alone.
Its PlacementDecisions are owned by it and go with it (the store's garbage collector).
"""

from __future__ import annotations

import logging
from bisect import bisect_left
from collections.abc import Sequence
from dataclasses import dataclass, field
from operator import attrgetter

from fleetwarden.api.meta import Condition
from fleetwarden.api.ocm.cluster import ManagedCluster, ManagedClusterSetBinding
from fleetwarden.api.ocm.placement import (
    CONDITION_MISCONFIGURED,
    CONDITION_SATISFIED,
    DecisionStrategy,
    Placement,
)
from fleetwarden.runtime.informer import Cache, split_key
from fleetwarden.runtime.manager import (
    DONE,
    REQUEUE,
    Context,
    Controller,
    Result,
    Watches,
    requeue_after,
)
from fleetwarden.runtime.metrics import seconds_since
from fleetwarden.runtime.status import update_status_if_changed
from fleetwarden.scheduling.ocm.cache_handle import CacheHandle
from fleetwarden.scheduling.ocm.decisions import (
    BY_PLACEMENT,
    Binder,
    by_placement,
    decision_groups,
    placement_decisions,
)
from fleetwarden.scheduling.ocm.enqueue import (
    PLACEMENTS_BY_CLUSTER_SET_BINDING,
    PLACEMENTS_BY_SCORE,
    Enqueuer,
    index_placement_by_cluster_set_binding,
    index_placements_by_score,
    is_bound,
)
from fleetwarden.scheduling.ocm.framework import Code, Status
from fleetwarden.scheduling.ocm.kinds import (
    ADD_ON_PLACEMENT_SCORE,
    MANAGED_CLUSTER,
    MANAGED_CLUSTER_SET,
    MANAGED_CLUSTER_SET_BINDING,
    PLACEMENT,
    PLACEMENT_DECISION,
)
from fleetwarden.scheduling.ocm.scheduler import ScheduleResult, schedule
from fleetwarden.scheduling.ocm.set_members import ClusterSetError, cluster_set_members
from fleetwarden.semantics.cluster_sets import BY_CLUSTER_SET, by_cluster_set
from fleetwarden.semantics.conditions import set_status_condition

logger = logging.getLogger(__name__)

# The component of the Events it records, as upstream's recorder names it.
SCHEDULING_CONTROLLER = "placement-controller"
DISABLE_ANNOTATION = "cluster.open-cluster-management.io/experimental-scheduling-disable"


def scheduling_controller() -> Controller:
    """The placement scheduling controller as a controller of the hub's manager."""
    return SchedulingController().controller()


@dataclass
class SchedulingController:
    enqueuer: Enqueuer = field(default_factory=Enqueuer)
    _handle: CacheHandle | None = None

    def controller(self) -> Controller:
        return Controller(
            name=SCHEDULING_CONTROLLER,
            watches=[
                Watches(PLACEMENT, self.enqueuer.placement_keys),
                Watches(PLACEMENT_DECISION, self.enqueuer.decision_keys),
                Watches(MANAGED_CLUSTER, self.enqueuer.cluster_keys),
                Watches(MANAGED_CLUSTER_SET, self.enqueuer.cluster_set_keys),
                Watches(MANAGED_CLUSTER_SET_BINDING, self.enqueuer.binding_keys),
                Watches(ADD_ON_PLACEMENT_SCORE, self.enqueuer.score_keys),
            ],
            reconcile=self.reconcile,
            indexers={
                PLACEMENT: {
                    PLACEMENTS_BY_CLUSTER_SET_BINDING: index_placement_by_cluster_set_binding,
                    PLACEMENTS_BY_SCORE: index_placements_by_score,
                },
                MANAGED_CLUSTER_SET_BINDING: {BY_CLUSTER_SET: by_cluster_set},
                PLACEMENT_DECISION: {BY_PLACEMENT: by_placement},
            },
        )

    def reconcile(self, key: str, ctx: Context) -> Result:
        self.enqueuer.cache = ctx.cache
        namespace, name = split_key(key)
        placement = ctx.cache.informer(PLACEMENT).get(name, namespace)
        if not isinstance(placement, Placement) or placement.metadata.deletion_timestamp:
            return DONE
        if (placement.metadata.annotations or {}).get(DISABLE_ANNOTATION) == "true":
            return DONE
        try:
            with self.enqueuer.syncing(key):
                return self.sync(placement, ctx)
        except ClusterSetError as err:
            logger.error("placement %s: %s", key, err)
            return REQUEUE

    def handle(self, cache: Cache) -> CacheHandle:
        if self._handle is None or self._handle.cache is not cache:
            self._handle = CacheHandle(cache)
        return self._handle

    def sync(self, placement: Placement, ctx: Context) -> Result:
        """syncPlacement: schedule, write the decisions, then the status."""
        candidates = Candidates.of(ctx.cache, placement)
        now = ctx.clock.now()
        result, status = schedule(self.handle(ctx.cache), placement, candidates.clusters, now)
        strategy = placement.spec.decision_strategy or DecisionStrategy()
        groups, group_status = decision_groups(
            strategy.group_strategy, candidates.named(result.decisions)
        )
        if group_status.is_error():
            status = group_status
        decisions, group_statuses = placement_decisions(placement.metadata.name, groups)
        bind_start = ctx.clock.now()  # ScheduleMetrics.StartBind
        ctx.metrics.observe_placement_scheduling((bind_start - now).total_seconds())
        Binder(ctx, placement, result.prioritizer_scores, status).bind(decisions)
        ctx.metrics.observe_placement_bind(seconds_since(ctx.clock, bind_start))  # Done

        new = placement.status.model_copy()  # each field changed is replaced, not mutated
        new.number_of_selected_clusters = len(result.decisions)
        new.decision_groups = group_statuses
        satisfied = candidates.satisfied(placement, result, status)
        for condition in (misconfigured_condition(status), satisfied):
            new.conditions = set_status_condition(new.conditions, condition, now)
        update_status_if_changed(ctx.store, placement, new)

        if result.requeue_after is not None:
            return requeue_after(result.requeue_after)
        return DONE if status.code is Code.SUCCESS else REQUEUE


# --- candidates (helpers.go) ---------------------------------------------------------------------


_name = attrgetter("metadata.name")


@dataclass(frozen=True)
class Candidates:
    """What a placement selects from: the valid bindings of its namespace, the eligible
    sets, and their clusters by name."""

    bindings: list[ManagedClusterSetBinding]
    cluster_sets: list[str]
    clusters: list[ManagedCluster]

    @classmethod
    def of(cls, cache: Cache, placement: Placement) -> Candidates:
        bindings = valid_bindings(cache, placement.metadata.namespace)
        cluster_sets = eligible_cluster_sets(placement, bindings)
        return cls(bindings, cluster_sets, available_clusters(cache, cluster_sets))

    def named(self, names: Sequence[str]) -> list[ManagedCluster]:
        """The candidates of those names, found by bisection: candidates are sorted by name."""
        clusters = self.clusters
        return [clusters[bisect_left(clusters, name, key=_name)] for name in names]

    def satisfied(self, placement: Placement, result: ScheduleResult, status: Status) -> Condition:
        return satisfied_condition(
            placement.spec.cluster_sets or [],
            self.cluster_sets,
            len(self.bindings),
            len(self.clusters),
            len(result.decisions),
            result.num_unscheduled,
            status,
        )


def valid_bindings(cache: Cache, namespace: str) -> list[ManagedClusterSetBinding]:
    """The namespace's bindings that are Bound and whose set exists."""
    cluster_sets = cache.informer(MANAGED_CLUSTER_SET)
    return [
        b
        for b in cache.informer(MANAGED_CLUSTER_SET_BINDING).list(namespace)
        if isinstance(b, ManagedClusterSetBinding)
        and is_bound(b)
        and cluster_sets.get(b.metadata.name) is not None
    ]


def eligible_cluster_sets(
    placement: Placement, bindings: Sequence[ManagedClusterSetBinding]
) -> list[str]:
    """GetEligibleClusterSets: the bound sets, those of spec.clusterSets if it names any."""
    names = {b.metadata.name for b in bindings}
    if placement.spec.cluster_sets:
        names &= set(placement.spec.cluster_sets)
    return sorted(names)


def available_clusters(cache: Cache, cluster_sets: Sequence[str]) -> list[ManagedCluster]:
    """GetAvailableClusters: the clusters of the sets, not being deleted, by name."""
    return cluster_set_members(cache).clusters(cluster_sets)


# --- conditions ----------------------------------------------------------------------------------


def satisfied_condition(
    spec_cluster_sets: Sequence[str],
    eligible_cluster_sets: Sequence[str],
    bindings: int,
    available: int,
    feasible: int,
    unscheduled: int,
    status: Status,
) -> Condition:
    """newSatisfiedCondition."""
    if bindings == 0:
        reason = "NoManagedClusterSetBindings"
        message = "No valid ManagedClusterSetBindings found in placement namespace"
    elif not eligible_cluster_sets:
        reason = "NoIntersection"
        message = (
            f"None of ManagedClusterSets [{','.join(spec_cluster_sets)}] "
            "is bound to placement namespace"
        )
    elif available == 0:
        reason = "AllManagedClusterSetsEmpty"
        message = (
            f"All ManagedClusterSets [{','.join(eligible_cluster_sets)}] "
            "have no member ManagedCluster"
        )
    elif status.code is Code.ERROR:
        reason, message = "NotAllDecisionsScheduled", status.message()
    elif feasible == 0:
        reason = "NoManagedClusterMatched"
        message = "No ManagedCluster matches any of the cluster predicate"
    elif unscheduled == 0:
        return _condition(
            CONDITION_SATISFIED, "True", "AllDecisionsScheduled", "All cluster decisions scheduled"
        )
    else:
        reason, message = "NotAllDecisionsScheduled", f"{unscheduled} cluster decisions unscheduled"
    return _condition(CONDITION_SATISFIED, "False", reason, message)


def misconfigured_condition(status: Status) -> Condition:
    """newMisconfiguredCondition."""
    if status.is_misconfigured():
        message = f"{status.plugin}:{status.message()}"
        return _condition(CONDITION_MISCONFIGURED, "True", "Misconfigured", message)
    return _condition(
        CONDITION_MISCONFIGURED, "False", "Succeedconfigured", "Placement configurations check pass"
    )


def _condition(type_: str, status: str, reason: str, message: str) -> Condition:
    return Condition(type=type_, status=status, reason=reason, message=message)
