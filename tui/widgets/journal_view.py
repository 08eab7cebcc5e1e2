"""A session journal shown literally, soft-wrapped, with keyword hits highlighted.

Only the visible lines are rendered (Textual's line API), so a long journal costs nothing
until it scrolls into view.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Sequence
from typing import ClassVar

from rich.style import Style
from rich.text import Text
from textual.geometry import Size
from textual.scroll_view import ScrollView
from textual.strip import Strip

from lesson_credit.tui.text import JOURNAL_DISPLAY_LIMIT, expand_tabs, one_line, visible_text, wrap_lines
from lesson_credit.tui.widgets.key_scroll import ScrollKeysAtOnce

Span = tuple[int, int]


class JournalView(ScrollKeysAtOnce, ScrollView, can_focus=True):
    """Call `show_journal()` with the raw text and spans into it; `focus_spans` are emphasised."""

    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "journal-view--hit",
        "journal-view--focus",
        "journal-view--problem",
    }

    DEFAULT_CSS = """
    JournalView {
        background: $surface;
        padding: 0 1;
        scrollbar-gutter: stable;  /* wrap to the width left of the scrollbar, whether it shows or not */
    }
    JournalView > .journal-view--hit {
        background: $warning-muted;
    }
    JournalView > .journal-view--focus {
        background: $accent;
        color: auto 90%;
        text-style: bold;
    }
    JournalView > .journal-view--problem {
        color: $text-warning;
        text-style: italic;
    }
    """

    def __init__(self, *, name: str | None = None, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self._display = ""
        self._message: str | None = None
        self._map: Sequence[int] | None = None
        self._hits: list[Span] = []
        self._focus: list[Span] = []
        self._hit_starts: list[int] = []
        self._focus_starts: list[int] = []
        self._max_span = 0
        self._lines: list[Span] = []
        self._line_starts: list[int] = []
        self._laid_out_width = -1
        self._shown_height = 0  # the view's height when last laid out or resized
        self._anchor: int | None = None  # the display offset a lesson's hit put in view (scroll_to_offset)

    # ------------------------------------------------------------------ content

    @property
    def display_text(self) -> str:
        """The journal exactly as shown (control characters made visible, tabs expanded)."""
        return self._display

    @property
    def message(self) -> str | None:
        return self._message

    def show_message(self, message: str) -> None:
        """Show a reason instead of a journal (e.g. the journal file is missing)."""
        self._message = one_line(message)
        self._display = ""
        self._hits, self._focus = [], []
        self._relayout()

    def show_journal(
        self, raw: str, spans: Sequence[Span], focus_spans: Sequence[Span] = (), notice: str | None = None
    ) -> None:
        """Show `raw` literally; `notice` (e.g. why only part of it was read) goes above it."""
        truncated = len(raw) > JOURNAL_DISPLAY_LIMIT
        raw = raw[:JOURNAL_DISPLAY_LIMIT]
        display, mapping = expand_tabs(visible_text(raw))
        if truncated:
            notice = (notice + " " if notice else "") + (
                f"(showing the first {JOURNAL_DISPLAY_LIMIT:,} characters; hits further on are counted but not shown)"
            )
        self._message = one_line(notice) if notice else None
        self._display = display
        self._map = mapping.tolist() if mapping is not None else None
        self._set_spans(spans, focus_spans, len(raw))
        self._anchor = None
        self._relayout()

    def set_focus_spans(self, focus_spans: Sequence[Span]) -> None:
        """Emphasise another lesson's hits and scroll to the first of them."""
        self._focus = self._clip(focus_spans, self._limit())
        self._focus_starts = [s for s, _ in self._focus]
        self._max_span = max([e - s for s, e in self._hits + self._focus] or [0])
        self.refresh()
        self._anchor = self._focus[0][0] if self._focus else None
        if self._anchor is not None:
            self.scroll_to_offset(self._anchor)

    def _limit(self) -> int:
        return min(JOURNAL_DISPLAY_LIMIT, len(self._display) if self._map is None else len(self._map) - 1)

    def _clip(self, spans: Sequence[Span], limit: int) -> list[Span]:
        out = []
        for start, end in sorted(spans):
            if start >= limit:
                continue
            end = min(end, limit)
            if self._map is not None:
                start, end = self._map[start], self._map[end]
            out.append((start, end))
        return out

    def _set_spans(self, spans: Sequence[Span], focus_spans: Sequence[Span], limit: int) -> None:
        self._hits = self._clip(spans, limit)
        self._focus = self._clip(focus_spans, limit)
        self._hit_starts = [s for s, _ in self._hits]
        self._focus_starts = [s for s, _ in self._focus]
        self._max_span = max([e - s for s, e in self._hits + self._focus] or [0])

    # ------------------------------------------------------------------ layout

    def _text_width(self) -> int:
        return max(1, self.scrollable_content_region.width)

    def _relayout(self) -> None:
        width = self._text_width()
        self._laid_out_width = width
        lines = wrap_lines(self._display, width) if self._display else []
        if self._message is not None:
            # the message takes the first screen lines, marked by negative offsets
            message_lines = wrap_lines(self._message, width)
            lines = [(-1 - s, -1 - e) for s, e in message_lines] + lines
        self._lines = lines
        self._line_starts = [s for s, _ in lines]
        self.virtual_size = Size(width, len(lines))
        self.refresh()

    def on_resize(self) -> None:
        """Laid out again at a new width; either way what was in view stays in view: the hit a lesson put
        there if it still was (the view scrolled to the journal's top, or kept the old line number),
        else the text at the top line."""
        kept = self._kept_offset()
        self._shown_height = self.scrollable_content_region.height
        if self._text_width() != self._laid_out_width:
            self._relayout()
        if kept is not None:
            self.scroll_to_offset(*kept)

    def _kept_offset(self) -> tuple[int, int | None] | None:
        """(display offset, lines above it) to keep in view, from the layout before a resize."""
        top = int(self.scroll_y)
        if top >= len(self._lines):
            return None
        if self._anchor is not None:
            first = sum(1 for s in self._line_starts if s < 0)  # the notice's lines (negative offsets)
            line = bisect_right(self._line_starts, self._anchor, lo=first) - 1
            if top <= line < top + max(1, self._shown_height):
                return self._anchor, None
        return (self._lines[top][0], 0) if self._lines[top][0] >= 0 else None

    def scroll_to_offset(self, offset: int, above: int | None = None) -> None:
        """Scroll so the screen line holding display offset `offset` is near the top: `above` lines above
        it, by default up to two, fewer in a short view (at 80x24 it shows two lines, and the hit goes on
        the first)."""
        first = sum(1 for s in self._line_starts if s < 0)
        index = max(first, bisect_right(self._line_starts, offset, lo=first) - 1)
        if above is None:
            above = min(2, max(0, (self.scrollable_content_region.height - 1) // 2))
        # force: just after show_journal the scrollbars are not yet shown for the new text, and a plain
        # scroll_to was dropped then (a session opened with its journal at the top, whatever the hits)
        self.scroll_to(y=max(0, index - above), animate=False, force=True)

    # ------------------------------------------------------------------ rendering

    def _overlapping(self, spans: list[Span], starts: list[int], start: int, end: int) -> list[Span]:
        low = bisect_left(starts, start - self._max_span)
        high = bisect_left(starts, end)
        return [(s, e) for s, e in spans[low:high] if e > start and s < end]

    def render_line(self, y: int) -> Strip:
        scroll_x, scroll_y = self.scroll_offset
        width = self.scrollable_content_region.width
        base = self.rich_style
        index = scroll_y + y
        if index >= len(self._lines):
            return Strip.blank(width, base)
        start, end = self._lines[index]
        if start < 0:
            piece = (self._message or "")[-1 - start : -1 - end]
            text = Text(piece, style=self.get_component_rich_style("journal-view--problem"), end="")
        else:
            text = Text(self._display[start:end], end="")
            self._stylize(text, self._hits, self._hit_starts, start, end, "journal-view--hit")
            self._stylize(text, self._focus, self._focus_starts, start, end, "journal-view--focus")
        text.stylize_before(base)
        strip = Strip(text.render(self.app.console), text.cell_len)
        return strip.crop_extend(scroll_x, scroll_x + width, base)

    def _stylize(self, text: Text, spans: list[Span], starts: list[int], start: int, end: int, component: str) -> None:
        spans_here = self._overlapping(spans, starts, start, end)
        if not spans_here:
            return
        style: Style = self.get_component_rich_style(component)
        for s, e in spans_here:
            text.stylize(style, max(s, start) - start, min(e, end) - start)
