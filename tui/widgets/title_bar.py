"""The screen's title on one line, drawn by one widget.

Textual's Header is four widgets on every screen (the header, its icon, its title and the space
for a clock), each styled, laid out and drawn on its own. This bar draws the same line in
`render`: the icon in the first ICON_CELLS cells (a click opens the command palette), the title
and sub-title (`App.format_title`) centred between it and CLOCK_CELLS empty cells on the right,
cut with an ellipsis when they do not fit. While writes wait to be saved (or a long read goes on),
a line too long for that takes the clock's empty cells too.
"""

from __future__ import annotations

from textual import events
from textual.content import Content
from textual.style import Style
from textual.widget import Widget

from lesson_credit.core.api import shorten

ICON = "⭘"
ICON_CELLS = 8  # as Textual's header: the icon, padded by one cell, in 8 cells on the left
CLOCK_CELLS = 10  # and 10 cells on the right where its clock would be
TITLE_LEAST = 8  # cells of the title kept when what waits to be saved takes the rest of a narrow bar


class TitleBar(Widget, can_focus=False):
    ALLOW_SELECT = False
    COMPONENT_CLASSES = {"title-bar--icon-hover"}
    DEFAULT_CSS = """
    TitleBar {
        dock: top;
        width: 100%;
        height: 1;
        background: $panel;
        color: $foreground;
        .title-bar--icon-hover {
            background: $foreground 10%;
        }
    }
    """

    def __init__(self) -> None:
        super().__init__()
        self._icon_hovered = False

    def on_mount(self) -> None:
        for node in (self.app, self.screen):
            self.watch(node, "title", self._retitle, init=False)
            self.watch(node, "sub_title", self._retitle, init=False)
        for name in ("reading", "saving"):  # the dashboard's: how far a long read has come, writes waiting
            if hasattr(self.app, name):
                self.watch(self.app, name, self._retitle, init=False)

    def _retitle(self) -> None:
        self.refresh()

    def heading(self, room: int | None = None, wide: int | None = None) -> Content:
        """The screen's title (the app's when the screen has none) and sub-title, as Textual's header shows them,
        and the app's `saving` (writes waiting to be retried) and `reading` (a long read's progress) after them.
        Cut to `room` cells (with an ellipsis), the title and sub-title give way first: what waits to be saved and
        how to discard it is said whole while it fits (the title says which screen, the rest of the app's
        state is said nowhere else once its toast is gone), before a long read's progress (cut first).
        With something said after the title, a line too long for `room` may take `wide` cells (the clock's space
        too), and the sub-title (the workspace's name) goes before the title is cut, then the writes waiting are
        said in fewer words (the app's `saving_short`): a session's id (a UUID too) stays whole at 80 columns while
        a write waits, and a longer one is cut in its middle, its end kept (ids often share a date prefix)."""
        screen, app = self.screen, self.app
        title = screen.title if screen.title is not None else app.title
        sub_title = screen.sub_title if screen.sub_title is not None else app.sub_title
        extras = " · ".join(extra for extra in (getattr(app, "saving", ""), getattr(app, "reading", "")) if extra)
        whole = app.format_title(title, f"{sub_title} · {extras}" if sub_title and extras else sub_title or extras)
        if room is None or whole.cell_length <= room:
            return whole
        if extras and wide is not None and wide > room:
            room = wide
            if whole.cell_length <= room:
                return whole
        tail = Content(f" · {extras}").stylize("dim") if extras else Content("")
        heading = app.format_title(title, sub_title)
        if extras and app.format_title(title, "").cell_length + tail.cell_length <= room:
            return app.format_title(title, "") + tail
        # the writes waiting in fewer words (`1 unsaved (^d discards)`) before the title is cut: a UUID's session
        saving_short = getattr(app, "saving_short", "")
        short = " · ".join(extra for extra in (saving_short, getattr(app, "reading", "")) if extra)
        if saving_short and room - len(f" · {short}") >= TITLE_LEAST:  # the title cut in its middle if need be
            short_tail = Content(f" · {short}").stylize("dim")
            plain = app.format_title(title, "")
            if plain.cell_length <= room - short_tail.cell_length:
                return plain + short_tail
            return Content(shorten(plain.plain, room - short_tail.cell_length, "middle")) + short_tail
        if room - tail.cell_length >= TITLE_LEAST:
            return heading.truncate(room - tail.cell_length, ellipsis=True) + tail
        if not getattr(app, "saving", ""):
            return whole.truncate(room, ellipsis=True)
        # a long read's progress too: the title keeps its least, the writes waiting whole, the read what is left
        return (heading.truncate(TITLE_LEAST, ellipsis=True) + tail).truncate(room, ellipsis=True)

    def render(self) -> Content:
        width = self.size.width
        room = max(0, width - ICON_CELLS - CLOCK_CELLS)
        wide = max(room, width - ICON_CELLS - 1)  # the clock's space too, but the last cell
        heading = self.heading(room, wide)
        if heading.cell_length > room:
            room = wide
        left = (room - heading.cell_length) // 2
        icon_style: Style | str = ""
        if self._icon_hovered:
            icon_style = Style.from_rich_style(self.get_component_rich_style("title-bar--icon-hover"))
        icon = (" " + ICON).ljust(ICON_CELLS)
        line = Content.assemble((icon, icon_style), heading.pad(left, room - left - heading.cell_length))
        return line.extend_right(max(0, width - line.cell_length))

    def _on_icon(self, x: int) -> bool:
        return x < ICON_CELLS and self.app.ENABLE_COMMAND_PALETTE

    def on_mouse_move(self, event: events.MouseMove) -> None:
        hovered = self._on_icon(event.x)
        if hovered != self._icon_hovered:
            self._icon_hovered = hovered
            self.tooltip = "Open the command palette" if hovered else None
            self.refresh()

    def on_leave(self) -> None:
        if self._icon_hovered:
            self._icon_hovered = False
            self.tooltip = None
            self.refresh()

    async def on_click(self, event: events.Click) -> None:
        if self._on_icon(event.x):
            event.stop()
            await self.run_action("app.command_palette")
