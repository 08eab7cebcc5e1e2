"""ctrl+p: Textual's command palette, with a footer of its own.

Under Textual's palette the bottom line kept the footer of the screen under it (`⏎ Open / Filter o Sort ...`,
and `^p palette` on the right from 100 columns): keys that do nothing while it is open, a letter going into
its search box. This footer names the palette's own keys instead.

Its search ranks a command whose title starts with what was typed first (`KeysCommands`).
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.command import CommandPalette, Hit, Hits
from textual.system_commands import SystemCommandsProvider

from lesson_credit.tui.widgets.key_footer import KeyFooter

# what they do, in Textual's CommandPalette: enter runs the highlighted command (with none highlighted yet it
# highlights the first), down / up move through the list, escape closes the palette
PALETTE_KEYS = (("enter", "Run"), ("down", "Next"), ("up", "Previous"), ("escape", "Close"))


class KeysPalette(CommandPalette):
    """The command palette, its footer naming its keys (the app's `action_command_palette` opens it)."""

    def compose(self) -> ComposeResult:
        yield from super().compose()
        yield KeyFooter(keys=PALETTE_KEYS, palette=False)  # (ctrl+p opens nothing while it is open)


START_BOOST = 1.5  # a title that starts with the query, over one that has it further in (Textual's scores tie)


class KeysCommands(SystemCommandsProvider):
    """The app's commands (`get_system_commands`), matched by Textual's fuzzy matcher, and a title that starts
    with the query ranked over one that has it later: Textual scored "disc" the same in `Back / discard draft`
    and `Discard unsaved writes…` (the first letters of a word, in a row, in both), and the screen's command,
    listed first, came first, while a user typing "disc" with writes waiting most likely wants the latter."""

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        start = query.strip().lower()
        for name, help_text, callback, *_ in self.app.get_system_commands(self.screen):
            if (score := matcher.match(name)) > 0:
                boost = START_BOOST if start and name.lower().startswith(start) else 1.0
                yield Hit(score * boost, matcher.highlight(name), callback, help=help_text)
