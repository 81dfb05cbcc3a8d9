"""metav1.Time and MicroTime as the wire writes them, remembered per instant or not."""

from datetime import UTC, datetime, timedelta, timezone

from fleetwarden.api.meta import format_micro_time, format_time

INSTANT = datetime(2025, 1, 1, 12, 30, 5, 123456, tzinfo=UTC)


def test_time_is_whole_seconds_and_micro_time_keeps_microseconds_every_time() -> None:
    for _ in range(2):  # the second time from what the first remembered
        assert format_time(INSTANT) == "2025-01-01T12:30:05Z"
        assert format_micro_time(INSTANT) == "2025-01-01T12:30:05.123456Z"


def test_each_instant_has_its_own_text() -> None:
    later = INSTANT + timedelta(microseconds=1)
    assert format_micro_time(INSTANT) == "2025-01-01T12:30:05.123456Z"
    assert format_micro_time(later) == "2025-01-01T12:30:05.123457Z"
    assert format_time(INSTANT + timedelta(seconds=1)) == "2025-01-01T12:30:06Z"


def test_another_zone_is_written_in_utc() -> None:
    # The same instant two hours east: equal to INSTANT, and written as INSTANT is.
    east = INSTANT.astimezone(timezone(timedelta(hours=2)))
    assert east == INSTANT
    assert format_micro_time(east) == "2025-01-01T12:30:05.123456Z"
    assert format_time(east) == "2025-01-01T12:30:05Z"
