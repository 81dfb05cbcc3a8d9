"""Claim selectors read status.clusterClaims as GetClusterClaims maps them: name to value, a
later claim of a name over an earlier one, an unset name or value as ""."""

from __future__ import annotations

import gc
import weakref
from typing import Any

import pytest

from fleetwarden.api.ocm.cluster import ManagedCluster
from fleetwarden.scheduling.ocm import framework
from fleetwarden.scheduling.ocm.framework import ScheduleContext
from fleetwarden.scheduling.ocm.plugins.predicate import Predicate

from .scheduler_helpers import NOW, handle, placement


def cluster(name: str, claims: list[dict[str, str]]) -> ManagedCluster:
    return ManagedCluster.model_validate(
        {"metadata": {"name": name}, "status": {"clusterClaims": claims}}
    )


def selected(expression: dict[str, Any], clusters: list[ManagedCluster]) -> list[str]:
    claim_selector = {"claimSelector": {"matchExpressions": [expression]}}
    spec = placement({"predicates": [{"requiredClusterSelector": claim_selector}]})
    result = Predicate().filter(ScheduleContext(handle(), spec, NOW), clusters)
    return [c.metadata.name for c in result.clusters]


TWICE = cluster("twice", [{"name": "region", "value": "a"}, {"name": "region", "value": "b"}])
BLANK = cluster("blank", [{"name": "region"}])
NONE = cluster("none", [{"name": "cloud", "value": "x"}])


@pytest.mark.parametrize(
    ("expression", "expected"),
    [
        ({"key": "region", "operator": "In", "values": ["b"]}, ["twice"]),
        ({"key": "region", "operator": "In", "values": ["a"]}, []),
        ({"key": "region", "operator": "Exists"}, ["twice", "blank"]),
        ({"key": "region", "operator": "DoesNotExist"}, ["none"]),
        ({"key": "region", "operator": "NotIn", "values": ["a"]}, ["twice", "blank", "none"]),
    ],
)
def test_claims_as_a_map(expression: dict[str, Any], expected: list[str]) -> None:
    assert selected(expression, [TWICE, BLANK, NONE]) == expected


def test_a_changed_cluster_is_read_anew_however_often_the_old_one_was() -> None:
    expression = {"key": "region", "operator": "In", "values": ["eu"]}
    before = cluster("c1", [{"name": "region", "value": "us"}])
    for _ in range(2):  # the second pass from what the first worked out
        assert selected(expression, [before]) == []
    # A change is a new object (cached objects are never changed in place).
    after = cluster("c1", [{"name": "region", "value": "eu"}])
    assert selected(expression, [after]) == ["c1"]
    assert selected(expression, [before]) == []


def test_per_cluster_works_a_cluster_out_once_and_keeps_no_cluster_alive() -> None:
    calls: list[str] = []

    @framework.per_cluster
    def name_of(c: ManagedCluster) -> str:
        calls.append(c.metadata.name)
        return c.metadata.name

    a, b = cluster("a", []), cluster("b", [])
    assert [name_of(x) for x in (a, b, a, b)] == ["a", "b", "a", "b"]
    assert calls == ["a", "b"]
    gone = weakref.ref(a)
    del a
    gc.collect()
    assert gone() is None  # what per_cluster remembered went with it
    assert name_of(cluster("a", [])) == "a"
    assert calls == ["a", "b", "a"]
