"""x-kubernetes-list-type "map" and "set": the engine, then each list the upstream CRDs type so.

Engine cases are ported from kubernetes apiextensions-apiserver
pkg/apiserver/schema/listtype/validation_test.go (whose root path is `root`, ours empty) and
test/integration/listtype_test.go; admission cases go through the real chain.
"""

from __future__ import annotations

import copy
from datetime import UTC, datetime
from typing import Any

import pytest

from fleetwarden.admission import default_chain
from fleetwarden.admission.schema import Array, Integer, Map, Object, String, schema_errors
from fleetwarden.api.errors import Invalid
from fleetwarden.api.meta import Model, Resource
from fleetwarden.api.registry import REGISTRY

NOW = datetime(2024, 5, 1, 12, 0, 0, tzinfo=UTC)

# --- the engine ------------------------------------------------------------------------------

STRINGS = Array(items=String(), list_type="set")
KEYED_BY_A = Array(items=Map(values=String()), list_type="map", list_map_keys=("a",))
KEYED_BY_A_B = Array(items=Map(values=String()), list_type="map", list_map_keys=("a", "b"))


def errors(schema: Object, obj: dict[str, Any], old: dict[str, Any] | None = None) -> list[str]:
    stored = None if old is None else Model.model_validate(old)
    return [str(e) for e in schema_errors(schema, Model.model_validate(obj), stored)]


def test_an_atomic_list_may_repeat_anything() -> None:
    schema = Object(properties={"array": Array(items=String())})
    assert errors(schema, {"array": ["a", "b", "a"]}) == []


@pytest.mark.parametrize("items", [[], ["a"], ["a", "b"]])
def test_a_set_of_distinct_items_passes(items: list[str]) -> None:
    assert errors(Object(properties={"array": STRINGS}), {"array": items}) == []


@pytest.mark.parametrize(
    ("items", "expected"),
    [
        (["a", "a"], ['array[1]: Duplicate value: "a"']),
        (["a", "b", "a"], ['array[2]: Duplicate value: "a"']),
        (
            ["a", "a", "b", "c", "d", "c"],
            ['array[1]: Duplicate value: "a"', 'array[5]: Duplicate value: "c"'],
        ),
        # Only the second occurrence is reported, not the third.
        (
            ["b", "c", "b", "c", "c"],
            ['array[2]: Duplicate value: "b"', 'array[3]: Duplicate value: "c"'],
        ),
    ],
)
def test_a_set_reports_each_value_where_it_comes_a_second_time(
    items: list[str], expected: list[str]
) -> None:
    assert errors(Object(properties={"array": STRINGS}), {"array": items}) == expected


def test_sets_nested_in_maps_and_lists() -> None:
    schema = Object(
        properties={
            "byName": Map(values=STRINGS),
            "lists": Array(items=STRINGS),
            "nested": Array(items=STRINGS, list_type="set"),
        }
    )
    obj = {
        "byName": {"array": ["a", "b", "a"]},
        "lists": [["a", "b", "a"], ["b", "b", "a"]],
        "nested": ["a", "b", "a", ["b", "b", "a"]],
    }
    assert errors(schema, obj) == [
        'byName[array][2]: Duplicate value: "a"',
        'lists[0][2]: Duplicate value: "a"',
        'lists[1][1]: Duplicate value: "b"',
        # The list's own duplicates before those within its items.
        'nested[2]: Duplicate value: "a"',
        'nested[3][1]: Duplicate value: "b"',
    ]


@pytest.mark.parametrize(
    ("items", "expected"),
    [
        ([1, 2, 1], "[2]: Duplicate value: 1"),
        ([False, True, True], "[2]: Duplicate value: true"),
        ([1.5, 2.5, 2.5], "[2]: Duplicate value: 2.5"),
        (["a", None, None], "[2]: Duplicate value: null"),
        ([{"a": "b"}, {}, {}], "[2]: Duplicate value: {}"),
        ([{"a": "b"}, {"a": "c"}, {"a": "b"}], '[2]: Duplicate value: {"a":"b"}'),
        ([[], ["a"], ["b"], ["a"]], '[3]: Duplicate value: ["a"]'),
        ([[], [None], [None, None], [None]], "[3]: Duplicate value: [null]"),
        # Objects are the same whatever the order of their fields; shown as Go marshals a map.
        (
            [{"b": 1, "a": {"d": 1, "c": 2}}, {"a": {"c": 2, "d": 1}, "b": 1}],
            ('[1]: Duplicate value: {"a":{"c":2,"d":1},"b":1}'),
        ),
    ],
)
def test_a_set_compares_scalars_objects_and_lists(items: list[Any], expected: str) -> None:
    schema = Object(properties={"array": Array(items=String(), list_type="set")})
    assert errors(schema, {"array": items}) == ["array" + expected]


def test_a_set_tells_numbers_booleans_and_strings_apart_as_go_does() -> None:
    schema = Object(properties={"array": Array(items=String(), list_type="set")})
    assert errors(schema, {"array": [1, 1.0, True, "1", {"a": 1}, {"a": True}]}) == []


def test_a_map_list_of_distinct_keys_passes() -> None:
    obj = {"correct-map": [{"a": 1, "b": 1, "c": "1"}, {"a": 1, "b": 2, "c": "2"}]}
    schema = Object(properties={"correct-map": KEYED_BY_A_B})
    assert errors(schema, obj) == []


@pytest.mark.parametrize(
    ("schema", "items", "expected"),
    [
        (
            KEYED_BY_A,
            [{"a": "0", "c": "2"}, {"a": "1", "c": "1"}, {"a": "1", "c": "2"}, {}],
            ['[2]: Duplicate value: {"a":"1"}'],
        ),
        (
            KEYED_BY_A_B,
            [{"a": "1", "b": "1", "c": "1"}, {"a": "1", "b": "2"}, {"a": "1", "b": "2"}, {}],
            ['[2]: Duplicate value: {"a":"1","b":"2"}'],
        ),
        # A key field an item lacks is left out of its key.
        (
            KEYED_BY_A_B,
            [{"a": "1", "b": "1", "c": "1"}, {"a": "1", "c": "2"}, {"a": "1", "c": "3"}, {}],
            ['[2]: Duplicate value: {"a":"1"}'],
        ),
        (
            KEYED_BY_A,
            [
                {"a": [], "c": "1"},
                {"a": ["a"], "c": "1"},
                {"a": ["a", 42], "c": "2"},
                {"a": ["a", 42], "c": ["3"]},
            ],
            ['[3]: Duplicate value: {"a":["a",42]}'],
        ),
        # A null item has no key, as an item without the key field.
        (KEYED_BY_A, [None, {"a": "0", "c": "1"}, {"c": "1"}], ["[2]: Duplicate value: {}"]),
        (KEYED_BY_A_B, [None, {"b": "0"}, {"c": "1"}], ["[2]: Duplicate value: {}"]),
        # A null key field is pruned before validation: it counts as absent.
        (KEYED_BY_A, [{"c": "1"}, {"a": None}], ["[1]: Duplicate value: {}"]),
        (
            KEYED_BY_A,
            [
                {"a": "b", "c": "1"},
                {"a": "c"},
                {"a": "b", "c": "2"},
                {"a": "c", "d": "1"},
                {"a": "c", "d": "2"},
            ],
            ['[2]: Duplicate value: {"a":"b"}', '[3]: Duplicate value: {"a":"c"}'],
        ),
    ],
)
def test_a_map_list_reports_each_key_where_it_comes_a_second_time(
    schema: Array, items: list[Any], expected: list[str]
) -> None:
    assert errors(Object(properties={"list": schema}), {"list": items}) == [
        "list" + e for e in expected
    ]


def test_a_key_field_an_item_lacks_counts_as_its_default() -> None:
    item = Object(properties={"group": String(default=""), "resource": String()})
    schema = Array(items=item, list_type="map", list_map_keys=("resource", "group"))
    obj = {
        "list": [
            {"resource": "r"},
            {"group": "", "resource": "r"},
            {"group": None, "resource": "r"},
        ]
    }
    assert errors(Object(properties={"list": schema}), obj) == [
        'list[1]: Duplicate value: {"group":"","resource":"r"}'
    ]


def test_a_map_list_with_an_item_that_is_no_object_is_left_to_the_decoder() -> None:
    schema = Object(properties={"list": KEYED_BY_A})
    assert errors(schema, {"list": ["a", {"a": "1"}, {"a": "1"}]}) == []


def test_duplicates_come_after_the_schema_errors() -> None:
    item = Object(properties={"value": Integer(maximum=10)}, required=("name",))
    schema = Object(
        properties={
            "first": Array(items=item, list_type="map", list_map_keys=("name",)),
            "second": Array(items=Integer(maximum=10), list_type="set"),
        }
    )
    obj = {"first": [{"name": "x"}, {"name": "x", "value": 11}, {}], "second": [11, 11]}
    assert errors(schema, obj) == [
        "first[1].value: Invalid value: 11: first[1].value in body should be less than or "
        "equal to 10",
        "first[2].name: Required value",
        "second[0]: Invalid value: 11: second[0] in body should be less than or equal to 10",
        "second[1]: Invalid value: 11: second[1] in body should be less than or equal to 10",
        'first[1]: Duplicate value: {"name":"x"}',
        "second[1]: Duplicate value: 11",
    ]


def test_an_update_keeps_duplicates_the_stored_object_already_had() -> None:
    """As upstream's integration test: a list that became invalid (there, as its keys changed)
    may still be updated; the ratchet holds for every list while any one is invalid."""
    schema = Object(properties={"map": KEYED_BY_A, "set": STRINGS})
    old = {"map": [{"a": "1"}, {"a": "1"}]}
    new = {"map": [{"a": "1"}, {"a": "1"}], "set": ["x", "x"]}
    assert errors(schema, new, old) == []
    assert errors(schema, new, {}) == [
        'map[1]: Duplicate value: {"a":"1"}',
        'set[1]: Duplicate value: "x"',
    ]


def test_map_keys_are_for_a_map_list_alone() -> None:
    with pytest.raises(ValueError, match="list_map_keys"):
        Array(items=String(), list_type="map")
    with pytest.raises(ValueError, match="list_map_keys"):
        Array(items=String(), list_type="set", list_map_keys=("a",))


# --- through admission: each list an upstream CRD types as a map ------------------------------

CLUSTER_GROUP = "cluster.open-cluster-management.io"


def condition(type_: str, status: str = "True") -> dict[str, Any]:
    return {
        "type": type_,
        "status": status,
        "reason": "AsExpected",
        "message": "",
        "lastTransitionTime": "2024-05-01T11:00:00Z",
    }


def managed_cluster(status: dict[str, Any], **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": f"{CLUSTER_GROUP}/v1",
        "kind": "ManagedCluster",
        "metadata": {"name": "cluster1"},
        "spec": spec,
        "status": status,
    }


def cluster_set(managed_namespaces: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "apiVersion": f"{CLUSTER_GROUP}/v1beta2",
        "kind": "ManagedClusterSet",
        "metadata": {"name": "clusterset1"},
        "spec": {"managedNamespaces": managed_namespaces},
    }


def placement(status: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": f"{CLUSTER_GROUP}/v1beta1",
        "kind": "Placement",
        "metadata": {"name": "placement1", "namespace": "ns1"},
        "spec": {},
        "status": status,
    }


def score(status: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": f"{CLUSTER_GROUP}/v1alpha1",
        "kind": "AddOnPlacementScore",
        "metadata": {"name": "default", "namespace": "cluster1"},
        "status": status,
    }


def addon(status: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": "addon.open-cluster-management.io/v1alpha1",
        "kind": "ManagedClusterAddOn",
        "metadata": {"name": "application-manager", "namespace": "cluster1"},
        "spec": {},
        "status": status,
    }


def refusal(obj: dict[str, Any], old: Resource | None = None) -> list[str]:
    with pytest.raises(Invalid) as err:
        default_chain().admit(obj, old, now=NOW)
    return [str(e) for e in err.value.errors]


def admits(obj: dict[str, Any], old: Resource | None = None) -> bool:
    given = copy.deepcopy(obj)
    default_chain().admit(obj, old, now=NOW)
    return obj == given


NAMESPACE = {"clusterSet": "set1", "name": "team-a"}

# (object with a duplicate, the error, the object without it)
REFUSED = {
    "ManagedCluster status.conditions": (
        managed_cluster(
            {"conditions": [condition("Ready"), condition("Joined"), condition("Ready", "False")]}
        ),
        'status.conditions[2]: Duplicate value: {"type":"Ready"}',
        managed_cluster({"conditions": [condition("Ready"), condition("Joined")]}),
    ),
    "ManagedCluster status.managedNamespaces": (
        managed_cluster(
            {"managedNamespaces": [NAMESPACE, {**NAMESPACE, "clusterSet": "set2"}, NAMESPACE]}
        ),
        'status.managedNamespaces[2]: Duplicate value: {"clusterSet":"set1","name":"team-a"}',
        managed_cluster({"managedNamespaces": [NAMESPACE, {**NAMESPACE, "clusterSet": "set2"}]}),
    ),
    "ManagedCluster status.managedNamespaces[].conditions": (
        managed_cluster(
            {"managedNamespaces": [{**NAMESPACE, "conditions": [condition("Ok"), condition("Ok")]}]}
        ),
        'status.managedNamespaces[0].conditions[1]: Duplicate value: {"type":"Ok"}',
        managed_cluster({"managedNamespaces": [{**NAMESPACE, "conditions": [condition("Ok")]}]}),
    ),
    "ManagedClusterSet spec.managedNamespaces": (
        cluster_set([{"name": "team-a"}, {"name": "team-b"}, {"name": "team-a"}]),
        'spec.managedNamespaces[2]: Duplicate value: {"name":"team-a"}',
        cluster_set([{"name": "team-a"}, {"name": "team-b"}]),
    ),
    "Placement status.conditions": (
        placement({"conditions": [condition("PlacementSatisfied")] * 2}),
        'status.conditions[1]: Duplicate value: {"type":"PlacementSatisfied"}',
        placement({"conditions": [condition("PlacementSatisfied")]}),
    ),
    "AddOnPlacementScore status.conditions": (
        score({"conditions": [condition("Fresh"), condition("Fresh", "False")]}),
        'status.conditions[1]: Duplicate value: {"type":"Fresh"}',
        score({"conditions": [condition("Fresh")]}),
    ),
    "AddOnPlacementScore status.scores": (
        score({"scores": [{"name": "cpu", "value": 1}, {"name": "cpu", "value": 2}]}),
        'status.scores[1]: Duplicate value: {"name":"cpu"}',
        score({"scores": [{"name": "cpu", "value": 1}, {"name": "mem", "value": 2}]}),
    ),
    "ManagedClusterAddOn status.conditions": (
        addon({"conditions": [condition("Available"), condition("Available", "False")]}),
        'status.conditions[1]: Duplicate value: {"type":"Available"}',
        addon({"conditions": [condition("Available"), condition("Degraded", "False")]}),
    ),
    # The core group left out is defaulted to "", and so the same as one written out.
    "ManagedClusterAddOn status.supportedConfigs": (
        addon(
            {
                "supportedConfigs": [
                    {"resource": "configmaps"},
                    {"group": "apps", "resource": "configmaps"},
                    {"group": "", "resource": "configmaps"},
                ]
            }
        ),
        'status.supportedConfigs[2]: Duplicate value: {"group":"","resource":"configmaps"}',
        addon(
            {
                "supportedConfigs": [
                    {"resource": "configmaps"},
                    {"group": "apps", "resource": "configmaps"},
                ]
            }
        ),
    ),
}


@pytest.mark.parametrize(("duplicated", "error", "fixed"), REFUSED.values(), ids=REFUSED)
def test_admission_refuses_a_second_item_of_a_key(
    duplicated: dict[str, Any], error: str, fixed: dict[str, Any]
) -> None:
    assert refusal(duplicated) == [error]
    assert admits(fixed)


def test_the_refusal_names_the_object_and_the_cause() -> None:
    duplicated, _, _ = REFUSED["ManagedCluster status.conditions"]
    with pytest.raises(Invalid) as err:
        default_chain().admit(duplicated, now=NOW)
    assert err.value.message == (
        'ManagedCluster.cluster.open-cluster-management.io "cluster1" is invalid: '
        'status.conditions[2]: Duplicate value: {"type":"Ready"}'
    )
    assert err.value.status()["details"]["causes"] == [
        {
            "reason": "FieldValueDuplicate",
            "message": 'Duplicate value: {"type":"Ready"}',
            "field": "status.conditions[2]",
        }
    ]


def test_a_duplicate_keeps_the_validating_webhook_from_being_called() -> None:
    """The webhook would refuse the http URL; the API server calls it only on an object its own
    validation passed."""
    cluster = managed_cluster(
        {"conditions": [condition("Ready")] * 2},
        managedClusterClientConfigs=[{"url": "http://hub.example.com"}],
    )
    assert refusal(cluster) == ['status.conditions[1]: Duplicate value: {"type":"Ready"}']


def test_an_update_of_an_object_stored_with_duplicates_keeps_them() -> None:
    """An object a controller wrote past admission may still be updated as it is."""
    duplicated, error, fixed = REFUSED["ManagedCluster status.conditions"]
    stored = REGISTRY.decode(duplicated)
    assert admits(duplicated, stored)
    assert refusal(duplicated, REGISTRY.decode(fixed)) == [error]


def test_a_cluster_set_of_v1beta1_has_no_managed_namespaces_to_check() -> None:
    obj = {**cluster_set([{"name": "team-a"}] * 2), "apiVersion": f"{CLUSTER_GROUP}/v1beta1"}
    assert admits(obj)
