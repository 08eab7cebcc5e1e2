"""Toasts while a yes/no question or the help is up (tui/screens/confirm.py, help.py: they show none over
them): those on show when it comes up and those raised while it is up are held, their time not running, and
shown once the question is answered or the help closed, the first with the time each had left. Shown under
it, a toast ran its time out unseen (a write's failure said while the operator read the question); shown
over the help, it covered the right end of its title at 80x24."""

from __future__ import annotations

from typing import Any

from textual.app import App

from lesson_credit.tui.textual_private import take_toasts


class HeldToasts:
    """The toasts held while a screen that shows none (its class's HOLDS_TOASTS) is on the app's stack."""

    def __init__(self) -> None:
        self._held: list[dict[str, Any]] = []

    def to_show(self, app: App[Any], toast: dict[str, Any]) -> list[dict[str, Any]]:
        """The toasts to show now for a new one (notify's arguments): none while a question or the help is up (it
        is held), else those held first, then it. A toast raised between a question leaving the stack and the
        app hearing so (`changed`) came before the older ones held, and the oldest beyond the two shown was it."""
        if _holder_up(app):
            self._held.append(toast)
            return []
        held, self._held = self._held, []
        return [*held, toast]

    def changed(self, app: App[Any]) -> list[dict[str, Any]]:
        """A question or the help came onto the stack or left it. While one is up, the toasts on show are taken
        off and held, each with the time it has left, before those raised since (they are older); once none is,
        the toasts held, in the order raised, to be shown now."""
        if _holder_up(app):
            shown = [
                {"message": n.message, "title": n.title, "severity": n.severity, "timeout": n.time_left}
                | {"markup": n.markup}
                for n in take_toasts(app)
            ]
            self._held[:0] = shown
            return []
        held, self._held = self._held, []
        return held

    def withdraw(self, said: set[tuple[str, str]]) -> None:
        """The warnings held whose (title, message) is one of `said` are not shown (`withdraw_toasts`)."""
        self._held = [
            toast
            for toast in self._held
            if not (toast["severity"] == "warning" and (toast["title"], toast["message"]) in said)
        ]


def _holder_up(app: App[Any]) -> bool:
    return any(getattr(screen, "HOLDS_TOASTS", False) for screen in app.screen_stack)
