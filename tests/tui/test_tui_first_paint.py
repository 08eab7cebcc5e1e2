"""The first paint: rows first (no scipy import on the way), the 95% intervals filled in right after.

`lesson_credit.core.model.beta.loaded` is made to say False, as in a fresh dashboard process: the first Lessons view
then comes without intervals and the screen adds them. The intervals are checked against
scipy.stats' Beta quantiles (a second way to compute them than lesson_credit.core.model.beta's betaincinv).
"""

from __future__ import annotations

import math

import pytest
from scipy import stats
from textual.coordinate import Coordinate
from textual.widgets import DataTable

from lesson_credit.core.model import beta as beta_mod
from lesson_credit.core.workspace import Workspace
from lesson_credit.tui.app import LessonCreditApp
from lesson_credit.tui.screens.lessons import LessonsScreen
from lesson_credit.tui.source import WorkspaceSource
from lesson_credit.tui.source_views import LessonsView
from tests.tui.tui_fixture import settle

SIZE = (160, 45)


def expected_interval(alpha: float, beta: float) -> str:
    low, high = stats.beta.ppf([0.025, 0.975], alpha, beta)
    return f"{low:.2f}–{high:.2f}"


async def test_the_first_rows_come_before_the_intervals_and_the_intervals_follow(
    workspace: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(beta_mod, "loaded", lambda: False)
    first: list[LessonsView] = []
    real = WorkspaceSource.lessons_view

    def recording(self: WorkspaceSource) -> LessonsView:
        view = real(self)
        first.append(view)
        return view

    monkeypatch.setattr(WorkspaceSource, "lessons_view", recording)
    app = LessonCreditApp(workspace, seed=0, poll_seconds=0)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, LessonsScreen) and screen.view is not None
        assert len(first) == 1 and first[0].intervals_missing  # what the first paint had
        assert all(math.isnan(row.ci_low) for row in first[0].rows)
        view = screen.view
        assert not view.intervals_missing
        assert [r.path for r in view.rows] == [r.path for r in first[0].rows]  # same rows, same order
        table = screen.query_one("#lessons-table", DataTable)
        column = [str(key.value) for key in table.columns].index("interval")
        for index in range(table.row_count):
            path = str(table.coordinate_to_cell_key(Coordinate(index, 0)).row_key.value)
            row = view.row(path)
            assert row is not None
            cell = str(table.get_cell_at(Coordinate(index, column))).strip()
            assert cell == expected_interval(row.alpha, row.beta), path
            # the column was widened for the filled cells: none cut to the width of "…"
            assert table.columns[table.coordinate_to_cell_key(Coordinate(index, column)).column_key].get_render_width(
                table
            ) >= len(cell)


def test_with_intervals_matches_scipy_stats(workspace: Workspace, monkeypatch: pytest.MonkeyPatch) -> None:
    source = WorkspaceSource(workspace)
    monkeypatch.setattr(beta_mod, "loaded", lambda: False)
    bare = source.lessons_view()
    assert bare.intervals_missing
    filled = source.with_intervals(bare)
    assert not filled.intervals_missing
    for row in filled.rows:
        low, high = stats.beta.ppf([0.025, 0.975], row.alpha, row.beta)
        assert row.ci_low == pytest.approx(low, abs=1e-10) and row.ci_high == pytest.approx(high, abs=1e-10)
    assert {r.path for r in filled.table.rows} <= {r.path for r in filled.rows}
    assert source.with_intervals(filled) is filled  # nothing to fill
