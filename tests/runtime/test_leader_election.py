"""Leader election as client-go's: a Lease taken, renewed, respected, expired by the
candidate's own clock, released; and a leader that cannot renew steps down before anyone
else may lead. Each test drives the electors one tick at a time on a virtual clock."""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from datetime import timedelta
from typing import Any

import pytest

from fleetwarden.api.meta import format_micro_time
from fleetwarden.api.registry import REGISTRY
from fleetwarden.runtime.clock import VirtualClock
from fleetwarden.runtime.leader_election import (
    LEASE,
    ElectedControllers,
    LeaderCallbacks,
    LeaderElector,
    new_identity,
)
from fleetwarden.runtime.manager import (
    DONE,
    Context,
    Controller,
    ControllerManager,
    RealDriver,
    Result,
    Watches,
)
from fleetwarden.runtime.metrics import Metrics
from fleetwarden.runtime.settings import LeaderElectionConfiguration, SettingsError
from fleetwarden.store import MemoryStore
from fleetwarden.store.interface import Obj, Store, WatchEvent

NAME, NAMESPACE = "karmada-controller-manager", "karmada-system"
CONFIG = LeaderElectionConfiguration()  # 15s lease, 10s renew deadline, 2s retry period
RETRY = CONFIG.retry_period


class Candidate:
    """An elector and what its callbacks saw, in one log shared by all candidates."""

    def __init__(
        self, identity: str, store: Store, clock: VirtualClock, log: list[str], **kwargs: Any
    ) -> None:
        self.log = log
        callbacks = LeaderCallbacks(
            on_started_leading=lambda leading: log.append(f"{identity} started"),
            on_stopped_leading=lambda: log.append(f"{identity} stopped"),
            on_new_leader=lambda holder: log.append(f"{identity} sees {holder or 'nobody'}"),
        )
        self.elector = LeaderElector(
            store, clock, NAME, NAMESPACE, identity, CONFIG, callbacks, **kwargs
        )

    def tick(self) -> timedelta:
        return self.elector.tick()


@pytest.fixture
def log() -> list[str]:
    return []


def lease(store: Store) -> Mapping[str, Any]:
    spec: Mapping[str, Any] = store.get(LEASE, NAME, NAMESPACE)["spec"]
    return spec


def test_the_first_candidate_creates_the_lease_and_leads(
    store: MemoryStore, clock: VirtualClock, log: list[str]
) -> None:
    metrics = Metrics()
    a = Candidate("a", store, clock, log, metrics=metrics)
    assert metrics.leader_election_master_status.labels(NAME)._value.get() == 0
    assert a.tick() == RETRY
    now = format_micro_time(clock.now())
    assert lease(store) == {
        "holderIdentity": "a", "leaseDurationSeconds": 15, "acquireTime": now,
        "renewTime": now, "leaseTransitions": 0,
    }  # fmt: skip
    assert log == ["a sees a", "a started"]
    assert a.elector.leading()
    assert metrics.leader_election_master_status.labels(NAME)._value.get() == 1


def test_the_leader_renews_keeping_its_acquire_time(
    store: MemoryStore, clock: VirtualClock, log: list[str]
) -> None:
    a = Candidate("a", store, clock, log)
    a.tick()
    acquired = format_micro_time(clock.now())
    clock.advance(RETRY)
    a.tick()
    spec = lease(store)
    assert (spec["acquireTime"], spec["renewTime"]) == (acquired, format_micro_time(clock.now()))
    assert spec["leaseTransitions"] == 0
    assert log == ["a sees a", "a started"]


def test_a_held_lease_is_respected_until_it_expires_by_the_candidates_own_clock(
    store: MemoryStore, clock: VirtualClock, log: list[str]
) -> None:
    # Renewed, says the holder, an hour ago: a clock far behind, not a dead holder.
    hour_ago = format_micro_time(clock.now() - timedelta(hours=1))
    spec = {"holderIdentity": "gone", "leaseDurationSeconds": 15, "acquireTime": hour_ago,
            "renewTime": hour_ago, "leaseTransitions": 3}  # fmt: skip
    store.create({"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
                  "metadata": {"name": NAME, "namespace": NAMESPACE}, "spec": spec})  # fmt: skip
    b = Candidate("b", store, clock, log)
    assert b.tick() >= RETRY  # jittered: up to 2.2 times longer
    clock.advance(timedelta(seconds=15) - timedelta(microseconds=1))
    b.tick()
    assert log == ["b sees gone"]
    clock.advance(timedelta(microseconds=1))
    b.tick()
    assert log == ["b sees gone", "b sees b", "b started"]
    assert lease(store)["holderIdentity"] == "b"
    assert lease(store)["leaseTransitions"] == 4


def test_a_renewal_seen_restarts_the_wait(
    store: MemoryStore, clock: VirtualClock, log: list[str]
) -> None:
    a, b = Candidate("a", store, clock, log), Candidate("b", store, clock, log)
    a.tick()
    b.tick()
    clock.advance(timedelta(seconds=10))
    a.tick()
    clock.advance(timedelta(seconds=10))  # 20 s after b first saw a, 10 s after a renewed
    b.tick()
    assert not b.elector.is_leader()


def test_a_concurrent_write_makes_the_attempt_fail_with_a_conflict(
    store: MemoryStore, clock: VirtualClock, log: list[str]
) -> None:
    a = Candidate("a", store, clock, log)
    a.tick()

    class Racing(MemoryStore):
        """Once `race` is set, c takes the Lease between b's read and b's write."""

        race = False

        def get(self, *args: Any, **kwargs: Any) -> Obj:
            read = store.get(*args, **kwargs)
            if self.race:
                store.update({**read, "spec": {**read["spec"], "holderIdentity": "c"}})
            return read

        def update(self, obj: Mapping[str, Any], *, subresource: str | None = None) -> Obj:
            return store.update(obj, subresource=subresource)

    racing = Racing()
    b = Candidate("b", racing, clock, log)
    b.tick()
    clock.advance(timedelta(seconds=20))  # a is gone: its lease expired for b
    racing.race = True
    assert not b.elector.try_acquire_or_renew()
    assert lease(store)["holderIdentity"] == "c"


def test_a_clean_stop_releases_the_lease_for_another_to_take_at_once(
    store: MemoryStore, clock: VirtualClock, log: list[str]
) -> None:
    a, b = Candidate("a", store, clock, log), Candidate("b", store, clock, log)
    a.tick()
    b.tick()
    stop = threading.Event()
    stop.set()
    a.elector.run(stop)
    spec = lease(store)
    assert (spec["holderIdentity"], spec["leaseDurationSeconds"]) == ("", 1)
    b.tick()  # at the very same instant
    assert log == ["a sees a", "a started", "b sees a", "a stopped", "b sees b", "b started"]
    assert lease(store)["leaseTransitions"] == 1


def test_on_an_exclusive_store_a_lease_left_by_a_dead_process_is_taken_at_once(
    store: MemoryStore, clock: VirtualClock, log: list[str]
) -> None:
    Candidate("before-kill-9", store, clock, log).tick()
    after = Candidate("after-restart", store, clock, log, exclusive=True)
    after.tick()
    assert after.elector.leading()
    assert lease(store)["holderIdentity"] == "after-restart"


class Stalling(MemoryStore):
    """A store whose Lease writes fail, or hang until released, once `stall` is called;
    and that records every other write, and whether it came after its owner stopped."""

    def __init__(self, store: MemoryStore, *, hang: bool) -> None:
        self._store, self._hang = store, hang
        self._stalled = False
        self.released = threading.Event()
        self.stopped = False
        self.writes_after_stop: list[str] = []

    def stall(self) -> None:
        self._stalled = True

    def get(self, *args: Any, **kwargs: Any) -> Obj:
        return self._store.get(*args, **kwargs)

    def create(self, obj: Mapping[str, Any]) -> Obj:
        self._check(obj)
        return self._store.create(obj)

    def update(self, obj: Mapping[str, Any], *, subresource: str | None = None) -> Obj:
        self._check(obj)
        return self._store.update(obj, subresource=subresource)

    def _check(self, obj: Mapping[str, Any]) -> None:
        if obj["kind"] != "Lease":
            if self.stopped:
                self.writes_after_stop.append(obj["metadata"]["name"])
            return
        if self._stalled and not self._hang:
            raise TimeoutError("etcdserver: request timed out")
        if self._stalled:
            self.released.wait()


@pytest.mark.parametrize("hang", [False, True], ids=["failing", "hanging"])
def test_a_stalled_leader_stops_before_another_may_lead_and_writes_nothing_after(
    store: MemoryStore, clock: VirtualClock, log: list[str], hang: bool
) -> None:
    stalling = Stalling(store, hang=hang)
    a = Candidate("a", stalling, clock, log)
    b = Candidate("b", store, clock, log)
    a.tick()
    b.tick()
    start = clock.now()
    stalling.stall()

    def leading_writes() -> None:
        """What a's controllers do: write while a leads, as a fenced writer would."""
        if a.elector.leading():
            stalling.create({"apiVersion": "v1", "kind": "ConfigMap",
                             "metadata": {"name": str(clock.now()), "namespace": "default"}})  # fmt: skip

    try:
        while clock.now() - start < timedelta(seconds=30):
            clock.advance(RETRY if not hang else CONFIG.renew_deadline)
            leading_writes()
            if "a stopped" not in log:
                a.tick()
                stalling.stopped = "a stopped" in log
            b.tick()
    finally:
        stalling.released.set()
    stopped, started = log.index("a stopped"), log.index("b started")
    assert stopped < started
    assert not stalling.writes_after_stop
    assert lease(store)["holderIdentity"] == "b"
    assert lease(store)["leaseTransitions"] == 1


def test_settings_are_validated_as_client_go_does_naming_the_flags() -> None:
    with pytest.raises(SettingsError) as caught:
        LeaderElectionConfiguration.from_flags({"leader-elect-lease-duration": "10s"})
    assert caught.value.setting == "leader-elect-lease-duration"
    assert str(caught.value) == (
        'invalid value "10s" for flag "--leader-elect-lease-duration": leaseDuration must '
        "be greater than renewDeadline (--leader-elect-renew-deadline=10s)"
    )
    with pytest.raises(SettingsError) as caught:
        LeaderElectionConfiguration.from_flags({"leader-elect-retry-period": "9s"})
    assert str(caught.value) == (
        'invalid value "10s" for flag "--leader-elect-renew-deadline": renewDeadline must '
        "be greater than retryPeriod*JitterFactor (1.2) (--leader-elect-retry-period=9s)"
    )
    with pytest.raises(SettingsError, match='"--leader-elect-retry-period": retryPeriod must'):
        LeaderElectionConfiguration.from_flags({"leader-elect-retry-period": "0s"})
    with pytest.raises(SettingsError, match=r'"--leader-elect": strconv\.ParseBool'):
        LeaderElectionConfiguration.from_flags({"leader-elect": "yes"})
    off = LeaderElectionConfiguration.from_flags(
        {"leader-elect": "false", "leader-elect-lease-duration": "1s"}
    )
    assert not off.leader_elect  # no elector: its timings are not checked


def test_an_identity_is_the_host_name_and_a_uuid() -> None:
    import socket

    host, _, rest = new_identity().rpartition("_")
    assert host == socket.gethostname() and len(rest) == 36


CONFIG_MAP = REGISTRY.info("v1", "ConfigMap")


def writer(identity: str) -> Controller:
    """A controller that writes as long as it runs: each of its writes wakes it again."""

    def reconcile(key: str, ctx: Context) -> Result:
        counter = ctx.store.get(CONFIG_MAP, "counter", "default")
        n = int(counter["data"]["n"]) + 1
        ctx.store.update({**counter, "data": {"writer": identity, "n": str(n)}})
        return DONE

    return Controller("writer", [Watches(CONFIG_MAP)], reconcile)


def test_a_stalled_leaders_controllers_stop_before_the_next_leaders_start(
    store: MemoryStore, clock: VirtualClock, log: list[str]
) -> None:
    store.create({"apiVersion": "v1", "kind": "ConfigMap",
                  "metadata": {"name": "counter", "namespace": "default"},
                  "data": {"writer": "", "n": "0"}})  # fmt: skip
    a_stopped, writes = threading.Event(), {"a": 0, "b": 0, "a after it stopped": 0}
    b_wrote_enough = threading.Event()

    def count(event: WatchEvent) -> None:
        writer_ = event.object.get("data", {}).get("writer")
        if writer_ in writes:
            writes[writer_] += 1
            writes["a after it stopped"] += writer_ == "a" and a_stopped.is_set()
        if writes["b"] >= 20:
            b_wrote_enough.set()

    store.subscribe(count)
    drivers, electors = [], []
    for identity, lease_store in (("a", Stalling(store, hang=False)), ("b", store)):
        driver = RealDriver(ControllerManager(store, clock))
        driver.start()
        elected = ElectedControllers(driver, lambda i=identity: [writer(i)], NAME)
        callbacks = elected.callbacks()
        logged = LeaderCallbacks(
            on_started_leading=lambda leading, i=identity, c=callbacks: (
                c.on_started_leading(leading), log.append(f"{i} started")),
            on_stopped_leading=lambda i=identity, c=callbacks: (
                c.on_stopped_leading(), log.append(f"{i} stopped")),
        )  # fmt: skip
        drivers.append(driver)
        electors.append(
            LeaderElector(lease_store, clock, NAME, NAMESPACE, identity, CONFIG, logged)
        )
    a, b = electors
    try:
        a.tick()
        b.tick()
        _eventually(lambda: writes["a"] >= 5)
        stalling = a.store
        assert isinstance(stalling, Stalling)
        stalling.stall()
        while "b started" not in log:
            clock.advance(RETRY)
            if "a stopped" not in log:
                a.tick()
                if "a stopped" in log:
                    a_stopped.set()
            b.tick()
        assert log.index("a stopped") < log.index("b started")
        assert b_wrote_enough.wait(10)
    finally:
        for driver in drivers:
            driver.stop()
    assert writes["a after it stopped"] == 0


def _eventually(check: Callable[[], bool]) -> None:
    deadline = time.monotonic() + 10
    while not check():
        assert time.monotonic() < deadline
        time.sleep(0.01)


def test_a_running_candidate_hears_each_renewal_and_tries_when_the_lease_expires(
    store: MemoryStore, clock: VirtualClock, log: list[str]
) -> None:
    # client-go's candidate sees a renewal only at its next attempt (2 to 4.4 s later), and
    # so takes over up to that much past the lease's expiry; ours hears it as it is written.
    a, b = Candidate("a", store, clock, log), Candidate("b", store, clock, log)
    a.tick()
    with running(b):
        _eventually(lambda: "b sees a" in log)
        clock.advance(timedelta(seconds=1))
        a.tick()  # a renews; b hears it at once, by its clock's now
        heard = clock.now()
        _eventually(lambda: b.elector._observed_time == heard)
    clock.advance(timedelta(seconds=14))
    # b's next wait ends when the lease it heard renewed expires, not a retry later.
    assert b.tick() == timedelta(seconds=1)
    clock.advance(timedelta(seconds=1))
    b.tick()
    assert lease(store)["holderIdentity"] == "b"


def test_a_released_lease_wakes_a_waiting_candidate_at_once(
    store: MemoryStore, clock: VirtualClock, log: list[str]
) -> None:
    a, b = Candidate("a", store, clock, log), Candidate("b", store, clock, log)
    a.tick()
    with running(b):
        _eventually(lambda: "b sees a" in log)
        a.elector.release()  # b is waiting out its retry period (a virtual clock's: forever)
        _eventually(lambda: lease(store)["holderIdentity"] == "b")


@contextlib.contextmanager
def running(candidate: Candidate) -> Iterator[None]:
    """The candidate's elector running (run()) in a thread of its own, stopped after."""
    stop = threading.Event()
    runner = threading.Thread(target=candidate.elector.run, args=(stop,))
    runner.start()
    try:
        yield
    finally:
        stop.set()
        runner.join()


def test_a_leader_whose_controllers_fail_to_start_steps_down_and_tries_again(
    store: MemoryStore, clock: VirtualClock, log: list[str]
) -> None:
    failures = [RuntimeError("the store failed the first list")]

    def start(leading: Callable[[], bool]) -> None:
        if failures:
            raise failures.pop()
        log.append("a started")

    callbacks = LeaderCallbacks(start, lambda: log.append("a stopped"), lambda holder: None)
    elector = LeaderElector(store, clock, NAME, NAMESPACE, "a", CONFIG, callbacks)
    elector.tick()
    assert not elector.leading()
    assert log == ["a stopped"]
    assert lease(store)["holderIdentity"] == ""  # released: another may take it at once
    clock.advance(RETRY)
    elector.tick()
    assert elector.leading()
    assert log == ["a stopped", "a started"]
