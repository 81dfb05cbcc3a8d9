"""Clocks: the wall clock for `fleetwarden up`, a virtual one for `fleetwarden simulate`.

Everything that needs the time (queues, timers, the event recorder, reconcilers) asks a
Clock, never `datetime.now()`, so the same code runs in both.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Protocol

# A scenario's default startTime.
DEFAULT_EPOCH = datetime(2025, 1, 1, tzinfo=UTC)


class Clock(Protocol):
    def now(self) -> datetime:
        """The current instant, an aware UTC datetime."""
        ...


class RealClock:
    def now(self) -> datetime:
        return datetime.now(UTC)


class VirtualClock:
    """A clock that moves only when told to, as client-go's fake clock; never backwards."""

    def __init__(self, start: datetime = DEFAULT_EPOCH) -> None:
        if start.tzinfo is None:
            raise ValueError(f"virtual clock start {start.isoformat()} has no time zone")
        self._now = start.astimezone(UTC)

    def now(self) -> datetime:
        return self._now

    def set(self, instant: datetime) -> None:
        if instant < self._now:
            raise ValueError(
                f"virtual time cannot go back from {self._now.isoformat()} to {instant.isoformat()}"
            )
        self._now = instant.astimezone(UTC)

    def advance(self, delta: timedelta) -> None:
        self.set(self._now + delta)
