"""Work queues with client-go's semantics: deduplicated keys, delays, rate-limited retries.

An item added while queued is queued once (the dirty set); an item added while being
processed is queued again only when its worker calls `done` (the processing set), so no
key is ever reconciled by two workers at once. Delays are kept on the injected clock:
under a virtual clock the driver asks `next_due()` and jumps time there, under the real
clock a blocking `get` sleeps until the next timer. Order is deterministic: ready items
FIFO, timers by (due instant, order of adding).
"""

from __future__ import annotations

import heapq
import itertools
import threading
from collections import deque
from collections.abc import Hashable
from datetime import datetime, timedelta
from typing import Generic, Protocol, TypeVar

from fleetwarden.runtime.clock import Clock

T = TypeVar("T", bound=Hashable)

_ZERO = timedelta(0)
_MICROSECOND = timedelta(microseconds=1)


class RateLimiter(Protocol):
    def when(self, item: Hashable) -> timedelta:
        """How long to wait before retrying the item; counts one more failure."""
        ...

    def forget(self, item: Hashable) -> None:
        """The item succeeded: clear its failure history."""
        ...

    def num_requeues(self, item: Hashable) -> int: ...


class ItemExponentialFailureRateLimiter:
    """Per-item backoff: base * 2^failures, capped at max_delay (client-go's defaults)."""

    def __init__(
        self,
        base_delay: timedelta = timedelta(milliseconds=5),
        max_delay: timedelta = timedelta(seconds=1000),
    ) -> None:
        self.base_delay, self.max_delay = base_delay, max_delay
        self._failures: dict[Hashable, int] = {}

    def when(self, item: Hashable) -> timedelta:
        exp = self._failures.get(item, 0)
        self._failures[item] = exp + 1
        # In whole microseconds, so that no number of failures overflows a timedelta.
        backoff = (self.base_delay // _MICROSECOND) << exp
        if backoff >= self.max_delay // _MICROSECOND:
            return self.max_delay
        return timedelta(microseconds=backoff)

    def forget(self, item: Hashable) -> None:
        self._failures.pop(item, None)

    def num_requeues(self, item: Hashable) -> int:
        return self._failures.get(item, 0)


class BucketRateLimiter:
    """One token bucket for all items (golang.org/x/time/rate reservations): qps, burst."""

    def __init__(self, qps: float, burst: int, clock: Clock) -> None:
        self.qps, self.burst, self._clock = qps, burst, clock
        self._tokens = float(burst)
        self._last = clock.now()

    def when(self, item: Hashable) -> timedelta:
        now = self._clock.now()
        refill = (now - self._last).total_seconds() * self.qps
        self._tokens = min(float(self.burst), self._tokens + refill) - 1
        self._last = now
        # A reservation may take the bucket below zero: wait until it is paid back.
        return timedelta(seconds=-self._tokens / self.qps) if self._tokens < 0 else _ZERO

    def forget(self, item: Hashable) -> None:
        pass

    def num_requeues(self, item: Hashable) -> int:
        return 0


class MaxOfRateLimiter:
    """The longest delay any of the limiters asks for."""

    def __init__(self, *limiters: RateLimiter) -> None:
        self.limiters = limiters

    def when(self, item: Hashable) -> timedelta:
        return max(limiter.when(item) for limiter in self.limiters)

    def forget(self, item: Hashable) -> None:
        for limiter in self.limiters:
            limiter.forget(item)

    def num_requeues(self, item: Hashable) -> int:
        return max(limiter.num_requeues(item) for limiter in self.limiters)


def default_controller_rate_limiter(
    *,
    base_delay: timedelta = timedelta(milliseconds=5),
    max_delay: timedelta = timedelta(seconds=1000),
    qps: float = 10,
    bucket_size: int = 100,
    bucket_clock: Clock | None = None,
) -> RateLimiter:
    """Karmada's DefaultControllerRateLimiter: per-item backoff, max'd with an overall bucket.

    The bucket needs a clock and is left out without one. Virtual time leaves it out: no
    time passes while controllers settle an instant, so a shared bucket would turn the
    number of retries at one instant into delays that real time would not show.
    """
    exponential = ItemExponentialFailureRateLimiter(base_delay, max_delay)
    if bucket_clock is None:
        return exponential
    return MaxOfRateLimiter(exponential, BucketRateLimiter(qps, bucket_size, bucket_clock))


class WorkQueue(Generic[T]):
    """client-go's rate-limiting delaying work queue; safe to share between threads."""

    def __init__(self, clock: Clock, rate_limiter: RateLimiter | None = None) -> None:
        self._clock = clock
        self._limiter = rate_limiter or ItemExponentialFailureRateLimiter()
        # Taken directly (`with self._lock`), not through the Condition's Python wrapper:
        # every key passes here several times.
        self._lock = threading.RLock()
        self._cond = threading.Condition(self._lock)
        self._blocked = 0  # getters waiting on the condition: only they need notifying
        self._queue: deque[T] = deque()
        self._dirty: set[T] = set()
        self._processing: set[T] = set()
        # The live timer of each waiting item; heap entries that are not live are stale.
        self._waiting: dict[T, tuple[datetime, int]] = {}
        self._timers: list[tuple[datetime, int, T]] = []
        self._sequence = itertools.count()
        self._shutting_down = False

    def add(self, item: T) -> None:
        with self._lock:
            if self._shutting_down or item in self._dirty:
                return
            self._dirty.add(item)
            if item not in self._processing:
                self._queue.append(item)
                if self._blocked:
                    self._cond.notify()

    def add_after(self, item: T, delay: timedelta) -> None:
        """Add the item once delay has passed; of two timers for one item the earlier wins."""
        if delay <= _ZERO:
            self.add(item)
            return
        with self._lock:
            due = self._clock.now() + delay
            live = self._waiting.get(item)
            if self._shutting_down or (live is not None and live[0] <= due):
                return
            timer = (due, next(self._sequence))
            self._waiting[item] = timer
            heapq.heappush(self._timers, (*timer, item))
            if self._blocked:
                self._cond.notify()

    def add_rate_limited(self, item: T) -> None:
        with self._lock:
            self.add_after(item, self._limiter.when(item))

    def forget(self, item: T) -> None:
        with self._lock:
            self._limiter.forget(item)

    def num_requeues(self, item: T) -> int:
        with self._lock:
            return self._limiter.num_requeues(item)

    def get(self, block: bool = True) -> T | None:
        """The next ready item, now in processing until `done`.

        None once shut down (queued items are left: reconcilers are level-triggered, so
        nothing is lost), or when nothing is ready and block is False.
        """
        with self._lock:
            while True:
                timers = self._timers
                if timers and timers[0][0] <= (now := self._clock.now()):
                    self.pop_due(now)
                if self._shutting_down:
                    return None
                if self._queue:
                    item = self._queue.popleft()
                    self._processing.add(item)
                    self._dirty.discard(item)
                    return item
                if not block:
                    return None
                self._blocked += 1
                try:
                    self._cond.wait(self._seconds_to_next_timer())
                finally:
                    self._blocked -= 1

    def done(self, item: T) -> None:
        with self._lock:
            self._processing.discard(item)
            if item in self._dirty:
                self._queue.append(item)
                if self._blocked:
                    self._cond.notify()

    def next_due(self) -> datetime | None:
        """The instant of the earliest timer, if any."""
        with self._lock:
            self._drop_stale_timers()
            return self._timers[0][0] if self._timers else None

    def pop_due(self, now: datetime) -> None:
        """Move every item whose timer is due at `now` (or earlier) to the ready queue."""
        with self._lock:
            while self._timers and self._timers[0][0] <= now:
                due, sequence, item = heapq.heappop(self._timers)
                if self._waiting.get(item) == (due, sequence):
                    del self._waiting[item]
                    self.add(item)

    def shutdown(self) -> None:
        """Take no more items; wake every blocked `get`."""
        with self._lock:
            self._shutting_down = True
            self._cond.notify_all()

    @property
    def shutting_down(self) -> bool:
        return self._shutting_down

    def ready(self) -> list[T]:
        """The items waiting for a worker, in the order they will be handed out."""
        with self._lock:
            return list(self._queue)

    def __len__(self) -> int:
        with self._lock:
            return len(self._queue)

    def _drop_stale_timers(self) -> None:
        while self._timers and self._waiting.get(self._timers[0][2]) != self._timers[0][:2]:
            heapq.heappop(self._timers)

    def _seconds_to_next_timer(self) -> float | None:
        self._drop_stale_timers()
        if not self._timers:
            return None
        return max((self._timers[0][0] - self._clock.now()).total_seconds(), 0.0)
