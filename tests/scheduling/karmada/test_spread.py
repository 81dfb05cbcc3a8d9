"""Cluster selection under spread constraints, ported from core/spreadconstraint's tests."""

from __future__ import annotations

from typing import Any

import pytest

from fleetwarden.scheduling.karmada.framework import ScheduleError
from fleetwarden.scheduling.karmada.spread import (
    Group,
    select_best_clusters,
    select_groups,
    sort_key,
    spread_ignored,
)

from .helpers import AGGREGATED, DUPLICATED, DYNAMIC, detail, placement, weights


def groups(*triples: tuple[str, int, int]) -> list[Group]:
    return [Group(name, value, weight) for name, value, weight in triples]


@pytest.mark.parametrize(
    ("given", "minimum", "maximum", "target", "expected"),
    [
        pytest.param([], 2, 3, 1, [], id="empty groups"),
        pytest.param(groups(("R1", 1, 80)), 2, 3, 1, [], id="no enough groups"),
        pytest.param(groups(("R1", 1, 80), ("R2", 2, 30)), 2, 3, 4, [], id="no enough value"),
        pytest.param(groups(("R1", 1, 80)), 1, 3, 1, ["R1"], id="select one group"),
        pytest.param(
            groups(("R1", 1, 80), ("R3", 1, 80), ("R2", 1, 60), ("R5", 2, 60), ("R4", 5, 50), ("R6", 3, 50)),
            1, 3, 10, ["R5", "R4", "R6"], id="prioritize one path",
        ),
        pytest.param(
            groups(("R1", 1, 80), ("R2", 4, 40), ("R3", 1, 30), ("R4", 3, 30), ("R5", 3, 20), ("R6", 5, 10)),
            2, 6, 5, ["R1", "R2"], id="select groups with less total number",
        ),
        pytest.param(
            groups(("R1", 1, 60), ("R2", 1, 50), ("R3", 1, 40), ("R4", 3, 30), ("R5", 3, 20), ("R6", 3, 10)),
            1, 3, 6, ["R1", "R4", "R5"], id="select groups with the highest score",
        ),
        pytest.param(
            groups(("R1", 1, 60), ("R2", 2, 50), ("R3", 3, 40), ("R4", 4, 30)),
            1, 2, 5, ["R1", "R4"], id="select groups that are chosen earlier",
        ),
        pytest.param(
            groups(("R4", 1, 60), ("R3", 3, 50), ("R1", 3, 40), ("R2", 4, 30)),
            1, 2, 5, ["R3", "R1"], id="select groups with greater value",
        ),
        pytest.param(groups(("R1", 1, 10), ("R2", 1, 20)), 2, 2, 1, ["R2", "R1"], id="every group needed"),
    ],
)  # fmt: skip
def test_select_groups(
    given: list[Group], minimum: int, maximum: int, target: int, expected: list[str]
) -> None:
    assert [g.name for g in select_groups(given, minimum, maximum, target)] == expected


def spread(*constraints: dict[str, Any], strategy: dict[str, Any] | None = DUPLICATED) -> Any:
    data: dict[str, Any] = {"spreadConstraints": list(constraints)}
    if strategy is not None:
        data["replicaScheduling"] = strategy
    return placement(data)


def by_cluster(minimum: int, maximum: int) -> dict[str, Any]:
    return {"spreadByField": "cluster", "minGroups": minimum, "maxGroups": maximum}


def by_region(minimum: int, maximum: int) -> dict[str, Any]:
    return {"spreadByField": "region", "minGroups": minimum, "maxGroups": maximum}


def names(selected: list[Any]) -> list[str]:
    return [d.name for d in selected]


def test_no_spread_constraints_selects_all() -> None:
    clusters = [detail("m1"), detail("m2")]
    assert names(select_best_clusters(placement({}), clusters, 1)) == ["m1", "m2"]


def test_static_weights_ignore_spread_constraints() -> None:
    p = spread(by_cluster(1, 1), strategy=weights(("m1", 1)))
    assert spread_ignored(p)
    assert names(select_best_clusters(p, [detail("m1"), detail("m2")], 3)) == ["m1", "m2"]
    assert not spread_ignored(spread(by_cluster(1, 1), strategy=DYNAMIC))


def test_seed_duplicated_two_of_four() -> None:
    """Seed 002: minGroups = maxGroups = 2 of member1/2/3/5: the best two, by score then name."""
    clusters = sorted(
        [detail(n, available=2) for n in ("member1", "member2", "member3", "member5")], key=sort_key
    )
    assert names(select_best_clusters(spread(by_cluster(2, 2)), clusters, 2)) == [
        "member1",
        "member2",
    ]
    rescheduled = sorted(
        [
            detail("member1", available=2, score=100),
            detail("member3", available=2),
            detail("member5", available=2),
        ],
        key=sort_key,
    )
    assert names(select_best_clusters(spread(by_cluster(2, 2)), rescheduled, 2)) == [
        "member1",
        "member3",
    ]


def test_by_cluster_errors() -> None:
    with pytest.raises(
        ScheduleError,
        match=r"^the number of feasible clusters is less than spreadConstraint.MinGroups$",
    ):
        select_best_clusters(spread(by_cluster(3, 3)), [detail("m1"), detail("m2")], 1)
    with pytest.raises(ScheduleError, match=r"^no enough resource when selecting 2 clusters$"):
        select_best_clusters(
            spread(by_cluster(1, 2), strategy=DYNAMIC),
            [detail("m1", available=1), detail("m2", available=1)],
            5,
        )


def test_by_cluster_swaps_in_roomier_clusters() -> None:
    """selectClustersByAvailableResource's example: member1 and member3 for 80 replicas."""
    clusters = [
        detail("member1", score=60, available=40),
        detail("member2", score=50, available=30),
        detail("member3", score=40, available=60),
    ]
    got = select_best_clusters(spread(by_cluster(1, 2), strategy=AGGREGATED), clusters, 80)
    assert names(got) == ["member1", "member3"]


def test_duplicated_ignores_room() -> None:
    clusters = [detail("m1", available=0), detail("m2", available=0)]
    assert names(select_best_clusters(spread(by_cluster(1, 1)), clusters, 50)) == ["m1"]


def test_spread_by_label_or_zone_alone_is_refused() -> None:
    p = spread({"spreadByLabel": "team", "minGroups": 1, "maxGroups": 1})
    with pytest.raises(ScheduleError, match=r"^just support cluster and region spread constraint$"):
        select_best_clusters(p, [detail("m1")], 1)


def regional(*specs: tuple[str, str, int]) -> list[Any]:
    return sorted([detail(n, region=r, available=a) for n, r, a in specs], key=sort_key)


def test_by_region_picks_regions_then_best_clusters() -> None:
    clusters = regional(("a1", "east", 5), ("a2", "east", 4), ("b1", "west", 3), ("c1", "north", 9))
    p = spread(by_region(2, 2), by_cluster(3, 3))
    # Duplicated group score: clusters with room for all 2 replicas count first.
    assert names(select_best_clusters(p, clusters, 2)) == ["a1", "c1", "a2"]


def test_by_region_errors() -> None:
    clusters = regional(("a1", "east", 5), ("b1", "west", 3))
    with pytest.raises(
        ScheduleError,
        match=r"^the number of feasible region is less than spreadConstraint.MinGroups$",
    ):
        select_best_clusters(spread(by_region(3, 3), by_cluster(1, 3)), clusters, 1)
    with pytest.raises(
        ScheduleError,
        match=r"^the number of clusters is less than the cluster spreadConstraint.MinGroups$",
    ):
        select_best_clusters(spread(by_region(1, 2), by_cluster(3, 3)), clusters, 1)


def test_by_region_divided_scores_room() -> None:
    """calcGroupScore (Divided): a region that holds its share of the replicas wins."""
    clusters = regional(
        ("a1", "east", 1), ("a2", "east", 1), ("b1", "west", 50), ("c1", "north", 10)
    )
    p = spread(by_region(1, 1), by_cluster(1, 2), strategy=DYNAMIC)
    assert names(select_best_clusters(p, clusters, 20)) == ["b1"]
