"""`?`: every key of every screen, built from the BINDINGS themselves so it cannot drift."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static


@dataclass(frozen=True)
class HelpSection:
    title: str
    about: str
    keys: tuple[tuple[str, str], ...]  # (key as shown, what it does)


def as_binding(entry: BindingType) -> Binding:
    return entry if isinstance(entry, Binding) else Binding(*entry)


def help_keys(bindings: Iterable[BindingType], show: Callable[[Binding], str]) -> tuple[tuple[str, str], ...]:
    """(keys, description) per binding with a description; `show` is App.get_key_display."""
    out = []
    for entry in bindings:
        binding = as_binding(entry)
        if not binding.description:
            continue
        if binding.key_display:
            keys = binding.key_display
        else:
            keys = " / ".join(show(Binding(key.strip(), binding.action)) for key in binding.key.split(","))
        out.append((keys, binding.description))
    return tuple(out)


def help_text(sections: Sequence[HelpSection], current: str) -> Text:
    out = Text()
    for index, section in enumerate(sections):
        if index:
            out.append("\n")
        title = section.title + ("  (this screen)" if section.title == current else "")
        out.append(title + "\n", style="bold underline")
        if section.about:
            out.append(section.about + "\n", style="italic")
        width = max((len(k) for k, _ in section.keys), default=0)
        for keys, description in section.keys:
            out.append(f"  {keys:>{width}}  ", style="bold")
            out.append(description + "\n")
    return out


class HelpScreen(ModalScreen[None]):
    """Keys per screen, the current screen first."""

    CSS_PATH = "help.tcss"

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,question_mark,q", "close", "Close help"),
    ]

    def __init__(self, sections: Sequence[HelpSection], current: str) -> None:
        super().__init__()
        ordered = sorted(sections, key=lambda s: s.title != current)
        self.sections = tuple(ordered)
        self.current = current

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="help-body"):
            yield Static(help_text(self.sections, self.current), id="help-text")

    def on_mount(self) -> None:
        body = self.query_one("#help-body", VerticalScroll)
        body.border_title = "keys  (escape closes · ctrl+p lists every action)"
        body.focus()

    def action_close(self) -> None:
        self.dismiss(None)
