from datetime import UTC, datetime, timedelta, timezone

import pytest

from fleetwarden.runtime.clock import DEFAULT_EPOCH, RealClock, VirtualClock


def test_virtual_clock_starts_at_the_scenario_epoch_and_moves_only_when_told() -> None:
    clock = VirtualClock()
    assert clock.now() == datetime(2025, 1, 1, tzinfo=UTC) == DEFAULT_EPOCH
    assert clock.now() == clock.now()
    clock.advance(timedelta(minutes=5))
    assert clock.now() == datetime(2025, 1, 1, 0, 5, tzinfo=UTC)
    clock.set(datetime(2025, 1, 1, 1, tzinfo=UTC))
    assert clock.now() == datetime(2025, 1, 1, 1, tzinfo=UTC)


def test_virtual_clock_normalises_to_utc() -> None:
    start = datetime(2025, 6, 1, 2, tzinfo=timezone(timedelta(hours=2)))
    clock = VirtualClock(start)
    assert clock.now() == datetime(2025, 6, 1, tzinfo=UTC)
    assert clock.now().tzinfo is UTC


def test_virtual_clock_never_goes_back() -> None:
    clock = VirtualClock()
    with pytest.raises(ValueError, match="cannot go back"):
        clock.advance(timedelta(seconds=-1))
    with pytest.raises(ValueError, match="cannot go back"):
        clock.set(DEFAULT_EPOCH - timedelta(microseconds=1))
    clock.set(DEFAULT_EPOCH)  # staying put is fine
    assert clock.now() == DEFAULT_EPOCH


def test_virtual_clock_refuses_a_naive_start() -> None:
    with pytest.raises(ValueError, match="no time zone"):
        VirtualClock(datetime(2025, 1, 1))


def test_real_clock_is_aware_utc_and_current() -> None:
    before = datetime.now(UTC)
    now = RealClock().now()
    assert now.tzinfo is UTC
    assert before <= now <= datetime.now(UTC)
