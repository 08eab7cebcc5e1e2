"""The Sessions screen's reward plot: its legend is its title, each series named after its mark. plotext drew its
legend in the plot's top left corner, over the points there: at 80x24 (`x` shows the plot) two of its five rows
began `•• reward` and `⢕⢕ rolling mean`, hiding the first sessions' rewards."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.tui.test_tui_whole_headers import demo_app, row_text
from tests.tui.tui_fixture import open_sessions, settle


@pytest.mark.parametrize("size", [(80, 24), (200, 50)])
async def test_the_legend_is_the_title_not_over_the_points(tmp_path: Path, size: tuple[int, int]) -> None:
    app = demo_app(tmp_path)
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        sessions = await open_sessions(pilot)
        if size[1] == 24:
            await pilot.press("x")  # folded away at 24 rows
            await settle(pilot)
        plot = sessions.query_one("#reward-plot")
        rows = [row_text(app, y)[plot.region.x : plot.region.right] for y in range(plot.region.y, plot.region.bottom)]
        inside = [row for row in rows[1:] if "┤" in row or "│" in row]  # the plot's rows, between its frames
        assert len(inside) >= 5, rows
        assert not any("reward" in row or "mean" in row for row in inside), inside
        assert rows[0].strip() == "• reward per graded session (log order) · ⠒⠒ rolling mean of 10", rows
