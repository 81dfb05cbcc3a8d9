"""PropagationPolicy and ClusterPropagationPolicy: their CRD schema, karmada-webhook's
mutating and validating handlers, and the placement and failover rules bindings share.

Upstream: charts/karmada/_crds/bases/policy, pkg/webhook/{propagationpolicy,
clusterpropagationpolicy}, pkg/util/helper/policy.go, pkg/util/validation/validation.go.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from fleetwarden.admission.chain import Mutate, Operation, Plugin, Request, Validate
from fleetwarden.admission.golang import go_quote, wire
from fleetwarden.admission.karmada.webhook import (
    CREATE_UPDATE,
    permanent_id,
    set_label,
    through_webhook,
)
from fleetwarden.admission.schema import (
    SELECTOR,
    Array,
    Integer,
    Object,
    String,
    validation,
)
from fleetwarden.api.core import NO_EXECUTE, OP_EQUAL, OP_EXISTS, Toleration
from fleetwarden.api.errors import ErrorList, Path
from fleetwarden.api.karmada import cluster as clusterv1
from fleetwarden.api.karmada import policy as policyv1
from fleetwarden.semantics.validation import validate_qualified_name

# --- CRD schema -------------------------------------------------------------------------------

PURGE_MODES = (
    policyv1.PURGE_MODE_DIRECTLY,
    policyv1.PURGE_MODE_GRACEFULLY,
    policyv1.PURGE_MODE_NEVER,
)
CONFLICT_RESOLUTION = String(
    enum=(policyv1.CONFLICT_ABORT, policyv1.CONFLICT_OVERWRITE), default=policyv1.CONFLICT_ABORT
)

_CLUSTER_AFFINITY_PROPERTIES = {"fieldSelector": SELECTOR, "labelSelector": SELECTOR}
CLUSTER_AFFINITY = Object(properties=_CLUSTER_AFFINITY_PROPERTIES)
_AFFINITY_NAME = String(min_length=1, max_length=32)
_OVERFLOW_AFFINITY = Object(
    properties={"affinityName": _AFFINITY_NAME, **_CLUSTER_AFFINITY_PROPERTIES},
    required=("affinityName",),
)
_AFFINITY_TERM = Object(
    properties={
        "affinityName": _AFFINITY_NAME,
        **_CLUSTER_AFFINITY_PROPERTIES,
        "overflowAffinities": Array(items=_OVERFLOW_AFFINITY),
    },
    required=("affinityName",),
)
_WORKLOAD_AFFINITY_TERM = Object(required=("groupByLabelKey",))

PLACEMENT = Object(
    properties={
        "clusterAffinities": Array(items=_AFFINITY_TERM),
        "clusterAffinity": CLUSTER_AFFINITY,
        "replicaScheduling": Object(
            properties={
                "replicaDivisionPreference": String(
                    enum=(policyv1.REPLICA_DIVISION_AGGREGATED, policyv1.REPLICA_DIVISION_WEIGHTED)
                ),
                "replicaSchedulingType": String(
                    enum=(
                        policyv1.REPLICA_SCHEDULING_DUPLICATED,
                        policyv1.REPLICA_SCHEDULING_DIVIDED,
                    ),
                    default=policyv1.REPLICA_SCHEDULING_DIVIDED,
                ),
                "weightPreference": Object(
                    properties={
                        "dynamicWeight": String(enum=("AvailableReplicas",)),
                        "staticWeightList": Array(
                            items=Object(
                                properties={
                                    "targetCluster": CLUSTER_AFFINITY,
                                    "weight": Integer(minimum=1),
                                },
                                required=("targetCluster", "weight"),
                            )
                        ),
                    }
                ),
            }
        ),
        "spreadConstraints": Array(
            items=Object(
                properties={
                    "spreadByField": String(
                        enum=(
                            policyv1.SPREAD_BY_FIELD_CLUSTER,
                            policyv1.SPREAD_BY_FIELD_REGION,
                            policyv1.SPREAD_BY_FIELD_ZONE,
                            policyv1.SPREAD_BY_FIELD_PROVIDER,
                        )
                    )
                }
            )
        ),
        "workloadAffinity": Object(
            properties={
                "affinity": _WORKLOAD_AFFINITY_TERM,
                "antiAffinity": _WORKLOAD_AFFINITY_TERM,
            }
        ),
    }
)

_STATE_PRESERVATION = Object(
    properties={"rules": Array(items=Object(required=("aliasLabelName", "jsonPath")))},
    required=("rules",),
)
FAILOVER = Object(
    properties={
        "application": Object(
            properties={
                "decisionConditions": Object(
                    properties={"tolerationSeconds": Integer(default=300)}
                ),
                "purgeMode": String(enum=PURGE_MODES, default=policyv1.PURGE_MODE_GRACEFULLY),
                "statePreservation": _STATE_PRESERVATION,
            },
            required=("decisionConditions",),
        ),
        "cluster": Object(
            properties={
                "purgeMode": String(
                    enum=(policyv1.PURGE_MODE_DIRECTLY, policyv1.PURGE_MODE_GRACEFULLY),
                    default=policyv1.PURGE_MODE_GRACEFULLY,
                ),
                "statePreservation": _STATE_PRESERVATION,
            }
        ),
    }
)

_SCHEMA = Object(
    properties={
        "spec": Object(
            properties={
                "activationPreference": String(enum=("Lazy",)),
                "conflictResolution": CONFLICT_RESOLUTION,
                "failover": FAILOVER,
                "placement": PLACEMENT,
                "preemption": String(
                    enum=(policyv1.PREEMPT_ALWAYS, policyv1.PREEMPT_NEVER),
                    default=policyv1.PREEMPT_NEVER,
                ),
                "priority": Integer(default=0),
                "resourceSelectors": Array(
                    min_items=1,
                    items=Object(
                        properties={"labelSelector": SELECTOR}, required=("apiVersion", "kind")
                    ),
                ),
                "schedulePriority": Object(
                    properties={"priorityClassSource": String(enum=("KubePriorityClass",))},
                    required=("priorityClassName", "priorityClassSource"),
                ),
                "schedulerName": String(default="default-scheduler"),
            },
            required=("resourceSelectors",),
        )
    },
    required=("spec",),
)

# --- the mutating webhook ---------------------------------------------------------------------

Policy = policyv1.PropagationPolicy | policyv1.ClusterPropagationPolicy

_SERVICE_IMPORT = ("multicluster.x-k8s.io/v1alpha1", "ServiceImport")
_DEFAULT_GRACE_PERIOD_SECONDS = 600


@dataclass(frozen=True)
class _PolicyKind:
    model: type[Policy]
    permanent_id_label: str
    finalizer: str


_PROPAGATION_POLICY = _PolicyKind(
    policyv1.PropagationPolicy,
    policyv1.PROPAGATION_POLICY_PERMANENT_ID_LABEL,
    "karmada.io/propagation-policy-controller",
)
_CLUSTER_PROPAGATION_POLICY = _PolicyKind(
    policyv1.ClusterPropagationPolicy,
    policyv1.CLUSTER_PROPAGATION_POLICY_PERMANENT_ID_LABEL,
    "karmada.io/cluster-propagation-policy-controller",
)


def _policy_webhook_mutate(kind: _PolicyKind) -> Mutate:
    def mutate(request: Request) -> None:
        policy = request.of(kind.model)
        spec, placement = policy.spec, policy.spec.placement
        if request.info.namespaced:
            for selector in spec.resource_selectors:
                selector.namespace = selector.namespace or policy.metadata.namespace
        _default_spread_constraints(placement.spread_constraints or [])
        _add_default_tolerations(placement, request)
        if any((s.api_version, s.kind) == _SERVICE_IMPORT for s in spec.resource_selectors):
            spec.propagate_deps = True
        if placement.replica_scheduling_type() == policyv1.REPLICA_SCHEDULING_DIVIDED:
            scheduling = placement.replica_scheduling
            assert scheduling is not None
            scheduling.replica_division_preference = (
                scheduling.replica_division_preference or policyv1.REPLICA_DIVISION_WEIGHTED
            )
        application = spec.failover.application if spec.failover else None
        if (
            application is not None
            and application.purge_mode == policyv1.PURGE_MODE_GRACEFULLY
            and application.grace_period_seconds is None
        ):
            application.grace_period_seconds = _DEFAULT_GRACE_PERIOD_SECONDS
        if request.operation is Operation.CREATE:
            _stamp_new_policy(policy, kind)

    return mutate


def _stamp_new_policy(policy: Policy, kind: _PolicyKind) -> None:
    set_label(policy.metadata, kind.permanent_id_label, permanent_id(policy.kind, policy.metadata))
    finalizers = policy.metadata.finalizers or []
    if kind.finalizer not in finalizers:
        policy.metadata.finalizers = [*finalizers, kind.finalizer]


def _default_spread_constraints(constraints: list[policyv1.SpreadConstraint]) -> None:
    """SetDefaultSpreadConstraints: spread by cluster unless told otherwise, at least 1 group."""
    for constraint in constraints:
        if not constraint.spread_by_label and not constraint.spread_by_field:
            constraint.spread_by_field = policyv1.SPREAD_BY_FIELD_CLUSTER
        if not constraint.min_groups:
            constraint.min_groups = 1


def _add_default_tolerations(placement: policyv1.Placement, request: Request) -> None:
    """Karmada <= v1.13 (--default-not-ready-toleration-seconds and
    --default-unreachable-toleration-seconds): tolerate the NoExecute not-ready and unreachable
    taints for a while, unless the policy already has that very toleration."""
    config = request.config
    for key, seconds in (
        (clusterv1.TAINT_CLUSTER_NOT_READY, config.default_not_ready_toleration_seconds),
        (clusterv1.TAINT_CLUSTER_UNREACHABLE, config.default_unreachable_toleration_seconds),
    ):
        if seconds is None:
            continue
        default = Toleration(
            key=key, operator=OP_EXISTS, effect=NO_EXECUTE, toleration_seconds=seconds
        )
        tolerations = placement.cluster_tolerations or []
        if not any(_same_toleration(t, default) for t in tolerations):
            placement.cluster_tolerations = [*tolerations, default]


def _same_toleration(a: Toleration, b: Toleration) -> bool:
    """Toleration.MatchToleration: same key, operator, value and effect, whatever the seconds."""
    return all(
        (getattr(a, f) or "") == (getattr(b, f) or "")
        for f in ("key", "operator", "value", "effect")
    )


# --- the validating webhook -------------------------------------------------------------------


def _policy_webhook_validate(kind: _PolicyKind) -> Validate:
    """The first of its checks to refuse. The update and label checks deny with bare messages
    upstream; here they name the field they are about."""

    def validate(request: Request) -> ErrorList:
        policy = request.of(kind.model)
        namespace = policy.metadata.namespace if request.info.namespaced else ""
        return (
            _policy_update_errors(policy, request.old, kind.permanent_id_label)
            or _permanent_id_errors(policy, kind.permanent_id_label)
            or _validate_propagation_spec(policy.spec, namespace)
        )

    return validate


def _policy_update_errors(policy: Policy, old: Any, label: str) -> ErrorList:
    if old is None:
        return []
    if policy.spec.scheduler_name != old.spec.scheduler_name:
        path = Path("spec").child("schedulerName")
        return [path.invalid(policy.spec.scheduler_name, "the schedulerName should not be updated")]
    value = (policy.metadata.labels or {}).get(label)
    if value != (old.metadata.labels or {}).get(label):
        message = f"label {label} is immutable, it can only be set by the system during creation"
        return [Path("metadata").child("labels").key(label).invalid(value, message)]
    return []


def _permanent_id_errors(policy: Policy, label: str) -> ErrorList:
    if label in (policy.metadata.labels or {}):
        return []
    message = (
        f"label {label} is required, it should be set by the mutating admission webhook during "
        "creation"
    )
    return [Path("metadata").child("labels").key(label).required(message)]


def _validate_propagation_spec(spec: policyv1.PropagationSpec, namespace: str) -> ErrorList:
    """ValidatePropagationSpec; `namespace` is empty for a ClusterPropagationPolicy."""
    path = Path("spec")
    errors = _validate_placement(spec.placement, path.child("placement"))
    application = spec.failover.application if spec.failover is not None else None
    if application is not None and not spec.propagate_deps:
        errors.append(
            path.child("propagateDeps").invalid(
                False, "application failover is set, propagateDeps must be true"
            )
        )
    errors += _validate_failover(spec.failover, path.child("failover"))
    errors += _validate_resource_selectors(spec, namespace, path.child("resourceSelectors"))
    errors += _validate_suspension(spec.suspension, path.child("suspension"))
    return errors


def foreign_selector_errors(
    selectors: list[policyv1.ResourceSelector], namespace: str, path: Path
) -> ErrorList:
    """validateResourceSelectors: a namespaced policy selects in its own namespace only
    (`namespace` is empty for a cluster-scoped one)."""
    foreign = "namespace of resource selector must be the same as the namespace of the policy"
    return [
        path.index(i).child("namespace").invalid(selector.namespace, foreign)
        for i, selector in enumerate(selectors if namespace else [])
        if selector.namespace != namespace
    ]


def _validate_resource_selectors(
    spec: policyv1.PropagationSpec, namespace: str, path: Path
) -> ErrorList:
    """Its own namespace; and preemption needs names, lest a policy take over templates it
    never meant to."""
    unnamed = (
        "name cannot be empty if preemption is Always, the empty name may cause unexpected "
        "resources preemption"
    )
    errors = foreign_selector_errors(spec.resource_selectors, namespace, path)
    preempting = spec.preemption == policyv1.PREEMPT_ALWAYS
    for i, selector in enumerate(spec.resource_selectors if preempting else []):
        if not selector.name:
            errors.append(path.index(i).child("name").invalid("", unnamed))
    return errors


def _validate_suspension(suspension: policyv1.Suspension | None, path: Path) -> ErrorList:
    if (
        suspension is None
        or not suspension.dispatching
        or suspension.dispatching_on_clusters is None
        or not suspension.dispatching_on_clusters.cluster_names
    ):
        return []
    # Upstream names the field twice.
    return [
        path.child("suspension").invalid(
            wire(suspension),
            "suspension dispatching cannot co-exist with dispatchingOnClusters.clusterNames",
        )
    ]


def _validate_placement(placement: policyv1.Placement, path: Path) -> ErrorList:
    """ValidatePlacement."""
    errors: ErrorList = []
    if placement.cluster_affinity is not None and placement.cluster_affinities is not None:
        errors.append(
            path.invalid(wire(placement), "clusterAffinities cannot co-exist with clusterAffinity")
        )
    errors += _overflow_placement_errors(placement, path.child("clusterAffinities"))
    errors += validate_cluster_affinity(placement.cluster_affinity, path.child("clusterAffinity"))
    errors += _validate_cluster_affinities(
        placement.cluster_affinities or [], path.child("clusterAffinities")
    )
    errors += _validate_spread_constraints(
        placement.spread_constraints or [], path.child("spreadConstraints")
    )
    errors += _validate_workload_affinity(
        placement.workload_affinity, path.child("workloadAffinity")
    )
    for i, toleration in enumerate(placement.cluster_tolerations or []):
        # Lt and Gt (KEP-5471) compare numbers on nodes; Karmada keeps them off clusters.
        if toleration.operator in ("Lt", "Gt"):
            errors.append(
                path.child("clusterTolerations")
                .index(i)
                .child("operator")
                .not_supported(toleration.operator, ("", OP_EXISTS, OP_EQUAL))
            )
    return errors


def _overflow_placement_errors(placement: policyv1.Placement, path: Path) -> ErrorList:
    if _overflow_scheduling_allowed(placement.replica_scheduling):
        return []
    return [
        path.index(i)
        .child("overflowAffinities")
        .invalid(
            wire(term.overflow_affinities),
            "overflowAffinities can only be used together with dynamic weight or "
            "aggregated scheduling",
        )
        for i, term in enumerate(placement.cluster_affinities or [])
        if term.overflow_affinities is not None
    ]


def _overflow_scheduling_allowed(scheduling: policyv1.ReplicaSchedulingStrategy | None) -> bool:
    """Overflow tiers need replicas divided by available resources: aggregated or dynamic weight."""
    if (
        scheduling is None
        or scheduling.replica_scheduling_type != policyv1.REPLICA_SCHEDULING_DIVIDED
    ):
        return False
    if scheduling.replica_division_preference == policyv1.REPLICA_DIVISION_AGGREGATED:
        return True
    return (
        scheduling.replica_division_preference == policyv1.REPLICA_DIVISION_WEIGHTED
        and scheduling.weight_preference is not None
        and bool(scheduling.weight_preference.dynamic_weight)
    )


_FIELD_SELECTOR_KEYS = ("provider", "region", "zone")


def validate_cluster_affinity(affinity: policyv1.ClusterAffinity | None, path: Path) -> ErrorList:
    """ValidateClusterAffinity: the field selector's first unsupported key or operator."""
    selector = affinity.field_selector if affinity is not None else None
    if selector is None:
        return []
    for expression in selector.match_expressions or []:
        if expression.key not in _FIELD_SELECTOR_KEYS:
            message = (
                f"unsupported key {go_quote(expression.key)}, must be provider, region, or zone"
            )
        elif expression.operator not in ("In", "NotIn"):
            message = f"unsupported operator {go_quote(expression.operator)}, must be In or NotIn"
        else:
            continue
        return [path.child("fieldSelector").invalid(wire(selector), message)]
    return []


def _validate_cluster_affinities(
    terms: list[policyv1.ClusterAffinityTerm], path: Path
) -> ErrorList:
    errors: ErrorList = []
    names: set[str] = set()
    for i, term in enumerate(terms):
        errors += validate_qualified_name(term.affinity_name, path.index(i))
        if term.affinity_name in names:
            errors.append(
                path.invalid(wire(terms), "each affinity term in a policy must have a unique name")
            )
        names.add(term.affinity_name)
        errors += validate_cluster_affinity(term, path.index(i))
        errors += _validate_overflow_affinities(term, path.index(i).child("overflowAffinities"))
    return errors


def _validate_overflow_affinities(term: policyv1.ClusterAffinityTerm, path: Path) -> ErrorList:
    if term.overflow_affinities is None:
        return []
    errors: ErrorList = []
    if _empty_cluster_affinity(term):
        errors.append(
            path.invalid(
                wire(term.overflow_affinities),
                "overflowAffinities can only be used together with the inline ClusterAffinity",
            )
        )
    names = {term.affinity_name}
    for i, overflow in enumerate(term.overflow_affinities):
        name_path = path.index(i).child("affinityName")
        errors += validate_qualified_name(overflow.affinity_name, name_path)
        if overflow.affinity_name in names:
            errors.append(
                name_path.invalid(
                    overflow.affinity_name,
                    "overflow affinity name must be unique and must not duplicate the primary "
                    "group's affinityName",
                )
            )
        names.add(overflow.affinity_name)
        errors += validate_cluster_affinity(overflow, path.index(i))
    return errors


def _empty_cluster_affinity(affinity: policyv1.ClusterAffinity) -> bool:
    return (
        affinity.label_selector is None
        and affinity.field_selector is None
        and not affinity.cluster_names
        and not affinity.exclude_clusters
    )


def _validate_spread_constraints(
    constraints: list[policyv1.SpreadConstraint], path: Path
) -> ErrorList:
    """ValidateSpreadConstraint: each constraint, each spreadByField once (a repeat reported
    once), and the cluster one among them if any spreads by field."""
    errors: ErrorList = []
    reported: dict[str, bool] = {}  # spreadByField values seen, and whether a repeat was reported
    for i, constraint in enumerate(constraints):
        errors += _spread_constraint_errors(constraint, path.index(i))
        field = constraint.spread_by_field
        if field and reported.get(field) is False:
            message = f"multiple {field} spread constraints are not allowed"
            errors.append(path.invalid(wire(constraints), message))
            reported[field] = True
        elif field:
            reported.setdefault(field, False)
    if reported and policyv1.SPREAD_BY_FIELD_CLUSTER not in reported:
        errors.append(
            path.invalid(
                wire(constraints),
                "the cluster spread constraint must be enabled in one of the constraints in case "
                "of SpreadByField is enabled",
            )
        )
    return errors


def _spread_constraint_errors(constraint: policyv1.SpreadConstraint, path: Path) -> ErrorList:
    min_groups, max_groups = constraint.min_groups or 0, constraint.max_groups or 0
    broken = [
        (
            bool(constraint.spread_by_field and constraint.spread_by_label),
            "spreadByLabel should not co-exist with spreadByField",
        ),
        (min_groups < 0, "minGroups lower than 0 is not allowed"),
        (max_groups < 0, "maxGroups lower than 0 is not allowed"),
        (0 < max_groups < min_groups, "maxGroups lower than minGroups is not allowed"),
    ]
    return [path.invalid(wire(constraint), message) for failed, message in broken if failed]


def _validate_workload_affinity(
    affinity: policyv1.WorkloadAffinity | None, path: Path
) -> ErrorList:
    if affinity is None:
        return []
    errors: ErrorList = []
    for name, term in (("affinity", affinity.affinity), ("antiAffinity", affinity.anti_affinity)):
        if term is not None:
            errors += validate_qualified_name(
                term.group_by_label_key, path.child(name, "groupByLabelKey")
            )
    if (
        affinity.affinity is not None
        and affinity.anti_affinity is not None
        and affinity.affinity.group_by_label_key == affinity.anti_affinity.group_by_label_key
    ):
        errors.append(
            path.invalid(
                wire(affinity), "affinity and antiAffinity must not use the same groupByLabelKey"
            )
        )
    return errors


def _validate_failover(failover: policyv1.FailoverBehavior | None, path: Path) -> ErrorList:
    """ValidateFailover."""
    if failover is None:
        return []
    errors = _validate_application_failover(failover.application, path.child("application"))
    if failover.cluster is not None:
        errors += _validate_state_preservation(
            failover.cluster.state_preservation, path.child("cluster", "statePreservation")
        )
    return errors


def _validate_application_failover(
    application: policyv1.ApplicationFailoverBehavior | None, path: Path
) -> ErrorList:
    if application is None:
        return []
    errors: ErrorList = []
    seconds = application.decision_conditions.toleration_seconds
    if seconds is not None and seconds < 0:
        errors.append(
            path.child("decisionConditions", "tolerationSeconds").invalid(
                seconds, "must be greater than or equal to 0"
            )
        )
    errors += _grace_period_errors(application, path.child("gracePeriodSeconds"))
    errors += _validate_state_preservation(
        application.state_preservation, path.child("statePreservation")
    )
    return errors


def _grace_period_errors(
    application: policyv1.ApplicationFailoverBehavior, path: Path
) -> ErrorList:
    """gracePeriodSeconds goes with, and only with, the Gracefully purge mode."""
    grace = application.grace_period_seconds
    gracefully = application.purge_mode == policyv1.PURGE_MODE_GRACEFULLY
    errors: ErrorList = []
    if not gracefully and grace is not None:
        errors.append(path.invalid(grace, "only takes effect when purgeMode is gracefully"))
    if gracefully and grace is None:
        errors.append(path.invalid(None, "should not be empty when purgeMode is gracefully"))
    if grace is not None and grace <= 0:
        errors.append(path.invalid(grace, "must be greater than 0"))
    return errors


def _validate_state_preservation(
    preservation: policyv1.StatePreservation | None, path: Path
) -> ErrorList:
    """Each alias becomes a label key on the workload in its new cluster."""
    errors: ErrorList = []
    for i, rule in enumerate(preservation.rules if preservation is not None else []):
        errors += validate_qualified_name(
            rule.alias_label_name, path.child("rules").index(i).child("aliasLabelName")
        )
    return errors


# --- registration -----------------------------------------------------------------------------


def _policy_plugin(kind: _PolicyKind) -> Plugin:
    return Plugin(
        f"{policyv1.GROUP}/{policyv1.VERSION}",
        kind.model.__name__,
        mutate=through_webhook(_SCHEMA, _policy_webhook_mutate(kind), CREATE_UPDATE),
        validate=validation(_SCHEMA, _policy_webhook_validate(kind)),
    )


PLUGINS = [_policy_plugin(_PROPAGATION_POLICY), _policy_plugin(_CLUSTER_PROPAGATION_POLICY)]
