"""Textual's Footer, recomposed only when the keys it would show change.

Textual's Footer recomposes on every bindings signal (each focus change, each screen pushed or
mounted), and every recompose builds and restyles all its keys: opening Health on the demo
recomposed the footers twelve times (229 keys restyled, about a third of its first open). This
one compares what it would show with what it shows and skips the identical recomposes.
"""

from __future__ import annotations

from typing import Any

from textual.app import ComposeResult
from textual.screen import Screen
from textual.widgets import Footer
from textual.widgets._footer import FooterKey


class SteadyFooter(Footer):
    # Textual's compact footer sets no margin after a group's label: "screens? Help"
    DEFAULT_CSS = """
    SteadyFooter.-compact FooterLabel {
        margin: 0 1 0 0;
    }
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._shown: tuple[Any, ...] | None = None

    def compose(self) -> ComposeResult:
        # Textual's FooterKey starts compact and its data binding then sets the footer's value: two
        # restyles of every key when the footer is not compact. Each bound key starts as the footer is
        # (the command palette's key is not bound: Textual leaves it compact).
        for widget in super().compose():
            if isinstance(widget, FooterKey) and not widget.has_class("-command-palette"):
                widget.set_reactive(FooterKey.compact, self.compact)
                widget.set_class(self.compact, "-compact", update=False)
            yield widget

    def bindings_changed(self, screen: Screen[Any]) -> None:
        # Footer.bindings_changed with the recompose made conditional (textual 8.2.8, pinned)
        self._bindings_ready = True
        if not screen.app.app_focus:
            return
        if self.is_attached and screen is self.screen:
            self.call_after_refresh(self._recompose_if_changed)

    def shown_keys(self) -> tuple[Any, ...]:
        """What compose() would show: the shown bindings with their state, and the footer's options."""
        bindings = tuple(
            (binding.key, binding.action, binding.description, binding.key_display, binding.group, enabled, tooltip)
            for _node, binding, enabled, tooltip in self.screen.active_bindings.values()
            if binding.show
        )
        return (self.show_command_palette, self.compact, bindings)

    async def _recompose_if_changed(self) -> None:
        if not self.is_attached:
            return
        shown = self.shown_keys()
        if shown == self._shown:
            return
        self._shown = shown
        await self.recompose()
