"""No toast over the help: at 80x24 one (`Draft discarded`, said by the escape typed before `?`) covered the
right end of its title line for up to 4 s. The help holds the toasts as a yes/no question does: those on
show come back on the screen under it once it closes, those raised while it is up are shown then, once."""

from __future__ import annotations

from typing import Any

import pytest
from textual.app import App

from lesson_credit.core.workspace import Workspace
from lesson_credit.tui.app import LessonCreditApp
from lesson_credit.tui.screens.help import HelpScreen
from lesson_credit.tui.screens.session_detail import SessionDetailScreen
from tests.support.textual_private import screen_lines
from tests.tui.tui_fixture import burst, open_session, settle, toasts_shown, wait_until

DISCARDED = "Draft discarded; nothing was written."


def make_app(workspace: Workspace) -> LessonCreditApp:
    app = LessonCreditApp(workspace, seed=0, poll_seconds=0)
    setattr(app, "NOTIFICATION_TIMEOUT", 3600)  # noqa: B010 (a class variable, set for this app only): toasts outlive a loaded machine
    return app


def drawn(app: LessonCreditApp) -> str:
    return "\n".join(line.text for line in screen_lines(app))


def help_drawn(app: LessonCreditApp) -> str:
    """The help's box as drawn (at 160 columns the screen under it shows beside it, its own toasts too)."""
    box = app.screen.query_one("#help-body").region
    lines = screen_lines(app)[box.y : box.bottom]
    return "\n".join(line.crop(box.x, box.right).text for line in lines)


@pytest.mark.parametrize("size", [(80, 24), (160, 50)], ids=["80x24", "160x50"])
async def test_a_toast_on_show_is_not_drawn_over_the_help(workspace: Workspace, size: tuple[int, int]) -> None:
    app = make_app(workspace)
    async with app.run_test(size=size, notifications=True) as pilot:
        await settle(pilot)
        await open_session(pilot, "s4")  # (pending: a draft to discard)
        burst(pilot, "3", "escape", "question_mark")
        await settle(pilot)
        assert isinstance(app.screen, HelpScreen)
        await pilot.pause()  # (the help's frame drawn: on the old code with the toast in it)
        assert "Draft discarded" not in help_drawn(app)
        assert "keys  (escape closes · ctrl+p lists every action)" in help_drawn(app)  # the title, whole
        burst(pilot, "escape")
        await wait_until(pilot, lambda: isinstance(app.screen, SessionDetailScreen))
        await toasts_shown(pilot)
        assert drawn(app).count("Draft discarded") == 1  # back on the screen under it, once


async def test_a_toast_raised_while_the_help_is_up_shows_once_it_closes(
    workspace: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    shown: list[str] = []
    real = App.notify

    def textual_notify(self: App[Any], message: str, **kwargs: Any) -> None:
        shown.append(message)
        real(self, message, **kwargs)

    monkeypatch.setattr(App, "notify", textual_notify)
    app = make_app(workspace)
    async with app.run_test(size=(80, 24), notifications=True) as pilot:
        await settle(pilot)
        await open_session(pilot, "s4")
        burst(pilot, "question_mark")
        await settle(pilot)
        assert isinstance(app.screen, HelpScreen)
        app.notify("the store is back", severity="warning", timeout=60)
        app.notify("a second one", timeout=60)
        await settle(pilot)
        assert shown == []  # held while the help is up, their time not running
        burst(pilot, "escape")
        await wait_until(pilot, lambda: len(shown) == 2)
        await toasts_shown(pilot)
        assert shown == ["the store is back", "a second one"]  # in the order raised, none lost, none doubled
        assert drawn(app).count("the store is back") == 1
