"""Claim selectors read status.clusterClaims as GetClusterClaims maps them: name to value, a
later claim of a name over an earlier one, an unset name or value as ""."""

from __future__ import annotations

from typing import Any

import pytest

from fleetwarden.api.ocm.cluster import ManagedCluster
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
