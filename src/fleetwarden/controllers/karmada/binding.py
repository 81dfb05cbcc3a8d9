"""The binding controllers: a (Cluster)ResourceBinding's scheduling result made into one Work
per target cluster (pkg/controllers/binding).

Each reconcile, as upstream's syncBinding:
1. Works of clusters that left the result are deleted, unless the cluster is still being
   evicted gracefully (spec.gracefulEvictionTasks; a task that purges Directly keeps none);
2. while Works of Directly purged clusters remain, nothing else happens (again in 5 s);
3. from the resource template, each target cluster's Work in `karmada-es-<cluster>` is
   created or updated, its manifest revised to the cluster's replicas; SyncWorkSucceed on
   the binding and the template, or SyncWorkFailed with every cluster's error.

Each cluster's manifest goes through the override manager (overridemanager.py) on its way
into the Work.

A deleted binding has its Works deleted and its finalizer released. Like upstream (whose
event filter is GenerationChangedPredicate), a binding is synced once per generation: the
scheduler's result and the detector's template revision both change the spec; and again when
an override policy selecting its template is created, changes its spec or is deleted. There
is no scheduled check either, as upstream dropped it: a binding without clusters has no Work.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from fleetwarden.api.errors import NotFound, aggregate
from fleetwarden.api.karmada.cluster import Cluster
from fleetwarden.api.karmada.work import TargetCluster, Work
from fleetwarden.api.kinds import KindInfo
from fleetwarden.api.meta import Resource
from fleetwarden.controllers.karmada.application_failover import preserved_labels
from fleetwarden.controllers.karmada.overridemanager import (
    CLUSTER_OVERRIDE_POLICY,
    OVERRIDE_MANAGER,
    OVERRIDE_POLICY,
    TemplatePolicies,
    apply_overrides,
    selects,
    template_policies,
)
from fleetwarden.controllers.karmada.work import (
    CLUSTER,
    CLUSTER_RESOURCE_BINDING,
    RESOURCE_BINDING,
    WORK,
    Binding,
    BindingScope,
    WorkTemplate,
    cluster_of,
    directly_purged_clusters,
    existing_clusters,
    label_manifests,
    merge_into_existing,
    resource_template,
    target_clusters,
    works_in,
)
from fleetwarden.runtime.events import NORMAL, WARNING, EventRecorder
from fleetwarden.runtime.finalizers import remove_finalizer
from fleetwarden.runtime.informer import Cache, object_key, split_key
from fleetwarden.runtime.manager import DONE, REQUEUE, Context, Controller, Result, Watches
from fleetwarden.runtime.manager import requeue_after as after
from fleetwarden.store.interface import Store

BINDING_CONTROLLER = "binding-controller"
CLUSTER_RESOURCE_BINDING_CONTROLLER = "cluster-resource-binding-controller"
# requeueIntervalForDirectlyPurge.
DIRECTLY_PURGE_REQUEUE = timedelta(seconds=5)

SYNC_WORK_SUCCEED = "SyncWorkSucceed"
SYNC_WORK_FAILED = "SyncWorkFailed"


class _WorkError(Exception):
    """One cluster's Work could not be written; the message is upstream's."""


@dataclass
class BindingController:
    name: str
    scope: BindingScope
    # The override policy kinds whose changes re-render this kind's bindings.
    override_policies: tuple[KindInfo, ...]
    # GenerationChangedPredicate's memory: the (uid, generation) each binding last synced.
    synced: dict[str, tuple[str, int]] = field(default_factory=dict)
    # Bindings to sync again whatever their generation: an override policy changed.
    stale: set[str] = field(default_factory=set)
    # Per policy, the (uid, generation) last seen: a spec change, not a label, re-renders.
    policies_seen: dict[str, tuple[str, int]] = field(default_factory=dict)
    # The bindings of a running hub's store, not looked at yet since the run resumed.
    resumed: set[str] = field(default_factory=set)
    _cache: Cache | None = None  # the manager's, known from the first reconcile
    # The override manager's recorder, for the store it writes to.
    _override_recorder: tuple[Store, EventRecorder] | None = None

    def controller(self) -> Controller:
        return Controller(
            name=self.name,
            watches=[
                Watches(self.scope.info),
                *(Watches(info, self._policy_keys) for info in self.override_policies),
            ],
            reconcile=self.reconcile,
            resume=self.resume,
            indexers={WORK: {self.scope.work_index: self.scope.index_func}},
        )

    def resume(self, cache: Cache) -> None:
        """A running binding controller synced every binding at its generation already,
        and said so then. It still looks at each once (it keeps no record of its syncs to
        resume from), and says nothing if that changes nothing: a restart says it again."""
        self.resumed = {object_key(binding) for binding in cache.informer(self.scope.info).list()}

    def _policy_keys(self, policy: Resource) -> list[str]:
        """newOverridePolicyFunc behind GenerationChangedPredicate: the bindings whose
        template a created, deleted or respecified policy selects, before or after."""
        cache = self._cache
        if cache is None:
            return []  # nothing reconciled yet: every binding is queued as it is listed
        key = f"{policy.kind}/{object_key(policy)}"
        info = next(info for info in self.override_policies if info.kind == policy.kind)
        current = cache.informer(info).get(policy.name, policy.namespace)
        now = None if current is None else _revision(current)
        if now is not None and _revision(policy) == now == self.policies_seen.get(key):
            return []
        if now is None:
            self.policies_seen.pop(key, None)
        else:
            self.policies_seen[key] = now
        versions = [p for p in (policy, current) if p is not None]
        keys = [
            object_key(binding)
            for binding in cache.informer(self.scope.info).list(policy.namespace or None)
            if any(selects(p, binding, cache) for p in versions)
        ]
        self.stale.update(keys)
        return keys

    def reconcile(self, key: str, ctx: Context) -> Result:
        self._cache = ctx.cache
        resumed = key in self.resumed
        self.resumed.discard(key)
        namespace, name = split_key(key)
        binding = ctx.cache.informer(self.scope.info).get(name, namespace)
        if binding is None:
            self.synced.pop(key, None)
            self.stale.discard(key)
            return DONE
        assert isinstance(binding, Binding)
        if binding.metadata.deletion_timestamp is not None:
            self._delete_works(binding, ctx)
            remove_finalizer(ctx.store, binding, self.scope.finalizer)
            return DONE
        revision = _revision(binding)
        if key in self.stale:
            self.stale.discard(key)
            # What was synced before the policy changed no longer counts: a render that
            # fails now is retried until one succeeds, whatever the generation.
            self.synced.pop(key, None)
        elif self.synced.get(key) == revision:
            return DONE
        result = self._sync(binding, ctx, resumed=resumed)
        if result == DONE:
            self.synced[key] = revision
        return result

    def _works(self, binding: Binding, ctx: Context) -> list[Resource]:
        """GetWorksByBindingID."""
        binding_id = self.scope.binding_id(binding)
        return ctx.cache.informer(WORK).by_index(self.scope.work_index, binding_id)

    def _delete_works(self, binding: Binding, ctx: Context) -> None:
        """DeleteWorks."""
        for work in self._works(binding, ctx):
            _delete(ctx, work)

    def _sync(self, binding: Binding, ctx: Context, *, resumed: bool = False) -> Result:
        before = ctx.store.resource_version
        works = self._works(binding, ctx)
        wanted = existing_clusters(binding.spec)
        for work in works:
            if cluster_of(work) not in wanted and work.metadata.deletion_timestamp is None:
                _delete(ctx, work)  # removeOrphanWorks
        if works_in(works, directly_purged_clusters(binding.spec)):
            return after(DIRECTLY_PURGE_REQUEUE)
        template = resource_template(binding, ctx.cache)
        if template is None:
            # Deleted: the garbage collector removes the binding next. No retry, as upstream.
            return DONE
        errors = self._ensure_works(binding, template, ctx)
        if errors:
            message = aggregate(errors)
            ctx.recorder.event(binding, WARNING, SYNC_WORK_FAILED, message)
            ctx.recorder.event(template, WARNING, SYNC_WORK_FAILED, message)
            return REQUEUE
        if resumed and ctx.store.resource_version == before:
            return DONE  # in sync already: the running controller reported it
        message = f"Sync work of {self.scope.describe(binding)} successful."
        ctx.recorder.event(binding, NORMAL, SYNC_WORK_SUCCEED, message)
        ctx.recorder.event(template, NORMAL, SYNC_WORK_SUCCEED, message)
        return DONE

    def _ensure_works(self, binding: Binding, template: Resource, ctx: Context) -> list[str]:
        """ensureWork: every target cluster's Work; the errors of those that failed."""
        base = WorkTemplate.of(self.scope, binding, template)
        policies = template_policies(ctx.cache, template)
        errors: list[str] = []
        for target in target_clusters(binding.spec):
            try:
                self._ensure_work(base, policies, target, ctx)
            except (_WorkError, ValueError) as exc:
                errors.append(str(exc))
        return errors

    def _ensure_work(
        self, base: WorkTemplate, policies: TemplatePolicies, target: TargetCluster, ctx: Context
    ) -> None:
        """The override step (it reads the Cluster first), then CreateOrUpdateWork."""
        cluster = ctx.cache.informer(CLUSTER).get(target.name)
        if not isinstance(cluster, Cluster):
            raise _WorkError(str(NotFound(CLUSTER.plural, CLUSTER.group, target.name)))
        overrides = policies.for_cluster(cluster)
        injected = (
            preserved_labels(base.binding.spec, target)
            if ctx.settings.gate("StatefulFailoverInjection")
            else {}
        )
        if not overrides and not injected:
            _write_work(base, base.for_cluster(target), ctx)
            return
        recorder = self._recorder(ctx)

        def override(manifest: dict[str, Any]) -> dict[str, str]:
            """The overrides, then the state a failover preserved (injectReservedLabelState)."""
            applied = apply_overrides(manifest, overrides, target.name, base.template, recorder)
            if injected:
                metadata = manifest.setdefault("metadata", {})
                metadata["labels"] = {**(metadata.get("labels") or {}), **injected}
            return applied

        _write_work(base, base.for_cluster(target, override), ctx)

    def _recorder(self, ctx: Context) -> EventRecorder:
        """The override manager's own (its Events' component), kept so repeats are counted."""
        if self._override_recorder is None or self._override_recorder[0] is not ctx.store:
            recorder = EventRecorder(ctx.store, ctx.clock, OVERRIDE_MANAGER)
            self._override_recorder = (ctx.store, recorder)
        return self._override_recorder[1]


def _revision(obj: Resource) -> tuple[str, int]:
    return (obj.metadata.uid or "", obj.metadata.generation or 0)


def _write_work(base: WorkTemplate, desired: dict[str, Any], ctx: Context) -> None:
    """CreateOrUpdateWork."""
    namespace = desired["metadata"]["namespace"]
    existing = ctx.cache.informer(WORK).get(base.name, namespace)
    if existing is None:
        ctx.store.create(label_manifests(desired))
        return
    assert isinstance(existing, Work)
    if existing.metadata.deletion_timestamp is not None:
        raise _WorkError(f"work {namespace}/{base.name} is being deleted")
    merged = label_manifests(merge_into_existing(desired, existing))
    stored = existing.to_dict()
    if any(merged.get(key) != stored.get(key) for key in ("metadata", "spec")):
        ctx.store.update(merged)


def _delete(ctx: Context, work: Resource) -> None:
    with contextlib.suppress(NotFound):  # already gone
        ctx.store.delete(WORK, work.name, work.namespace)


def resource_binding_controller() -> Controller:
    """The binding controller (karmada-controller-manager's `binding`)."""
    return BindingController(
        BINDING_CONTROLLER, RESOURCE_BINDING, (OVERRIDE_POLICY, CLUSTER_OVERRIDE_POLICY)
    ).controller()


def cluster_resource_binding_controller() -> Controller:
    """The cluster resource binding controller (also under `binding`): a cluster-scoped
    template takes ClusterOverridePolicies alone."""
    return BindingController(
        CLUSTER_RESOURCE_BINDING_CONTROLLER, CLUSTER_RESOURCE_BINDING, (CLUSTER_OVERRIDE_POLICY,)
    ).controller()
