"""A DataTable whose cell tones (warning, muted, up/down...) come from the theme, not fixed colours."""

from __future__ import annotations

from typing import ClassVar

from rich.style import Style
from rich.text import Text
from textual.widgets import DataTable

TONES = ("warning", "error", "muted", "accent", "up", "down", "pinned")


class ThemedTable(DataTable[Text]):
    """Cells are always `Text` (never markup). `tone()` gives the theme's style for a kind of cell.

    Styles are read from component classes, so a screen rebuilds its rows when the theme changes.
    """

    COMPONENT_CLASSES: ClassVar[set[str]] = DataTable.COMPONENT_CLASSES | {f"themed-table--{t}" for t in TONES}

    DEFAULT_CSS = """
    ThemedTable {
        height: 1fr;
    }
    ThemedTable > .themed-table--warning {
        color: $text-warning;
        text-style: bold;
    }
    ThemedTable > .themed-table--error {
        color: $text-error;
        text-style: bold;
    }
    ThemedTable > .themed-table--muted {
        color: $text-muted;
    }
    ThemedTable > .themed-table--accent {
        color: $text-accent;
        text-style: bold;
    }
    ThemedTable > .themed-table--up {
        color: $text-success;
    }
    ThemedTable > .themed-table--down {
        color: $text-error;
    }
    ThemedTable > .themed-table--pinned {
        color: $text-accent;
        text-style: bold;
    }
    """

    def tone(self, name: str) -> Style:
        return self.get_component_rich_style(f"themed-table--{name}", partial=True)

    def tones(self) -> dict[str, Style]:
        """Every tone's style as the theme has it now: what a worker needs to build cells."""
        return {name: self.tone(name) for name in TONES}

    def toned(self, value: str, name: str | None) -> Text:
        """`value` as literal Text in the given tone (or plain)."""
        return Text(value, style=self.tone(name) if name else "", end="")
