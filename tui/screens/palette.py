"""ctrl+p: Textual's command palette, with a footer of its own.

Under Textual's palette the bottom line kept the footer of the screen under it (`⏎ Open / Filter o Sort ...`,
and `^p palette` on the right from 100 columns): keys that do nothing while it is open, a letter going into
its search box. This footer names the palette's own keys instead.
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.command import CommandPalette

from lesson_credit.tui.widgets.key_footer import KeyFooter

# what they do, in Textual's CommandPalette: enter runs the highlighted command (with none highlighted yet it
# highlights the first), down / up move through the list, escape closes the palette
PALETTE_KEYS = (("enter", "Run"), ("down", "Next"), ("up", "Previous"), ("escape", "Close"))


class KeysPalette(CommandPalette):
    """The command palette, its footer naming its keys (the app's `action_command_palette` opens it)."""

    def compose(self) -> ComposeResult:
        yield from super().compose()
        yield KeyFooter(keys=PALETTE_KEYS, palette=False)  # (ctrl+p opens nothing while it is open)
