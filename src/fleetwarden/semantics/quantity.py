"""resource.Quantity: parsing, the integer views controllers compute with, canonical text.

A quantity is kept as an exact Fraction. `milli_value` and `value` round up, away from
zero, as Quantity.MilliValue() and Value() do; `decimal_si` and `binary_si` write an
integer amount the way Quantity.String() does for NewMilliQuantity / NewQuantity with the
DecimalSI or BinarySI format ("1500m", "2", "1k"; "128Mi", "125000Ki", "1000").
"""

from __future__ import annotations

import functools
import math
import re
from fractions import Fraction

QUANTITY_PATTERN = r"^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$"
QUANTITY_FORMAT_ERROR = f"quantities must match the regular expression '{QUANTITY_PATTERN}'"

_QUANTITY_RE = re.compile(QUANTITY_PATTERN)
_BINARY_SUFFIXES = ("", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei")
_DECIMAL_EXPONENTS = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12}
_DECIMAL_EXPONENTS |= {"P": 15, "E": 18}
_DECIMAL_SUFFIXES = {exponent: suffix for suffix, exponent in _DECIMAL_EXPONENTS.items()}


MAX_EXPONENT = 1000


class QuantityError(ValueError):
    """Text that resource.ParseQuantity refuses."""


def parse_quantity(value: str | int | float) -> Fraction:
    """resource.ParseQuantity (a JSON number reads as its text, as Quantity's decoder does)."""
    return _parse(str(value).strip())


@functools.lru_cache(maxsize=4096)  # workloads repeat the same few quantities
def _parse(text: str) -> Fraction:
    match = _QUANTITY_RE.match(text)
    if match is None:
        raise QuantityError(QUANTITY_FORMAT_ERROR)
    number, suffix = match.group(1), match.group(2)
    try:
        amount = Fraction(number)
    except ValueError:
        raise QuantityError(QUANTITY_FORMAT_ERROR) from None
    if suffix in _BINARY_SUFFIXES[1:]:
        return amount * (1 << 10 * _BINARY_SUFFIXES.index(suffix))
    if suffix in _DECIMAL_EXPONENTS:
        return amount * Fraction(10) ** _DECIMAL_EXPONENTS[suffix]
    digits = suffix[1:].lstrip("+-")
    # An exact 10**exponent costs time and memory in proportion to the exponent: past
    # MAX_EXPONENT (far beyond any resource) the quantity is refused, not computed.
    if suffix[:1] in ("e", "E") and digits.isdigit() and len(digits.lstrip("0")) <= 4:
        exponent = int(suffix[1:])
        if abs(exponent) <= MAX_EXPONENT:
            return amount * Fraction(10) ** exponent
    raise QuantityError(QUANTITY_FORMAT_ERROR)


def _round_up(amount: Fraction) -> int:
    """Away from zero, as Quantity rounds."""
    return math.ceil(amount) if amount >= 0 else -math.ceil(-amount)


def milli_value(amount: Fraction) -> int:
    return _round_up(amount * 1000)


def value(amount: Fraction) -> int:
    return _round_up(amount)


def decimal_si(amount: int, exponent: int = 0) -> str:
    """`amount`×10^exponent in canonical DecimalSI: no trailing zeros beyond a multiple of
    three, then the SI suffix of that power (e.g. (1500, -3) → "1500m", (2000, -3) → "2")."""
    if amount == 0:
        return "0"
    while amount % 10 == 0:
        amount //= 10
        exponent += 1
    shift = exponent % 3
    amount, exponent = amount * 10**shift, exponent - shift
    suffix = _DECIMAL_SUFFIXES.get(exponent)
    return f"{amount}{suffix}" if suffix is not None else f"{amount}e{exponent}"


def binary_si(amount: int) -> str:
    """A whole number of bytes in canonical BinarySI (below 1024 it reads as DecimalSI)."""
    if -1024 < amount < 1024:
        return decimal_si(amount)
    power = 0
    while amount % 1024 == 0 and power < len(_BINARY_SUFFIXES) - 1:
        amount //= 1024
        power += 1
    return f"{amount}{_BINARY_SUFFIXES[power]}"
