from datetime import timedelta
from typing import Any

from fleetwarden.api.meta import Resource
from fleetwarden.api.registry import REGISTRY
from fleetwarden.runtime.clock import VirtualClock
from fleetwarden.runtime.events import EVENT, NORMAL, WARNING, EventRecorder
from fleetwarden.store.interface import Store

# 2025-01-01T00:00:00Z in Unix nanoseconds, as client-go names Events.
EPOCH_NANOS = 1735689600 * 10**9


def created(store: Store, obj: dict[str, Any]) -> Resource:
    return REGISTRY.decode(store.create(obj))


def cluster(store: Store) -> Resource:
    return created(
        store,
        {
            "apiVersion": "cluster.karmada.io/v1alpha1",
            "kind": "Cluster",
            "metadata": {"name": "member1"},
        },
    )


def events(store: Store) -> list[dict[str, Any]]:
    return store.list(EVENT).items


def test_an_event_names_the_object_reason_message_and_component(
    store: Store, clock: VirtualClock
) -> None:
    cm = created(
        store,
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cfg", "namespace": "ns1"}},
    )
    EventRecorder(store, clock, "cluster-controller").event(cm, WARNING, "SyncFailed", "boom")
    (event,) = events(store)
    assert event["metadata"]["name"] == f"cfg.{EPOCH_NANOS:x}"
    assert event["metadata"]["namespace"] == "ns1"
    assert event["involvedObject"] == {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "name": "cfg",
        "namespace": "ns1",
        "uid": cm.metadata.uid,
        "resourceVersion": cm.metadata.resource_version,
    }
    assert event["reason"] == "SyncFailed"
    assert event["message"] == "boom"
    assert event["type"] == "Warning"
    assert event["source"] == {"component": "cluster-controller"}
    assert event["firstTimestamp"] == event["lastTimestamp"] == "2025-01-01T00:00:00Z"
    assert event["count"] == 1


def test_events_about_cluster_scoped_objects_go_to_default(
    store: Store, clock: VirtualClock
) -> None:
    member1 = cluster(store)
    EventRecorder(store, clock, "cluster-controller").event(
        member1, NORMAL, "TaintClusterSucceed", "Taint cluster succeed."
    )
    (event,) = events(store)
    assert event["metadata"]["namespace"] == "default"
    assert "namespace" not in event["involvedObject"]
    assert event["involvedObject"]["kind"] == "Cluster"


def test_a_repeat_is_counted_not_duplicated(store: Store, clock: VirtualClock) -> None:
    member1 = cluster(store)
    recorder = EventRecorder(store, clock, "cluster-controller")
    recorder.event(member1, NORMAL, "TaintClusterSucceed", "Taint cluster succeed.")
    clock.advance(timedelta(minutes=1))
    recorder.event(member1, NORMAL, "TaintClusterSucceed", "Taint cluster succeed.")
    clock.advance(timedelta(minutes=1))
    recorder.event(member1, NORMAL, "TaintClusterSucceed", "Taint cluster succeed.")
    (event,) = events(store)
    assert event["count"] == 3
    assert event["firstTimestamp"] == "2025-01-01T00:00:00Z"
    assert event["lastTimestamp"] == "2025-01-01T00:02:00Z"


def test_a_different_type_reason_message_or_component_is_a_new_event(
    store: Store, clock: VirtualClock
) -> None:
    member1 = cluster(store)
    recorder = EventRecorder(store, clock, "cluster-controller")
    recorder.event(member1, NORMAL, "TaintClusterSucceed", "a")
    recorder.event(member1, NORMAL, "TaintClusterSucceed", "b")
    recorder.event(member1, WARNING, "TaintClusterSucceed", "b")
    recorder.event(member1, WARNING, "TaintClusterFailed", "b")
    EventRecorder(store, clock, "taint-manager").event(member1, NORMAL, "TaintClusterSucceed", "a")
    listed = events(store)
    assert [e["count"] for e in listed] == [1] * 5
    # At one instant the names stay unique: the next nanosecond, deterministically.
    assert sorted(e["metadata"]["name"] for e in listed) == [
        f"member1.{EPOCH_NANOS + i:x}" for i in range(5)
    ]


def test_a_deleted_event_is_written_anew(store: Store, clock: VirtualClock) -> None:
    member1 = cluster(store)
    recorder = EventRecorder(store, clock, "cluster-controller")
    recorder.event(member1, NORMAL, "TaintClusterSucceed", "a")
    (first,) = events(store)
    store.delete(EVENT, first["metadata"]["name"], "default")
    clock.advance(timedelta(seconds=1))
    recorder.event(member1, NORMAL, "TaintClusterSucceed", "a")
    (second,) = events(store)
    assert second["count"] == 1
    assert second["firstTimestamp"] == "2025-01-01T00:00:01Z"
