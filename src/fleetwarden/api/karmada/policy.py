"""policy.karmada.io/v1alpha1: PropagationPolicy, ClusterPropagationPolicy, ClusterTaintPolicy,
OverridePolicy and ClusterOverridePolicy."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from fleetwarden.api.core import NodeSelectorRequirement, Toleration
from fleetwarden.api.meta import LabelSelector, Model, Resource

GROUP = "policy.karmada.io"
VERSION = "v1alpha1"

PROPAGATION_POLICY_PERMANENT_ID_LABEL = "propagationpolicy.karmada.io/permanent-id"
CLUSTER_PROPAGATION_POLICY_PERMANENT_ID_LABEL = "clusterpropagationpolicy.karmada.io/permanent-id"

# ReplicaSchedulingType.
REPLICA_SCHEDULING_DUPLICATED = "Duplicated"
REPLICA_SCHEDULING_DIVIDED = "Divided"

# ReplicaDivisionPreference.
REPLICA_DIVISION_AGGREGATED = "Aggregated"
REPLICA_DIVISION_WEIGHTED = "Weighted"

# SpreadFieldValue.
SPREAD_BY_FIELD_CLUSTER = "cluster"
SPREAD_BY_FIELD_REGION = "region"
SPREAD_BY_FIELD_ZONE = "zone"
SPREAD_BY_FIELD_PROVIDER = "provider"

# PurgeMode.
PURGE_MODE_DIRECTLY = "Directly"
PURGE_MODE_GRACEFULLY = "Gracefully"
PURGE_MODE_NEVER = "Never"

# PreemptionBehavior.
PREEMPT_ALWAYS = "Always"
PREEMPT_NEVER = "Never"

# ConflictResolution.
CONFLICT_OVERWRITE = "Overwrite"
CONFLICT_ABORT = "Abort"

# MatchConditionOperator.
MATCH_CONDITION_IN = "In"
MATCH_CONDITION_NOT_IN = "NotIn"


class FieldSelector(Model):
    """Clusters by provider, region or zone."""

    match_expressions: list[NodeSelectorRequirement] | None = None


class ClusterAffinity(Model):
    label_selector: LabelSelector | None = None
    field_selector: FieldSelector | None = None
    cluster_names: list[str] | None = None
    exclude_clusters: list[str] | None = Field(default=None, alias="exclude")


class _AffinityName(Model):
    affinity_name: str = ""


# A named group of clusters. Listing _AffinityName last among the bases puts affinityName
# first on the wire, ahead of the inline ClusterAffinity, as Go's struct marshals it.
class OverflowClusterAffinity(ClusterAffinity, _AffinityName):
    """A tier the scheduler adds, in order, when the groups before it run short."""


class ClusterAffinityTerm(ClusterAffinity, _AffinityName):
    overflow_affinities: list[OverflowClusterAffinity] | None = None


class SpreadConstraint(Model):
    spread_by_field: str | None = None
    spread_by_label: str | None = None
    max_groups: int | None = None
    min_groups: int | None = None


class StaticClusterWeight(Model):
    target_cluster: ClusterAffinity = Field(default_factory=ClusterAffinity)
    weight: int = 0


class ClusterPreferences(Model):
    static_weight_list: list[StaticClusterWeight] | None = None
    dynamic_weight: str | None = None


class ReplicaSchedulingStrategy(Model):
    replica_scheduling_type: str | None = None
    replica_division_preference: str | None = None
    weight_preference: ClusterPreferences | None = None


class WorkloadAffinityTerm(Model):
    group_by_label_key: str = ""


class WorkloadAntiAffinityTerm(WorkloadAffinityTerm):
    """Same shape as WorkloadAffinityTerm; the group's members are kept apart."""


class WorkloadAffinity(Model):
    affinity: WorkloadAffinityTerm | None = None
    anti_affinity: WorkloadAntiAffinityTerm | None = None


class Placement(Model):
    cluster_affinity: ClusterAffinity | None = None
    cluster_affinities: list[ClusterAffinityTerm] | None = None
    cluster_tolerations: list[Toleration] | None = None
    spread_constraints: list[SpreadConstraint] | None = None
    replica_scheduling: ReplicaSchedulingStrategy | None = None
    workload_affinity: WorkloadAffinity | None = None

    def replica_scheduling_type(self) -> str:
        """Placement.ReplicaSchedulingType(): Duplicated when no strategy is given."""
        if self.replica_scheduling is None:
            return REPLICA_SCHEDULING_DUPLICATED
        return self.replica_scheduling.replica_scheduling_type or ""


class ResourceSelector(Model):
    api_version: str = ""
    kind: str = ""
    namespace: str | None = None
    name: str | None = None
    label_selector: LabelSelector | None = None


class DecisionConditions(Model):
    toleration_seconds: int | None = None


class StatePreservationRule(Model):
    alias_label_name: str = ""
    json_path: str = ""


class StatePreservation(Model):
    rules: list[StatePreservationRule] = Field(default_factory=list)


class ApplicationFailoverBehavior(Model):
    decision_conditions: DecisionConditions = Field(default_factory=DecisionConditions)
    purge_mode: str | None = None
    grace_period_seconds: int | None = None
    state_preservation: StatePreservation | None = None


class ClusterFailoverBehavior(Model):
    purge_mode: str | None = None
    state_preservation: StatePreservation | None = None


class FailoverBehavior(Model):
    application: ApplicationFailoverBehavior | None = None
    cluster: ClusterFailoverBehavior | None = None


class SuspendClusters(Model):
    cluster_names: list[str] | None = None


class Suspension(Model):
    dispatching: bool | None = None
    dispatching_on_clusters: SuspendClusters | None = None


class SchedulePriority(Model):
    priority_class_source: str = ""
    priority_class_name: str = ""


class PropagationSpec(Model):
    resource_selectors: list[ResourceSelector] = Field(default_factory=list)
    # Deprecated upstream in favour of propagateDeps.
    association: bool | None = None
    propagate_deps: bool | None = None
    placement: Placement = Field(default_factory=Placement)
    priority: int | None = None
    preemption: str | None = None
    dependent_overrides: list[str] | None = None
    scheduler_name: str | None = None
    failover: FailoverBehavior | None = None
    conflict_resolution: str | None = None
    activation_preference: str | None = None
    suspension: Suspension | None = None
    preserve_resources_on_deletion: bool | None = None
    schedule_priority: SchedulePriority | None = None


class PropagationPolicy(Resource):
    spec: PropagationSpec = Field(default_factory=PropagationSpec)


class ClusterPropagationPolicy(Resource):
    spec: PropagationSpec = Field(default_factory=PropagationSpec)


class MatchCondition(Model):
    condition_type: str = ""
    operator: str = ""
    status_values: list[str] = Field(default_factory=list)


class Taint(Model):
    """The taint a ClusterTaintPolicy manages: a corev1.Taint without timeAdded."""

    key: str = ""
    effect: str = ""
    value: str | None = None


class ClusterTaintPolicySpec(Model):
    target_clusters: ClusterAffinity | None = None
    add_on_conditions: list[MatchCondition] | None = None
    remove_on_conditions: list[MatchCondition] | None = None
    taints: list[Taint] = Field(default_factory=list)


class ClusterTaintPolicy(Resource):
    spec: ClusterTaintPolicySpec = Field(default_factory=ClusterTaintPolicySpec)


# --- OverridePolicy and ClusterOverridePolicy (override_types.go) -----------------------------

# OverriderOperator.
OVERRIDER_OP_ADD = "add"
OVERRIDER_OP_REMOVE = "remove"
OVERRIDER_OP_REPLACE = "replace"

# ImageComponent.
IMAGE_REGISTRY = "Registry"
IMAGE_REPOSITORY = "Repository"
IMAGE_TAG = "Tag"

# The annotations of a Work naming the overriders applied to its manifest.
APPLIED_OVERRIDES_ANNOTATION = "policy.karmada.io/applied-overrides"
APPLIED_CLUSTER_OVERRIDES_ANNOTATION = "policy.karmada.io/applied-cluster-overrides"


class PlaintextOverrider(Model):
    """One JSON patch operation on the manifest. `value` is free JSON (apiextensionsv1.JSON):
    None stands for both an absent value and null, as Go decodes them alike."""

    path: str = ""
    operator: str = ""
    value: Any = None


class ImagePredicate(Model):
    path: str = ""


class ImageOverrider(Model):
    predicate: ImagePredicate | None = None
    component: str = ""
    operator: str = ""
    value: str | None = None


class CommandArgsOverrider(Model):
    container_name: str = ""
    operator: str = ""
    value: list[str] | None = None


class LabelAnnotationOverrider(Model):
    operator: str = ""
    value: dict[str, str] | None = None


class JSONPatchOperation(Model):
    sub_path: str = ""
    operator: str = ""
    value: Any = None


class YAMLPatchOperation(JSONPatchOperation):
    """Same shape as JSONPatchOperation, applied to YAML."""


class FieldOverrider(Model):
    field_path: str = ""
    json_: list[JSONPatchOperation] | None = Field(default=None, alias="json")
    yaml: list[YAMLPatchOperation] | None = None


class Overriders(Model):
    plaintext: list[PlaintextOverrider] | None = None
    image_overrider: list[ImageOverrider] | None = None
    command_overrider: list[CommandArgsOverrider] | None = None
    args_overrider: list[CommandArgsOverrider] | None = None
    labels_overrider: list[LabelAnnotationOverrider] | None = None
    annotations_overrider: list[LabelAnnotationOverrider] | None = None
    field_overrider: list[FieldOverrider] | None = None


class RuleWithCluster(Model):
    target_cluster: ClusterAffinity | None = None
    overriders: Overriders = Field(default_factory=Overriders)


class OverrideSpec(Model):
    resource_selectors: list[ResourceSelector] | None = None
    override_rules: list[RuleWithCluster] | None = None
    # Deprecated upstream in favour of overrideRules; still applied as one rule.
    target_cluster: ClusterAffinity | None = None
    overriders: Overriders = Field(default_factory=Overriders)

    def rules(self) -> list[RuleWithCluster]:
        """The rules to apply: overrideRules, or the deprecated pair as the only rule (the
        webhook keeps the two apart)."""
        if self.override_rules:
            return self.override_rules
        return [RuleWithCluster(target_cluster=self.target_cluster, overriders=self.overriders)]


class OverridePolicy(Resource):
    spec: OverrideSpec = Field(default_factory=OverrideSpec)


class ClusterOverridePolicy(Resource):
    spec: OverrideSpec = Field(default_factory=OverrideSpec)
