"""Text in phrases laid out at the widget's own width, again whenever that width changes.

Textual wraps a long line at any space, non-breaking ones too, so "later +0.149 [-0.01, +0.31] (n 15)"
could end a line at "[-0.01," with the rest on the next. Here the text is built for the width it is
shown at (`tui.text.phrase_lines`): lines break between phrases only. The width is the widget's, after
its padding and any scrollbar beside it, so a resize of the terminal or a scrollbar that comes or goes
lays it out again.
"""

from __future__ import annotations

from collections.abc import Callable

from rich.text import Text
from textual.widgets import Static

Layout = Callable[[int], Text]  # the text for a width in cells (0: lines as long as they come)


class PhraseText(Static):
    """`show(layout)` shows `layout(width)` and keeps it to lay the text out again on a resize."""

    def __init__(self, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self._layout: Layout | None = None
        self._width = -1  # the width the text shown was laid out for

    def show(self, layout: Layout) -> None:
        self._layout = layout
        self._width = -1
        self._lay_out()

    def on_resize(self) -> None:
        self._lay_out()

    def _lay_out(self) -> None:
        width = self.content_size.width
        if self._layout is None or width == self._width:
            return
        self._width = width
        self.update(self._layout(width))
