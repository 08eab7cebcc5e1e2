"""Plain-text rendering for people: aligned tables and terminal-safe strings."""

from __future__ import annotations

import re
from collections.abc import Sequence

from lesson_credit.core.base.numbers import fixed

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def safe(text: object) -> str:
    """Text from a journal, lesson or log with control characters made visible.

    An escape sequence in a journal must never reach the terminal as a control code.
    """
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", str(text))


def fmt(value: float | None, digits: int = 3) -> str:
    """A number to `digits` places, rounded as the dashboard rounds it (core.base.numbers)."""
    if value is None:
        return "-"
    return fixed(value, digits)


def table(headers: Sequence[str], rows: Sequence[Sequence[object]], right: Sequence[int] = ()) -> str:
    """An aligned text table; columns listed in `right` are right-aligned (numbers)."""
    cells = [[safe(c).replace("\n", " ") for c in row] for row in rows]
    widths = [len(h) for h in headers]
    for row in cells:
        for i, cell in enumerate(row):
            widths[i] = max(widths[i], len(cell))

    def line(values: Sequence[str]) -> str:
        parts = []
        for i, value in enumerate(values):
            parts.append(value.rjust(widths[i]) if i in right else value.ljust(widths[i]))
        return "  ".join(parts).rstrip()

    out = [line(headers), line(["-" * w for w in widths])]
    out += [line(row) for row in cells]
    return "\n".join(out)
