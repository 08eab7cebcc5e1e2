"""A modal to type an exact grade, or one of gptme's grading words (docs/trust.md), as `grade S WORD`
takes them: returns the value and the word, or None when cancelled."""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Label, Static

from lesson_credit.core.api import decimal
from lesson_credit.tui.screens.base import screen_css
from lesson_credit.tui.screens.dialog_toasts import ToastsAsBelow
from lesson_credit.tui.text import one_line
from lesson_credit.tui.widgets.filter_box import TextBox
from lesson_credit.tui.widgets.key_footer import KeyFooter

TypedGrade = tuple[float, str | None]  # the grade, and the grading word it was typed as (None: a number)


def parse_grade(value: str) -> tuple[float | None, str | None]:
    """(grade, None) for a number in [0, 1], else (None, the reason). A decimal comma is accepted."""
    text = value.strip().replace(",", ".")
    if not text:
        return None, "Type a grade between 0 and 1."
    number = decimal(text)
    if number is None:
        return None, f"Not a number: {text!r}. Type a grade between 0 and 1."
    if not 0.0 <= number <= 1.0:  # (1e999 is inf)
        return None, f"{number:g} is outside [0, 1]."
    return number, None


def parse_grade_or_word(value: str, words: Mapping[str, float]) -> tuple[TypedGrade | None, str | None]:
    """((grade, word), None) for a number in [0, 1] (word None) or one of `words` (gptme's grading words:
    the reward the workspace's [outcomes] gives it), else (None, the reason, naming the words)."""
    word = value.strip()
    if word in words:
        return (words[word], word), None
    grade, problem = parse_grade(value)
    if grade is not None:
        return (grade, None), None
    if words and problem is not None and problem.startswith("Not a number"):
        problem = f"Not a grade: {one_line(word)!r}. Type 0 to 1, or one of {', '.join(sorted(words))}."
    return None, problem


class GradeValueScreen(ToastsAsBelow, ModalScreen[TypedGrade | None]):
    """Enter submits a valid grade or word; escape cancels."""

    DEFAULT_CSS = screen_css("grade_value.tcss")
    HELP = (
        "Type an exact grade between 0 and 1, or one of gptme's grading words (productive, noop, ...: "
        "[outcomes] gives their rewards); enter previews it as the draft, escape cancels."
    )

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "cancel", "Cancel")]

    def __init__(self, session_id: str, current: float | None, words: Mapping[str, float] | None = None) -> None:
        super().__init__()
        self.session_id = session_id
        self.current = current
        self.words = dict(words or {})

    def compose(self) -> ComposeResult:
        with Vertical(id="grade-dialog"):
            words = " or a grading word" if self.words else ""
            yield Label(f"Exact grade for this session (0 to 1){words}", id="grade-prompt")
            yield TextBox(  # (escape cancels: the dialog's key, in its footer)
                value="" if self.current is None else f"{self.current:g}",
                footer_keys=(("enter", "Preview"),),
                placeholder="e.g. 0.73" + (" or productive" if self.words else ""),
                id="grade-value",
            )
            yield Static("enter previews it as the draft · escape cancels", id="grade-error")
        yield KeyFooter()  # over the screen's below: its keys do nothing here

    def on_mount(self) -> None:
        self.query_one("#grade-dialog").border_title = "grade"
        self.query_one("#grade-value", Input).focus()

    @on(Input.Submitted, "#grade-value")
    def _submitted(self, event: Input.Submitted) -> None:
        value, problem = parse_grade_or_word(event.value, self.words)
        if value is None:
            error = self.query_one("#grade-error", Static)
            error.update(Text(problem or ""))  # it quotes what was typed: never markup
            error.add_class("-invalid")
            return
        self.dismiss(value)

    def action_cancel(self) -> None:
        self.dismiss(None)
