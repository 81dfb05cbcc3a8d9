"""autoscaling/v1 HorizontalPodAutoscalers converted to and from v2, as kube-apiserver's
conversion does (pkg/apis/autoscaling/v1/conversion.go)."""

from __future__ import annotations

import json
from typing import Any

from fleetwarden.api.autoscaling import (
    BEHAVIOR,
    CONDITIONS,
    CURRENT_METRICS,
    METRICS,
    to_v1,
    to_v2,
)

REF = {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"}
CPU_80 = {
    "type": "Resource",
    "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 80}},
}
QPS = {
    "type": "Pods",
    "pods": {"metric": {"name": "qps"}, "target": {"type": "AverageValue", "averageValue": "1k"}},
}
QUEUE = {
    "type": "External",
    "external": {
        "metric": {"name": "queue", "selector": {"matchLabels": {"q": "jobs"}}},
        "target": {"type": "Value", "value": "30"},
    },
}
BEHAVIOR_V2 = {"scaleDown": {"stabilizationWindowSeconds": 60,
                             "policies": [{"type": "Pods", "value": 1, "periodSeconds": 60}]}}  # fmt: skip
CONDITION = {"type": "AbleToScale", "status": "True", "reason": "ReadyForNewScale",
             "lastTransitionTime": "2026-01-01T00:00:00Z"}  # fmt: skip


def hpa(api_version: str, spec: dict[str, Any], **meta: Any) -> dict[str, Any]:
    return {
        "apiVersion": api_version,
        "kind": "HorizontalPodAutoscaler",
        "metadata": {"name": "web", "namespace": "default", **meta},
        "spec": spec,
    }


def test_a_v1_hpa_without_a_target_gets_upstream_s_80_percent_cpu() -> None:
    v2 = to_v2(hpa("autoscaling/v1", {"scaleTargetRef": REF, "maxReplicas": 5}))
    assert v2["apiVersion"] == "autoscaling/v2"
    assert v2["spec"] == {"scaleTargetRef": REF, "maxReplicas": 5, "metrics": [CPU_80]}
    v1 = to_v1(v2)
    assert v1["spec"] == {"scaleTargetRef": REF, "maxReplicas": 5,
                          "targetCPUUtilizationPercentage": 80}  # fmt: skip
    assert "annotations" not in v1["metadata"]


def test_what_v1_cannot_say_travels_in_annotations_in_its_own_metric_shapes() -> None:
    v2 = hpa("autoscaling/v2", {"scaleTargetRef": REF, "minReplicas": 2, "maxReplicas": 9,
                                "metrics": [CPU_80, QPS, QUEUE], "behavior": BEHAVIOR_V2})  # fmt: skip
    v2["status"] = {
        "currentReplicas": 3,
        "desiredReplicas": 4,
        "currentMetrics": [
            {"type": "Resource",
             "resource": {"name": "cpu", "current": {"averageUtilization": 55, "averageValue": "550m"}}},
            {"type": "Pods", "pods": {"metric": {"name": "qps"}, "current": {"averageValue": "900"}}},
        ],
        "conditions": [CONDITION],
    }  # fmt: skip
    v1 = to_v1(v2)
    assert v1["spec"] == {"scaleTargetRef": REF, "minReplicas": 2, "maxReplicas": 9,
                          "targetCPUUtilizationPercentage": 80}  # fmt: skip
    assert v1["status"] == {"currentReplicas": 3, "desiredReplicas": 4,
                            "currentCPUUtilizationPercentage": 55}  # fmt: skip
    annotations = v1["metadata"]["annotations"]
    assert annotations[METRICS] == (
        '[{"type":"Pods","pods":{"metricName":"qps","targetAverageValue":"1k"}},'
        '{"type":"External","external":{"metricName":"queue","metricSelector":'
        '{"matchLabels":{"q":"jobs"}},"targetValue":"30"}}]'
    )
    assert annotations[CURRENT_METRICS] == (
        '[{"type":"Resource","resource":{"name":"cpu","currentAverageUtilization":55,'
        '"currentAverageValue":"550m"}},'
        '{"type":"Pods","pods":{"metricName":"qps","currentAverageValue":"900"}}]'
    )
    assert json.loads(annotations[BEHAVIOR]) == BEHAVIOR_V2
    assert json.loads(annotations[CONDITIONS]) == [CONDITION]

    back = to_v2(v1)  # a v1 client's read-modify-write keeps it all
    assert "annotations" not in back["metadata"]
    # Upstream appends the CPU target after the annotation's metrics.
    assert back["spec"] == {**v2["spec"], "metrics": [QPS, QUEUE, CPU_80]}
    assert back["status"] == v2["status"]


def test_round_trip_annotations_are_the_conversion_s_own() -> None:
    stale = {METRICS: '[{"type":"Pods"}]', "team": "a"}
    v1 = to_v1(hpa("autoscaling/v2", {"scaleTargetRef": REF, "maxReplicas": 2,
                                      "metrics": [CPU_80]}, annotations=stale))  # fmt: skip
    assert v1["metadata"]["annotations"] == {"team": "a"}
    broken = {METRICS: "[not json", BEHAVIOR: '"scaleUp"', "team": "a"}
    v2 = to_v2(hpa("autoscaling/v1", {"scaleTargetRef": REF, "maxReplicas": 2,
                                      "targetCPUUtilizationPercentage": 50}, annotations=broken))  # fmt: skip
    assert v2["metadata"]["annotations"] == {"team": "a"}
    assert v2["spec"]["metrics"] == [
        {"type": "Resource",
         "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 50}}}
    ]  # fmt: skip
