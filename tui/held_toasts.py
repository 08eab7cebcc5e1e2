"""Toasts raised while a yes/no question or the help is up (tui/screens/confirm.py, help.py: they show none
over them): held, their time not running, and shown once the question is answered or the help closed. Shown
under it, a toast ran its time out unseen (a write's failure said while the operator read the question); shown
over the help, it covered the right end of its title at 80x24."""

from __future__ import annotations

from typing import Any

from textual.app import App


class HeldToasts:
    """The toasts held while a screen that shows none (its class's HOLDS_TOASTS) is on the app's stack."""

    def __init__(self) -> None:
        self._held: list[dict[str, Any]] = []

    def hold(self, app: App[Any], **toast: Any) -> bool:
        """Keep `toast` (notify's arguments) while a question or the help is up: True when held."""
        if not any(getattr(screen, "HOLDS_TOASTS", False) for screen in app.screen_stack):
            return False
        self._held.append(toast)
        return True

    def release(self) -> list[dict[str, Any]]:
        """The toasts held, in the order raised, to be shown now (held again if another holder is still up)."""
        held, self._held = self._held, []
        return held
