"""cluster.open-cluster-management.io: Placement and PlacementDecision (v1beta1),
AddOnPlacementScore (v1alpha1).

Placement's toleration is OCM's own type, field for field the shape of core.Toleration, whose
effects are the OCM taint effects (NoSelect, PreferNoSelect, NoSelectIfNew).
"""

from __future__ import annotations

from pydantic import Field

from fleetwarden.api.core import Toleration
from fleetwarden.api.meta import (
    Condition,
    IntOrString,
    LabelSelector,
    LabelSelectorRequirement,
    Model,
    Resource,
    Time,
)

# PrioritizerPolicy.mode.
MODE_ADDITIVE = "Additive"
MODE_EXACT = "Exact"

# ScoreCoordinate.type.
SCORE_BUILT_IN = "BuiltIn"
SCORE_ADD_ON = "AddOn"

# PlacementSpec.sortBy.
SORT_BY_CLUSTER_NAME = "ClusterName"
SORT_BY_SCORE = "Score"

# SpreadConstraintsTerm.topologyKeyType and whenUnsatisfiable.
TOPOLOGY_KEY_LABEL = "Label"
TOPOLOGY_KEY_CLAIM = "Claim"
DO_NOT_SCHEDULE = "DoNotSchedule"
SCHEDULE_ANYWAY = "ScheduleAnyway"

# Placement condition types.
CONDITION_SATISFIED = "PlacementSatisfied"
CONDITION_MISCONFIGURED = "PlacementMisconfigured"

# Labels on every PlacementDecision.
PLACEMENT_LABEL = "cluster.open-cluster-management.io/placement"
DECISION_GROUP_INDEX_LABEL = "cluster.open-cluster-management.io/decision-group-index"
DECISION_GROUP_NAME_LABEL = "cluster.open-cluster-management.io/decision-group-name"


class ClusterClaimSelector(Model):
    match_expressions: list[LabelSelectorRequirement] | None = None


class ClusterCelSelector(Model):
    cel_expressions: list[str] | None = None


class ClusterSelector(Model):
    label_selector: LabelSelector | None = None
    claim_selector: ClusterClaimSelector | None = None
    cel_selector: ClusterCelSelector | None = None


class ClusterPredicate(Model):
    required_cluster_selector: ClusterSelector | None = None


class AddOnScore(Model):
    resource_name: str = ""
    score_name: str = ""


class ScoreCoordinate(Model):
    type: str | None = None
    built_in: str | None = None
    add_on: AddOnScore | None = None


class PrioritizerConfig(Model):
    score_coordinate: ScoreCoordinate | None = None
    weight: int | None = None


class PrioritizerPolicy(Model):
    mode: str | None = None
    configurations: list[PrioritizerConfig] | None = None


class SpreadConstraintsTerm(Model):
    topology_key: str = ""
    topology_key_type: str = ""
    max_skew: int | None = None
    when_unsatisfiable: str | None = None


class SpreadPolicy(Model):
    spread_constraints: list[SpreadConstraintsTerm] | None = None


class GroupClusterSelector(Model):
    label_selector: LabelSelector | None = None
    claim_selector: ClusterClaimSelector | None = None


class DecisionGroup(Model):
    group_name: str = ""
    group_cluster_selector: GroupClusterSelector | None = None


class GroupStrategy(Model):
    decision_groups: list[DecisionGroup] | None = None
    clusters_per_decision_group: IntOrString | None = None


class DecisionStrategy(Model):
    group_strategy: GroupStrategy | None = None


class PlacementSpec(Model):
    cluster_sets: list[str] | None = None
    number_of_clusters: int | None = None
    predicates: list[ClusterPredicate] | None = None
    prioritizer_policy: PrioritizerPolicy | None = None
    spread_policy: SpreadPolicy | None = None
    tolerations: list[Toleration] | None = None
    decision_strategy: DecisionStrategy | None = None
    sort_by: str | None = None
    score_rate_limit: str | None = None


class DecisionGroupStatus(Model):
    decision_group_index: int | None = None
    decision_group_name: str | None = None
    decisions: list[str] | None = None
    cluster_count: int | None = None


class PlacementStatus(Model):
    number_of_selected_clusters: int | None = None
    decision_groups: list[DecisionGroupStatus] | None = None
    conditions: list[Condition] | None = None
    last_score_update_time: Time | None = None


class Placement(Resource):
    """Selects ManagedClusters from the sets bound to its namespace; decisions go to
    PlacementDecisions labelled with its name."""

    spec: PlacementSpec = Field(default_factory=PlacementSpec)
    status: PlacementStatus = Field(default_factory=PlacementStatus)


class ClusterDecision(Model):
    cluster_name: str = ""
    reason: str = ""
    score: int | None = None


class PlacementDecisionStatus(Model):
    decisions: list[ClusterDecision] | None = None


class PlacementDecision(Resource):
    """One slice of a Placement's decisions; it has no spec, only status."""

    status: PlacementDecisionStatus = Field(default_factory=PlacementDecisionStatus)


class AddOnPlacementScoreItem(Model):
    name: str = ""
    value: int = 0


class AddOnPlacementScoreStatus(Model):
    conditions: list[Condition] | None = None
    scores: list[AddOnPlacementScoreItem] | None = None
    valid_until: Time | None = None


class AddOnPlacementScore(Resource):
    """Scores an add-on publishes for one cluster (in the cluster's namespace) for prioritizers."""

    status: AddOnPlacementScoreStatus = Field(default_factory=AddOnPlacementScoreStatus)
