"""At 80x24 on the demo the answer a screen gives is on the screen and says what it is: Agreement's confusion
counts and its plot's title, Session detail's keywords hit, What-if's columns, Simulation's legend and the
grading queue's order; keys typed fast, as a user does."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from rich.text import Text

from lesson_credit.tui.screens.agreement import AgreementScreen
from lesson_credit.tui.screens.credit_cells import fitted_keywords
from lesson_credit.tui.screens.help import HelpScreen
from lesson_credit.tui.widgets.agreement_plot import AgreementPlot
from lesson_credit.tui.widgets.themed_table import ThemedTable
from tests.tui.test_tui_80x24_in_view import run_simulation, shown
from tests.tui.test_tui_help_meanings import help_plain
from tests.tui.test_tui_whole_headers import demo_app, row_text
from tests.tui.tui_fixture import burst, open_session, settle

SIZE = (80, 24)


def screen(app: Any) -> list[str]:
    return [row_text(app, y) for y in range(app.size.height)]


def table_rows(app: Any, table_id: str, lines: int) -> list[str]:
    """The first `lines` rows of a table as drawn (its region only), the header's included."""
    table = app.screen.query_one(f"#{table_id}", ThemedTable)
    rows = range(table.region.y, table.region.y + lines)
    return [row_text(app, y)[table.region.x : table.region.right] for y in rows]


async def test_agreement_shows_every_column_and_a_whole_plot_title_at_80x24(tmp_path: Path) -> None:
    """On the old code the table ended at kappa (tp/fp/fn/tn past the edge, with no sign of it) and the plot's
    title, which carried the counts, was cut ("... tp/fp/fn/tn 19/4/5/4: a person against…"). Every pair of the
    demo is highlighted in turn (down typed fast): its counts in its row, its title whole."""
    app = demo_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        burst(pilot, "A")
        await settle(pilot)
        assert isinstance(app.screen, AgreementScreen)
        header, first = table_rows(app, "agreement-table", 2)
        assert header.split() == [
            "category", "ref", "compared", "n", "MAE", "Pearson", "Spearman", "kappa", "tp/fp/fn/tn"
        ], header  # fmt: skip
        # `lesson-credit agreement` on the demo: human against judge, 32 sessions, 19/4/5/4
        assert first.split()[:4] == ["all", "human", "judge", "32"] and first.split()[-1] == "19/4/5/4", first
        table = app.screen.query_one("#agreement-table", ThemedTable)
        assert table.max_scroll_x == 0, table.max_scroll_x
        plot = app.screen.query_one(AgreementPlot)
        for row in range(table.row_count):
            if row:
                burst(pilot, "down")
                await settle(pilot)
            title = str(plot.border_title)
            drawn = row_text(app, plot.region.y)
            assert title in drawn and "…" not in drawn, (title, drawn)
        # the last row's pair, as `lesson-credit agreement` lists the demo's triage: erik against manual, 2 sessions
        assert title == "erik (x) vs manual (y) · triage · 2 sessions: two people", title


async def test_the_keywords_hit_say_how_many_more_at_80x24(tmp_path: Path) -> None:
    """The demo's 2026-10-26-167: mock-boundaries hit mock, unittest.mock, mock.patch and assert_called_once
    (its journal, by hand); at 80 columns the column has 26 cells. On the old code it read "mock, unittest.mock,
    mock…": a keyword cut and no sign of how many more. Now the two that fit whole and +2."""
    app = demo_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await open_session(pilot, "2026-10-26-167")
        line = next(line for line in screen(app) if line.lstrip().startswith("mock-boundaries"))
        assert line.rstrip().endswith("mock, unittest.mock +2"), line
        line = next(line for line in screen(app) if line.lstrip().startswith("git-worktree-hygiene"))
        assert line.rstrip().endswith("git worktree +1"), line  # (git worktree, already checked out: 33 cells)


@pytest.mark.parametrize(
    ("width", "shown_as"),
    [
        (99, "mock, unittest.mock, mock.patch, assert_called_once"),
        (51, "mock, unittest.mock, mock.patch, assert_called_once"),  # 51 cells: whole
        (50, "mock, unittest.mock, mock.patch +1"),  # 34 cells
        (33, "mock, unittest.mock +2"),
        (21, "mock +3"),
        (7, "mock +3"),
        (6, "mock,…"),  # not even the first beside its +3: cut as before
    ],
)
def test_fitted_keywords_keep_whole_keywords_and_count_the_rest(width: int, shown_as: str) -> None:
    keywords = ("mock", "unittest.mock", "mock.patch", "assert_called_once")
    out = fitted_keywords(keywords, width)
    assert isinstance(out, Text) and out.plain == shown_as and out.cell_len <= width


async def test_what_if_headers_say_what_each_column_is_at_80x24(tmp_path: Path) -> None:
    """The one-word headers below 100 columns ("from", "what-if", "now", "Δ") said nothing to a reader new to
    them; now two lines with the same words as the full headers, every column in view, and the lesson names
    whole where they fit (the demo's longest, resolve-merge-conflicts, was cut to "resolve-…conflicts")."""
    app = demo_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        burst(pilot, "w", "t")  # the what-if screen, then the next strategy, typed before it has loaded
        await settle(pilot)
        top, bottom, first = table_rows(app, "what-if-table", 3)
        assert top.split() == ["rank", "rank", "mean", "mean", "Δ"], top
        assert bottom.split() == ["what-if", "now", "move", "what-if", "now", "mean", "n", "status", "lesson"], bottom
        # the headers stand over their columns: `mean what-if` ends where its numbers end
        assert top.index("mean") + len("mean") == bottom.index("what-if", 10) + len("what-if")
        table = app.screen.query_one("#what-if-table", ThemedTable)
        assert table.max_scroll_x == 0, table.max_scroll_x
        assert any(line.rstrip().endswith(" resolve-merge-conflicts") for line in screen(app)), screen(app)
        assert first.split()[-2:] == ["active", "resolve-merge-conflicts"], first  # evidence ranks it first


async def test_simulation_legend_says_what_harmful_counts_and_help_defines_each_metric(tmp_path: Path) -> None:
    """The legend said "harmful: in the bottom 10%" (of what? a share of what?) and help defined no metric."""
    app = demo_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await run_simulation(pilot)
        legend = " ".join(shown(app, "sim-legend"))
        assert "harmful: share of harmful ones ranked bottom 10%" in legend, legend
        assert len(shown(app, "sim-legend")) == 2, shown(app, "sim-legend")
        burst(pilot, "question_mark")
        await settle(pilot)
        assert isinstance(app.screen, HelpScreen)
        text = help_plain(app)
        assert "Simulation columns" in text and "that the estimate ranks in its bottom 10%" in text
        assert "Agreement columns" in text and "sessions both positive, compared only, reference only" in text


async def test_the_grading_queue_says_what_n_and_o_do_at_80x24(tmp_path: Path) -> None:
    """The summary said "order: oldest (o switches; n follows it)": neither what o switches to nor what n is.
    Now the count, that n (next to grade) follows this order, and o's other order; o typed fast switches it."""
    app = demo_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        burst(pilot, "I")
        await settle(pilot)
        summary = shown(app, "queue-summary")
        # the demo's pending sessions (the Sessions screen's "168 sessions · 15 pending")
        assert summary[0] == "15 sessions · n (next to grade) follows this order · o: informative first", summary
        assert summary[1] == "pending sessions (no source scores them), oldest first", summary
        burst(pilot, "o")
        await settle(pilot)
        summary = shown(app, "queue-summary")
        assert summary[0].endswith(" sessions · n (next to grade) follows this order · o: oldest first"), summary


async def test_sessions_show_the_mean_salience_at_80x24_in_every_sort_order(tmp_path: Path) -> None:
    """The demo's columns were one cell wider than 80 columns with the categories whole: the mean salience was
    past the table's edge. 2026-10-26-167's lessons (its Session detail: mock-boundaries 4/5 keywords hit,
    run-tests-before-claiming 1/4, git-worktree-hygiene 2/4, reading-large-files 2/4) average
    (0.8 + 0.25 + 0.5 + 0.5) / 4 = 0.5125: 0.51."""
    app = demo_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        burst(pilot, "s")
        await settle(pilot)
        for sort in range(4):
            if sort:
                burst(pilot, "o")  # the next column sorts, typed fast
                await settle(pilot)
            header, *rows = table_rows(app, "sessions-table", 19)
            assert header.split()[-1] == "sal", header
            assert sort or " autonomous-run " in " ".join(rows), rows  # the longest category whole
            table = app.screen.query_one("#sessions-table", ThemedTable)
            assert table.max_scroll_x == 0, table.max_scroll_x
        burst(pilot, "slash", *"2026-10-26-167", "enter")
        await settle(pilot)
        _, row = table_rows(app, "sessions-table", 2)
        assert row.split()[0] == "2026-10-26-167" and row.split()[-1] == "0.51", row
