"""A table filter's text box: at most MAX_FILTER characters, one message when more arrive (and the
capped text box it is: a grade's note is one too, at most MAX_NOTE).

No session id, category, date or lesson id comes near the cap. Without one, every character
typed into a 5,000-character box costs Textual's Input time in proportion to the text (its
cursor and scroll arithmetic), so a long paste typed key by key took seconds; past the cap a
character costs almost nothing. A paste (one event) keeps what fits.

Every text box of the dashboard is a TextBox: it names for the footer what enter, escape and tab do
from it (a filter's enter applies it, the note's keeps the note, ...).
"""

from __future__ import annotations

from typing import Any

from textual import events
from textual.widgets import Input

from lesson_credit.tui.widgets.key_footer import FooterKeys

MAX_FILTER = 256  # characters
MAX_NOTE = 500  # characters: a grade's note (a 5,000-character paste held the app 7.9 s)


LEAVE_BY_TAB: FooterKeys = (("tab", "Next"),)  # the screen's tab: the focus to the next widget
FILTER_KEYS: FooterKeys = (("enter", "Apply"), ("escape", "Clear"), *LEAVE_BY_TAB)


class TextBox(Input):
    """A text box that tells the footer what its leaving keys do (`footer_keys`): while it has the focus,
    Textual gives it every letter and digit, so the footer loses the screen's keys (widgets/key_footer.py)."""

    def __init__(self, *args: Any, footer_keys: FooterKeys = (), **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.footer_keys = footer_keys


class CappedInput(TextBox):
    """A text box of at most `cap` characters that says so once when more arrive; `what` names it."""

    def __init__(self, placeholder: str, id: str, cap: int, what: str, keys: FooterKeys = FILTER_KEYS) -> None:  # noqa: A002
        super().__init__(placeholder=placeholder, id=id, max_length=cap, footer_keys=keys)
        self.cap = cap
        self.what = what
        self._said = False  # the cap was announced since the box last had room

    def restricted(self) -> None:
        """A character past the cap: say so once (Textual rings the bell for each)."""
        if not self._said:
            self._said = True
            self.notify(
                f"{self.what} holds at most {self.cap} characters; the rest was not added.",
                severity="warning",
                markup=False,
            )

    def watch_value(self, value: str) -> None:
        if len(value) < self.cap:
            self._said = False

    def _on_paste(self, event: events.Paste) -> None:
        """Textual's paste (the first line, over the selection), cut to what fits."""
        event.prevent_default()  # instead of Input's, which refuses the whole paste when it does not fit
        event.stop()
        if not event.text:
            return
        line = event.text.splitlines()[0] if event.text.splitlines() else ""
        start, end = sorted(self.selection)
        room = self.cap - (len(self.value) - (end - start))
        if len(line) > room:
            line = line[: max(room, 0)]
            self.restricted()
        self.replace(line, start, end)


class FilterBox(CappedInput):
    def __init__(self, placeholder: str, id: str) -> None:  # noqa: A002 (Textual's name for it)
        super().__init__(placeholder, id, MAX_FILTER, "A filter")
