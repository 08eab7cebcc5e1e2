"""Numbers as text, one rounding for every screen: the CLI's tables and the dashboard's agree.

A value is first rounded to 9 decimals, so that 0.48849999999999993 and 0.48850000000000005 (the
same 0.4885 reached by two orders of arithmetic) print alike, then formatted to `digits` places.
"""

from __future__ import annotations


def fixed(value: float, digits: int = 3) -> str:
    """`value` to `digits` decimals: fixed(0.4885, 3) is the same whichever way 0.4885 was computed."""
    return f"{round(value, 9):.{digits}f}"


def signed(value: float, digits: int = 3) -> str:
    """`fixed` with a sign; a value that rounds to zero is +0.000, never -0.000."""
    value = round(value, 9)
    if abs(value) < 0.5 * 10**-digits:
        value = 0.0
    return f"{value:+.{digits}f}"
