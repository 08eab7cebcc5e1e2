"""Numbers as text, one rounding for every screen: the CLI's tables and the dashboard's agree; and
numbers typed, read one way by the command line and the dashboard (`decimal`).

A value is first rounded to 9 decimals, so that 0.48849999999999993 and 0.48850000000000005 (the
same 0.4885 reached by two orders of arithmetic) print alike, then formatted to `digits` places.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

# what a person types as a number: ASCII digits, an optional sign, point and exponent. Python's float()
# also takes "0_5" (5.0: an underscore is a digit separator), "infinity", "nan" and non-ASCII digits.
_DECIMAL = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")


def counted(n: int, noun: str, plural: str | None = None) -> str:
    """`1 session`, `2 sessions`: a count in prose with its noun in agreement (`plural` when it is
    not the noun + s). The engine's messages and the command line's say counts alike."""
    return f"{n} {noun if n == 1 else plural or noun + 's'}"


def and_more(n: int) -> str:
    """`and 3 more`: the items a list left out, counted (`listed` puts it after the ones it shows)."""
    return f"and {n} more"


def listed(
    items: Sequence[str], limit: int, sep: str = ", ", *, total: int | None = None, ellipsis: bool = False
) -> str:
    """The first `limit` of `items` joined by `sep`, then `and N more` for the rest (`total`: how many
    there are, when `items` holds only the first few): `a, b and 3 more`. With `ellipsis`, a cut marked
    as the dashboard marks it, after a separator: `a, b, … and 3 more` (`a\nb\n… and 3 more`)."""
    shown = list(items[:limit])
    rest = (len(items) if total is None else total) - len(shown)
    if rest <= 0:
        return sep.join(shown)
    if not shown:
        return f"{rest} more"
    return sep.join(shown) + (f"{sep}… " if ellipsis else " ") + and_more(rest)


def fixed(value: float, digits: int = 3) -> str:
    """`value` to `digits` decimals: fixed(0.4885, 3) is the same whichever way 0.4885 was computed. A value
    that rounds to zero is 0.000, never -0.000 (a correlation of -0.0004 is no negative one)."""
    return _unsigned_zero(f"{round(value, 9):.{digits}f}")


def signed(value: float, digits: int = 3) -> str:
    """`fixed` with a sign (+0.250, -0.004); a value that rounds to zero has none: 0.000, never +0.000 or
    -0.000, which read as a direction the number does not have."""
    return _unsigned_zero(f"{round(value, 9):+.{digits}f}")


def span(low: float, high: float, digits: int = 2) -> str:
    """An interval, `[low, high]`, each bound as `signed` prints it: a bound that rounds to zero is 0.00
    ([0.00, +0.22]: a low end of -0.0025 neither above nor below zero at two places)."""
    return "[" + ", ".join(signed(v, digits) for v in (low, high)) + "]"


def _unsigned_zero(shown: str) -> str:
    """`shown` (a formatted number) without its sign when every digit is 0."""
    return shown[1:] if shown[:1] in "+-" and not shown.strip("+-0.") else shown


def decimal(text: str) -> float | None:
    """The number `text` spells as a plain decimal ("0.5", ".5", "5e-1", "-0" as 0.0; spaces around
    it allowed); None for anything else, "0_5", "nan" and "inf" included."""
    text = text.strip()
    if not _DECIMAL.fullmatch(text):
        return None
    return float(text) + 0.0  # (+ 0.0: -0 is 0)
