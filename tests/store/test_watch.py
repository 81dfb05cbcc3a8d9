"""Watch: events in resourceVersion order, filtered, resumable, and "too old" past compaction."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterable

import pytest

from fleetwarden.api.errors import BadRequest, Expired
from fleetwarden.store import CoreStore, Watch, WatchEvent

from .conftest import (
    DEPLOYMENTS,
    LEASES,
    NAMESPACES,
    MakeStore,
    Revisions,
    deployment,
    lease,
    namespace,
    owner_ref,
    revisions,
)

Summary = list[tuple[str, str, int]]


def drain(watch: Watch) -> Summary:
    """What the watch holds now: close() lets queued events through, then ends it."""
    watch.close()
    return summary(watch)


def summary(events: Iterable[WatchEvent]) -> Summary:
    return [(e.type.value, e.object["metadata"]["name"], e.resource_version) for e in events]


def test_a_watch_sees_added_modified_deleted_in_resource_version_order(
    store: CoreStore, rv: Revisions
) -> None:
    watch = store.watch(DEPLOYMENTS)
    created = store.create(deployment())
    store.update({**created, "spec": {"replicas": 2}})
    store.delete(DEPLOYMENTS, "web", "default")
    assert drain(watch) == [
        ("ADDED", "web", rv(1)),
        ("MODIFIED", "web", rv(2)),
        ("DELETED", "web", rv(3)),
    ]


def test_a_watch_is_filtered_by_kind_and_namespace(store: CoreStore, rv: Revisions) -> None:
    by_kind = store.watch(DEPLOYMENTS)
    by_namespace = store.watch(DEPLOYMENTS, "team")
    everything = store.watch()
    store.create(deployment("a"))
    store.create(deployment("b", "team"))
    store.create(lease("c", "team"))
    store.create(namespace("team"))
    assert drain(by_kind) == [("ADDED", "a", rv(1)), ("ADDED", "b", rv(2))]
    assert drain(by_namespace) == [("ADDED", "b", rv(2))]
    assert [name for _, name, _ in drain(everything)] == ["a", "b", "c", "team"]
    event = next(iter(store.watch(LEASES, resource_version="0")))
    assert event.collection == "coordination.k8s.io/leases"


def test_a_watch_without_resource_version_starts_from_now(store: CoreStore, rv: Revisions) -> None:
    store.create(deployment("old"))
    watch = store.watch(DEPLOYMENTS)
    store.create(deployment("new"))
    assert drain(watch) == [("ADDED", "new", rv(2))]


def test_resource_version_zero_starts_with_the_current_state(
    store: CoreStore, rv: Revisions
) -> None:
    store.create(deployment("b"))
    store.create(deployment("a"))
    store.patch(DEPLOYMENTS, "b", "default", {"spec": {"replicas": 3}})
    store.create(deployment("gone"))
    store.delete(DEPLOYMENTS, "gone", "default")
    watch = store.watch(DEPLOYMENTS, resource_version="0")
    store.create(deployment("c"))
    # Synthetic ADDED events, in key order, each at the object's own resourceVersion.
    assert drain(watch) == [("ADDED", "a", rv(2)), ("ADDED", "b", rv(3)), ("ADDED", "c", rv(6))]


def test_a_watch_resumes_from_a_resource_version(store: CoreStore, rv: Revisions) -> None:
    for name in "abcd":
        store.create(deployment(name))
    watch = store.watch(DEPLOYMENTS, resource_version=str(rv(2)))
    store.delete(DEPLOYMENTS, "a", "default")
    assert drain(watch) == [("ADDED", "c", rv(3)), ("ADDED", "d", rv(4)), ("DELETED", "a", rv(5))]
    assert drain(store.watch(DEPLOYMENTS, resource_version=str(rv(5)))) == []
    assert drain(store.watch(DEPLOYMENTS, resource_version=str(rv(99)))) == []


def test_a_resource_version_older_than_the_log_is_too_old(make_store: MakeStore) -> None:
    store = make_store(event_log_size=3)
    at = revisions(store)
    for name in "abcde":
        store.create(deployment(name))
    # The log holds 3..5: a watch may resume from 2 on, not from 1.
    resumed = drain(store.watch(resource_version=str(at(2))))
    assert [rv for *_, rv in resumed] == [at(3), at(4), at(5)]
    with pytest.raises(Expired) as err:
        store.watch(DEPLOYMENTS, resource_version=str(at(1)))
    too_old = f"too old resource version: {at(1)} ({at(2)})"
    assert (err.value.message, err.value.code) == (too_old, 410)
    with pytest.raises(BadRequest):
        store.watch(DEPLOYMENTS, resource_version="latest")


def test_a_watch_blocks_until_an_event_from_another_thread(store: CoreStore, rv: Revisions) -> None:
    watch = store.watch(DEPLOYMENTS)
    received: list[WatchEvent] = []

    def consume() -> None:
        for event in watch:
            received.append(event)
            if len(received) == 2:
                return

    consumer = threading.Thread(target=consume)
    consumer.start()
    time.sleep(0.05)
    assert received == []  # blocked, nothing yet
    store.create(deployment("a"))
    store.create(deployment("b"))
    consumer.join(timeout=5)
    assert not consumer.is_alive()
    assert summary(received) == [("ADDED", "a", rv(1)), ("ADDED", "b", rv(2))]


def test_close_from_another_thread_ends_a_blocked_watch(store: CoreStore) -> None:
    watch = store.watch()
    consumer = threading.Thread(target=lambda: list(watch))
    consumer.start()
    time.sleep(0.05)
    watch.close()
    consumer.join(timeout=5)
    assert not consumer.is_alive()
    store.create(deployment())  # a closed watch is dropped, the store carries on
    assert list(watch) == []


def test_closing_the_store_ends_its_watches(make_store: MakeStore) -> None:
    store = make_store()
    at = revisions(store)
    watch = store.watch()
    store.create(deployment())
    store.close()
    assert summary(watch) == [("ADDED", "web", at(1))]


def test_each_watcher_gets_its_own_copy(store: CoreStore) -> None:
    first, second = store.watch(), store.watch()
    store.create(deployment())
    first.close()
    second.close()
    (a,), (b,) = list(first), list(second)
    a.object["spec"]["replicas"] = 99
    assert b.object["spec"]["replicas"] == 1
    assert store.get(DEPLOYMENTS, "web", "default")["spec"]["replicas"] == 1


def test_garbage_collection_events_reach_watchers_in_order(store: CoreStore, rv: Revisions) -> None:
    owner = store.create(namespace("team"))
    ref = {"apiVersion": "v1", "kind": "Namespace", "name": "team", "uid": owner["metadata"]["uid"]}
    store.create(deployment("x", ownerReferences=[ref]))
    store.create(lease("y"))
    store.patch(LEASES, "y", "default", {"metadata": {"ownerReferences": [ref]}})
    watch = store.watch()
    store.delete(NAMESPACES, "team")
    assert drain(watch) == [
        ("DELETED", "team", rv(5)),
        ("DELETED", "x", rv(6)),
        ("DELETED", "y", rv(7)),
    ]


def test_a_watch_whose_reader_falls_behind_its_buffer_is_ended(make_store: MakeStore) -> None:
    """As the cacher ends a watcher whose buffer is full: the reader gets what was held,
    then the end, and resumes from the last resourceVersion it saw without a gap."""
    store = make_store(watch_buffer=3)
    at = revisions(store)
    for name in ("a", "b", "c", "d"):  # what a watch from "0" starts with is not counted
        store.create(deployment(name))
    watch = store.watch(DEPLOYMENTS, resource_version="0")
    for name in ("e", "f", "g"):
        store.create(deployment(name))  # the third fills the buffer
    owner = store.create(deployment("h"))  # finds it full: the watch is ended
    store.create(deployment("i", ownerReferences=[owner_ref(owner)]))
    held = summary(watch)  # ends by itself
    assert [name for _, name, _ in held] == ["a", "b", "c", "d", "e", "f", "g"]
    resumed = store.watch(DEPLOYMENTS, resource_version=str(held[-1][2]))
    assert drain(resumed) == [("ADDED", "h", at(8)), ("ADDED", "i", at(9))]


def test_the_collectors_writes_follow_the_owners_each_its_own(make_store: MakeStore) -> None:
    # As kube's garbage collector: each dependent is deleted by a write of its own, after
    # the owner's (so a watch that does not read while they are made is ended like any).
    store = make_store()
    at = revisions(store)
    owner = store.create(deployment("owner"))
    for i in range(3):
        store.create(deployment(f"child{i}", ownerReferences=[owner_ref(owner)]))
    watch = store.watch(DEPLOYMENTS)
    store.delete(DEPLOYMENTS, "owner", "default")
    assert drain(watch) == [
        ("DELETED", "owner", at(5)),
        ("DELETED", "child0", at(6)),
        ("DELETED", "child1", at(7)),
        ("DELETED", "child2", at(8)),
    ]
