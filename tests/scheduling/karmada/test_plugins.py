"""Filter and score plugins, ported from framework/plugins/*/*_test.go, and the framework."""

from __future__ import annotations

from typing import Any

import pytest

from fleetwarden.api.karmada.cluster import Cluster
from fleetwarden.api.karmada.policy import ClusterAffinity as Affinity
from fleetwarden.scheduling.karmada.framework import (
    ClusterInfo,
    FitError,
    ScheduleUnit,
    fit_error_message,
)
from fleetwarden.scheduling.karmada.plugins import in_tree_framework
from fleetwarden.scheduling.karmada.plugins.api_enablement import APIEnablement
from fleetwarden.scheduling.karmada.plugins.cluster_affinity import (
    ClusterAffinity,
    CompiledAffinity,
    overflow_order,
)
from fleetwarden.scheduling.karmada.plugins.cluster_eviction import ClusterEviction
from fleetwarden.scheduling.karmada.plugins.cluster_locality import ClusterLocality
from fleetwarden.scheduling.karmada.plugins.spread_constraint import SpreadConstraint
from fleetwarden.scheduling.karmada.plugins.taint_toleration import TaintToleration
from fleetwarden.semantics.affinity import cluster_matches

from .helpers import cluster, snapshot, spec

AFFINITY_REASON = "cluster(s) did not match the placement cluster affinity constraint"


def unit(
    placement: dict[str, Any] | None = None, affinity_name: str = "", **kw: Any
) -> ScheduleUnit:
    return ScheduleUnit.of(spec(placement, **kw), affinity_name)


def verdict(plugin: Any, u: ScheduleUnit, c: Cluster) -> str | None:
    return plugin.filter(u)(ClusterInfo.of(c))  # type: ignore[no-any-return]


# --- TaintToleration ----------------------------------------------------------------------------

TAINT = {"key": "key1", "value": "value1", "effect": "NoSchedule"}


@pytest.mark.parametrize(
    ("taints", "tolerations", "reason"),
    [
        pytest.param(None, None, None, id="no taints"),
        pytest.param(
            [TAINT],
            [{"key": "key1", "operator": "Equal", "value": "value1", "effect": "NoSchedule"}],
            None,
            id="tolerated taint",
        ),
        pytest.param(
            [TAINT],
            None,
            "cluster(s) had untolerated taint {key1=value1:NoSchedule}",
            id="untolerated taint",
        ),
        pytest.param(
            [{"key": "k", "effect": "NoExecute"}],
            None,
            "cluster(s) had untolerated taint {k:NoExecute}",
            id="untolerated NoExecute",
        ),
        pytest.param(
            [{"key": "k", "effect": "PreferNoSchedule"}],
            None,
            None,
            id="PreferNoSchedule never filters",
        ),
        pytest.param([TAINT], [{"operator": "Exists"}], None, id="tolerate everything"),
    ],
)
def test_taint_toleration(taints: Any, tolerations: Any, reason: str | None) -> None:
    placement = {"clusterTolerations": tolerations} if tolerations else {}
    assert verdict(TaintToleration(), unit(placement), cluster("m1", taints=taints)) == reason


def test_taint_toleration_spares_scheduled_clusters() -> None:
    """ "cluster already in target clusters": the framework lets it pass."""
    framework = in_tree_framework()
    snap = snapshot(cluster("m1", taints=[TAINT]), cluster("m2", taints=[TAINT]))
    found = framework.find_feasible(unit(), {"m1": 1}, snap)
    assert [c.name for c in found.clusters] == ["m1"]
    assert found.failures == {"m2": "cluster(s) had untolerated taint {key1=value1:NoSchedule}"}
    assert "m1" in found and "m2" not in found


# --- APIEnablement ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("apis", "complete", "reason"),
    [
        pytest.param(None, True, None, id="API enabled"),
        pytest.param([], True, "cluster(s) did not have the API resource", id="API disabled"),
        pytest.param([], False, "cluster(s) did not have the API resource", id="API unknown: incomplete list, strict"),
        pytest.param([{"groupVersion": "apps/v1", "resources": [{"name": "statefulsets", "kind": "StatefulSet"}]}], True,
                     "cluster(s) did not have the API resource", id="group version without the kind"),
    ],
)  # fmt: skip
def test_api_enablement(apis: Any, complete: bool, reason: str | None) -> None:
    assert verdict(APIEnablement(), unit(), cluster("m1", apis=apis, complete=complete)) == reason


def test_api_enablement_status() -> None:
    assert ClusterInfo.of(cluster("m1")).api_enablement("apps/v1", "Deployment") == "APIEnabled"
    assert (
        ClusterInfo.of(cluster("m1", apis=[])).api_enablement("apps/v1", "Deployment")
        == "APIDisabled"
    )
    assert (
        ClusterInfo.of(cluster("m1", apis=[], complete=False)).api_enablement("v1", "Pod")
        == "APIUnknown"
    )


def test_api_enablement_spares_scheduled_clusters() -> None:
    found = in_tree_framework().find_feasible(unit(), {"m1": 1}, snapshot(cluster("m1", apis=[])))
    assert [c.name for c in found.clusters] == ["m1"]


# --- ClusterAffinity ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("affinity", "name", "labels", "fits"),
    [
        pytest.param({"clusterNames": ["m1", "m2"]}, "m1", {}, True, id="cluster name matches"),
        pytest.param({"clusterNames": ["m2"]}, "m1", {}, False, id="cluster name does not match"),
        pytest.param({"exclude": ["m1"]}, "m1", {}, False, id="excluded"),
        pytest.param(
            {"labelSelector": {"matchLabels": {"env": "prod"}}},
            "m1",
            {"env": "prod"},
            True,
            id="label matches",
        ),
        pytest.param(
            {"labelSelector": {"matchLabels": {"env": "prod"}}},
            "m1",
            {"env": "dev"},
            False,
            id="label does not match",
        ),
        pytest.param(
            {"labelSelector": {"matchExpressions": [{"key": "env", "operator": "Bogus"}]}},
            "m1",
            {},
            False,
            id="invalid selector matches nothing",
        ),
        pytest.param({}, "m1", {}, True, id="empty affinity"),
    ],
)
def test_cluster_affinity(
    affinity: dict[str, Any], name: str, labels: dict[str, str], fits: bool
) -> None:
    reason = verdict(
        ClusterAffinity(), unit({"clusterAffinity": affinity}), cluster(name, labels=labels)
    )
    assert reason == (None if fits else AFFINITY_REASON)


def test_cluster_affinity_none_matches_all() -> None:
    assert verdict(ClusterAffinity(), unit(), cluster("m1")) is None


def test_cluster_affinities_use_the_observed_term_and_its_overflow() -> None:
    placement = {
        "clusterAffinities": [
            {
                "affinityName": "primary",
                "clusterNames": ["m1"],
                "overflowAffinities": [{"affinityName": "more", "clusterNames": ["m2"]}],
            },
            {"affinityName": "backup", "clusterNames": ["m3"]},
        ]
    }
    plugin = ClusterAffinity()
    workload = unit(placement, "primary", replicas=2)
    assert [verdict(plugin, workload, cluster(n)) for n in ("m1", "m2", "m3")] == [
        None,
        None,
        AFFINITY_REASON,
    ]
    config = unit(placement, "primary")  # not a workload: no overflow
    assert verdict(plugin, config, cluster("m2")) == AFFINITY_REASON
    assert verdict(plugin, unit(placement, "backup"), cluster("m3")) is None
    order = overflow_order(workload)
    assert [order(cluster(n)) for n in ("m1", "m2", "m3")] == [0, 1, 1000]


FIELD_CASES = [
    (
        {
            "fieldSelector": {
                "matchExpressions": [{"key": "region", "operator": "In", "values": ["east"]}]
            }
        },
        {"region": "east"},
    ),
    (
        {
            "fieldSelector": {
                "matchExpressions": [{"key": "region", "operator": "NotIn", "values": ["east"]}]
            }
        },
        {"region": "east"},
    ),
    (
        {
            "fieldSelector": {
                "matchExpressions": [{"key": "zone", "operator": "In", "values": ["z1"]}]
            }
        },
        {"zones": ["z0", "z1"]},
    ),
    ({"fieldSelector": {"matchExpressions": [{"key": "zone", "operator": "DoesNotExist"}]}}, {}),
    (
        {"fieldSelector": {"matchExpressions": [{"key": "provider", "operator": "Exists"}]}},
        {"provider": "aws"},
    ),
    (
        {
            "fieldSelector": {
                "matchExpressions": [{"key": "provider", "operator": "Gt", "values": ["1"]}]
            }
        },
        {"provider": "aws"},
    ),
    ({"fieldSelector": {"matchExpressions": []}}, {}),
    ({"labelSelector": {}, "clusterNames": ["m1"], "exclude": ["m2"]}, {}),
]


@pytest.mark.parametrize(("affinity", "where"), FIELD_CASES)
def test_compiled_affinity_agrees_with_cluster_matches(
    affinity: dict[str, Any], where: dict[str, Any]
) -> None:
    for name in ("m1", "m2"):
        c = cluster(name, **where)
        parsed = Affinity.model_validate(affinity)
        assert CompiledAffinity(parsed).matches(c) == cluster_matches(c, parsed)


# --- SpreadConstraint, ClusterEviction, ClusterLocality ----------------------------------------


@pytest.mark.parametrize(
    ("field", "where", "reason"),
    [
        ("provider", {}, "cluster(s) did not have provider property"),
        ("region", {}, "cluster(s) did not have region property"),
        ("zone", {}, "cluster(s) did not have zones property"),
        ("provider", {"provider": "aws"}, None),
        ("region", {"region": "east"}, None),
        ("zone", {"zones": ["z1"]}, None),
        ("cluster", {}, None),
    ],
)
def test_spread_constraint(field: str, where: dict[str, Any], reason: str | None) -> None:
    placement = {"spreadConstraints": [{"spreadByField": field, "minGroups": 1}]}
    assert verdict(SpreadConstraint(), unit(placement), cluster("m1", **where)) == reason


def test_cluster_eviction() -> None:
    evicting = unit(evicting=["m1"])
    assert (
        verdict(ClusterEviction(), evicting, cluster("m1"))
        == "cluster(s) is in the process of eviction"
    )
    assert verdict(ClusterEviction(), evicting, cluster("m2")) is None


def test_cluster_eviction_is_not_spared() -> None:
    """A cluster being evicted is out even though it is still in the result."""
    found = in_tree_framework().find_feasible(
        unit(evicting=["m1"]), {"m1": 1}, snapshot(cluster("m1"))
    )
    assert found.clusters == []


@pytest.mark.parametrize(
    ("scheduled", "want"),
    [
        pytest.param({}, {}, id="no result yet: every cluster scores 0"),
        pytest.param({"m1": 1}, {"m1": 100}, id="the cluster has the resource"),
        pytest.param({"m9": 1}, {}, id="a scheduled cluster that does not fit scores nothing"),
    ],
)
def test_cluster_locality(scheduled: dict[str, int], want: dict[str, int]) -> None:
    assert ClusterLocality().score(unit(), scheduled, {"m1", "m2"}) == want


# --- framework ----------------------------------------------------------------------------------


def test_deleting_clusters_are_skipped_and_not_reported() -> None:
    found = in_tree_framework().find_feasible(
        unit(), {}, snapshot(cluster("m1", deleting=True), cluster("m2"))
    )
    assert [c.name for c in found.clusters] == ["m2"] and found.failures == {}


def test_first_failing_plugin_is_reported() -> None:
    snap = snapshot(cluster("m1", taints=[TAINT], apis=[]))
    found = in_tree_framework().find_feasible(
        unit({"clusterAffinity": {"clusterNames": ["m2"]}}), {}, snap
    )
    assert found.failures == {"m1": AFFINITY_REASON}


@pytest.mark.parametrize(
    ("total", "failures", "message"),
    [
        pytest.param(0, {}, "0/0 clusters are available: no cluster exists.", id="no cluster"),
        pytest.param(2, {}, "0/2 clusters are available: no cluster exists.", id="every cluster deleting"),
        pytest.param(
            5,
            {"m1": AFFINITY_REASON, "m2": AFFINITY_REASON, "m3": "cluster(s) had untolerated taint {key: value}",
             "m4": "cluster(s) had untolerated taint {key: value}", "m5": "cluster(s) had untolerated taint {key: value}"},
            "0/5 clusters are available: 2 cluster(s) did not match the placement cluster affinity constraint, "
            "3 cluster(s) had untolerated taint {key: value}.",
            id="histogram sorted as text",
        ),
        pytest.param(
            12, {f"m{i}": "b" for i in range(10)} | {"x": "a", "y": "a"},
            "0/12 clusters are available: 10 b, 2 a.", id="counts compare as text",
        ),
    ],
)  # fmt: skip
def test_fit_error_message(total: int, failures: dict[str, str], message: str) -> None:
    assert fit_error_message(total, failures) == message
    assert str(FitError(total, failures)) == message


def test_wrap_keeps_the_kind() -> None:
    err = FitError(1, {"m1": "x"}).wrap("failed to schedule")
    assert isinstance(err, FitError) and err.failures == {"m1": "x"}
    assert str(err) == "failed to schedule: 0/1 clusters are available: 1 x."
