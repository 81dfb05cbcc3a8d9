import time
from fractions import Fraction

import pytest

from fleetwarden.semantics.quantity import (
    QuantityError,
    binary_si,
    decimal_si,
    milli_value,
    parse_quantity,
    value,
)


@pytest.mark.parametrize(
    ("text", "amount"),
    [
        ("100m", Fraction(1, 10)),
        ("1.5", Fraction(3, 2)),
        ("2", 2),
        (2, 2),
        (0.5, Fraction(1, 2)),
        ("1Ki", 1024),
        ("128Mi", 128 * 2**20),
        ("1k", 1000),
        ("1M", 10**6),
        ("1e3", 1000),
        ("1E3", 1000),
        ("5n", Fraction(5, 10**9)),
        (" 3 ", 3),
        ("+1", 1),
    ],
)
def test_parse(text: str | int | float, amount: Fraction | int) -> None:
    assert parse_quantity(text) == amount


@pytest.mark.parametrize("text", ["", "abc", "1Kii", "1.2.3", "1e", "Mi", "1 Gi"])
def test_parse_refuses(text: str) -> None:
    with pytest.raises(QuantityError, match="quantities must match the regular expression"):
        parse_quantity(text)


def test_an_exponent_beyond_any_resource_is_refused_at_once() -> None:
    assert parse_quantity("2e1000") == 2 * 10**1000
    for text in ("1e1001", "1e9999999", "1e" + "9" * 5000, "1e-1001"):
        started = time.perf_counter()
        with pytest.raises(QuantityError, match="quantities must match the regular expression"):
            parse_quantity(text)
        assert time.perf_counter() - started < 5, text  # minutes when it computes 10**e


def test_values_round_up_away_from_zero() -> None:
    assert milli_value(parse_quantity("0.0001")) == 1
    assert value(parse_quantity("1.1")) == 2
    assert value(parse_quantity("-1.1")) == -2
    assert milli_value(parse_quantity("1.5")) == 1500


@pytest.mark.parametrize(
    ("amount", "exponent", "text"),
    [
        (0, -3, "0"),
        (200, -3, "200m"),
        (1500, -3, "1500m"),
        (2000, -3, "2"),
        (100, 0, "100"),
        (1000, 0, "1k"),
        (2_000_000, -3, "2k"),
        (1, 21, "1e21"),
    ],
)
def test_decimal_si(amount: int, exponent: int, text: str) -> None:
    assert decimal_si(amount, exponent) == text


@pytest.mark.parametrize(
    ("amount", "text"),
    [
        (1000, "1k"),  # below 1024 bytes read as DecimalSI
        (1024, "1Ki"),
        (128 * 2**20, "128Mi"),
        (128_000_000, "125000Ki"),
        (2**30, "1Gi"),
        (1025, "1025"),
        (5 * 2**60, "5Ei"),
    ],
)
def test_binary_si(amount: int, text: str) -> None:
    assert binary_si(amount) == text
