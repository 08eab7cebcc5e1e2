"""The screen's keys on one line, drawn by one widget.

Textual's Footer is a container with a widget per key (14 of the Lessons screen's 30 widgets):
each key is styled, laid out and drawn on its own, and the whole footer is recomposed when the
bindings change. This footer draws the same line from the screen's active bindings in `render`,
so a change of bindings only repaints one line. Measured on the demo: the first rows came 68 ms
sooner (median of 20 interleaved runs, 693 against 761 ms), and the flows and grading test files
used 43-46 s of CPU instead of 53-54 s.

The line reads as Textual's footer does: `key description` per action, a group of keys (the
screens) as its keys and the group's label, and `^p palette` on the right. Below
NARROW_BELOW columns it is compact (no padding around a key) and leaves ctrl+p to the help
screen. A line too long for its width gives descriptions in a word (SHORT: the one that saves
the most first, until the line fits), then leaves
keys to `?` help (which lists every key of every screen), in the order of LEFT_TO_HELP: a key
shown without its description (a bare `w` at 80 columns) told a new operator nothing. Only if
the line is still too long does it drop the longest descriptions (their keys stay): nothing is
cut off. While a text box has the focus, Textual gives it every letter and digit (the screen's keys
of one character leave the line, and a `/` it does not know to be one is no use there): the line
says what the box's own keys do instead, first (its `footer_keys`: `⏎ Apply esc Clear tab Next`), and a
screen key that means what one of them says is left to help (Simulation's seeds: `⏎ Run`, not `^r Run` too).
A key is pressed by clicking it, and the key under
the mouse is highlighted. Its tooltip is the binding's, or for a key shown in a group (without its
description) the description.
"""

from __future__ import annotations

from itertools import groupby
from typing import Any, NamedTuple

from rich.style import Style
from rich.text import Text
from textual import events
from textual.binding import Binding
from textual.keys import key_to_character
from textual.widget import Widget
from textual.widgets import Input

from lesson_credit.tui.widths import NARROW_BELOW

FooterKeys = tuple[tuple[str, str], ...]  # (key, what it does), as the footer shows them

KEY_META = "footer_key"  # the key a character of the line presses, in its style's meta
# action (or description) -> its description below NARROW_BELOW columns (help and the palette keep the full one)
SHORT = {
    "open_last_session": "Open",
    "open_session": "Open",  # (Health's: its session or lesson)
    "cycle_sort": "Sort",
    "reverse_sort": "Reverse",
    "over_time": "Over time",
    "toggle_pending": "Pending",
    "next_pending": "Next",
    "Back / discard draft": "Back",  # (a session's escape: a draft's discard is in help)
    "cycle_strategy": "Strategy",
    "cycle_policy": "Policy",
    "cycle_priority": "Rewards",
    "floor_step(-0.05)": "Floor-",
    "floor_step(0.05)": "Floor+",
    "save": "Save",
    "write": "Write",
    "open_rewards": "Open",
    "Show / fold the plot": "Plot",  # (an action three screens share: by the description)
    "Scroll to the plot / back": "Plot",  # (Session detail's, below 100 columns)
    "Show / fold the panel": "Panel",
}
# what a line too long for its width leaves to `?` help first, in this order (actions, and the label of a
# group): the sort keys (Sessions and Analysis show them only in help), then the screens (each screen's
# footer but a screen's own keys' names come first: What-if's knobs at 80 columns)
LEFT_TO_HELP = ("reverse_sort", "cycle_sort", "screens")


class FooterEntry(NamedTuple):
    """One key as the footer shows it."""

    key: str  # what pressing it sends (`App.simulate_key`)
    display: str  # how it is shown, e.g. `⏎` or `^p`
    description: str  # empty for a key shown in a group
    tooltip: str
    enabled: bool
    short: str = ""  # the description in a word, when the line is too long for it (SHORT)
    action: str = ""


class FooterGroup(NamedTuple):
    """Keys shown together under one label (Textual's binding group)."""

    label: str
    entries: tuple[FooterEntry, ...]


class KeyFooter(Widget, can_focus=False):
    ALLOW_SELECT = False
    COMPONENT_CLASSES = {"key-footer--key", "key-footer--description", "key-footer--hover", "key-footer--rule"}
    DEFAULT_CSS = """
    KeyFooter {
        dock: bottom;
        height: 1;
        color: $footer-foreground;
        background: $footer-background;
        text-wrap: nowrap;
        .key-footer--key {
            color: $footer-key-foreground;
            background: $footer-key-background;
            text-style: bold;
        }
        .key-footer--description {
            color: $footer-description-foreground;
            background: $footer-description-background;
        }
        .key-footer--hover {
            background: $block-hover-background;
        }
        .key-footer--rule {
            color: $foreground 20%;
        }
    }
    """

    def __init__(self, keys: FooterKeys = (), palette: bool = True) -> None:
        """`keys`: (key, what it does) named first whatever has the focus, as a focused text box's `footer_keys`
        are (the command palette's, whose search box always has it); `palette`: ctrl+p on the right."""
        super().__init__()
        self._hover: str | None = None  # the key under the mouse
        self.keys = keys
        self.palette = palette

    def on_mount(self) -> None:
        self.screen.bindings_updated_signal.subscribe(self, lambda _screen: self.refresh())

    def on_unmount(self) -> None:
        self.screen.bindings_updated_signal.unsubscribe(self)

    # ---------------------------------------------------------------- what the line holds

    def items(self) -> tuple[list[FooterEntry | FooterGroup], FooterEntry | None]:
        """The shown keys in binding order (one per action; a group of two or more as a group), and
        the command palette's key when it is shown (on the right)."""
        app = self.app
        active = self.screen.active_bindings
        by_action: dict[str, FooterEntry] = {}
        group_of: dict[str, Any] = {}
        box = self.screen.focused if isinstance(self.screen.focused, Input) else None
        told: dict[str, str] = dict(self.keys or getattr(box, "footer_keys", ()))
        for key, description in told.items():  # the text box's keys: what they do from it
            display = app.get_key_display(Binding(key, ""))
            by_action[f"box:{key}"] = FooterEntry(key, display, description, description, True, description)
            group_of[f"box:{key}"] = None
        for _node, binding, enabled, tooltip in active.values():
            if not binding.show or binding.action in by_action or binding.key in told:
                continue
            if binding.description in told.values():  # one meaning, one entry: the seeds' `⏎ Run`, not `^r Run` too
                continue
            if box is not None and _typed_into(box, binding.key, app.get_key_display(binding)):
                continue
            by_action[binding.action] = FooterEntry(
                binding.key,
                app.get_key_display(binding),
                binding.description,
                tooltip or binding.description,
                enabled,
                SHORT.get(binding.action, SHORT.get(binding.description, binding.description)),
                binding.action,
            )
            group_of[binding.action] = binding.group
        items: list[FooterEntry | FooterGroup] = []
        for group, actions in groupby(by_action, lambda action: group_of[action]):
            entries = [by_action[action] for action in actions]
            if group is not None and len(entries) > 1:
                grouped = (FooterEntry(e.key, e.display, "", e.tooltip or e.description, e.enabled) for e in entries)
                items.append(FooterGroup(group.description, tuple(grouped)))
            else:
                items.extend(entries)
        palette = None
        if self.palette and self.size.width >= NARROW_BELOW and app.ENABLE_COMMAND_PALETTE:
            shown = active.get(app.COMMAND_PALETTE_BINDING)
            if shown is not None:
                _node, binding, enabled, _tooltip = shown
                tip = binding.tooltip or binding.description
                palette = FooterEntry(binding.key, app.get_key_display(binding), binding.description, tip, enabled)
        return items, palette

    def _entry(self, key: str | None) -> FooterEntry | None:
        """The shown entry for `key` (None: not shown)."""
        items, palette = self.items()
        if palette is not None:
            items.append(palette)
        for item in items:
            for entry in item.entries if isinstance(item, FooterGroup) else (item,):
                if entry.key == key:
                    return entry
        return None

    # ---------------------------------------------------------------- drawing

    def render(self) -> Text:
        items, palette = self.items()
        compact = self.size.width < NARROW_BELOW
        width = self.size.width
        right = Text(no_wrap=True, end="")
        if palette is not None:  # on the right: "▏^p palette "
            right.append("▏", style=self.get_component_rich_style("key-footer--rule"))
            for text, text_style in self._key(palette, padded=False):
                right.append(text, style=text_style)
            right.append(" ")
        room = width - right.cell_len
        line = self._line(items, compact)
        while line.cell_len > room:  # descriptions in a word, those that save the most first (a pair alike)
            most = max(map(_saving, items), default=0)
            if most <= 0:
                break
            items = [_shortened(i) if _saving(i) == most else i for i in items]
            line = self._line(items, compact)
        for left in LEFT_TO_HELP:  # then keys left to `?` help
            if line.cell_len <= room:
                break
            items = [i for i in items if (i.label if isinstance(i, FooterGroup) else i.action) != left]
            line = self._line(items, compact)
        while line.cell_len > room:  # then the longest description goes, its key stays
            entries = [(len(i.description), at) for at, i in enumerate(items) if isinstance(i, FooterEntry)]
            length, at = max(entries, default=(0, -1))
            entry = items[at]
            if not length or not isinstance(entry, FooterEntry):
                break
            items[at] = _described(entry, "")
            line = self._line(items, compact)
        if palette is not None:
            line.truncate(max(0, room))
            line.pad_right(width - right.cell_len - line.cell_len)
            line.append_text(right)
        return line

    def _style(self, entry: FooterEntry, base: Style) -> Style:
        out = base + Style.from_meta({KEY_META: entry.key})
        if not entry.enabled:
            out += Style(dim=True)
        return out + self.get_component_rich_style("key-footer--hover") if entry.key == self._hover else out

    def _key(self, entry: FooterEntry, padded: bool) -> list[tuple[str, Style]]:
        pad = " " if padded else ""
        parts = [(pad + entry.display + pad, self._style(entry, self.get_component_rich_style("key-footer--key")))]
        if entry.description:
            text = entry.description + " " if padded else " " + entry.description
            parts.append((text, self._style(entry, self.get_component_rich_style("key-footer--description"))))
        return parts

    def _line(self, items: list[FooterEntry | FooterGroup], compact: bool) -> Text:
        description_style = self.get_component_rich_style("key-footer--description")
        line = Text(no_wrap=True, end="")
        for item in items:
            if isinstance(item, FooterGroup):  # " l s a m h screens "
                line.append(" ")
                for i, entry in enumerate(item.entries):
                    if i:
                        line.append(" ")
                    line.append(*self._key(entry, padded=False)[0])
                line.append(" ")
                line.append(item.label, style=description_style)
                line.append(" ")
            else:
                for text, text_style in self._key(item, padded=not compact):
                    line.append(text, style=text_style)
                if compact:
                    line.append(" ")
        if compact:
            line.rstrip()  # (the space after the last key would cost a key's room at 80 columns)
        return line

    # ---------------------------------------------------------------- mouse

    def _key_at(self, event: events.MouseEvent) -> str | None:
        return event.style.meta.get(KEY_META)

    def on_mouse_move(self, event: events.MouseMove) -> None:
        key = self._key_at(event)
        if key != self._hover:
            self._hover = key
            entry = self._entry(key)
            self.tooltip = (entry.tooltip or None) if entry is not None else None
            self.refresh()

    def on_leave(self) -> None:
        if self._hover is not None:
            self._hover = None
            self.tooltip = None
            self.refresh()

    def on_mouse_down(self, event: events.MouseDown) -> None:
        entry = self._entry(self._key_at(event))
        if entry is None:
            return
        if entry.enabled:
            self.app.simulate_key(entry.key)
        else:
            self.app.bell()


def _typed_into(box: Input, key: str, display: str) -> bool:
    """`key` goes into the focused text box as text (`slash` too, which Textual names no character: its
    display is it; `enter`'s is `⏎`, which is not typed)."""
    character = key_to_character(key) or (display if len(display) == 1 and display.isascii() else None)
    return box.check_consume_key(key, character)


def _described(entry: FooterEntry, description: str) -> FooterEntry:
    """The entry with another description (the rest as it is)."""
    key, display, _, tooltip, enabled, short, action = entry
    return FooterEntry(key, display, description, tooltip, enabled, short, action)


def _saving(item: FooterEntry | FooterGroup) -> int:
    """The cells an entry's description in a word saves (0 for a group)."""
    return len(item.description) - len(item.short) if isinstance(item, FooterEntry) else 0


def _shortened(item: FooterEntry | FooterGroup) -> FooterEntry | FooterGroup:
    return _described(item, item.short) if isinstance(item, FooterEntry) else item
