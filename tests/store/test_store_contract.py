"""The Store's Kubernetes semantics, the same on every backend (see conftest's `store`)."""

from __future__ import annotations

import random
import threading
from typing import Any

import pytest

from fleetwarden.api.errors import (
    AlreadyExists,
    BadRequest,
    Conflict,
    Expired,
    Invalid,
    NotFound,
    StatusError,
)
from fleetwarden.api.kinds import FieldLabels
from fleetwarden.store import CoreStore, EventType, PatchType, Propagation, WatchEvent

from .conftest import (
    CLUSTERS,
    CONFIGMAPS,
    DEPLOYMENTS,
    NAMESPACES,
    Clock,
    MakeStore,
    Revisions,
    deployment,
    lease,
    namespace,
    owner_ref,
)


def events_of(store: CoreStore) -> list[WatchEvent]:
    """Record every committed event from now on."""
    seen: list[WatchEvent] = []
    store.subscribe(seen.append)
    return seen


def summary(events: list[WatchEvent]) -> list[tuple[str, str, int]]:
    return [(e.type.value, e.object["metadata"]["name"], e.resource_version) for e in events]


# --- create ---------------------------------------------------------------------------


def test_create_fills_the_system_fields_from_the_injected_clock_and_uids(
    store: CoreStore, rv: Revisions
) -> None:
    created = store.create(deployment())
    meta = created["metadata"]
    assert meta["uid"] == "uid-1"
    assert meta["creationTimestamp"] == "2025-01-01T12:00:00Z"  # whole seconds, UTC
    assert (meta["resourceVersion"], meta["generation"]) == (str(rv(1)), 1)
    assert created["spec"] == {"replicas": 1}
    assert store.get(DEPLOYMENTS, "web", "default") == created


def test_one_resource_version_counts_every_write_of_every_kind(
    store: CoreStore, rv: Revisions
) -> None:
    store.create(deployment("a"))
    store.create(lease())
    store.create(namespace("team"))
    assert store.create(deployment("b"))["metadata"]["resourceVersion"] == str(rv(4))
    assert store.resource_version == rv(4)


def test_create_neither_keeps_nor_changes_the_callers_dict(store: CoreStore) -> None:
    obj = deployment()
    created = store.create(obj)
    assert obj == deployment()
    created["spec"]["replicas"] = 9
    obj["spec"]["replicas"] = 8
    assert store.get(DEPLOYMENTS, "web", "default")["spec"]["replicas"] == 1


def test_create_of_an_existing_name_is_already_exists(store: CoreStore) -> None:
    store.create(deployment())
    with pytest.raises(AlreadyExists) as err:
        store.create(deployment())
    assert err.value.message == 'deployments.apps "web" already exists'
    assert err.value.code == 409
    store.create(deployment(namespace="other"))  # the name is per namespace


def test_generate_name_appends_five_characters_from_the_api_servers_alphabet(
    make_store: MakeStore,
) -> None:
    names = []
    for _ in range(2):
        store = make_store(rng=random.Random(7))
        obj = deployment(name="", generateName="web-")
        names.append([store.create(obj)["metadata"]["name"] for _ in range(3)])
    assert names[0] == names[1]  # a seeded rng gives the same names
    for name in names[0]:
        assert name.startswith("web-") and len(name) == 9
        assert set(name[4:]) <= set("bcdfghjklmnpqrstvwxz2456789")


def test_generated_names_are_reproducible_when_uids_are_injected(make_store: MakeStore) -> None:
    first, second = make_store(), make_store()
    obj = deployment(name="", generateName="web-")
    assert first.create(obj)["metadata"]["name"] == second.create(obj)["metadata"]["name"]


def test_generate_name_retries_a_name_that_is_taken(make_store: MakeStore) -> None:
    taken = make_store(rng=random.Random(1)).create(deployment(name="", generateName="x-"))
    store = make_store(rng=random.Random(1))
    store.create(deployment(name=taken["metadata"]["name"]))
    created = store.create(deployment(name="", generateName="x-"))
    assert created["metadata"]["name"] != taken["metadata"]["name"]


def test_create_without_name_or_generate_name_is_invalid(store: CoreStore) -> None:
    with pytest.raises(Invalid) as err:
        store.create(deployment(name=""))
    assert err.value.message == (
        'Deployment.apps "" is invalid: metadata.name: Required value: '
        "name or generateName is required"
    )


def test_a_namespaced_kind_needs_a_namespace(store: CoreStore) -> None:
    with pytest.raises(BadRequest, match=r"^Namespace parameter required\.$"):
        store.create(deployment(namespace=""))
    with pytest.raises(BadRequest, match="Namespace parameter required"):
        store.get(DEPLOYMENTS, "web")


def test_a_cluster_scoped_object_loses_its_namespace(store: CoreStore) -> None:
    created = store.create(namespace("team", namespace="default"))
    assert "namespace" not in created["metadata"]
    assert store.get(NAMESPACES, "team")["metadata"]["name"] == "team"
    assert store.get(NAMESPACES, "team", "ignored") == created


def test_create_refuses_a_resource_version(store: CoreStore) -> None:
    with pytest.raises(StatusError) as err:
        store.create(deployment(resourceVersion="5"))
    assert err.value.message == (
        "Internal error occurred: resourceVersion should not be set on objects to be created"
    )


def test_create_drops_status_and_deletion_fields_the_client_cannot_set(store: CoreStore) -> None:
    obj = deployment(deletionTimestamp="2020-01-01T00:00:00Z", uid="mine", generation=7)
    obj["status"] = {"replicas": 3}
    created = store.create(obj)
    assert "status" not in created  # written through the status subresource only
    assert "deletionTimestamp" not in created["metadata"]
    assert (created["metadata"]["uid"], created["metadata"]["generation"]) == ("uid-1", 1)
    no_subresource = lease()
    no_subresource["status"] = {"kept": True}
    assert store.create(no_subresource)["status"] == {"kept": True}


def test_create_needs_kind_and_api_version(store: CoreStore) -> None:
    with pytest.raises(BadRequest, match="Object 'Kind' is missing in"):
        store.create({"apiVersion": "v1", "metadata": {"name": "x"}})
    with pytest.raises(BadRequest, match="Object 'apiVersion' is missing in"):
        store.create({"kind": "ConfigMap", "metadata": {"name": "x"}})


# --- get ------------------------------------------------------------------------------


def test_get_of_a_missing_object_is_not_found_worded_as_kubernetes(store: CoreStore) -> None:
    with pytest.raises(NotFound) as err:
        store.get(DEPLOYMENTS, "nope", "default")
    assert (err.value.message, err.value.code) == ('deployments.apps "nope" not found', 404)
    with pytest.raises(NotFound, match=r'^configmaps "nope" not found$'):
        store.get(CONFIGMAPS, "nope", "default")


def test_get_returns_a_fresh_copy_each_time(store: CoreStore) -> None:
    store.create(deployment(labels={"app": "web"}))
    first = store.get(DEPLOYMENTS, "web", "default")
    first["metadata"]["labels"]["app"] = "changed"
    assert store.get(DEPLOYMENTS, "web", "default")["metadata"]["labels"] == {"app": "web"}


def test_a_get_at_resource_version_0_is_served_from_the_cache_as_written(
    store: CoreStore,
) -> None:
    """kube's resourceVersion="0": any version will do; one this store wrote it has read."""
    created = store.create(deployment())
    assert store.get(DEPLOYMENTS, "web", "default", resource_version="0") == created
    store.delete(DEPLOYMENTS, "web", "default")
    with pytest.raises(NotFound):
        store.get(DEPLOYMENTS, "web", "default", resource_version="0")


# --- update ---------------------------------------------------------------------------


def test_update_with_a_stale_resource_version_is_a_conflict(store: CoreStore) -> None:
    stale = store.create(deployment())
    store.update({**stale, "spec": {"replicas": 2}})
    with pytest.raises(Conflict) as err:
        store.update({**stale, "spec": {"replicas": 3}})
    assert err.value.message == (
        'Operation cannot be fulfilled on deployments.apps "web": the object has been '
        "modified; please apply your changes to the latest version and try again"
    )
    assert store.get(DEPLOYMENTS, "web", "default")["spec"] == {"replicas": 2}


def test_update_without_a_resource_version_is_unconditional(
    store: CoreStore, rv: Revisions
) -> None:
    store.create(deployment())
    updated = store.update(deployment(replicas=5))
    assert (updated["spec"], updated["metadata"]["resourceVersion"]) == (
        {"replicas": 5},
        str(rv(2)),
    )


def test_update_keeps_the_stored_system_fields(store: CoreStore, clock: Clock) -> None:
    created = store.create(deployment())
    clock.advance(60)
    forged = deployment(replicas=2, uid="forged", creationTimestamp="1999-01-01T00:00:00Z")
    forged["metadata"].update(generation=40, deletionTimestamp="1999-01-01T00:00:00Z")
    updated = store.update(forged)
    for field in ("uid", "creationTimestamp"):
        assert updated["metadata"][field] == created["metadata"][field]
    assert updated["metadata"]["generation"] == 2
    assert "deletionTimestamp" not in updated["metadata"]


def test_update_of_a_missing_object_is_not_found(store: CoreStore) -> None:
    with pytest.raises(NotFound):
        store.update(deployment())


def test_generation_bumps_on_spec_changes_only(store: CoreStore) -> None:
    created = store.create(deployment())
    labelled = store.update({**created, "metadata": {**created["metadata"], "labels": {"a": "b"}}})
    assert labelled["metadata"]["generation"] == 1
    status = store.update({**labelled, "status": {"replicas": 1}}, subresource="status")
    assert status["metadata"]["generation"] == 1
    scaled = store.update({**status, "spec": {"replicas": 2}})
    assert scaled["metadata"]["generation"] == 2


def test_without_a_status_subresource_anything_but_metadata_is_spec(store: CoreStore) -> None:
    created = store.create(lease())
    updated = store.update({**created, "status": {"anything": 1}})
    assert updated["status"] == {"anything": 1}
    assert updated["metadata"]["generation"] == 2
    with pytest.raises(NotFound, match="the server could not find the requested resource"):
        store.update(updated, subresource="status")


def test_a_main_resource_update_keeps_the_stored_status(store: CoreStore) -> None:
    created = store.create(deployment())
    with_status = store.update({**created, "status": {"replicas": 1}}, subresource="status")
    updated = store.update({**with_status, "spec": {"replicas": 3}, "status": {"replicas": 99}})
    assert updated["status"] == {"replicas": 1}
    dropped = {k: v for k, v in updated.items() if k != "status"}
    assert store.update({**dropped, "spec": {"replicas": 4}})["status"] == {"replicas": 1}


def test_a_status_write_changes_only_status(store: CoreStore, rv: Revisions) -> None:
    created = store.create(deployment(labels={"app": "web"}))
    attempt = {
        **created,
        "metadata": {**created["metadata"], "labels": {"app": "hacked"}, "finalizers": ["x"]},
        "spec": {"replicas": 50},
        "status": {"readyReplicas": 1},
    }
    updated = store.update(attempt, subresource="status")
    assert updated["status"] == {"readyReplicas": 1}
    assert updated["spec"] == {"replicas": 1}
    assert updated["metadata"]["labels"] == {"app": "web"}
    assert "finalizers" not in updated["metadata"]
    assert updated["metadata"]["resourceVersion"] == str(rv(2))


def test_a_status_write_checks_the_resource_version_too(store: CoreStore) -> None:
    created = store.create(deployment())
    store.update(deployment(replicas=2))
    with pytest.raises(Conflict):
        store.update({**created, "status": {"replicas": 1}}, subresource="status")


def test_an_update_that_changes_nothing_writes_nothing(store: CoreStore, rv: Revisions) -> None:
    created = store.create(deployment())
    seen = events_of(store)
    again = store.update(created)
    assert again == created
    assert store.resource_version == rv(1) and seen == []
    assert store.update(created, subresource="status") == created
    assert store.resource_version == rv(1)


# --- patch ----------------------------------------------------------------------------


def test_merge_patch_merges_and_null_removes(store: CoreStore) -> None:
    store.create(deployment(labels={"a": "1", "b": "2"}))
    patched = store.patch(
        DEPLOYMENTS,
        "web",
        "default",
        {"metadata": {"labels": {"a": None, "c": "3"}}, "spec": {"paused": True}},
    )
    assert patched["metadata"]["labels"] == {"b": "2", "c": "3"}
    assert patched["spec"] == {"replicas": 1, "paused": True}
    assert patched["metadata"]["generation"] == 2


def test_json_patch_applies_operations_in_order(store: CoreStore) -> None:
    store.create(deployment(finalizers=["a", "b"]))
    patched = store.patch(
        DEPLOYMENTS,
        "web",
        "default",
        '[{"op": "test", "path": "/spec/replicas", "value": 1},'
        ' {"op": "replace", "path": "/spec/replicas", "value": 2},'
        ' {"op": "remove", "path": "/metadata/finalizers/0"}]',
        patch_type=PatchType.JSON,
    )
    assert (patched["spec"]["replicas"], patched["metadata"]["finalizers"]) == (2, ["b"])


def test_a_json_patch_that_does_not_apply_is_unprocessable_and_writes_nothing(
    store: CoreStore,
) -> None:
    store.create(deployment())
    with pytest.raises(StatusError) as err:
        store.patch(
            DEPLOYMENTS,
            "web",
            "default",
            [
                {"op": "replace", "path": "/spec/replicas", "value": 7},
                {"op": "test", "path": "/spec/replicas", "value": 1},
            ],
            patch_type=PatchType.JSON,
        )
    assert err.value.code == 422
    assert store.get(DEPLOYMENTS, "web", "default")["spec"]["replicas"] == 1
    with pytest.raises(BadRequest, match="error decoding patch"):
        store.patch(DEPLOYMENTS, "web", "default", "{not json")


def test_a_patch_carrying_a_stale_resource_version_is_a_conflict(
    store: CoreStore, rv: Revisions
) -> None:
    store.create(deployment())
    store.patch(DEPLOYMENTS, "web", "default", {"spec": {"replicas": 2}})
    with pytest.raises(Conflict):
        store.patch(DEPLOYMENTS, "web", "default", {"metadata": {"resourceVersion": str(rv(1))}})
    current = {"metadata": {"resourceVersion": str(rv(2))}, "spec": {"replicas": 3}}
    assert store.patch(DEPLOYMENTS, "web", "default", current)["spec"]["replicas"] == 3


def test_patch_through_the_status_subresource(store: CoreStore, rv: Revisions) -> None:
    store.create(deployment())
    patched = store.patch(
        DEPLOYMENTS,
        "web",
        "default",
        {"status": {"replicas": 1}, "spec": {"replicas": 9}},
        subresource="status",
    )
    assert (patched["status"], patched["spec"]) == ({"replicas": 1}, {"replicas": 1})
    main = store.patch(DEPLOYMENTS, "web", "default", {"status": {"replicas": 5}})
    assert main["status"] == {"replicas": 1} and main["metadata"]["resourceVersion"] == str(rv(2))


def test_a_patch_may_not_rename_the_object(store: CoreStore) -> None:
    store.create(deployment())
    with pytest.raises(BadRequest, match=r"does not match the name on the URL \(web\)"):
        store.patch(DEPLOYMENTS, "web", "default", {"metadata": {"name": "other"}})
    with pytest.raises(NotFound):
        store.patch(DEPLOYMENTS, "missing", "default", {})


def test_a_patch_may_not_move_the_object_to_another_kind_or_namespace(store: CoreStore) -> None:
    store.create(namespace("team"))
    config = {"apiVersion": "v1", "kind": "ConfigMap", "data": {"a": "1"}}
    store.create({**config, "metadata": {"name": "web", "namespace": "default"}})
    store.create({**config, "metadata": {"name": "web", "namespace": "team"}})
    store.create(deployment())
    rv = store.resource_version
    for patch, patch_type in (
        ({"kind": "ConfigMap", "data": {"a": "2"}}, PatchType.MERGE),
        ([{"op": "replace", "path": "/apiVersion", "value": "v1"}], PatchType.JSON),
    ):
        with pytest.raises(Invalid, match=r"^ \"\" is invalid: patch: Invalid value: ") as err:
            store.patch(DEPLOYMENTS, "web", "default", patch, patch_type=patch_type)
        assert err.value.code == 422
    moved = {"metadata": {"namespace": "team"}, "data": {"a": "2"}}
    with pytest.raises(BadRequest, match=r"^the namespace of the provided object does not match"):
        store.patch(CONFIGMAPS, "web", "default", moved)
    assert store.resource_version == rv  # nothing written anywhere
    # What a patch removes is the addressed object's again; a strategic merge patch's
    # kind is ignored, as kube's typed merge ignores it.
    cleared = {"kind": None, "metadata": {"namespace": None}, "spec": {"replicas": 2}}
    assert store.patch(DEPLOYMENTS, "web", "default", cleared)["kind"] == "Deployment"
    retyped = {"kind": "ConfigMap", "spec": {"replicas": 3}}
    patched = store.patch(DEPLOYMENTS, "web", "default", retyped, patch_type=PatchType.STRATEGIC)
    assert (patched["kind"], patched["metadata"]["namespace"]) == ("Deployment", "default")
    assert store.get(CONFIGMAPS, "web", "default")["data"] == {"a": "1"}


# --- delete, finalizers ---------------------------------------------------------------


def test_delete_without_finalizers_removes_and_reports_the_last_state(
    store: CoreStore, rv: Revisions
) -> None:
    created = store.create(deployment())
    seen = events_of(store)
    deleted = store.delete(DEPLOYMENTS, "web", "default")
    assert deleted["spec"] == created["spec"] and deleted["metadata"]["resourceVersion"] == str(
        rv(2)
    )
    assert summary(seen) == [("DELETED", "web", rv(2))]
    with pytest.raises(NotFound):
        store.get(DEPLOYMENTS, "web", "default")
    with pytest.raises(NotFound):
        store.delete(DEPLOYMENTS, "web", "default")
    store.create(deployment())  # the name is free again


def test_delete_with_finalizers_marks_the_object_terminating(
    store: CoreStore, clock: Clock, rv: Revisions
) -> None:
    store.create(deployment(finalizers=["example.com/cleanup"]))
    clock.advance(30)
    seen = events_of(store)
    marked = store.delete(DEPLOYMENTS, "web", "default")
    meta = marked["metadata"]
    assert meta["deletionTimestamp"] == "2025-01-01T12:00:30Z"
    assert meta["deletionGracePeriodSeconds"] == 0
    assert meta["generation"] == 2  # a pending deletion bumps generation
    assert store.get(DEPLOYMENTS, "web", "default") == marked
    clock.advance(30)
    assert store.delete(DEPLOYMENTS, "web", "default") == marked  # again: nothing changes
    assert summary(seen) == [("MODIFIED", "web", rv(2))]


def test_emptying_the_finalizers_of_a_terminating_object_removes_it(
    store: CoreStore, rv: Revisions
) -> None:
    store.create(deployment(finalizers=["a", "b"]))
    marked = store.delete(DEPLOYMENTS, "web", "default")
    seen = events_of(store)
    one_left = store.patch(DEPLOYMENTS, "web", "default", {"metadata": {"finalizers": ["b"]}})
    assert one_left["metadata"]["deletionTimestamp"] == marked["metadata"]["deletionTimestamp"]
    store.update({**one_left, "metadata": {**one_left["metadata"], "finalizers": []}})
    assert summary(seen) == [("MODIFIED", "web", rv(3)), ("DELETED", "web", rv(4))]
    assert seen[-1].object["metadata"]["finalizers"] == ["b"]  # the last stored state
    with pytest.raises(NotFound):
        store.get(DEPLOYMENTS, "web", "default")


def test_no_finalizer_may_be_added_to_a_terminating_object(store: CoreStore) -> None:
    store.create(deployment(finalizers=["a"]))
    marked = store.delete(DEPLOYMENTS, "web", "default")
    with pytest.raises(Invalid) as err:
        store.update({**marked, "metadata": {**marked["metadata"], "finalizers": ["a", "z", "b"]}})
    assert err.value.message == (
        'Deployment.apps "web" is invalid: metadata.finalizers: Forbidden: no new finalizers '
        'can be added if the object is being deleted, found new finalizers []string{"b", "z"}'
    )


def test_an_update_cannot_clear_a_deletion_timestamp(store: CoreStore) -> None:
    store.create(deployment(finalizers=["a"]))
    marked = store.delete(DEPLOYMENTS, "web", "default")
    meta = {k: v for k, v in marked["metadata"].items() if not k.startswith("deletion")}
    updated = store.update({**marked, "metadata": meta, "spec": {"replicas": 2}})
    assert updated["metadata"]["deletionTimestamp"] == marked["metadata"]["deletionTimestamp"]


# --- garbage collection ---------------------------------------------------------------


def test_removing_an_owner_removes_its_dependents_in_the_same_write(
    store: CoreStore, rv: Revisions
) -> None:
    owner = store.create(deployment("owner"))
    child = store.create(deployment("child", ownerReferences=[owner_ref(owner)]))
    store.create(deployment("grandchild", ownerReferences=[owner_ref(child)]))
    store.create(deployment("unrelated"))
    seen = events_of(store)
    store.delete(DEPLOYMENTS, "owner", "default")
    assert summary(seen) == [
        ("DELETED", "owner", rv(5)),
        ("DELETED", "child", rv(6)),
        ("DELETED", "grandchild", rv(7)),
    ]
    assert [o["metadata"]["name"] for o in store.list(DEPLOYMENTS).items] == ["unrelated"]


def test_a_dependent_with_finalizers_is_only_marked_terminating(
    store: CoreStore, rv: Revisions
) -> None:
    owner = store.create(namespace("team"))  # owners may be of another kind and scope
    store.create(deployment("child", ownerReferences=[owner_ref(owner)], finalizers=["f"]))
    seen = events_of(store)
    store.delete(NAMESPACES, "team")
    assert summary(seen) == [("DELETED", "team", rv(3)), ("MODIFIED", "child", rv(4))]
    assert "deletionTimestamp" in store.get(DEPLOYMENTS, "child", "default")["metadata"]


def test_a_dependent_with_a_living_owner_stays_and_drops_the_dangling_reference(
    store: CoreStore,
) -> None:
    first = store.create(deployment("first"))
    second = store.create(deployment("second"))
    store.create(deployment("shared", ownerReferences=[owner_ref(first), owner_ref(second)]))
    store.delete(DEPLOYMENTS, "first", "default")
    shared = store.get(DEPLOYMENTS, "shared", "default")
    assert shared["metadata"]["ownerReferences"] == [owner_ref(second)]
    store.delete(DEPLOYMENTS, "second", "default")
    with pytest.raises(NotFound):
        store.get(DEPLOYMENTS, "shared", "default")


def test_dependents_wait_for_their_owners_finalizers(store: CoreStore) -> None:
    owner = store.create(deployment("owner", finalizers=["f"]))
    store.create(deployment("child", ownerReferences=[owner_ref(owner)]))
    store.delete(DEPLOYMENTS, "owner", "default")
    assert store.get(DEPLOYMENTS, "child", "default")
    store.patch(DEPLOYMENTS, "owner", "default", {"metadata": {"finalizers": None}})
    assert store.list(DEPLOYMENTS).items == []


def test_an_orphaning_delete_leaves_the_dependents_without_their_reference_to_it(
    store: CoreStore, rv: Revisions
) -> None:
    owner = store.create(deployment("owner", finalizers=["f"]))
    other = store.create(deployment("other"))
    store.create(deployment("child", ownerReferences=[owner_ref(owner)]))
    store.create(deployment("shared", ownerReferences=[owner_ref(owner), owner_ref(other)]))
    seen = events_of(store)
    store.delete(DEPLOYMENTS, "owner", "default", propagation=Propagation.ORPHAN)
    # In the delete's own write, though the owner waits for its finalizer.
    assert summary(seen) == [("MODIFIED", "child", rv(5)), ("MODIFIED", "shared", rv(6)),
                             ("MODIFIED", "owner", rv(7))]  # fmt: skip
    assert "ownerReferences" not in store.get(DEPLOYMENTS, "child", "default")["metadata"]
    shared = store.get(DEPLOYMENTS, "shared", "default")
    assert shared["metadata"]["ownerReferences"] == [owner_ref(other)]
    store.patch(DEPLOYMENTS, "owner", "default", {"metadata": {"finalizers": None}})
    names = [item["metadata"]["name"] for item in store.list(DEPLOYMENTS).items]
    assert names == ["child", "other", "shared"]


def test_garbage_collection_follows_owner_references_changed_by_updates(
    store: CoreStore,
) -> None:
    owner = store.create(deployment("owner"))
    child = store.create(deployment("child", ownerReferences=[owner_ref(owner)]))
    store.patch(DEPLOYMENTS, "child", "default", {"metadata": {"ownerReferences": None}})
    store.delete(DEPLOYMENTS, "owner", "default")
    assert store.get(DEPLOYMENTS, "child", "default")["metadata"]["uid"] == child["metadata"]["uid"]


# --- list -----------------------------------------------------------------------------


def names(result: Any) -> list[str]:
    return [
        f"{o['metadata'].get('namespace', '')}/{o['metadata']['name']}".lstrip("/")
        for o in result.items
    ]


def test_list_is_in_etcd_key_order(store: CoreStore, rv: Revisions) -> None:
    for ns, name in [("b", "x"), ("a", "y"), ("a-b", "z"), ("a", "b")]:
        store.create(deployment(name, ns))
    store.create(lease())
    result = store.list(DEPLOYMENTS)
    # Keys are `namespace/name` strings: "a-b/z" sorts before "a/b" ('-' < '/').
    assert names(result) == ["a-b/z", "a/b", "a/y", "b/x"]
    assert result.resource_version == str(rv(5))
    assert names(store.list(DEPLOYMENTS, "a")) == ["a/b", "a/y"]
    assert names(store.list(DEPLOYMENTS, "")) == names(result)  # "" is all namespaces
    assert result.continue_ is None and result.remaining_item_count is None


def test_list_of_a_cluster_scoped_kind(store: CoreStore) -> None:
    for name in ["b", "a"]:
        store.create(namespace(name))
    assert names(store.list(NAMESPACES)) == ["a", "b"]
    assert names(store.list(NAMESPACES, "ignored")) == ["a", "b"]


def test_list_filters_by_label_selector(store: CoreStore) -> None:
    store.create(deployment("a", labels={"app": "web", "tier": "front"}))
    store.create(deployment("b", labels={"app": "db"}))
    store.create(deployment("c"))
    assert names(store.list(DEPLOYMENTS, label_selector="app=web")) == ["default/a"]
    assert names(store.list(DEPLOYMENTS, label_selector="app in (web,db),!tier")) == ["default/b"]
    assert names(store.list(DEPLOYMENTS, label_selector="app!=web")) == ["default/b", "default/c"]
    with pytest.raises(BadRequest):
        store.list(DEPLOYMENTS, label_selector="app in web")


def test_list_filters_by_field_selector(store: CoreStore) -> None:
    store.create(deployment("a", "one"))
    store.create(deployment("b", "two"))
    assert names(store.list(DEPLOYMENTS, field_selector="metadata.name=b")) == ["two/b"]
    assert names(store.list(DEPLOYMENTS, field_selector="metadata.namespace!=two")) == ["one/a"]
    with pytest.raises(BadRequest) as err:
        store.list(DEPLOYMENTS, field_selector="spec.replicas=1")
    assert err.value.message == (
        '"spec.replicas" is not a known field selector: only "metadata.name", "metadata.namespace"'
    )


def test_per_kind_fields_come_from_an_injected_function(make_store: MakeStore) -> None:
    def fields(info: Any) -> FieldLabels:
        if info is CLUSTERS:
            return FieldLabels({"spec.provider": lambda o: o.get("spec", {}).get("provider", "")})
        return FieldLabels()

    store = make_store(fields=fields)
    for name, provider in [("m1", "aws"), ("m2", "gcp"), ("m3", "")]:
        store.create(
            {
                "apiVersion": "cluster.karmada.io/v1alpha1",
                "kind": "Cluster",
                "metadata": {"name": name},
                "spec": {"provider": provider},
            }
        )
    assert names(store.list(CLUSTERS, field_selector="spec.provider=gcp")) == ["m2"]
    assert names(store.list(CLUSTERS, field_selector="spec.provider=")) == ["m3"]
    with pytest.raises(BadRequest, match=r"field label not supported: spec\.provider"):
        store.list(DEPLOYMENTS, field_selector="spec.provider=gcp")


def test_list_pages_with_limit_and_continue(store: CoreStore, rv: Revisions) -> None:
    for i in range(5):
        store.create(deployment(f"d{i}"))
    first = store.list(DEPLOYMENTS, limit=2)
    assert names(first) == ["default/d0", "default/d1"]
    assert (first.remaining_item_count, first.resource_version) == (3, str(rv(5)))
    assert first.continue_
    store.create(deployment("d9"))  # continued pages read the current state after the key
    second = store.list(DEPLOYMENTS, limit=2, continue_=first.continue_)
    assert names(second) == ["default/d2", "default/d3"]
    assert (second.remaining_item_count, second.resource_version) == (2, str(rv(5)))
    last = store.list(DEPLOYMENTS, limit=2, continue_=second.continue_)
    assert names(last) == ["default/d4", "default/d9"]
    assert last.continue_ is None and last.remaining_item_count is None


def test_a_page_of_a_filtered_list_leaves_the_remaining_count_unset(store: CoreStore) -> None:
    for i in range(4):
        store.create(deployment(f"d{i}", labels={"even": str(i % 2 == 0)}))
    page = store.list(DEPLOYMENTS, label_selector="even=True", limit=1)
    assert names(page) == ["default/d0"]
    assert page.continue_ and page.remaining_item_count is None
    rest = store.list(DEPLOYMENTS, label_selector="even=True", limit=1, continue_=page.continue_)
    assert names(rest) == ["default/d2"] and rest.continue_ is None


def test_a_continue_token_past_compaction_has_expired(make_store: MakeStore) -> None:
    store = make_store(event_log_size=3)
    for i in range(3):
        store.create(deployment(f"d{i}"))
    page = store.list(DEPLOYMENTS, limit=1)  # at resourceVersion 3
    store.create(lease("l0"))
    store.create(lease("l1"))
    store.create(lease("l2"))  # the log keeps 4..6: a watch may still resume from 3
    assert store.list(DEPLOYMENTS, limit=1, continue_=page.continue_).items
    store.create(lease("l3"))
    with pytest.raises(Expired) as err:
        store.list(DEPLOYMENTS, limit=1, continue_=page.continue_)
    assert err.value.code == 410
    assert err.value.message.startswith(
        "The provided continue parameter is too old to display a consistent list result."
    )


def test_a_malformed_continue_token_is_a_bad_request(store: CoreStore) -> None:
    for token in ["%%%", "eyJ2IjoxfQ", "bm90IGpzb24"]:
        with pytest.raises(BadRequest, match=r"^invalid continue token"):
            store.list(DEPLOYMENTS, continue_=token)


# --- concurrency ----------------------------------------------------------------------


def test_concurrent_writers_get_distinct_resource_versions_in_event_order(
    store: CoreStore, rv: Revisions
) -> None:
    seen = events_of(store)

    def writer(n: int) -> None:
        for i in range(50):
            store.create(deployment(f"w{n}-{i}"))

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert [e.resource_version for e in seen] == list(range(rv(1), rv(201)))
    assert len(store.list(DEPLOYMENTS).items) == 200


def test_subscribers_hear_every_write_in_order_and_may_write_back(
    store: CoreStore, rv: Revisions
) -> None:
    order: list[tuple[str, int]] = []

    def controller(event: WatchEvent) -> None:
        order.append((event.object["metadata"]["name"], event.resource_version))
        if event.type is EventType.ADDED and event.object["kind"] == "Deployment":
            store.create(lease(event.object["metadata"]["name"]))  # re-entrant write

    def auditor(event: WatchEvent) -> None:
        order.append(("audit", event.resource_version))

    store.subscribe(controller)
    unsubscribe = store.subscribe(auditor)
    store.create(deployment("a"))
    assert order == [("a", rv(1)), ("audit", rv(1)), ("a", rv(2)), ("audit", rv(2))]
    unsubscribe()
    store.create(namespace("n"))
    assert order[-1] == ("n", rv(3))
