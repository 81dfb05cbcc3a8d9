"""resource.ParseQuantity, as far as the Cluster resource models compare quantities."""

from __future__ import annotations

import re
from fractions import Fraction
from typing import Any

from fleetwarden.admission.schema import QUANTITY

_QUANTITY_RE = re.compile(QUANTITY)
QUANTITY_FORMAT_ERROR = (
    "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
)
# Multipliers of the binary suffixes, powers of ten of the decimal ones.
_BINARY_SUFFIXES = {s: 1 << 10 * i for i, s in enumerate(("Ki", "Mi", "Gi", "Ti", "Pi", "Ei"), 1)}
_DECIMAL_SUFFIXES = {
    s: 3 * i for i, s in enumerate(("n", "u", "m", "", "k", "M", "G", "T", "P", "E"), -3)
}


def parse_quantity(value: Any) -> Fraction | None:
    """The quantity's value, or None when it would not parse."""
    text = str(value).strip()
    match = _QUANTITY_RE.match(text)
    if match is None:
        return None
    suffix = match.group(6) or ""
    number = Fraction(text[: len(text) - len(suffix)])
    if suffix in _BINARY_SUFFIXES:
        return number * _BINARY_SUFFIXES[suffix]
    if suffix in _DECIMAL_SUFFIXES:
        return number * _power_of_ten(_DECIMAL_SUFFIXES[suffix])
    exponent = suffix[1:]
    return number * _power_of_ten(int(exponent)) if exponent.lstrip("+-").isdigit() else None


def _power_of_ten(exponent: int) -> Fraction:
    return Fraction(10**exponent) if exponent >= 0 else Fraction(1, 10**-exponent)
