"""One scheduling pass (core/generic_scheduler.go) and the general estimator."""

from __future__ import annotations

from typing import Any

import pytest

from fleetwarden.api.karmada.cluster import ResourceSummary
from fleetwarden.api.karmada.work import ReplicaRequirements
from fleetwarden.scheduling.karmada.estimator import GeneralEstimator, requirements_key
from fleetwarden.scheduling.karmada.framework import FitError, ScheduleError, UnschedulableError
from fleetwarden.scheduling.karmada.generic_scheduler import GenericScheduler
from fleetwarden.scheduling.karmada.webster import Target

from .helpers import (
    DYNAMIC,
    SEED_DIVIDED,
    SEED_DUPLICATED,
    cluster,
    pods,
    snapshot,
    spec,
    status,
)

MEMBERS = snapshot(*(cluster(f"member{i}") for i in range(1, 6)))


def run(binding: Any, snap: Any = MEMBERS, affinity: str | None = None, **kw: Any) -> list[Target]:
    return GenericScheduler().schedule(binding, status(affinity), snap, **kw)


def test_seed_duplicated() -> None:
    """Seed 002: two of member1/2/3/5; after member2 is evicted, member1 stays and one of
    member3/member5 joins it (member3: names break the tie)."""
    assert run(spec(SEED_DUPLICATED, replicas=2)) == [Target("member1", 2), Target("member2", 2)]
    after = spec(SEED_DUPLICATED, replicas=2, clusters=[("member1", 2)], evicting=["member2"])
    assert run(after) == [Target("member1", 2), Target("member3", 2)]


def test_seed_divided() -> None:
    """Seed 002: weights 1:2 over 3 replicas; member1 evicted: member2 takes all 3."""
    assert run(spec(SEED_DIVIDED, replicas=3)) == [Target("member1", 1), Target("member2", 2)]
    after = spec(SEED_DIVIDED, replicas=3, clusters=[("member2", 2)], evicting=["member1"])
    assert run(after) == [Target("member2", 3)]


def test_duplicated_keeps_healthy_clusters_even_when_now_tainted() -> None:
    """A cluster in the result with a new NoSchedule taint is kept (the taint manager, not
    the scheduler, evicts); an untainted newcomer is not preferred to it."""
    taint = [{"key": "cluster.karmada.io/not-ready", "effect": "NoSchedule"}]
    snap = snapshot(cluster("member1", taints=taint), *(cluster(f"member{i}") for i in range(2, 6)))
    binding = spec(SEED_DUPLICATED, replicas=2, clusters=[("member1", 2), ("member5", 2)])
    assert run(binding, snap) == [Target("member1", 2), Target("member5", 2)]


def test_no_cluster_fits() -> None:
    binding = spec({"clusterAffinity": {"clusterNames": ["member9"]}}, replicas=1)
    with pytest.raises(FitError) as caught:
        run(binding)
    assert str(caught.value) == (
        "0/5 clusters are available: 5 cluster(s) did not match the placement cluster affinity constraint."
    )


def test_spread_failure_is_wrapped() -> None:
    binding = spec(
        {
            **SEED_DUPLICATED,
            "spreadConstraints": [{"spreadByField": "cluster", "minGroups": 5, "maxGroups": 5}],
        },
        replicas=1,
    )
    with pytest.raises(ScheduleError) as caught:
        run(binding)
    assert str(caught.value) == (
        "failed to select clusters: the number of feasible clusters is less than spreadConstraint.MinGroups"
    )


def test_dynamic_weight_by_resource_summary() -> None:
    """Room is (allocatable - allocated) / request: member1 has 2 cpu free for 500m pods (4),
    member2 8 (16); 10 replicas divide 4:16 as 2:8."""
    snap = snapshot(
        cluster("member1", allocatable={"cpu": "4", "pods": "100"}, allocated={"cpu": "2"}),
        cluster("member2", allocatable={"cpu": "8", "pods": "100"}),
    )
    binding = spec({"replicaScheduling": DYNAMIC}, replicas=10, requirements={"cpu": "500m"})
    assert run(binding, snap) == [Target("member1", 2), Target("member2", 8)]
    short = spec({"replicaScheduling": DYNAMIC}, replicas=30, requirements={"cpu": "500m"})
    with pytest.raises(UnschedulableError) as caught:
        run(short, snap)
    assert str(caught.value) == (
        "failed to assign replicas: failed to scale up: Clusters available replicas 20 are not enough to schedule."
    )


def test_the_accurate_estimator_bounds_the_general_one_only_when_enabled() -> None:
    """calAvailableReplicas: the smaller answer of the estimators that answer; a cluster
    whose estimator does not (None) keeps the general estimate."""
    snap = snapshot(
        cluster("member1", allocatable={"cpu": "8", "pods": "100"}),
        cluster("member2", allocatable={"cpu": "8", "pods": "100"}),
    )
    binding = spec({"replicaScheduling": DYNAMIC}, replicas=8, requirements={"cpu": "1"})
    asked: list[tuple[str, str]] = []

    def accurate(name: str, requirements: ReplicaRequirements | None) -> int | None:
        assert requirements is not None and requirements.resource_request is not None
        asked.append((name, str(requirements.resource_request["cpu"])))
        return 0 if name == "member1" else None

    scheduler = GenericScheduler(accurate=accurate)
    assert scheduler.schedule(binding, status(), snap) == [
        Target("member1", 4), Target("member2", 4)]  # fmt: skip
    assert asked == []
    assert scheduler.schedule(binding, status(), snap, scheduler_estimator=True) == [
        Target("member2", 8)]  # fmt: skip
    assert ("member1", "1") in asked


def test_scale_up_keeps_what_runs() -> None:
    snap = snapshot(pods("member1", 10), pods("member2", 10))
    binding = spec({"replicaScheduling": DYNAMIC}, replicas=6, clusters=[("member1", 4)])
    assert run(binding, snap) == [Target("member1", 5), Target("member2", 1)]


def test_non_workload_goes_everywhere_without_replicas() -> None:
    binding = spec({"replicaScheduling": DYNAMIC}, kind="ConfigMap", api_version="v1")
    snap = snapshot(
        cluster(
            "m1",
            apis=[
                {"groupVersion": "v1", "resources": [{"name": "configmaps", "kind": "ConfigMap"}]}
            ],
        )
    )
    assert run(binding, snap) == [Target("m1", 0)]


def test_empty_workload_propagation() -> None:
    binding = spec(SEED_DIVIDED, replicas=1)
    assert run(binding) == [Target("member2", 1)]
    assert run(binding, empty_workload_propagation=True) == [
        Target("member2", 1),
        Target("member1", 0),
    ]


def test_cluster_affinities_schedule_with_the_term_given() -> None:
    placement = {
        "clusterAffinities": [
            {"affinityName": "a", "clusterNames": ["member1"]},
            {"affinityName": "b", "clusterNames": ["member2"]},
        ]
    }
    assert run(spec(placement, replicas=1), affinity="b") == [Target("member2", 1)]


def test_results_are_shared_between_bindings_alike() -> None:
    scheduler = GenericScheduler()
    first = scheduler.schedule(spec(SEED_DUPLICATED, replicas=2), status(), MEMBERS)
    again = scheduler.schedule(spec(SEED_DUPLICATED, replicas=2, uid="other"), status(), MEMBERS)
    assert first == again


# --- the general estimator ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("summary", "requests", "want"),
    [
        pytest.param(None, {"cpu": "1"}, 0, id="no resource summary"),
        pytest.param({"allocatable": {"pods": "10"}}, None, 10, id="no requirements: pods allowed"),
        pytest.param(
            {"allocatable": {"pods": "10"}, "allocated": {"pods": "12"}},
            None,
            0,
            id="pods overcommitted",
        ),
        pytest.param(
            {"allocatable": {"cpu": "2", "pods": "100"}}, {"cpu": "300m"}, 6, id="cpu in millicores"
        ),
        pytest.param(
            {"allocatable": {"memory": "1Gi", "pods": "100"}, "allocating": {"memory": "512Mi"}},
            {"memory": "100Mi"},
            5,
            id="memory less allocating",
        ),
        pytest.param(
            {"allocatable": {"cpu": "64", "pods": "3"}}, {"cpu": "1"}, 3, id="bounded by pods"
        ),
        pytest.param(
            {"allocatable": {"pods": "100"}},
            {"nvidia.com/gpu": "1"},
            0,
            id="resource the cluster lacks",
        ),
        pytest.param(
            {"allocatable": {"cpu": "1", "pods": "100"}, "allocated": {"cpu": "1"}},
            {"cpu": "1"},
            0,
            id="nothing left",
        ),
        pytest.param(
            {"allocatable": {"cpu": "1", "pods": "100"}},
            {"cpu": "0"},
            100,
            id="zero request does not count",
        ),
    ],
)
def test_general_estimator(
    summary: dict[str, Any] | None, requests: dict[str, str] | None, want: int
) -> None:
    requirements = None if requests is None else ReplicaRequirements(resource_request=requests)
    parsed = None if summary is None else ResourceSummary.model_validate(summary)
    estimator = GeneralEstimator()
    got = estimator.max_available_replicas(
        "m1", "1", parsed, requirements, requirements_key(requirements)
    )
    assert got == want
