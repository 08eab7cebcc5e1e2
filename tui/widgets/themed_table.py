"""A DataTable whose cell tones (warning, muted, up/down...) come from the theme, not fixed colours."""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence
from itertools import islice
from typing import Any, ClassVar

from rich.console import OverflowMethod
from rich.style import Style
from rich.text import Text, TextType
from textual import events
from textual.binding import Binding, BindingType
from textual.geometry import Size
from textual.message import Message
from textual.render import measure
from textual.widgets import DataTable
from textual.widgets.data_table import ColumnKey, RowKey

from lesson_credit.tui.textual_private import (
    keep_painted_lines,
    paint_count,
    refresh_scrollbars,
    replace_cells,
    skip_idle_measure,
)
from lesson_credit.tui.widths import name_column_width

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

    _sized: Size | None

    def watch_virtual_size(self, old: Size, new: Size) -> None:
        """Columns refitted to the table's width (the Session screen's credits, built for the screen's width
        before the table was laid out): the sideways scrollbar the wider ones needed goes with them."""
        refresh_scrollbars(self)

    def on_resize(self, event: events.Resize) -> None:
        if event.size == self._sized:
            # only the rows below grew (a fill's batch, when a relayout came with it): DataTable's own
            # handler would bump its update count, and with it repaint every line on screen
            event.prevent_default()
        self._sized = event.size
        if self._fit is not None:
            self.fit_name_column(*self._fit)
        self.post_message(self.Resized(self))

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._fill: int = 0  # bumped by every fill and clear: a stale batch sees it and stops
        self._pending: dict[str, list[Text]] = {}  # rows of the last fill not added yet, in order, by key
        self._widened = False  # a row added since this was last reset widened a column
        self._sized = None  # the size the last Resize gave
        self._fit: tuple[int, int] | None = None  # the last fit_name_column's arguments: a resize fits again

    @property
    def filling(self) -> bool:
        """Rows of the last fill are still being added."""
        return bool(self._pending)

    def row_to_keep(self, told: str | None) -> str | None:
        """The row a rebuild keeps, given `told`, the row the screen was last told of (RowHighlighted): the
        row under the cursor now, which the message reports a turn later. A rebuild started in between (a
        resize, a load landing) that kept `told` put the cursor back on the row before a key's move. None
        (nothing told yet: a first frame's rows, or the screen chose the first row) stays None."""
        rows = self.ordered_rows
        if told is None or not 0 <= self.cursor_row < len(rows) or rows[self.cursor_row].key.value is None:
            return told
        return str(rows[self.cursor_row].key.value)

    def restore_cursor(self, keys: Sequence[str], keep: str | None, place: int = 0) -> str | None:
        """After a rebuild that listed `keys` (the rows in order): the cursor back on `keep`'s row, wherever
        the rebuild put it (the same session or lesson, not the same line), else on row `place` (the first
        when there are fewer rows). Returns the key of the row it is on, None for an empty table: a screen
        takes it as told at once (`enter` typed ahead reads it before the cursor's RowHighlighted lands).
        A fill puts `keep`'s row among the rows it adds first (ThemedTable.fill's `first`)."""
        if keep is not None and keep in keys:
            at = keys.index(keep)
        elif keys:
            at = place if 0 <= place < len(keys) else 0
        else:
            return None
        self.move_cursor(row=at, animate=False)
        return keys[at]

    def fill(self, rows: Sequence[Row], first: int = FILL_FIRST) -> None:
        """Add rows: `first` of them now, the rest a batch after each refresh.

        Thousands of rows at once block the event loop for a noticeable moment; in batches, keys and
        repaints go on between them. A batch costs only its rows: their cells are measured once (here,
        not again by Textual), the columns are as wide as every row needs from the first frame (a
        batch that widened one repainted every line), and the lines already painted stay painted
        (rows go below them). Callers put the rows the cursor needs within `first`."""
        self._fill += 1
        self._widen(cells for _, cells in rows[first:])  # the first rows widen them as they are added
        for key, cells in rows[:first]:
            self.add_row(*cells, key=key)
        self._pending = {key: list(cells) for key, cells in rows[first:]}
        if self._pending:
            self.call_after_refresh(self._fill_more, self._fill)

    def _fill_more(self, fill: int) -> None:
        if fill != self._fill:
            return  # cleared or refilled since
        batch = list(islice(self._pending, FILL_BATCH))
        painted, self._widened = paint_count(self), False
        for key in batch:
            self.add_row(*self._pending.pop(key), key=key)
        if not self._widened:  # rows below the others, no column wider: no painted line changed
            keep_painted_lines(self, painted)
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
        one_line = self._widen([cells])
        if one_line and height == 1 and label is None:  # Textual's idle pass would measure them again (0.2 ms a row)
            skip_idle_measure(self, row_key)
        return row_key

    def _widen(self, rows: Iterable[Sequence[Text]]) -> bool:
        """Widen the columns to these rows' cells; whether every cell was a one-line Text."""
        console = self.app.console
        columns = self.ordered_columns
        widths = [column.content_width for column in columns]
        one_line = True
        for cells in rows:
            for at, cell in enumerate(cells[: len(columns)]):
                # a one-line Text is as wide as its cells; Textual's pass measures the same (never wider)
                plain = isinstance(cell, Text) and "\n" not in cell.plain
                one_line = one_line and plain
                width = cell.cell_len if plain else measure(console, cell, 1)
                if width > widths[at]:
                    widths[at] = width
        for column, width in zip(columns, widths, strict=True):
            if width > column.content_width:
                column.content_width = width
                self._widened = True
        return one_line

    def set_cell(self, row_key: str, column_key: str, cell: Text) -> None:
        """Replace one cell, whether its row is in the table yet or still waiting in a fill (found by
        its key: a scan of the waiting rows made filling in a 3,000-row table's intervals, while it
        was still filling, 24,000 scans of up to 3,000 rows: 25 s)."""
        waiting = self._pending.get(row_key)
        if waiting is not None:
            waiting[self.get_column_index(column_key)] = cell
            return
        self.update_cell(row_key, column_key, cell)
        self._widen_to(column_key, cell.cell_len)

    def _widen_to(self, column_key: str, width: int) -> None:
        """A longer value widens its column; a shorter one leaves it (update_width=True would re-measure
        the whole column whenever a value is narrower: n^2 measurements to fill a column of n rows)."""
        widened = self.columns.get(ColumnKey(column_key))
        if widened is not None and width > widened.content_width:
            widened.content_width = width
            self._require_update_dimensions = True  # Textual's flag: re-size the table when next idle

    def set_cells(self, cells: Iterable[tuple[str, str, Text]]) -> None:
        """Replace many cells ((row key, column key, cell)): in rows still waiting in a fill, in the fill;
        in the others all at once, with one repaint. Textual's update_cell clears the table's render
        caches and asks for a repaint each time: the 3,000 interval cells of a big library, set one by
        one, held the event loop 0.15-0.5 s."""
        added: list[tuple[str, str, Text]] = []
        for row_key, column_key, cell in cells:
            waiting = self._pending.get(row_key)
            if waiting is not None:
                waiting[self.get_column_index(column_key)] = cell
            else:
                added.append((row_key, column_key, cell))
        if not added:
            return
        replace_cells(self, [(RowKey(row), ColumnKey(column), cell) for row, column, cell in added])
        widest: dict[str, int] = {}
        for _, column_key, cell in added:
            widest[column_key] = max(widest.get(column_key, 0), cell.cell_len)
        for column_key, width in widest.items():
            self._widen_to(column_key, width)

    def fit_name_column(self, keep: int, at: int = 0) -> None:
        """The names' column (the column `at`) as wide as `name_column_width` says for the table's size:
        no column cut in part at the right edge, the first `keep` columns after the names in sight (the
        names cut, with an ellipsis where their cells' overflow says so); again at each resize. Called
        after the rows are added (their widths are the columns')."""
        self._fit = (keep, at)
        columns = self.ordered_columns
        if len(columns) <= at or self.size.width <= 0:
            return
        names = columns[at].content_width + 2 * self.cell_padding
        before = sum(column.get_render_width(self) for column in columns[:at])
        rest = [column.get_render_width(self) for column in columns[at + 1 :]]
        fits = before + names + sum(rest) <= self.size.width  # else a scrollbar below, a row fewer for the rows
        lines = self.row_count + len(self._pending) + (self.header_height if self.show_header else 0)
        scrolls = lines + (0 if fits else 1) > self.size.height  # a scrollbar at the right
        visible = self.size.width - before - (self.styles.scrollbar_size_vertical if scrolls else 0)
        width = name_column_width(names, rest, visible, keep)
        columns[at].auto_width = width is None
        columns[at].width = columns[at].width if width is None else width - 2 * self.cell_padding  # padding apart
        self.refresh_column(at)
        self._require_update_dimensions = True  # Textual's flag (8.2.8): re-size the table when next idle

    def _column_spans(self) -> list[tuple[int, int]]:
        """Each column's first cell and the cell after its last, along the table's whole line."""
        spans: list[tuple[int, int]] = []
        x = 0
        for column in self.ordered_columns:
            width = column.get_render_width(self)
            spans.append((x, x + width))
            x += width
        return spans

    def columns_out_of_view(self) -> tuple[list[int], list[int]]:
        """The columns (not fixed) scrolled sideways out of view, in whole or in part: (those to the left, those to
        the right), by index."""
        fixed = self.fixed_columns
        spans = self._column_spans()
        left_edge = self.scroll_x + sum(end - start for start, end in spans[:fixed])
        right_edge = self.scroll_x + self.scrollable_content_region.width
        left = [i for i, (start, _) in enumerate(spans) if i >= fixed and start < left_edge]
        right = [i for i, (_, end) in enumerate(spans) if i >= fixed and end > right_edge]
        return left, right

    def scroll_to_column(self, step: int) -> bool:
        """Sideways to the next column out of view to the right (`step` 1) or the left (-1), whole, the view's
        left edge at a column's start (a key a column, where Textual's left / right move one cell); False when none
        is out of view there."""
        left, right = self.columns_out_of_view()
        if not (right if step > 0 else left):
            return False
        spans = self._column_spans()
        fixed = sum(end - start for start, end in spans[: self.fixed_columns])
        if step > 0:
            least = spans[right[0]][1] - self.scrollable_content_region.width  # that column's end at the right edge
            starts = [start - fixed for start, _ in spans[self.fixed_columns :] if start - fixed >= least]
            x = min(starts) if starts else least
        else:
            x = spans[left[-1]][0] - fixed
        self.scroll_to(x=max(0, min(x, self.max_scroll_x)), animate=False, immediate=True)
        return True

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

    def next_kept(self, key: str, kept: Collection[str]) -> str | None:
        """The first row after `key`, in the table's order (rows a fill has still to add included), that is
        in `kept`: the row that takes the place of `key` once the table is refilled without it. None when
        `key` is not a row or no row after it is kept."""
        keys = [str(row.key.value) for row in self.ordered_rows] + list(self._pending)
        if key not in keys:
            return None
        return next((k for k in keys[keys.index(key) + 1 :] if k in kept), None)

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

    def toned(self, value: str, name: str | None, overflow: OverflowMethod | None = None) -> Text:
        """`value` as literal Text in the given tone (or plain); `overflow` "ellipsis": cut with one."""
        return Text(value, style=self.tone(name) if name else "", end="", overflow=overflow)
