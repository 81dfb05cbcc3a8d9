import dataclasses
from typing import Any

import pytest

from fleetwarden.api.errors import Invalid
from fleetwarden.api.meta import Resource
from fleetwarden.api.registry import REGISTRY
from fleetwarden.runtime.informer import (
    Cache,
    EventHandler,
    Informer,
    Snapshot,
    by_target_cluster,
    object_key,
    split_key,
)
from fleetwarden.store.interface import EventType, Store, WatchEvent, collection_of

CONFIGMAP = REGISTRY.info("v1", "ConfigMap")
NAMESPACE = REGISTRY.info("v1", "Namespace")
BINDING = REGISTRY.info("work.karmada.io/v1alpha2", "ResourceBinding")


def configmap(name: str, namespace: str = "default", **data: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": namespace},
        "data": data,
    }


def binding(name: str, *clusters: str) -> dict[str, Any]:
    return {
        "apiVersion": "work.karmada.io/v1alpha2",
        "kind": "ResourceBinding",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"clusters": [{"name": c, "replicas": 1} for c in clusters]},
    }


class Recorder:
    """Handlers that write down what they hear."""

    def __init__(self) -> None:
        self.heard: list[tuple[str, str]] = []

    def handler(self) -> EventHandler:
        return EventHandler(
            on_add=lambda o: self.heard.append(("add", object_key(o))),
            on_update=lambda old, new: self.heard.append(("update", object_key(new))),
            on_delete=lambda o: self.heard.append(("delete", object_key(o))),
        )


def names(objects: list[Resource]) -> list[str]:
    return [object_key(o) for o in objects]


def followed(store: Store, *infos: Any) -> tuple[Cache, list[Informer]]:
    """A cache listing `infos` and following the store's writes, as the virtual driver does."""
    cache = Cache(store)
    informers = [cache.informer(info) for info in infos]
    cache.sync()
    store.subscribe(cache.handle)
    return cache, informers


def test_keys_are_namespace_slash_name() -> None:
    obj = REGISTRY.decode(configmap("a", "ns1"))
    assert object_key(obj) == "ns1/a"
    assert split_key("ns1/a") == ("ns1", "a")
    assert split_key("member1") == ("", "member1")
    cluster_scoped = REGISTRY.decode(
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "ns1"}}
    )
    assert object_key(cluster_scoped) == "ns1"


def test_a_namespaces_changes_move_with_each_add_update_and_delete_in_it(store: Store) -> None:
    store.create(configmap("a"))
    _, (informer,) = followed(store, CONFIGMAP)
    listed = informer.changes("default")
    assert informer.changes("other") == 0  # nothing there yet
    readings = [listed]
    store.create(configmap("b"))
    readings.append(informer.changes("default"))
    store.update({**store.get(CONFIGMAP, "b", "default"), "data": {"k": "v"}})
    readings.append(informer.changes("default"))
    store.create(configmap("c", "other"))  # another namespace's change
    assert informer.changes("default") == readings[-1]
    store.delete(CONFIGMAP, "a", "default")
    store.delete(CONFIGMAP, "b", "default")
    readings.append(informer.changes("default"))
    # Emptied and filled again, it reads as at no earlier time.
    store.create(configmap("a"))
    readings.append(informer.changes("default"))
    assert len(set(readings)) == len(readings)


def test_one_informer_per_kind_however_its_kind_info_is_come_by(store: Store) -> None:
    cache = Cache(store)
    informer = cache.informer(CONFIGMAP)
    # An equal KindInfo that is another object (a hub's registry makes its own) finds it too.
    twin = dataclasses.replace(CONFIGMAP)
    assert twin == CONFIGMAP and twin is not CONFIGMAP
    assert cache.informer(twin) is informer
    assert cache.informer(CONFIGMAP) is informer
    assert cache.informer_for("v1", "ConfigMap") is informer


def test_sync_lists_typed_objects_and_marks_the_informer_synced(store: Store) -> None:
    store.create(configmap("b"))
    store.create(configmap("a", "other"))
    store.create(configmap("a"))
    store.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "other"}})
    cache = Cache(store)
    informer = cache.informer(CONFIGMAP)
    assert not informer.has_synced and not cache.has_synced
    cache.sync()
    assert informer.has_synced and cache.has_synced
    assert names(informer.list()) == ["default/a", "default/b", "other/a"]
    assert names(informer.list("other")) == ["other/a"]
    cm = informer.get("a", "default")
    assert isinstance(cm, Resource) and cm.kind == "ConfigMap"
    assert informer.get("missing", "default") is None
    # Namespaces were not asked for; an informer asked for later is listed at once.
    namespaces = cache.informer(NAMESPACE)
    assert namespaces.has_synced
    assert names(namespaces.list()) == ["other"]
    assert cache.informer(NAMESPACE) is namespaces


def snapshot_of(store: Store, *infos: Any) -> Snapshot:
    """Every object of `infos` in the store, as stored and decoded (newest first: not in
    the order a list gives them)."""
    objects = {
        collection_of(info): [(o, REGISTRY.decode(o)) for o in store.list(info).items[::-1]]
        for info in infos
    }
    return Snapshot(store.resource_version, objects)


def test_a_snapshot_of_the_store_as_it_is_is_taken_instead_of_a_list(store: Store) -> None:
    """A restored store's objects, decoded by the restore: the cache holds those very
    objects, and handlers hear them in the order a list would give."""
    for name in ("b", "a", "c"):
        store.create(configmap(name))
    snapshot = snapshot_of(store, CONFIGMAP)
    cache = Cache(store)
    informer = cache.informer(CONFIGMAP)
    heard = Recorder()
    informer.add_event_handler(heard.handler())
    cache.sync(snapshot)
    assert heard.heard == [("add", "default/a"), ("add", "default/b"), ("add", "default/c")]
    taken = {object_key(obj): obj for _, obj in snapshot.objects[collection_of(CONFIGMAP)]}
    assert all(informer.get(name, "default") is taken[f"default/{name}"] for name in "abc")
    # A kind the snapshot has none of has none in the store either.
    assert cache.informer(NAMESPACE).list() == []


def test_a_snapshot_the_store_moved_on_from_is_not_taken(store: Store) -> None:
    store.create(configmap("a"))
    snapshot = snapshot_of(store, CONFIGMAP)
    store.create(configmap("b"))
    cache = Cache(store)
    informer = cache.informer(CONFIGMAP)
    cache.sync(snapshot)
    assert names(informer.list()) == ["default/a", "default/b"]
    assert informer.get("a", "default") is not snapshot.objects[collection_of(CONFIGMAP)][0][1]


def test_watch_events_keep_the_cache_current_and_reach_handlers(store: Store) -> None:
    store.create(configmap("old"))
    heard = Recorder()
    _, (informer,) = followed(store, CONFIGMAP)
    informer.add_event_handler(heard.handler())
    created = store.create(configmap("a", x="1"))
    created["data"] = {"x": "2"}
    store.update(created)
    store.delete(CONFIGMAP, "old", "default")
    assert heard.heard == [
        ("add", "default/old"),  # already cached when the handler came: announced as added
        ("add", "default/a"),
        ("update", "default/a"),
        ("delete", "default/old"),
    ]
    current = informer.get("a", "default")
    assert current is not None and current.model_extra == {"data": {"x": "2"}}
    assert names(informer.list()) == ["default/a"]


def test_decoded_objects_are_shared_not_copied(store: Store) -> None:
    seen: list[Resource] = []
    _, (informer,) = followed(store, CONFIGMAP)
    informer.add_event_handler(EventHandler(on_add=seen.append))
    store.create(configmap("a"))
    assert informer.get("a", "default") is seen[0] is informer.list()[0]


def test_events_the_list_already_covered_are_skipped(store: Store) -> None:
    created = store.create(configmap("a"))
    _, (informer,) = followed(store, CONFIGMAP)
    heard = Recorder()
    informer.add_event_handler(heard.handler())
    stale = WatchEvent(EventType.DELETED, created, collection_of(CONFIGMAP))
    informer.handle(stale)
    assert informer.get("a", "default") is not None
    assert heard.heard == [("add", "default/a")]


def test_events_of_kinds_without_an_informer_are_ignored(store: Store) -> None:
    cache, _ = followed(store, CONFIGMAP)
    store.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "ns1"}})
    assert cache.informer(NAMESPACE).list()[0].name == "ns1"  # listed on demand, not watched


def test_a_relist_tells_handlers_what_changed(store: Store) -> None:
    store.create(configmap("stays"))
    changed = store.create(configmap("changes"))
    store.create(configmap("goes"))
    cache = Cache(store)
    informer = cache.informer(CONFIGMAP)
    heard = Recorder()
    informer.add_event_handler(heard.handler())
    cache.sync()
    heard.heard.clear()
    # Missed while the watch was down (no subscription here):
    store.update(changed | {"data": {"new": "1"}})
    store.delete(CONFIGMAP, "goes", "default")
    store.create(configmap("new"))
    cache.sync()
    assert heard.heard == [
        ("delete", "default/goes"),
        ("update", "default/changes"),
        ("add", "default/new"),
    ]


def test_indexes_follow_adds_updates_and_deletes(store: Store) -> None:
    store.create(binding("nginx", "member1", "member2"))
    cache = Cache(store)
    informer = cache.informer(BINDING)
    informer.add_indexers({"cluster": by_target_cluster})
    cache.sync()
    store.subscribe(cache.handle)
    assert names(informer.by_index("cluster", "member1")) == ["default/nginx"]
    redis = store.create(binding("redis", "member1"))
    assert names(informer.by_index("cluster", "member1")) == ["default/nginx", "default/redis"]
    store.update(redis | {"spec": {"clusters": [{"name": "member3"}]}})
    assert names(informer.by_index("cluster", "member1")) == ["default/nginx"]
    assert names(informer.by_index("cluster", "member3")) == ["default/redis"]
    store.delete(BINDING, "nginx", "default")
    assert informer.by_index("cluster", "member1") == []
    assert names(informer.by_index("cluster", "member3")) == ["default/redis"]


def test_an_indexer_added_late_indexes_what_is_cached(store: Store) -> None:
    store.create(binding("nginx", "member1"))
    _, (informer,) = followed(store, BINDING)
    informer.add_indexers({"cluster": by_target_cluster})
    assert names(informer.by_index("cluster", "member1")) == ["default/nginx"]
    informer.add_indexers({"cluster": by_target_cluster})  # the same one again: shared
    with pytest.raises(ValueError, match="indexer 'cluster' already exists"):
        informer.add_indexers({"cluster": lambda obj: []})
    with pytest.raises(KeyError, match="no index 'nope'"):
        informer.by_index("nope", "x")


def test_by_target_cluster_indexes_both_binding_kinds_and_nothing_else() -> None:
    assert by_target_cluster(REGISTRY.decode(binding("nginx", "member1", "member2"))) == [
        "member1",
        "member2",
    ]
    cluster_binding = binding("crb", "member3") | {"kind": "ClusterResourceBinding"}
    del cluster_binding["metadata"]["namespace"]
    assert by_target_cluster(REGISTRY.decode(cluster_binding)) == ["member3"]
    assert by_target_cluster(REGISTRY.decode(binding("unscheduled"))) == []
    assert by_target_cluster(REGISTRY.decode(configmap("a"))) == []


# Decoding only what someone needs.


LEASE = REGISTRY.info("coordination.k8s.io/v1", "Lease")


def test_objects_nothing_needs_yet_are_decoded_when_first_read(
    store: Store, decoded: list[str]
) -> None:
    store.create(configmap("listed"))
    _, (informer,) = followed(store, CONFIGMAP)
    created = store.create(configmap("a", x="1"))
    store.update(created | {"data": {"x": "2"}})
    assert decoded == []
    current = informer.get("a", "default")
    assert current is not None and current.model_extra == {"data": {"x": "2"}}
    assert informer.get("a", "default") is current  # decoded once, then shared
    assert names(informer.list()) == ["default/a", "default/listed"]
    assert decoded == ["a", "listed"]


def test_key_handlers_hear_every_change_without_any_decoding(
    store: Store, decoded: list[str]
) -> None:
    store.create(configmap("b"))
    store.create(configmap("a", "z-ns"))
    store.create(configmap("a", "a-b"))
    store.create(configmap("a"))
    _, (informer,) = followed(store, CONFIGMAP)
    keys: list[str] = []
    informer.add_event_handler(EventHandler(on_key=keys.append))
    assert keys == ["a-b/a", "default/a", "default/b", "z-ns/a"]  # namespace, then name
    created = store.create(configmap("c"))
    store.update(created | {"data": {"x": "1"}})
    store.delete(CONFIGMAP, "b", "default")
    assert keys[4:] == ["default/c", "default/c", "default/b"]
    assert decoded == []


def test_stored_handlers_hear_adds_and_updates_as_stored_without_any_decoding(
    store: Store, decoded: list[str]
) -> None:
    store.create(configmap("a", x="0"))
    _, (informer,) = followed(store, CONFIGMAP)
    heard: list[tuple[str, Any]] = []
    informer.add_event_handler(
        EventHandler(on_stored=lambda obj: heard.append((obj["metadata"]["name"], obj["data"])))
    )
    assert heard == [("a", {"x": "0"})]  # what is cached already, as added
    created = store.create(configmap("b", x="1"))
    store.update(created | {"data": {"x": "2"}})
    store.delete(CONFIGMAP, "a", "default")  # deletes are not stored states
    assert heard[1:] == [("b", {"x": "1"}), ("b", {"x": "2"})]
    assert decoded == []


def test_a_handler_that_needs_objects_makes_the_informer_decode_as_events_come(
    store: Store, decoded: list[str]
) -> None:
    created = store.create(configmap("a"))
    _, (informer,) = followed(store, CONFIGMAP)
    store.update(created | {"data": {"x": "1"}})
    keys: list[str] = []
    updates: list[tuple[str | None, str | None]] = []
    informer.add_event_handler(
        EventHandler(
            on_update=lambda old, new: updates.append(
                (old.metadata.resource_version, new.metadata.resource_version)
            ),
            on_key=keys.append,
        )
    )
    assert decoded == ["a"] and keys == ["default/a"]  # decoded at once; its key announced
    store.update(informer.get("a", "default").to_dict() | {"data": {"x": "2"}})  # type: ignore[union-attr]
    assert updates == [("2", "3")] and keys == ["default/a", "default/a"]
    assert decoded == ["a", "a"]


def test_list_of_one_namespace_decodes_only_that_namespace(
    store: Store, decoded: list[str]
) -> None:
    for namespace in ("a-b", "a", "b"):
        store.create(configmap("y", namespace))
        store.create(configmap("x", namespace))
    _, (informer,) = followed(store, CONFIGMAP)
    assert names(informer.list("a")) == ["a/x", "a/y"]
    assert decoded == ["x", "y"]
    assert names(informer.list()) == ["a/x", "a/y", "a-b/x", "a-b/y", "b/x", "b/y"]
    store.delete(CONFIGMAP, "x", "a")
    store.delete(CONFIGMAP, "y", "a")
    assert informer.list("a") == [] and names(informer.list("b")) == ["b/x", "b/y"]


def test_a_relist_tells_key_handlers_what_changed_without_decoding(
    store: Store, decoded: list[str]
) -> None:
    store.create(configmap("stays"))
    changed = store.create(configmap("changes"))
    store.create(configmap("goes"))
    cache = Cache(store)
    informer = cache.informer(CONFIGMAP)
    keys: list[str] = []
    informer.add_event_handler(EventHandler(on_key=keys.append))
    cache.sync()
    keys.clear()
    store.update(changed | {"data": {"new": "1"}})
    store.delete(CONFIGMAP, "goes", "default")
    store.create(configmap("new"))
    cache.sync()
    assert keys == ["default/goes", "default/changes", "default/new"]
    assert decoded == []
    changes = informer.get("changes", "default")
    assert changes is not None and changes.model_extra == {"data": {"new": "1"}}


def test_an_object_that_does_not_decode_fails_whoever_needs_it_decoded(store: Store) -> None:
    broken = {
        "apiVersion": "coordination.k8s.io/v1",
        "kind": "Lease",
        "metadata": {"name": "broken", "namespace": "default"},
        "spec": {"leaseDurationSeconds": "forty"},
    }
    _, (leases,) = followed(store, LEASE)
    store.create(broken)  # nothing needs it decoded yet: the write is not refused
    with pytest.raises(Invalid, match=r"spec.leaseDurationSeconds: Invalid value: \"forty\""):
        leases.get("broken", "default")
    store.delete(LEASE, "broken", "default")
    leases.add_event_handler(EventHandler(on_add=lambda obj: None))
    with pytest.raises(Invalid):
        store.create(broken)  # decoded as it comes: its writer hears, as subscribers' errors
    assert leases.get("broken", "default") is None  # and the cache did not take it
