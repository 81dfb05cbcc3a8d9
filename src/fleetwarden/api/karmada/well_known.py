"""Karmada's well-known labels, annotations and finalizers, as its controllers write them.

Upstream keeps them in pkg/apis/policy/v1alpha1 and pkg/apis/work/v1alpha2
(well_known_constants.go) and pkg/util/constants.go. The permanent-id labels live with
their kinds (policy.py, work.py) and are repeated here so that one import serves a
controller.
"""

from __future__ import annotations

import uuid

from fleetwarden.api.karmada.policy import (
    CLUSTER_PROPAGATION_POLICY_PERMANENT_ID_LABEL,
    PROPAGATION_POLICY_PERMANENT_ID_LABEL,
)
from fleetwarden.api.karmada.work import (
    CLUSTER_RESOURCE_BINDING_PERMANENT_ID_LABEL,
    RESOURCE_BINDING_PERMANENT_ID_LABEL,
    WORK_PERMANENT_ID_LABEL,
)

__all__ = [
    "BINDING_CONTROLLER_FINALIZER",
    "BINDING_MANAGED_BY_LABEL",
    "CLUSTER_PROPAGATION_POLICY_ANNOTATION",
    "CLUSTER_PROPAGATION_POLICY_CONTROLLER_FINALIZER",
    "CLUSTER_PROPAGATION_POLICY_PERMANENT_ID_LABEL",
    "CLUSTER_RESOURCE_BINDING_ANNOTATION",
    "CLUSTER_RESOURCE_BINDING_CONTROLLER_FINALIZER",
    "CLUSTER_RESOURCE_BINDING_PERMANENT_ID_LABEL",
    "EXECUTION_CONTROLLER_FINALIZER",
    "MANAGED_BY_KARMADA_LABEL",
    "PROPAGATION_POLICY_CONTROLLER_FINALIZER",
    "PROPAGATION_POLICY_NAMESPACE_ANNOTATION",
    "PROPAGATION_POLICY_NAME_ANNOTATION",
    "PROPAGATION_POLICY_PERMANENT_ID_LABEL",
    "RESOURCE_BINDING_NAMESPACE_ANNOTATION",
    "RESOURCE_BINDING_NAME_ANNOTATION",
    "RESOURCE_BINDING_PERMANENT_ID_LABEL",
    "RESOURCE_TEMPLATE_CLAIMED_BY_LABEL",
    "RESOURCE_TEMPLATE_GENERATION_ANNOTATION",
    "RESOURCE_TEMPLATE_UID_ANNOTATION",
    "WORK_NAMESPACE_ANNOTATION",
    "WORK_NAME_ANNOTATION",
    "WORK_PERMANENT_ID_LABEL",
    "permanent_id",
]

# Which policy claimed a resource template (on the template and on its binding too).
PROPAGATION_POLICY_NAMESPACE_ANNOTATION = "propagationpolicy.karmada.io/namespace"
PROPAGATION_POLICY_NAME_ANNOTATION = "propagationpolicy.karmada.io/name"
CLUSTER_PROPAGATION_POLICY_ANNOTATION = "clusterpropagationpolicy.karmada.io/name"
# Set by another owner of a template (a MultiClusterService, say): no policy may claim it.
RESOURCE_TEMPLATE_CLAIMED_BY_LABEL = "resourcetemplate.karmada.io/claimed-by"

# Which binding a Work, or a manifest in a Work, derives from.
RESOURCE_BINDING_NAMESPACE_ANNOTATION = "resourcebinding.karmada.io/namespace"
RESOURCE_BINDING_NAME_ANNOTATION = "resourcebinding.karmada.io/name"
# How the member side treats an object it finds there that Karmada does not manage.
CONFLICT_RESOLUTION_ANNOTATION = "work.karmada.io/conflict-resolution"
CONFLICT_RESOLUTION_OVERWRITE = "overwrite"
CLUSTER_RESOURCE_BINDING_ANNOTATION = "clusterresourcebinding.karmada.io/name"
BINDING_MANAGED_BY_LABEL = "binding.karmada.io/managed-by"
# Which Work a resource on a member cluster derives from.
WORK_NAMESPACE_ANNOTATION = "work.karmada.io/namespace"
WORK_NAME_ANNOTATION = "work.karmada.io/name"
RESOURCE_TEMPLATE_UID_ANNOTATION = "resourcetemplate.karmada.io/uid"
RESOURCE_TEMPLATE_GENERATION_ANNOTATION = "resourcetemplate.karmada.io/generation"
MANAGED_BY_KARMADA_LABEL = "karmada.io/managed"

# Finalizers: what a controller must clean up before the object may go.
PROPAGATION_POLICY_CONTROLLER_FINALIZER = "karmada.io/propagation-policy-controller"
CLUSTER_PROPAGATION_POLICY_CONTROLLER_FINALIZER = "karmada.io/cluster-propagation-policy-controller"
BINDING_CONTROLLER_FINALIZER = "karmada.io/binding-controller"
CLUSTER_RESOURCE_BINDING_CONTROLLER_FINALIZER = "karmada.io/cluster-resource-binding-controller"
EXECUTION_CONTROLLER_FINALIZER = "karmada.io/execution-controller"

# Upstream draws a random UUID. Ours derives one from the object's identity so that a run
# replays exactly; an object deleted and created again gets its old id back.
_PERMANENT_ID_NAMESPACE = uuid.uuid5(uuid.NAMESPACE_DNS, "karmada.io")


def permanent_id(kind: str, namespace: str, name: str) -> str:
    """The value of a `*.karmada.io/permanent-id` label, as the mutating webhooks set it."""
    return str(uuid.uuid5(_PERMANENT_ID_NAMESPACE, f"{kind}/{namespace}/{name}"))
