"""Lessons at a wide and at a 24-row terminal, on the demo: at 200x50 about 75 columns sat empty between the
table and a 38-column density plot; at 80x24 the plot had two rows of curves, too few to tell pins apart."""

from __future__ import annotations

from pathlib import Path

from lesson_credit.tui.widgets.themed_table import ThemedTable
from tests.support.textual_private import screen_lines
from tests.tui.test_tui_whole_headers import demo_app, lessons_header
from tests.tui.tui_fixture import settle


def rows_of_curves(app: object, region: object) -> int:
    """The plot's rows between its box's top (`┌`) and bottom (`└`), as drawn."""
    lines = ["".join(s.text for s in line) for line in screen_lines(app)]  # type: ignore[arg-type]
    drawn = [line[region.x : region.right] for line in lines[region.y : region.bottom]]  # type: ignore[attr-defined]
    top = next(i for i, line in enumerate(drawn) if "┌" in line)
    bottom = next(i for i, line in enumerate(drawn) if "└" in line)
    return bottom - top - 1


async def test_the_plot_takes_the_columns_the_table_leaves_at_200x50(tmp_path: Path) -> None:
    app = demo_app(tmp_path)
    async with app.run_test(size=(200, 50)) as pilot:
        await settle(pilot)
        table = app.screen.query_one("#lessons-table", ThemedTable)
        side = app.screen.query_one("#lessons-side")
        assert table.max_scroll_x == 0  # every column whole
        columns_end = table.region.x + table.virtual_size.width
        bar = table.scrollbar_size_vertical if table.show_vertical_scrollbar else 0
        assert side.region.x - columns_end - bar <= 1, (columns_end, side.region)  # the side pane's margin
        assert side.region.right == 200 and side.region.width >= 100, side.region


async def test_the_plot_keeps_four_rows_of_curves_at_80x24_and_the_table_its_columns(tmp_path: Path) -> None:
    app = demo_app(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        for key in ("p", "down", "p", "down", "p", "down"):  # three pins: the legend takes five lines
            await pilot.press(key)
            await settle(pilot)
        plot = app.screen.query_one("#lesson-plot")
        assert rows_of_curves(app, plot.region) >= 4
        assert lessons_header(app) == ["lesson", "mean", "▼", "n", "95%", "CI", "ranking"]
        table = app.screen.query_one("#lessons-table", ThemedTable)
        assert table.region.height == 20 and table.region.width == 49, table.region  # 19 rows under the header


async def test_the_legend_names_a_pin_whole_where_its_line_has_room(tmp_path: Path) -> None:
    """At 200x50 the legend is over 100 columns wide: a pinned communication/escalate-when-blocked (35 cells) read
    `communi…/escalate-when-blocked`, its label cut to 30 before the legend measured its line."""
    app = demo_app(tmp_path)
    async with app.run_test(size=(200, 50)) as pilot:
        await settle(pilot)
        for key in ("down", "p", "up"):  # the demo's second lesson by mean, pinned; the first highlighted
            await pilot.press(key)
            await settle(pilot)
        legend = app.screen.query_one("#legend")
        lines = ["".join(s.text for s in line) for line in screen_lines(app)]
        drawn = [line[legend.region.x : legend.region.right] for line in lines[legend.region.y : legend.region.bottom]]
        assert any("━━ communication/escalate-when-blocked" in line for line in drawn), drawn
