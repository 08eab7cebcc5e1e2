"""A list of lessons to pick one from: Health's enter on a finding that names several (broad keywords,
lessons never selected) opens the one picked over time, not the first alone."""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from lesson_credit.tui.screens.base import screen_css
from lesson_credit.tui.screens.dialog_toasts import ToastsAsBelow
from lesson_credit.tui.text import one_line
from lesson_credit.tui.widgets.key_footer import KeyFooter


class LessonPickScreen(ToastsAsBelow, ModalScreen[str | None]):
    """The lessons a finding names, in its order; enter dismisses with the highlighted one, escape with None."""

    DEFAULT_CSS = screen_css("lesson_pick.tcss")
    HELP = "The lessons the finding names: up / down choose one, enter opens it over time, escape goes back."

    BINDINGS: ClassVar[list[BindingType]] = [
        # priority: in the key's turn, before the list's own enter (a message, after it), so keys typed next land
        # on the lesson's screen
        Binding("enter", "pick", "Open over time", priority=True),
        Binding("escape", "cancel", "Back"),
    ]

    def __init__(self, lessons: Sequence[str], about: str) -> None:
        super().__init__()
        self.lessons = list(lessons)
        self.about = about  # what the lessons have in common: the finding's code

    def compose(self) -> ComposeResult:
        with Vertical(id="pick-dialog"):
            yield Static(Text(f"{len(self.lessons)} lessons: {one_line(self.about)}"), id="pick-prompt")
            yield OptionList(*[Option(Text(one_line(lesson)), id=lesson) for lesson in self.lessons], id="pick-list")
            yield Static("enter opens the lesson over time · escape goes back", id="pick-keys")
        yield KeyFooter()  # over the screen's below: its keys do nothing here

    def on_mount(self) -> None:
        self.query_one("#pick-dialog").border_title = "open which lesson?"
        options = self.query_one("#pick-list", OptionList)
        options.highlighted = 0
        options.focus()

    def action_pick(self) -> None:
        index = self.query_one("#pick-list", OptionList).highlighted
        self.dismiss(self.lessons[index] if index is not None and 0 <= index < len(self.lessons) else None)

    def action_cancel(self) -> None:
        self.dismiss(None)
