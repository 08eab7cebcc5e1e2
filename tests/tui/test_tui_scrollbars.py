"""Scrollbars read as scrollbars: on the demo at 80x24 the tables' sideways scrollbar drew as a lone `▊` or `▏`
(its thumb dark blue on black, only the eighth-cell glyph at its end showing) and the vertical one as `▅▅` right
after a row's last number. Now: no glyphs, a thumb that stands out from its track and the background, and a
blank column between the text and a vertical bar."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from rich.color import Color
from rich.style import Style
from rich.text import Text
from textual.app import App, ComposeResult
from textual.widgets import DataTable

from lesson_credit.tui.widgets.themed_table import ThemedTable
from tests.support.textual_private import screen_lines
from tests.tui.test_tui_whole_headers import demo_app
from tests.tui.tui_fixture import settle

EIGHTHS = set("▁▂▃▄▅▆▇▉▊▋▌▍▎▏")  # Textual's glyphs for a thumb's fractional ends


def cells(app: Any, y: int) -> list[tuple[str, Style]]:
    """The screen's row `y`, one (character, style) per cell."""
    out: list[tuple[str, Style]] = []
    for segment in screen_lines(app)[y]:
        out += [(ch, segment.style or Style()) for ch in segment.text]
    return out


def luminance(colour: Color) -> float:
    """WCAG relative luminance of an sRGB colour."""
    channels = [c / 255 for c in colour.get_truecolor()]
    r, g, b = (c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in channels)
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def contrast(a: Color, b: Color) -> float:
    """WCAG contrast ratio: 1 for one colour, 21 for black on white. The old thumb (#003054) on its black
    track: (0.0276 + 0.05) / 0.05 = 1.55."""
    high, low = sorted((luminance(a), luminance(b)), reverse=True)
    return (high + 0.05) / (low + 0.05)


@pytest.mark.parametrize("keys", [(), ("a",)], ids=["lessons", "analysis"])
async def test_the_tables_scrollbars_read_as_scrollbars_at_80x24(tmp_path: Path, keys: tuple[str, ...]) -> None:
    app = demo_app(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        for key in keys:
            await pilot.press(key)
            await settle(pilot)
        table = app.screen.query_one(DataTable)
        assert table.show_horizontal_scrollbar and table.show_vertical_scrollbar  # both scroll at 80x24
        assert table.max_scroll_x > 0  # a column out of sight to the right: the sideways bar is due
        bar = table.horizontal_scrollbar.region
        row = cells(app, bar.y)[bar.x : bar.right]
        assert not EIGHTHS & {ch for ch, _ in row}, "".join(ch for ch, _ in row)
        backgrounds = [style.bgcolor for _, style in row]
        thumb, track = backgrounds[0], backgrounds[-1]  # scrolled to the left: the thumb starts the bar
        assert thumb is not None and track is not None and thumb != track
        screen = app.screen.styles.background.rich_color
        assert contrast(thumb, track) >= 2 and contrast(thumb, screen) >= 2, (thumb, track, screen)
        # the vertical bar: its left column blank, as the text's background, between the text and the bar
        side = table.vertical_scrollbar.region
        assert side.width == 2
        top = cells(app, side.y)[side.x + 1][1].bgcolor  # scrolled to the top: the thumb starts the bar
        assert top is not None and contrast(top, screen) >= 2
        for y in range(side.y, side.bottom):
            gap, right = cells(app, y)[side.x : side.right]
            assert gap[0] == " " and right[0] == " " and gap[1].bgcolor != top, (y, gap, right)
        glyphs = {ch for y in range(24) for ch, _ in cells(app, y)}
        assert not EIGHTHS & glyphs, EIGHTHS & glyphs


class OneTable(App[None]):
    """A table as tall as its rows (the Session screen's credits), 40 cells wide."""

    CSS = "ThemedTable { height: auto; width: 40; }"

    def compose(self) -> ComposeResult:
        yield ThemedTable()


def fill(table: ThemedTable, width: int) -> None:
    """Two columns of `width` cells each (one cell of padding either side) and four rows."""
    table.clear(columns=True)
    table.add_column("a", width=width)
    table.add_column("b", width=width)
    for i in range(4):
        table.add_row(Text("x"), Text("y"), key=str(i))


async def test_a_table_whose_columns_shrink_to_fit_loses_its_sideways_scrollbar() -> None:
    """The Session screen builds its credits for the screen's width before the table is laid out, then again
    for the table's: on a loaded machine the table was laid out between the two, with the sideways scrollbar
    the first columns needed, and kept it (a blank row under the credits, everything below one row lower):
    Textual looks at the scrollbars again when a table's size changes, and a table as tall as its rows and
    that scrollbar did not change size when its columns shrank."""
    app = OneTable()
    async with app.run_test(size=(60, 20)) as pilot:
        table = app.query_one(ThemedTable)
        fill(table, 20)  # 2 x (20 + 2) = 44 cells: wider than the table's 40
        await settle(pilot)
        assert table.show_horizontal_scrollbar and table.outer_size.height == 1 + 4 + 1  # header, rows, bar
        fill(table, 18)  # 2 x (18 + 2) = 40 cells: they fit, to the cell (as the credits' columns are fitted)
        await settle(pilot)
        assert table.virtual_size.width == 40
        assert not table.show_horizontal_scrollbar and table.outer_size.height == 1 + 4  # header and rows
