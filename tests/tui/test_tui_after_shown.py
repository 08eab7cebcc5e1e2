"""`after_shown` (tui/textual_private.py) runs its callback after the next refresh the screen can show; a node
taken off its screen before that refresh has nothing to show: its callback is dropped. Screens run these
callbacks (Textual keeps them per screen), so a widget removed in between still had its callback called,
which then met a DOM without it (the side pane's fit raised NoScreen and ended the dashboard)."""

from __future__ import annotations

from textual.app import App, ComposeResult
from textual.screen import Screen
from textual.widgets import Static

from lesson_credit.tui.textual_private import after_shown


class Two(App[None]):
    def compose(self) -> ComposeResult:
        yield Static("kept", id="kept")
        yield Static("gone", id="gone")


async def test_a_callback_of_a_node_removed_before_the_refresh_is_dropped() -> None:
    called: list[str] = []
    app = Two()
    async with app.run_test(size=(40, 10)) as pilot:
        await pilot.pause()
        kept, gone = app.query_one("#kept"), app.query_one("#gone")
        after_shown(kept, lambda: called.append("kept"))
        after_shown(gone, lambda: called.append("gone"))
        await gone.remove()
        for _ in range(5):  # a few refreshes: the callbacks run at the first
            kept.refresh()
            await pilot.pause()
    assert called == ["kept"]


class Detail(Screen[None]):
    def compose(self) -> ComposeResult:
        yield Static("journal", id="journal")


async def test_a_callback_of_a_screen_being_removed_is_dropped() -> None:
    """A screen popped while its after-refresh callback waited: Textual runs the screen's callbacks while it
    closes, part by part (it is still attached), so a callback that read its widgets met one already gone (the
    session screen's `_show_info` raised NoMatches for `#journal` and ended the dashboard, under load). It is
    dropped like a removed node's."""
    called: list[str] = []
    app = Two()
    async with app.run_test(size=(40, 10)) as pilot:
        await pilot.pause()
        screen = Detail()
        await app.push_screen(screen)
        await pilot.pause()
        after_shown(screen, lambda: called.append("detail"))
        popped = app.pop_screen()  # (Textual removes it: marks it and its widgets at once, then closes it)
        screen.refresh()
        await popped
        after_shown(app.query_one("#kept"), lambda: called.append("kept"))  # (the app goes on)
        for _ in range(5):
            app.query_one("#kept").refresh()
            await pilot.pause()
    assert called == ["kept"]
