"""Scrolling whose keys move it at once, in the order typed.

Textual's scrolling keys glide (an animation) and some apply only after the next repaint
(`scroll_end` reads the height then), so a burst such as `end home down down` ended wherever the
glides and repaints left it: on the Rewards screen at 80x24, ten lines down instead of two; in a long
journal, at a fractional line. Here each key sets the offset before the next key is handed on
(tui/keys.py), with no animation.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from textual.actions import SkipAction
from textual.binding import Binding, BindingType
from textual.containers import ScrollableContainer, VerticalScroll

if TYPE_CHECKING:
    _Scrolling = ScrollableContainer
else:  # a plain mixin at run time: a Widget base would give the class Widget's own defaults (can_focus False)
    _Scrolling = object


class ScrollKeysAtOnce(_Scrolling):
    """up / down a line, pgup / pgdn a page, home / end the top / bottom, each at once (a mixin before
    the scrolling widget's class: VerticalScroll's and ScrollView's bindings name these actions)."""

    def _jump(self, y: float) -> None:
        if not self.allow_vertical_scroll:
            raise SkipAction()  # nothing to scroll: the key goes on to the screen
        self.scroll_to(y=y, animate=False, immediate=True)

    def action_scroll_up(self) -> None:
        self._jump(self.scroll_y - 1)

    def action_scroll_down(self) -> None:
        self._jump(self.scroll_y + 1)

    def action_page_up(self) -> None:
        self._jump(self.scroll_y - self.scrollable_content_region.height)

    def action_page_down(self) -> None:
        self._jump(self.scroll_y + self.scrollable_content_region.height)

    def action_scroll_home(self) -> None:
        self._jump(0)

    def action_scroll_end(self) -> None:
        self._jump(self.max_scroll_y)


class KeyScroll(ScrollKeysAtOnce, VerticalScroll):
    """A VerticalScroll whose keys move it at once."""


SCROLL = Binding.Group("scroll")


class FootedKeyScroll(KeyScroll):
    """A KeyScroll whose keys are in the footer while it holds more than it shows (a Rewards screen's panel and
    both plots at 24 rows, the help), and hidden from it, the key going on to the screen, while it does not."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("down", "scroll_down", "Line down", group=SCROLL),
        Binding("up", "scroll_up", "Line up", group=SCROLL),
        Binding("pagedown", "page_down", "Page down", group=SCROLL),
        Binding("pageup", "page_up", "Page up", group=SCROLL),
        Binding("home", "scroll_home", "Top", group=SCROLL),
        Binding("end", "scroll_end", "Bottom", group=SCROLL),
    ]
    SCROLLING = frozenset(binding.action for binding in BINDINGS if isinstance(binding, Binding))

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        # nothing to scroll: hidden from the footer, and the key goes on to the screen (as _jump's SkipAction)
        return self.allow_vertical_scroll if action in self.SCROLLING else True

    def watch_virtual_size(self) -> None:
        self.refresh_bindings()  # what it holds grew or shrank: the scroll keys shown or hidden

    def on_resize(self) -> None:
        self.refresh_bindings()
