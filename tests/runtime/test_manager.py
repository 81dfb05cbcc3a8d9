import contextlib
import gc
import logging
import threading
from collections.abc import Callable, Iterator
from datetime import timedelta
from typing import Any

import pytest

from fleetwarden.api.errors import AlreadyExists, Conflict, Expired
from fleetwarden.api.meta import Resource
from fleetwarden.api.registry import REGISTRY
from fleetwarden.runtime.clock import DEFAULT_EPOCH, RealClock, VirtualClock
from fleetwarden.runtime.events import EVENT, NORMAL
from fleetwarden.runtime.informer import by_target_cluster
from fleetwarden.runtime.manager import (
    DONE,
    REQUEUE,
    Context,
    Controller,
    ControllerManager,
    LivelockError,
    RealDriver,
    Result,
    VirtualDriver,
    Watches,
    collector_paused,
    requeue_after,
)
from fleetwarden.runtime.settings import Settings
from fleetwarden.store import MemoryStore
from fleetwarden.store.interface import Store, Watch, WatchEvent

CONFIGMAP = REGISTRY.info("v1", "ConfigMap")
BINDING = REGISTRY.info("work.karmada.io/v1alpha2", "ResourceBinding")
MS = timedelta(milliseconds=1)
S = timedelta(seconds=1)

Trace = list[tuple[str, str, timedelta]]


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
        "spec": {"clusters": [{"name": c} for c in clusters]},
    }


def traced(
    trace: Trace, name: str, then: Callable[[str, Context], Result] = lambda k, c: DONE
) -> Callable[[str, Context], Result]:
    """A reconcile that writes down (controller, key, virtual offset), then does `then`."""

    def reconcile(key: str, ctx: Context) -> Result:
        trace.append((name, key, ctx.clock.now() - DEFAULT_EPOCH))
        return then(key, ctx)

    return reconcile


def echo(trace: Trace, name: str = "echo", then: Any = None, **kw: Any) -> Controller:
    reconcile = traced(trace, name, then) if then else traced(trace, name)
    return Controller(name, [Watches(CONFIGMAP)], reconcile, **kw)


def virtual(store: Store, clock: VirtualClock, *controllers: Controller) -> VirtualDriver:
    manager = ControllerManager(store, clock)
    for controller in controllers:
        manager.add(controller)
    return VirtualDriver(manager)


# The virtual driver.


def test_objects_present_at_start_are_reconciled(store: Store, clock: VirtualClock) -> None:
    store.create(configmap("b"))
    store.create(configmap("a"))
    trace: Trace = []
    with virtual(store, clock, echo(trace)) as driver:
        driver.settle()
    assert trace == [("echo", "default/a", 0 * S), ("echo", "default/b", 0 * S)]


def test_writes_reach_the_cache_at_once_and_settle_runs_their_keys(
    store: Store, clock: VirtualClock
) -> None:
    trace: Trace = []
    with virtual(store, clock, echo(trace)) as driver:
        driver.settle()
        assert trace == []
        store.create(configmap("a"))
        assert driver.manager.cache.informer(CONFIGMAP).get("a", "default") is not None
        store.create(configmap("a", "other"))
        store.create(configmap("a", "other") | {"metadata": {"name": "b", "namespace": "other"}})
        driver.settle()
    assert [key for _, key, _ in trace] == ["default/a", "other/a", "other/b"]


def test_a_chain_of_controllers_settles_within_one_instant(
    store: Store, clock: VirtualClock
) -> None:
    """Each controller's write is the next one's event: all of it at t=0."""
    trace: Trace = []

    def copy_out(key: str, ctx: Context) -> Result:
        namespace, name = key.split("/")
        if namespace == "in":
            ctx.store.create(configmap(name, "out"))
        return DONE

    def only(namespace: str) -> Callable[[Resource], list[str]]:
        return lambda o: [f"{o.namespace}/{o.name}"] if o.namespace == namespace else []

    copier = Controller(
        "copier", [Watches(CONFIGMAP, only("in"))], traced(trace, "copier", copy_out)
    )
    reader = Controller("reader", [Watches(CONFIGMAP, only("out"))], traced(trace, "reader"))
    with virtual(store, clock, reader, copier) as driver:
        store.create(configmap("x", "in"))
        driver.settle()
    assert trace == [("copier", "in/x", 0 * S), ("reader", "out/x", 0 * S)]
    assert clock.now() == DEFAULT_EPOCH


def test_requeue_after_fires_at_exact_virtual_instants(store: Store, clock: VirtualClock) -> None:
    trace: Trace = []

    def thrice(key: str, ctx: Context) -> Result:
        return requeue_after(30 * S) if len(trace) < 4 else DONE

    store.create(configmap("a"))
    with virtual(store, clock, echo(trace, then=thrice)) as driver:
        driver.run_until(DEFAULT_EPOCH + 5 * 60 * S)
    assert [t for _, _, t in trace] == [0 * S, 30 * S, 60 * S, 90 * S]
    assert clock.now() == DEFAULT_EPOCH + 5 * 60 * S


def test_timers_fire_in_time_order_and_ties_in_controller_order(
    store: Store, clock: VirtualClock
) -> None:
    trace: Trace = []
    delays = {"first": [20 * S, 10 * S], "second": [10 * S, 20 * S]}

    def after(name: str) -> Callable[[str, Context], Result]:
        return lambda k, c: requeue_after(delays[name].pop(0)) if delays[name] else DONE

    store.create(configmap("a"))
    first, second = (echo(trace, name, then=after(name)) for name in ("first", "second"))
    with virtual(store, clock, first, second) as driver:
        driver.run_until(DEFAULT_EPOCH + 60 * S)
    assert [(name, t.seconds) for name, _, t in trace] == [
        ("first", 0),
        ("second", 0),
        ("second", 10),
        ("first", 20),
        ("first", 30),  # a tie: in the order the controllers were added
        ("second", 30),
    ]


def test_advance_to_next_timer_stops_at_until(store: Store, clock: VirtualClock) -> None:
    trace: Trace = []
    store.create(configmap("a"))
    with virtual(store, clock, echo(trace, then=lambda k, c: requeue_after(S))) as driver:
        driver.settle()
        assert driver.next_timer() == DEFAULT_EPOCH + S
        assert not driver.advance_to_next_timer(DEFAULT_EPOCH + 999 * MS)
        assert clock.now() == DEFAULT_EPOCH
        assert driver.advance_to_next_timer(DEFAULT_EPOCH + S)
        assert clock.now() == DEFAULT_EPOCH + S


def test_errors_and_conflicts_are_retried_with_backoff(
    store: Store, clock: VirtualClock, caplog: pytest.LogCaptureFixture
) -> None:
    trace: Trace = []
    failures: list[Exception] = [
        RuntimeError("boom"),
        Conflict("configmaps", "", "a"),
        AlreadyExists("works", "work.karmada.io", "a"),
    ]

    def flaky(key: str, ctx: Context) -> Result:
        if failures:
            raise failures.pop(0)
        return DONE

    store.create(configmap("a"))
    with caplog.at_level(logging.DEBUG), virtual(store, clock, echo(trace, then=flaky)) as driver:
        driver.run_until(DEFAULT_EPOCH + S)
    assert [t for _, _, t in trace] == [0 * MS, 5 * MS, 15 * MS, 35 * MS]
    errors = [r for r in caplog.records if r.levelno == logging.ERROR]
    assert [r.getMessage() for r in errors] == [
        "echo: reconciling 'default/a' failed",
        "echo: reconciling 'default/a' failed: works.work.karmada.io \"a\" already exists",
    ]
    # A bug shows its traceback; the API's refusal its message alone.
    assert [r.exc_info is not None for r in errors] == [True, False]
    assert any("conflict reconciling 'default/a'" in r.getMessage() for r in caplog.records)


def test_requeue_backs_off_and_success_forgets(store: Store, clock: VirtualClock) -> None:
    trace: Trace = []
    results = [REQUEUE, REQUEUE, DONE, REQUEUE, DONE]
    store.create(configmap("a"))
    with virtual(store, clock, echo(trace, then=lambda k, c: results.pop(0))) as driver:
        driver.run_until(DEFAULT_EPOCH + S)
        clock.set(DEFAULT_EPOCH + 2 * S)
        store.create(configmap("b"))
        store.delete(CONFIGMAP, "b", "default")
        driver.run_until(DEFAULT_EPOCH + 3 * S)
    offsets = [t - trace[0][2] for _, _, t in trace]
    # 5 ms, then 10 ms; after DONE the count starts over at 5 ms.
    assert offsets[:3] == [0 * MS, 5 * MS, 15 * MS]
    assert [t - trace[3][2] for _, _, t in trace[3:]] == [0 * MS, 5 * MS]


def test_a_livelock_is_reported_not_run_forever(store: Store, clock: VirtualClock) -> None:
    def bump(key: str, ctx: Context) -> Result:
        obj = ctx.store.get(CONFIGMAP, "a", "default")
        obj["data"] = {"n": str(int(obj["data"].get("n", "0")) + 1)}
        ctx.store.update(obj)
        return DONE

    store.create(configmap("a"))
    manager = ControllerManager(store, clock)
    manager.add(Controller("bumper", [Watches(CONFIGMAP)], bump))
    with VirtualDriver(manager, max_rounds=20) as driver, pytest.raises(LivelockError) as info:
        driver.settle()
    assert str(info.value) == (
        "controllers did not settle at 2025-01-01T00:00:00+00:00 after 20 rounds; "
        "still queued: bumper: default/a"
    )


def test_same_inputs_give_the_same_reconciles_at_the_same_times() -> None:
    def run() -> tuple[Trace, list[str]]:
        clock = VirtualClock()
        store = MemoryStore(now=clock.now, new_uid=iter(f"uid-{i}" for i in range(10**6)).__next__)
        trace: Trace = []

        def periodic(key: str, ctx: Context) -> Result:
            obj = ctx.cache.informer(CONFIGMAP).get(*reversed(key.split("/")))
            assert obj is not None
            ctx.recorder.event(obj, NORMAL, "Seen", key)
            if key == "default/a" and ctx.clock.now() - DEFAULT_EPOCH == 21 * S:
                ctx.store.create(configmap("c"))
            return requeue_after(7 * S if key == "default/a" else 11 * S)

        periodic_controller = echo(trace, "periodic", then=periodic)
        with virtual(store, clock, periodic_controller, echo(trace, "other")) as driver:
            for name in ("b", "a"):
                store.create(configmap(name))
            driver.run_until(DEFAULT_EPOCH + 40 * S)
        events = [f"{e['metadata']['name']} {e['count']}" for e in store.list(EVENT).items]
        return trace, events

    first, second = run(), run()
    assert first == second
    trace = first[0]
    assert ("other", "default/c", 21 * S) in trace
    assert ("periodic", "default/c", 21 * S) in trace
    assert [t.seconds for name, key, t in trace if key == "default/a" and name == "periodic"] == [
        0,
        7,
        14,
        21,
        28,
        35,
    ]


def test_update_enqueues_the_keys_of_old_and_new(store: Store, clock: VirtualClock) -> None:
    trace: Trace = []
    per_cluster = Controller(
        "per-cluster", [Watches(BINDING, by_target_cluster)], traced(trace, "per-cluster")
    )
    created = store.create(binding("nginx", "member1"))
    with virtual(store, clock, per_cluster) as driver:
        driver.settle()
        store.update(created | {"spec": {"clusters": [{"name": "member2"}]}})
        driver.settle()
    assert [key for _, key, _ in trace] == ["member1", "member1", "member2"]


def test_own_key_watches_need_no_decoding(
    store: Store, clock: VirtualClock, decoded: list[str]
) -> None:
    trace: Trace = []
    store.create(configmap("a"))
    with virtual(store, clock, echo(trace)) as driver:
        driver.settle()
        created = store.create(configmap("b"))
        store.update(created | {"data": {"x": "1"}})
        store.delete(CONFIGMAP, "a", "default")
        driver.settle()
    assert [key for _, key, _ in trace] == ["default/a", "default/b", "default/a"]
    assert decoded == []


def test_context_has_settings_indexes_and_a_recorder_per_controller(
    store: Store, clock: VirtualClock
) -> None:
    seen: list[tuple[bool, list[str]]] = []

    def look(key: str, ctx: Context) -> Result:
        bindings = ctx.cache.informer(BINDING).by_index("cluster", "member1")
        seen.append((ctx.settings.gate("Failover"), [b.name for b in bindings]))
        ctx.recorder.event(bindings[0], NORMAL, "Looked", "looked")
        return DONE

    settings = Settings.from_flags({"feature-gates": "Failover=true"})
    manager = ControllerManager(store, clock, settings)
    indexers = {BINDING: {"cluster": by_target_cluster}}
    manager.add(Controller("looker", [Watches(BINDING)], look, indexers=indexers))
    manager.add(Controller("sharer", [], lambda k, c: DONE, indexers=indexers))
    store.create(binding("nginx", "member1"))
    with VirtualDriver(manager) as driver:
        driver.settle()
    assert seen == [(True, ["nginx"])]
    (event,) = store.list(EVENT).items
    assert event["source"] == {"component": "looker"}


def test_controller_names_are_unique_and_the_virtual_driver_needs_a_virtual_clock(
    store: Store, clock: VirtualClock
) -> None:
    manager = ControllerManager(store, clock)
    manager.add(Controller("a", [], lambda k, c: DONE))
    with pytest.raises(ValueError, match="controller 'a' is already added"):
        manager.add(Controller("a", [], lambda k, c: DONE))
    with pytest.raises(TypeError, match="VirtualClock"):
        VirtualDriver(ControllerManager(store, RealClock()))


# The real driver.


def test_the_real_driver_reconciles_fires_timers_and_stops_cleanly() -> None:
    store = MemoryStore()
    runs: dict[str, int] = {}
    twice = threading.Event()

    def reconcile(key: str, ctx: Context) -> Result:
        runs[key] = runs.get(key, 0) + 1
        if key == "default/new" and runs[key] == 2:
            twice.set()
        return requeue_after(10 * MS) if runs[key] == 1 else DONE

    store.create(configmap("old"))
    manager = ControllerManager(store, RealClock())
    manager.add(Controller("echo", [Watches(CONFIGMAP)], reconcile, workers=3))
    driver = RealDriver(manager)
    driver.start()
    assert manager.cache.has_synced
    store.create(configmap("new"))
    assert twice.wait(timeout=5)
    driver.stop(timeout=5)
    assert not [t for t in threading.enumerate() if t.name.startswith(("echo-", "informers"))]
    assert runs == {"default/old": 2, "default/new": 2}


def test_stopping_the_real_driver_finishes_in_flight_reconciles_and_takes_no_more() -> None:
    store = MemoryStore()
    started, release = threading.Event(), threading.Event()
    finished: list[str] = []

    def slow(key: str, ctx: Context) -> Result:
        started.set()
        release.wait(timeout=5)
        finished.append(key)
        return DONE

    manager = ControllerManager(store, RealClock())
    manager.add(Controller("slow", [Watches(CONFIGMAP)], slow))
    with RealDriver(manager) as driver:
        store.create(configmap("a"))
        assert started.wait(timeout=5)
        stopper = threading.Thread(target=driver.stop)
        stopper.start()
        store.create(configmap("b"))  # queued behind "a": never taken
        stopper.join(timeout=0.02)
        assert stopper.is_alive()  # waits for the reconcile in flight
        release.set()
        stopper.join(timeout=5)
        assert not stopper.is_alive()
    assert finished == ["default/a"]


class ExpiringWatch:
    """A watch that expires at its first event, as one that fell too far behind."""

    def __init__(self, inner: Watch) -> None:
        self.inner = inner

    def __iter__(self) -> Iterator[WatchEvent]:
        for _ in self.inner:
            raise Expired("too old resource version: 1 (2)")
        return iter(())

    def close(self) -> None:
        self.inner.close()


class ExpiringOnceStore(MemoryStore):
    def __init__(self) -> None:
        super().__init__()
        self.expired = False

    def watch(self, *args: Any, **kwargs: Any) -> Watch:
        watch = super().watch(*args, **kwargs)
        if self.expired:
            return watch
        self.expired = True
        return ExpiringWatch(watch)


def test_the_real_driver_lists_again_when_its_watch_expires() -> None:
    store = ExpiringOnceStore()
    seen: list[str] = []
    ran = [threading.Event(), threading.Event()]

    def record(key: str, ctx: Context) -> Result:
        seen.append(key)
        ran[len(seen) - 1].set()
        return DONE

    manager = ControllerManager(store, RealClock())
    manager.add(Controller("echo", [Watches(CONFIGMAP)], record))
    with RealDriver(manager):
        store.create(configmap("a"))  # its event expires the watch; the new list has it
        assert ran[0].wait(timeout=5)
        store.create(configmap("b"))  # seen through the new watch
        assert ran[1].wait(timeout=5)
    assert seen == ["default/a", "default/b"]


def test_the_real_driver_lists_again_when_the_store_ends_its_watch_for_falling_behind(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The informers' watch stalls while twenty writes come: past the store's buffer of
    five the store ends it, and the driver lists again instead of going deaf."""
    store = MemoryStore(watch_buffer=5)
    stalled, release = threading.Event(), threading.Event()
    seen: set[str] = set()
    all_seen = threading.Event()

    def stall(obj: Resource) -> list[str]:
        stalled.set()
        release.wait(timeout=5)  # the watch thread stops here, at the first event
        return [f"default/{obj.metadata.name}"]

    def record(key: str, ctx: Context) -> Result:
        seen.add(key)
        if len(seen) == 21:
            all_seen.set()
        return DONE

    manager = ControllerManager(store, RealClock())
    manager.add(Controller("echo", [Watches(CONFIGMAP, stall)], record))
    with caplog.at_level(logging.INFO), RealDriver(manager):
        store.create(configmap("first"))
        assert stalled.wait(timeout=5)
        for i in range(20):
            store.create(configmap(f"cm{i}"))
        release.set()
        assert all_seen.wait(timeout=5), sorted(seen)
    assert "watch ended; listing again" in caplog.messages


class FailingCommitStore(MemoryStore):
    """A store whose first group commit fails, as SQLite's does when its file is gone."""

    def __init__(self) -> None:
        super().__init__()
        self.failures = 1

    @contextlib.contextmanager
    def deferred(self) -> Iterator[None]:
        yield
        if self.failures:
            self.failures -= 1
            raise OSError("disk I/O error")


def test_a_worker_whose_commit_fails_retries_the_key_and_lives_on(
    caplog: pytest.LogCaptureFixture,
) -> None:
    store = FailingCommitStore()
    runs: list[str] = []
    done = threading.Event()

    def record(key: str, ctx: Context) -> Result:
        runs.append(key)
        if len(runs) == 3:
            done.set()
        return DONE

    manager = ControllerManager(store, RealClock())
    manager.add(Controller("echo", [Watches(CONFIGMAP)], record))
    with caplog.at_level(logging.ERROR), RealDriver(manager):
        store.create(configmap("a"))  # its reconcile's commit fails: reconciled again
        store.create(configmap("b"))  # the same single worker takes it
        assert done.wait(timeout=5), runs
    assert sorted(runs) == ["default/a", "default/a", "default/b"]
    assert "echo: committing 'default/a' failed" in caplog.messages


def test_an_event_a_handler_fails_on_is_logged_and_later_ones_still_come(
    caplog: pytest.LogCaptureFixture,
) -> None:
    store = MemoryStore()
    seen: list[str] = []
    good = threading.Event()

    def keys(obj: Resource) -> list[str]:
        if obj.metadata.name == "bad":
            raise KeyError("a mapper's bug")
        return [f"default/{obj.metadata.name}"]

    def record(key: str, ctx: Context) -> Result:
        seen.append(key)
        good.set()
        return DONE

    manager = ControllerManager(store, RealClock())
    manager.add(Controller("echo", [Watches(CONFIGMAP, keys)], record))
    with caplog.at_level(logging.ERROR), RealDriver(manager):
        store.create(configmap("bad"))
        store.create(configmap("good"))  # heard through the same watch
        assert good.wait(timeout=5)
    assert seen == ["default/good"]
    (logged,) = [m for m in caplog.messages if m.startswith("informers:")]
    assert logged.startswith("informers: ADDED /configmaps default/bad (resourceVersion ")


def test_the_collector_pauses_inside_and_comes_back_as_it_was() -> None:
    assert gc.isenabled()
    with pytest.raises(RuntimeError), collector_paused():
        assert not gc.isenabled()
        raise RuntimeError("a run that fails")
    assert gc.isenabled()  # even after a failure
    gc.disable()
    try:
        with collector_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()  # one paused outside stays paused
    finally:
        gc.enable()
