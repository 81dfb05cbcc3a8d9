"""robfig/cron v3's ParseStandard, as kube-apiserver checks a CronJob's schedule: five fields
(minute, hour, day of month, month, day of week) or a descriptor, with the parser's messages.

Only whether a schedule parses is answered here; when it fires is the CronJob controller's.
A `TZ=`/`CRON_TZ=` prefix is skipped: the API server refuses it on its own terms.
"""

from __future__ import annotations

import json
from typing import NamedTuple

from fleetwarden.semantics.durations import DurationError, parse_duration_ns


class CronError(ValueError):
    """A schedule ParseStandard refuses, with its message."""


class _Bounds(NamedTuple):
    low: int
    high: int
    names: tuple[str, ...] = ()  # names[i] stands for low + i


_MONTHS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
_DAYS = ("sun", "mon", "tue", "wed", "thu", "fri", "sat")
_FIELDS = (_Bounds(0, 59), _Bounds(0, 23), _Bounds(1, 31), _Bounds(1, 12, _MONTHS),
           _Bounds(0, 6, _DAYS))  # fmt: skip
_DESCRIPTORS = {"@yearly", "@annually", "@monthly", "@weekly", "@daily", "@midnight", "@hourly"}
_EVERY = "@every "
_INT_MAX = (1 << 63) - 1


def parse_standard(spec: str) -> None:
    """Raise CronError unless cron.ParseStandard accepts the schedule."""
    if not spec:
        raise CronError("empty spec string")
    if spec.startswith(("TZ=", "CRON_TZ=")) and " " in spec:
        spec = spec[spec.index(" ") :].strip()
    if spec.startswith("@"):
        _descriptor(spec)
        return
    fields = spec.split()
    if len(fields) != len(_FIELDS):
        shown = "[" + " ".join(fields) + "]"  # Go's %s of a []string
        raise CronError(f"expected exactly {len(_FIELDS)} fields, found {len(fields)}: {shown}")
    for field, bounds in zip(fields, _FIELDS, strict=True):
        for expr in (part for part in field.split(",") if part):
            _range(expr, bounds)


def _descriptor(spec: str) -> None:
    if spec in _DESCRIPTORS:
        return
    if spec.startswith(_EVERY):
        try:
            parse_duration_ns(spec[len(_EVERY) :])
        except DurationError as exc:
            raise CronError(f"failed to parse duration {spec}: {exc}") from None
        return
    raise CronError(f"unrecognized descriptor: {spec}")


def _range(expr: str, bounds: _Bounds) -> None:
    """number | number "-" number [ "/" number ], or * and ? for the whole range."""
    range_and_step = expr.split("/")
    low_and_high = range_and_step[0].split("-")
    if low_and_high[0] in ("*", "?"):
        start, end = bounds.low, bounds.high
    else:
        if len(low_and_high) > 2:
            raise CronError(f"too many hyphens: {expr}")
        start = _int_or_name(low_and_high[0], bounds)
        end = _int_or_name(low_and_high[1], bounds) if len(low_and_high) == 2 else start
    if len(range_and_step) > 2:
        raise CronError(f"too many slashes: {expr}")
    step = 1
    if len(range_and_step) == 2:
        step = _int(range_and_step[1])
        if len(low_and_high) == 1:
            end = bounds.high  # "N/step" means "N-max/step"
    if start < bounds.low:
        raise CronError(f"beginning of range ({start}) below minimum ({bounds.low}): {expr}")
    if end > bounds.high:
        raise CronError(f"end of range ({end}) above maximum ({bounds.high}): {expr}")
    if start > end:
        raise CronError(f"beginning of range ({start}) beyond end of range ({end}): {expr}")
    if step == 0:
        raise CronError(f"step of range should be a positive number: {expr}")


def _int_or_name(expr: str, bounds: _Bounds) -> int:
    if expr.lower() in bounds.names:
        return bounds.low + bounds.names.index(expr.lower())
    return _int(expr)


def _int(expr: str) -> int:
    """strconv.Atoi, then no negatives."""
    digits = expr[1:] if expr[:1] in ("+", "-") else expr
    if not digits.isascii() or not digits.isdigit():
        raise _atoi_error(expr, "invalid syntax")
    significant = digits.lstrip("0")
    # More than 19 digits are past int64 (and may be past what int() will convert).
    if len(significant) > len(str(_INT_MAX)):
        raise _atoi_error(expr, "value out of range")
    number = int(significant or "0") * (-1 if expr[:1] == "-" else 1)
    if abs(number) > _INT_MAX:
        raise _atoi_error(expr, "value out of range")
    if number < 0:
        raise CronError(f"negative number ({number}) not allowed: {expr}")
    return number


def _atoi_error(expr: str, reason: str) -> CronError:
    atoi = f"strconv.Atoi: parsing {json.dumps(expr)}: {reason}"
    return CronError(f"failed to parse int from {expr}: {atoi}")
