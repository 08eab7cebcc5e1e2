"""A yes/no modal: returns True only when the operator confirms.

It is answered only by keys typed after it appeared (`asked_at`, stamped when it is first drawn): the
keys typed before it wait, named in the dialog, and go on to the screen under it after a yes; a no
drops them, saying which (tui/keys.py).

No toast shows over it (confirm.tcss): it is read whole, at 80x24 too; the toasts on show when it comes
up, with the time each has left, and those raised while it is up are held and shown once it is answered
(HOLDS_TOASTS: tui/held_toasts.py). A key it does not take is refused in the dialog.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from typing import ClassVar

from rich.text import Text
from textual import events, on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Static

from lesson_credit.core.api import HUMAN
from lesson_credit.tui.keys import KeyRouter, Typed, escape_and_key
from lesson_credit.tui.messages import ToastHoldersChanged
from lesson_credit.tui.records_views import SessionOutside
from lesson_credit.tui.screens.base import screen_css
from lesson_credit.tui.screens.dialog_toasts import ToastsAsBelow
from lesson_credit.tui.text import fmt_grade, one_line
from lesson_credit.tui.textual_private import event_clock
from lesson_credit.tui.widgets.key_footer import KeyFooter
from lesson_credit.tui.writes import OPERATOR

SHOWN_KEYS = 24  # the keys typed ahead a dialog names; more are counted
BUTTON_KEYS = frozenset({"enter", "space", "tab", "shift+tab"})  # press the focused button, move the focus


class ConfirmScreen(ToastsAsBelow, ModalScreen[bool]):
    DEFAULT_CSS = screen_css("confirm.tcss")
    HELP = (
        "y confirms; escape cancels (the focused button answers enter). Only keys typed once it shows answer it: "
        "those typed before wait, named in it, and go on after a yes (a no drops them)."
    )

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("y", "answer(True)", "Yes"),
        Binding("escape", "answer(False)", "No"),
    ]
    ANSWERS = "y answers yes, escape no"  # what a key the question does not take is told
    HOLDS_TOASTS = True  # the app holds the toasts raised while it is up (tui/held_toasts.py)

    def __init__(
        self, question: str, detail: str = "", on_answer: Callable[[bool], Awaitable[None] | None] | None = None
    ) -> None:
        super().__init__()
        self.question = question
        self.detail = detail
        # called (and awaited) in the answering key's action, so what it does comes before the next key's
        self.on_answer = on_answer
        self.asked_at: float | None = None  # when it was first drawn: only keys typed after it answer it
        self._typed_ahead: tuple[str, ...] = ()

    def compose(self) -> ComposeResult:
        with Vertical(id="confirm-dialog"):
            yield Static(Text(self.question, style="bold"), id="confirm-question")
            if self.detail:
                yield Static(Text(self.detail), id="confirm-detail")
            yield Static(id="confirm-typed-ahead")
            yield Static(id="confirm-refused")
            with Horizontal(id="confirm-buttons"):
                yield Button("Yes (y)", variant="warning", id="confirm-yes")
                yield Button("No (esc)", variant="primary", id="confirm-no")
        yield KeyFooter()  # over the screen's below: its keys do nothing here

    def on_mount(self) -> None:
        self.app.post_message(ToastHoldersChanged())  # (on the stack: the toasts on show are held, their time kept)
        self.query_one("#confirm-no", Button).focus()
        self.query_one("#confirm-typed-ahead", Static).display = False
        self.query_one("#confirm-refused", Static).display = False
        self.call_after_refresh(self._asked)

    def _asked(self) -> None:
        """Drawn: the keys typed from now on may answer it (the router is woken for them)."""
        self.asked_at = event_clock()
        router = _router(self)
        if router is not None:
            router.wake()

    def show_typed_ahead(self, typed: list[Typed]) -> None:
        """The keys typed before the question, waiting for its answer (the key router says which)."""
        names = tuple(key_name(event) for event in typed)
        if names == self._typed_ahead:
            return
        self._typed_ahead = names
        line = self.query_one("#confirm-typed-ahead", Static)
        line.display = bool(names)
        shown = " ".join(names[:SHOWN_KEYS]) + (f" … ({len(names)} keys)" if len(names) > SHOWN_KEYS else "")
        line.update(Text(f"Typed before this question, waiting for your answer: {shown}", style="italic"))

    @on(Button.Pressed, "#confirm-yes")
    async def _yes(self) -> None:
        await self.action_answer(True)

    @on(Button.Pressed, "#confirm-no")
    async def _no(self) -> None:
        await self.action_answer(False)

    def on_key(self, event: events.Key) -> None:
        """A key the question does not take (typed once it showed: the ones before wait) is refused aloud, in
        the dialog (no toast shows over a question): `7 c 6 c` typed as the question came up lost the 6 without
        a word, and the c wrote the 0.7."""
        if event.key in BUTTON_KEYS or any(key in self.active_bindings for key in event.aliases):
            return
        line = self.query_one("#confirm-refused", Static)
        line.update(Text(f"{key_name(event)} means nothing in this question: {self.ANSWERS}."))
        line.display = True

    def on_unmount(self) -> None:
        self.app.post_message(ToastHoldersChanged())  # (off the stack: the toasts held meanwhile show)

    async def action_answer(self, answer: bool) -> None:
        on_answer, self.on_answer = self.on_answer, None  # once, whatever else is pressed
        router = _router(self)
        if not answer and router is not None and self.is_current:
            dropped = [key_name(event) for event in router.drop_typed_before(self.asked_at)]
            if dropped:
                self.notify(
                    f"Not applied, typed before the question you answered no: {' '.join(dropped[:SHOWN_KEYS])}"
                    + (f" … ({len(dropped)} keys)" if len(dropped) > SHOWN_KEYS else ""),
                    severity="warning",
                    markup=False,
                )
        self.dismiss(answer)  # off the stack at once; what the answer does happens on the screen below
        if on_answer is not None:
            result = on_answer(answer)
            if inspect.isawaitable(result):
                await result


def _router(screen: ConfirmScreen) -> KeyRouter | None:
    router = getattr(screen.app, "keys", None)
    return router if isinstance(router, KeyRouter) else None


def key_name(event: Typed) -> str:
    """A key as the operator typed it: its character, else its name (`enter`, `escape`); a paste says so. Escape
    and the key typed with it, read as one key by the terminal's parser (alt+n), are both named: `escape n`."""
    if not isinstance(event, events.Key):
        return "(paste)"
    split = escape_and_key(event)
    if split is not None:
        return f"escape {key_name(split[1])}"
    character = event.character
    return (
        character if character and len(character) == 1 and character.isprintable() and character != " " else event.key
    )


class LeaveQuestion(ConfirmScreen):
    """Discard a session's draft grade and leave it (quit, another screen): y discards, escape keeps the draft."""


class ConfirmCommit(ConfirmScreen):
    """Replace a session's grade: c (the commit key again) or y writes it; escape keeps the draft."""

    HELP = (
        "c or y, typed once it shows, replaces the grade; escape keeps the draft and writes nothing. "
        "Keys typed before it wait for the answer."
    )

    BINDINGS: ClassVar[list[BindingType]] = [Binding("c", "answer(True)", "Replace", show=False)]
    ANSWERS = "c or y replaces the grade, escape keeps the draft"


def commit_question(
    session_id: str,
    value: float,
    word: str | None,
    in_force: float | None,
    person: float | None,
    outside: SessionOutside | None,
    unsure: bool = False,
    operator: str = OPERATOR,
) -> tuple[str, str] | None:
    """The confirmation before a grade over a score in force: what the grade replaces, and what it will do
    under [rewards] priority (the first source with a score is in force: docs/records.md), not "the latest".
    None when there is nothing to confirm: the grade is the person's in force already, or no person's grade
    is replaced and the source in force ranks below a person's (the judge's, the heuristic's), so the grade
    goes into force and that score stays in the log, as it would on a pending session.

    `person`: the operator's source's score (as queued); `in_force`: the score in force as typed; `unsure`: an
    undo of the log's is not saved yet (`WriteQueue.log_undo_queued`), so neither may be what it leaves;
    `operator`: the grader name of the operator's grades (an undo withdraws those only)."""
    grade = fmt_grade(value) + (f" ({one_line(word)})" if word else "")
    sid = one_line(session_id)
    if unsure:
        return (
            f"Log {grade} for {sid}? Its grade in force is not known yet.",
            f"Your undo there is not saved yet (ctrl+d discards it): what it leaves is the log's to say. {grade} is "
            f"logged after it. u undoes the {fmt_grade(value)}.",
        )
    if person is not None and person == value:  # the person's grade again: nothing is replaced
        return None
    forcing = next((s for s in outside.sources if s.in_force), None) if outside is not None else None
    if forcing is not None and forcing.source == HUMAN and person is None and forcing.grader != operator:
        person = forcing.score  # another person's grade the view shows: no undo of the operator's withdraws it
    elif forcing is not None and forcing.source == HUMAN and person is None and outside is not None:
        # a view read before an undo typed since: the operator's score it shows in force is withdrawn, so the
        # first other source of the priority with a score is (none: nothing is replaced)
        scored = {s.source: s for s in outside.sources if s.source != HUMAN and s.score is not None}
        forcing = next((scored[name] for name in outside.priority if name in scored), None)
        if forcing is None:
            return None
    if forcing is not None and forcing.source != HUMAN and outside is not None:
        order = ", ".join(outside.priority)
        ranked = list(outside.priority)
        if HUMAN in ranked and forcing.source in ranked and ranked.index(HUMAN) < ranked.index(forcing.source):
            if person is None:
                return None  # nothing replaced: the other score stays in the log, below the grade
        else:
            theirs = f"The {forcing.source}'s {fmt_grade(forcing.score)} ({one_line(forcing.grader)}) is in force"
            return (
                f"Log {grade} for {sid}? The {forcing.source}'s {fmt_grade(forcing.score)} stays in force.",
                f"{theirs}; under [rewards] priority ({order}) it comes before a person's grade, so {grade} is "
                "logged but does not count until the priority changes (w, b). u undoes it.",
            )
    was = fmt_grade(person if person is not None else in_force)
    return (
        f"Replace the grade {was} of {sid} with {grade}?",
        "A person's grade is in force; both stay in the log and the latest person's grade counts. u undoes it.",
    )
