"""A memory store restored from another store's objects (what-if's copy of a hub): each
keeps its metadata and status as stored, subscribers and watches are told in
resourceVersion order, and what follows is written after it."""

from __future__ import annotations

import re
from typing import Any

import pytest

from fleetwarden.api.errors import AlreadyExists
from fleetwarden.store import MemoryStore, WatchEvent

from .conftest import DEPLOYMENTS, LEASES, NAMESPACES, deployment, lease, namespace, owner_ref


def hub_objects() -> list[dict[str, Any]]:
    """A namespace, a Deployment with its status and a Lease it owns, as a hub stored them
    (listed in no particular order)."""
    source = MemoryStore()
    source.create(namespace("team"))
    web = source.create(deployment("web", "team", replicas=3))
    web = source.update({**web, "spec": {"replicas": 4}})  # generation 2
    web = source.update({**web, "status": {"replicas": 4}}, subresource="status")
    source.create(lease("web", "team", holderIdentity="a", ownerReferences=[]))
    owned = source.get(LEASES, "web", "team")
    source.update({**owned, "metadata": {**owned["metadata"], "ownerReferences": [owner_ref(web)]}})
    items = [source.get(LEASES, "web", "team"), source.get(NAMESPACES, "team"), web]
    return items


def test_restored_objects_keep_their_metadata_and_status() -> None:
    objects = hub_objects()
    store = MemoryStore()
    store.restore(objects)
    for obj in objects:
        meta = obj["metadata"]
        info = {"Lease": LEASES, "Namespace": NAMESPACES, "Deployment": DEPLOYMENTS}[obj["kind"]]
        assert store.get(info, meta["name"], meta.get("namespace", "")) == obj
    web = store.get(DEPLOYMENTS, "web", "team")
    assert (web["metadata"]["generation"], web["status"]) == (2, {"replicas": 4})
    assert store.resource_version == max(int(o["metadata"]["resourceVersion"]) for o in objects)


def test_subscribers_hear_each_object_added_oldest_first_and_writes_come_after() -> None:
    objects = hub_objects()
    store = MemoryStore()
    heard: list[WatchEvent] = []
    store.subscribe(heard.append)
    store.restore(objects)
    versions = sorted(int(o["metadata"]["resourceVersion"]) for o in objects)
    assert [(e.type.value, e.resource_version) for e in heard] == [("ADDED", rv) for rv in versions]
    created = store.create(deployment("api", "team"))
    assert int(created["metadata"]["resourceVersion"]) == versions[-1] + 1


def test_only_an_object_without_a_uid_takes_one_of_the_store() -> None:
    """The store's uids (a simulation's deterministic ones) go to what is made after the
    restore as if nothing had been restored, but to a restored object that had none."""
    uids = iter(f"uid-{i}" for i in range(1, 10))
    store = MemoryStore(new_uid=lambda: next(uids))
    objects = hub_objects()
    bare = namespace("bare")
    store.restore([*objects, bare])
    assert store.get(NAMESPACES, "bare")["metadata"]["uid"] == "uid-1"
    assert store.create(namespace("later"))["metadata"]["uid"] == "uid-2"


def test_an_owner_left_out_has_its_dependents_collected() -> None:
    lease_owned, ns, _web = hub_objects()
    store = MemoryStore()
    store.restore([ns, lease_owned])
    assert store.list(LEASES, "team").items == []


def test_an_object_there_already_or_an_older_version_is_refused() -> None:
    _, ns, web = hub_objects()
    store = MemoryStore()
    store.restore([ns])
    again = {**ns, "metadata": {"name": "team"}}  # no resourceVersion: after the others
    with pytest.raises(AlreadyExists, match='namespaces "team" already exists'):
        store.restore([again])
    store.restore([web])
    older = {**namespace("late"), "metadata": {"name": "late", "resourceVersion": "2"}}
    rv = web["metadata"]["resourceVersion"]
    with pytest.raises(ValueError, match=f"resourceVersion 2 is not newer than {rv}"):
        store.restore([older])


@pytest.mark.parametrize("version", ["abc", "-5", "²", "9" * 30, 7])
def test_a_refusal_names_the_object_and_writes_nothing(version: Any) -> None:
    lease_owned, ns, web = hub_objects()
    bad = {**web, "metadata": {**web["metadata"], "resourceVersion": version}}
    store = MemoryStore()
    heard: list[WatchEvent] = []
    store.subscribe(heard.append)
    with pytest.raises(
        ValueError, match=re.escape("Deployment 'team/web': metadata.resourceVersion")
    ):
        store.restore([ns, lease_owned, bad])
    twice = [ns, {**ns, "metadata": {**ns["metadata"], "resourceVersion": "99"}}]
    with pytest.raises(AlreadyExists, match='namespaces "team" already exists'):
        store.restore(twice)
    assert (heard, store.list(NAMESPACES).items, store.resource_version) == ([], [], 0)


def test_read_sees_each_object_as_stored_before_any_is_written() -> None:
    """What `read` gets is what the store keeps: a made uid, and the resourceVersion an
    object without one takes after the others; what restore returns is the same, as
    stored, with what `read` made of it."""
    uids = iter(f"uid-{i}" for i in range(1, 10))
    store = MemoryStore(new_uid=lambda: next(uids))
    objects = hub_objects()
    writes: list[WatchEvent] = []
    store.subscribe(writes.append)

    def read(obj: dict[str, Any]) -> tuple[str, str, bool]:
        meta = obj["metadata"]
        return meta["uid"], meta["resourceVersion"], bool(writes)

    restored = store.restore([namespace("bare"), *objects, namespace("bare2")], read)
    newest = max(int(o["metadata"]["resourceVersion"]) for o in objects)
    assert [r for _, r in restored][-2:] == [
        ("uid-1", str(newest + 1), False),
        ("uid-2", str(newest + 2), False),
    ]
    assert not any(wrote for _, (_, _, wrote) in restored)
    info = {"Lease": LEASES, "Namespace": NAMESPACES, "Deployment": DEPLOYMENTS}
    for stored, _ in restored:
        meta = stored["metadata"]
        assert store.get(info[stored["kind"]], meta["name"], meta.get("namespace", "")) == stored


def test_a_refusal_by_read_writes_nothing() -> None:
    store = MemoryStore()
    heard: list[WatchEvent] = []
    store.subscribe(heard.append)

    def refuse_leases(obj: dict[str, Any]) -> None:
        if obj["kind"] == "Lease":
            raise ValueError("no Leases")

    with pytest.raises(ValueError, match="no Leases"):
        store.restore(hub_objects(), refuse_leases)
    assert (heard, store.resource_version) == ([], 0)
    assert store.list(NAMESPACES).items == []
