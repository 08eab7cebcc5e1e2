"""Where a session's lessons' keywords hit the text a view shows, found within a budget (docs/dashboard.md).

Each hit keyword's matches are found by a chain of `str.find` over the text shown (core/library/scan.py): what it
reads is `KeywordHit.find_cost` (the text once, and where CPython searches plainly, a keyword under 6 characters,
its length again at each occurrence of its last character: a few in ordinary text, one a character in a text of
`a`s), and each match it finds and takes costs SPAN_CHARS more. Past HIGHLIGHT_CHARS in all, the keywords from the
first that does not fit on are not highlighted, and `Highlights.note` says so on the journal pane's first line (one
lesson of 720 keywords of 4 letters, each 555 times over 2 MB: 5.1 s on the session screen's UI thread, 3.7 s
again at each focus on it; now 0.6 s in the thread that read the session, 374 highlighted; 7,209 keywords of about
1,000 matches each over 73 KB: 2.8 s, now 0.9 s, 1,646). Ordinary sessions come nowhere near it (100 keywords of
8 letters over 2 MB, a thousand matches each: about a third of it). Each keyword's matches are found once however
many lessons name it, and each lesson's spans are merged with one sort (the merge sorted every span so far again
after each keyword).
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from lesson_credit.tui.text import JOURNAL_DISPLAY_LIMIT

if TYPE_CHECKING:
    from lesson_credit.core.api import SalienceBreakdown

# A match found and taken, in characters read (the find, the generators it goes through, its mapping back to the
# original text and its two numbers: ~0.6 us where a read goes ~1 ns a character).
SPAN_CHARS = 600
HIGHLIGHT_CHARS = 1 << 30  # ~1 s at that rate, in the session screen's loading thread (never the UI's)

Span = tuple[int, int]


@dataclass(frozen=True)
class Highlights:
    """Every lesson's hit spans merged (`spans`), each lesson's (`by_lesson`), and how many of the hit keywords
    (`hit`, each counted once) were highlighted (`shown`: the first ones, in the lessons' order)."""

    spans: list[Span] = field(default_factory=list)
    by_lesson: dict[str, list[Span]] = field(default_factory=dict)
    shown: int = 0
    hit: int = 0

    def note(self) -> str | None:
        """What the view says when some hit keywords are not highlighted (plain words, no markup)."""
        if self.shown == self.hit:
            return None
        keywords = "keyword" if self.hit == 1 else "keywords"  # (one line at 80 columns)
        return f"highlights: first {self.shown:,} of {self.hit:,} {keywords} shown, the rest too slow to find"


def highlights(
    breakdowns: Sequence[tuple[str, SalienceBreakdown | None]],
    stop: int = JOURNAL_DISPLAY_LIMIT,
    budget: int | None = None,
) -> Highlights:
    """The highlights of (lesson, breakdown) pairs: matches starting before `stop`, those that overlap or touch made
    one span, found within `budget` (None: HIGHLIGHT_CHARS; see the module's note)."""
    budget = HIGHLIGHT_CHARS if budget is None else budget
    found = _found([breakdown for _, breakdown in breakdowns if breakdown is not None], stop, budget)
    by_lesson = {
        lesson: _merged([flat for k in breakdown.keywords if (flat := found.get(id(k))) is not None])
        for lesson, breakdown in breakdowns
        if breakdown is not None
    }
    every = _merged(list(by_lesson.values()))  # (each lesson's merged: fewer to sort)
    shown = sum(1 for flat in found.values() if flat is not None)
    return Highlights(_listed(every), {lesson: _listed(flat) for lesson, flat in by_lesson.items()}, shown, len(found))


def hit_spans(breakdown: SalienceBreakdown, stop: int = JOURNAL_DISPLAY_LIMIT) -> list[Span]:
    """Where a lesson's keywords hit a text as a view highlights them: their matches that start before `stop` (the
    characters shown), those that overlap or touch made one span; within the budget (the keywords past it left
    out)."""
    return highlights([("", breakdown)], stop).spans


def _found(breakdowns: Sequence[SalienceBreakdown], stop: int, budget: int) -> dict[int, Any]:
    """id(hit keyword) -> its spans before `stop` as a flat (start, end, start, end, ...) array (a keyword's matches:
    16 bytes each, never a tuple each), or None for it and every one after the first whose reads and matches
    (`find_cost`, SPAN_CHARS each) do not fit in what is left of `budget`. Each keyword once."""
    import numpy as np

    found: dict[int, Any] = {}
    spent, spent_out = 0, False
    for breakdown in breakdowns:
        for keyword in breakdown.keywords:
            if not keyword.hit or id(keyword) in found:
                continue
            if not spent_out:
                read = keyword.find_cost(stop)
                room = (budget - spent - read) // SPAN_CHARS  # matches that fit
                spans = itertools.islice(keyword.spans_before(stop), max(room + 1, 0))
                flat = np.fromiter(itertools.chain.from_iterable(spans), dtype=np.int64)
                spent += read + len(flat) // 2 * SPAN_CHARS
                spent_out = spent > budget
            found[id(keyword)] = None if spent_out else flat
    return found


def _merged(flats: list[Any]) -> Any:
    """Flat (start, end, ...) arrays' spans, those that overlap or touch made one, in order, flat: one sort."""
    import numpy as np

    flat = np.concatenate(flats) if flats else np.zeros(0, dtype=np.int64)
    if len(flat) == 0:
        return flat
    starts, ends = flat[0::2], flat[1::2]
    order = np.argsort(starts, kind="stable")
    starts, reach = starts[order], np.maximum.accumulate(ends[order])  # the furthest end so far
    firsts = np.flatnonzero(np.concatenate([[True], starts[1:] > reach[:-1]]))  # each begins a span
    out = np.empty(2 * len(firsts), dtype=np.int64)
    out[0::2], out[1::2] = starts[firsts], reach[np.append(firsts[1:] - 1, len(reach) - 1)]
    return out


def _listed(flat: Any) -> list[Span]:
    values = flat.tolist()
    return list(zip(values[0::2], values[1::2], strict=True))
