"""The command palette (ctrl+p) has a footer of its own: the bottom line under it showed the keys of the screen
under it (`⏎ Open / Filter o Sort ...` on Lessons, and `^p palette` on the right from 100 columns), none of
which does what it says while the palette is open: a letter goes into its search box, ctrl+p opens nothing."""

from __future__ import annotations

import pytest
from textual.command import CommandList, CommandPalette
from textual.widgets import Input

from lesson_credit.core.workspace import Workspace
from lesson_credit.tui.app import LessonCreditApp
from lesson_credit.tui.screens.agreement import AgreementScreen
from lesson_credit.tui.screens.analysis import AnalysisScreen
from tests.support.textual_private import screen_lines
from tests.tui.tui_fixture import burst, failing_grades, open_session, open_sessions, settle, wait_until

# the palette's own keys, read in Textual's CommandPalette and tried: enter runs the highlighted command (with
# none highlighted yet it highlights the first), down / up move through the list, escape closes it
PALETTE_FOOTER = "⏎ Run ↓ Next ↑ Previous esc Close"


@pytest.mark.parametrize("size", [(80, 24), (200, 50)], ids=["80x24", "200x50"])
@pytest.mark.parametrize("where", ["lessons", "session"])
async def test_the_palette_footer_names_its_keys(workspace: Workspace, size: tuple[int, int], where: str) -> None:
    app = LessonCreditApp(workspace, seed=0, poll_seconds=0)
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        if where == "session":
            await open_session(pilot, "s1")
        burst(pilot, "ctrl+p")
        await settle(pilot)
        assert isinstance(app.screen, CommandPalette)
        await pilot.pause()
        # compact below 100 columns (no padding around a key), padded above it
        padded = " ⏎ Run  ↓ Next  ↑ Previous  esc Close"
        assert screen_lines(app)[-1].text.rstrip() == (PALETTE_FOOTER if size[0] < 100 else padded)


async def test_the_keys_the_palette_footer_names_do_what_it_says(app: LessonCreditApp) -> None:
    """Once the palette has listed its commands (the first highlighted), `↓ ↓ ↑` end on the second, `Analysis`
    (key a; the list is in the commands' order, `Agreement` first on Lessons) and `⏎` runs it; `esc` closes it."""
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        burst(pilot, "ctrl+p")
        await wait_until(pilot, lambda: isinstance(app.screen, CommandPalette))
        commands = app.screen.query_one(CommandList)
        await wait_until(pilot, lambda: commands.option_count > 0 and commands.highlighted == 0)
        burst(pilot, "down", "down", "up")
        await settle(pilot)
        assert commands.highlighted == 1
        assert "Analysis" in str(commands.get_option_at_index(1).prompt)
        burst(pilot, "enter")
        await wait_until(pilot, lambda: isinstance(app.screen, AnalysisScreen))
        burst(pilot, "ctrl+p")
        await wait_until(pilot, lambda: isinstance(app.screen, CommandPalette))
        burst(pilot, "escape")
        await wait_until(pilot, lambda: isinstance(app.screen, AnalysisScreen))


async def test_the_palette_names_the_draft_its_zero_key_sets(app: LessonCreditApp) -> None:
    """On a session the palette listed `Draft`, `key: 0-9` (the footer's entry for the ten digit keys), and
    choosing it drafted 0.0: a grade the operator never named. It is listed as what it does, `Draft 0.0`, `key: 0`,
    beside `Draft 0.1` (key 1) to `Draft 0.9`; the footer and help keep `0-9 Draft`."""
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        detail = await open_session(pilot, "s1")
        commands = {command.title: command for command in app.get_system_commands(detail)}
        assert "Draft" not in commands
        assert commands["Draft 0.0"].help == "key: 0" and commands["Draft 0.3"].help == "key: 3"
        await commands["Draft 0.0"].callback()
        await settle(pilot)
        assert detail.draft == 0.0
        assert "0-9 Draft" in screen_lines(app)[-1].text


async def test_the_palette_lists_discarding_writes_only_while_one_waits(app: LessonCreditApp) -> None:
    """`Discard unsaved writes…` was listed with nothing waiting (chosen, it only said there was nothing to discard)."""
    app.retry_seconds = 0.01
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        detail = await open_session(pilot, "s1")
        assert "Discard unsaved writes…" not in {command.title for command in app.get_system_commands(detail)}
        down = failing_grades(app)
        try:
            burst(pilot, "7", "c")
            await wait_until(pilot, lambda: app.saving.startswith("waiting to save"))
            listed = {command.title: command for command in app.get_system_commands(detail)}
            assert listed["Discard unsaved writes…"].help == "key: ^d"
        finally:
            down.clear()
        await wait_until(pilot, lambda: not app.saving)
        assert "Discard unsaved writes…" not in {command.title for command in app.get_system_commands(detail)}


async def test_the_palette_ranks_discarding_the_writes_first_for_disc_while_one_waits(app: LessonCreditApp) -> None:
    """With a write waiting on a session, "disc" matched `Back / discard draft` and `Discard unsaved writes…` with the
    same score (Textual's: 4 letters in a row, 1 at a word's start: (4 + 1) × 2 × 1.5 = 15 each), and the screen's
    command, listed first, came first. A title that starts with what was typed now comes first; both stay listed."""
    app.retry_seconds = 0.01
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await open_session(pilot, "s1")
        down = failing_grades(app)
        try:
            burst(pilot, "7", "c")
            await wait_until(pilot, lambda: app.saving.startswith("waiting to save"))
            burst(pilot, "ctrl+p", "d", "i", "s", "c")
            await wait_until(pilot, lambda: isinstance(app.screen, CommandPalette))
            commands = app.screen.query_one(CommandList)

            def titles() -> list[str]:
                return [
                    str(commands.get_option_at_index(i).prompt).split("\n")[0] for i in range(commands.option_count)
                ]

            await wait_until(pilot, lambda: len(titles()) == 2)
            assert titles() == ["Discard unsaved writes…", "Back / discard draft"], titles()
            burst(pilot, "escape")
            await wait_until(pilot, lambda: not isinstance(app.screen, CommandPalette))
        finally:
            down.clear()
        await wait_until(pilot, lambda: not app.saving)


async def test_the_palette_lists_back_only_over_a_screen_it_would_close(app: LessonCreditApp) -> None:
    """On Sessions (a screen the `s` key shows, nothing under it) the palette listed `Back`, `key: esc`, beside
    the screen's own `Clear filter` (esc): chosen, it did nothing. Over Agreement (opened over Sessions) it is
    listed, and `ctrl+p b a c k enter` typed at once goes back to Sessions."""
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        sessions = await open_sessions(pilot)
        burst(pilot, "ctrl+p", "b", "a", "c", "k")
        await wait_until(pilot, lambda: isinstance(app.screen, CommandPalette))
        commands = app.screen.query_one(CommandList)
        await wait_until(pilot, lambda: app.screen.query_one(Input).value == "back")
        await settle(pilot)
        titles = [str(commands.get_option_at_index(i).prompt) for i in range(commands.option_count)]
        assert not any(title.startswith("Back") for title in titles), titles
        assert "Back" not in [command.title for command in app.get_system_commands(sessions)]
        burst(pilot, "escape", "A")
        await wait_until(pilot, lambda: isinstance(app.screen, AgreementScreen))
        assert "Back" in [command.title for command in app.get_system_commands(app.screen)]
        burst(pilot, "ctrl+p", "b", "a", "c", "k", "enter")
        await wait_until(pilot, lambda: app.screen is sessions)
        await settle(pilot)
        assert app.screen is sessions
