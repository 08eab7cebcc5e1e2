"""A yes/no modal: returns True only when the operator confirms."""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from typing import ClassVar

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Static

from lesson_credit.core.api import HUMAN
from lesson_credit.tui.records_views import SessionOutside
from lesson_credit.tui.screens.base import screen_css
from lesson_credit.tui.screens.dialog_toasts import ToastsAsBelow
from lesson_credit.tui.text import fmt_grade, one_line


class ConfirmScreen(ToastsAsBelow, ModalScreen[bool]):
    DEFAULT_CSS = screen_css("confirm.tcss")
    HELP = "y confirms; escape cancels (the focused button answers enter)."

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("y", "answer(True)", "Yes"),
        Binding("escape", "answer(False)", "No"),
    ]

    def __init__(
        self, question: str, detail: str = "", on_answer: Callable[[bool], Awaitable[None] | None] | None = None
    ) -> None:
        super().__init__()
        self.question = question
        self.detail = detail
        # called (and awaited) in the answering key's action, so what it does comes before the next key's
        self.on_answer = on_answer

    def compose(self) -> ComposeResult:
        with Vertical(id="confirm-dialog"):
            yield Static(Text(self.question, style="bold"), id="confirm-question")
            if self.detail:
                yield Static(Text(self.detail), id="confirm-detail")
            with Horizontal(id="confirm-buttons"):
                yield Button("Yes (y)", variant="warning", id="confirm-yes")
                yield Button("No (esc)", variant="primary", id="confirm-no")

    def on_mount(self) -> None:
        self.query_one("#confirm-no", Button).focus()

    @on(Button.Pressed, "#confirm-yes")
    async def _yes(self) -> None:
        await self.action_answer(True)

    @on(Button.Pressed, "#confirm-no")
    async def _no(self) -> None:
        await self.action_answer(False)

    async def action_answer(self, answer: bool) -> None:
        on_answer, self.on_answer = self.on_answer, None  # once, whatever else is pressed
        self.dismiss(answer)  # off the stack at once; what the answer does happens on the screen below
        if on_answer is not None:
            result = on_answer(answer)
            if inspect.isawaitable(result):
                await result


class ConfirmCommit(ConfirmScreen):
    """Replace a session's grade: c (the commit key again) or y writes it; escape keeps the draft."""

    HELP = "c or y replaces the grade; escape keeps the draft and writes nothing."

    BINDINGS: ClassVar[list[BindingType]] = [Binding("c", "answer(True)", "Replace", show=False)]


def commit_question(
    session_id: str,
    value: float,
    word: str | None,
    in_force: float | None,
    person: float | None,
    outside: SessionOutside | None,
) -> tuple[str, str]:
    """The confirmation before a grade over a score in force: what the grade replaces, and what it will do
    under [rewards] priority (the first source with a score is in force: docs/records.md), not "the latest".

    `person`: the operator's source's score (as queued); `in_force`: the score in force as typed."""
    grade = fmt_grade(value) + (f" ({one_line(word)})" if word else "")
    sid = one_line(session_id)
    forcing = next((s for s in outside.sources if s.in_force), None) if outside is not None else None
    if forcing is None or forcing.source == HUMAN or outside is None:
        was = fmt_grade(person if person is not None else in_force)
        return (
            f"Replace the grade {was} of {sid} with {grade}?",
            "A person's grade is in force; both stay in the log and the latest person's grade counts. u undoes it.",
        )
    order = ", ".join(outside.priority)
    theirs = f"The {forcing.source}'s {fmt_grade(forcing.score)} ({one_line(forcing.grader)}) is in force"
    ranked = list(outside.priority)
    if HUMAN in ranked and forcing.source in ranked and ranked.index(HUMAN) < ranked.index(forcing.source):
        return (
            f"Grade {sid} {grade}, in force over the {forcing.source}'s {fmt_grade(forcing.score)}?",
            f"{theirs}; under [rewards] priority ({order}) a person's grade comes first, so {grade} will count. "
            f"The {forcing.source}'s score stays in the log. u undoes it.",
        )
    return (
        f"Log {grade} for {sid}? The {forcing.source}'s {fmt_grade(forcing.score)} stays in force.",
        f"{theirs}; under [rewards] priority ({order}) it comes before a person's grade, so {grade} is logged "
        "but does not count until the priority changes (w, b). u undoes it.",
    )
