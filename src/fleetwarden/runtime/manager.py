"""The controller manager: controllers, their work queues and one shared cache, and two
drivers that decide when keys run.

A controller is a name, the kinds it watches (each with a function from an object to the
keys to enqueue), and a reconcile function `(key, context) -> Result`. Reconcilers never
sleep, read the wall clock or start threads, so the same controllers run under:

- VirtualDriver (`fleetwarden simulate`): one thread on a VirtualClock. Store writes
  reach the cache synchronously; every due key runs, controllers in the order they were
  added and keys first in first out, until nothing is due at the current instant; then
  the clock jumps to the earliest timer. Same inputs, same reconciles at the same times.
- RealDriver (`fleetwarden up`): a watch thread feeds the cache, worker threads per
  controller take keys, timers fire on the real clock; stop() finishes what is in flight.
  Controllers may also start and stop while it runs (those of a leader-election lock, as
  it is won and lost): the cache keeps following the store throughout.
"""

from __future__ import annotations

import gc
import logging
import threading
from abc import ABC, abstractmethod
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager, nullcontext
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from types import TracebackType
from typing import Any, Self

from fleetwarden.api.errors import Conflict, Expired, StatusError
from fleetwarden.api.kinds import KindInfo
from fleetwarden.api.meta import Resource
from fleetwarden.api.registry import REGISTRY, Registry
from fleetwarden.runtime.clock import Clock, VirtualClock
from fleetwarden.runtime.events import EventRecorder
from fleetwarden.runtime.informer import (
    Cache,
    EventHandler,
    IndexFunc,
    Informer,
    Snapshot,
    object_key,
)
from fleetwarden.runtime.metrics import Metrics
from fleetwarden.runtime.settings import Settings
from fleetwarden.runtime.workqueue import WorkQueue, default_controller_rate_limiter
from fleetwarden.store.interface import Store, Watch, WatchEvent

logger = logging.getLogger(__name__)

# At most one full collection of the garbage collector per this many collections of its
# middle generation (CPython's default: 10). See tune_collector().
FULL_COLLECTION_EVERY = 1000
_tuned = False
_tuning = threading.Lock()


def tune_collector() -> None:
    """The garbage collector of a process that runs controllers, once per process: what
    exists when the first driver starts (modules, kinds' schemas, the first lists) is frozen
    out of every later collection, and a full collection comes at most once per
    FULL_COLLECTION_EVERY middle ones instead of each time the heap grew by a quarter.

    The caches hold millions of objects that live long and form no cycles (refcounting
    frees them as they are replaced), and a full collection walks every one: with the
    defaults they took a third of the hub's time at fleet scale, for nothing to collect.
    Young collections, which find the short-lived cycles there are, stay as they were."""
    global _tuned
    with _tuning:
        if _tuned:
            return
        _tuned = True
        gc.freeze()
        young, middle, full = gc.get_threshold()
        gc.set_threshold(young, middle, max(full, FULL_COLLECTION_EVERY))


def collector_done() -> None:
    """A command that ran a batch ends: what it holds is left out of every later
    collection, the interpreter's last one at exit included, which walks every object
    again (5 s after a what-if of 1,000 clusters and 3,000 workloads, 0.2 s frozen)."""
    gc.freeze()


@contextmanager
def collector_paused() -> Iterator[None]:
    """No cyclic garbage collection inside: for a batch (a virtual run) whose objects are
    nearly all freed by refcounting or live on into its caches and store, which each young
    collection walked again: a what-if of 1,000 clusters spent a sixth of its run there
    and left no cycle to collect. What cycles a batch makes (an example scenario's run
    leaves a few thousand objects in them) wait for the first collection after it."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


@dataclass(frozen=True)
class Result:
    """controller-runtime's reconcile.Result: done, requeue (rate-limited), or after a delay."""

    requeue: bool = False
    requeue_after: timedelta | None = None


DONE = Result()
REQUEUE = Result(requeue=True)
_ZERO = timedelta(0)


def requeue_after(delay: timedelta) -> Result:
    return Result(requeue_after=delay)


def _no_more_watches(watch: Watches) -> None:
    raise RuntimeError(f"no controller to watch {watch.info.kind} for: a context of its own")


@dataclass(frozen=True)
class Context:
    """What a reconciler may use. Cached objects are shared: copy before changing."""

    cache: Cache
    store: Store
    clock: Clock
    settings: Settings
    recorder: EventRecorder
    # The hub's metrics (runtime/metrics.py); time what you measure on `clock`.
    metrics: Metrics = field(default_factory=Metrics)
    # Watch one more kind from now on, as if the controller had listed it in its watches
    # (controller-runtime's Controller.Watch after start): for kinds that appear at run
    # time, a custom resource's say. Its objects are enqueued as added at once; watch each
    # kind once.
    watch: Callable[[Watches], None] = _no_more_watches


Reconcile = Callable[[str, Context], Result]
KeyMapper = Callable[[Resource], Iterable[str]]
StoredKeyMapper = Callable[[Mapping[str, Any]], Iterable[str]]


def own_key(obj: Resource) -> list[str]:
    """handler.EnqueueRequestForObject: the object's own `namespace/name`."""
    return [object_key(obj)]


@dataclass(frozen=True)
class Watches:
    """A kind a controller watches, and the keys an event about one of its objects enqueues.

    On update the keys of the old and the new object are both enqueued, as controller-
    runtime's map handlers do: a binding that leaves a cluster concerns both clusters.
    """

    info: KindInfo
    keys: KeyMapper = own_key
    # Used instead of `keys` when given: the keys of an object as stored (its wire dict),
    # on its adds and updates only; the informer need not decode it for this watch.
    stored_keys: StoredKeyMapper | None = None


@dataclass(frozen=True)
class Controller:
    name: str  # also the component of the Events it records
    watches: Sequence[Watches]
    reconcile: Reconcile
    workers: int = 1  # concurrent reconciles under the real driver
    # Indexes the controller looks objects up by; one name may be shared if the function is.
    indexers: Mapping[KindInfo, Mapping[str, IndexFunc]] = field(default_factory=dict)
    # Keys queued when a driver starts: objects a controller must create that no event names.
    start_keys: Sequence[str] = ()
    # What the running controller knows of the objects a run resumes from (what-if's copy
    # of a live hub), taken from the synced cache before anything is reconciled; None: no
    # more than a controller started afresh, which reconciles each object again.
    resume: Callable[[Cache], None] | None = None


class ControllerManager:
    """The controllers to run and what they share; give it to one driver to run them."""

    def __init__(
        self,
        store: Store,
        clock: Clock,
        settings: Settings | None = None,
        metrics: Metrics | None = None,
        registry: Registry = REGISTRY,
    ) -> None:
        self.store, self.clock = store, clock
        self.settings = settings or Settings()
        self.metrics = metrics or Metrics()
        self.cache = Cache(store, registry)
        self.controllers: list[Controller] = []

    def add(self, controller: Controller) -> None:
        if any(c.name == controller.name for c in self.controllers):
            raise ValueError(f"controller {controller.name!r} is already added")
        self.controllers.append(controller)

    def _runners(self, bucket_clock: Clock | None) -> list[_Runner]:
        return [self._wire(controller, bucket_clock) for controller in self.controllers]

    def _wire(
        self, controller: Controller, bucket_clock: Clock | None, store: Store | None = None
    ) -> _Runner:
        """The controller's queue, fed by its watches (each object cached now announced as
        added), and its context; writing through `store` if given, the manager's if not."""
        s = self.settings
        limiter = default_controller_rate_limiter(
            base_delay=s.rate_limiter_base_delay,
            max_delay=s.rate_limiter_max_delay,
            qps=s.rate_limiter_qps,
            bucket_size=s.rate_limiter_bucket_size,
            bucket_clock=bucket_clock,
        )
        queue: WorkQueue[str] = WorkQueue(self.clock, limiter)
        for info, indexers in controller.indexers.items():
            self.cache.informer(info).add_indexers(indexers)
        handlers: list[tuple[Informer, EventHandler]] = []

        def watch(watches: Watches) -> None:
            informer, handler = self.cache.informer(watches.info), _enqueue(queue, watches)
            handlers.append((informer, handler))
            informer.add_event_handler(handler)

        for watches in controller.watches:
            watch(watches)
        store = store or self.store
        recorder = EventRecorder(store, self.clock, controller.name)
        context = Context(self.cache, store, self.clock, s, recorder, self.metrics, watch)
        return _Runner(controller, queue, context, handlers)


def _enqueue(queue: WorkQueue[str], watches: Watches) -> EventHandler:
    stored_keys, keys = watches.stored_keys, watches.keys
    if stored_keys is not None:

        def add_stored(obj: Mapping[str, Any]) -> None:
            for key in stored_keys(obj):
                queue.add(key)

        return EventHandler(on_stored=add_stored)
    if keys is own_key:
        # The object's own key, known without decoding it: the informer may leave
        # objects only this handler hears about undecoded until someone reads them.
        return EventHandler(on_key=queue.add)

    def add(obj: Resource) -> None:
        for key in keys(obj):
            queue.add(key)

    def update(old: Resource, new: Resource) -> None:
        add(old)
        add(new)

    return EventHandler(on_add=add, on_update=update, on_delete=add)


@dataclass
class _Runner:
    controller: Controller
    queue: WorkQueue[str]
    context: Context
    # What feeds the queue: removed when the controller stops.
    handlers: list[tuple[Informer, EventHandler]]

    def unwire(self) -> None:
        for informer, handler in self.handlers:
            informer.remove_event_handler(handler)

    def process(self, key: str) -> None:
        """Reconcile one key taken from the queue and queue it again as the result asks."""
        try:
            self._requeue(key, self._reconcile(key))
        finally:
            self.queue.done(key)

    def _reconcile(self, key: str) -> Result:
        try:
            return self.controller.reconcile(key, self.context)
        except Conflict:
            # A stale read lost a race: expected now and then, and the retry reads anew.
            logger.debug("%s: conflict reconciling %r, retrying", self.controller.name, key)
        except StatusError as err:
            # The API refused a write (an AlreadyExists from a cache behind a create, a
            # webhook's denial): its message says all, as controller-runtime's
            # "Reconciler error" does, where a traceback would bury it.
            logger.error("%s: reconciling %r failed: %s", self.controller.name, key, err)
        except Exception:
            logger.exception("%s: reconciling %r failed", self.controller.name, key)
        return REQUEUE

    def _requeue(self, key: str, result: Result) -> None:
        if result.requeue_after is not None and result.requeue_after > _ZERO:
            self.queue.forget(key)
            self.queue.add_after(key, result.requeue_after)
        elif result.requeue:
            self.queue.add_rate_limited(key)
        else:
            self.queue.forget(key)


class LivelockError(RuntimeError):
    """Controllers kept each other busy at one instant and never settled."""


class _Driver(ABC):
    """Starting and stopping, also around a `with` block."""

    _runners: list[_Runner]

    @staticmethod
    def _queue_start_keys(runners: Iterable[_Runner]) -> None:
        for runner in runners:
            for key in runner.controller.start_keys:
                runner.queue.add(key)

    def enqueue(self, controller: str, key: str) -> None:
        """Queue a key for a controller from outside any watch (a member joining, say)."""
        for runner in self._runners:
            if runner.controller.name == controller:
                runner.queue.add(key)
                return
        raise KeyError(f"no controller named {controller!r}")

    @abstractmethod
    def start(self) -> None: ...

    @abstractmethod
    def stop(self) -> None: ...

    def __enter__(self) -> Self:
        self.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()


class VirtualDriver(_Driver):
    """Runs the manager's controllers deterministically on its VirtualClock, in one thread."""

    def __init__(self, manager: ControllerManager, *, max_rounds: int = 1000) -> None:
        if not isinstance(manager.clock, VirtualClock):
            raise TypeError("the virtual driver needs a manager on a VirtualClock")
        self.manager, self.clock, self.max_rounds = manager, manager.clock, max_rounds
        self._runners = manager._runners(bucket_clock=None)
        self._unsubscribe: Callable[[], None] | None = None

    def start(self, *, resume: bool = False, snapshot: Snapshot | None = None) -> None:
        """List every watched kind (or take it from `snapshot`, see Cache.sync) and follow
        the store's writes from then on; `resume`: the store holds a running hub's objects,
        which its controllers already know."""
        self.manager.cache.sync(snapshot)
        if resume:
            for runner in self._runners:
                if runner.controller.resume is not None:
                    runner.controller.resume(self.manager.cache)
        tune_collector()
        self._unsubscribe = self.manager.store.subscribe(self.manager.cache.handle)
        self._queue_start_keys(self._runners)

    def stop(self) -> None:
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None

    def settle(self) -> None:
        """Run every key due now, and every key that queues, until none is due (quiescence).

        Each round gives each controller, in order, the keys ready at its turn; keys queued
        during its turn wait for the next round, so a controller that keeps requeueing
        itself cannot starve the others. LivelockError after max_rounds rounds.
        """
        for _ in range(self.max_rounds):
            now = self.clock.now()
            for runner in self._runners:
                runner.queue.pop_due(now)
            if not any(len(runner.queue) for runner in self._runners):
                return
            with _deferred(self.manager.store):  # a round's writes, one transaction
                for runner in self._runners:
                    self._run_ready(runner)
        raise LivelockError(self._livelock_message())

    def next_timer(self) -> datetime | None:
        """The earliest instant any controller's key is due."""
        dues = [due for r in self._runners if (due := r.queue.next_due()) is not None]
        return min(dues, default=None)

    def advance_to_next_timer(self, until: datetime) -> bool:
        """Jump the clock to the earliest timer if it is due by `until`; False if none is."""
        due = self.next_timer()
        if due is None or due > until:
            return False
        self.clock.set(max(due, self.clock.now()))
        return True

    def run_until(self, instant: datetime) -> None:
        """Settle, then fire every timer due by `instant` at its exact time; end at `instant`."""
        self.settle()
        while self.advance_to_next_timer(instant):
            self.settle()
        self.clock.set(instant)

    def _run_ready(self, runner: _Runner) -> None:
        for _ in range(len(runner.queue)):
            key = runner.queue.get(block=False)
            assert key is not None  # only this thread takes from the queue
            runner.process(key)

    def _livelock_message(self) -> str:
        busy = [
            f"{r.controller.name}: {', '.join(r.queue.ready()[:5])}"
            for r in self._runners
            if len(r.queue)
        ]
        return (
            f"controllers did not settle at {self.clock.now().isoformat()} after "
            f"{self.max_rounds} rounds; still queued: {'; '.join(busy)}"
        )


class RealDriver(_Driver):
    """Runs the manager's controllers on the real clock with worker threads; more may be
    started and stopped while it runs."""

    def __init__(self, manager: ControllerManager) -> None:
        self.manager = manager
        self._runners: list[_Runner] = []
        self._workers: dict[str, list[threading.Thread]] = {}
        self._informers: threading.Thread | None = None
        self._stopping = threading.Event()
        self._watch_lock = threading.Lock()
        self._watch: Watch | None = None
        # Controllers start and stop from other threads (leader electors').
        self._controllers_lock = threading.Lock()

    def start(self) -> None:
        """List every watched kind (the cache is synced on return), follow the store, and
        start the manager's controllers."""
        self._watch = self._list_and_watch()
        tune_collector()
        self._informers = self._spawn("informers", self._watch_loop)
        self.start_controllers(self.manager.controllers)

    def start_controllers(
        self, controllers: Sequence[Controller], store: Store | None = None
    ) -> None:
        """Run these controllers too (writing through `store` if given), from a clean slate:
        fresh queues, every cached object announced to them, their start keys."""
        with self._controllers_lock:
            for controller in controllers:
                if controller.name in self._workers:
                    raise ValueError(f"controller {controller.name!r} is already running")
                runner = self.manager._wire(controller, self.manager.clock, store)
                self._runners.append(runner)
                self._queue_start_keys([runner])
                self._workers[controller.name] = [
                    self._spawn(f"{controller.name}-{i}", self._worker, runner)
                    for i in range(controller.workers)
                ]

    def stop_controllers(self, names: Collection[str], timeout: float | None = None) -> None:
        """Stop the controllers named: they take no more keys (what is queued is dropped:
        they are level-triggered), in-flight reconciles finish, and on return none runs."""
        with self._controllers_lock:
            stopping = [r for r in self._runners if r.controller.name in names]
            for runner in stopping:
                runner.queue.shutdown()
            for runner in stopping:
                for thread in self._workers.pop(runner.controller.name):
                    thread.join(timeout)
                runner.unwire()
            self._runners = [r for r in self._runners if r not in stopping]

    def stop(self, timeout: float | None = None) -> None:
        """Stop every controller, let in-flight reconciles finish, stop following the store."""
        self._stopping.set()
        self.stop_controllers([r.controller.name for r in self._runners], timeout)
        with self._watch_lock:
            if self._watch is not None:
                self._watch.close()
        if self._informers is not None:
            self._informers.join(timeout)

    @staticmethod
    def _spawn(name: str, target: Callable[..., None], *args: object) -> threading.Thread:
        thread = threading.Thread(target=target, args=args, name=name, daemon=True)
        thread.start()
        return thread

    def _list_and_watch(self) -> Watch:
        store = self.manager.store
        while True:
            # Watch from before the lists: an event they already saw is skipped by its informer.
            resource_version = store.resource_version
            self.manager.cache.sync()
            try:
                return store.watch(resource_version=str(resource_version))
            except Expired:
                logger.info("more writes than the store remembers while listing; listing again")

    def _watch_loop(self) -> None:
        while True:
            watch = self._watch
            assert watch is not None
            try:
                for event in watch:
                    self._handle(event)
                ended = "ended"  # by stop(), or by the store: this loop fell behind
            except Expired:
                ended = "expired"
            with self._watch_lock:
                if self._stopping.is_set():
                    return
                logger.info("watch %s; listing again", ended)
                self._watch = self._list_and_watch()

    def _handle(self, event: WatchEvent) -> None:
        """One event into the cache and its handlers. One that fails there (an object this
        process cannot decode, a handler's bug) is logged and left: this thread feeds
        every informer, and ending it would leave every controller deaf."""
        try:
            self.manager.cache.handle(event)
        except Exception:
            meta = event.object.get("metadata") or {}
            logger.exception(
                "informers: %s %s %s/%s (resourceVersion %s) not taken",
                event.type.value, event.collection, meta.get("namespace") or "",
                meta.get("name"), event.resource_version,
            )  # fmt: skip

    def _worker(self, runner: _Runner) -> None:
        store = self.manager.store
        while (key := runner.queue.get()) is not None:
            try:
                with _deferred(store):  # a reconcile's writes, one transaction
                    runner.process(key)
            except Exception:  # the commit failed (the file is gone, the disk full)
                # The writes stay staged for the next commit; the worker lives on.
                logger.exception("%s: committing %r failed", runner.controller.name, key)
                runner.queue.add_rate_limited(key)


def _deferred(store: Store) -> AbstractContextManager[None]:
    """The store's group commit (CoreStore.deferred), where it has one."""
    deferred = getattr(store, "deferred", None)
    return deferred() if deferred is not None else nullcontext()
