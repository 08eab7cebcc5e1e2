"""A DataTable whose cell tones (warning, muted, up/down...) come from the theme, not fixed colours."""

from __future__ import annotations

from collections.abc import Sequence
from itertools import islice
from typing import Any, ClassVar

from rich.style import Style
from rich.text import Text, TextType
from textual import events
from textual.binding import Binding, BindingType
from textual.message import Message
from textual.render import measure
from textual.widgets import DataTable
from textual.widgets.data_table import ColumnKey, RowKey

TONES = ("warning", "error", "muted", "accent", "up", "down", "pinned")
FILL_FIRST = 100  # rows a fill adds at once: more than a screenful
FILL_BATCH = 200  # then this many after each refresh

Row = tuple[str, Sequence[Text]]  # (row key, cells)


class ThemedTable(DataTable[Text]):
    """Cells are always `Text` (never markup). `tone()` gives the theme's style for a kind of cell.

    Styles are read from component classes, so a screen rebuilds its rows when the theme changes.
    """

    COMPONENT_CLASSES: ClassVar[set[str]] = DataTable.COMPONENT_CLASSES | {f"themed-table--{t}" for t in TONES}
    # a row table: home / end go to the first / last row (DataTable's own scroll sideways)
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("home", "first_row", "First row", show=False),
        Binding("end", "last_row", "Last row", show=False),
    ]

    DEFAULT_CSS = """
    ThemedTable {
        height: 1fr;
    }
    ThemedTable > .themed-table--warning {
        color: $text-warning;
        text-style: bold;
    }
    ThemedTable > .themed-table--error {
        color: $text-error;
        text-style: bold;
    }
    ThemedTable > .themed-table--muted {
        color: $text-muted;
    }
    ThemedTable > .themed-table--accent {
        color: $text-accent;
        text-style: bold;
    }
    ThemedTable > .themed-table--up {
        color: $text-success;
    }
    ThemedTable > .themed-table--down {
        color: $text-error;
    }
    ThemedTable > .themed-table--pinned {
        color: $text-accent;
        text-style: bold;
    }
    """

    class Resized(Message):
        """The table's size changed, its first layout included (a screen fits columns to it)."""

        def __init__(self, table: ThemedTable) -> None:
            super().__init__()
            self.table = table

        @property
        def control(self) -> ThemedTable:
            return self.table

    def on_resize(self, event: events.Resize) -> None:
        self.post_message(self.Resized(self))

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._fill: int = 0  # bumped by every fill and clear: a stale batch sees it and stops
        self._pending: dict[str, list[Text]] = {}  # rows of the last fill not added yet, in order, by key

    @property
    def filling(self) -> bool:
        """Rows of the last fill are still being added."""
        return bool(self._pending)

    def fill(self, rows: Sequence[Row], first: int = FILL_FIRST) -> None:
        """Add rows: `first` of them now, the rest a batch after each refresh.

        DataTable measures every cell it is given before the next frame, so thousands of rows
        at once block the event loop for a noticeable moment; in batches, keys and repaints go
        on between them. Callers put the rows the cursor needs within `first`."""
        self._fill += 1
        for key, cells in rows[:first]:
            self.add_row(*cells, key=key)
        self._pending = {key: list(cells) for key, cells in rows[first:]}
        if self._pending:
            self.call_after_refresh(self._fill_more, self._fill)

    def _fill_more(self, fill: int) -> None:
        if fill != self._fill:
            return  # cleared or refilled since
        batch = list(islice(self._pending, FILL_BATCH))
        for key in batch:
            self.add_row(*self._pending.pop(key), key=key)
        if self._pending:
            self.call_after_refresh(self._fill_more, fill)

    def add_row(
        self, *cells: Text, height: int | None = 1, key: str | None = None, label: TextType | None = None
    ) -> RowKey:
        """Add a row and widen its columns to its cells at once.

        Textual measures new rows only when the table is next idle, and caches the lines it paints
        keyed by its update count, not by the column widths. On a loaded machine a frame came before
        that idle pass: a table rebuilt with `clear(columns=True)` was painted at its labels' widths,
        and when the pass found the same widths as before the rebuild nothing changed the key, so the
        cut lines stayed on screen. Widened here, the first frame is right and the pass changes nothing."""
        row_key = super().add_row(*cells, height=height, key=key, label=label)
        console = self.app.console
        for column, cell in zip(self.ordered_columns, cells, strict=False):
            # a one-line Text is as wide as its cells; Textual's pass measures the same (never wider)
            width = cell.cell_len if isinstance(cell, Text) and "\n" not in cell.plain else measure(console, cell, 1)
            if width > column.content_width:
                column.content_width = width
        return row_key

    def set_cell(self, row_key: str, column_key: str, cell: Text) -> None:
        """Replace one cell, whether its row is in the table yet or still waiting in a fill (found by
        its key: a scan of the waiting rows made filling in a 3,000-row table's intervals, while it
        was still filling, 24,000 scans of up to 3,000 rows: 25 s)."""
        waiting = self._pending.get(row_key)
        if waiting is not None:
            waiting[self.get_column_index(column_key)] = cell
            return
        self.update_cell(row_key, column_key, cell)
        # a longer value widens its column; a shorter one leaves it (update_width=True would re-measure
        # the whole column whenever a value is narrower: n^2 measurements to fill a column of n rows)
        widened = self.columns.get(ColumnKey(column_key))
        if widened is not None and cell.cell_len > widened.content_width:
            widened.content_width = cell.cell_len
            self._require_update_dimensions = True  # Textual's flag: re-size the table when next idle

    def action_first_row(self) -> None:
        if self.row_count:
            self.move_cursor(row=0)

    def action_last_row(self) -> None:
        """The last row of the fill, its rows still waiting added first (a fill lists at most a screen's
        worth of thousands: adding them now is one pause, where waiting would leave `end` short)."""
        if self._pending:
            self._fill += 1  # the batches still scheduled find nothing left to add
            pending, self._pending = self._pending, {}
            for key, cells in pending.items():
                self.add_row(*cells, key=key)
        if self.row_count:
            self.move_cursor(row=self.row_count - 1)

    def clear(self, columns: bool = False) -> ThemedTable:
        self._fill += 1
        self._pending = {}
        super().clear(columns)
        return self

    def tone(self, name: str) -> Style:
        return self.get_component_rich_style(f"themed-table--{name}", partial=True)

    def tones(self) -> dict[str, Style]:
        """Every tone's style as the theme has it now: what a worker needs to build cells."""
        return {name: self.tone(name) for name in TONES}

    def toned(self, value: str, name: str | None) -> Text:
        """`value` as literal Text in the given tone (or plain)."""
        return Text(value, style=self.tone(name) if name else "", end="")
