"""The ManifestWorkReplicaSet controller (ocm pkg/work/hub/controllers/
manifestworkreplicasetcontroller): one ManifestWork per cluster its Placements decide.

For each placementRef, the clusters of the Placement's PlacementDecisions (grouped by their
decision-group labels) are rolled out to by the ref's rolloutStrategy (semantics/rollout.py):
each cluster to roll out to gets the template as a ManifestWork in its namespace, labelled
with the replica set (`<namespace>.<name>`) and the Placement; a cluster that left the
decisions, or a Placement taken out of the spec, loses its ManifestWork. A ManifestWork that
has taken the current template counts as Succeeded once its agent reports Applied and
Progressing=False for its generation, Progressing while Progressing is True (Failed if
Degraded too), and is still to apply otherwise: so a rollout moves past a cluster only
where the work's conditionRules produce Progressing, as upstream.

Status: PlacementVerified (AsExpected; PlacementDecisionNotFound for a missing Placement;
PlacementDecisionEmpty with no cluster), PlacementRolledOut (Complete once every selected
cluster succeeded), ManifestworkApplied (AsExpected once every work is Available and none
Progressing or Degraded), the summary and each Placement's. The controller looks again
when a soak time or a progress deadline runs out. Deleting the replica set deletes its
ManifestWorks; with cascadeDeletionPolicy Foreground it waits for them to be gone.
"""

from __future__ import annotations

import contextlib
from collections import defaultdict
from datetime import datetime
from typing import Any

from fleetwarden.api.errors import Conflict, NotFound
from fleetwarden.api.meta import Condition, Resource, find_condition
from fleetwarden.api.ocm import work as workv1
from fleetwarden.api.ocm.placement import (
    DECISION_GROUP_INDEX_LABEL,
    DECISION_GROUP_NAME_LABEL,
    PLACEMENT_LABEL,
    Placement,
    PlacementDecision,
)
from fleetwarden.api.ocm.work import ManifestWork, ManifestWorkReplicaSet
from fleetwarden.api.registry import REGISTRY
from fleetwarden.runtime.manager import DONE, Context, Controller, Result, Watches, requeue_after
from fleetwarden.runtime.status import update_status_if_changed
from fleetwarden.semantics.conditions import set_status_condition
from fleetwarden.semantics.rollout import (
    ClusterStatus,
    GroupKey,
    Groups,
    RolloutError,
    Status,
    rollout,
)

REPLICA_SET = REGISTRY.info(
    f"{workv1.GROUP}/{workv1.REPLICA_SET_VERSION}", "ManifestWorkReplicaSet"
)
MANIFEST_WORK = REGISTRY.info(f"{workv1.GROUP}/{workv1.VERSION}", "ManifestWork")
PLACEMENT = REGISTRY.info("cluster.open-cluster-management.io/v1beta1", "Placement")
PLACEMENT_DECISION = REGISTRY.info(
    "cluster.open-cluster-management.io/v1beta1", "PlacementDecision"
)
CONTROLLER = "ManifestWorkReplicaSetController"


def replica_set_key(replica_set: Resource) -> str:
    """manifestWorkReplicaSetKey: the label value naming a replica set on its works."""
    return f"{replica_set.namespace}.{replica_set.name}"


def reconcile(namespace: str, ctx: Context) -> Result:
    """Every replica set of the namespace; when to look again."""
    now, rechecks = ctx.clock.now(), []
    for replica_set in ctx.cache.informer(REPLICA_SET).list(namespace):
        if isinstance(replica_set, ManifestWorkReplicaSet):
            recheck = _reconcile(replica_set, ctx, now)
            rechecks += [recheck] if recheck else []
    return requeue_after(min(rechecks) - now) if rechecks else DONE


def _reconcile(replica_set: ManifestWorkReplicaSet, ctx: Context, now: datetime) -> datetime | None:
    works = _works(replica_set, ctx)
    if replica_set.metadata.deletion_timestamp is not None:
        _finalize(replica_set, works, ctx)
        return None
    if workv1.REPLICA_SET_FINALIZER not in (replica_set.metadata.finalizers or []):
        finalizers = [*(replica_set.metadata.finalizers or []), workv1.REPLICA_SET_FINALIZER]
        _set_finalizers(replica_set, finalizers, ctx)
        return None  # its update brings it back
    status, recheck = _deploy(replica_set, works, ctx, now)
    update_status_if_changed(ctx.store, replica_set, status)
    return recheck


def _works(replica_set: ManifestWorkReplicaSet, ctx: Context) -> list[ManifestWork]:
    owner = replica_set_key(replica_set)
    works = ctx.cache.informer(MANIFEST_WORK).list()
    return [
        w for w in works
        if isinstance(w, ManifestWork)
        and (w.metadata.labels or {}).get(workv1.REPLICA_SET_LABEL) == owner
    ]  # fmt: skip


def _deploy(
    replica_set: ManifestWorkReplicaSet, works: list[ManifestWork], ctx: Context, now: datetime
) -> tuple[workv1.ManifestWorkReplicaSetStatus, datetime | None]:
    """deployReconciler then statusReconciler: the works made, updated and deleted; the status."""
    status = replica_set.status.model_copy()
    refs = replica_set.spec.placement_refs or []
    wanted = {ref.name for ref in refs}
    for work in works:
        if (work.metadata.labels or {}).get(workv1.PLACEMENT_NAME_LABEL) not in wanted:
            _delete(work, ctx)
    summaries, rechecks, selected, succeeded = [], [], 0, 0
    for ref in refs:
        placement = ctx.cache.informer(PLACEMENT).get(ref.name, replica_set.namespace)
        if not isinstance(placement, Placement):
            condition = _verified(workv1.REASON_PLACEMENT_DECISION_NOT_FOUND)
            status.conditions = set_status_condition(status.conditions, condition, now)
            return status, None
        mine = [w for w in works if _placement_of(w) == ref.name]
        outcome = _roll_out(replica_set, ref, placement, mine, ctx, now)
        if outcome is None:
            condition = _verified(workv1.REASON_NOT_AS_EXPECTED)
            status.conditions = set_status_condition(status.conditions, condition, now)
            continue
        summary, recheck, done = outcome
        summaries.append(summary)
        rechecks += [recheck] if recheck else []
        selected += placement.status.number_of_selected_clusters or 0
        succeeded += done
    status.placement_summary = summaries or None
    return _status(status, summaries, selected, succeeded, now), min(rechecks, default=None)


def _roll_out(
    replica_set: ManifestWorkReplicaSet,
    ref: workv1.LocalPlacementReference,
    placement: Placement,
    works: list[ManifestWork],
    ctx: Context,
    now: datetime,
) -> tuple[workv1.PlacementSummary, datetime | None, int] | None:
    """One Placement's rollout: its summary, when to look again, how many succeeded; None
    when its strategy cannot be followed."""
    template = replica_set.spec.manifest_work_template
    current = {w.namespace: w for w in works if w.spec == template}
    statuses = [_cluster_status(w) for w in current.values()]
    groups = _decided_groups(placement, ctx)
    try:
        result = rollout(ref.rollout_strategy, groups, statuses, now)
    except RolloutError:
        return None
    by_cluster = {w.namespace: w for w in works}
    applied = set(current)
    for cluster in result.to_rollout:
        if cluster.status == Status.TO_APPLY:
            _apply(replica_set, ref.name, by_cluster.get(cluster.cluster), cluster.cluster, ctx)
            applied.add(cluster.cluster)
    for cluster in result.removed:
        if (work := by_cluster.get(cluster.cluster)) is not None:
            _delete(work, ctx)
            applied.discard(cluster.cluster)
    summary = _placement_summary(ref.name, placement, [current[c] for c in applied if c in current])
    summary.summary.total = len(applied)
    summary.available_decision_groups = (
        f"{len(placement.status.decision_groups or [])} ({len(applied)} / "
        f"{placement.status.number_of_selected_clusters or 0} clusters applied)"
    )
    done = sum(1 for s in statuses if s.status == Status.SUCCEEDED)
    return summary, result.recheck_at(now), done


def _decided_groups(placement: Placement, ctx: Context) -> Groups:
    """The clusters of the Placement's decisions, by decision group."""
    groups: dict[GroupKey, set[str]] = defaultdict(set)
    for decision in ctx.cache.informer(PLACEMENT_DECISION).list(placement.namespace):
        labels = decision.metadata.labels or {}
        if (
            not isinstance(decision, PlacementDecision)
            or labels.get(PLACEMENT_LABEL) != placement.name
        ):
            continue
        key = GroupKey(
            int(labels.get(DECISION_GROUP_INDEX_LABEL) or 0),
            labels.get(DECISION_GROUP_NAME_LABEL, ""),
        )
        groups[key].update(d.cluster_name for d in decision.status.decisions or [])
    return {k: frozenset(v) for k, v in groups.items()}


def _cluster_status(work: ManifestWork) -> ClusterStatus:
    """clusterRolloutStatusFunc: the work's place in the rollout from its conditions."""
    conditions, generation = work.status.conditions, work.metadata.generation
    applied = find_condition(conditions, workv1.APPLIED)
    progressing = find_condition(conditions, workv1.PROGRESSING)
    degraded = find_condition(conditions, workv1.DEGRADED)
    if (
        applied is None or applied.observed_generation != generation or applied.status != "True"
        or progressing is None or progressing.observed_generation != generation
        or (degraded is not None and degraded.observed_generation != generation)
    ):  # fmt: skip
        return ClusterStatus(work.namespace, Status.TO_APPLY)
    if progressing.status == "True" and degraded is not None and degraded.status == "True":
        return ClusterStatus(work.namespace, Status.FAILED, degraded.last_transition_time)
    by_status = {"True": Status.PROGRESSING, "False": Status.SUCCEEDED}
    state = by_status.get(progressing.status, Status.PROGRESSING)
    return ClusterStatus(work.namespace, state, progressing.last_transition_time)


def _placement_of(work: ManifestWork) -> str | None:
    return (work.metadata.labels or {}).get(workv1.PLACEMENT_NAME_LABEL)


def _apply(
    replica_set: ManifestWorkReplicaSet,
    placement: str,
    existing: ManifestWork | None,
    cluster: str,
    ctx: Context,
) -> None:
    """buildManifestWork and the work applier: the template in the cluster's namespace,
    named `<replica set><random>` when new. A generated name makes each create a new work:
    the store, not the cache, says whether an earlier pass already made it."""
    labels = {
        **(replica_set.metadata.labels or {}),
        workv1.REPLICA_SET_LABEL: replica_set_key(replica_set),
        workv1.PLACEMENT_NAME_LABEL: placement,
    }
    spec = replica_set.spec.manifest_work_template.to_dict()
    if existing is None:
        selector = ",".join(
            f"{k}={labels[k]}" for k in (workv1.REPLICA_SET_LABEL, workv1.PLACEMENT_NAME_LABEL)
        )
        if ctx.store.list(MANIFEST_WORK, cluster, label_selector=selector).items:
            return  # made by an earlier pass the cache has not caught up with yet
        metadata = {"namespace": cluster, "generateName": replica_set.name, "labels": labels}
        ctx.store.create({"apiVersion": MANIFEST_WORK.api_version, "kind": "ManifestWork",
                          "metadata": metadata, "spec": spec})  # fmt: skip
        return
    obj = existing.to_dict()
    obj["metadata"]["labels"] = {**(existing.metadata.labels or {}), **labels}
    obj["spec"] = spec
    with contextlib.suppress(Conflict, NotFound):  # seen again with the newer version
        ctx.store.update(obj)


def _delete(work: ManifestWork, ctx: Context) -> None:
    if work.metadata.deletion_timestamp is None:
        with contextlib.suppress(NotFound):
            ctx.store.delete(MANIFEST_WORK, work.name, work.namespace)


def _placement_summary(
    name: str, placement: Placement, works: list[ManifestWork]
) -> workv1.PlacementSummary:
    """statusReconciler's counts of one Placement's current works by their conditions."""
    summary = workv1.ManifestWorkReplicaSetSummary()
    for work in works:
        if work.metadata.deletion_timestamp is not None:
            continue
        true = {c.type for c in work.status.conditions or [] if c.status == "True"}
        summary.applied += workv1.APPLIED in true
        summary.progressing += workv1.PROGRESSING in true
        summary.available += workv1.AVAILABLE in true
        summary.degraded += workv1.DEGRADED in true
    return workv1.PlacementSummary(name=name, summary=summary)


def _status(
    status: workv1.ManifestWorkReplicaSetStatus,
    summaries: list[workv1.PlacementSummary],
    selected: int,
    succeeded: int,
    now: datetime,
) -> workv1.ManifestWorkReplicaSetStatus:
    total = workv1.ManifestWorkReplicaSetSummary()
    for placement in summaries:
        for field in ("total", "applied", "progressing", "available", "degraded"):
            setattr(total, field, getattr(total, field) + getattr(placement.summary, field))
    status.summary = total
    empty = total.total == 0
    verified = workv1.REASON_PLACEMENT_DECISION_EMPTY if empty else workv1.REASON_AS_EXPECTED
    rolled_out = workv1.REASON_COMPLETE if selected == succeeded else workv1.REASON_PROGRESSING
    if empty:
        applied = verified
    elif total.available == total.total and not total.progressing and not total.degraded:
        applied = workv1.REASON_AS_EXPECTED
    elif total.progressing and not total.degraded:
        applied = workv1.REASON_PROCESSING
    else:
        applied = workv1.REASON_NOT_AS_EXPECTED
    for condition in (
        _verified(verified),
        _condition(workv1.PLACEMENT_ROLLED_OUT, rolled_out, workv1.REASON_COMPLETE),
        _condition(workv1.MANIFESTWORK_APPLIED, applied, workv1.REASON_AS_EXPECTED),
    ):
        status.conditions = set_status_condition(status.conditions, condition, now)
    return status


def _verified(reason: str) -> Condition:
    return _condition(workv1.PLACEMENT_VERIFIED, reason, workv1.REASON_AS_EXPECTED)


def _condition(type_: str, reason: str, true_reason: str) -> Condition:
    """True only with the reason that means it: upstream's getCondition helpers."""
    status = "True" if reason == true_reason else "False"
    return Condition(type=type_, status=status, reason=reason, message="")


def _finalize(replica_set: ManifestWorkReplicaSet, works: list[ManifestWork], ctx: Context) -> None:
    """finalizeReconciler: its works deleted; the finalizer released at once (Background,
    the default) or once they are gone (Foreground)."""
    if workv1.REPLICA_SET_FINALIZER not in (replica_set.metadata.finalizers or []):
        return
    for work in works:
        _delete(work, ctx)
    if works and replica_set.spec.cascade_deletion_policy == workv1.CASCADE_FOREGROUND:
        return  # each work's deletion brings it back
    finalizers = [
        f for f in replica_set.metadata.finalizers or [] if f != workv1.REPLICA_SET_FINALIZER
    ]
    _set_finalizers(replica_set, finalizers, ctx)


def _set_finalizers(
    replica_set: ManifestWorkReplicaSet, finalizers: list[str], ctx: Context
) -> None:
    obj: dict[str, Any] = replica_set.to_dict()
    obj["metadata"]["finalizers"] = finalizers
    with contextlib.suppress(Conflict, NotFound):
        ctx.store.update(obj)


def _owner_namespace(obj: Resource) -> list[str]:
    """A ManifestWork's replica set's namespace, from its label `<namespace>.<name>`."""
    owner = (obj.metadata.labels or {}).get(workv1.REPLICA_SET_LABEL, "")
    namespace, dot, _ = owner.partition(".")
    return [namespace] if dot else []


def _namespace(obj: Resource) -> list[str]:
    return [obj.namespace]


def manifest_work_replica_set_controller() -> Controller:
    """Keyed by namespace: a replica set, a Placement or its decisions queue their own, a
    ManifestWork its replica set's."""
    return Controller(
        name=CONTROLLER,
        watches=[
            Watches(REPLICA_SET, _namespace),
            Watches(MANIFEST_WORK, _owner_namespace),
            Watches(PLACEMENT, _namespace),
            Watches(PLACEMENT_DECISION, _namespace),
        ],
        reconcile=reconcile,
    )
