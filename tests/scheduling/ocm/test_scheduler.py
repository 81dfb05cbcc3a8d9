"""schedule(): the pipeline, ported from controllers/scheduling/schedule_test.go, and the
Placement examples of seed 003 whose outcome the scheduler alone decides."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest

from fleetwarden.api.ocm.cluster import ManagedCluster
from fleetwarden.api.ocm.placement import AddOnPlacementScore, PlacementDecision
from fleetwarden.scheduling.ocm import Code, ListHandle, ScheduleResult, Status, schedule

from .scheduler_helpers import (
    NOW,
    PLACEMENT,
    addon_score,
    cluster,
    decision,
    handle,
    placement,
    taint,
    with_resource,
)

SECOND = timedelta(seconds=1)
PIPELINE = ["Predicate", "Predicate,TaintToleration"]


def run(
    spec: dict[str, Any],
    clusters: list[ManagedCluster],
    *objects: PlacementDecision | AddOnPlacementScore,
) -> tuple[ScheduleResult, Status]:
    return schedule(handle(*objects), placement(spec), clusters, NOW)


def prioritizers(result: ScheduleResult) -> dict[str, tuple[int, dict[str, int]]]:
    return {p.name: (p.weight, p.scores) for p in result.prioritizer_results}


def filtered(result: ScheduleResult) -> dict[str, list[str]]:
    return {r.name: r.cluster_names for r in result.filter_results}


def config(built_in: str, weight: int | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"scoreCoordinate": {"type": "BuiltIn", "builtIn": built_in}}
    if weight is not None:
        out["weight"] = weight
    return out


def addon_config(resource: str, score: str, weight: int = 1) -> dict[str, Any]:
    coordinate = {"type": "AddOn", "addOn": {"resourceName": resource, "scoreName": score}}
    return {"scoreCoordinate": coordinate, "weight": weight}


C1, C2, C3 = cluster("cluster1"), cluster("cluster2"), cluster("cluster3")
MEMORY = [
    with_resource("cluster1", "memory", "100", "100"),
    with_resource("cluster2", "memory", "50", "100"),
    with_resource("cluster3", "memory", "0", "100"),
]
DEMO_SCORES = [
    addon_score("cluster1", "demo", {"demo": 30}),
    addon_score("cluster2", "demo", {"demo": 40}),
    addon_score("cluster3", "demo", {"demo": 50}),
]


@pytest.mark.parametrize(
    ("spec", "clusters", "objects", "decisions", "unscheduled", "filters", "scores"),
    [
        pytest.param(
            {},
            [C1],
            [],
            ["cluster1"],
            0,
            [["cluster1"], ["cluster1"]],
            {"Balance": (1, {"cluster1": 100}), "Steady": (1, {"cluster1": 0})},
            id="new placement satisfied",
        ),
        pytest.param(
            {"numberOfClusters": 3},
            [C1],
            [],
            ["cluster1"],
            2,
            [["cluster1"], ["cluster1"]],
            {"Balance": (1, {"cluster1": 100}), "Steady": (1, {"cluster1": 0})},
            id="new placement unsatisfied",
        ),
        pytest.param(
            {"numberOfClusters": 2},
            [C1, C2, C3],
            [decision("test-decision-1", PLACEMENT, "cluster1", "cluster2")],
            ["cluster1", "cluster2"],
            0,
            [["cluster1", "cluster2", "cluster3"]] * 2,
            {
                "Balance": (1, dict.fromkeys(["cluster1", "cluster2", "cluster3"], 100)),
                "Steady": (1, {"cluster1": 100, "cluster2": 100, "cluster3": 0}),
            },
            id="placement with all decisions scheduled",
        ),
        pytest.param(
            {"prioritizerPolicy": {"mode": ""}},
            [C1],
            [],
            ["cluster1"],
            0,
            [["cluster1"], ["cluster1"]],
            {"Balance": (1, {"cluster1": 100}), "Steady": (1, {"cluster1": 0})},
            id="placement with empty Prioritizer Policy",
        ),
        pytest.param(
            {
                "numberOfClusters": 3,
                "tolerations": [{"key": "key1", "value": "value1", "operator": "Equal"}],
            },
            [
                cluster("cluster1", taints=[taint("key1", "NoSelect", "value1")]),
                cluster("cluster2", taints=[taint("key2", "NoSelect", "value2")]),
                C3,
            ],
            DEMO_SCORES,
            ["cluster1", "cluster3"],
            1,
            [["cluster1", "cluster2", "cluster3"], ["cluster1", "cluster3"]],
            {
                "Balance": (1, {"cluster1": 100, "cluster3": 100}),
                "Steady": (1, {"cluster1": 0, "cluster3": 0}),
            },
            id="placement with taint and toleration",
        ),
        pytest.param(
            {
                "numberOfClusters": 2,
                "prioritizerPolicy": {
                    "mode": "Additive",
                    "configurations": [
                        config("Balance", 3),
                        config("ResourceAllocatableMemory", 1),
                        addon_config("demo", "demo"),
                    ],
                },
            },
            MEMORY,
            DEMO_SCORES,
            ["cluster1", "cluster2"],
            0,
            [["cluster1", "cluster2", "cluster3"]] * 2,
            {
                "Balance": (3, dict.fromkeys(["cluster1", "cluster2", "cluster3"], 100)),
                "Steady": (1, dict.fromkeys(["cluster1", "cluster2", "cluster3"], 0)),
                "ResourceAllocatableMemory": (
                    1,
                    {"cluster1": 100, "cluster2": 0, "cluster3": -100},
                ),
                "AddOn/demo/demo": (1, {"cluster1": 30, "cluster2": 40, "cluster3": 50}),
            },
            id="placement with additive Prioritizer Policy",
        ),
        pytest.param(
            {
                "numberOfClusters": 2,
                "prioritizerPolicy": {
                    "mode": "Exact",
                    "configurations": [
                        config("Balance", 3),
                        config("ResourceAllocatableMemory", 1),
                    ],
                },
            },
            MEMORY,
            [],
            ["cluster1", "cluster2"],
            0,
            [["cluster1", "cluster2", "cluster3"]] * 2,
            {
                "Balance": (3, dict.fromkeys(["cluster1", "cluster2", "cluster3"], 100)),
                "ResourceAllocatableMemory": (
                    1,
                    {"cluster1": 100, "cluster2": 0, "cluster3": -100},
                ),
            },
            id="placement with exact Prioritizer Policy",
        ),
        pytest.param(
            {"numberOfClusters": 4},
            [C1, C2],
            [decision("test-decision-1", PLACEMENT, "cluster1")],
            ["cluster1", "cluster2"],
            2,
            [["cluster1", "cluster2"]] * 2,
            {
                "Balance": (1, {"cluster1": 100, "cluster2": 100}),
                "Steady": (1, {"cluster1": 100, "cluster2": 0}),
            },
            id="placement with part of decisions scheduled",
        ),
        pytest.param(
            {"numberOfClusters": 1},
            [C1, C2, C3],
            [decision("others-decision-1", None, "cluster1", "cluster2")],
            ["cluster3"],
            0,
            [["cluster1", "cluster2", "cluster3"]] * 2,
            {
                "Balance": (1, {"cluster1": -100, "cluster2": -100, "cluster3": 100}),
                "Steady": (1, dict.fromkeys(["cluster1", "cluster2", "cluster3"], 0)),
            },
            id="schedule to cluster with least decisions",
        ),
        pytest.param(
            {"numberOfClusters": 1},
            [C1, C2, C3],
            [
                decision("others-decision-1", None, "cluster2", "cluster3"),
                decision("others-decision-2", None, "cluster1", "cluster2"),
                decision("test-decision-1", PLACEMENT, "cluster3"),
            ],
            ["cluster3"],
            0,
            [["cluster1", "cluster2", "cluster3"]] * 2,
            {
                "Balance": (1, {"cluster1": 0, "cluster2": -100, "cluster3": 0}),
                "Steady": (1, {"cluster1": 0, "cluster2": 0, "cluster3": 100}),
            },
            id="do not schedule to other cluster even with least decisions",
        ),
    ],
)
def test_schedule(
    spec: dict[str, Any],
    clusters: list[ManagedCluster],
    objects: list[PlacementDecision | AddOnPlacementScore],
    decisions: list[str],
    unscheduled: int,
    filters: list[list[str]],
    scores: dict[str, tuple[int, dict[str, int]]],
) -> None:
    result, status = run(spec, clusters, *objects)
    assert status == Status()
    assert result.decisions == decisions
    assert result.num_unscheduled == unscheduled
    assert filtered(result) == dict(zip(PIPELINE, filters, strict=True))
    assert prioritizers(result) == scores
    assert result.requeue_after is None


def test_new_placement_misconfigured() -> None:
    spec = {"numberOfClusters": 3, "tolerations": [{"value": "value1", "operator": "Equal"}]}
    result, status = run(spec, [C1])
    assert status == Status(
        Code.MISCONFIGURED, "TaintToleration", ["If the key is empty, operator must be Exists."]
    )
    assert (result.decisions, result.num_unscheduled, result.prioritizer_results) == ([], 0, [])
    assert filtered(result) == {"Predicate": ["cluster1"]}


def test_final_score_is_the_weighted_sum_and_ties_go_by_name() -> None:
    spec = {
        "prioritizerPolicy": {
            "configurations": [
                config("ResourceAllocatableMemory", 2),
                addon_config("demo", "demo", -1),
            ]
        }
    }
    clusters = [*MEMORY, cluster("cluster0"), with_resource("cluster4", "memory", "50", "100")]
    result, status = run(spec, clusters, *DEMO_SCORES)
    assert status.code is Code.SUCCESS
    # Balance 100 + Steady 0 + 2 × memory − add-on score.
    assert result.prioritizer_scores == {
        "cluster1": 100 + 200 - 30,
        "cluster2": 100 + 0 - 40,
        "cluster3": 100 - 200 - 50,
        "cluster0": 100,
        "cluster4": 100 + 0,
    }
    assert result.decisions == ["cluster1", "cluster0", "cluster4", "cluster2", "cluster3"]


@pytest.mark.parametrize(
    ("policy", "plugin", "message"),
    [
        ({"mode": "Fastest"}, "", "incorrect prioritizer policy mode: Fastest"),
        (
            {"configurations": [config("Steady"), {"weight": 2}]},
            "",
            "scoreCoordinate field is required",
        ),
        (
            {"configurations": [config("Cheapest", 1)]},
            "",
            "incorrect builtin prioritizer: Cheapest",
        ),
        (
            {"mode": "Exact", "configurations": [{"scoreCoordinate": {"type": "AddOn"}}]},
            "",
            "addOn should not be empty",
        ),
    ],
)
def test_misconfigured_prioritizer_policy(
    policy: dict[str, Any], plugin: str, message: str
) -> None:
    result, status = run({"prioritizerPolicy": policy}, [C1, C2])
    assert status == Status(Code.MISCONFIGURED, plugin, [message])
    assert result.decisions == []
    assert filtered(result) == {
        "Predicate": ["cluster1", "cluster2"],
        "Predicate,TaintToleration": ["cluster1", "cluster2"],
    }


def test_zero_weight_disables_a_prioritizer_even_an_unknown_one() -> None:
    policy = {"configurations": [config("Balance", 0), config("Cheapest", 0)]}
    result, status = run({"prioritizerPolicy": policy}, [C1])
    assert status.code is Code.SUCCESS
    assert list(prioritizers(result)) == ["Steady"]


def test_unset_type_and_weight_take_the_crd_defaults() -> None:
    policy = {"mode": "Exact", "configurations": [{"scoreCoordinate": {"builtIn": "Steady"}}]}
    result, _ = run({"prioritizerPolicy": policy}, [C1, C2], decision("d", PLACEMENT, "cluster2"))
    assert prioritizers(result) == {"Steady": (1, {"cluster1": 0, "cluster2": 100})}
    assert result.decisions == ["cluster2", "cluster1"]


def test_each_addon_coordinate_counts_on_its_own() -> None:
    """Upstream keys weights by ScoreCoordinate, whose addOn is a pointer: two equal AddOn
    coordinates are two prioritizers, where two equal built-in ones are one."""
    policy = {
        "mode": "Exact",
        "configurations": [
            addon_config("demo", "demo", 1),
            addon_config("demo", "demo", 2),
            config("Steady", 5),
            config("Steady", 1),
        ],
    }
    result, _ = run({"prioritizerPolicy": policy}, [C1], *DEMO_SCORES)
    assert [(p.name, p.weight) for p in result.prioritizer_results] == [
        ("AddOn/demo/demo", 1),
        ("AddOn/demo/demo", 2),
        ("Steady", 1),
    ]
    assert result.prioritizer_scores == {"cluster1": 90}


def test_expired_addon_score_warns_and_still_schedules() -> None:
    policy = {"configurations": [addon_config("demo", "demo")]}
    scores = [addon_score("cluster1", "demo", {"demo": 30}, valid_until=NOW - SECOND)]
    result, status = run({"prioritizerPolicy": policy}, [C1, C2], *scores)
    assert status == Status(
        Code.WARNING, "AddOn/demo/demo", ["AddOnPlacementScores cluster1/demo expired"]
    )
    assert result.decisions == ["cluster1", "cluster2"]


def test_requeue_when_a_selected_clusters_toleration_runs_out() -> None:
    spec = {
        "numberOfClusters": 1,
        "tolerations": [{"key": "key1", "operator": "Exists", "tolerationSeconds": 10}],
    }
    clusters = [
        cluster("cluster1", taints=[taint("key1", "NoSelect", added=NOW - 8 * SECOND)]),
        cluster("cluster2", taints=[taint("key1", "NoSelect", added=NOW - 9 * SECOND)]),
        cluster("cluster3", taints=[taint("key1", "NoSelect", added=NOW - 10 * SECOND)]),
    ]
    result, _ = run(spec, clusters)
    assert result.decisions == ["cluster1"]
    # cluster2 runs out sooner, but is not selected: nothing to redo then.
    assert result.requeue_after == 2 * SECOND
    result, _ = schedule(ListHandle(), placement(spec), clusters, NOW + 2 * SECOND)
    assert (result.decisions, result.requeue_after) == ([], None)


def test_requeue_when_an_addon_score_expires() -> None:
    policy = {"configurations": [addon_config("demo", "demo")]}
    scores = [
        addon_score("cluster1", "demo", {"demo": 30}, valid_until=NOW + 60 * SECOND),
        addon_score("cluster2", "demo", {"demo": 40}, valid_until=NOW + 30 * SECOND),
    ]
    result, _ = run({"prioritizerPolicy": policy, "numberOfClusters": 1}, [C1, C2], *scores)
    assert result.decisions == ["cluster2"]
    assert result.requeue_after == 30 * SECOND + timedelta(microseconds=1)


def test_no_candidates() -> None:
    """Nothing to filter: even a misconfigured toleration passes unnoticed, as upstream."""
    result, status = run({"numberOfClusters": 2, "tolerations": [{"operator": "Equal"}]}, [])
    assert status.code is Code.SUCCESS
    assert (result.decisions, result.num_unscheduled, result.prioritizer_scores) == ([], 2, {})


def test_number_of_clusters_zero_selects_none() -> None:
    result, _ = run({"numberOfClusters": 0}, [C1, C2])
    assert (result.decisions, result.num_unscheduled) == ([], 0)
    assert set(result.prioritizer_scores) == {"cluster1", "cluster2"}


# --- Seed 003's Placement examples ---------------------------------------------------------------

REGION = "region.open-cluster-management.io"
ADDON_LABEL = "feature.open-cluster-management.io/addon-application-manager"
FLEET = [
    cluster(
        "cluster1",
        labels={"vendor": "OpenShift", ADDON_LABEL: "available"},
        claims={REGION: "us-west-1"},
    ),
    cluster(
        "cluster2",
        labels={"vendor": "OpenShift", ADDON_LABEL: "unhealthy"},
        claims={REGION: "us-east-1"},
    ),
    cluster("cluster3", labels={"vendor": "OpenShift"}, claims={REGION: "us-west-1"}),
    cluster(
        "cluster4", labels={"vendor": "EKS", ADDON_LABEL: "available"}, claims={REGION: "us-west-1"}
    ),
    cluster("cluster5", labels={"vendor": "OpenShift"}, claims={REGION: "us-west-1"}),
    cluster(
        "cluster6",
        labels={"vendor": "OpenShift", ADDON_LABEL: "unreachable"},
        claims={REGION: "us-west-1"},
    ),
]
OPENSHIFT = {"matchLabels": {"vendor": "OpenShift"}}
US_WEST_1 = {"matchExpressions": [{"key": REGION, "operator": "In", "values": ["us-west-1"]}]}


def selector(**fields: Any) -> dict[str, Any]:
    return {"predicates": [{"requiredClusterSelector": fields}]}


def addon_state(operator: str) -> dict[str, Any]:
    return selector(
        labelSelector={"matchExpressions": [{"key": ADDON_LABEL, "operator": operator}]}
    )


@pytest.mark.parametrize(
    ("spec", "selected"),
    [
        pytest.param(
            selector(labelSelector=OPENSHIFT),
            ["cluster1", "cluster2", "cluster3", "cluster5", "cluster6"],
            id="placement1 labelSelector",
        ),
        pytest.param(
            selector(claimSelector=US_WEST_1),
            ["cluster1", "cluster3", "cluster4", "cluster5", "cluster6"],
            id="placement2 claimSelector",
        ),
        pytest.param(
            {"numberOfClusters": 3, **selector(labelSelector=OPENSHIFT, claimSelector=US_WEST_1)},
            ["cluster1", "cluster3", "cluster5"],
            id="placement4 three of the OpenShift clusters in us-west-1",
        ),
        pytest.param(
            addon_state("Exists"),
            ["cluster1", "cluster2", "cluster4", "cluster6"],
            id="add-on enabled",
        ),
        pytest.param(
            selector(labelSelector={"matchLabels": {ADDON_LABEL: "available"}}),
            ["cluster1", "cluster4"],
            id="add-on available",
        ),
        pytest.param(addon_state("DoesNotExist"), ["cluster3", "cluster5"], id="add-on disabled"),
    ],
)
def test_seed_selectors(spec: dict[str, Any], selected: list[str]) -> None:
    result, status = run(spec, FLEET)
    assert status.code is Code.SUCCESS
    assert result.decisions == selected


RESOURCES = [
    cluster(
        "small", allocatable={"cpu": "4", "memory": "16Gi"}, capacity={"cpu": "4", "memory": "16Gi"}
    ),
    cluster(
        "cpu-rich",
        allocatable={"cpu": "64", "memory": "32Gi"},
        capacity={"cpu": "64", "memory": "64Gi"},
    ),
    cluster(
        "memory-rich",
        allocatable={"cpu": "16", "memory": "256Gi"},
        capacity={"cpu": "16", "memory": "256Gi"},
    ),
    cluster(
        "balanced",
        allocatable={"cpu": "48", "memory": "192Gi"},
        capacity={"cpu": "48", "memory": "192Gi"},
    ),
]


def test_seed_placement6_most_allocatable_memory() -> None:
    spec = {
        "numberOfClusters": 1,
        "prioritizerPolicy": {
            "configurations": [{"scoreCoordinate": {"builtIn": "ResourceAllocatableMemory"}}]
        },
    }
    result, _ = run(spec, RESOURCES)
    assert result.decisions == ["memory-rich"]


def test_seed_placement7_most_allocatable_cpu_and_memory() -> None:
    spec = {
        "numberOfClusters": 1,
        "prioritizerPolicy": {
            "configurations": [
                config("ResourceAllocatableCPU", 2),
                config("ResourceAllocatableMemory", 2),
            ]
        },
    }
    result, _ = run(spec, RESOURCES)
    # Balance 100 + Steady 0 + 2 × cpu + 2 × memory, each normalised from low to high.
    assert result.prioritizer_scores == {
        "small": 100 + 2 * -100 + 2 * -100,
        "cpu-rich": 100 + 2 * 100 + 2 * -86,
        "memory-rich": 100 + 2 * -60 + 2 * 100,
        "balanced": 100 + 2 * 46 + 2 * 46,
    }
    assert result.decisions == ["balanced"]


def test_seed_placement8_exact_policy_keeps_its_decisions() -> None:
    """Memory (weight 1), Steady (3) and the add-on's cpuratio (1), nothing else: the two
    clusters already chosen stay, though others have more memory or a better ratio."""
    spec = {
        "numberOfClusters": 2,
        "prioritizerPolicy": {
            "mode": "Exact",
            "configurations": [
                {"scoreCoordinate": {"builtIn": "ResourceAllocatableMemory"}},
                {"scoreCoordinate": {"builtIn": "Steady"}, "weight": 3},
                {
                    "scoreCoordinate": {
                        "type": "AddOn",
                        "addOn": {"resourceName": "default", "scoreName": "cpuratio"},
                    }
                },
            ],
        },
    }
    scores = [addon_score(c.metadata.name, "default", {"cpuratio": 90}) for c in RESOURCES[:2]]
    result, _ = run(
        spec, RESOURCES, decision("placement8-1", PLACEMENT, "small", "cpu-rich"), *scores
    )
    assert [p.name for p in result.prioritizer_results] == [
        "ResourceAllocatableMemory",
        "Steady",
        "AddOn/default/cpuratio",
    ]
    assert result.decisions == ["cpu-rich", "small"]
    fresh, _ = run(spec, RESOURCES, *scores)
    assert fresh.decisions == ["memory-rich", "balanced"]


def test_seed_negative_weight_selects_last() -> None:
    spec = {
        "numberOfClusters": 1,
        "prioritizerPolicy": {"configurations": [config("ResourceAllocatableMemory", -1)]},
    }
    result, _ = run(spec, RESOURCES)
    assert result.decisions == ["small"]


GPU = taint("gpu", "NoSelect", "true", NOW - 3600 * SECOND)


def test_seed_taint_needs_a_matching_toleration() -> None:
    gpu_cluster = cluster("cluster1", taints=[GPU])
    result, _ = run({}, [gpu_cluster, C2])
    assert result.decisions == ["cluster2"]
    result, _ = run(
        {"tolerations": [{"key": "gpu", "value": "true", "operator": "Equal"}]}, [gpu_cluster, C2]
    )
    assert result.decisions == ["cluster1", "cluster2"]


def test_seed_no_select_if_new_spares_current_decisions() -> None:
    upgrading = taint("maintenance", "NoSelectIfNew", added=NOW)
    clusters = [
        cluster("cluster1", taints=[upgrading]),
        cluster("cluster2", taints=[upgrading]),
        C3,
    ]
    result, _ = run({}, clusters, decision("d", PLACEMENT, "cluster1"))
    assert sorted(result.decisions) == ["cluster1", "cluster3"]


def test_seed_temporary_toleration_of_unreachable() -> None:
    """demo4: tolerate the unreachable taint for 300 s from its timeAdded, then move."""
    spec = {
        "numberOfClusters": 1,
        "tolerations": [
            {
                "key": "cluster.open-cluster-management.io/unreachable",
                "operator": "Exists",
                "tolerationSeconds": 300,
            }
        ],
    }
    lost = cluster(
        "cluster1",
        taints=[
            taint(
                "cluster.open-cluster-management.io/unreachable",
                "NoSelect",
                added=NOW - 100 * SECOND,
            )
        ],
    )
    current = decision("demo4-1", PLACEMENT, "cluster1")
    result, _ = run(spec, [lost, C2], current)
    assert (result.decisions, result.requeue_after) == (["cluster1"], 200 * SECOND)
    later, _ = schedule(handle(current), placement(spec), [lost, C2], NOW + 200 * SECOND)
    assert (later.decisions, later.requeue_after) == (["cluster2"], None)


def test_cel_selectors_select_with_the_other_selectors() -> None:
    """A predicate's CEL expressions must hold besides its label and claim selectors."""
    west = 'managedCluster.status.clusterClaims.exists(c, c.value == "us-west-1")'
    spec = selector(labelSelector={"matchLabels": {"vendor": "OpenShift"}},
                    celSelector={"celExpressions": [west]})  # fmt: skip
    result, status = run(spec, FLEET)
    assert status.ok()
    same, _ = run(selector(labelSelector=OPENSHIFT, claimSelector=US_WEST_1), FLEET)
    assert (
        sorted(result.decisions)
        == sorted(same.decisions)
        == ["cluster1", "cluster3", "cluster5", "cluster6"]
    )


def test_status_helpers() -> None:
    assert Status().ok() and not Status().is_error()
    assert Status(Code.WARNING).ok()
    assert Status(Code.ERROR).is_error() and not Status(Code.ERROR).is_misconfigured()
    assert Status(Code.MISCONFIGURED, "p", ["a", "b"]).message() == "a, b"


def test_decisions_of_a_same_named_placement_elsewhere_are_not_this_ones() -> None:
    elsewhere = decision("test-decision-1", PLACEMENT, "cluster1")
    elsewhere.metadata.namespace = "other"
    result, _ = run({}, [C1, C2], elsewhere)
    # Not Steady's (another namespace), but Balance's: every decision counts there.
    assert prioritizers(result) == {
        "Balance": (1, {"cluster1": -100, "cluster2": 100}),
        "Steady": (1, {"cluster1": 0, "cluster2": 0}),
    }
    assert result.decisions == ["cluster2", "cluster1"]


def test_list_handle() -> None:
    own, other = (
        decision("a", PLACEMENT, "cluster1"),
        decision("b", "other", "cluster1", "cluster2"),
    )
    unlabelled = decision("c", None, "cluster2")
    elsewhere = decision("d", PLACEMENT, "cluster3")
    elsewhere.metadata.namespace = "ns2"
    hub = ListHandle(decisions=[own, other, unlabelled, elsewhere])
    assert hub.decisions("test", PLACEMENT) == [own]
    assert hub.decisions("ns2", PLACEMENT) == [elsewhere]
    assert hub.decisions("test", "other") == [other]
    assert hub.decisions("ns2", "other") == []
    assert dict(hub.decision_counts()) == {"cluster1": 2, "cluster2": 2, "cluster3": 1}
    assert hub.addon_placement_score("cluster1", "demo") is None
