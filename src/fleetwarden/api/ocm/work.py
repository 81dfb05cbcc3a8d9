"""work.open-cluster-management.io: ManifestWork (v1) on the hub, AppliedManifestWork (v1) on
the member, ManifestWorkReplicaSet (v1alpha1) on the hub.

A ManifestWork lives in a managed cluster's namespace on the hub; that cluster's work agent
applies its manifests and reports each one's conditions and status feedback. The agent
records what it applied in an AppliedManifestWork on its own cluster (cluster-scoped, named
`<hub hash>-<work name>`), which owns the applied objects until the work goes.

A ManifestWorkReplicaSet makes one ManifestWork per cluster its Placements decide, rolled
out by each Placement's rolloutStrategy (cluster.open-cluster-management.io/v1alpha1's
RolloutStrategy, shared with add-ons upstream).

Upstream: open-cluster-management-io/api work/v1/types.go,
work/v1alpha1/types_manifestworkreplicaset.go, cluster/v1alpha1/types_rolloutstrategy.go.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field

from fleetwarden.api.kinds import KindInfo
from fleetwarden.api.meta import Condition, IntOrString, Model, Resource, Time

GROUP = "work.open-cluster-management.io"
VERSION = "v1"
REPLICA_SET_VERSION = "v1alpha1"

# DeleteOption.propagationPolicy.
DELETE_FOREGROUND = "Foreground"
DELETE_ORPHAN = "Orphan"
DELETE_SELECTIVELY_ORPHAN = "SelectivelyOrphan"

# UpdateStrategy.type.
UPDATE = "Update"
CREATE_ONLY = "CreateOnly"
SERVER_SIDE_APPLY = "ServerSideApply"
READ_ONLY = "ReadOnly"
DEFAULT_FIELD_MANAGER = "work-agent"

# FeedbackRule.type.
WELL_KNOWN_STATUS = "WellKnownStatus"
JSON_PATHS = "JSONPaths"

# ConditionRule.type and FeedbackScrapeType.
WELL_KNOWN_CONDITIONS = "WellKnownConditions"
CEL = "CEL"
FEEDBACK_POLL = "Poll"
FEEDBACK_WATCH = "Watch"

# Condition types, of a work and of each manifest.
APPLIED = "Applied"
AVAILABLE = "Available"
PROGRESSING = "Progressing"
DEGRADED = "Degraded"
STATUS_FEEDBACK_SYNCED = "StatusFeedbackSynced"

MANIFEST_WORK_FINALIZER = "cluster.open-cluster-management.io/manifest-work-cleanup"
APPLIED_MANIFEST_WORK_FINALIZER = "cluster.open-cluster-management.io/applied-manifest-work-cleanup"


class ResourceIdentifier(Model):
    group: str = ""
    resource: str = ""
    name: str = ""
    namespace: str = ""


class SelectivelyOrphan(Model):
    orphaning_rules: list[ResourceIdentifier] | None = None


class DeleteOption(Model):
    propagation_policy: str = ""
    selectively_orphans: SelectivelyOrphan | None = None
    ttl_seconds_after_finished: int | None = None


class JsonPath(Model):
    name: str = ""
    version: str | None = None
    path: str = ""


class FeedbackRule(Model):
    type: str = ""
    json_paths: list[JsonPath] | None = None


class ConditionRule(Model):
    condition: str = ""
    type: str = ""
    cel_expressions: list[str] | None = None
    message: str | None = None
    message_expression: str | None = None


class IgnoreField(Model):
    condition: str = ""
    json_paths: list[str] | None = None
    json_pointers: list[str] | None = None
    jq_path_expressions: list[str] | None = None


class ServerSideApplyConfig(Model):
    force: bool | None = None
    field_manager: str | None = None
    ignore_fields: list[IgnoreField] | None = None


class UpdateStrategy(Model):
    type: str = ""
    server_side_apply: ServerSideApplyConfig | None = None


class ManifestConfigOption(Model):
    resource_identifier: ResourceIdentifier = Field(default_factory=ResourceIdentifier)
    feedback_rules: list[FeedbackRule] | None = None
    update_strategy: UpdateStrategy | None = None
    condition_rules: list[ConditionRule] | None = None
    feedback_scrape_type: str | None = None


class ServiceAccountRef(Model):
    namespace: str = ""
    name: str = ""


class ExecutorSubject(Model):
    type: str = ""
    service_account: ServiceAccountRef | None = None


class Executor(Model):
    subject: ExecutorSubject = Field(default_factory=ExecutorSubject)


class ManifestsTemplate(Model):
    # Each manifest is a whole object (apiVersion, kind, metadata, ...), kept as given.
    manifests: list[dict[str, Any]] | None = None


class ManifestWorkSpec(Model):
    workload: ManifestsTemplate = Field(default_factory=ManifestsTemplate)
    delete_option: DeleteOption | None = None
    manifest_configs: list[ManifestConfigOption] | None = None
    executor: Executor | None = None


class ManifestResourceMeta(Model):
    ordinal: int = 0
    group: str = ""
    version: str = ""
    kind: str = ""
    resource: str = ""
    name: str = ""
    namespace: str = ""


class FieldValue(Model):
    type: str = ""
    integer: int | None = None
    string: str | None = None
    boolean: bool | None = None
    json_raw: str | None = None


class FeedbackValue(Model):
    name: str = ""
    field_value: FieldValue = Field(default_factory=FieldValue)


class StatusFeedbackResult(Model):
    values: list[FeedbackValue] | None = None


class ManifestCondition(Model):
    resource_meta: ManifestResourceMeta = Field(default_factory=ManifestResourceMeta)
    status_feedback: StatusFeedbackResult | None = None
    conditions: list[Condition] = Field(default_factory=list)


class ManifestResourceStatus(Model):
    manifests: list[ManifestCondition] | None = None


class ManifestWorkStatus(Model):
    conditions: list[Condition] | None = None
    resource_status: ManifestResourceStatus | None = None


class ManifestWork(Resource):
    spec: ManifestWorkSpec = Field(default_factory=ManifestWorkSpec)
    status: ManifestWorkStatus = Field(default_factory=ManifestWorkStatus)


class AppliedManifestResourceMeta(ResourceIdentifier):
    version: str = ""
    uid: str | None = None


class AppliedManifestWorkSpec(Model):
    hub_hash: str = ""
    agent_id: str = ""
    manifest_work_name: str = ""


class AppliedManifestWorkStatus(Model):
    applied_resources: list[AppliedManifestResourceMeta] | None = None
    eviction_start_time: Time | None = None


class AppliedManifestWork(Resource):
    """On the member, not the hub: the hub serves no such kind."""

    spec: AppliedManifestWorkSpec = Field(default_factory=AppliedManifestWorkSpec)
    status: AppliedManifestWorkStatus = Field(default_factory=AppliedManifestWorkStatus)


# --- ManifestWorkReplicaSet ---------------------------------------------------------------------

# RolloutStrategy.type.
ROLLOUT_ALL = "All"
ROLLOUT_PROGRESSIVE = "Progressive"
ROLLOUT_PROGRESSIVE_PER_GROUP = "ProgressivePerGroup"

# cascadeDeletionPolicy.
CASCADE_FOREGROUND = "Foreground"
CASCADE_BACKGROUND = "Background"

# Conditions, and their reasons.
PLACEMENT_VERIFIED = "PlacementVerified"
PLACEMENT_ROLLED_OUT = "PlacementRolledOut"
MANIFESTWORK_APPLIED = "ManifestworkApplied"
REASON_AS_EXPECTED = "AsExpected"
REASON_NOT_AS_EXPECTED = "NotAsExpected"
REASON_PROCESSING = "Processing"
REASON_PROGRESSING = "Progressing"
REASON_COMPLETE = "Complete"
REASON_PLACEMENT_DECISION_NOT_FOUND = "PlacementDecisionNotFound"
REASON_PLACEMENT_DECISION_EMPTY = "PlacementDecisionEmpty"

REPLICA_SET_LABEL = "work.open-cluster-management.io/manifestworkreplicaset"
PLACEMENT_NAME_LABEL = "work.open-cluster-management.io/placementname"
REPLICA_SET_FINALIZER = "work.open-cluster-management.io/manifest-work-cleanup"


class MandatoryDecisionGroup(Model):
    group_name: str | None = None
    group_index: int | None = None


class RolloutConfig(Model):
    min_success_time: str | None = None  # a metav1.Duration: "30s"
    progress_deadline: str | None = None  # a duration, or "None"
    max_failures: IntOrString | None = None


class RolloutAll(RolloutConfig):
    pass


class RolloutProgressivePerGroup(RolloutConfig):
    mandatory_decision_groups: list[MandatoryDecisionGroup] | None = None


class RolloutProgressive(RolloutProgressivePerGroup):
    max_concurrency: IntOrString | None = None


class RolloutStrategy(Model):
    type: str = ""
    all: RolloutAll | None = None
    progressive: RolloutProgressive | None = None
    progressive_per_group: RolloutProgressivePerGroup | None = None


class LocalPlacementReference(Model):
    name: str = ""
    rollout_strategy: RolloutStrategy = Field(default_factory=RolloutStrategy)


class ManifestWorkReplicaSetSpec(Model):
    manifest_work_template: ManifestWorkSpec = Field(default_factory=ManifestWorkSpec)
    placement_refs: list[LocalPlacementReference] | None = None
    cascade_deletion_policy: str | None = None


class ManifestWorkReplicaSetSummary(Model):
    total: int = 0
    progressing: int = 0
    available: int = 0
    degraded: int = 0
    applied: int = 0


class PlacementSummary(Model):
    name: str = ""
    available_decision_groups: str = ""
    summary: ManifestWorkReplicaSetSummary = Field(default_factory=ManifestWorkReplicaSetSummary)


class ManifestWorkReplicaSetStatus(Model):
    conditions: list[Condition] | None = None
    summary: ManifestWorkReplicaSetSummary | None = None
    placement_summary: list[PlacementSummary] | None = None


class ManifestWorkReplicaSet(Resource):
    spec: ManifestWorkReplicaSetSpec = Field(default_factory=ManifestWorkReplicaSetSpec)
    status: ManifestWorkReplicaSetStatus = Field(default_factory=ManifestWorkReplicaSetStatus)


KINDS: list[KindInfo] = [
    KindInfo(GROUP, VERSION, "ManifestWork", "manifestworks", True, ManifestWork),
    KindInfo(
        GROUP,
        REPLICA_SET_VERSION,
        "ManifestWorkReplicaSet",
        "manifestworkreplicasets",
        True,
        ManifestWorkReplicaSet,
        ("mwrs",),
    ),
]
# Served by a managed cluster (the klusterlet's CRD), not by the hub.
APPLIED_MANIFEST_WORK_KIND = KindInfo(
    GROUP, VERSION, "AppliedManifestWork", "appliedmanifestworks", False, AppliedManifestWork
)
