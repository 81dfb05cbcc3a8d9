"""ClusterTaintPolicy: its CRD schema and karmada-webhook's validating handler.

Upstream: charts/karmada/_crds/bases/policy, pkg/webhook/clustertaintpolicy.
"""

from __future__ import annotations

from fleetwarden.admission.chain import Plugin, Request
from fleetwarden.admission.karmada.propagation_policy import CLUSTER_AFFINITY
from fleetwarden.admission.schema import Array, Object, validation
from fleetwarden.api.core import NO_EXECUTE
from fleetwarden.api.errors import ErrorList, Path
from fleetwarden.api.karmada import policy as policyv1

_MATCH_CONDITIONS = Array(items=Object(required=("conditionType", "operator", "statusValues")))

_SCHEMA = Object(
    properties={
        "spec": Object(
            properties={
                "addOnConditions": _MATCH_CONDITIONS,
                "removeOnConditions": _MATCH_CONDITIONS,
                "taints": Array(min_items=1, items=Object(required=("effect", "key"))),
                "targetClusters": CLUSTER_AFFINITY,
            },
            required=("taints",),
        )
    },
    required=("spec",),
)


def _webhook(request: Request) -> ErrorList:
    """NoExecute only when the hub allows it (--allow-no-execute-taint-policy), and each key and
    effect pair once."""
    taints = request.of(policyv1.ClusterTaintPolicy).spec.taints
    path = Path("spec").child("taints")
    errors: ErrorList = []
    for i, taint in enumerate(taints):
        if taint.effect == NO_EXECUTE and not request.config.allow_no_execute_taint_policy:
            errors.append(
                path.index(i).forbidden(
                    "Configuring taint with NoExecute effect is not allowed, this capability must "
                    "be explicitly enabled by administrators through command-line flags"
                )
            )
        if any((t.key, t.effect) == (taint.key, taint.effect) for t in taints[i + 1 :]):
            errors.append(
                path.index(i).duplicate(
                    f"Duplicate taint with the same key({taint.key}) and effect({taint.effect}) "
                    "is not allowed"
                )
            )
    return errors


# The CRD has no defaults and the kind no mutating webhook.
PLUGIN = Plugin(
    f"{policyv1.GROUP}/{policyv1.VERSION}",
    "ClusterTaintPolicy",
    validate=validation(_SCHEMA, _webhook),
)
