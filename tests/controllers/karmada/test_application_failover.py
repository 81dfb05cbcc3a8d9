"""The application failover controller's rules, with the cases of upstream's
pkg/controllers/applicationfailover/common_test.go, pkg/util/helper/failover_test.go and
the binding controller's injectReservedLabelState."""

from __future__ import annotations

from typing import Any

import pytest

from fleetwarden.api.karmada.policy import StatePreservationRule
from fleetwarden.api.karmada.work import AggregatedStatusItem, ResourceBindingSpec, TargetCluster
from fleetwarden.controllers.karmada.application_failover import (
    FailoverError,
    _distinguish,
    preserved_label_state,
    preserved_labels,
)


def rules(*pairs: tuple[str, str]) -> list[StatePreservationRule]:
    return [StatePreservationRule(alias_label_name=a, json_path=p) for a, p in pairs]


def test_build_preserved_label_state() -> None:
    status = {"replicas": 2, "health": True}
    got = preserved_label_state(rules(("key-a", "{ .replicas }"), ("key-b", "{ .health }")), status)
    assert got == {"key-a": "2", "key-b": "true"}


@pytest.mark.parametrize("path", ["{ .notfound }", "{ %health }"], ids=["not found", "invalid"])
def test_build_preserved_label_state_errors(path: str) -> None:
    with pytest.raises(FailoverError):
        preserved_label_state(rules(("key-a", "{ .replicas }"), ("key-b", path)), {"replicas": 2})


def spec(**fields: Any) -> ResourceBindingSpec:
    return ResourceBindingSpec.model_validate(fields)


def test_distinguish_unhealthy_clusters_with_others() -> None:
    items = [
        AggregatedStatusItem(cluster_name=name, health=health)
        for name, health in [
            ("member1", "Healthy"), ("member2", "Unhealthy"), ("member3", "Unknown"),
            ("member4", "Unhealthy"),
        ]
    ]  # fmt: skip
    evicting = spec(
        gracefulEvictionTasks=[{"fromCluster": "member4", "reason": "r", "producer": "p"}]
    )
    assert _distinguish(items, evicting) == (["member2"], ["member1", "member3"])


TASK = {
    "fromCluster": "member1",
    "purgeMode": "Directly",
    "reason": "ApplicationFailure",
    "producer": "p",
    "preservedLabelState": {"key-a": "2"},
    "clustersBeforeFailover": ["member1"],
}


@pytest.mark.parametrize(
    ("fields", "target", "expected"),
    [
        ({"clusters": [{"name": "member2"}], "gracefulEvictionTasks": [TASK]}, "member2",
         {"key-a": "2"}),
        ({"clusters": [{"name": "member2"}, {"name": "member3"}], "gracefulEvictionTasks": [TASK]},
         "member2", {}),
        ({"clusters": [{"name": "member2"}]}, "member2", {}),
        ({"clusters": [{"name": "member2"}],
          "gracefulEvictionTasks": [{**TASK, "purgeMode": "Gracefully"}]}, "member2", {}),
        ({"clusters": [{"name": "member1"}], "gracefulEvictionTasks": [TASK]}, "member1", {}),
    ],
    ids=["moved to one cluster", "more than one cluster", "no task", "not Directly",
         "back where it was"],
)  # fmt: skip
def test_inject_reserved_label_state(fields: Any, target: str, expected: dict[str, str]) -> None:
    assert preserved_labels(spec(**fields), TargetCluster(name=target)) == expected
