"""What a keyword scan of one journal found (core/library/salience.py): which keywords occur, and where, each
worked out only when asked.

A plain keyword's spans are found in the lowered text by `str.find`; every plain keyword's count and first
OFFSETS_LISTED spans come from one pass at the first question about any (core/library/hit_counts.py: a
`str.count` each read the journal once a keyword hit). A wildcard's come from matching it again
(core/library/wildcard.py): the first question about any wildcard matches every wildcard the journal mentions
in one pass over it and keeps each one's count and first OFFSETS_LISTED spans (all explain asks of each); only
a reader going past those matches that one again. A pass for each question made explain cost two passes over
the journal per wildcard (64 wildcards over 1 MB: 29 s of passes).
"""

from __future__ import annotations

import bisect
import itertools
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any

from lesson_credit.core.library.hit_counts import Counts, plain_counts, search_cost

# The most offsets of one keyword explain's JSON lists (its first ones; its `count` says how many in all):
# docs/format.md. Nested keywords over a journal of `a`s occur 100 times a character.
OFFSETS_LISTED = 1000

Spans = Iterable[tuple[int, int]]
# what is made of a wildcard's spans and a way to count them (without a step per span: Wildcard.count)
Take = Callable[[Spans, Callable[[], int]], Any]
# wildcard keys -> what `take` makes of each one's spans in the lowered text (the spans themselves without it)
Locate = Callable[[list[str], Take | None], dict[str, Any]]


class Scan(Mapping[str, list[tuple[int, int]]]):
    """Where each keyword occurs: case-folded keyword -> non-overlapping (start, end) spans in
    the original text.

    Which keywords occur is known at once; a plain keyword's spans are found in the lowered text
    (a `str.find` from the end of each match, like `str.count`) only when someone first asks,
    since deciding salience never needs them and an explanation only needs a few.
    `unmatched`: wildcard keywords not matched, the scan's work budget spent (core/library/keyword_limits.py)."""

    def __init__(
        self,
        plain: Sequence[str] = (),
        lowered: str = "",
        back: list[int] | None = None,
        wild: Iterable[str] = (),
        locate: Locate | None = None,
        unmatched: Iterable[str] = (),
        work: int = 0,
    ) -> None:
        self._lowered = lowered
        self._back = back
        self._locate = locate  # wildcard keywords' spans in the lowered text (matched again when asked)
        self._found: dict[str, tuple[tuple[int, ...], tuple[int, ...]]] = {}
        self._keys = [*sorted(wild), *plain]
        self._present = frozenset(self._keys)
        self.unmatched = frozenset(unmatched)
        self.work = work  # occurrences of wildcards' parts the matching went through (the budget's measure)
        self._summary: dict[str, tuple[int, list[tuple[int, int]]]] | None = None
        self._plain: Counts | None = None
        self._ending: dict[tuple[str, int], int] = {}  # (a character, an end) -> its count in the lowered text

    def occurs(self, key: str) -> bool:
        """Whether the keyword occurs at least once (cheaper than its offsets)."""
        return key in self._present

    def _wild(self, key: str) -> bool:
        return "*" in key and self._locate is not None

    def _summarised(self, key: str) -> tuple[int, list[tuple[int, int]]]:
        """A wildcard's count and first OFFSETS_LISTED spans in the lowered text: those of every wildcard that
        occurs, from one pass, at the first question about any."""
        if self._summary is None:
            assert self._locate is not None
            self._summary = self._locate([key for key in self._keys if "*" in key], _summary)
        return self._summary[key]

    def _counted(self) -> Counts:
        """Every plain keyword's count and first OFFSETS_LISTED starts in the lowered text, from one pass."""
        if self._plain is None:
            plain = [key for key in self._keys if not self._wild(key)]
            self._plain = plain_counts(self._lowered, plain, OFFSETS_LISTED)
        return self._plain

    def count(self, key: str) -> int | None:
        """How many non-overlapping occurrences the keyword has: a plain one's `str.count`'s in the lowered text
        (the same leftmost-first matches as `offsets`' `str.find` from the end of each; one in the lowered text is
        one in the original), or None when the plain keywords' pass went past its budget (not counted); a
        wildcard's counted as they are matched (never all held)."""
        if key not in self._present:
            return 0
        if self._wild(key):
            return self._summarised(key)[0]
        return self._counted().count(key)

    def first(self, key: str, limit: int) -> list[tuple[int, int]]:
        """The keyword's first `limit` spans in the original text; none of a plain keyword not counted (finding
        its occurrences costs what counting them does)."""
        if key in self._present and not self._wild(key) and limit <= OFFSETS_LISTED:
            starts = self._counted().first(key) or []
            back, length = self._back, len(key)
            return [(a, a + length) if back is None else (back[a], back[a + length - 1] + 1) for a in starts[:limit]]
        return list(itertools.islice(self.spans(key), limit))

    def spans(self, key: str, stop: int | None = None) -> Iterator[tuple[int, int]]:
        """The keyword's non-overlapping (start, end) spans in the original text, each found as it is read; with
        `stop`, those of a plain keyword that start before it (the first ones of a wildcard's past it may follow).
        A plain keyword's finds then read no further than such a span reaches: the one after the last span read
        on to the next or to the journal's end (200 keywords at the start of 16 MB shown by their first 2 MB:
        3.2 G characters read, 1.3 s)."""
        if key not in self._present:
            return
        found: Spans
        if self._wild(key):
            count, first = self._summarised(key)
            found = first if count == len(first) else _then(first, lambda: self._located(key))
        else:
            found = _find_all(self._lowered, key, len(self._lowered) if stop is None else self._lowered_stop(stop))
        back = self._back
        for a, b in found:
            yield (a, b) if back is None else (back[a], back[b - 1] + 1)

    def find_cost(self, key: str, stop: int) -> int:
        """What `spans(key, stop)` reads of the lowered text, in characters read linearly (`search_cost`'s measure),
        finds aside: the text up to where a span starting before `stop` can end, and where CPython searches plainly
        (`search_cost`: a keyword under 6 characters) the keyword's length again at each occurrence of its last
        character there (a plain search compares the keyword there: ordinary text has few, a text of `a`s one a
        character), never more than `search_cost`; plus that text once more for the count of that character, the
        first time it is asked for (each later keyword ending in it reads it from here). A wildcard: the text."""
        if key not in self._present:
            return 0
        if self._wild(key):
            return len(self._lowered)
        end = min(self._lowered_stop(stop) + len(key) - 1, len(self._lowered))
        worst = search_cost(end, len(key))
        if worst == end:  # (a read in linear time)
            return end
        counted = (key[-1], end)
        extra = 0 if counted in self._ending else end
        if counted not in self._ending:
            self._ending[counted] = self._lowered.count(key[-1], 0, end)
        return extra + min(worst, end + len(key) * self._ending[counted])

    def _lowered_stop(self, stop: int) -> int:
        """The first offset of the lowered text at or past `stop` in the original (`back` never decreases)."""
        if self._back is None:
            return min(max(stop, 0), len(self._lowered))
        return min(bisect.bisect_left(self._back, stop), len(self._lowered))

    def _located(self, key: str) -> Spans:
        """A wildcard's spans from a pass of its own (all of one wildcard's matches at once can be GBs)."""
        assert self._locate is not None
        found: Spans = self._locate([key], None)[key]
        return found

    def offsets(self, key: str) -> tuple[tuple[int, ...], tuple[int, ...]]:
        """Start offsets and lengths of the keyword's non-overlapping occurrences."""
        got = self._found.get(key)
        if got is not None:
            return got
        if key not in self._present:
            return ((), ())
        if self._wild(key):
            count, first = self._summarised(key)
            spans = first if count == len(first) else list(self._located(key))
            got = self._found[key] = self._original([a for a, _ in spans], [b for _, b in spans])
            return got
        find, length = self._lowered.find, len(key)
        starts, at = [], find(key)
        while at != -1:  # linear: each find starts where the last match ended
            starts.append(at)
            at = find(key, at + length)
        got = self._found[key] = self._original(starts, [a + length for a in starts])
        return got

    def _original(self, starts: list[int], ends: list[int]) -> tuple[tuple[int, ...], tuple[int, ...]]:
        if self._back is None:
            return tuple(starts), tuple(b - a for a, b in zip(starts, ends, strict=True))
        return _original(starts, ends, self._back)

    def __getitem__(self, key: str) -> list[tuple[int, int]]:
        if not self.occurs(key):
            raise KeyError(key)
        offsets, lengths = self.offsets(key)
        return [(a, a + n) for a, n in zip(offsets, lengths, strict=True)]

    def __iter__(self) -> Iterator[str]:
        return iter(self._keys)

    def __len__(self) -> int:
        return len(self._keys)

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and self.occurs(key)


def _summary(found: Spans, count: Callable[[], int]) -> tuple[int, list[tuple[int, int]]]:
    """How many spans, and the first OFFSETS_LISTED of them (the rest are counted, not held)."""
    first = list(itertools.islice(found, OFFSETS_LISTED))
    return len(first) if len(first) < OFFSETS_LISTED else count(), first


def _then(first: list[tuple[int, int]], again: Callable[[], Spans]) -> Iterator[tuple[int, int]]:
    """The spans kept, then those after them from matching again (only when a reader goes that far)."""
    yield from first
    yield from itertools.islice(again(), len(first), None)


def _find_all(lowered: str, key: str, stop: int) -> Iterator[tuple[int, int]]:
    """A plain keyword's non-overlapping (start, end) spans in `lowered` that start before `stop`: each find from
    the last match's end, reading no further than a match starting before `stop` ends."""
    find, length = lowered.find, len(key)
    end = stop + length - 1
    at = find(key, 0, end)
    while at != -1:
        yield at, at + length
        at = find(key, at + length, end)


def _original(starts: list[int], ends: list[int], back: list[int]) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """Offsets and lengths in the original text, for text whose lowering changed lengths."""
    offsets = tuple(back[a] for a in starts)
    return offsets, tuple(back[b - 1] + 1 - a for a, b in zip(offsets, ends, strict=True))
