"""`:` from any screen: type a session id (or the start of one) and enter opens that session.

An exact id wins; otherwise the typed text must start exactly one id. When it starts several,
the dialog lists them and stays open for more of the id; nothing is opened on a guess.
"""

from __future__ import annotations

import inspect
import unicodedata
from collections.abc import Awaitable, Callable, Sequence
from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Label, Static

from lesson_credit.tui.screens.base import screen_css
from lesson_credit.tui.screens.dialog_toasts import ToastsAsBelow
from lesson_credit.tui.text import folded, listed, one_line
from lesson_credit.tui.widgets.filter_box import TextBox
from lesson_credit.tui.widgets.key_footer import KeyFooter

MATCHES_SHOWN = 5
MAX_TYPED = 256  # characters: no session id comes near it


def resolve_session(typed: str, ids: Sequence[str]) -> tuple[str | None, str]:
    """(the session id, "") for an exact id or the start of exactly one id; else (None, why not).

    Case counts (ids are compared as logged); when no id starts with the text as typed, a
    case-insensitive start is tried, so `run-0042` finds `Run-0042-x` if it is the only one."""
    text = typed.strip()
    if not text:
        return None, "Type a session id, or the start of one."
    if text in ids:
        return text, ""
    forms = _forms(text)  # as typed, then its other Unicode forms (they look the same)
    for form in forms[1:]:
        if form in ids:  # the id typed, in another form: before the longer ids it starts
            return form, ""
    matches = [sid for sid in ids if sid.startswith(forms)]  # in any form: ids that look as if they start with it
    if not matches:  # any case, and any Unicode form: an accent typed as one code point or as two look alike
        typed = folded(text)
        matches = [sid for sid in ids if folded(sid).startswith(typed)]
    if len(matches) == 1:
        return matches[0], ""
    if not matches:
        return None, f"No session id starts with {one_line(text)!r}."
    shown = listed([one_line(sid) for sid in matches[:MATCHES_SHOWN]], MATCHES_SHOWN, total=len(matches), ellipsis=True)
    return None, f"{len(matches)} sessions start with {one_line(text)!r}: {shown}. Type more of the id."


def _forms(text: str) -> tuple[str, ...]:
    if text.isascii():
        return (text,)
    return tuple(dict.fromkeys((text, unicodedata.normalize("NFC", text), unicodedata.normalize("NFD", text))))


class JumpScreen(ToastsAsBelow, ModalScreen[None]):
    """Enter opens the session the text names (`on_choose`, awaited before the next key); escape cancels."""

    DEFAULT_CSS = screen_css("jump.tcss")
    HELP = "Type a session id or the start of one; enter opens it (an ambiguous start lists the ids), escape cancels."

    BINDINGS: ClassVar[list[BindingType]] = [
        # priority: over the text box's own enter (which would submit it as a message, after the key's turn)
        Binding("enter", "open", "Open the session", priority=True),
        Binding("escape", "cancel", "Cancel"),
    ]

    def __init__(
        self,
        ids: Callable[[], Sequence[str] | None],
        on_choose: Callable[[str], Awaitable[None] | None],
        when_read: Callable[[Callable[[], Awaitable[None]]], bool],
    ) -> None:
        """`ids()`: the session ids in log order (None while the log is still being read); `when_read(call)`
        runs `call` once they are there, holding the keys typed meanwhile (False: the read failed)."""
        super().__init__()
        self.ids, self.when_read = ids, when_read
        self.on_choose: Callable[[str], Awaitable[None] | None] | None = on_choose

    def compose(self) -> ComposeResult:
        with Vertical(id="jump-dialog"):
            yield Label("Open a session: its id, or the start of one", id="jump-prompt")
            yield TextBox(placeholder="session id", id="jump-id", max_length=MAX_TYPED)  # (its keys: the dialog's)
            yield Static("enter opens it · escape cancels", id="jump-problem")
        yield KeyFooter()  # over the screen's below: its keys do nothing here

    def on_mount(self) -> None:
        self.query_one("#jump-dialog").border_title = "go to session"
        self.query_one("#jump-id", Input).focus()

    def say(self, problem: str) -> None:
        box = self.query_one("#jump-problem", Static)
        box.update(Text(problem))  # it quotes what was typed: never markup
        box.add_class("-invalid")

    async def action_open(self) -> None:
        """Enter: a binding, so it runs in the key's turn and the session is open before the next key."""
        if self.on_choose is None or not self.is_attached:  # cancelled, or waited for the log and gone since
            return
        ids = self.ids()
        if ids is None:  # the log's first read: enter waits for it, and the keys typed after it too
            if self.when_read(self.action_open):
                self.say("Reading the log; the session opens once it is read.")
            else:
                self.say("The log could not be read (see the error); escape closes.")
            return
        session_id, problem = resolve_session(self.query_one("#jump-id", Input).value, ids)
        if session_id is None:
            self.say(problem)
            return
        on_choose, self.on_choose = self.on_choose, None  # once, whatever else is pressed
        self.dismiss(None)  # off the stack at once; the session opens on the screen below
        if on_choose is not None:
            result = on_choose(session_id)
            if inspect.isawaitable(result):
                await result

    def action_cancel(self) -> None:
        self.on_choose = None
        self.dismiss(None)
