"""A dialog's toasts where the screen under it shows its own.

Every Textual screen has a rack of its own for the toasts, and a dialog's is at the bottom right.
On a session screen narrower than 100 columns the toasts are at the top right, clear of the grade
bar (tui/screens/session_detail.tcss): a dialog opened there while a toast showed drew it twice,
the second copy over the grade bar's history and note, which stay in sight under the dialog. A dialog
takes `ToastsAsBelow` among its bases: when it comes up (and on a resize) its toasts go where the
screen's own are.
"""

from __future__ import annotations

from typing import Any

from textual.css.query import NoMatches
from textual.screen import Screen
from textual.widget import Widget

RACK = "ToastRack"  # Textual's type name for a screen's toast rack (a type selector: no private import)


def _rack(screen: Screen[Any]) -> Widget | None:
    try:
        return screen.query_children(RACK).first()
    except NoMatches:
        return None


def place_toasts_as_below(dialog: Screen[Any]) -> None:
    """Dock, align and margin of the dialog's toast rack copied from the screen right under it."""
    stack = dialog.app.screen_stack
    if dialog not in stack or stack.index(dialog) == 0:
        return
    below, mine = _rack(stack[stack.index(dialog) - 1]), _rack(dialog)
    if below is None or mine is None:
        return
    mine.styles.dock = below.styles.dock
    mine.styles.align_horizontal = below.styles.align_horizontal
    mine.styles.align_vertical = below.styles.align_vertical
    mine.styles.margin = below.styles.margin


class ToastsAsBelow:
    """For a dialog (a ModalScreen), listed before it among its bases: its toasts where the screen
    under it shows its own, when it comes up and on a resize."""

    def on_screen_resume(self) -> None:
        place_toasts_as_below(self)  # type: ignore[arg-type]

    def on_resize(self) -> None:
        place_toasts_as_below(self)  # type: ignore[arg-type]
