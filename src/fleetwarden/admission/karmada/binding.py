"""ResourceBinding and ClusterResourceBinding: their CRD schema and karmada-webhook's
handlers.

Upstream: charts/karmada/_crds/bases/work, pkg/webhook/resourcebinding.
"""

from __future__ import annotations

from typing import Any

from fleetwarden.admission.chain import Mutate, Plugin, Request, Validate
from fleetwarden.admission.karmada.propagation_policy import (
    CONFLICT_RESOLUTION,
    FAILOVER,
    PLACEMENT,
    PURGE_MODES,
)
from fleetwarden.admission.karmada.webhook import CREATE, label_unset_permanent_id, through_webhook
from fleetwarden.admission.karmada.work import HEALTH
from fleetwarden.admission.schema import (
    CONDITIONS,
    QUANTITY,
    REASON,
    REQUIREMENTS,
    Array,
    Integer,
    Map,
    Object,
    String,
    validation,
)
from fleetwarden.api.codec import load_json
from fleetwarden.api.errors import ErrorList, Path
from fleetwarden.api.karmada import work as workv1
from fleetwarden.api.meta import Resource

_TARGET_CLUSTERS = Array(
    items=Object(
        properties={"components": Array(items=Object(required=("name", "replicas")))},
        required=("name",),
    )
)
_REPLICA_REQUIREMENTS = Object(
    properties={
        "nodeClaim": Object(
            properties={
                "hardNodeAffinity": Object(
                    properties={
                        "nodeSelectorTerms": Array(
                            items=Object(
                                properties={
                                    "matchExpressions": REQUIREMENTS,
                                    "matchFields": REQUIREMENTS,
                                }
                            )
                        )
                    },
                    required=("nodeSelectorTerms",),
                )
            }
        ),
        "resourceRequest": Map(values=String(pattern=QUANTITY)),
    }
)
_GRACEFUL_EVICTION_TASK = Object(
    properties={
        "message": String(max_length=1024),
        "purgeMode": String(enum=PURGE_MODES),
        "reason": String(min_length=1, max_length=32, pattern=REASON),
    },
    required=("fromCluster", "producer", "reason"),
)

_SCHEMA = Object(
    properties={
        "spec": Object(
            properties={
                "clusters": _TARGET_CLUSTERS,
                "components": Array(
                    items=Object(
                        properties={
                            "name": String(max_length=32),
                            "replicaRequirements": _REPLICA_REQUIREMENTS,
                        },
                        required=("name", "replicas"),
                    )
                ),
                "conflictResolution": CONFLICT_RESOLUTION,
                "failover": FAILOVER,
                "gracefulEvictionTasks": Array(items=_GRACEFUL_EVICTION_TASK),
                "placement": PLACEMENT,
                "replicaRequirements": _REPLICA_REQUIREMENTS,
                "requiredBy": Array(
                    items=Object(properties={"clusters": _TARGET_CLUSTERS}, required=("name",))
                ),
                "resource": Object(required=("apiVersion", "kind", "name")),
                "schedulePriority": Object(properties={"priority": Integer(default=0)}),
            },
            required=("resource",),
        ),
        "status": Object(
            properties={
                "aggregatedStatus": Array(
                    items=Object(
                        properties={"health": String(enum=HEALTH)}, required=("clusterName",)
                    )
                ),
                "conditions": CONDITIONS,
            }
        ),
    },
    required=("spec",),
)

_DEPENDENCIES_ANNOTATION = "resourcebinding.karmada.io/dependencies"


def _webhook_mutate(label: str) -> Mutate:
    return lambda request: label_unset_permanent_id(request.obj, label)


def _resource_binding_webhook(request: Request) -> ErrorList:
    """The ResourceBinding validating webhook. Its FederatedResourceQuota check and its
    components check sit behind feature gates that are off by default
    (FederatedQuotaEnforcement, MultiplePodTemplatesScheduling)."""
    binding = request.of(workv1.ResourceBinding)
    dependencies = (binding.metadata.annotations or {}).get(_DEPENDENCIES_ANNOTATION)
    if dependencies is None or _dependencies_parse(dependencies):
        return []
    path = Path("metadata").child("annotations", _DEPENDENCIES_ANNOTATION)
    return [path.invalid(dependencies, "annotation value must be a valid JSON")]


def _dependencies_parse(text: str) -> bool:
    """Whether Go would unmarshal the annotation into []DependentObjectReference."""
    try:
        items = load_json(text)  # refuses NaN, as Go does
    except ValueError:
        return False
    if items is None:
        return True
    return isinstance(items, list) and all(
        item is None or _is_dependent_object_reference(item) for item in items
    )


def _is_dependent_object_reference(item: Any) -> bool:
    return (
        isinstance(item, dict)
        and all(
            isinstance(item.get(f), str | None) for f in ("apiVersion", "kind", "namespace", "name")
        )
        and isinstance(item.get("labelSelector"), dict | None)
    )


def _binding_plugin(model: type[Resource], label: str, webhook: Validate | None = None) -> Plugin:
    return Plugin(
        f"{workv1.GROUP}/{workv1.BINDING_VERSION}",
        model.__name__,
        mutate=through_webhook(_SCHEMA, _webhook_mutate(label), CREATE),
        validate=validation(_SCHEMA, webhook),
    )


PLUGINS = [
    _binding_plugin(
        workv1.ResourceBinding,
        workv1.RESOURCE_BINDING_PERMANENT_ID_LABEL,
        _resource_binding_webhook,
    ),
    # ClusterResourceBinding has no validating webhook.
    _binding_plugin(
        workv1.ClusterResourceBinding, workv1.CLUSTER_RESOURCE_BINDING_PERMANENT_ID_LABEL
    ),
]
