"""Expectation checks: JSON equality, subset match, oneOf, exists."""

import pytest

from fleetwarden.sim.expect import contains, json_equal


@pytest.mark.parametrize(
    ("a", "b", "equal"),
    [
        (1, 1.0, True),
        (True, 1, False),
        ({"a": [1, "x"]}, {"a": [1, "x"]}, True),
        ({"a": 1}, {"a": 1, "b": None}, False),
        (["a", "b"], ["b", "a"], False),
        (None, None, True),
        ("1", 1, False),
    ],
)
def test_json_equality(a: object, b: object, equal: bool) -> None:
    assert json_equal(a, b) is equal


def test_contains_is_a_recursive_subset_match() -> None:
    cluster = {
        "spec": {
            "taints": [
                {"key": "a", "effect": "NoSchedule", "timeAdded": "t"},
                {"key": "b", "effect": "NoExecute"},
            ]
        }
    }
    assert contains(cluster, {"spec": {"taints": [{"key": "b", "effect": "NoExecute"}]}})
    assert contains(cluster, {"spec": {"taints": [{"key": "b"}, {"key": "a"}]}})
    assert not contains(cluster, {"spec": {"taints": [{"key": "c"}]}})
    assert not contains(cluster, {"spec": {"replicas": 1}})
    assert contains(cluster, {})
