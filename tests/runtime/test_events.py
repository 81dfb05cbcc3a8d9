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


def test_a_deleted_event_is_written_anew_under_its_name_with_its_count(
    store: Store, clock: VirtualClock
) -> None:
    # recordEvent: the patch finds nothing, so the observed Event is created instead,
    # keeping the name, count and first time the correlator has for it.
    member1 = cluster(store)
    recorder = EventRecorder(store, clock, "cluster-controller")
    recorder.event(member1, NORMAL, "TaintClusterSucceed", "a")
    (first,) = events(store)
    store.delete(EVENT, first["metadata"]["name"], "default")
    clock.advance(timedelta(seconds=1))
    recorder.event(member1, NORMAL, "TaintClusterSucceed", "a")
    (second,) = events(store)
    assert second["metadata"]["name"] == first["metadata"]["name"]
    assert second["count"] == 2
    assert second["firstTimestamp"] == "2025-01-01T00:00:00Z"
    assert second["lastTimestamp"] == "2025-01-01T00:00:01Z"


def test_similar_events_are_combined_from_the_tenth_distinct_message(
    store: Store, clock: VirtualClock
) -> None:
    # EventAggregator: one object, type and reason; ten distinct messages within ten
    # minutes make the tenth the combined Event, which later ones count.
    member1 = cluster(store)
    recorder = EventRecorder(store, clock, "cluster-controller")
    for i in range(9):
        recorder.event(member1, WARNING, "ProbeFailed", f"timeout {i}")
        clock.advance(timedelta(seconds=30))
    assert len(events(store)) == 9
    recorder.event(member1, WARNING, "ProbeFailed", "timeout 9")
    combined = [e for e in events(store) if e["message"].startswith("(combined")]
    assert [(e["message"], e["count"]) for e in combined] == [
        ("(combined from similar events): timeout 9", 1)
    ]
    clock.advance(timedelta(seconds=30))
    recorder.event(member1, WARNING, "ProbeFailed", "timeout 10")
    (combined,) = [e for e in events(store) if e["message"].startswith("(combined")]
    assert combined["message"] == "(combined from similar events): timeout 10"
    assert combined["count"] == 2
    assert len(events(store)) == 10
    # Another reason, or another type, is a group of its own.
    recorder.event(member1, WARNING, "OtherReason", "timeout 11")
    recorder.event(member1, NORMAL, "ProbeFailed", "timeout 12")
    assert {e["message"] for e in events(store)} >= {"timeout 11", "timeout 12"}


def test_a_repeat_of_a_message_still_in_the_group_is_not_combined(
    store: Store, clock: VirtualClock
) -> None:
    # Once aggregating, the group drops one message (upstream an arbitrary one, here the
    # oldest): a repeat of one still held is counted on its own Event.
    member1 = cluster(store)
    recorder = EventRecorder(store, clock, "c")
    for i in range(10):
        recorder.event(member1, WARNING, "ProbeFailed", f"timeout {i}")
    recorder.event(member1, WARNING, "ProbeFailed", "timeout 5")
    (five,) = [e for e in events(store) if e["message"] == "timeout 5"]
    assert five["count"] == 2
    recorder.event(member1, WARNING, "ProbeFailed", "timeout 0")  # dropped from the group
    (combined,) = [e for e in events(store) if e["message"].startswith("(combined")]
    assert (combined["message"], combined["count"]) == (
        "(combined from similar events): timeout 0",
        2,
    )


def test_similar_events_ten_minutes_apart_start_a_new_group(
    store: Store, clock: VirtualClock
) -> None:
    member1 = cluster(store)
    recorder = EventRecorder(store, clock, "c")
    for i in range(20):
        recorder.event(member1, WARNING, "ProbeFailed", f"timeout {i}")
        clock.advance(timedelta(minutes=10, seconds=1))
    assert not [e for e in events(store) if e["message"].startswith("(combined")]
    assert len(events(store)) == 20


def test_a_component_writes_25_events_about_an_object_then_one_every_five_minutes(
    store: Store, clock: VirtualClock
) -> None:
    # The spam filter: a token bucket per component and object, 25 at once, refilled at
    # one per 300 s. Distinct reasons, so that neither the logger nor the aggregator
    # folds them.
    member1 = cluster(store)
    recorder = EventRecorder(store, clock, "c")
    for i in range(30):
        recorder.event(member1, NORMAL, f"Reason{i}", "m")
    assert len(events(store)) == 25
    clock.advance(timedelta(seconds=299))
    recorder.event(member1, NORMAL, "Late", "m")
    assert len(events(store)) == 25
    clock.advance(timedelta(seconds=1))
    recorder.event(member1, NORMAL, "Late", "m")
    assert [e["count"] for e in events(store) if e["reason"] == "Late"] == [2]
    recorder.event(member1, NORMAL, "Later", "m")  # the token just refilled is spent
    assert len(events(store)) == 26
    assert "Later" not in {e["reason"] for e in events(store)}
    # Another component, or another object, has a bucket of its own.
    EventRecorder(store, clock, "other").event(member1, NORMAL, "Reason0", "m")
    assert len(events(store)) == 27


def test_a_dropped_repeat_is_counted_all_the_same(store: Store, clock: VirtualClock) -> None:
    # eventObserve counts before the filter drops: the next repeat let through says so.
    member1 = cluster(store)
    recorder = EventRecorder(store, clock, "c")
    for i in range(25):
        recorder.event(member1, NORMAL, "Same" if i == 0 else f"Reason{i}", "m")
    recorder.event(member1, NORMAL, "Same", "m")  # over the burst: dropped, counted
    (same,) = [e for e in events(store) if e["reason"] == "Same"]
    assert same["count"] == 1
    clock.advance(timedelta(minutes=5))
    recorder.event(member1, NORMAL, "Same", "m")
    (same,) = [e for e in events(store) if e["reason"] == "Same"]
    assert same["count"] == 3


def test_events_at_one_instant_from_several_components_take_the_next_free_names(
    store: Store, clock: VirtualClock
) -> None:
    member1 = cluster(store)
    for component in ("a", "b", "c"):
        recorder = EventRecorder(store, clock, component)
        recorder.event(member1, NORMAL, "R1", "m")
        recorder.event(member1, NORMAL, "R2", "m")
    # Taken by someone else in between: skipped as well.
    store.create(
        {
            "apiVersion": "v1",
            "kind": "Event",
            "metadata": {"name": f"member1.{EPOCH_NANOS + 6:x}", "namespace": "default"},
        }
    )
    EventRecorder(store, clock, "d").event(member1, NORMAL, "R1", "m")
    assert sorted(e["metadata"]["name"] for e in events(store)) == [
        f"member1.{EPOCH_NANOS + i:x}" for i in range(8)
    ]
