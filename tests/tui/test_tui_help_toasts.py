"""No toast over the help: at 80x24 one (`Draft discarded`, said by the escape typed before `?`) covered the
right end of its title line for up to 4 s. The help holds the toasts as a yes/no question does: those on
show as it opens, with the time each has left, and those raised while it is up are shown once it closes, once
each, in the order raised."""

from __future__ import annotations

from typing import Any

import pytest
from textual.app import App
from textual.notifications import Notification

from lesson_credit.core.workspace import Workspace
from lesson_credit.tui.app import LessonCreditApp
from lesson_credit.tui.screens.confirm import ConfirmScreen
from lesson_credit.tui.screens.help import HelpScreen
from lesson_credit.tui.screens.session_detail import SessionDetailScreen
from tests.support.textual_private import live_notifications, screen_lines
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


class ToastClock:
    """Textual's toasts' clock, moved by the test: a toast's time left counts from when it was first asked (at
    once, when shown), so the time the help or a question stays up is set, not slept."""

    def __init__(self) -> None:
        self.now = 0.0
        self.started: dict[str, float] = {}

    def time_left(self, notification: Notification) -> float:
        start = self.started.setdefault(notification.identity, self.now)
        return start + notification.timeout - self.now


# (the keys that open it, what closes it, what is on top meanwhile)
HOLDERS = {
    "help": (("question_mark",), "escape", HelpScreen),
    "question": (("3", "l"), "escape", ConfirmScreen),  # discard the draft 0.3 and open Lessons? escape: no
}


@pytest.mark.parametrize("holder", list(HOLDERS))
async def test_a_toast_on_show_keeps_its_time_left_while_the_help_or_a_question_is_up(
    workspace: Workspace, monkeypatch: pytest.MonkeyPatch, holder: str
) -> None:
    """A warning of 60 s on show for 20 s when the help (or a yes/no question) opens, which shows no toast over
    it: the old code let its time run behind it, so after a read of 1000 s it was gone when the help closed,
    never read. It is held with the 40 s it had left and shown again, once, with those 40 s."""
    clock = ToastClock()
    monkeypatch.setattr(Notification, "time_left", property(clock.time_left))
    opening, closing, on_top = HOLDERS[holder]
    app = make_app(workspace)
    async with app.run_test(size=(80, 24), notifications=True) as pilot:
        await settle(pilot)
        await open_session(pilot, "s4")
        app.notify("the store is back", severity="warning", timeout=60)
        await wait_until(pilot, lambda: "the store is back" in drawn(app))
        clock.now = 20.0  # on show for 20 s
        burst(pilot, *opening)
        await wait_until(pilot, lambda: isinstance(app.screen, on_top))
        await settle(pilot)
        clock.now = 1020.0  # read for 1000 s
        burst(pilot, closing)
        await wait_until(pilot, lambda: isinstance(app.screen, SessionDetailScreen))
        await settle(pilot)
        await toasts_shown(pilot)  # (those the app holds: none on the old code, its time ran out)
        assert drawn(app).count("the store is back") == 1  # shown again, once
        left = [clock.time_left(n) for n in live_notifications(app) if n.message == "the store is back"]
        assert left == [pytest.approx(40.0)]  # the 60 s less the 20 s it was on show before


async def test_toasts_held_by_the_help_show_before_one_raised_as_it_closes(workspace: Workspace) -> None:
    """A toast raised as the help leaves the stack, before the app has heard that it left (a write's confirmation
    right after the answer to a question), was shown before the older ones the help held: the oldest beyond the
    two shown was then the newest, dropped first. Those held are shown first, in the order raised."""
    app = make_app(workspace)
    async with app.run_test(size=(80, 24), notifications=True) as pilot:
        await settle(pilot)
        await open_session(pilot, "s4")
        burst(pilot, "question_mark")
        await wait_until(pilot, lambda: isinstance(app.screen, HelpScreen))
        await settle(pilot)
        app.notify("raised while the help is up", timeout=60)
        closed = app.pop_screen()  # off the stack at once; the app hears of it later
        app.notify("raised as it closes", timeout=60)
        await closed
        await wait_until(pilot, lambda: len(live_notifications(app)) == 2)
        await toasts_shown(pilot)
        said = [n.message for n in live_notifications(app)]
        assert said == ["raised while the help is up", "raised as it closes"]
