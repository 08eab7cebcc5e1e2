"""A session's transcript shown literally, with keyword hits and search matches highlighted, laid out off the UI thread.

The journal view's rendering (only visible lines are drawn), with one difference: a transcript
can be megabytes of text, and soft-wrapping 1.6 MB takes about a third of a second, so the text
is prepared (control characters made visible, tabs expanded, spans mapped, lines wrapped) by
`prepare()` in a worker and handed over whole; a resize wraps again in a worker. Until then the
old lines stay on screen, and no key ever waits for a layout.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from textual import work
from textual.geometry import Size

from lesson_credit.core.api import gc_paused
from lesson_credit.tui.text import JOURNAL_DISPLAY_LIMIT, expand_tabs, one_line, visible_text_sparse, wrap_lines
from lesson_credit.tui.widgets.journal_view import JournalView

Span = tuple[int, int]


@dataclass(frozen=True, eq=False)
class Prepared:
    """A text ready to show: what `JournalView.show_journal` computes, computed ahead (in a worker)."""

    display: str
    mapping: list[int] | None
    hits: list[Span]
    focus: list[Span]
    lines: list[Span]
    width: int
    message: str | None


def _mapped(spans: Sequence[Span], limit: int, mapping: list[int] | None) -> list[Span]:
    out = []
    for start, end in sorted(spans):
        if start >= limit:
            continue
        end = min(end, limit)
        if mapping is not None:
            start, end = mapping[start], mapping[end]
        out.append((start, end))
    return out


def _lines(display: str, message: str | None, width: int) -> list[Span]:
    lines = wrap_lines(display, width) if display else []
    if message is not None:
        lines = [(-1 - s, -1 - e) for s, e in wrap_lines(message, width)] + lines
    return lines


def prepare(raw: str, hits: Sequence[Span], focus: Sequence[Span], width: int, notice: str | None = None) -> Prepared:
    """Everything showing `raw` needs, for a view `width` cells wide (pure: run it in a worker)."""
    raw = raw[:JOURNAL_DISPLAY_LIMIT]
    display, mapping = expand_tabs(visible_text_sparse(raw))
    table = mapping.tolist() if mapping is not None else None
    message = one_line(notice) if notice else None
    return Prepared(
        display=display,
        mapping=table,
        hits=_mapped(hits, len(raw), table),
        focus=_mapped(focus, len(raw), table),
        lines=_lines(display, message, width),
        width=max(1, width),
        message=message,
    )


class TranscriptView(JournalView):
    """Call `show_prepared()` with what `prepare()` made; `set_focus_spans()` marks search matches."""

    def show_prepared(self, prepared: Prepared) -> None:
        self._display, self._map, self._message = prepared.display, prepared.mapping, prepared.message
        self._hits, self._focus = prepared.hits, prepared.focus
        self._hit_starts = [s for s, _ in self._hits]
        self._focus_starts = [s for s, _ in self._focus]
        self._max_span = max([e - s for s, e in self._hits + self._focus] or [0])
        self._apply(prepared.display, prepared.lines, prepared.width)
        if prepared.width != self._text_width():
            self._relayout()

    def display_offset(self, offset: int) -> int:
        """Where an offset into the raw text is in the text shown (tabs expanded)."""
        if self._map is None:
            return offset
        return self._map[min(max(offset, 0), len(self._map) - 1)]

    def _apply(self, display: str, lines: list[Span], width: int) -> None:
        if display is not self._display:
            return  # another text arrived meanwhile
        self._laid_out_width = width
        self._lines = lines
        self._line_starts = [s for s, _ in lines]
        self.virtual_size = Size(width, len(lines))
        self.refresh()

    def _relayout(self) -> None:
        width = self._text_width()
        if len(self._display) < 100_000:  # a few milliseconds: at once
            super()._relayout()
            return
        self._laid_out_width = width  # not again until the width changes
        self._wrap(self._display, self._message, width)

    @work(thread=True, exclusive=True, group="transcript-layout")
    def _wrap(self, display: str, message: str | None, width: int) -> None:
        with gc_paused():
            lines = _lines(display, message, width)
        self.app.call_from_thread(self._apply, display, lines, width)
