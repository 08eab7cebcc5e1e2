"""Escape named on the session screen's footer, escape out of the Simulation's seeds box, and the What-if floor
box's error read at 80x24: the session screen never named escape; in the seeds box escape did nothing while no run
was going (only tab left it); and the floor's error beside the boxes had 4 cells at 80 columns ("the" / "flo")."""

from __future__ import annotations

from textual.widgets import Input

from lesson_credit.core.workspace import Workspace
from lesson_credit.tui.app import LessonCreditApp
from lesson_credit.tui.widgets.themed_table import ThemedTable
from tests.tui.test_tui_detail_sizes import screen_text
from tests.tui.tui_fixture import burst, settle


async def test_escape_leaves_the_seeds_box_when_no_run_is_going(workspace: Workspace) -> None:
    app = LessonCreditApp(workspace, seed=0, poll_seconds=0)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        burst(pilot, "m", "tab", "tab")  # (as the box footer test reaches it)
        await settle(pilot)
        assert isinstance(app.focused, Input) and app.focused.id == "seeds"
        burst(pilot, "escape")
        await settle(pilot)
        assert isinstance(app.focused, ThemedTable) and app.focused.id == "sim-table"
        assert app.screen.running is None  # nothing was run


async def test_the_floor_boxs_error_reads_whole_at_80x24(workspace: Workspace) -> None:
    app = LessonCreditApp(workspace, seed=0, poll_seconds=0)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        burst(pilot, "w", "tab", "tab")
        await settle(pilot)
        assert isinstance(app.focused, Input) and app.focused.id == "floor"
        burst(pilot, "x")
        await settle(pilot)
        assert any("the floor is a number from 0 to 1" in line for line in screen_text(app))
        burst(pilot, "backspace", "0", ".", "5")  # a floor again: the line goes
        await settle(pilot)
        assert not any("the floor is a number" in line for line in screen_text(app))


async def test_the_session_screens_footer_names_escape_at_80_columns(app: LessonCreditApp) -> None:
    """Every other pushed screen's footer said `esc Back`; the session screen's never did. At 80 columns the line
    fits by saying `n Next` (help keeps "Next to grade" and "Back / discard draft"), and `x Plot` where the credit plot
    is below "why this credit" (the screens' keys then left to help)."""
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        burst(pilot, "s", "enter")
        await settle(pilot)
        footer = screen_text(app)[-1].rstrip()
        assert footer == "0-9 Draft c Commit u Undo n Next esc Back x Plot ? Help q Quit"
        burst(pilot, "escape")  # what it says: back to the list
        await settle(pilot)
        assert type(app.screen).__name__ == "SessionsScreen"
