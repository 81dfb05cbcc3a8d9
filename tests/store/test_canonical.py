"""What a write stores and hands back: canonical JSON (JSON types, keys sorted at every
level), a fresh copy for each caller and each receiver of an event, whatever path the write
took (create, update, status update, merge or JSON patch, a no-op, garbage collection)."""

from __future__ import annotations

import json
import re
from enum import IntEnum, StrEnum
from typing import Any

import pytest

from fleetwarden.store import CoreStore, PatchType, WatchEvent
from fleetwarden.store.core import _canonical, _decode, _encode

from .conftest import DEPLOYMENTS, LEASES, Revisions, deployment, lease


class Color(StrEnum):
    RED = "red"


class Size(IntEnum):
    BIG = 3


def text_round_trip(obj: dict[str, Any]) -> dict[str, Any]:
    """What the store always gave back: the object through canonical JSON text."""
    return _decode(_encode(obj))


def same_json(a: Any, b: Any) -> bool:
    """Equal, with the same key order and the same JSON types everywhere."""
    return json.dumps(a) == json.dumps(b) and _types(a) == _types(b)


def _types(value: Any) -> Any:
    if isinstance(value, dict):
        return [(type(k).__name__, k, _types(v)) for k, v in value.items()]
    if isinstance(value, list):
        return [_types(v) for v in value]
    return type(value).__name__


CANONICAL_CASES = [
    {"z": 1, "a": {"y": [3, {"c": None, "b": True}], "x": 1.5}, "m": "s"},
    {"tuple": (1, 2, {"b": 1, "a": 2}), "s": "x"},
    {"enum": Color.RED, "int_enum": Size.BIG, "nested": [Color.RED]},
    {"int_keys": {10: "a", 9: "b"}},
    {"big": 10**30, "neg": -0.0, "exp": 1e16, "bool": False, "none": None},
    {"unicode": "ünïcødé \u2028", "surrogate": "\ud800", "empty": {}, "list": []},
]


@pytest.mark.parametrize("obj", CANONICAL_CASES)
def test_the_canonical_copy_is_what_the_text_round_trip_gives(obj: dict[str, Any]) -> None:
    copy = _canonical(obj)
    assert same_json(copy, text_round_trip(obj))
    assert _canonical(copy) == copy and copy is not obj


@pytest.mark.parametrize(
    "obj", [{"nan": float("nan")}, {"inf": [float("inf")]}, {"when": object()}, {1: "a", "b": 2}]
)
def test_what_json_refuses_the_canonical_copy_refuses_alike(obj: dict[str, Any]) -> None:
    with pytest.raises((ValueError, TypeError)) as expected:
        text_round_trip(obj)
    with pytest.raises(type(expected.value), match=re.escape(str(expected.value))):
        _canonical(obj)


def test_parts_of_the_old_object_are_taken_as_they_are_and_the_rest_is_walked() -> None:
    old = text_round_trip({"spec": {"big": {"x": [1, 2]}}, "status": {"b": 1}})
    new = {"status": {"c": [1], "a": 2}, "spec": old["spec"], "added": {"z": 1, "y": 2}}
    copy = _canonical(new, old)
    assert copy["spec"] is old["spec"]  # the old object's, given away: not walked, not copied
    assert same_json(copy, text_round_trip(new))
    # Anything not plain sends the whole object through the text, as it always went.
    new["status"]["c"] = (1,)
    assert same_json(_canonical(new, old), text_round_trip(new))


def test_created_objects_come_back_sorted_at_every_level(store: CoreStore) -> None:
    obj = deployment(labels={"z": "1", "a": "2"})
    obj["spec"] = {"template": {"spec": {"b": 1, "a": 2}}, "replicas": 1}
    created = store.create(obj)
    assert same_json(created, text_round_trip(created))
    assert list(created) == sorted(created)
    assert list(created["metadata"]["labels"]) == ["a", "z"]
    assert same_json(store.get(DEPLOYMENTS, "web", "default"), created)


def test_values_json_would_convert_are_converted_on_every_path(store: CoreStore) -> None:
    created = store.create(lease(tags=(Color.RED, Size.BIG)))
    assert same_json(created["spec"]["tags"], ["red", 3])
    updated = store.update({**created, "spec": {"holderIdentity": Color.RED}})
    assert same_json(updated["spec"], {"holderIdentity": "red"})
    patched = store.patch(LEASES, "lock", "default", {"spec": {"pair": (1, 2)}})
    assert same_json(patched["spec"], {"holderIdentity": "red", "pair": [1, 2]})
    assert same_json(store.get(LEASES, "lock", "default"), patched)


def test_a_merge_patch_adding_keys_keeps_them_sorted(store: CoreStore) -> None:
    store.create(deployment(labels={"m": "1"}))
    patched = store.patch(
        DEPLOYMENTS,
        "web",
        "default",
        {"metadata": {"labels": {"a": "0", "z": "2"}}, "spec": {"aaa": {"y": 1, "b": 2}}},
    )
    assert same_json(patched, text_round_trip(patched))
    assert list(patched["metadata"]["labels"]) == ["a", "m", "z"]
    assert list(patched["spec"]) == ["aaa", "replicas"]
    assert same_json(store.get(DEPLOYMENTS, "web", "default"), patched)


def test_a_patch_that_removes_a_system_field_gets_it_back_in_its_place(store: CoreStore) -> None:
    created = store.create(deployment())
    patched = store.patch(DEPLOYMENTS, "web", "default", {"metadata": {"uid": None}, "x": 1})
    assert patched["metadata"]["uid"] == created["metadata"]["uid"]
    assert list(patched["metadata"]) == sorted(patched["metadata"])
    assert list(patched) == sorted(patched)


def test_a_status_write_gives_back_a_fresh_canonical_copy(store: CoreStore) -> None:
    created = store.create(deployment())
    created["spec"]["template"] = {"metadata": {"labels": {"app": "web"}}}
    created = store.update(created)
    status = {"conditions": [{"type": "Available", "status": "True"}], "replicas": 1}
    updated = store.update({**created, "status": status}, subresource="status")
    assert same_json(updated, text_round_trip(updated))
    updated["spec"]["template"]["metadata"]["labels"]["app"] = "changed"
    updated["status"]["conditions"][0]["status"] = "False"
    stored = store.get(DEPLOYMENTS, "web", "default")
    assert stored["spec"]["template"] == {"metadata": {"labels": {"app": "web"}}}
    assert stored["status"]["conditions"][0]["status"] == "True"


@pytest.mark.parametrize(
    "write",
    [
        "create",
        "update",
        "no-op update",
        "status",
        "merge patch",
        "no-op patch",
        "json patch",
        "delete",
    ],
)
def test_no_two_holders_share_anything(store: CoreStore, write: str) -> None:
    """The caller's result, each subscriber's object and the store's copy: changing one
    changes none of the others."""
    created = store.create(deployment(labels={"app": "web"}))
    heard: list[WatchEvent] = []
    store.subscribe(heard.append)
    store.subscribe(heard.append)
    given = deployment("other", labels={"app": "other"})
    results = {
        "create": lambda: store.create(given),
        "update": lambda: store.update({**created, "spec": {"replicas": 2}}),
        "no-op update": lambda: store.update(created),
        "status": lambda: store.update({**created, "status": {"r": 1}}, subresource="status"),
        "merge patch": lambda: store.patch(DEPLOYMENTS, "web", "default", {"spec": {"x": 1}}),
        "no-op patch": lambda: store.patch(DEPLOYMENTS, "web", "default", {"spec": {}}),
        "json patch": lambda: store.patch(
            DEPLOYMENTS,
            "web",
            "default",
            [{"op": "add", "path": "/spec/x", "value": 1}],
            patch_type=PatchType.JSON,
        ),
        "delete": lambda: store.delete(DEPLOYMENTS, "web", "default"),
    }
    result = results[write]()
    before = store.list(DEPLOYMENTS).items
    holders = [result, *(event.object for event in heard)]
    for holder in holders:
        holder["metadata"]["labels"]["app"] = "mutated"
        holder["spec"]["replicas"] = 99
    assert store.list(DEPLOYMENTS).items == before
    assert all(h["metadata"]["labels"]["app"] == "mutated" for h in holders)
    assert given["metadata"]["labels"] == {"app": "other"}  # the caller's dict untouched


def test_an_event_object_is_made_once_per_receiver_on_first_look(
    store: CoreStore, rv: Revisions
) -> None:
    heard: list[WatchEvent] = []
    store.subscribe(heard.append)
    store.subscribe(heard.append)
    store.create(deployment())
    first, second = heard
    assert first.object is first.object  # made once, then kept
    assert first.object is not second.object and first.object == second.object
    assert (first.type, first.collection, first.resource_version) == (
        second.type,
        second.collection,
        rv(1),
    )
    assert first == second and first != WatchEvent(first.type, {}, first.collection)
    assert "ADDED" in repr(first) and "'web'" in repr(first)
    with pytest.raises(AttributeError):
        first.type = first.type  # type: ignore[misc]
