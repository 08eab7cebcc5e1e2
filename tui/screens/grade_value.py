"""A modal to type an exact grade: returns the value, or None when cancelled."""

from __future__ import annotations

import math
from typing import ClassVar

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Label, Static

from lesson_credit.tui.screens.base import screen_css


def parse_grade(value: str) -> tuple[float | None, str | None]:
    """(grade, None) for a number in [0, 1], else (None, the reason). A decimal comma is accepted."""
    text = value.strip().replace(",", ".")
    if not text:
        return None, "Type a grade between 0 and 1."
    try:
        number = float(text)
    except ValueError:
        return None, f"Not a number: {text!r}. Type a grade between 0 and 1."
    if math.isnan(number) or math.isinf(number):
        return None, "A grade must be a finite number between 0 and 1."
    if not 0.0 <= number <= 1.0:
        return None, f"{number:g} is outside [0, 1]."
    return number, None


class GradeValueScreen(ModalScreen[float | None]):
    """Enter submits a valid grade; escape cancels."""

    DEFAULT_CSS = screen_css("grade_value.tcss")
    HELP = "Type an exact grade between 0 and 1; enter previews it as the draft, escape cancels."

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "cancel", "Cancel")]

    def __init__(self, session_id: str, current: float | None) -> None:
        super().__init__()
        self.session_id = session_id
        self.current = current

    def compose(self) -> ComposeResult:
        with Vertical(id="grade-dialog"):
            yield Label("Exact grade for this session (0 to 1)", id="grade-prompt")
            yield Input(
                value="" if self.current is None else f"{self.current:g}",
                placeholder="e.g. 0.73",
                id="grade-value",
            )
            yield Static("enter previews it as the draft · escape cancels", id="grade-error")

    def on_mount(self) -> None:
        self.query_one("#grade-dialog").border_title = "grade"
        self.query_one("#grade-value", Input).focus()

    @on(Input.Submitted, "#grade-value")
    def _submitted(self, event: Input.Submitted) -> None:
        value, problem = parse_grade(event.value)
        if problem is not None:
            error = self.query_one("#grade-error", Static)
            error.update(Text(problem))  # it quotes what was typed: never markup
            error.add_class("-invalid")
            return
        self.dismiss(value)

    def action_cancel(self) -> None:
        self.dismiss(None)
