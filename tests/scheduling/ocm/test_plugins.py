"""The placement plugins, ported from upstream's plugins/*/..._test.go."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import timedelta
from typing import Any

import pytest

from fleetwarden.api.ocm.cluster import ManagedCluster
from fleetwarden.api.ocm.placement import AddOnPlacementScore, Placement, PlacementDecision
from fleetwarden.scheduling.ocm import Code, ListHandle
from fleetwarden.scheduling.ocm.framework import ScheduleContext, ScoreResult
from fleetwarden.scheduling.ocm.plugins.addon import AddOn
from fleetwarden.scheduling.ocm.plugins.balance import Balance
from fleetwarden.scheduling.ocm.plugins.predicate import Predicate
from fleetwarden.scheduling.ocm.plugins.resource import ResourceAllocatable
from fleetwarden.scheduling.ocm.plugins.steady import Steady
from fleetwarden.scheduling.ocm.plugins.taint_toleration import TaintToleration

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


def context(spec: Placement, *objects: PlacementDecision | AddOnPlacementScore) -> ScheduleContext:
    return ScheduleContext(handle(*objects), spec, NOW)


def names(clusters: Sequence[ManagedCluster]) -> list[str]:
    return [c.metadata.name for c in clusters]


def score(prioritizer: Any, ctx: ScheduleContext, clusters: list[ManagedCluster]) -> ScoreResult:
    result: ScoreResult = prioritizer.score(ctx, clusters, names(clusters))
    return result


# --- Predicate -----------------------------------------------------------------------------------


def predicate(
    labels: dict[str, Any] | None = None,
    claims: list[dict[str, Any]] | None = None,
    cel: list[str] | None = None,
) -> dict[str, Any]:
    selector: dict[str, Any] = {}
    if labels is not None:
        selector["labelSelector"] = labels
    if claims is not None:
        selector["claimSelector"] = {"matchExpressions": claims}
    if cel is not None:
        selector["celSelector"] = {"celExpressions": cel}
    return {"requiredClusterSelector": selector}


IN_US_EAST_1 = [{"key": "region", "operator": "In", "values": ["us-east-1"]}]


@pytest.mark.parametrize(
    ("predicates", "clusters", "expected"),
    [
        pytest.param(
            [predicate(labels={"matchLabels": {"cloud": "Amazon"}})],
            [
                cluster("cluster1", labels={"cloud": "Amazon"}),
                cluster("cluster2", labels={"cloud": "Google"}),
            ],
            ["cluster1"],
            id="match with label",
        ),
        pytest.param(
            [predicate(claims=[{"key": "cloud", "operator": "In", "values": ["Amazon"]}])],
            [
                cluster("cluster1", claims={"cloud": "Amazon"}),
                cluster("cluster2", claims={"cloud": "Google"}),
            ],
            ["cluster1"],
            id="match with claim",
        ),
        pytest.param(
            [predicate(labels={"matchLabels": {"cloud": "Amazon"}}, claims=IN_US_EAST_1)],
            [
                cluster("cluster1", labels={"cloud": "Amazon"}, claims={"region": "us-east-1"}),
                cluster("cluster2", labels={"cloud": "Amazon"}, claims={"region": "us-east-2"}),
            ],
            ["cluster1"],
            id="match with both label and claim",
        ),
        pytest.param(
            [
                predicate(labels={"matchLabels": {"cloud": "Amazon"}}),
                predicate(claims=IN_US_EAST_1),
            ],
            [
                cluster("cluster1", labels={"cloud": "Amazon"}),
                cluster("cluster2", claims={"region": "us-east-1"}),
                cluster("cluster3", claims={"region": "us-east-2"}),
            ],
            ["cluster1", "cluster2"],
            id="match with multiple predicates",
        ),
        pytest.param(
            [predicate(cel=[])],
            [cluster("cluster1")],
            ["cluster1"],
            id="empty CEL expressions",
        ),
        pytest.param(
            [predicate(claims=[{"key": "region", "operator": "NotIn", "values": ["us-east-1"]}])],
            [
                cluster("cluster1", claims={"region": "us-east-1"}),
                cluster("cluster2"),
                cluster("cluster3", claims={"region": "eu"}),
            ],
            ["cluster2", "cluster3"],
            id="NotIn matches a cluster without the claim",
        ),
        pytest.param(
            [
                predicate(
                    labels={"matchExpressions": [{"key": "gpu", "operator": "DoesNotExist"}]}
                ),
                predicate(labels={"matchLabels": {"gpu": "a100"}}),
            ],
            [
                cluster("c", labels={"gpu": "t4"}),
                cluster("b", labels={"gpu": "a100"}),
                cluster("a"),
            ],
            ["b", "a"],
            id="ORed predicates keep the clusters' order",
        ),
        pytest.param(
            [predicate(labels={"matchLabels": {"cloud": "Amazon"}}), {}],
            [cluster("cluster1"), cluster("cluster2", labels={"cloud": "Google"})],
            ["cluster1", "cluster2"],
            id="a predicate without a selector matches every cluster",
        ),
    ],
)
def test_predicate_matches(
    predicates: list[dict[str, Any]], clusters: list[ManagedCluster], expected: list[str]
) -> None:
    result = Predicate().filter(context(placement({"predicates": predicates})), clusters)
    assert result.status.code is Code.SUCCESS
    assert names(result.clusters) == expected


@pytest.mark.parametrize(
    ("predicates", "message"),
    [
        pytest.param(
            [predicate(cel=['managedCluster.metadata.labels["env"] =='])],
            "compilation failed: ERROR: <input>:1:41: Syntax error: mismatched input '<EOF>' "
            "expecting {'[', '{', '(', '.', '-', '!', 'true', 'false', 'null', NUM_FLOAT, "
            "NUM_INT, NUM_UINT, STRING, BYTES, IDENTIFIER}\n"
            ' | managedCluster.metadata.labels["env"] ==\n'
            " | ........................................^",
            id="a CEL expression that does not parse",
        ),
        pytest.param(
            [predicate(cel=["invalid.expression"])],
            "compilation failed: ERROR: <input>:1:1: undeclared reference to 'invalid' "
            "(in container '')\n | invalid.expression\n | ^",
            id="a CEL expression naming an undeclared variable",
        ),
        pytest.param(
            [predicate(cel=["managedCluster.metadata.labels.all(k, lowerAscii(k) == k)"])],
            "compilation failed: ERROR: <input>:1:39: undeclared reference to 'lowerAscii' "
            "(in container '')\n | managedCluster.metadata.labels.all(k, lowerAscii(k) == k)\n"
            " | ......................................^",
            id="a CEL expression calling an undeclared function",
        ),
        pytest.param(
            [
                predicate(
                    labels={
                        "matchExpressions": [{"key": "a", "operator": "Within", "values": ["x"]}]
                    }
                )
            ],
            '"Within" is not a valid label selector operator',
            id="bad label operator",
        ),
        pytest.param(
            [predicate(), predicate(claims=[{"key": "region", "operator": "In"}])],
            "values: Invalid value: null: for 'in', 'notin' operators, values set can't be empty",
            id="In without values in the second predicate's claims",
        ),
    ],
)
def test_predicate_misconfigured(predicates: list[dict[str, Any]], message: str) -> None:
    ctx = context(placement({"predicates": predicates}))
    result = Predicate().filter(ctx, [cluster("cluster1")])
    assert result.status.code is Code.MISCONFIGURED
    assert (result.status.plugin, result.status.message()) == ("Predicate", message)
    assert result.clusters == []
    # Upstream checks the selectors only once there are clusters to filter.
    assert Predicate().filter(ctx, []).status.ok()


# --- TaintToleration -----------------------------------------------------------------------------

NO_SELECT, NO_SELECT_IF_NEW, PREFER = "NoSelect", "NoSelectIfNew", "PreferNoSelect"
K1V1 = taint("key1", NO_SELECT, "value1")


def tol(**fields: Any) -> dict[str, Any]:
    """A toleration; `seconds` is tolerationSeconds."""
    if "seconds" in fields:
        fields["tolerationSeconds"] = fields.pop("seconds")
    return fields


EQUAL_K1V1 = tol(key="key1", value="value1", operator="Equal")
EXISTS_K1 = tol(key="key1", operator="Exists")
EXISTS_K2 = tol(key="key2", operator="Exists")
IN_DECISIONS = ["cluster1"]


@pytest.mark.parametrize(
    ("tolerations", "taints", "decided", "tolerated"),
    [
        # NoSelect, with different operators and keys/values.
        pytest.param([], [K1V1], [], False, id="NoSelect and no tolerations"),
        pytest.param([EQUAL_K1V1], [K1V1], [], True, id="NoSelect, Equal, key and value match"),
        pytest.param(
            [tol(key="key1", operator="Equal")],
            [K1V1],
            [],
            False,
            id="NoSelect, Equal, toleration has empty value",
        ),
        pytest.param(
            [EQUAL_K1V1],
            [taint("key1", NO_SELECT, "value2")],
            [],
            False,
            id="NoSelect, Equal, value differs",
        ),
        pytest.param(
            [EQUAL_K1V1],
            [taint("key2", NO_SELECT, "value1")],
            [],
            False,
            id="NoSelect, Equal, key differs",
        ),
        pytest.param([EXISTS_K1], [K1V1], [], True, id="NoSelect, Exists, key matches"),
        pytest.param([EXISTS_K2], [K1V1], [], False, id="NoSelect, Exists, key differs"),
        # NoSelectIfNew: the cluster in the decisions or not.
        pytest.param(
            [],
            [taint("key1", NO_SELECT_IF_NEW)],
            [],
            False,
            id="NoSelectIfNew, no tolerations, new cluster",
        ),
        pytest.param(
            [],
            [taint("key1", NO_SELECT_IF_NEW)],
            IN_DECISIONS,
            True,
            id="NoSelectIfNew, no tolerations, cluster in decisions",
        ),
        pytest.param(
            [EXISTS_K1],
            [taint("key1", NO_SELECT_IF_NEW)],
            [],
            True,
            id="NoSelectIfNew, tolerated, new cluster",
        ),
        pytest.param(
            [EXISTS_K1],
            [taint("key1", NO_SELECT_IF_NEW)],
            IN_DECISIONS,
            True,
            id="NoSelectIfNew, tolerated, cluster in decisions",
        ),
        pytest.param(
            [EXISTS_K2],
            [taint("key1", NO_SELECT_IF_NEW)],
            [],
            False,
            id="NoSelectIfNew, not tolerated, new cluster",
        ),
        pytest.param(
            [EXISTS_K2],
            [taint("key1", NO_SELECT_IF_NEW)],
            IN_DECISIONS,
            True,
            id="NoSelectIfNew, not tolerated, cluster in decisions",
        ),
        # PreferNoSelect never keeps a cluster out.
        pytest.param([], [taint("key1", PREFER)], [], True, id="PreferNoSelect and no tolerations"),
        pytest.param(
            [EXISTS_K1], [taint("key1", PREFER)], [], True, id="PreferNoSelect, tolerated"
        ),
        pytest.param(
            [EXISTS_K2], [taint("key1", PREFER)], [], True, id="PreferNoSelect, not tolerated"
        ),
        pytest.param(
            [EQUAL_K1V1, EXISTS_K2],
            [K1V1, taint("key2", NO_SELECT)],
            [],
            True,
            id="every taint tolerated by some toleration",
        ),
        pytest.param(
            [EQUAL_K1V1],
            [K1V1, taint("key2", NO_SELECT)],
            [],
            False,
            id="one taint of two tolerated",
        ),
        # The toleration's effect.
        pytest.param(
            [tol(effect=NO_SELECT_IF_NEW, **EQUAL_K1V1)],
            [K1V1],
            [],
            False,
            id="NoSelect, toleration for NoSelectIfNew",
        ),
        pytest.param(
            [tol(effect=NO_SELECT, **EQUAL_K1V1)],
            [K1V1],
            [],
            True,
            id="NoSelect, toleration for NoSelect",
        ),
        pytest.param(
            [EQUAL_K1V1],
            [taint("key1", NO_SELECT_IF_NEW, "value1")],
            [],
            True,
            id="NoSelectIfNew, toleration for any effect",
        ),
        pytest.param(
            [tol(effect=NO_SELECT_IF_NEW, **EQUAL_K1V1)],
            [taint("key1", NO_SELECT_IF_NEW, "value1")],
            [],
            True,
            id="NoSelectIfNew, toleration for NoSelectIfNew",
        ),
        pytest.param(
            [tol(key="key1", value="value2", operator="Equal", effect=NO_SELECT_IF_NEW)],
            [taint("key1", NO_SELECT_IF_NEW, "value1")],
            [],
            False,
            id="NoSelectIfNew, toleration's value differs",
        ),
        pytest.param(
            [tol(key="key1", value="value2", operator="Equal", effect=NO_SELECT)],
            [taint("key1", NO_SELECT_IF_NEW, "value1")],
            IN_DECISIONS,
            True,
            id="NoSelectIfNew, cluster in decisions, toleration for another effect",
        ),
    ],
)
def test_taint_toleration_filter(
    tolerations: list[dict[str, Any]],
    taints: list[dict[str, Any]],
    decided: list[str],
    tolerated: bool,
) -> None:
    ctx = context(placement({"tolerations": tolerations}), decision("test", PLACEMENT, *decided))
    result = TaintToleration().filter(ctx, [cluster("cluster1", taints=taints)])
    assert result.status.code is Code.SUCCESS
    assert names(result.clusters) == (["cluster1"] if tolerated else [])
    assert result.expiries == {}


@pytest.mark.parametrize(
    ("toleration", "message"),
    [
        (tol(value="value1", operator="Equal"), "If the key is empty, operator must be Exists."),
        (tol(value="value1"), "If the key is empty, operator must be Exists."),
        (
            tol(value="value1", operator="Exists"),
            "If the operator is Exists, the value should be empty.",
        ),
        (
            tol(key="key1", value="value1", operator="Exists"),
            "If the operator is Exists, the value should be empty.",
        ),
    ],
)
def test_taint_toleration_misconfigured(toleration: dict[str, Any], message: str) -> None:
    ctx = context(placement({"tolerations": [EXISTS_K1, toleration]}))
    result = TaintToleration().filter(ctx, [cluster("cluster1")])
    assert result.status.code is Code.MISCONFIGURED
    assert (result.status.plugin, result.status.message(), result.clusters) == (
        "TaintToleration",
        message,
        [],
    )


def test_toleration_seconds_count_from_time_added() -> None:
    """Tolerated while now < timeAdded + tolerationSeconds; each kept cluster says when that
    ends (upstream's 'placement requeue placement when expire toleration.TolerationSeconds')."""
    ctx = context(placement({"tolerations": [tol(key="key1", operator="Exists", seconds=10)]}))
    clusters = [
        cluster("cluster1", taints=[taint("key1", NO_SELECT, "value1", NOW - 8 * SECOND)]),
        cluster("cluster2", taints=[taint("key1", NO_SELECT, "value2", NOW - 9 * SECOND)]),
        cluster("cluster3", taints=[taint("key1", NO_SELECT, "value3", NOW - 10 * SECOND)]),
        cluster("cluster4"),
    ]
    result = TaintToleration().filter(ctx, clusters)
    assert names(result.clusters) == ["cluster1", "cluster2", "cluster4"]
    assert result.expiries == {"cluster1": NOW + 2 * SECOND, "cluster2": NOW + SECOND}


def test_toleration_seconds_without_time_added_have_run_out() -> None:
    """A taint without timeAdded counts from Go's zero time: long gone."""
    ctx = context(placement({"tolerations": [tol(key="key1", operator="Exists", seconds=10)]}))
    result = TaintToleration().filter(ctx, [cluster("cluster1", taints=[K1V1])])
    assert result.clusters == []


# --- Balance and Steady --------------------------------------------------------------------------

THREE = [cluster("cluster1"), cluster("cluster2"), cluster("cluster3")]


@pytest.mark.parametrize(
    ("decisions", "expected"),
    [
        pytest.param([], [100, 100, 100], id="no decisions"),
        pytest.param(
            [decision("test1", "test", "cluster1")],
            [100, 100, 100],
            id="one decision of this placement",
        ),
        pytest.param(
            [decision("test1", "test1", "cluster1")],
            [-100, 100, 100],
            id="one decision of another placement",
        ),
        pytest.param(
            [
                decision("test1", "test1", "cluster1", "cluster2"),
                decision("test2", "test2", "cluster1", "cluster3"),
            ],
            [-100, 0, 0],
            id="multiple decisions",
        ),
        pytest.param(
            [
                decision("other", "test1", "cluster1", "cluster2", "cluster9"),
                decision("own", "test", "cluster2", "cluster1"),
                decision("other2", "test2", "cluster9", "cluster9"),
            ],
            [32, 32, 100],
            id="the busiest cluster need not be a candidate",
        ),
        pytest.param(
            [
                decision(
                    "unlabelled", None, "cluster1", "cluster1", "cluster1", "cluster2", "cluster2"
                )
            ],
            [-100, -32, 100],
            id="decisions without a placement label count; scores truncate toward zero",
        ),
    ],
)
def test_balance(decisions: list[PlacementDecision], expected: list[int]) -> None:
    result = score(Balance(), context(placement(), *decisions), THREE)
    assert result.scores == dict(zip(names(THREE), expected, strict=True))


@pytest.mark.parametrize(
    ("decisions", "expected"),
    [
        pytest.param([], [0, 0, 0], id="no decisions"),
        pytest.param([decision("test1", "test", "cluster1")], [100, 0, 0], id="one decision"),
        pytest.param(
            [decision("test1", "test", "cluster1"), decision("test2", "test", "cluster3")],
            [100, 0, 100],
            id="two decisions",
        ),
        pytest.param(
            [decision("test1", "other", "cluster1")], [0, 0, 0], id="another placement's decision"
        ),
    ],
)
def test_steady(decisions: list[PlacementDecision], expected: list[int]) -> None:
    result = score(Steady(), context(placement(), *decisions), THREE)
    assert result.scores == dict(zip(names(THREE), expected, strict=True))


# --- ResourceAllocatableCPU / Memory -------------------------------------------------------------


@pytest.mark.parametrize(
    ("prioritizer", "resource", "amounts", "expected"),
    [
        (
            "ResourceAllocatableMemory",
            "memory",
            [("20", "100"), ("60", "100"), ("100", "100")],
            {"cluster1": -100, "cluster2": 0, "cluster3": 100},
        ),
        (
            "ResourceAllocatableMemory",
            "memory",
            [("50", "100")] * 3,
            dict.fromkeys(["cluster1", "cluster2", "cluster3"], 100),
        ),
        (
            "ResourceAllocatableMemory",
            "memory",
            [("0", "100")] * 3,
            dict.fromkeys(["cluster1", "cluster2", "cluster3"], 100),
        ),
        (
            "ResourceAllocatableCPU",
            "cpu",
            [("10", "10"), ("6", "10"), ("2", "10")],
            {"cluster1": 100, "cluster2": 0, "cluster3": -100},
        ),
        (
            "ResourceAllocatableCPU",
            "cpu",
            [("5", "10")] * 3,
            dict.fromkeys(["cluster1", "cluster2", "cluster3"], 100),
        ),
        (
            "ResourceAllocatableCPU",
            "cpu",
            [("0", "10")] * 3,
            dict.fromkeys(["cluster1", "cluster2", "cluster3"], 100),
        ),
        (
            "ResourceAllocatableCPU",
            "cpu",
            [("1500m", "2"), ("16Gi", "16Gi"), ("3", "4")],
            {"cluster1": -100, "cluster2": 100, "cluster3": -99},
        ),
        (
            "ResourceAllocatableMemory",
            "memory",
            [("64Gi", "64Gi"), ("16Gi", "32Gi"), ("32Gi", "32Gi")],
            {"cluster1": 100, "cluster2": -100, "cluster3": -33},
        ),
    ],
)
def test_resource_allocatable(
    prioritizer: str, resource: str, amounts: list[tuple[str, str]], expected: dict[str, int]
) -> None:
    clusters = [with_resource(f"cluster{i}", resource, *a) for i, a in enumerate(amounts, 1)]
    assert (
        score(ResourceAllocatable(prioritizer), context(placement()), clusters).scores == expected
    )


def test_resource_allocatable_scores_only_clusters_reporting_it() -> None:
    clusters = [
        cluster("none"),
        cluster("no-capacity", allocatable={"memory": "10"}),
        with_resource("cpu-only", "cpu", "4", "4"),
        with_resource("small", "memory", "1Gi", "2Gi"),
        with_resource("big", "memory", "3Gi", "4Gi"),
    ]
    result = score(ResourceAllocatable("ResourceAllocatableMemory"), context(placement()), clusters)
    assert result.scores == {"small": -100, "big": 100}
    assert (
        score(ResourceAllocatable("ResourceAllocatableMemory"), context(placement()), THREE).scores
        == {}
    )


# --- AddOn ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("scores", "expected", "warning"),
    [
        pytest.param([], [0, 0, 0], None, id="no addon scores"),
        pytest.param(
            [addon_score("cluster1", "test", {"score1": 30})],
            [30, 0, 0],
            None,
            id="part of addon scores generated",
        ),
        pytest.param(
            [
                addon_score("cluster1", "test", {"score1": 30}, valid_until=NOW - 30 * SECOND),
                addon_score("cluster2", "test", {"score1": 40}),
                addon_score("cluster3", "test", {"score1": 50}),
            ],
            [0, 40, 50],
            "AddOnPlacementScores cluster1/test expired",
            id="part of addon scores expired",
        ),
        pytest.param(
            [
                addon_score("cluster1", "test", {"score1": 30}),
                addon_score("cluster2", "test", {"score1": 40}),
                addon_score("cluster3", "test", {"score1": 50}),
            ],
            [30, 40, 50],
            None,
            id="all the addon scores generated",
        ),
        pytest.param(
            [
                addon_score("cluster1", "test", {"score1": 30}, valid_until=NOW - SECOND),
                addon_score("cluster2", "test", {"other": 40}),
                addon_score("cluster3", "test", {"score1": 50}, valid_until=NOW - SECOND),
                addon_score("cluster3", "other", {"score1": 60}),
            ],
            [0, 0, 0],
            "AddOnPlacementScores cluster1/test cluster3/test expired",
            id="other scores and resources do not count",
        ),
    ],
)
def test_addon(scores: list[AddOnPlacementScore], expected: list[int], warning: str | None) -> None:
    ctx = ScheduleContext(ListHandle(scores=scores), placement(), NOW)
    result = score(AddOn("test", "score1"), ctx, THREE)
    assert result.scores == dict(zip(names(THREE), expected, strict=True))
    if warning is None:
        assert result.status.code is Code.SUCCESS
    else:
        assert (result.status.code, result.status.plugin) == (Code.WARNING, "AddOn/test/score1")
        assert result.status.message() == warning


def test_addon_score_valid_until_now_counts_and_expires_a_tick_later() -> None:
    scores = [
        addon_score("cluster1", "test", {"score1": 30}, valid_until=NOW),
        addon_score("cluster2", "test", {"score1": 40}, valid_until=NOW + 60 * SECOND),
    ]
    ctx = ScheduleContext(ListHandle(scores=scores), placement(), NOW)
    result = score(AddOn("test", "score1"), ctx, THREE)
    assert result.scores == {"cluster1": 30, "cluster2": 40, "cluster3": 0}
    assert result.requeue_time == NOW + timedelta(microseconds=1)
    later = ScheduleContext(ListHandle(scores=scores), placement(), result.requeue_time)
    assert score(AddOn("test", "score1"), later, THREE).scores["cluster1"] == 0


def test_addon_score_reads_the_last_item_of_that_name() -> None:
    published = AddOnPlacementScore.model_validate(
        {
            "metadata": {"name": "test", "namespace": "cluster1"},
            "status": {
                "scores": [{"name": "score1", "value": 10}, {"name": "score1", "value": 20}]
            },
        }
    )
    ctx = ScheduleContext(ListHandle(scores=[published]), placement(), NOW)
    assert score(AddOn("test", "score1"), ctx, THREE).scores["cluster1"] == 20
