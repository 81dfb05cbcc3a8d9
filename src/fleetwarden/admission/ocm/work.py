"""ManifestWork and ManifestWorkReplicaSet: their CRD schemas, and OCM's work webhook for
ManifestWork (ocm pkg/work/webhook/v1). cluster-manager registers no webhook for
ManifestWorkReplicaSet (manifests/cluster-manager/hub/work), so its schema alone admits it.

The webhook refuses, as a BadRequest under its name, a work without manifests, manifests
larger than 500 KiB together (each counted as Manifest.Size() counts it: its JSON, and the
protobuf field's tag and length), a manifest without a kind, without a name or with a
generateName, the same object twice; and, when the executor is set or changed, a sender
who may not `execute-as` the executor's service account (its SubjectAccessReview). With the
NilExecutorValidating gate off, as it is by default, a work without an executor is not
checked.

The CRDs' rule on conditionRules (a CEL rule needs a condition) is checked with the
schema, for a ManifestWork and a ManifestWorkReplicaSet's template alike.

Upstream: open-cluster-management-io/api work/v1/0000_00_*.crd.yaml,
ocm pkg/work/webhook/common/validator.go and v1/manifestwork_validating.go.
"""

from __future__ import annotations

import json
from typing import Any

from fleetwarden.admission.chain import Plugin, Request
from fleetwarden.admission.schema import (
    CONDITIONS_BY_TYPE,
    Array,
    Object,
    String,
    defaulter,
    schema_plugin,
    validation,
)
from fleetwarden.api.authorization import Attributes
from fleetwarden.api.errors import BadRequest, ErrorList, Path, WebhookDenied
from fleetwarden.api.ocm import work as workv1

WEBHOOK = "manifestworkvalidators.admission.work.open-cluster-management.io"
MANIFEST_LIMIT = 500 * 1024  # the webhook's default manifest size limit, in bytes

_DNS1123_SUBDOMAIN = r"^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*)$"
_IDENTIFIER = Object(required=("name", "resource"))

_MANIFEST_CONFIG = Object(
    properties={
        "resourceIdentifier": _IDENTIFIER,
        "conditionRules": Array(
            items=Object(
                properties={
                    "type": String(enum=(workv1.WELL_KNOWN_CONDITIONS, workv1.CEL)),
                },
                required=("condition", "type"),
            ),
            list_type="map",
            list_map_keys=("condition",),
        ),
        "feedbackRules": Array(
            items=Object(
                properties={
                    "type": String(enum=(workv1.WELL_KNOWN_STATUS, workv1.JSON_PATHS)),
                    "jsonPaths": Array(
                        items=Object(required=("name", "path")),
                        list_type="map",
                        list_map_keys=("name",),
                    ),
                },
                required=("type",),
            )
        ),
        "feedbackScrapeType": String(
            enum=(workv1.FEEDBACK_POLL, workv1.FEEDBACK_WATCH), default=workv1.FEEDBACK_POLL
        ),
        "updateStrategy": Object(
            properties={
                "type": String(
                    enum=(
                        workv1.UPDATE,
                        workv1.CREATE_ONLY,
                        workv1.SERVER_SIDE_APPLY,
                        workv1.READ_ONLY,
                    ),
                    default=workv1.UPDATE,
                ),
                "serverSideApply": Object(
                    properties={
                        "fieldManager": String(
                            pattern=r"^work-agent", default=workv1.DEFAULT_FIELD_MANAGER
                        ),
                    }
                ),
            },
            required=("type",),
        ),
    },
    required=("resourceIdentifier",),
)

_WORK_SPEC = Object(
    properties={
        "deleteOption": Object(
            properties={
                "propagationPolicy": String(
                    enum=(
                        workv1.DELETE_FOREGROUND,
                        workv1.DELETE_ORPHAN,
                        workv1.DELETE_SELECTIVELY_ORPHAN,
                    ),
                    default=workv1.DELETE_FOREGROUND,
                ),
                "selectivelyOrphans": Object(
                    properties={"orphaningRules": Array(items=_IDENTIFIER)}
                ),
            }
        ),
        "executor": Object(
            properties={
                "subject": Object(
                    properties={
                        "type": String(enum=("ServiceAccount",)),
                        "serviceAccount": Object(
                            properties={
                                "name": String(
                                    min_length=1, max_length=253, pattern=_DNS1123_SUBDOMAIN
                                ),
                                "namespace": String(
                                    min_length=1, max_length=253, pattern=_DNS1123_SUBDOMAIN
                                ),
                            },
                            required=("name", "namespace"),
                        ),
                    },
                    required=("type",),
                )
            }
        ),
        "manifestConfigs": Array(items=_MANIFEST_CONFIG),
    }
)

_SCHEMA = Object(
    properties={
        "spec": _WORK_SPEC,
        "status": Object(
            properties={
                "conditions": CONDITIONS_BY_TYPE,
                "resourceStatus": Object(
                    properties={
                        "manifests": Array(
                            items=Object(
                                properties={
                                    "conditions": CONDITIONS_BY_TYPE,
                                    "resourceMeta": Object(required=("ordinal",)),
                                },
                                required=("conditions", "resourceMeta"),
                            )
                        )
                    }
                ),
            }
        ),
    },
    required=("spec",),
)


_THRESHOLD = String(pattern=r"^((100|[0-9]{1,2})%|[0-9]+)$")
_ROLLOUT_CONFIG = {
    "minSuccessTime": String(default="0"),
    "progressDeadline": String(pattern=r"^(([0-9])+[h|m|s])|None$", default="None"),
    "maxFailures": _THRESHOLD,
}
_REPLICA_SET_SCHEMA = Object(
    properties={
        "spec": Object(
            properties={
                "cascadeDeletionPolicy": String(
                    enum=(workv1.CASCADE_BACKGROUND, workv1.CASCADE_FOREGROUND),
                    default=workv1.CASCADE_BACKGROUND,
                ),
                "manifestWorkTemplate": _WORK_SPEC,
                "placementRefs": Array(
                    min_items=1,
                    items=Object(
                        properties={
                            "name": String(min_length=1),
                            "rolloutStrategy": Object(
                                properties={
                                    "type": String(
                                        enum=(
                                            workv1.ROLLOUT_ALL,
                                            workv1.ROLLOUT_PROGRESSIVE,
                                            workv1.ROLLOUT_PROGRESSIVE_PER_GROUP,
                                        ),
                                        default=workv1.ROLLOUT_ALL,
                                    ),
                                    "all": Object(properties=_ROLLOUT_CONFIG),
                                    "progressive": Object(
                                        properties={**_ROLLOUT_CONFIG, "maxConcurrency": _THRESHOLD}
                                    ),
                                    "progressivePerGroup": Object(properties=_ROLLOUT_CONFIG),
                                },
                            ),
                        },
                        required=("name",),
                    ),
                ),
            },
            required=("cascadeDeletionPolicy", "placementRefs"),
        ),
    },
    required=("spec",),
)


def _webhook(request: Request) -> None:
    """validateRequest: the manifests, then (only when it is new or changed) the executor."""
    work = request.of(workv1.ManifestWork)
    problem = manifests_problem(work.spec.workload.manifests or [])
    if problem:
        raise WebhookDenied(WEBHOOK, BadRequest(problem))
    old = request.old if isinstance(request.old, workv1.ManifestWork) else None
    if work.spec.executor is None or (old and old.spec.executor == work.spec.executor):
        return
    account = work.spec.executor.subject.service_account
    if account is None:
        raise WebhookDenied(WEBHOOK, BadRequest("executor service account can not be nil"))
    subject = f"system:serviceaccount:{account.namespace}:{account.name}"
    attributes = Attributes(
        user=request.user, verb="execute-as", api_group=workv1.GROUP, resource="manifestworks",
        namespace=work.namespace, name=subject,
    )  # fmt: skip
    if not request.allowed(attributes):
        message = (
            f"user {request.user.name} cannot manipulate the Manifestwork with executor "
            f"{account.namespace}/{account.name} in namespace {work.namespace}"
        )
        raise WebhookDenied(WEBHOOK, BadRequest(message))


def _condition_rules(spec: workv1.ManifestWorkSpec, path: Path) -> ErrorList:
    """The CRD's rule on each conditionRule (x-kubernetes-validations:
    `self.type != 'CEL' || self.condition != ""`)."""
    errors: ErrorList = []
    for i, option in enumerate(spec.manifest_configs or []):
        for j, rule in enumerate(option.condition_rules or []):
            if rule.type == workv1.CEL and not rule.condition:
                at = path.child("manifestConfigs").index(i).child("conditionRules").index(j)
                errors.append(at.invalid("object", "Condition is required for CEL rules"))
    return errors


def _work_rules(request: Request) -> ErrorList:
    return _condition_rules(request.of(workv1.ManifestWork).spec, Path("spec"))


def _replica_set_rules(request: Request) -> ErrorList:
    template = request.of(workv1.ManifestWorkReplicaSet).spec.manifest_work_template
    return _condition_rules(template, Path("spec").child("manifestWorkTemplate"))


def manifests_problem(manifests: list[dict[str, Any]]) -> str | None:
    """ManifestValidator.ValidateManifests: what is wrong with a work's manifests, if
    anything (shared with ManifestWorkReplicaSet's webhook upstream)."""
    if not manifests:
        return "manifests should not be empty"
    size = sum(_manifest_size(m) for m in manifests)
    if size > MANIFEST_LIMIT:
        return f"the size of manifests is {size} bytes which exceeds the {MANIFEST_LIMIT} limit"
    seen: set[tuple[str, str, str, str]] = set()
    for manifest in manifests:
        metadata = manifest.get("metadata") or {}
        kind = manifest.get("kind")
        if not kind or not isinstance(kind, str):  # unstructured's decoding needs a kind
            return f"Object 'Kind' is missing in '{_raw(manifest)}'"
        if not metadata.get("name"):
            return "name must be set in manifest"
        if metadata.get("generateName"):
            return "generateName must not be set in manifest"
        api_version, kind = str(manifest.get("apiVersion", "")), str(manifest.get("kind", ""))
        key = (api_version, kind, str(metadata.get("namespace", "")), str(metadata["name"]))
        if key in seen:
            return (
                f"duplicate manifest for resource {key[2]}/{key[3]} with resource type "
                f"{api_version}.{kind}"
            )
        seen.add(key)
    return None


def _raw(manifest: dict[str, Any]) -> str:
    """The manifest's raw JSON, as a client sends it: compact, in the order given."""
    return json.dumps(manifest, separators=(",", ":"), ensure_ascii=False)


def _manifest_size(manifest: dict[str, Any]) -> int:
    """Manifest.Size(): its raw JSON in a protobuf bytes field, with the field's tag and
    length."""
    raw = len(_raw(manifest).encode())
    return 1 + raw + _varint_length(raw)


def _varint_length(n: int) -> int:
    return max(1, (n.bit_length() + 6) // 7)


_replica_set_schema_defaults = defaulter(_REPLICA_SET_SCHEMA)


def _replica_set_defaults(request: Request) -> None:
    """The CRD's default for a placementRef without rolloutStrategy (All, no deadline),
    then its other defaults."""
    for ref in request.of(workv1.ManifestWorkReplicaSet).spec.placement_refs or []:
        if "rollout_strategy" not in ref.model_fields_set:
            all_ = workv1.RolloutAll(progress_deadline="None")
            ref.rollout_strategy = workv1.RolloutStrategy(type=workv1.ROLLOUT_ALL, all=all_)
    _replica_set_schema_defaults(request)


PLUGINS = [
    schema_plugin(
        f"{workv1.GROUP}/{workv1.VERSION}", "ManifestWork", _SCHEMA, _work_rules, _webhook
    ),
    # No webhook: cluster-manager registers the work webhook for manifestworks alone.
    Plugin(
        f"{workv1.GROUP}/{workv1.REPLICA_SET_VERSION}",
        "ManifestWorkReplicaSet",
        _replica_set_defaults,
        validation(_REPLICA_SET_SCHEMA, _replica_set_rules),
    ),
]
