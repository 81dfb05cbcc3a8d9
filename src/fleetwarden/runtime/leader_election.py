"""Leader election as client-go's (k8s.io/client-go/tools/leaderelection) does it: a
LeaderElectionRecord kept in the spec of a coordination.k8s.io/v1 Lease, taken and renewed
through the store with the resourceVersion read (a Conflict means someone else wrote first).

A candidate takes the Lease when it is absent, empty, or expired: not changed for its
leaseDurationSeconds as measured on this candidate's own clock from when it saw the record
change (never from the holder's renewTime: clocks of two machines disagree). The leader
renews every retry period; when it has not renewed for the renew deadline, it stops
leading, before any other candidate can see the lease expire (renew deadline < lease
duration). On a clean stop it releases the Lease (ReleaseOnCancel) so another takes over
at once.

The elector is runtime, not a reconciler: it owns a thread (`run`) and asks its clock for
the time, so tests drive it one `tick` at a time on a VirtualClock.
"""

from __future__ import annotations

import functools
import logging
import random
import socket
import threading
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import Any

from fleetwarden.api.errors import NotFound, StatusError
from fleetwarden.api.kinds import KindInfo
from fleetwarden.api.meta import format_micro_time, parse_time
from fleetwarden.api.registry import REGISTRY
from fleetwarden.runtime.clock import Clock
from fleetwarden.runtime.manager import Controller, RealDriver
from fleetwarden.runtime.metrics import Metrics
from fleetwarden.runtime.settings import JITTER_FACTOR, LeaderElectionConfiguration
from fleetwarden.store.interface import (
    EventType,
    ListResult,
    Obj,
    PatchType,
    Propagation,
    Store,
    Watch,
    WatchEvent,
    collection_of,
)

logger = logging.getLogger(__name__)

LEASE = REGISTRY.info("coordination.k8s.io/v1", "Lease")
_LEASES = collection_of(LEASE)
# The least a candidate waits between attempts, and how often a wait looks at `stop`.
_SOON = timedelta(milliseconds=50)
_STOP_POLL = 0.25


def new_identity() -> str:
    """What client-go's users (Karmada's binaries, controller-runtime) take as the holder
    identity: the host name, and a uuid so that two processes on one host differ."""
    return f"{socket.gethostname()}_{uuid.uuid4()}"


# the record ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class LeaderElectionRecord:
    """resourcelock.LeaderElectionRecord, as LeaseSpecToLeaderElectionRecord reads it."""

    holder_identity: str
    lease_duration_seconds: int
    acquire_time: datetime | None
    renew_time: datetime | None
    leader_transitions: int

    @classmethod
    def from_lease(cls, lease: Obj) -> LeaderElectionRecord:
        spec = lease.get("spec") or {}
        return cls(
            holder_identity=spec.get("holderIdentity") or "",
            lease_duration_seconds=spec.get("leaseDurationSeconds") or 0,
            acquire_time=_time(spec.get("acquireTime")),
            renew_time=_time(spec.get("renewTime")),
            leader_transitions=spec.get("leaseTransitions") or 0,
        )

    def to_lease_spec(self) -> Obj:
        """LeaderElectionRecordToLeaseSpec: times as MicroTime."""
        spec: Obj = {
            "holderIdentity": self.holder_identity,
            "leaseDurationSeconds": self.lease_duration_seconds,
            "leaseTransitions": self.leader_transitions,
        }
        if self.acquire_time is not None:
            spec["acquireTime"] = format_micro_time(self.acquire_time)
        if self.renew_time is not None:
            spec["renewTime"] = format_micro_time(self.renew_time)
        return spec


def _time(text: str | None) -> datetime | None:
    return None if text is None else parse_time(text)


# the elector --------------------------------------------------------------------------------


def _nothing(identity: str = "") -> None:
    return None


@dataclass(frozen=True)
class LeaderCallbacks:
    """OnStartedLeading, OnStoppedLeading (called only after OnStartedLeading, and
    returning only once the leader's work has stopped) and OnNewLeader (any holder seen).

    OnStartedLeading is given `leading`, False from when the leadership ends: what the
    context client-go gives it, cancelled then."""

    on_started_leading: Callable[[Callable[[], bool]], None]
    on_stopped_leading: Callable[[], None]
    on_new_leader: Callable[[str], None] = _nothing


class LeaderElector:
    """One candidate for one lock (the Lease `namespace/name`)."""

    def __init__(
        self,
        store: Store,
        clock: Clock,
        name: str,
        namespace: str,
        identity: str,
        config: LeaderElectionConfiguration,
        callbacks: LeaderCallbacks,
        *,
        exclusive: bool = False,
        metrics: Metrics | None = None,
        rng: random.Random | None = None,
    ) -> None:
        """`exclusive`: this process alone uses the store (an SQLite file it locks), so a
        Lease held by anyone else was left by a process that is gone: take it at once
        instead of waiting out a lease nobody renews."""
        if not identity:
            raise ValueError("Lock identity is empty")
        self.store, self.clock, self.name, self.namespace = store, clock, name, namespace
        self.identity, self.config, self.callbacks = identity, config, callbacks
        self.exclusive = exclusive
        self._metrics, self._rng = metrics, rng or random.Random()
        # What client-go's LeaderElector and LeaseLock remember between attempts.
        self._lease: Obj | None = None  # as last read or written: its resourceVersion
        self._observed: LeaderElectionRecord | None = None
        self._observed_time: datetime | None = None
        self._reported_leader = ""
        # Whether OnStartedLeading ran and OnStoppedLeading did not, and until when the
        # last renewal lets the leader lead.
        self._leading = False
        self._lead_until: datetime | None = None
        self._call: _Call | None = None
        self._state = threading.Lock()
        self._set_metric(False)

    def describe(self) -> str:
        return f"{self.namespace}/{self.name}"

    def is_leader(self) -> bool:
        """client-go's IsLeader: the last record seen names this candidate."""
        return self._observed is not None and self._observed.holder_identity == self.identity

    def leading(self) -> bool:
        """Leading, and renewed within the renew deadline: whether the leader's work may
        still write, even before its elector thread notices it is late."""
        with self._state:
            until = self._lead_until
            return self._leading and until is not None and self.clock.now() < until

    # client-go's tryAcquireOrRenew ----------------------------------------------------------

    def try_acquire_or_renew(self) -> bool:
        """One attempt to take or keep the lock; True if this candidate holds it now."""
        now = self.clock.now()
        record = LeaderElectionRecord(
            self.identity, _seconds(self.config.lease_duration), now, now, 0
        )
        # 1. The fast path: the leader updates the record it wrote last time.
        if self.is_leader() and self._lease_valid(now) and self._update(self._renewal(record)):
            return True
        # 2. Read the record, or create it.
        try:
            lease = self.store.get(LEASE, self.name, self.namespace)
        except NotFound:
            return self._create(record)
        except StatusError as exc:
            logger.error("error retrieving resource lock %s: %s", self.describe(), exc)
            return False
        self._lease = lease
        # 3. Held by someone else, and not expired by our own clock: not ours.
        old = LeaderElectionRecord.from_lease(lease)
        if old != self._observed:
            self._observe(old)
        if old.holder_identity and self._lease_valid(now) and not self.is_leader():
            if not self.exclusive:
                return False
            logger.info("lock %s is held by %s, gone with the store's previous owner",
                        self.describe(), old.holder_identity)  # fmt: skip
        # 4. Take it (a new leader counts a transition) or renew it.
        if self.is_leader():
            record = self._renewal(record)
        else:
            record = replace(record, leader_transitions=old.leader_transitions + 1)
        return self._update(record)

    def _renewal(self, record: LeaderElectionRecord) -> LeaderElectionRecord:
        """The record, keeping the acquire time and transitions of the leadership it renews."""
        assert self._observed is not None
        return replace(
            record,
            acquire_time=self._observed.acquire_time,
            leader_transitions=self._observed.leader_transitions,
        )

    def _lease_valid(self, now: datetime) -> bool:
        assert self._observed is not None and self._observed_time is not None
        expiry = self._observed_time + timedelta(seconds=self._observed.lease_duration_seconds)
        return now < expiry

    def _observe(self, record: LeaderElectionRecord) -> None:
        self._observed, self._observed_time = record, self.clock.now()

    def _create(self, record: LeaderElectionRecord) -> bool:
        lease = {
            "apiVersion": "coordination.k8s.io/v1",
            "kind": "Lease",
            "metadata": {"name": self.name, "namespace": self.namespace},
            "spec": record.to_lease_spec(),
        }
        try:
            self._lease = self.store.create(lease)
        except StatusError as exc:  # AlreadyExists: another candidate created it first
            logger.error("error initially creating lock %s: %s", self.describe(), exc)
            return False
        self._observe(record)
        return True

    def _update(self, record: LeaderElectionRecord) -> bool:
        """Write the record over the Lease last seen, with its resourceVersion."""
        if self._lease is None:
            return False
        try:
            self._lease = self.store.update({**self._lease, "spec": record.to_lease_spec()})
        except StatusError as exc:  # Conflict: someone wrote it since we read it
            logger.info("failed to update lock %s: %s", self.describe(), exc)
            return False
        self._observe(record)
        return True

    # the loop -------------------------------------------------------------------------------

    def tick(self) -> timedelta:
        """One turn of client-go's acquire or renew loop; how long to wait for the next."""
        if not self._leading:
            acquired = self._attempt()
            self._report_leader()
            if not acquired:
                # wait.JitterUntil: candidates spread their attempts; but none waits past
                # the moment the lease it saw expires.
                jittered = self.config.retry_period * (1 + self._rng.random() * JITTER_FACTOR)
                return max(min(jittered, self._until_expiry()), _SOON)
            logger.info("successfully acquired lease %s", self.describe())
            self._start_leading()
            return self.config.retry_period
        renewed = self._attempt()
        self._report_leader()
        if renewed:
            self._extend()
        elif not self.is_leader() or self.clock.now() >= self._deadline():
            # Another holder, or no renewal for the renew deadline: stop before anyone
            # else may see the lease expire.
            logger.info("failed to renew lease %s: stepping down", self.describe())
            self._stop_leading()
        return self.config.retry_period

    def run(self, stop: threading.Event) -> None:
        """Acquire, lead and renew until `stop`; then stop leading and release the lock
        (ReleaseOnCancel) so that another candidate takes over at once.

        Beyond client-go, a candidate hears of each change of the Lease as it is written
        (not at its next attempt, up to 4.4 s later), so it times the lease's expiry from
        the holder's last renewal and tries again the moment it expires, or is released:
        a takeover after a leader dies takes the lease duration, not up to two retry
        periods more."""
        logger.info("attempting to acquire leader lease %s...", self.describe())
        wake = threading.Event()
        unsubscribe = self.store.subscribe(functools.partial(self._heard, wake))
        try:
            while not stop.is_set():
                deadline = time.monotonic() + self.tick().total_seconds()
                wake.clear()
                while not stop.is_set() and not wake.is_set() and time.monotonic() < deadline:
                    wake.wait(min(deadline - time.monotonic(), _STOP_POLL))
        finally:
            unsubscribe()
        if self._leading:
            self._stop_leading()
            self.release()

    def _heard(self, wake: threading.Event, event: WatchEvent) -> None:
        """A write to this lock's Lease by another candidate: observed now; and the next
        attempt made at once if it released the lock."""
        if event.collection != _LEASES or event.type is EventType.DELETED:
            return
        meta = event.object["metadata"]
        if meta["name"] != self.name or meta.get("namespace") != self.namespace:
            return
        record = LeaderElectionRecord.from_lease(event.object)
        if record.holder_identity == self.identity or record == self._observed:
            return
        self._observe(record)
        if not record.holder_identity and not self._leading:
            wake.set()

    def _until_expiry(self) -> timedelta:
        """How long until the lease last observed expires by this candidate's clock."""
        if self._observed is None or self._observed_time is None:
            return self.config.retry_period
        duration = timedelta(seconds=self._observed.lease_duration_seconds)
        return self._observed_time + duration - self.clock.now()

    def release(self) -> bool:
        """Give the lock up: an empty holder, leaseDurationSeconds 1, as client-go does."""
        if not self.is_leader():
            return True
        assert self._observed is not None
        now = self.clock.now()
        released = LeaderElectionRecord("", 1, now, now, self._observed.leader_transitions)
        return self._update(released)

    def _attempt(self) -> bool:
        """try_acquire_or_renew, in a thread of its own so that a store that hangs cannot
        keep a leader leading: a leader waits for it no longer than its deadline leaves
        (client-go bounds the call with a context of that timeout). One call at a time:
        while one hangs, the attempts that follow fail."""
        if self._call is None or self._call.finished.is_set():
            self._call = _Call(self.try_acquire_or_renew, self.name)
        timeout = None
        if self._leading:
            timeout = max(0.0, (self._deadline() - self.clock.now()).total_seconds())
        return self._call.result(timeout)

    def _deadline(self) -> datetime:
        assert self._lead_until is not None
        return self._lead_until

    def _extend(self) -> None:
        """A renewal observed now lets the leader lead for the renew deadline."""
        with self._state:
            self._lead_until = self.clock.now() + self.config.renew_deadline

    def _start_leading(self) -> None:
        with self._state:
            self._leading = True
        self._extend()
        self._set_metric(True)
        try:
            self.callbacks.on_started_leading(self.leading)
        except Exception:
            # The controllers could not start (the store failed their first lists): this
            # candidate steps down and lets the lock go, to try again, instead of holding
            # it with nothing running (client-go's binaries exit here and are restarted).
            logger.exception("starting to lead %s failed: stepping down", self.describe())
            self._stop_leading()
            self.release()

    def _stop_leading(self) -> None:
        with self._state:
            self._leading = False
        self._set_metric(False)
        self.callbacks.on_stopped_leading()

    def _report_leader(self) -> None:
        """maybeReportTransition: OnNewLeader when the holder seen changes."""
        holder = self._observed.holder_identity if self._observed is not None else ""
        if holder != self._reported_leader:
            self._reported_leader = holder
            self.callbacks.on_new_leader(holder)

    def _set_metric(self, leading: bool) -> None:
        if self._metrics is not None:
            self._metrics.leader_election_master_status.labels(self.name).set(int(leading))


def _seconds(duration: timedelta) -> int:
    return int(duration.total_seconds())


class _Call:
    """A function run in a daemon thread, whose result one may wait for a while."""

    def __init__(self, function: Callable[[], bool], name: str) -> None:
        self.finished = threading.Event()
        self._function, self._result = function, False
        threading.Thread(target=self._run, name=f"leader-election-{name}", daemon=True).start()

    def _run(self) -> None:
        try:
            self._result = self._function()
        except Exception:
            logger.exception("leader election attempt failed")
        finally:
            self.finished.set()

    def result(self, timeout: float | None) -> bool:
        """The function's result, or False if it has not finished within `timeout`."""
        return self.finished.wait(timeout) and self._result


# the fence ----------------------------------------------------------------------------------


class LeadershipLost(RuntimeError):
    """A write by a lock's controller after its elector stopped leading."""


class LeaderOnlyStore:
    """The store as one lock's controllers see it: it refuses their writes once the elector
    no longer leads. Stopping the controllers is what ends their writes; this closes the
    gap of a reconcile still running when the renew deadline passes."""

    def __init__(self, store: Store, leading: Callable[[], bool], lock: str) -> None:
        self._store, self._leading, self._lock = store, leading, lock

    def _check(self) -> None:
        if not self._leading():
            raise LeadershipLost(f"no longer the leader of {self._lock}")

    def create(self, obj: Mapping[str, Any]) -> Obj:
        self._check()
        return self._store.create(obj)

    def update(self, obj: Mapping[str, Any], *, subresource: str | None = None) -> Obj:
        self._check()
        return self._store.update(obj, subresource=subresource)

    def patch(
        self,
        info: KindInfo,
        name: str,
        namespace: str,
        patch: Any,
        *,
        patch_type: PatchType = PatchType.MERGE,
        subresource: str | None = None,
    ) -> Obj:
        self._check()
        return self._store.patch(
            info, name, namespace, patch, patch_type=patch_type, subresource=subresource
        )

    def delete(
        self,
        info: KindInfo,
        name: str,
        namespace: str = "",
        *,
        propagation: Propagation = Propagation.BACKGROUND,
    ) -> Obj:
        self._check()
        return self._store.delete(info, name, namespace, propagation=propagation)

    # Reads, as the store answers them.

    def get(
        self, info: KindInfo, name: str, namespace: str = "", *, resource_version: str = ""
    ) -> Obj:
        return self._store.get(info, name, namespace, resource_version=resource_version)

    def list(
        self,
        info: KindInfo,
        namespace: str | None = None,
        *,
        label_selector: str | None = None,
        field_selector: str | None = None,
        limit: int | None = None,
        continue_: str | None = None,
    ) -> ListResult:
        return self._store.list(
            info, namespace, label_selector=label_selector, field_selector=field_selector,
            limit=limit, continue_=continue_,
        )  # fmt: skip

    def watch(
        self,
        info: KindInfo | None = None,
        namespace: str | None = None,
        resource_version: str | None = None,
        *,
        label_selector: str | None = None,
        field_selector: str | None = None,
    ) -> Watch:
        return self._store.watch(
            info, namespace, resource_version,
            label_selector=label_selector, field_selector=field_selector,
        )  # fmt: skip

    def subscribe(self, callback: Callable[[WatchEvent], None]) -> Callable[[], None]:
        return self._store.subscribe(callback)

    @property
    def resource_version(self) -> int:
        return self._store.resource_version

    def close(self) -> None:
        """The store is the hub's, not the lock's: left open."""


# a lock's controllers -----------------------------------------------------------------------


class ElectedControllers:
    """The controllers of one lock under a real driver: started afresh when the lock is
    won, writing only while it is held, stopped when it is lost.

    client-go's users (Karmada's and OCM's binaries) exit when they lose their lease, and
    start again as new processes. A hub replica also serves the API and leads other locks,
    so it stops only this lock's controllers, and starts them again if it wins the lock
    again, each made anew by `make` (a controller keeps what it learned in itself, as a
    process does) and every cached object announced to them, as to a new process."""

    def __init__(
        self, driver: RealDriver, make: Callable[[], Sequence[Controller]], lock: str
    ) -> None:
        self.driver, self.make, self.lock = driver, make, lock
        self._running: list[str] = []

    def callbacks(self) -> LeaderCallbacks:
        return LeaderCallbacks(self._start, self._stop, self._new_leader)

    def _start(self, leading: Callable[[], bool]) -> None:
        controllers = self.make()
        self._running = [controller.name for controller in controllers]
        fenced = LeaderOnlyStore(self.driver.manager.store, leading, self.lock)
        self.driver.start_controllers(controllers, fenced)
        logger.info("%s: leading; started %d controllers", self.lock, len(controllers))

    def _stop(self) -> None:
        self.driver.stop_controllers(self._running)
        logger.info("%s: stopped leading; its controllers stopped", self.lock)
        self._running = []

    def _new_leader(self, identity: str) -> None:
        logger.info("%s: new leader elected: %s", self.lock, identity or "none")
