"""Session detail at 80x24: the credit plot is below "why this credit", where the side pane scrolls, and only the
mouse wheel reached it. `x` (in the footer there) scrolls the pane to it, whole with its title (the lesson); the
arrows still move between lessons and a draft typed previews on it, the pane kept on it; `x` again goes back to the
credits. Where the plot is in view under the box, or from 100 columns, nothing is below the fold: no `x`."""

from __future__ import annotations

from pathlib import Path

from lesson_credit.tui.app import LessonCreditApp
from tests.tui.test_tui_detail_plot_80 import TITLE, rows_in_view, screen_text
from tests.tui.test_tui_footer import footer_line
from tests.tui.test_tui_whole_headers import demo_app
from tests.tui.tui_fixture import burst, open_session, settle


def titled(app: LessonCreditApp) -> list[str]:
    return [row.strip(" │") for row in screen_text(app) if TITLE in row or "before → after (draft)" in row]


async def test_x_scrolls_to_the_plot_and_back_with_keys_typed_fast(tmp_path: Path) -> None:
    app = demo_app(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        detail = await open_session(pilot, "2026-10-23-157")  # four lessons, the judge's record
        pane, plot, table = (detail.query_one(w) for w in ("#detail-side", "#credit-plot", "#credits"))
        assert rows_in_view(plot, pane) == 0 and "x Plot" in footer_line(app), footer_line(app)
        first, second = detail.rows[:2]  # (the table's order: the plot's title names the highlighted one)
        burst(pilot, "x")
        await settle(pilot)
        assert rows_in_view(plot, pane) == plot.outer_size.height > 0
        assert titled(app) == [f"{first.removesuffix('.md')}: {TITLE}"], titled(app)
        burst(pilot, "down", "7")  # the next lesson, a draft: previewed on the plot, still whole in view
        await settle(pilot)
        assert detail.focused_lesson == second and detail.draft == 0.7
        assert rows_in_view(plot, pane) == plot.outer_size.height
        assert any(second.removesuffix(".md") in row for row in titled(app)), titled(app)
        assert titled(app)[0].endswith("before → after (draft) this session"), titled(app)
        burst(pilot, "x")
        await settle(pilot)
        assert rows_in_view(plot, pane) == 0 and rows_in_view(table, pane) == table.outer_size.height
        burst(pilot, "x", "escape", "x")  # to the plot, the draft discarded (the screen stays), back: in order
        await settle(pilot)
        assert detail.draft is None and app.screen is detail
        assert rows_in_view(plot, pane) == 0 and rows_in_view(table, pane) == table.outer_size.height


async def test_no_x_where_nothing_is_below_the_fold(tmp_path: Path) -> None:
    app = demo_app(tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await open_session(pilot, "2026-10-23-157")
        assert " x " not in footer_line(app), footer_line(app)
        await pilot.resize_terminal(80, 24)
        await settle(pilot)
        assert "x Plot" in footer_line(app), footer_line(app)
