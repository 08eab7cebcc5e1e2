"""A data screen whose table sorts by one column at a time.

A click on a column's header sorts by it (a second click reverses), `o` sorts by the next
column, `r` reverses the order. The screen gives its columns as data and refills its table
in `_rebuild`, putting `sort_headers()` on the columns; the `o` and `r` bindings stay in its
own BINDINGS, where they take their place in the footer.

A screen with a filter box (`FILTER_BOX`) re-runs the filter after a pause in typing
(FILTER_DEBOUNCE), not on every character: a 5,000-character paste typed key by key is one
rebuild, not 5,000. The filter is applied at once when it is submitted (enter) and before any
key that does not go into the box (`before_key`, called by the key router), so a key that
reads the table (enter, a cursor move) always sees the rows of the filter typed before it.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterator, Mapping
from typing import Any, ClassVar

from textual import on
from textual.timer import Timer
from textual.widgets import DataTable, Input

from lesson_credit.tui.screens.base import DataScreen
from lesson_credit.tui.source import WorkspaceSource
from lesson_credit.tui.widths import NARROW_BELOW

FILTER_DEBOUNCE = 0.15  # seconds without typing before the filter re-runs


class SortableScreen(DataScreen):
    """Keeps `sort_column` and `sort_reverse` and rebuilds when either changes."""

    # column key -> (header, sort key), in the order `o` goes through them
    SORT_COLUMNS: ClassVar[Mapping[str, tuple[str, Callable[[Any], Any]]]] = {}
    # columns that sort largest first when chosen; the rest sort smallest first
    DESCENDING_FIRST: ClassVar[Collection[str]] = ()
    NARROW_HEADERS: ClassVar[Mapping[str, str]] = {}  # column key -> its header below 100 columns
    # `o` keeps the current direction instead of giving the next column its own first one
    CYCLE_KEEPS_DIRECTION: ClassVar[bool] = False
    # the id of the screen's filter box (an Input), if it has one
    FILTER_BOX: ClassVar[str | None] = None

    def __init__(self, source: WorkspaceSource, sort_column: str) -> None:
        super().__init__(source)
        self.sort_column = sort_column
        self.sort_reverse = sort_column in self.DESCENDING_FIRST
        self.filter_text = ""  # as typed (stripped)
        self.shown_filter = ""  # the filter the table shows: `_rebuild` sets it
        self._filter_timer: Timer | None = None

    def _rebuild(self) -> None:
        """Refill the table in the current order (and with `filter_text`: set `shown_filter`)."""
        raise NotImplementedError

    # ---------------------------------------------------------------- the filter box

    @property
    def filter_pending(self) -> bool:
        """Typed into the filter box and not applied to the table yet."""
        return self.filter_text != self.shown_filter

    def filter_typed(self, value: str) -> None:
        """The filter box changed: re-run the filter once typing pauses."""
        self.filter_text = value.strip()
        if self._filter_timer is not None:
            self._filter_timer.stop()
        self._filter_timer = self.set_timer(FILTER_DEBOUNCE, self.apply_filter) if self.filter_pending else None

    def apply_filter(self) -> None:
        """Show the rows of the filter as typed, now (nothing to do if they are shown)."""
        if self._filter_timer is not None:
            self._filter_timer.stop()
            self._filter_timer = None
        if self.filter_pending:
            self._rebuild()

    def before_key(self) -> None:
        """Called by the key router before it hands this screen a key: a key for anything but the
        filter box (enter, a cursor move, a sort) sees the filter typed before it applied."""
        if self.FILTER_BOX is None or not self.filter_pending:
            return
        focused = self.focused
        if not (isinstance(focused, Input) and focused.id == self.FILTER_BOX):
            self.apply_filter()

    def resized(self, rebuild: bool) -> None:
        if rebuild:
            self._rebuild()  # the narrow headers and cells

    def sort_headers(self) -> Iterator[tuple[str, str]]:
        """Each column's key and header, the sort column's marked ▼ (descending) or ▲; below 100 columns
        the shorter header of NARROW_HEADERS where one is given."""
        narrow = self.size.width < NARROW_BELOW
        for key, (header, _) in self.SORT_COLUMNS.items():
            if narrow:
                header = self.NARROW_HEADERS.get(key, header)
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
