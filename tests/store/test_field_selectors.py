"""Field selectors per kind, in lists and watches, on every backend: the field labels each
kind's conversion accepts (an Event's involvedObject.*, reason, source...; a Namespace's
status.phase; a Secret's type; a custom resource's name, and namespace if namespaced), and
the 400 for any other, worded as the kind's API server words it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from fleetwarden.api.errors import BadRequest, Expired
from fleetwarden.api.registry import REGISTRY
from fleetwarden.store import CoreStore, ListResult, SqliteStore, Watch

from .conftest import CLUSTERS, DEPLOYMENTS, NAMESPACES, MakeStore, Revisions, namespace, revisions

EVENTS = REGISTRY.info("v1", "Event")
SECRETS = REGISTRY.info("v1", "Secret")
PODS = REGISTRY.info("v1", "Pod")
MANAGED_CLUSTERS = REGISTRY.info("cluster.open-cluster-management.io/v1", "ManagedCluster")
POLICIES = REGISTRY.info("policy.karmada.io/v1alpha1", "PropagationPolicy")


def event(name: str, about: str, namespace: str = "default", **fields: Any) -> dict[str, Any]:
    """An Event about the Deployment `about` in the namespace."""
    involved = {"apiVersion": "apps/v1", "kind": "Deployment", "name": about}
    return {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": name, "namespace": namespace},
        "involvedObject": {**involved, "namespace": namespace, "uid": f"uid-{about}"},
        "reason": "ScheduleBindingSucceed",
        "type": "Normal",
        "source": {"component": "karmada-scheduler"},
        **fields,
    }


def names(result: ListResult) -> list[str]:
    return [o["metadata"]["name"] for o in result.items]


def unconditional(obj: dict[str, Any], **fields: Any) -> dict[str, Any]:
    """obj with fields changed, to write whatever the stored resourceVersion."""
    meta = {k: v for k, v in obj["metadata"].items() if k != "resourceVersion"}
    return {**obj, "metadata": meta, **fields}


def drain(watch: Watch) -> list[tuple[str, str, int]]:
    watch.close()
    return [(e.type.value, e.object["metadata"]["name"], e.resource_version) for e in watch]


def refusal(store: CoreStore, info: Any, selector: str) -> str:
    with pytest.raises(BadRequest) as err:
        store.list(info, field_selector=selector)
    assert err.value.code == 400
    return err.value.message


# --- lists ---------------------------------------------------------------------------------------


def test_events_by_their_involved_object(store: CoreStore) -> None:
    store.create(event("web.1", "web"))
    store.create(event("web.2", "web", type="Warning", reason="ScheduleBindingFailed"))
    store.create(event("db.1", "db"))
    store.create(event("web.3", "web", "team"))
    by_object = "involvedObject.kind=Deployment,involvedObject.name=web"
    assert names(store.list(EVENTS, field_selector=by_object)) == ["web.1", "web.2", "web.3"]
    assert names(store.list(EVENTS, "default", field_selector=by_object)) == ["web.1", "web.2"]
    assert names(store.list(EVENTS, field_selector="involvedObject.namespace=team")) == ["web.3"]
    assert names(store.list(EVENTS, field_selector="involvedObject.uid=uid-db")) == ["db.1"]
    assert names(store.list(EVENTS, field_selector="type=Warning")) == ["web.2"]
    assert names(store.list(EVENTS, field_selector="reason!=ScheduleBindingSucceed")) == ["web.2"]
    every = ["db.1", "web.1", "web.2", "web.3"]
    assert names(store.list(EVENTS, field_selector="involvedObject.fieldPath=")) == every
    assert names(store.list(EVENTS, field_selector="involvedObject.apiVersion=v1")) == []


def test_an_events_source_is_its_reporting_controller_when_it_has_no_source(
    store: CoreStore,
) -> None:
    store.create(event("old", "web"))
    store.create(event("new", "web", source=None, reportingComponent="karmada-scheduler"))
    store.create(event("both", "web", reportingComponent="karmada-controller-manager"))
    by_source = store.list(EVENTS, field_selector="source=karmada-scheduler")
    assert names(by_source) == ["both", "new", "old"]
    by_reporter = store.list(EVENTS, field_selector="reportingComponent=karmada-scheduler")
    assert names(by_reporter) == ["new"]


def test_namespaces_by_phase(store: CoreStore) -> None:
    active = store.create(namespace("active"))
    store.update({**active, "status": {"phase": "Active"}}, subresource="status")
    store.create(namespace("new"))
    assert names(store.list(NAMESPACES, field_selector="status.phase=Active")) == ["active"]
    assert names(store.list(NAMESPACES, field_selector="metadata.name=new")) == ["new"]
    # A namespace is in none: its conversion has no metadata.namespace.
    message = refusal(store, NAMESPACES, "metadata.namespace=")
    assert message == "field label not supported: metadata.namespace"


def test_secrets_by_type_an_untyped_one_being_opaque(store: CoreStore) -> None:
    secret = {"apiVersion": "v1", "kind": "Secret"}
    store.create({**secret, "metadata": {"name": "plain", "namespace": "default"}})
    store.create({**secret, "metadata": {"name": "tls", "namespace": "default"},
                  "type": "kubernetes.io/tls"})  # fmt: skip
    assert names(store.list(SECRETS, field_selector="type=Opaque")) == ["plain"]
    assert names(store.list(SECRETS, field_selector="type!=Opaque")) == ["tls"]


def test_pods_by_node_and_phase(store: CoreStore) -> None:
    pod = {"apiVersion": "v1", "kind": "Pod"}
    store.create({**pod, "metadata": {"name": "bound", "namespace": "default"},
                  "spec": {"nodeName": "node-1"}, "status": {"phase": "Running"}})  # fmt: skip
    store.create({**pod, "metadata": {"name": "pending", "namespace": "default"}})
    assert names(store.list(PODS, field_selector="spec.nodeName=node-1")) == ["bound"]
    assert names(store.list(PODS, field_selector="spec.nodeName=")) == ["pending"]


def test_custom_resources_by_name_and_by_namespace_when_namespaced(store: CoreStore) -> None:
    store.create(
        {
            "apiVersion": "policy.karmada.io/v1alpha1",
            "kind": "PropagationPolicy",
            "metadata": {"name": "p", "namespace": "team"},
        }
    )
    assert names(store.list(POLICIES, field_selector="metadata.namespace=team")) == ["p"]
    assert refusal(store, POLICIES, "spec.priority=1") == "field label not supported: spec.priority"
    # A cluster-scoped CRD has no namespace to select by.
    message = refusal(store, MANAGED_CLUSTERS, "metadata.namespace=")
    assert message == "field label not supported: metadata.namespace"


def test_kinds_without_a_field_label_conversion_refuse_in_apimachinerys_words(
    store: CoreStore,
) -> None:
    message = (
        '"spec.replicas" is not a known field selector: only "metadata.name", "metadata.namespace"'
    )
    assert refusal(store, DEPLOYMENTS, "spec.replicas=1") == message
    # Karmada's Cluster is served by karmada-aggregated-apiserver's scheme, not as a CRD.
    store.create({"apiVersion": "cluster.karmada.io/v1alpha1", "kind": "Cluster",
                  "metadata": {"name": "member1"}})  # fmt: skip
    assert names(store.list(CLUSTERS, field_selector="metadata.namespace=")) == ["member1"]
    assert refusal(store, CLUSTERS, "spec.syncMode=Push").startswith('"spec.syncMode" is not')


def test_an_event_field_label_is_refused_elsewhere(store: CoreStore) -> None:
    message = refusal(store, EVENTS, "involvedObject.name=web,spec.x=1")
    assert message == "field label not supported: spec.x"
    assert refusal(store, SECRETS, "involvedObject.name=web") == (
        "field label not supported: involvedObject.name"
    )


def test_a_paged_list_with_a_field_selector(store: CoreStore) -> None:
    for i in range(4):
        store.create(event(f"e{i}", "web" if i % 2 else "db"))
    page = store.list(EVENTS, field_selector="involvedObject.name=web", limit=1)
    assert names(page) == ["e1"] and page.remaining_item_count is None
    rest = store.list(EVENTS, field_selector="involvedObject.name=web", continue_=page.continue_)
    assert names(rest) == ["e3"]


# --- watches -------------------------------------------------------------------------------------


def test_a_watch_hears_of_the_events_about_one_object(store: CoreStore, rv: Revisions) -> None:
    watch = store.watch(EVENTS, field_selector="involvedObject.name=web,type=Warning")
    first = store.create(event("web.1", "web", type="Warning"))
    store.create(event("db.1", "db", type="Warning"))
    store.update({**first, "count": 2})
    quiet = store.create(event("web.2", "web"))
    store.update({**quiet, "type": "Warning"})  # starts matching
    store.update(unconditional(first, type="Normal"))  # stops matching
    store.delete(EVENTS, "web.2", "default")
    assert drain(watch) == [
        ("ADDED", "web.1", rv(1)),
        ("MODIFIED", "web.1", rv(3)),
        ("ADDED", "web.2", rv(5)),
        ("DELETED", "web.1", rv(6)),
        ("DELETED", "web.2", rv(7)),
    ]


def test_an_object_that_stops_matching_is_deleted_as_it_last_matched(
    store: CoreStore, rv: Revisions
) -> None:
    created = store.create(event("web.1", "web", type="Warning"))
    watch = store.watch(EVENTS, field_selector="type=Warning")
    store.update({**created, "type": "Normal", "message": "fine now"})
    watch.close()
    (deleted,) = list(watch)
    assert deleted.type.value == "DELETED"
    assert deleted.object["type"] == "Warning" and "message" not in deleted.object
    assert deleted.resource_version == rv(2)


def test_a_watch_from_zero_adds_only_what_matches(store: CoreStore, rv: Revisions) -> None:
    store.create(event("web.1", "web"))
    store.create(event("db.1", "db"))
    watch = store.watch(EVENTS, "default", "0", field_selector="involvedObject.name=db")
    store.create(event("db.2", "db"))
    assert drain(watch) == [("ADDED", "db.1", rv(2)), ("ADDED", "db.2", rv(3))]


def test_a_resumed_watch_knows_what_matched_at_its_resource_version(
    store: CoreStore, rv: Revisions
) -> None:
    web = store.create(event("web.1", "web", type="Warning"))
    db = store.create(event("db.1", "db"))
    store.create(event("other", "other"))
    watch = store.watch(EVENTS, resource_version=str(rv(3)), field_selector="type=Warning")
    store.update({**web, "type": "Normal"})  # matched at 3: the client has it
    store.update({**db, "type": "Warning"})  # did not: new to the client
    store.delete(EVENTS, "other", "default")  # never matched: none of its business
    later = store.watch(EVENTS, resource_version=str(rv(3)), field_selector="type=Warning")
    expected = [("DELETED", "web.1", rv(4)), ("ADDED", "db.1", rv(5))]
    assert drain(watch) == expected
    assert drain(later) == expected  # the same, though web.1 no longer matches when it starts


def test_a_resumed_watch_takes_an_object_compacted_away_as_held(make_store: MakeStore) -> None:
    store = make_store(event_log_size=2)
    at = revisions(store)
    warning = store.create(event("warning", "web", type="Warning"))  # soon out of the log
    store.create(event("a", "db"))
    store.update({**warning, "type": "Normal"})  # the log keeps 2 and 3: resumable from 1
    # What was it at 1? Compaction took that: the client may have it, so it hears.
    watch = store.watch(EVENTS, resource_version=str(at(1)), field_selector="type=Warning")
    assert drain(watch) == [("DELETED", "warning", at(3))]


def test_a_watch_with_a_label_and_a_field_selector(store: CoreStore, rv: Revisions) -> None:
    watch = store.watch(EVENTS, label_selector="tier=web", field_selector="type=Normal")
    labelled = event("web.1", "web")
    labelled["metadata"]["labels"] = {"tier": "web"}
    store.create(labelled)
    store.create(event("web.2", "web"))
    assert drain(watch) == [("ADDED", "web.1", rv(1))]


def test_a_watch_refuses_a_field_label_before_anything_else(make_store: MakeStore) -> None:
    store = make_store(event_log_size=1)
    at = revisions(store)
    for name in "abc":
        store.create(event(name, "web"))
    with pytest.raises(BadRequest, match=r"^field label not supported: spec\.x$"):
        store.watch(EVENTS, resource_version="0", field_selector="spec.x=1")
    with pytest.raises(BadRequest, match=r"^field label not supported: spec\.x$"):
        store.watch(EVENTS, resource_version=str(at(1)), field_selector="spec.x=1")
    with pytest.raises(Expired):
        store.watch(EVENTS, resource_version=str(at(1)), field_selector="type=Normal")
    with pytest.raises(BadRequest):
        store.watch(EVENTS, label_selector="a in")
    with pytest.raises(ValueError, match="every kind"):
        store.watch(field_selector="metadata.name=a")


def test_a_watch_resumed_after_a_restart_reads_the_log_from_the_file(tmp_path: Path) -> None:
    path = tmp_path / "store.db"
    store = SqliteStore(path)
    web = store.create(event("web.1", "web", type="Warning"))
    store.create(event("db.1", "db"))
    store.update({**web, "type": "Normal"})
    store.close()
    store = SqliteStore(path)
    try:
        watch = store.watch(EVENTS, resource_version="2", field_selector="type=Warning")
        watch.close()
        (deleted,) = list(watch)
        assert (deleted.type.value, deleted.resource_version) == ("DELETED", 3)
        assert deleted.object["type"] == "Warning"  # as it was at 2, from the file's log
    finally:
        store.close()
