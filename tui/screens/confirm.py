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

from lesson_credit.tui.screens.base import screen_css
from lesson_credit.tui.screens.dialog_toasts import ToastsAsBelow


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
