import threading
import time
from datetime import timedelta

from fleetwarden.runtime.clock import RealClock, VirtualClock
from fleetwarden.runtime.workqueue import (
    BucketRateLimiter,
    ItemExponentialFailureRateLimiter,
    MaxOfRateLimiter,
    WorkQueue,
    default_controller_rate_limiter,
)

MS = timedelta(milliseconds=1)
S = timedelta(seconds=1)


def drain(queue: WorkQueue[str]) -> list[str]:
    items = []
    while (item := queue.get(block=False)) is not None:
        items.append(item)
        queue.done(item)
    return items


# Dedup, the dirty and processing sets.


def test_items_are_handed_out_fifo_and_deduplicated_while_queued(clock: VirtualClock) -> None:
    queue: WorkQueue[str] = WorkQueue(clock)
    for item in ["b", "a", "b", "c", "a"]:
        queue.add(item)
    assert len(queue) == 3
    assert queue.ready() == ["b", "a", "c"]
    assert drain(queue) == ["b", "a", "c"]
    assert queue.get(block=False) is None


def test_an_item_added_while_processing_is_requeued_after_done(clock: VirtualClock) -> None:
    queue: WorkQueue[str] = WorkQueue(clock)
    queue.add("a")
    assert queue.get(block=False) == "a"
    queue.add("a")
    queue.add("a")
    # Not handed to a second worker while the first still has it.
    assert len(queue) == 0
    assert queue.get(block=False) is None
    queue.done("a")
    assert queue.ready() == ["a"]
    assert drain(queue) == ["a"]


def test_done_without_a_new_add_does_not_requeue(clock: VirtualClock) -> None:
    queue: WorkQueue[str] = WorkQueue(clock)
    queue.add("a")
    item = queue.get(block=False)
    assert item == "a"
    queue.done(item)
    assert len(queue) == 0


def test_shutdown_stops_handing_out_and_taking_items(clock: VirtualClock) -> None:
    queue: WorkQueue[str] = WorkQueue(clock)
    queue.add("a")
    queue.shutdown()
    assert queue.shutting_down
    assert queue.get() is None  # does not block, even with an item left
    queue.add("b")
    queue.add_after("c", S)
    assert queue.ready() == ["a"]
    assert queue.next_due() is None


# Delays on the clock.


def test_add_after_fires_at_the_exact_instant(clock: VirtualClock) -> None:
    queue: WorkQueue[str] = WorkQueue(clock)
    start = clock.now()
    queue.add_after("a", 30 * S)
    assert queue.next_due() == start + 30 * S
    clock.advance(30 * S - MS)
    assert queue.get(block=False) is None
    clock.advance(MS)
    assert queue.get(block=False) == "a"
    assert queue.next_due() is None


def test_timers_fire_in_due_order_then_in_the_order_added(clock: VirtualClock) -> None:
    queue: WorkQueue[str] = WorkQueue(clock)
    queue.add_after("late", 20 * S)
    queue.add_after("tie-1", 10 * S)
    queue.add_after("early", 5 * S)
    queue.add_after("tie-2", 10 * S)
    queue.add("now")
    clock.advance(timedelta(minutes=1))
    queue.pop_due(clock.now())
    assert queue.ready() == ["now", "early", "tie-1", "tie-2", "late"]


def test_the_earliest_timer_for_an_item_wins(clock: VirtualClock) -> None:
    queue: WorkQueue[str] = WorkQueue(clock)
    start = clock.now()
    queue.add_after("a", 10 * S)
    queue.add_after("a", 20 * S)  # later: ignored
    assert queue.next_due() == start + 10 * S
    queue.add_after("a", 5 * S)  # earlier: replaces
    assert queue.next_due() == start + 5 * S
    clock.advance(5 * S)
    assert drain(queue) == ["a"]
    # The replaced timer is gone: nothing fires at 10 s.
    assert queue.next_due() is None
    clock.advance(10 * S)
    assert drain(queue) == []


def test_pop_due_moves_only_what_is_due(clock: VirtualClock) -> None:
    queue: WorkQueue[str] = WorkQueue(clock)
    start = clock.now()
    queue.add_after("a", S)
    queue.add_after("b", 2 * S)
    queue.pop_due(start + S)
    assert queue.ready() == ["a"]
    assert queue.next_due() == start + 2 * S


def test_a_timer_for_a_queued_item_does_not_duplicate_it(clock: VirtualClock) -> None:
    queue: WorkQueue[str] = WorkQueue(clock)
    queue.add("a")
    queue.add_after("a", S)
    clock.advance(S)
    assert drain(queue) == ["a"]


def test_a_non_positive_delay_adds_at_once(clock: VirtualClock) -> None:
    queue: WorkQueue[str] = WorkQueue(clock)
    queue.add_after("a", timedelta(0))
    queue.add_after("b", -S)
    assert queue.ready() == ["a", "b"]
    assert queue.next_due() is None


# Rate limiting.


def test_exponential_backoff_doubles_from_5ms_and_caps_at_1000s() -> None:
    limiter = ItemExponentialFailureRateLimiter()
    delays = [limiter.when("a") for _ in range(20)]
    assert delays[:5] == [5 * MS, 10 * MS, 20 * MS, 40 * MS, 80 * MS]
    assert delays[17] == 5 * MS * 2**17  # 655.36 s
    assert delays[18] == delays[19] == 1000 * S
    assert limiter.num_requeues("a") == 20
    assert limiter.when("b") == 5 * MS  # per item
    limiter.forget("a")
    assert limiter.num_requeues("a") == 0
    assert limiter.when("a") == 5 * MS


def test_exponential_backoff_survives_very_many_failures() -> None:
    limiter = ItemExponentialFailureRateLimiter(MS, timedelta(days=10**6))
    for _ in range(200):
        delay = limiter.when("a")
    assert delay == timedelta(days=10**6)


def test_add_rate_limited_backs_off_and_forget_resets(clock: VirtualClock) -> None:
    queue: WorkQueue[str] = WorkQueue(clock)
    start = clock.now()
    queue.add_rate_limited("a")
    assert queue.next_due() == start + 5 * MS
    clock.advance(5 * MS)
    assert drain(queue) == ["a"]
    queue.add_rate_limited("a")
    assert queue.next_due() == start + 15 * MS
    assert queue.num_requeues("a") == 2
    queue.forget("a")
    assert queue.num_requeues("a") == 0


def test_bucket_limiter_allows_a_burst_then_paces_at_qps(clock: VirtualClock) -> None:
    bucket = BucketRateLimiter(qps=2, burst=2, clock=clock)
    assert [bucket.when(i) for i in range(4)] == [timedelta(0), timedelta(0), S / 2, S]
    clock.advance(1500 * MS)  # pays back the two reservations, and one token more
    assert bucket.when("x") == timedelta(0)
    assert bucket.when("y") == S / 2


def test_max_of_limiters_takes_the_longest_delay(clock: VirtualClock) -> None:
    limiter = MaxOfRateLimiter(
        ItemExponentialFailureRateLimiter(), BucketRateLimiter(qps=1, burst=1, clock=clock)
    )
    assert limiter.when("a") == 5 * MS
    assert limiter.when("a") == S  # the bucket is empty now
    assert limiter.num_requeues("a") == 2
    limiter.forget("a")
    assert limiter.num_requeues("a") == 0


def test_default_controller_rate_limiter_has_a_bucket_only_with_a_clock(
    clock: VirtualClock,
) -> None:
    assert isinstance(default_controller_rate_limiter(), ItemExponentialFailureRateLimiter)
    limiter = default_controller_rate_limiter(bucket_clock=clock, qps=10, bucket_size=100)
    delays = [limiter.when(i) for i in range(101)]
    assert delays[99] == 5 * MS
    assert delays[100] == S / 10


# Blocking gets on the real clock.


def test_a_blocking_get_wakes_for_an_add_and_for_shutdown() -> None:
    queue: WorkQueue[str] = WorkQueue(RealClock())
    got: list[str | None] = []

    def work() -> None:
        got.append(queue.get())
        got.append(queue.get())

    worker = threading.Thread(target=work)
    worker.start()
    queue.add("a")
    while not got:
        time.sleep(0.001)
    queue.shutdown()
    worker.join(timeout=5)
    assert not worker.is_alive()
    assert got == ["a", None]


def test_a_blocking_get_sleeps_until_the_next_timer() -> None:
    queue: WorkQueue[str] = WorkQueue(RealClock())
    started = time.monotonic()
    queue.add_after("a", 20 * MS)
    assert queue.get() == "a"
    assert time.monotonic() - started >= 0.015


def test_no_item_is_processed_by_two_workers_at_once() -> None:
    queue: WorkQueue[int] = WorkQueue(RealClock())
    active: set[int] = set()
    overlaps: list[int] = []
    processed: list[int] = []
    lock = threading.Lock()

    def work() -> None:
        while (item := queue.get()) is not None:
            with lock:
                if item in active:
                    overlaps.append(item)
                active.add(item)
            time.sleep(0.0005)
            with lock:
                active.discard(item)
                processed.append(item)
            queue.done(item)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for thread in threads:
        thread.start()
    for round_ in range(30):
        queue.add(round_ % 3)
        time.sleep(0.0002)
    while len(queue):
        time.sleep(0.001)
    time.sleep(0.01)
    queue.shutdown()
    for thread in threads:
        thread.join(timeout=5)
    assert overlaps == []
    assert set(processed) == {0, 1, 2}
