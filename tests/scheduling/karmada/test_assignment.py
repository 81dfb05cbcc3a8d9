"""Replica assignment, ported from core/assignment_test.go and helper's webster tests."""

from __future__ import annotations

from typing import Any

import pytest

from fleetwarden.scheduling.karmada.assignment import (
    AssignRequest,
    assign_replicas_to_clusters,
    assign_workload_replicas,
    merge_targets,
    static_weights,
)
from fleetwarden.scheduling.karmada.framework import ScheduleError, UnschedulableError
from fleetwarden.scheduling.karmada.webster import (
    Target,
    allocate_webster_seats,
    fnv32a,
    names_descending,
    spread_by_weights,
)

from .helpers import (
    AGGREGATED,
    DUPLICATED,
    DYNAMIC,
    detail,
    placement,
    weights,
)

M1, M2, M3, M4 = "member1", "member2", "member3", "member4"


def request(
    strategy: dict[str, Any], replicas: int, scheduled: list[tuple[str, int]] = (), **kw: Any
) -> AssignRequest:  # type: ignore[assignment]
    return AssignRequest(
        replicas=replicas,
        placement=placement({"replicaScheduling": strategy}),
        scheduled=[Target(n, r) for n, r in scheduled],
        **kw,
    )


def result(targets: list[Target]) -> dict[str, int]:
    return {t.name: t.replicas for t in targets}


# --- static weights (Test_assignByStaticWeightStrategy) ----------------------------------------


@pytest.mark.parametrize(
    ("strategy", "replicas", "want"),
    [
        pytest.param(weights((M1, 3), (M2, 2), (M3, 1)), 12, {M1: 6, M2: 4, M3: 2}, id="replica 12, weight 3:2:1"),
        pytest.param({"replicaSchedulingType": "Divided", "replicaDivisionPreference": "Weighted"}, 12, {M1: 4, M2: 4, M3: 4}, id="replica 12, default weight"),
        pytest.param(weights((M1, 3), (M2, 2), (M3, 1)), 13, {M1: 7, M2: 4, M3: 2}, id="replica 13, weight 3:2:1"),
        pytest.param(weights((M1, 3), (M2, 2), (M3, 1)), 14, {M1: 7, M2: 5, M3: 2}, id="replica 14, weight 3:2:1"),
        pytest.param(weights((M1, 1)), 2, {M1: 2}, id="selected cluster without weight should be ignored"),
        pytest.param(weights((M1, 1), (M2, 1), (M1, 2)), 3, {M1: 2, M2: 1}, id="cluster with multiple weights"),
        pytest.param(weights((M4, 1)), 3, {M1: 1, M2: 1, M3: 1}, id="no entry matches: every cluster weighs 1"),
        pytest.param(weights((M1, 1), (M2, 2)), 3, {M1: 1, M2: 2}, id="seed 002: weights 1:2, 3 replicas"),
    ],
)  # fmt: skip
def test_static_weight(strategy: dict[str, Any], replicas: int, want: dict[str, int]) -> None:
    clusters = [detail(M1), detail(M2), detail(M3)]
    got = assign_replicas_to_clusters(clusters, request(strategy, replicas))
    assert result(got) == want


def test_static_weight_zero_replicas_gives_no_cluster() -> None:
    """Upstream's "insufficient replica assignment should get 0 replica": the 0s are dropped."""
    clusters = [detail(M1), detail(M2)]
    assert assign_replicas_to_clusters(clusters, request(weights((M1, 1), (M2, 1)), 0)) == []
    assert static_weights(clusters, []) == [(M1, 1), (M2, 1)]


def test_seed_divided_member1_evicted() -> None:
    """Seed 002: member1 fails, member2 (weight 2) is the only candidate and takes all 3."""
    got = assign_replicas_to_clusters(
        [detail(M2)], request(weights((M1, 1), (M2, 2)), 3, [(M2, 2)])
    )
    assert result(got) == {M2: 3}


# --- dynamic scaling (Test_dynamicScale, Test_dynamicScaleUp) ---------------------------------


def room(*pairs: tuple[str, int]) -> list[Any]:
    return [detail(n, available=r) for n, r in pairs]


@pytest.mark.parametrize(
    ("strategy", "candidates", "replicas", "scheduled", "want"),
    [
        pytest.param(DYNAMIC, room((M1, 1), (M2, 1), (M3, 1)), 6, [(M1, 2), (M2, 4), (M3, 6)], {M1: 1, M2: 2, M3: 3}, id="replica 12 -> 6, dynamic weighted 1:1:1"),
        pytest.param(DYNAMIC, room((M1, 10), (M2, 10), (M3, 10)), 24, [(M1, 2), (M2, 4), (M3, 6)], {M1: 6, M2: 8, M3: 10}, id="replica 12 -> 24, dynamic weighted 10:10:10"),
        pytest.param(AGGREGATED, room((M1, 1), (M2, 1), (M3, 1)), 6, [(M1, 4), (M2, 8)], {M2: 6}, id="replica 12 -> 6, aggregated 1:1:1"),
        pytest.param(AGGREGATED, room((M1, 100), (M2, 100)), 8, [(M1, 4), (M2, 8)], {M2: 8}, id="replica 12 -> 8, aggregated 100:100"),
        pytest.param(AGGREGATED, room((M1, 4), (M2, 6), (M3, 8)), 24, [(M1, 4), (M2, 8)], {M1: 7, M2: 12, M3: 5}, id="replica 12 -> 24, aggregated 4:6:8"),
        pytest.param(AGGREGATED, room((M1, 6), (M2, 6), (M3, 20)), 24, [(M1, 4), (M2, 8)], {M1: 10, M2: 14}, id="replica 12 -> 24, aggregated 6:6:20"),
        pytest.param(AGGREGATED, room((M1, 4), (M3, 8), (M4, 12)), 24, [(M1, 4), (M2, 8)], {M1: 7, M3: 7, M4: 10}, id="aggregated 4:8:12, cluster2 gone and cluster4 new"),
        pytest.param(DYNAMIC, room((M1, 6), (M2, 8), (M3, 10)), 12, [], {M1: 3, M2: 4, M3: 5}, id="replica 12, dynamic weight 6:8:10"),
        pytest.param(DYNAMIC, room((M1, 8), (M2, 8), (M3, 10)), 12, [], {M1: 4, M2: 4, M3: 4}, id="replica 12, dynamic weight 8:8:10"),
        pytest.param(AGGREGATED, room((M1, 6), (M2, 8), (M3, 10)), 12, [], {M2: 5, M3: 7}, id="replica 12, aggregated 6:8:10"),
        pytest.param(AGGREGATED, room((M1, 12), (M2, 8), (M3, 10)), 12, [], {M1: 12}, id="replica 12, aggregated 12:8:10"),
        pytest.param(DYNAMIC, room((M1, 3), (M2, 3)), 12, [(M1, 6), (M3, 6)], {M1: 9, M2: 3}, id="dynamic weight 3:3, cluster3 gone and cluster2 new"),
        pytest.param(DYNAMIC, room((M1, 5)), 5, [(M1, 5)], {M1: 5}, id="nothing to change"),
    ],
)  # fmt: skip
def test_dynamic(
    strategy: dict[str, Any],
    candidates: list[Any],
    replicas: int,
    scheduled: list[tuple[str, int]],
    want: dict[str, int],
) -> None:
    got = assign_replicas_to_clusters(candidates, request(strategy, replicas, scheduled))
    assert result(got) == want


@pytest.mark.parametrize(
    ("strategy", "candidates", "replicas", "scheduled", "message"),
    [
        pytest.param(DYNAMIC, room((M1, 1), (M2, 1), (M3, 1)), 24, [(M1, 2), (M2, 4), (M3, 6)], "failed to scale up: Clusters available replicas 3 are not enough to schedule.", id="replica 12 -> 24, dynamic weighted 1:1:1"),
        pytest.param(AGGREGATED, room((M1, 1), (M2, 1), (M3, 1)), 24, [(M1, 4), (M2, 8)], "failed to scale up: Clusters available replicas 3 are not enough to schedule.", id="replica 12 -> 24, aggregated 1:1:1"),
        pytest.param(DYNAMIC, room((M1, 3), (M2, 3), (M3, 3)), 12, [], "failed to scale up: Clusters available replicas 9 are not enough to schedule.", id="replica 12, dynamic weight 3:3:3"),
        pytest.param(AGGREGATED, room((M1, 3), (M2, 3), (M3, 3)), 12, [], "failed to scale up: Clusters available replicas 9 are not enough to schedule.", id="replica 12, aggregated 3:3:3"),
    ],
)  # fmt: skip
def test_dynamic_short_of_room(
    strategy: dict[str, Any],
    candidates: list[Any],
    replicas: int,
    scheduled: list[tuple[str, int]],
    message: str,
) -> None:
    """Test_assignByDynamicStrategy_UnschedulableErrorPreserved: the kind survives wrapping."""
    with pytest.raises(UnschedulableError) as caught:
        assign_replicas_to_clusters(candidates, request(strategy, replicas, scheduled))
    assert str(caught.value) == message


def test_fresh_reschedule_divides_everything_again() -> None:
    """rescheduleTriggeredAt: all 10 by room 10:6 (what runs counted in), not 6 kept on member1
    plus 4 more by room 4:6."""
    candidates = [detail(M1, available=10, allocatable=4), detail(M2, available=6, allocatable=6)]
    steady = assign_replicas_to_clusters(candidates, request(DYNAMIC, 10, [(M1, 6)]))
    fresh = assign_replicas_to_clusters(candidates, request(DYNAMIC, 10, [(M1, 6)], fresh=True))
    assert result(steady) == {M1: 8, M2: 2}
    assert result(fresh) == {M1: 6, M2: 4}


# --- duplicated, overflow, unsupported ----------------------------------------------------------


@pytest.mark.parametrize(
    ("names", "replicas", "want"),
    [
        pytest.param([M1, M2], 2, {M1: 2, M2: 2}, id="test with multiple cluster"),
        pytest.param([], 2, {}, id="the target cluster is null"),
        pytest.param([M1, M2], 0, {}, id="replicas is null: zero replicas are dropped"),
    ],
)  # fmt: skip
def test_duplicated(names: list[str], replicas: int, want: dict[str, int]) -> None:
    got = assign_replicas_to_clusters([detail(n) for n in names], request(DUPLICATED, replicas))
    assert result(got) == want


def test_overflow_fills_tiers_in_order() -> None:
    clusters = [
        detail(M1, available=3, order=0),
        detail(M2, available=4, order=1),
        detail(M3, available=9, order=2),
    ]
    got = assign_workload_replicas(clusters, request(DYNAMIC, 6, overflow=True))
    assert result(got) == {M1: 3, M2: 3}
    with pytest.raises(UnschedulableError, match="Clusters available replicas are not enough"):
        assign_workload_replicas(clusters, request(DYNAMIC, 20, overflow=True))


def test_unsupported_strategy() -> None:
    strategy = {"replicaSchedulingType": "Divided", "replicaDivisionPreference": "Spread"}
    with pytest.raises(ScheduleError) as caught:
        assign_replicas_to_clusters([detail(M1)], request(strategy, 1))
    assert str(caught.value) == (
        "unsupported replica scheduling strategy, replicaSchedulingType: Divided, "
        "replicaDivisionPreference: Spread, please try another scheduling strategy"
    )


# --- Webster ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("seats", "votes", "initial", "descending", "want"),
    [
        pytest.param(10, {"a": 1, "b": 1}, {}, False, {"a": 5, "b": 5}, id="equal votes"),
        pytest.param(3, {"a": 1, "b": 1}, {}, False, {"a": 2, "b": 1}, id="tie goes to the smaller name"),
        pytest.param(3, {"a": 1, "b": 1}, {}, True, {"a": 1, "b": 2}, id="tie goes to the larger name"),
        pytest.param(1, {"a": 1, "b": 1}, {"a": 1}, False, {"a": 1, "b": 1}, id="tie goes to fewer seats"),
        pytest.param(2, {"a": 1}, {"z": 3}, False, {"a": 2, "z": 3}, id="a party with seats and no votes keeps them"),
        pytest.param(7, {"a": 5, "b": 2}, {}, False, {"a": 5, "b": 2}, id="Sainte-Lague 5:2"),
        pytest.param(0, {}, {}, False, {}, id="nobody"),
    ],
)  # fmt: skip
def test_webster(
    seats: int,
    votes: dict[str, int],
    initial: dict[str, int],
    descending: bool,
    want: dict[str, int],
) -> None:
    got = allocate_webster_seats(seats, votes, initial, descending=descending)
    assert result(got) == want
    assert [t.name for t in got] == sorted(want)


def test_tie_breaker_by_uid() -> None:
    assert fnv32a("") == 0x811C9DC5
    assert fnv32a("a") == 0xE40C292C
    assert not names_descending("")
    odd = next(f"uid-{i}" for i in range(100) if fnv32a(f"uid-{i}") & 1)
    even = next(f"uid-{i}" for i in range(100) if not fnv32a(f"uid-{i}") & 1)
    assert names_descending(odd) and not names_descending(even)
    assert result(spread_by_weights(1, [("a", 1), ("b", 1)], uid=odd)) == {"a": 0, "b": 1}
    assert result(spread_by_weights(1, [("a", 1), ("b", 1)], uid=even)) == {"a": 1, "b": 0}


def test_spread_by_weights_keeps_initial_when_nothing_to_do() -> None:
    initial = [Target("a", 2)]
    assert spread_by_weights(3, [("a", 0)], initial) == initial
    assert spread_by_weights(0, [("a", 1), ("b", 1)], initial) == initial


def test_merge_targets() -> None:
    old = [Target(M1, 1), Target(M2, 2)]
    assert merge_targets([], old) == old and merge_targets(old, []) == old
    assert merge_targets(old, [Target(M2, 3), Target(M3, 1)]) == [
        Target(M2, 5),
        Target(M3, 1),
        Target(M1, 1),
    ]
