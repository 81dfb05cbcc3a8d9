"""Go durations; the tables are Go's time_test.go (parseDurationTests, durationTests)."""

from datetime import UTC, datetime, timedelta

import pytest

from fleetwarden.semantics.durations import (
    HOUR,
    MICROSECOND,
    MILLISECOND,
    MINUTE,
    NANOSECOND,
    SECOND,
    DurationError,
    format_duration,
    format_duration_ns,
    parse_duration,
    parse_duration_ns,
    since,
)

MAX = (1 << 63) - 1
MIN = -(1 << 63)

PARSE = [
    ("0", 0),
    ("5s", 5 * SECOND),
    ("30s", 30 * SECOND),
    ("1478s", 1478 * SECOND),
    ("-5s", -5 * SECOND),
    ("+5s", 5 * SECOND),
    ("-0", 0),
    ("+0", 0),
    ("5.0s", 5 * SECOND),
    ("5.6s", 5 * SECOND + 600 * MILLISECOND),
    ("5.s", 5 * SECOND),
    (".5s", 500 * MILLISECOND),
    ("1.0s", 1 * SECOND),
    ("1.00s", 1 * SECOND),
    ("1.004s", 1 * SECOND + 4 * MILLISECOND),
    ("1.0040s", 1 * SECOND + 4 * MILLISECOND),
    ("100.00100s", 100 * SECOND + 1 * MILLISECOND),
    ("10ns", 10 * NANOSECOND),
    ("11us", 11 * MICROSECOND),
    ("12µs", 12 * MICROSECOND),
    ("12μs", 12 * MICROSECOND),
    ("13ms", 13 * MILLISECOND),
    ("14s", 14 * SECOND),
    ("15m", 15 * MINUTE),
    ("16h", 16 * HOUR),
    ("3h30m", 3 * HOUR + 30 * MINUTE),
    ("10.5s4m", 4 * MINUTE + 10 * SECOND + 500 * MILLISECOND),
    ("-2m3.4s", -(2 * MINUTE + 3 * SECOND + 400 * MILLISECOND)),
    ("1h2m3s4ms5us6ns", HOUR + 2 * MINUTE + 3 * SECOND + 4 * MILLISECOND + 5 * MICROSECOND + 6),
    ("39h9m14.425s", 39 * HOUR + 9 * MINUTE + 14 * SECOND + 425 * MILLISECOND),
    ("52763797000ns", 52763797000),
    ("0.3333333333333333333h", 20 * MINUTE),
    ("9007199254740993ns", (1 << 53) + 1),
    ("9223372036854775807ns", MAX),
    ("9223372036854775.807us", MAX),
    ("9223372036s854ms775us807ns", MAX),
    ("-9223372036854775808ns", MIN),
    ("-9223372036854775.808us", MIN),
    ("-9223372036s854ms775us808ns", MIN),
    ("-2562047h47m16.854775808s", MIN),
    ("0.100000000000000000000h", 6 * MINUTE),
    ("0.830103483285477580700h", 49 * MINUTE + 48 * SECOND + 372539827),
    ("0" * 5000 + "1s", SECOND),
    # the brief's own examples
    ("300ms", 300 * MILLISECOND),
    ("1.5h", 90 * MINUTE),
    ("-5m", -5 * MINUTE),
]


@pytest.mark.parametrize(("text", "ns"), PARSE)
def test_parse(text: str, ns: int) -> None:
    assert parse_duration_ns(text) == ns


ERRORS = [
    ("", 'time: invalid duration ""'),
    ("3", 'time: missing unit in duration "3"'),
    ("1", 'time: missing unit in duration "1"'),
    ("-", 'time: invalid duration "-"'),
    ("s", 'time: invalid duration "s"'),
    (".", 'time: invalid duration "."'),
    ("-.", 'time: invalid duration "-."'),
    (".s", 'time: invalid duration ".s"'),
    ("+.s", 'time: invalid duration "+.s"'),
    ("x", 'time: invalid duration "x"'),
    ("1d", 'time: unknown unit "d" in duration "1d"'),
    ("5m1x", 'time: unknown unit "x" in duration "5m1x"'),
    ("\ufffd", 'time: invalid duration "\\xef\\xbf\\xbd"'),
    (
        "\ufffd hello \ufffd world",
        'time: invalid duration "\\xef\\xbf\\xbd hello \\xef\\xbf\\xbd world"',
    ),
    ("1µ", 'time: unknown unit "\\xc2\\xb5" in duration "1\\xc2\\xb5"'),
    ('1"', 'time: unknown unit "\\"" in duration "1\\""'),
    ("9223372036854775810ns", 'time: invalid duration "9223372036854775810ns"'),
    ("9223372036854775808ns", 'time: invalid duration "9223372036854775808ns"'),
    ("-9223372036854775809ns", 'time: invalid duration "-9223372036854775809ns"'),
    ("9223372036854776us", 'time: invalid duration "9223372036854776us"'),
    ("3000000h", 'time: invalid duration "3000000h"'),
    ("9223372036854775.808us", 'time: invalid duration "9223372036854775.808us"'),
    ("9223372036854ms775us808ns", 'time: invalid duration "9223372036854ms775us808ns"'),
    # leadingInt overflows before the unit is read; int() would refuse 5000 digits itself.
    ("99999999999999999999y", 'time: invalid duration "99999999999999999999y"'),
    ("9" * 5000 + "s", f'time: invalid duration "{"9" * 5000}s"'),
]


@pytest.mark.parametrize(("text", "message"), ERRORS)
def test_parse_errors(text: str, message: str) -> None:
    with pytest.raises(DurationError) as err:
        parse_duration_ns(text)
    assert str(err.value) == message


FORMAT = [
    ("0s", 0),
    ("1ns", 1),
    ("1.1µs", 1100),
    ("2.2ms", 2200 * MICROSECOND),
    ("3.3s", 3300 * MILLISECOND),
    ("4m5s", 4 * MINUTE + 5 * SECOND),
    ("4m5.001s", 4 * MINUTE + 5001 * MILLISECOND),
    ("5h6m7.001s", 5 * HOUR + 6 * MINUTE + 7001 * MILLISECOND),
    ("8m0.000000001s", 8 * MINUTE + 1),
    ("2562047h47m16.854775807s", MAX),
    ("-2562047h47m16.854775808s", MIN),
    ("5m0s", 5 * MINUTE),
    ("1h0m0s", HOUR),
    ("300ms", 300 * MILLISECOND),
    ("-1.5s", -1500 * MILLISECOND),
]


@pytest.mark.parametrize(("text", "ns"), FORMAT)
def test_format(text: str, ns: int) -> None:
    assert format_duration_ns(ns) == text


@pytest.mark.parametrize("ns", [MAX, MIN, 0, 1, -1, 90 * MINUTE, 1100])
def test_round_trip(ns: int) -> None:
    assert parse_duration_ns(format_duration_ns(ns)) == ns


def test_timedelta_forms() -> None:
    assert parse_duration("1h2m3s") == timedelta(hours=1, minutes=2, seconds=3)
    assert parse_duration("-1.5h") == timedelta(minutes=-90)
    assert parse_duration(300) == timedelta(seconds=300)
    # Below a microsecond is dropped, towards zero either way.
    assert parse_duration("1999ns") == timedelta(microseconds=1)
    assert parse_duration("-1999ns") == timedelta(microseconds=-1)
    assert format_duration(timedelta(minutes=5)) == "5m0s"
    assert format_duration(timedelta(seconds=-1, microseconds=500_000)) == "-500ms"


@pytest.mark.parametrize("value", [True, 1.5, None])
def test_only_strings_and_whole_seconds(value: object) -> None:
    with pytest.raises(TypeError):
        parse_duration(value)  # type: ignore[arg-type]


NOW = datetime(2024, 5, 1, 12, 0, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    ("timestamp", "expected"),
    [
        (None, "<unknown>"),
        ("", "<unknown>"),
        ("2024-05-01T11:59:30Z", "30s"),
        ("2024-05-01T10:00:00Z", "120m"),
        ("2024-05-01T12:00:10Z", "<invalid>"),  # in the future
        ("yesterday", "<invalid>"),
        ("2024-05-01T11:00:00", "<invalid>"),  # no time zone
        (12, "<invalid>"),
    ],
)
def test_since_is_kubectls_age(timestamp: object, expected: str) -> None:
    assert since(timestamp, NOW) == expected
