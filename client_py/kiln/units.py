"""Byte sizes, parsed and printed the one way Kiln does everywhere.

SI suffixes are powers of 1000 (k, M, G, T, with or without "B"), IEC ones
powers of 1024 (Ki, Mi, Gi, Ti, with or without "B"); a bare number is bytes.
kilnd's flags (kiln/common/ByteSize.h) read sizes by the same rules, and
tests/byte_sizes.tsv holds the cases both are tested against.
"""

from __future__ import annotations

import re
from fractions import Fraction

__all__ = ["parse_size", "format_bytes"]

_UNITS = {"": 1, "b": 1,
          "k": 1000, "kb": 1000, "m": 1000**2, "mb": 1000**2, "g": 1000**3, "gb": 1000**3,
          "t": 1000**4, "tb": 1000**4,
          "ki": 1024, "kib": 1024, "mi": 1024**2, "mib": 1024**2, "gi": 1024**3,
          "gib": 1024**3, "ti": 1024**4, "tib": 1024**4}
_SIZE_RE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([a-zA-Z]*)\s*$", re.ASCII)
_INT64_MAX = 2**63 - 1


def parse_size(text: str) -> int:
    """'1073741824', '512M', '1.5GiB' -> bytes, exactly. SI suffixes are
    powers of 1000, IEC ones (Ki, Mi, Gi, Ti) powers of 1024; the result is
    a whole number of bytes that fits int64. Raises ValueError."""
    m = _SIZE_RE.match(text)
    if not m or m.group(2).lower() not in _UNITS:
        raise ValueError(f"not a size: {text!r} (examples: 1000000, 512M, 2GiB, 1.5GiB)")
    value = Fraction(m.group(1)) * _UNITS[m.group(2).lower()]
    if value.denominator != 1:
        raise ValueError(f"not a whole number of bytes: {text!r}")
    if value > _INT64_MAX:
        raise ValueError(f"too large: {text!r}")
    return int(value)


def format_bytes(n: int) -> str:
    """1536 -> '1.5 KiB'; exact bytes below 1 KiB."""
    if n < 1024:
        return f"{n} B"
    value = float(n)
    for unit in ("KiB", "MiB", "GiB", "TiB", "PiB"):
        value /= 1024
        if value < 1024 or unit == "PiB":
            return f"{value:.1f} {unit}"
    raise AssertionError("unreachable")


