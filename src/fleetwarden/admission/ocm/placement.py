"""Placement, PlacementDecision and AddOnPlacementScore: their CRD schemas.

Placement has no webhook upstream: what its schema admits is admitted, and the placement
controller reports the rest as PlacementMisconfigured.

Upstream: open-cluster-management-io/api cluster/v1beta1 and v1alpha1.
"""

from __future__ import annotations

from fleetwarden.admission.schema import (
    CONDITIONS_BY_TYPE,
    QUALIFIED_NAME,
    SELECTOR,
    Array,
    Integer,
    Object,
    String,
    schema_plugin,
)
from fleetwarden.api.core import OP_EQUAL
from fleetwarden.api.ocm.cluster import GROUP, TAINT_EFFECTS
from fleetwarden.api.ocm.placement import (
    DO_NOT_SCHEDULE,
    MODE_ADDITIVE,
    SCHEDULE_ANYWAY,
    SCORE_ADD_ON,
    SCORE_BUILT_IN,
    SORT_BY_CLUSTER_NAME,
    SORT_BY_SCORE,
    TOPOLOGY_KEY_CLAIM,
    TOPOLOGY_KEY_LABEL,
)

# ClusterClaimSelector has matchExpressions alone, as a label selector's are checked.
_CLUSTER_SELECTOR = Object(properties={"labelSelector": SELECTOR, "claimSelector": SELECTOR})

_PRIORITIZER_POLICY = Object(
    properties={
        "mode": String(default=MODE_ADDITIVE),  # no enum: a bad one is misconfigured
        "configurations": Array(
            items=Object(
                properties={
                    "scoreCoordinate": Object(
                        properties={
                            "type": String(
                                enum=(SCORE_BUILT_IN, SCORE_ADD_ON), default=SCORE_BUILT_IN
                            ),
                            "addOn": Object(required=("resourceName", "scoreName")),
                        },
                        required=("type",),
                    ),
                    "weight": Integer(minimum=-10, maximum=10, default=1),
                },
                required=("scoreCoordinate",),
            )
        ),
    }
)

_SPREAD_POLICY = Object(
    properties={
        "spreadConstraints": Array(
            max_items=8,
            items=Object(
                properties={
                    "topologyKey": String(
                        max_length=316,
                        pattern=(
                            r"^([a-z0-9]([-a-z0-9]*[a-z0-9])?"
                            r"(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?"
                            r"([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$"
                        ),
                    ),
                    "topologyKeyType": String(enum=(TOPOLOGY_KEY_LABEL, TOPOLOGY_KEY_CLAIM)),
                    "maxSkew": Integer(minimum=1, default=1),
                    "whenUnsatisfiable": String(
                        enum=(DO_NOT_SCHEDULE, SCHEDULE_ANYWAY), default=SCHEDULE_ANYWAY
                    ),
                },
                required=("topologyKey", "topologyKeyType"),
            ),
        )
    }
)

_TOLERATIONS = Array(
    items=Object(
        properties={
            "key": String(max_length=316, pattern=QUALIFIED_NAME),
            "operator": String(default=OP_EQUAL),  # no enum, as for mode
            "value": String(max_length=1024),
            "effect": String(enum=TAINT_EFFECTS),
        }
    )
)

_DECISION_STRATEGY = Object(
    properties={
        "groupStrategy": Object(
            properties={
                "decisionGroups": Array(
                    items=Object(
                        properties={
                            "groupName": String(
                                pattern=r"^[a-zA-Z0-9][-A-Za-z0-9_.]{0,61}[a-zA-Z0-9]$"
                            ),
                            "groupClusterSelector": _CLUSTER_SELECTOR,
                        },
                        required=("groupClusterSelector", "groupName"),
                    )
                ),
                # An int-or-string: a number passes, a string must match.
                "clustersPerDecisionGroup": String(
                    pattern=r"^((100|[1-9][0-9]{0,1})%|[1-9][0-9]*)$", default="100%"
                ),
            }
        )
    }
)

_PLACEMENT = Object(
    properties={
        "spec": Object(
            properties={
                "predicates": Array(
                    items=Object(properties={"requiredClusterSelector": _CLUSTER_SELECTOR})
                ),
                "prioritizerPolicy": _PRIORITIZER_POLICY,
                "spreadPolicy": _SPREAD_POLICY,
                "tolerations": _TOLERATIONS,
                "decisionStrategy": _DECISION_STRATEGY,
                "sortBy": String(
                    enum=(SORT_BY_CLUSTER_NAME, SORT_BY_SCORE), default=SORT_BY_CLUSTER_NAME
                ),
                "scoreRateLimit": String(pattern=r"^[0-9]+[hms]$", default="1m"),
            }
        ),
        "status": Object(
            properties={
                "conditions": CONDITIONS_BY_TYPE,
                "decisionGroups": Array(
                    items=Object(properties={"clusterCount": Integer(default=0)})
                ),
            }
        ),
    },
    required=("spec",),
)

_PLACEMENT_DECISION = Object(
    properties={
        "status": Object(
            properties={"decisions": Array(items=Object(required=("clusterName", "reason")))},
            required=("decisions",),
        )
    }
)

_ADD_ON_PLACEMENT_SCORE = Object(
    properties={
        "status": Object(
            properties={
                "conditions": CONDITIONS_BY_TYPE,
                "scores": Array(
                    items=Object(
                        properties={"value": Integer(minimum=-100, maximum=100)},
                        required=("name", "value"),
                    ),
                    list_type="map",
                    list_map_keys=("name",),
                ),
            }
        )
    }
)

PLUGINS = [
    schema_plugin(f"{GROUP}/v1beta1", "Placement", _PLACEMENT),
    schema_plugin(f"{GROUP}/v1beta1", "PlacementDecision", _PLACEMENT_DECISION),
    schema_plugin(f"{GROUP}/v1alpha1", "AddOnPlacementScore", _ADD_ON_PLACEMENT_SCORE),
]
