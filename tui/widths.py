"""Terminal widths at which the dashboard changes its layout, and fitting a sorted table into one."""

from __future__ import annotations

from collections.abc import Iterable

from rich.text import Text

NARROW_BELOW = 100  # columns: below this (an 80-column terminal) screens stack and the footer is compact
WIDE_FROM = 150  # columns: from this, screens show their widest tables
SHORT_BELOW = 32  # rows: below this (a 24-row terminal) screens give their secondary panels fewer lines
MIN_NAME_CELLS = 12  # a table's name column is never cut narrower than this to show its sort column


def sort_column_second(keys: list[str], sort_column: str) -> list[str]:
    """Column keys left to right: the first (the name), then the sort column (so that a narrow terminal,
    which loses columns at the right, still shows what the rows are ordered by), then the rest."""
    if sort_column in keys and sort_column != keys[0]:
        keys = [key for key in keys if key != sort_column]
        keys.insert(1, sort_column)
    return keys


def widest(cells: Iterable[Text]) -> int:
    """The width of the widest of `cells` (0 for none)."""
    return max((cell.cell_len for cell in cells), default=0)
