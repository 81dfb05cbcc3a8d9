"""The resource detector (upstream's pkg/detector): resource templates matched to
(Cluster)PropagationPolicies, and the (Cluster)ResourceBinding of each claimed template.

A template of any kind the hub propagates (not Karmada's or OCM's own APIs, Events or
Leases; nothing in karmada-system, karmada-cluster, karmada-es-* or kube-*) is claimed by
the PropagationPolicy of its namespace that matches it best, else by the best
ClusterPropagationPolicy (semantics.resource_selectors says which is best). The claim is
written on the template as upstream does: the policy's permanent-id label and its
namespace/name annotations. The template then gets a binding named
`<name>-<lowercase kind>`, owned by the template (deleting the template collects it),
carrying the policy's claim, the template's reference, its replicas and replica
requirements, and the policy's placement and propagation settings. Once claimed, a
template keeps its policy, unless a policy that may preempt (spec.preemption Always,
feature gate PropagationPolicyPreemption) names it and outranks the claimer.

Policy changes flow to the templates they concern: templates a policy no longer selects
lose its claim (their binding stays, unclaimed, until the template goes), templates it
claims get its new settings, and unclaimed templates it now selects are claimed. A policy
being deleted releases every template it claimed before its finalizer goes. A template
whose own labels stop matching its policy stays claimed until the policy is next
reconciled, as upstream.

One controller, one queue, as upstream's three workers share one event recorder. Every
key is upstream's ClusterWideKey text (`apps/v1, kind=Deployment, default/nginx`); keys of
PropagationPolicies and ClusterPropagationPolicies reconcile the policy, and the templates
it concerns inline (upstream queues them; our reconcilers only requeue their own key).
The kinds watched are those given when the controller is made (see template_kinds), and
each kind a CustomResourceDefinition comes to serve, in its preferred version, from the
moment the detector sees the CRD serve it (upstream discovers new APIs every 30 s).

Events go on the template with upstream's reasons and messages. Upstream reports
GetReplicasSucceed each time it builds a binding; here only when the binding is written.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from fleetwarden.api import apiextensions
from fleetwarden.api.apiextensions import CustomResourceDefinition, served_kinds
from fleetwarden.api.core import Unstructured
from fleetwarden.api.errors import NotFound, StatusError
from fleetwarden.api.karmada import policy as policyv1
from fleetwarden.api.karmada import well_known as wk
from fleetwarden.api.karmada.policy import (
    ClusterPropagationPolicy,
    PropagationPolicy,
    ResourceSelector,
)
from fleetwarden.api.karmada.work import ClusterResourceBinding, ResourceBinding
from fleetwarden.api.kinds import KindInfo, split_api_version
from fleetwarden.api.meta import Resource
from fleetwarden.api.registry import REGISTRY
from fleetwarden.controllers.karmada.claim import (
    CLUSTER_PROPAGATION_POLICY,
    CPP,
    PP,
    PROPAGATION_POLICY,
    PolicyKind,
    claimed_by,
    unclaimed,
    with_claim,
    without_claims,
)
from fleetwarden.controllers.karmada.names import generate_binding_name, is_reserved_namespace
from fleetwarden.controllers.karmada.template_binding import (
    BindingError,
    Gates,
    desired_binding,
    merge_binding,
)
from fleetwarden.runtime.events import NORMAL, WARNING
from fleetwarden.runtime.informer import Informer, split_key
from fleetwarden.runtime.manager import DONE, REQUEUE, Context, Controller, Result, Watches
from fleetwarden.semantics.replicas import InterpretError
from fleetwarden.semantics.resource_selectors import (
    PolicyIndex,
    matches_any,
    selector_filing,
    selector_priority,
    template_filings,
)
from fleetwarden.store.interface import collection_of

NAME = "resource-detector"

RESOURCE_BINDING = REGISTRY.info("work.karmada.io/v1alpha2", "ResourceBinding")
CLUSTER_RESOURCE_BINDING = REGISTRY.info("work.karmada.io/v1alpha2", "ClusterResourceBinding")

# Event reasons (pkg/events).
APPLY_POLICY_SUCCEED = "ApplyPolicySucceed"
GET_REPLICAS_SUCCEED = "GetReplicasSucceed"
GET_REPLICAS_FAILED = "GetReplicasFailed"
APPLY_POLICY_FAILED = "ApplyPolicyFailed"
PREEMPT_POLICY_SUCCEED = "PreemptPolicySucceed"
PREEMPT_POLICY_FAILED = "PreemptPolicyFailed"

POLICY_PREEMPTION_GATE = "PropagationPolicyPreemption"
PRIORITY_CLASS = REGISTRY.info("scheduling.k8s.io/v1", "PriorityClass")
# Not registered kinds (override policies come later): only looked up, by their real scope.
OVERRIDE_POLICY = KindInfo(
    policyv1.GROUP, policyv1.VERSION, "OverridePolicy", "overridepolicies", True, Unstructured
)
CLUSTER_OVERRIDE_POLICY = KindInfo(
    policyv1.GROUP,
    policyv1.VERSION,
    "ClusterOverridePolicy",
    "clusteroverridepolicies",
    False,
    Unstructured,
)
ACTIVATION_LAZY = "Lazy"

# Upstream's default --skipped-propagating-apis list (util.NewSkippedResourceConfig), and
# in the same spirit the other dialect's control-plane groups.
_SKIPPED_GROUPS = frozenset({
    "cluster.karmada.io", "policy.karmada.io", "work.karmada.io", "config.karmada.io",
    "networking.karmada.io", "autoscaling.karmada.io", "remedy.karmada.io", "apps.karmada.io",
    "events.k8s.io",
})  # fmt: skip
_SKIPPED_GROUP_SUFFIX = ".open-cluster-management.io"
_SKIPPED_GROUP_VERSIONS = frozenset({"coordination.k8s.io/v1"})
_SKIPPED_KINDS = frozenset({("v1", "Event")})
# --skipped-propagating-namespaces' default.
_SKIPPED_NAMESPACES = re.compile(r"^kube-.*$")


def is_template_kind(info: KindInfo) -> bool:
    """Whether the detector propagates objects of the kind (gvrDisabled, negated)."""
    return info.stored and not (
        info.group in _SKIPPED_GROUPS
        or info.group.endswith(_SKIPPED_GROUP_SUFFIX)
        or info.api_version in _SKIPPED_GROUP_VERSIONS
        or (info.api_version, info.kind) in _SKIPPED_KINDS
    )


def template_kinds(extra: Iterable[KindInfo] = ()) -> list[KindInfo]:
    """Every registered kind the detector propagates, and the extra ones given (custom
    resources, say), one per collection. Upstream discovers new APIs every 30 s; ours are
    the kinds known when the controller is made."""
    kinds: dict[str, KindInfo] = {}
    for info in [*REGISTRY.kinds(), *extra]:
        if is_template_kind(info):
            kinds.setdefault(collection_of(info), info)
    return list(kinds.values())


def propagatable(obj: Resource) -> bool:
    """The event filter: nothing in Karmada's reserved or the skipped namespaces."""
    namespace = obj.metadata.namespace
    return not (is_reserved_namespace(namespace) or _SKIPPED_NAMESPACES.match(namespace))


def object_key(api_version: str, kind: str, namespace: str, name: str) -> str:
    """keys.ClusterWideKey's text: `apps/v1, kind=Deployment, default/nginx`."""
    return f"{api_version}, kind={kind}, {f'{namespace}/' if namespace else ''}{name}"


def resource_key(obj: Resource) -> str:
    return object_key(obj.api_version, obj.kind, obj.metadata.namespace, obj.metadata.name)


def parse_key(key: str) -> tuple[str, str, str, str]:
    """(apiVersion, kind, namespace, name) of a key."""
    api_version, _, rest = key.partition(", kind=")
    kind, _, namespaced_name = rest.partition(", ")
    namespace, name = split_key(namespaced_name)
    return api_version, kind, namespace, name


def _template_keys(obj: Resource) -> list[str]:
    return [resource_key(obj)] if propagatable(obj) else []


def _label_index(label: str) -> Any:
    def index(obj: Resource) -> list[str]:
        value = (obj.metadata.labels or {}).get(label)
        return [value] if value else []

    return index


# Bindings by the permanent id of the policy that claimed them (shareable by name).
BY_PROPAGATION_POLICY = wk.PROPAGATION_POLICY_PERMANENT_ID_LABEL
BY_CLUSTER_PROPAGATION_POLICY = wk.CLUSTER_PROPAGATION_POLICY_PERMANENT_ID_LABEL
by_propagation_policy = _label_index(BY_PROPAGATION_POLICY)
by_cluster_propagation_policy = _label_index(BY_CLUSTER_PROPAGATION_POLICY)

Policy = PropagationPolicy | ClusterPropagationPolicy
Binding = ResourceBinding | ClusterResourceBinding


_POLICY_KINDS = {(k.info.api_version, k.info.kind): k for k in (PP, CPP)}


def _fingerprint(obj: Resource) -> int:
    """The object as upstream's SpecificationChanged compares it: without status,
    resourceVersion and managedFields."""
    wire = obj.to_dict()
    wire.pop("status", None)
    meta = wire.get("metadata") or {}
    meta.pop("resourceVersion", None)
    meta.pop("managedFields", None)
    return hash(json.dumps(wire, sort_keys=True))


@dataclass
class ResourceDetector:
    kinds: Sequence[KindInfo]
    # (group, kind) -> the kind watched: any version of it finds its informer.
    watched: dict[tuple[str, str], KindInfo] = field(init=False)
    # Template key -> fingerprint of the template as last propagated: upstream's update
    # handler drops events that change nothing but status, and so does this one.
    observed: dict[str, int] = field(default_factory=dict)
    # Template key -> the resourceVersion it had, and its policy's uid and generation, when
    # its binding was last brought up to date: a policy's reconcile passes over a template
    # applied at the same both (each template is looked at when it is listed anyway).
    applied: dict[str, tuple[str | None, str | None, int | None]] = field(default_factory=dict)
    # (policy kind, namespace) -> how many events its policies had, and their index as of
    # a count: matching a template reads the index, rebuilt once the count moved on.
    policy_events: dict[tuple[str, str], int] = field(default_factory=dict)
    policy_indexes: dict[tuple[str, str], tuple[int, PolicyIndex[Any]]] = field(
        default_factory=dict
    )

    def __post_init__(self) -> None:
        self.watched = {(info.group, info.kind): info for info in self.kinds}
        self._watching = threading.Lock()  # kinds are added by concurrent reconciles

    def controller(self) -> Controller:
        watches = [Watches(info, _template_keys) for info in self.kinds]
        watches += [
            Watches(PROPAGATION_POLICY, self.policy_keys),
            Watches(CLUSTER_PROPAGATION_POLICY, self.policy_keys),
        ]
        return Controller(
            name=NAME,
            watches=watches,
            reconcile=self.reconcile,
            workers=5,  # --concurrent-resource-template-syncs
            indexers={
                **{info: {UNCLAIMED: unclaimed_index} for info in self.kinds},
                RESOURCE_BINDING: {
                    BY_PROPAGATION_POLICY: by_propagation_policy,
                    BY_CLUSTER_PROPAGATION_POLICY: by_cluster_propagation_policy,
                },
                CLUSTER_RESOURCE_BINDING: {
                    BY_CLUSTER_PROPAGATION_POLICY: by_cluster_propagation_policy
                },
            },
        )

    def policy_keys(self, obj: Resource) -> list[str]:
        """A policy's own key; and its kind and namespace have another event to count."""
        scope = (obj.kind, obj.metadata.namespace)
        self.policy_events[scope] = self.policy_events.get(scope, 0) + 1
        return [resource_key(obj)]

    def reconcile(self, key: str, ctx: Context) -> Result:
        api_version, kind, namespace, name = parse_key(key)
        if (api_version, kind) == (apiextensions.KIND.api_version, apiextensions.KIND.kind):
            self.watch_served_kind(ctx.cache.informer(apiextensions.KIND).get(name), ctx)
        run = _Run(self, ctx)
        policy_kind = _POLICY_KINDS.get((api_version, kind))
        if policy_kind is not None:
            return run.reconcile_policy(policy_kind, namespace, name)
        template = run.template(api_version, kind, namespace, name)
        if template is None:
            self.observed.pop(key, None)
            self.applied.pop(key, None)
            return DONE
        if self.observed.get(key) == _fingerprint(template):
            return DONE
        return run.sync(template)

    def watch_served_kind(self, crd: Resource | None, ctx: Context) -> None:
        """Watch the kind the CRD serves, in its preferred version, if it is one to
        propagate and not watched yet: its objects are enqueued as they are now."""
        if not isinstance(crd, CustomResourceDefinition):
            return
        info = next(iter(served_kinds(crd)), None)
        if info is None or not is_template_kind(info):
            return
        with self._watching:
            if (info.group, info.kind) in self.watched:
                return
            # Indexed before readers find it, read before its objects' keys come.
            ctx.cache.informer(info).add_indexers({UNCLAIMED: unclaimed_index})
            self.watched[(info.group, info.kind)] = info
            ctx.watch(Watches(info, _template_keys))


def detector_controllers(extra_kinds: Iterable[KindInfo] = ()) -> list[Controller]:
    """The resource detector, watching template_kinds(extra_kinds)."""
    return [ResourceDetector(template_kinds(extra_kinds)).controller()]


def _live(policies: Iterable[Resource]) -> Iterator[Any]:
    return (p for p in policies if p.metadata.deletion_timestamp is None)


def _applied(template: Resource, policy: Policy) -> tuple[str | None, str | None, int | None]:
    meta = policy.metadata
    return template.metadata.resource_version, meta.uid, meta.generation


def _failed(results: Iterable[Result | bool]) -> bool:
    return any(r is True or (isinstance(r, Result) and r != DONE) for r in list(results))


class _Run:
    """One reconcile's view: the detector, the context, and what they are used for."""

    def __init__(self, detector: ResourceDetector, ctx: Context) -> None:
        self.detector, self.ctx = detector, ctx

    # --- reading ---------------------------------------------------------------------------

    def informer(self, api_version: str, kind: str) -> Informer | None:
        """The informer of a watched template kind; None for any other kind."""
        info = self.detector.watched.get((split_api_version(api_version)[0], kind))
        return self.ctx.cache.informer(info) if info is not None else None

    def template(self, api_version: str, kind: str, namespace: str, name: str) -> Resource | None:
        informer = self.informer(api_version, kind)
        return informer.get(name, namespace) if informer is not None else None

    def policy(self, kind: PolicyKind, namespace: str, name: str) -> Any:
        return self.ctx.cache.informer(kind.info).get(name, namespace)

    def gate(self, name: str) -> bool:
        return self.ctx.settings.gate(name)

    # --- a resource template (propagateResource) ---------------------------------------------

    def sync(self, template: Resource, *, policy_change: bool = False) -> Result:
        """Claim the template for its policy and bring its binding up to date."""
        if (template.metadata.labels or {}).get(wk.RESOURCE_TEMPLATE_CLAIMED_BY_LABEL):
            return self.done(template)
        for kind in (PP, CPP):
            claimer = kind.claimer(template.metadata)
            if claimer is not None:
                return self.sync_claimed(template, kind, claimer, policy_change)
        matched = self.matched_policy(template)
        if matched is None:
            return self.done(template)
        kind, policy = matched
        if not self.dependents_present(kind, policy):
            return REQUEUE
        return self.apply(template, kind, policy, policy_change)

    def sync_claimed(
        self, template: Resource, kind: PolicyKind, claimer: tuple[str, str], policy_change: bool
    ) -> Result:
        """getAndApplyPolicy: the claimed template follows its policy."""
        policy = self.policy(kind, *claimer)
        if policy is None:
            # The policy went before the claim was released: release it now.
            claimed_id = (template.metadata.labels or {})[kind.id_label]
            return REQUEUE if self.unclaim(template, kind, claimed_id) else DONE
        if policy.metadata.deletion_timestamp is not None:
            return DONE  # its deletion releases the template
        if not matches_any(template, policy.spec.resource_selectors):
            return self.done(template)  # released when the policy is next reconciled
        if not self.dependents_present(kind, policy):
            return REQUEUE
        return self.apply(template, kind, policy, policy_change)

    def matched_policy(self, template: Resource) -> tuple[PolicyKind, Any] | None:
        """The best PropagationPolicy of the template's namespace, else the best
        ClusterPropagationPolicy (LookForMatchedPolicy, LookForMatchedClusterPolicy)."""
        namespace = template.metadata.namespace
        for kind in (PP, CPP) if namespace else (CPP,):
            policy = self.policy_index(kind, namespace if kind is PP else "").best(template)
            if policy is not None:
                return kind, policy
        return None

    def policy_index(self, kind: PolicyKind, namespace: str) -> PolicyIndex[Any]:
        """The live policies of a kind (and namespace), indexed; rebuilt after an event.
        The count is read before the policies are listed: an event that comes in between
        makes the next reader rebuild."""
        scope = (kind.info.kind, namespace)
        count = self.detector.policy_events.get(scope, 0)
        cached = self.detector.policy_indexes.get(scope)
        if cached is not None and cached[0] == count:
            return cached[1]
        policies = _live(self.ctx.cache.informer(kind.info).list(namespace or None))
        index = PolicyIndex(list(policies))
        self.detector.policy_indexes[scope] = (count, index)
        return index

    def dependents_present(self, kind: PolicyKind, policy: Policy) -> bool:
        """IsDependent(Cluster)OverridesPresent: every override policy it names exists."""
        info = OVERRIDE_POLICY if kind is PP else CLUSTER_OVERRIDE_POLICY
        for name in policy.spec.dependent_overrides or []:
            try:
                self.ctx.store.get(info, name, policy.metadata.namespace)
            except NotFound:
                return False
        return True

    def done(self, template: Resource) -> Result:
        self.detector.observed[resource_key(template)] = _fingerprint(template)
        return DONE

    # --- applying a policy (ApplyPolicy, ApplyClusterPolicy) ----------------------------------

    def apply(
        self, template: Resource, kind: PolicyKind, policy: Policy, policy_change: bool
    ) -> Result:
        try:
            template = self.claim(template, kind, policy)
            # A lazily activated policy reaches its bindings only through template changes.
            if policy_change and policy.spec.activation_preference == ACTIVATION_LAZY:
                return self.done(template)
            changed = self.bind(template, kind, policy)
        except (StatusError, InterpretError, BindingError) as err:
            message = f"Apply {kind.describe(policy)} failed: {err}"
            self.ctx.recorder.event(template, WARNING, APPLY_POLICY_FAILED, message)
            return REQUEUE
        self.detector.applied[resource_key(template)] = _applied(template, policy)
        if changed:
            message = f"Apply {kind.describe(policy)} succeed"
            self.ctx.recorder.event(template, NORMAL, APPLY_POLICY_SUCCEED, message)
        return self.done(template)

    def claim(self, template: Resource, kind: PolicyKind, policy: Policy) -> Resource:
        """Claim(Cluster)PolicyForObject: the policy's claim on the template, which for a
        PropagationPolicy replaces a ClusterPropagationPolicy's."""
        labels = template.metadata.labels or {}
        replaces = [CPP] if kind is PP else []
        if labels.get(kind.id_label) == kind.policy_id(policy) and not any(
            k.id_label in labels for k in replaces
        ):
            return template
        claimed = with_claim(without_claims(template.to_dict(), replaces), kind.claim(policy))
        return self.written(self.ctx.store.update(claimed))

    def written(self, stored: dict[str, Any]) -> Resource:
        """The template as just written: the cache's copy once it has caught up (always so
        in virtual time), else decoded here."""
        meta = stored["metadata"]
        informer = self.informer(stored["apiVersion"], stored["kind"])
        cached = informer.get(meta["name"], meta.get("namespace", "")) if informer else None
        if cached is not None and cached.metadata.resource_version == meta["resourceVersion"]:
            return cached
        return REGISTRY.decode(stored)

    def bind(self, template: Resource, kind: PolicyKind, policy: Policy) -> bool:
        """Create or update the template's binding; whether anything was written."""
        desired, interpreted = self.desired_binding(template, kind, policy)
        info = RESOURCE_BINDING if template.metadata.namespace else CLUSTER_RESOURCE_BINDING
        meta = desired["metadata"]
        namespace = meta.get("namespace", "")
        existing = self.ctx.cache.informer(info).get(meta["name"], namespace)
        if existing is None:
            # What the binding's mutating webhook adds on create.
            binding_id = wk.permanent_id(info.kind, namespace, meta["name"])
            meta["labels"][_binding_id_label(info)] = binding_id
            self.ctx.store.create(desired)
        else:
            current = existing.to_dict()
            drop = CPP.claim_keys() if kind is PP else ([], [])
            uid = template.metadata.uid or ""
            merged = merge_binding(current, desired, uid, policy.spec.suspension, drop)
            if merged == current:
                return False
            self.ctx.store.update(merged)
        if interpreted:
            message = "Get replicas of resource template successfully."
            self.ctx.recorder.event(template, NORMAL, GET_REPLICAS_SUCCEED, message)
        return True

    def desired_binding(
        self, template: Resource, kind: PolicyKind, policy: Policy
    ) -> tuple[dict[str, Any], bool]:
        gates = Gates(
            workload_affinity=self.gate("WorkloadAffinity"),
            priority_based_scheduling=self.gate("PriorityBasedScheduling"),
            resource_quota_estimate=self.gate("ResourceQuotaEstimate"),
        )
        claim = kind.claim(policy)
        try:
            return desired_binding(template, claim, policy.spec, gates, self.kube_priority)
        except InterpretError as err:
            self.ctx.recorder.event(template, WARNING, GET_REPLICAS_FAILED, str(err))
            raise

    def kube_priority(self, name: str) -> int:
        """The value of a scheduling.k8s.io PriorityClass (GetPriorityClassByName)."""
        try:
            priority_class = self.ctx.store.get(PRIORITY_CLASS, name)
        except NotFound as err:
            raise BindingError(err.message) from None
        value = priority_class.get("value")
        return value if isinstance(value, int) else 0

    # --- releasing a claim -----------------------------------------------------------------

    def unclaim(self, template: Resource, kind: PolicyKind, policy_id: str) -> bool:
        """handleResourceTemplateAndBindingCleanup: the claim of the policy with that id off
        the binding first (so the scheduler stops following it), then off the template.
        Returns whether it failed."""
        info = RESOURCE_BINDING if template.metadata.namespace else CLUSTER_RESOURCE_BINDING
        name = generate_binding_name(template.kind, template.metadata.name)
        binding = self.ctx.cache.informer(info).get(name, template.metadata.namespace)
        try:
            for obj in (binding, template):
                if obj is not None and (obj.metadata.labels or {}).get(kind.id_label) == policy_id:
                    self.ctx.store.update(without_claims(obj.to_dict(), [kind]))
        except StatusError:
            return True
        return False

    # --- a policy (Reconcile(Cluster)PropagationPolicy) -----------------------------------------

    def reconcile_policy(self, kind: PolicyKind, namespace: str, name: str) -> Result:
        policy = self.policy(kind, namespace, name)
        if policy is None:
            return DONE
        if policy.metadata.deletion_timestamp is not None:
            return self.release_all(kind, policy)
        failed = _failed(self.release_unmatched(kind, policy))
        failed |= _failed(
            self.sync(t, policy_change=True)
            for t in self.derived_templates(kind, policy)
            if self.detector.applied.get(resource_key(t)) != _applied(t, policy)
        )
        waiting = self.waiting_templates(kind, policy)
        if waiting and not self.dependents_present(kind, policy):
            return REQUEUE
        failed |= _failed(self.sync(t, policy_change=True) for t in waiting)
        if self.gate(POLICY_PREEMPTION_GATE):
            failed |= self.preempt(kind, policy)
            failed |= _failed(self.preempt(kind, p) for p in self.outranking(kind, policy))
        return REQUEUE if failed else DONE

    def release_all(self, kind: PolicyKind, policy: Policy) -> Result:
        """handlePolicyDeletion: release every template the policy claimed, then let it go.
        The bindings stay until their templates go."""
        policy_id = kind.policy_id(policy)
        claimed = [
            template
            for informer, namespace in self.selected_kinds(kind, policy)
            for template in informer.list(namespace)
            if (template.metadata.labels or {}).get(kind.id_label) == policy_id
        ]
        if _failed(self.unclaim(t, kind, policy_id) for t in claimed):
            return REQUEUE
        if kind.finalizer in (policy.metadata.finalizers or []):
            released = policy.to_dict()
            finalizers = [f for f in released["metadata"]["finalizers"] if f != kind.finalizer]
            released["metadata"]["finalizers"] = finalizers
            self.ctx.store.update(released)
        return DONE

    def selected_kinds(self, kind: PolicyKind, policy: Policy) -> list[tuple[Informer, str | None]]:
        """ExtractUniqueNamespacedSelectors: each (watched kind, namespace) selected once."""
        seen: dict[tuple[str, str | None], Informer] = {}
        for selector in policy.spec.resource_selectors:
            informer = self.informer(selector.api_version, selector.kind)
            if informer is not None:
                namespace = policy.metadata.namespace if kind is PP else selector.namespace or None
                seen.setdefault((collection_of(informer.info), namespace), informer)
        return [(informer, namespace) for (_, namespace), informer in seen.items()]

    def bindings_of(self, kind: PolicyKind, policy: Policy) -> list[Binding]:
        """The bindings carrying the policy's claim (list(C)PPDerived(C)RBs)."""
        policy_id = kind.policy_id(policy)
        infos = [RESOURCE_BINDING] if kind is PP else [RESOURCE_BINDING, CLUSTER_RESOURCE_BINDING]
        return [
            binding
            for info in infos
            for binding in self.ctx.cache.informer(info).by_index(kind.id_label, policy_id)
            if isinstance(binding, ResourceBinding | ClusterResourceBinding)
            and (kind is CPP or binding.metadata.namespace == policy.metadata.namespace)
        ]

    def templates_of(self, bindings: Iterable[Binding]) -> Iterator[Resource]:
        for binding in bindings:
            ref = binding.spec.resource
            template = self.template(ref.api_version, ref.kind, ref.namespace or "", ref.name)
            if template is not None:
                yield template

    def release_unmatched(self, kind: PolicyKind, policy: Policy) -> Iterator[bool]:
        """clean(C)PPUnmatched(C)RBs: release the templates the policy no longer selects."""
        for template in list(self.templates_of(self.bindings_of(kind, policy))):
            if not matches_any(template, policy.spec.resource_selectors):
                yield self.unclaim(template, kind, kind.policy_id(policy))

    def derived_templates(self, kind: PolicyKind, policy: Policy) -> list[Resource]:
        return list(self.templates_of(self.bindings_of(kind, policy)))

    def waiting_templates(self, kind: PolicyKind, policy: Policy) -> list[Resource]:
        """Templates the policy selects that no policy has claimed (upstream's waiting list)."""
        waiting: dict[str, Resource] = {}
        for selector in policy.spec.resource_selectors:
            informer = self.informer(selector.api_version, selector.kind)
            if informer is None:
                continue
            namespace = policy.metadata.namespace if kind is PP else selector.namespace
            filed = _unclaimed_key(namespace or _ANY_NAMESPACE, selector_filing(selector))
            for template in informer.by_index(UNCLAIMED, filed):
                if selector_priority(template, selector):
                    waiting.setdefault(resource_key(template), template)
        return list(waiting.values())

    def named_template(self, selector: ResourceSelector, namespace: str | None) -> Resource | None:
        """The one template a named selector selects (FetchResourceTemplate)."""
        informer = self.informer(selector.api_version, selector.kind)
        found = informer.get(selector.name or "", namespace or "") if informer else None
        return found if found is not None and propagatable(found) else None

    # --- preemption (pkg/detector/preemption.go) -------------------------------------------

    def preempt(self, kind: PolicyKind, policy: Policy) -> bool:
        """Take the templates the policy names from the policies it outranks: a
        PropagationPolicy from lower-priority ones and from any ClusterPropagationPolicy,
        a ClusterPropagationPolicy from lower-priority ones. Returns whether it failed."""
        if policy.spec.preemption != policyv1.PREEMPT_ALWAYS:
            return False
        failed = False
        for selector in policy.spec.resource_selectors:
            if not selector.name:
                continue  # upstream fetches the one template a selector names
            namespace = policy.metadata.namespace if kind is PP else selector.namespace
            template = self.named_template(selector, namespace)
            if template is not None and template.metadata.deletion_timestamp is None:
                failed |= self.take_over(template, kind, policy)
        return failed

    def take_over(self, template: Resource, kind: PolicyKind, policy: Policy) -> bool:
        for claimer_kind in (PP, CPP) if kind is PP else (CPP,):
            claimer = claimed_by(template.metadata, claimer_kind)
            if claimer is None or not self.outranks(kind, policy, claimer_kind, claimer):
                continue
            subject = f"{kind.title}({kind.ref(policy.metadata.namespace, policy.metadata.name)})"
            preempted = f"{claimer_kind.title.lower()}({claimer_kind.ref(*claimer)})"
            try:
                template = self.claim(template, kind, policy)
            except StatusError as err:
                message = f"{subject} failed to preempt {preempted}: {err}"
                self.ctx.recorder.event(template, WARNING, PREEMPT_POLICY_FAILED, message)
                return True
            message = f"{subject} preempted {preempted} successfully"
            self.ctx.recorder.event(template, NORMAL, PREEMPT_POLICY_SUCCEED, message)
        return False

    def outranks(
        self, kind: PolicyKind, policy: Policy, claimer_kind: PolicyKind, claimer: tuple[str, str]
    ) -> bool:
        """A PropagationPolicy outranks any ClusterPropagationPolicy; within one kind the
        higher explicit priority wins, and a policy never preempts itself."""
        if claimer_kind is not kind:
            return True
        if claimer == (policy.metadata.namespace if kind is PP else "", policy.metadata.name):
            return False
        claimed_by = self.policy(kind, *claimer)
        return claimed_by is not None and (policy.spec.priority or 0) > (
            claimed_by.spec.priority or 0
        )

    def outranking(self, kind: PolicyKind, policy: Policy) -> list[Policy]:
        """HandleDeprioritized(Cluster)PropagationPolicy: the preempting policies that
        outrank this one, highest first, in case it lost the priority that kept them off.
        Upstream asks only on a priority decrease; asking each time changes nothing else."""
        namespace = policy.metadata.namespace if kind is PP else None
        priority = policy.spec.priority or 0
        others = [
            p
            for p in _live(self.ctx.cache.informer(kind.info).list(namespace))
            if p.metadata.name != policy.metadata.name
            and p.spec.preemption == policyv1.PREEMPT_ALWAYS
            and p.spec.priority is not None
            and p.spec.priority > priority
        ]
        return sorted(others, key=lambda p: (-p.spec.priority, p.metadata.name))


def _binding_id_label(info: KindInfo) -> str:
    if info is RESOURCE_BINDING:
        return wk.RESOURCE_BINDING_PERMANENT_ID_LABEL
    return wk.CLUSTER_RESOURCE_BINDING_PERMANENT_ID_LABEL


# Propagatable templates no policy has claimed, filed (semantics.resource_selectors) by
# namespace and for all namespaces: where a policy finds the templates waiting for it.
UNCLAIMED = "detector/unclaimed"
_ANY_NAMESPACE = "*"


def unclaimed_index(obj: Resource) -> list[str]:
    if not propagatable(obj) or not unclaimed(obj):
        return []
    scopes = (obj.metadata.namespace, _ANY_NAMESPACE)
    return [_unclaimed_key(scope, key) for scope in scopes for key in template_filings(obj)]


def _unclaimed_key(scope: str, filing: tuple[str, ...]) -> str:
    return "\x00".join((scope, *filing))
