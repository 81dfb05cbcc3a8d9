"""Resource selectors and policy precedence, ported from upstream's pkg/util/selector_test.go
and pkg/detector/compare_test.go."""

from typing import Any

import pytest

from fleetwarden.api.karmada.policy import (
    ClusterPropagationPolicy,
    PropagationPolicy,
    ResourceSelector,
)
from fleetwarden.api.registry import REGISTRY
from fleetwarden.semantics.resource_selectors import (
    ImplicitPriority,
    highest_priority_policy,
    matches_any,
    selector_priority,
    selectors_priority,
)

POD = REGISTRY.decode(
    {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "test", "namespace": "default", "labels": {"foo": "bar"}},
    }
)
NGINX = REGISTRY.decode(
    {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "nginx", "namespace": "test", "labels": {"app": "nginx"}},
    }
)


def selector(**fields: Any) -> ResourceSelector:
    return ResourceSelector.model_validate({"apiVersion": "v1", "kind": "Pod", **fields})


@pytest.mark.parametrize(
    ("fields", "want"),
    [
        (
            {"apiVersion": "unmatched", "name": "foo", "namespace": "default"},
            ImplicitPriority.MISMATCH,
        ),
        ({"kind": "Unmatched", "name": "foo", "namespace": "default"}, ImplicitPriority.MISMATCH),
        ({"name": "foo", "namespace": "Unmatched"}, ImplicitPriority.MISMATCH),
        ({"name": "test"}, ImplicitPriority.MATCH_NAME),  # namespace unset, name matched
        # [case 1] name and labelSelector: the name decides, the selector is ignored
        (
            {"name": "unmatched", "labelSelector": {"matchLabels": {"foo": "bar"}}},
            ImplicitPriority.MISMATCH,
        ),
        (
            {"name": "test", "labelSelector": {"matchLabels": {"foo": "unmatched"}}},
            ImplicitPriority.MATCH_NAME,
        ),
        # [case 2] name only
        ({"name": "unmatched"}, ImplicitPriority.MISMATCH),
        ({"name": "test", "namespace": "default"}, ImplicitPriority.MATCH_NAME),
        # [case 3] labelSelector only
        ({"labelSelector": {"matchLabels": {"foo": "unmatched"}}}, ImplicitPriority.MISMATCH),
        ({"labelSelector": {"matchLabels": {"foo": "bar"}}}, ImplicitPriority.MATCH_LABEL_SELECTOR),
        # [case 4] neither: every Pod
        ({}, ImplicitPriority.MATCH_ALL),
        ({"labelSelector": {"matchLabels": {"foo": "a b"}}}, ImplicitPriority.MISMATCH),  # invalid
        ({"labelSelector": {}}, ImplicitPriority.MATCH_LABEL_SELECTOR),  # empty selects all
    ],
)
def test_selector_priority(fields: dict[str, Any], want: ImplicitPriority) -> None:
    assert selector_priority(POD, selector(**fields)) == want


def test_the_best_selector_of_a_list_counts() -> None:
    selectors = [selector(name="unmatched"), selector(), selector(name="test")]
    assert selectors_priority(POD, selectors) == ImplicitPriority.MATCH_NAME
    assert matches_any(POD, selectors)
    assert not matches_any(POD, [selector(name="unmatched")])
    assert selectors_priority(POD, []) == ImplicitPriority.MISMATCH


def pp(policy: str, priority: int | None = None, rs: Any = None) -> PropagationPolicy:
    spec: dict[str, Any] = {
        "resourceSelectors": [{"apiVersion": "apps/v1", "kind": "Deployment", **(rs or {})}]
    }
    if priority is not None:
        spec["priority"] = priority
    return PropagationPolicy.model_validate(
        {"metadata": {"name": policy, "namespace": "test"}, "spec": spec}
    )


BY_NAME = {"name": "nginx"}
BY_LABEL = {"labelSelector": {"matchLabels": {"app": "nginx"}}}


@pytest.mark.parametrize(
    ("policies", "want"),
    [
        ([], None),
        ([pp("match-with-name", rs={**BY_NAME, "namespace": "other"})], None),
        (
            [
                pp("match-with-name", rs=BY_NAME),
                pp("match-with-label", rs=BY_LABEL),
                pp("match-all"),
            ],
            "match-with-name",
        ),
        ([pp("b-pp", rs=BY_NAME), pp("a-pp", rs=BY_NAME)], "a-pp"),  # same implicit priority
        ([pp("a-pp", rs=BY_NAME), pp("b-pp", 1, rs=BY_NAME)], "b-pp"),  # explicit beats implicit
        ([pp("a-pp", 1, rs=BY_NAME), pp("b-pp", 2, rs=BY_LABEL)], "b-pp"),
        ([pp("b-pp", 1, rs=BY_NAME), pp("a-pp", 1, rs=BY_NAME)], "a-pp"),
        ([pp("a-pp", 1, rs=BY_LABEL), pp("b-pp", 1, rs=BY_NAME)], "b-pp"),
        ([pp("a-pp", rs=BY_LABEL), pp("b-pp", -1, rs=BY_NAME)], "a-pp"),  # -1 loses to 0
    ],
)
def test_highest_priority_policy(policies: list[PropagationPolicy], want: str | None) -> None:
    chosen = highest_priority_policy(policies, NGINX)
    assert (chosen.metadata.name if chosen else None) == want


@pytest.mark.parametrize(("a", "b", "want"), [("A", "B", "A"), ("abc", "ab", "ab"), ("", "ab", "")])
def test_equal_policies_go_by_name(a: str, b: str, want: str) -> None:
    """getHigherPriority(Cluster)PropagationPolicy: the lower name in byte order."""
    policies = [
        ClusterPropagationPolicy.model_validate(
            {
                "metadata": {"name": n},
                "spec": {"resourceSelectors": [{"apiVersion": "apps/v1", "kind": "Deployment"}]},
            }
        )
        for n in (a, b)
    ]
    chosen = highest_priority_policy(policies, NGINX)
    assert chosen is not None and chosen.metadata.name == want
