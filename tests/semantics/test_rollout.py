"""OCM's rollout strategies: which clusters get the workload now. Cases after sdk-go
pkg/apis/cluster/v1alpha1/rollout_test.go."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from fleetwarden.api.ocm.work import RolloutStrategy
from fleetwarden.semantics.rollout import (
    ClusterStatus,
    GroupKey,
    RolloutError,
    Status,
    rollout,
    rollout_size,
)

NOW = datetime(2025, 1, 1, 12, 0, tzinfo=UTC)
G0, G1 = GroupKey(0, "canary"), GroupKey(1, "prod")
GROUPS = {
    G0: frozenset({"cluster1", "cluster2"}),
    G1: frozenset({"cluster3", "cluster4", "cluster5"}),
}


def strategy(type_: str, **config: Any) -> RolloutStrategy:
    field = {"Progressive": "progressive", "ProgressivePerGroup": "progressivePerGroup"}
    body = {field[type_]: config} if type_ in field else {"all": config}
    return RolloutStrategy.model_validate({"type": type_, **body})


def names(statuses: list[ClusterStatus]) -> list[str]:
    return [s.cluster for s in statuses]


def at(seconds: int) -> datetime:
    return NOW - timedelta(seconds=seconds)


def test_all_rolls_out_to_every_cluster_not_done_and_removes_the_undecided() -> None:
    existing = [
        ClusterStatus("cluster1", Status.SUCCEEDED, at(60)),
        ClusterStatus("cluster2", Status.PROGRESSING, at(60)),
        ClusterStatus("gone", Status.SUCCEEDED, at(60)),
    ]
    result = rollout(strategy("All"), GROUPS, existing, NOW)
    assert names(result.to_rollout) == ["cluster2", "cluster3", "cluster4", "cluster5"]
    assert names(result.removed) == ["gone"]


def test_progressive_rolls_out_max_concurrency_clusters_by_name() -> None:
    result = rollout(strategy("Progressive", maxConcurrency=2), GROUPS, [], NOW)
    assert names(result.to_rollout) == ["cluster1", "cluster2"]
    # cluster1 done, cluster2 still under way: one more place.
    existing = [ClusterStatus("cluster1", Status.SUCCEEDED, at(10)),
                ClusterStatus("cluster2", Status.PROGRESSING, at(10))]  # fmt: skip
    result = rollout(strategy("Progressive", maxConcurrency=2), GROUPS, existing, NOW)
    assert names(result.to_rollout) == ["cluster2", "cluster3"]


def test_a_percentage_is_of_the_clusters_rounded_up() -> None:
    assert rollout_size("50%", 5, 5) == 3
    assert rollout_size(0, 5, 5) == 5  # not positive: the default
    assert rollout_size(9, 5, 5) == 5  # above the total: the default
    result = rollout(strategy("Progressive", maxConcurrency="40%"), GROUPS, [], NOW)
    assert names(result.to_rollout) == ["cluster1", "cluster2"]


def test_a_cluster_progressing_past_the_deadline_times_out_and_frees_its_place() -> None:
    config = {"maxConcurrency": 1, "progressDeadline": "5m", "maxFailures": 1}
    existing = [ClusterStatus("cluster1", Status.PROGRESSING, at(120))]
    result = rollout(strategy("Progressive", **config), GROUPS, existing, NOW)
    assert names(result.to_rollout) == ["cluster1"]
    assert result.recheck_at(NOW) == at(120) + timedelta(minutes=5)
    existing = [ClusterStatus("cluster1", Status.PROGRESSING, at(300))]
    result = rollout(strategy("Progressive", **config), GROUPS, existing, NOW)
    assert names(result.timed_out) == ["cluster1"]
    assert names(result.to_rollout) == ["cluster2"]


def test_more_failures_than_allowed_stops_the_rollout() -> None:
    existing = [ClusterStatus("cluster1", Status.FAILED, at(10)),
                ClusterStatus("cluster2", Status.FAILED, at(10))]  # fmt: skip
    config = {"maxConcurrency": 3, "maxFailures": 1}
    result = rollout(strategy("Progressive", **config), GROUPS, existing, NOW)
    assert result.max_failure_breach
    assert names(result.to_rollout) == ["cluster1", "cluster2"]  # failed, no deadline: kept


def test_a_succeeded_cluster_soaks_for_min_success_time() -> None:
    config = {"maxConcurrency": 1, "minSuccessTime": "1m"}
    existing = [ClusterStatus("cluster1", Status.SUCCEEDED, at(30))]
    result = rollout(strategy("Progressive", **config), GROUPS, existing, NOW)
    assert names(result.to_rollout) == ["cluster1"]
    assert result.recheck_at(NOW) == at(30) + timedelta(minutes=1)
    existing = [ClusterStatus("cluster1", Status.SUCCEEDED, at(60))]
    result = rollout(strategy("Progressive", **config), GROUPS, existing, NOW)
    assert names(result.to_rollout) == ["cluster2"]


def test_progressive_per_group_waits_for_each_group_in_index_order() -> None:
    result = rollout(strategy("ProgressivePerGroup"), GROUPS, [], NOW)
    assert names(result.to_rollout) == ["cluster1", "cluster2"]
    half = [ClusterStatus("cluster1", Status.SUCCEEDED, at(10)),
            ClusterStatus("cluster2", Status.PROGRESSING, at(10))]  # fmt: skip
    result = rollout(strategy("ProgressivePerGroup"), GROUPS, half, NOW)
    assert names(result.to_rollout) == ["cluster2"]
    done = [ClusterStatus("cluster1", Status.SUCCEEDED, at(10)),
            ClusterStatus("cluster2", Status.SUCCEEDED, at(10))]  # fmt: skip
    result = rollout(strategy("ProgressivePerGroup"), GROUPS, done, NOW)
    assert names(result.to_rollout) == ["cluster3", "cluster4", "cluster5"]


def test_mandatory_decision_groups_go_first_whole() -> None:
    config = {"maxConcurrency": 1, "mandatoryDecisionGroups": [{"groupName": "prod"}]}
    result = rollout(strategy("Progressive", **config), GROUPS, [], NOW)
    assert names(result.to_rollout) == ["cluster3", "cluster4", "cluster5"]
    done = [
        ClusterStatus(c, Status.SUCCEEDED, at(10)) for c in ("cluster3", "cluster4", "cluster5")
    ]
    result = rollout(strategy("Progressive", **config), GROUPS, done, NOW)
    assert names(result.to_rollout) == ["cluster1"]


@pytest.mark.parametrize(
    ("given", "message"),
    [
        (strategy("Progressive", maxConcurrency="two"),
         "'two' is an invalid maximum threshold value: string is not a percentage"),
        (RolloutStrategy(type="Canary"), "incorrect rollout strategy type Canary"),
        (strategy("All", progressDeadline="soon"), "invalid timeout format"),
    ],
)  # fmt: skip
def test_a_strategy_that_cannot_be_followed_says_why(given: RolloutStrategy, message: str) -> None:
    with pytest.raises(RolloutError, match=message):
        rollout(given, GROUPS, [], NOW)
