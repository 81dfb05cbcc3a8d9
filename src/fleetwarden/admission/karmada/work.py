"""Work: its CRD schema and karmada-webhook's mutating handler (it has no validating one).

Upstream: charts/karmada/_crds/bases/work, pkg/webhook/work.
"""

from __future__ import annotations

import copy
import json
from typing import Any

from fleetwarden.admission.chain import Plugin, Request
from fleetwarden.admission.karmada.prune import map_at, remove_irrelevant_fields
from fleetwarden.admission.karmada.webhook import (
    CREATE_UPDATE,
    label_unset_permanent_id,
    through_webhook,
)
from fleetwarden.admission.schema import CONDITIONS, Array, Object, String, validation
from fleetwarden.api.errors import ErrorList, Path
from fleetwarden.api.karmada import work as workv1

HEALTH = (workv1.RESOURCE_HEALTHY, workv1.RESOURCE_UNHEALTHY, workv1.RESOURCE_UNKNOWN)

# No defaults: the Work CRD has no `default:` markers.
_SCHEMA = Object(
    properties={
        "status": Object(
            properties={
                "conditions": CONDITIONS,
                "manifestStatuses": Array(
                    items=Object(
                        properties={
                            "health": String(enum=HEALTH),
                            "identifier": Object(
                                required=("kind", "name", "ordinal", "resource", "version")
                            ),
                        },
                        required=("identifier",),
                    )
                ),
            }
        )
    },
    required=("spec",),
)


def _webhook_mutate(request: Request) -> None:
    """A permanent id, and each manifest pruned of what the API server or a member cluster
    fills in, labelled with that id and its managed keys recorded."""
    work = request.of(workv1.Work)
    errors = _manifest_kind_errors(work)
    if errors:
        raise request.invalid(errors)
    label_unset_permanent_id(work, workv1.WORK_PERMANENT_ID_LABEL)
    manifests = work.spec.workload.manifests
    if manifests:
        permanent_id = (work.metadata.labels or {})[workv1.WORK_PERMANENT_ID_LABEL]
        work.spec.workload.manifests = [_prepare_workload(m, permanent_id) for m in manifests]


def _manifest_kind_errors(work: workv1.Work) -> ErrorList:
    """The webhook fails on the first manifest it cannot decode: one without a kind. Upstream
    answers 500; here it is the manifest's field error."""
    path = Path("spec").child("workload", "manifests")
    for i, manifest in enumerate(work.spec.workload.manifests or []):
        if not isinstance(manifest.get("kind"), str) or not manifest["kind"]:
            raw = json.dumps(manifest, separators=(",", ":"), ensure_ascii=False)
            return [path.index(i).child("kind").required(f"Object 'Kind' is missing in '{raw}'")]
    return []


def _prepare_workload(manifest: dict[str, Any], permanent_id: str) -> dict[str, Any]:
    """RemoveIrrelevantFields, then SetLabelsAndAnnotationsForWorkload."""
    workload = copy.deepcopy(manifest)
    remove_irrelevant_fields(workload)
    metadata = map_at(workload, "metadata")
    if metadata is None:
        metadata = workload["metadata"] = {}
    annotations = dict(map_at(metadata, "annotations") or {})
    managed = {workv1.MANAGED_ANNOTATIONS_ANNOTATION, workv1.MANAGED_LABELS_ANNOTATION}
    annotations[workv1.MANAGED_ANNOTATIONS_ANNOTATION] = ",".join(
        sorted(managed | set(annotations))
    )
    labels = {**(map_at(metadata, "labels") or {}), workv1.WORK_PERMANENT_ID_LABEL: permanent_id}
    annotations[workv1.MANAGED_LABELS_ANNOTATION] = ",".join(sorted(labels))
    metadata["labels"], metadata["annotations"] = labels, annotations
    return workload


PLUGIN = Plugin(
    f"{workv1.GROUP}/{workv1.WORK_VERSION}",
    "Work",
    mutate=through_webhook(_SCHEMA, _webhook_mutate, CREATE_UPDATE),
    validate=validation(_SCHEMA),
)
