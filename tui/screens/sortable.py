"""A data screen whose table sorts by one column at a time.

A click on a column's header sorts by it (a second click reverses), `o` sorts by the next
column, `r` reverses the order. The screen gives its columns as data and refills its table
in `_rebuild`, putting `sort_headers()` on the columns; the `o` and `r` bindings stay in its
own BINDINGS, where they take their place in the footer.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterator, Mapping
from typing import Any, ClassVar

from textual import on
from textual.widgets import DataTable

from lesson_credit.tui.screens.base import DataScreen
from lesson_credit.tui.source import WorkspaceSource


class SortableScreen(DataScreen):
    """Keeps `sort_column` and `sort_reverse` and rebuilds when either changes."""

    # column key -> (header, sort key), in the order `o` goes through them
    SORT_COLUMNS: ClassVar[Mapping[str, tuple[str, Callable[[Any], Any]]]] = {}
    # columns that sort largest first when chosen; the rest sort smallest first
    DESCENDING_FIRST: ClassVar[Collection[str]] = ()
    # `o` keeps the current direction instead of giving the next column its own first one
    CYCLE_KEEPS_DIRECTION: ClassVar[bool] = False

    def __init__(self, source: WorkspaceSource, sort_column: str) -> None:
        super().__init__(source)
        self.sort_column = sort_column
        self.sort_reverse = sort_column in self.DESCENDING_FIRST

    def _rebuild(self) -> None:
        """Refill the table in the current order."""
        raise NotImplementedError

    def sort_headers(self) -> Iterator[tuple[str, str]]:
        """Each column's key and header, the sort column's marked ▼ (descending) or ▲."""
        for key, (header, _) in self.SORT_COLUMNS.items():
            if key == self.sort_column:
                header += " ▼" if self.sort_reverse else " ▲"
            yield key, header

    def sort_by(self, column: str | None) -> None:
        """Sort by `column` in its first direction, or reverse the order if it is the sort column."""
        if column is None or column not in self.SORT_COLUMNS:
            return
        if column == self.sort_column:
            self.sort_reverse = not self.sort_reverse
        else:
            self.sort_column = column
            self.sort_reverse = column in self.DESCENDING_FIRST
        self._rebuild()

    @on(DataTable.HeaderSelected)
    def _sort_header_selected(self, event: DataTable.HeaderSelected) -> None:
        self.sort_by(event.column_key.value)

    def action_cycle_sort(self) -> None:
        columns = tuple(self.SORT_COLUMNS)
        self.sort_column = columns[(columns.index(self.sort_column) + 1) % len(columns)]
        if not self.CYCLE_KEEPS_DIRECTION:
            self.sort_reverse = self.sort_column in self.DESCENDING_FIRST
        self._rebuild()

    def action_reverse_sort(self) -> None:
        self.sort_reverse = not self.sort_reverse
        self._rebuild()
