"""Go's time.ParseDuration and Duration.String, for Karmada's duration flags and settings.

A Go duration is a signed 64-bit count of nanoseconds. `parse_duration_ns` keeps every
nanosecond; `parse_duration` hands back a timedelta, which keeps microseconds.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta
from typing import Any

NANOSECOND = 1
MICROSECOND = 1000 * NANOSECOND
MILLISECOND = 1000 * MICROSECOND
SECOND = 1000 * MILLISECOND
MINUTE = 60 * SECOND
HOUR = 60 * MINUTE

_UNITS = {
    "ns": NANOSECOND,
    "us": MICROSECOND,
    "µs": MICROSECOND,  # U+00B5 micro sign
    "μs": MICROSECOND,  # U+03BC Greek mu
    "ms": MILLISECOND,
    "s": SECOND,
    "m": MINUTE,
    "h": HOUR,
}
_LIMIT = 1 << 63  # |min int64|; the largest duration is one less
# Below a second Go prints the largest unit that keeps an integer part: "1.5ms", "300ns".
_SUBSECOND = ((MILLISECOND, 6, "ms"), (MICROSECOND, 3, "µs"), (NANOSECOND, 0, "ns"))
# [0-9]*(\.[0-9]*)? then the unit: everything up to the next digit or dot.
_COMPONENT = re.compile(r"(?P<int>[0-9]*)(?:\.(?P<frac>[0-9]*))?(?P<unit>[^0-9.]*)")


class DurationError(ValueError):
    """A duration Go would refuse, with Go's message."""


def _quote(text: str) -> str:
    """time.quote: `"` and `\\` escaped, control and non-ASCII characters as UTF-8 \\x bytes."""
    out: list[str] = []
    for ch in text:
        if ch < " " or ch >= "\x80":
            out.extend(f"\\x{b:02x}" for b in ch.encode("utf-8", "surrogatepass"))
        else:
            out.append("\\" + ch if ch in '"\\' else ch)
    return '"' + "".join(out) + '"'


def _invalid(text: str) -> DurationError:
    return DurationError(f"time: invalid duration {_quote(text)}")


def _leading_fraction(digits: str) -> tuple[int, float]:
    """The fraction's digits and scale; digits past int64 precision are dropped, not refused."""
    value, scale = 0, 1.0
    for ch in digits:
        if value > (_LIMIT - 1) // 10:
            break
        nxt = value * 10 + ord(ch) - ord("0")
        if nxt > _LIMIT:
            break
        value, scale = nxt, scale * 10
    return value, scale


def _component(rest: str, text: str) -> tuple[int, str]:
    """One `<number><unit>` from the front of rest: its nanoseconds and what follows."""
    if not (rest[0] == "." or "0" <= rest[0] <= "9"):
        raise _invalid(text)
    match = _COMPONENT.match(rest)
    assert match is not None  # every part of the pattern may be empty
    whole, frac, unit = match["int"], match["frac"] or "", match["unit"]
    # leadingInt's overflow, refused before the unit is looked at. Twenty digits are past it
    # (and a few thousand past what int() will convert at all).
    significant = whole.lstrip("0")
    if len(significant) > len(str(_LIMIT)) or int(significant or "0") > _LIMIT:
        raise _invalid(text)
    if not whole and not frac:  # no digits at all, as in ".s"
        raise _invalid(text)
    if not unit:
        raise DurationError(f"time: missing unit in duration {_quote(text)}")
    if unit not in _UNITS:
        raise DurationError(f"time: unknown unit {_quote(unit)} in duration {_quote(text)}")
    scale_ns = _UNITS[unit]
    value = int(significant or "0")
    if value > _LIMIT // scale_ns:
        raise _invalid(text)
    value *= scale_ns
    fraction, scale = _leading_fraction(frac)
    if fraction:
        # float64 keeps fractions of an hour accurate to the nanosecond, as Go relies on.
        value += int(float(fraction) * (float(scale_ns) / scale))
        if value > _LIMIT:
            raise _invalid(text)
    return value, rest[match.end() :]


def parse_duration_ns(text: str) -> int:
    """time.ParseDuration: "300ms", "-1.5h", "2h45m" to nanoseconds, refusing what Go refuses."""
    rest = text
    negative = rest[:1] == "-"
    if rest[:1] in ("-", "+"):
        rest = rest[1:]
    if rest == "0":
        return 0
    if not rest:
        raise _invalid(text)
    total = 0
    while rest:
        value, rest = _component(rest, text)
        total += value
        if total > _LIMIT:
            raise _invalid(text)
    if negative:
        return -total
    if total > _LIMIT - 1:
        raise _invalid(text)
    return total


def parse_duration(value: str | int) -> timedelta:
    """A Go duration string, or whole seconds given as an integer (a scenario's `300`).

    Nanoseconds below a microsecond are dropped, towards zero.
    """
    if isinstance(value, bool) or not isinstance(value, int | str):
        raise TypeError(f"a duration is a Go duration string or whole seconds, not {value!r}")
    if isinstance(value, int):
        return timedelta(seconds=value)
    ns = parse_duration_ns(value)
    micros = abs(ns) // MICROSECOND
    return timedelta(microseconds=-micros if ns < 0 else micros)


def _fraction(value: int, digits: int) -> str:
    """`.123` for the low `digits` decimal digits of value, trailing zeros dropped."""
    text = str(value % 10**digits).rjust(digits, "0").rstrip("0")
    return "." + text if text else ""


def format_duration_ns(ns: int) -> str:
    """Duration.String: "1h0m0s", "5m0s", "300ms", "1.5µs", "0s"."""
    sign, u = ("-" if ns < 0 else ""), abs(ns)
    if u == 0:
        return "0s"
    if u < SECOND:
        unit, digits, name = next(small for small in _SUBSECOND if u >= small[0])
        return f"{sign}{u // unit}{_fraction(u, digits)}{name}"
    seconds = f"{u // SECOND % 60}{_fraction(u, 9)}s"
    minutes, hours = u // MINUTE % 60, u // HOUR
    if hours:
        return f"{sign}{hours}h{minutes}m{seconds}"
    if minutes:
        return f"{sign}{minutes}m{seconds}"
    return sign + seconds


def format_duration(value: timedelta) -> str:
    """Duration.String of a timedelta: timedelta(minutes=5) is "5m0s"."""
    whole_seconds = value.days * 86400 + value.seconds
    return format_duration_ns(whole_seconds * SECOND + value.microseconds * MICROSECOND)


def human_duration(delta: timedelta) -> str:
    """duration.HumanDuration: two or three significant figures, as kubectl's AGE."""
    seconds = int(delta.total_seconds())
    if seconds < -1:
        return "<invalid>"
    if seconds < 0:
        return "0s"
    if seconds < 120:
        return f"{seconds}s"
    minutes, hours, days = seconds // 60, seconds // 3600, seconds // 86400
    if minutes < 10:
        return _pair(minutes, "m", seconds % 60, "s")
    if minutes < 180:
        return f"{minutes}m"
    if hours < 8:
        return _pair(hours, "h", minutes % 60, "m")
    if hours < 48:
        return f"{hours}h"
    if hours < 24 * 8:
        return _pair(days, "d", hours % 24, "h")
    if hours < 24 * 365 * 2:
        return f"{days}d"
    if hours < 24 * 365 * 8:
        return _pair(days // 365, "y", days % 365, "d")
    return f"{days // 365}y"


def since(timestamp: Any, now: datetime) -> str:
    """translateTimestampSince, as kubectl's AGE: "<unknown>" for no time, "<invalid>" for
    a timestamp that is not RFC 3339 (or lies in the future), else `human_duration`."""
    # Here, not at the top: api.meta is the API's models (pydantic), and the CLI imports
    # this module for every command, for --request-timeout and the settings' defaults.
    from fleetwarden.api.meta import parse_time

    if not timestamp:
        return "<unknown>"
    try:
        return human_duration(now - parse_time(timestamp))
    except ValueError:
        return "<invalid>"


def _pair(major: int, major_unit: str, minor: int, minor_unit: str) -> str:
    return f"{major}{major_unit}{minor}{minor_unit}" if minor else f"{major}{major_unit}"
