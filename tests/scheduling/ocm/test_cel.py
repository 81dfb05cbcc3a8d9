"""OCM's CEL environment for cluster selectors. Cases after ocm
pkg/placement/helpers/cel_test.go and sdk-go pkg/cel/library tests."""

from __future__ import annotations

from typing import Any

import pytest

from fleetwarden.scheduling.ocm.cel import CelError, CelSelector

CLUSTER = {
    "apiVersion": "cluster.open-cluster-management.io/v1",
    "kind": "ManagedCluster",
    "metadata": {"name": "cluster1", "labels": {"env": "prod", "version": "1.30.0"}},
    "status": {"allocatable": {"memory": "64Gi"}, "version": {"kubernetes": "v1.30.2"}},
}
SCORES = {("cluster1", "cpu-memory"): [{"name": "cpu", "value": 3}, {"name": "memory", "value": 4}]}


def lookup(cluster: str, name: str) -> list[dict[str, Any]] | None:
    return SCORES.get((cluster, name))


def matches(*expressions: str) -> bool:
    return CelSelector.compile(list(expressions)).matches(CLUSTER, lookup)


@pytest.mark.parametrize(
    ("expression", "expected"),
    [
        ('managedCluster.metadata.labels["env"] == "prod"', True),
        ('managedCluster.metadata.labels["env"] == "dev"', False),
        ('semver(managedCluster.metadata.labels["version"]).isLessThan(semver("1.31.0"))', True),
        ('semver(managedCluster.metadata.labels["version"]).isGreaterThan(semver("1.31.0"))', False),
        ('semver("1.2.3-alpha").isLessThan(semver("1.2.3"))', True),
        ('semver("1.10.0").compareTo(semver("1.9.0")) == 1', True),
        ('semver("1.2.3").major() == 1 && semver("1.2.3").minor() == 2', True),
        ('isSemver("v1.2.3")', False),
        ('quantity(managedCluster.status.allocatable.memory).isGreaterThan(quantity("32Gi"))', True),
        ('quantity("1.5").isInteger()', False),
        ('quantity("2k").asInteger() == 2000', True),
        ('quantity("1Gi").add(quantity("1Gi")).compareTo(quantity("2Gi")) == 0', True),
        ('isQuantity("ten")', False),
        ('managedCluster.scores("cpu-memory").filter(s, s.name == "cpu").all(s, s.value > 2)', True),
        ('managedCluster.scores("cpu-memory").exists(s, s.value > 5)', False),
        ('parseJSON("{\\"tier\\": 1}").tier == 1', True),
    ],
)  # fmt: skip
def test_ocm_cel_environment(expression: str, expected: bool) -> None:
    assert matches(expression) is expected


def test_every_expression_must_hold() -> None:
    env = 'managedCluster.metadata.labels["env"] == "prod"'
    old = 'semver(managedCluster.metadata.labels["version"]).isLessThan(semver("1.31.0"))'
    assert matches(env, old)
    assert not matches(env, old.replace("isLessThan", "isGreaterThan"))
    assert matches()


@pytest.mark.parametrize(
    "expression",
    [
        'managedCluster.scores("no-such-score").size() == 0',  # no such score: an error
        'managedCluster.metadata.labels["missing"] == "x"',  # no such key
        'semver("not a version").major() == 1',
        "1 + 1",  # not a boolean
    ],
)
def test_an_error_or_a_value_that_is_not_true_does_not_match(expression: str) -> None:
    assert not matches(expression)


def test_compile_errors_are_worded_as_upstream() -> None:
    with pytest.raises(CelError) as err:
        CelSelector.compile(['managedCluster.metadata.labels["env"] == "prod"', "nosuch(1)"])
    assert str(err.value) == (
        "compilation failed: ERROR: <input>:1:1: undeclared reference to 'nosuch' "
        "(in container '')\n | nosuch(1)\n | ^"
    )
