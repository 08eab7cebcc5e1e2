"""How often each plain keyword a journal mentions occurs, and where first: every one of them in one pass.

A plain keyword's count is `str.count`'s in the lowered journal: its non-overlapping occurrences, each looked for
from where the last one ended (`aa` in `aaaaa`: 2). A `str.count` for each keyword read the whole journal once a
keyword (100 hit keywords over 60 MB: 8.4 s of a 10 s `explain`; 85,000 over 10 MB: not done after ten minutes).
Here one Aho-Corasick pass reports every occurrence of every keyword, overlapping ones too, a read at a time; of
each keyword's, those `str.count` takes are found a read at a time in linear time (`_Taking.take`), and the
first `keep` of them are kept (explain's offsets).

The pass's work is the occurrences it reports: keywords nested in one another (`a`, `aa`, ... over a journal of
`a`s) make up to 100 a character (a keyword is at most 100 characters), and each costs about a microsecond. Past
one every COUNT_CHARS_PER_WORK characters of journal (at least COUNT_WORK_FLOOR, whatever its length) the pass
stops, and the first ONE_AT_A_TIME keywords (or more, while the work of counting them stays within
ONE_AT_A_TIME_CHARS: `_one_at_a_time`) are counted one at a time instead (a `str.find` from the end of each of its
first ones, then `str.count` from there: one read of the journal each); the others are not counted (`Counts.count`
None; explain says so: docs/format.md §3). Ordinary journals come nowhere near it (100 keywords over 60 MB of a
coding journal: one every 24 characters).
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import Any

# At most one occurrence every COUNT_CHARS_PER_WORK characters of journal, and COUNT_WORK_FLOOR whatever its length:
# an occurrence reported costs about a microsecond (`str.count` reads a thousand characters in that time).
COUNT_CHARS_PER_WORK = 4
COUNT_WORK_FLOOR = 1 << 20
ONE_AT_A_TIME = 16  # keywords counted each by itself past that (a few heavy ones: `str.count` is quick on them),
ONE_AT_A_TIME_CHARS = 1 << 29  # or more while the work of counting them stays within this (~0.5 s; `search_cost`)
# A `str.find` call and its step in the loop, in characters read (~0.25 us; a read goes ~1 ns a character): 7,209
# keywords of about 900 occurrences each over a 73 KB journal made 5.9M of them (2.5 s) that no budget counted.
FIND_CHARS = 256
# CPython's `str.find` and `str.count` read in linear time (the two-way search; one character: a scan for it)
# except for keywords under PLAIN_SEARCH_KEYWORD characters and over texts under PLAIN_SEARCH_TEXT (from the offset
# searched from), where a plain search compares up to the keyword's length at each position
# (Objects/stringlib/fastsearch.h): measured 2 to 7 ns a character for keywords of 2 to 5 characters over `a`s,
# 35 ns for `a..abaa` (99 characters) over 29,000 `a`s (4.2 s for 4,471 such keywords, where 0.5 s was meant).
PLAIN_SEARCH_KEYWORD = 6
PLAIN_SEARCH_TEXT = 30_000
_READ_MATCHES = 1 << 20  # occurrences a read may report at most (where every character ends the longest many)
_WINDOW = 1 << 14  # characters a read covers at least


def uncounted_reason() -> str:
    """What explain says of the keywords not counted (docs/format.md §3)."""
    return (
        f"hit keywords not counted: together they occur more than once every {COUNT_CHARS_PER_WORK} characters of "
        f"the journal (and more than {COUNT_WORK_FLOOR:,} times), past what counting them together may go through; "
        f"the first ones (at least {ONE_AT_A_TIME}) were counted one at a time"
    )


def count_budget(n: int) -> int:
    """The most occurrences counting the keywords of a journal of `n` characters may go through."""
    return max(n // COUNT_CHARS_PER_WORK, COUNT_WORK_FLOOR)


class Counts:
    """What was found of each keyword (by its case-folded form): its count and the start offsets in the lowered
    text of its first `keep` occurrences, or None for both when it was not counted. `work`: the occurrences the
    pass went through; `counted`: whether every keyword was."""

    def __init__(self, keys: Sequence[str], counts: Any, starts: Any, bounds: list[int], work: int) -> None:
        self._slot = {key: slot for slot, key in enumerate(keys)}
        self._counts, self._starts, self._bounds = counts, starts, bounds  # count -1: not counted
        self.work = work
        self.counted = bool((counts >= 0).all())

    def count(self, key: str) -> int | None:
        slot = self._slot.get(key)
        count = 0 if slot is None else int(self._counts[slot])
        return None if count < 0 else count

    def first(self, key: str) -> list[int] | None:
        """Start offsets (lowered text) of the keyword's first `keep` occurrences; None when not counted."""
        slot = self._slot.get(key)
        if slot is None:
            return []
        if self._counts[slot] < 0:
            return None
        return list(self._starts[self._bounds[slot] : self._bounds[slot + 1]].tolist())


def plain_counts(lowered: str, keys: Sequence[str], keep: int, budget: int | None = None, window: int = 0) -> Counts:
    """Each of `keys` (plain, case-folded, distinct)'s count in `lowered` and its first `keep` occurrences, from
    one pass going through at most `budget` occurrences (None: `count_budget`). `window`: characters a read covers
    (0: as many as make at most _READ_MATCHES occurrences; tests make it small)."""
    import ahocorasick
    import numpy as np

    n = len(lowered)
    budget = count_budget(n) if budget is None else budget
    if not keys:
        return Counts(keys, np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64), [0], 0)
    automaton = ahocorasick.Automaton(ahocorasick.STORE_INTS)
    for slot, key in enumerate(keys):
        automaton.add_word(key, slot)
    automaton.make_automaton()
    lengths = np.array([len(key) for key in keys], dtype=np.int64)
    longest = int(lengths.max())
    window = window or max(_WINDOW, _READ_MATCHES // longest)
    taking = _Taking(lengths, n, keep)
    work = 0
    for begin in range(0, n, window):
        start = max(0, begin - (longest - 1))  # reads overlap: an occurrence across the border is whole in one
        flat = np.fromiter(itertools.chain.from_iterable(automaton.iter(lowered[start : begin + window])), np.int64)
        ends, slots = flat[0::2] + (start + 1), flat[1::2]
        new = ends > begin  # (those ending at or before it were the last read's)
        ends, slots = ends[new], slots[new]
        work += len(ends)
        if work > budget:
            return _one_at_a_time(lowered, keys, keep, work)
        taking.take(ends - lengths[slots], slots)
    return Counts(keys, *taking.result(), work)


def search_cost(n: int, length: int) -> int:
    """What one read of a journal of `n` characters for a keyword of `length` costs, in characters read linearly:
    each character 4 + length / 2 where CPython searches plainly (all of them for a keyword under
    PLAIN_SEARCH_KEYWORD characters, else the last PLAIN_SEARCH_TEXT: a `str.find` from an offset there), else 1."""
    plain = 0 if length == 1 else n if length < PLAIN_SEARCH_KEYWORD else min(n, PLAIN_SEARCH_TEXT)
    return n - plain + plain * (4 + length // 2)


def _one_at_a_time(lowered: str, keys: Sequence[str], keep: int, work: int) -> Counts:
    """The first ONE_AT_A_TIME keywords, then more while the work of counting them stays within
    ONE_AT_A_TIME_CHARS, each counted by itself (`_count_one`: one read of `lowered`, `search_cost`, and at most
    `keep` finds, FIND_CHARS each); the others (from the first that might not fit on) not counted. A keyword is
    counted only when its most work fits in what is left, so the work stays within the budget (the first
    ONE_AT_A_TIME's aside)."""
    import numpy as np

    counts = np.full(len(keys), -1, dtype=np.int64)
    starts: list[int] = []
    bounds = [0]
    spent = 0
    for slot, key in enumerate(keys):
        read = search_cost(len(lowered), len(key))
        if slot >= ONE_AT_A_TIME and spent + read + keep * FIND_CHARS > ONE_AT_A_TIME_CHARS:
            break
        count, first, finds = _count_one(lowered, key, keep)
        spent += read + finds * FIND_CHARS
        counts[slot] = count
        starts += first
        bounds.append(len(starts))
    bounds += [len(starts)] * (len(keys) + 1 - len(bounds))  # (those not counted: none kept)
    return Counts(keys, counts, np.array(starts, dtype=np.int64), bounds, work)


def _count_one(lowered: str, key: str, keep: int) -> tuple[int, list[int], int]:
    """The keyword's `str.count` in `lowered`, the starts of its first `keep` occurrences and the `str.find` calls
    made: a find from where the last occurrence ended, up to the `keep`th, then a count from where that one ends
    (the same non-overlapping occurrences, leftmost first; one read of `lowered` in all)."""
    find, length = lowered.find, len(key)
    starts: list[int] = []
    at = 0
    while len(starts) < keep:
        at = find(key, at)
        if at == -1:
            return len(starts), starts, len(starts) + 1
        starts.append(at)
        at += length
    return keep + lowered.count(key, at), starts, keep


class _Taking:
    """The occurrences `str.count` takes of each keyword, read by read: an occurrence is taken when it starts at
    or after the end of the keyword's last one taken (`ends`); the kept ones' starts, in order, by keyword."""

    def __init__(self, lengths: Any, n: int, keep: int) -> None:
        import numpy as np

        self._lengths, self._stride, self._keep = lengths, n + 1, keep
        self._ends = np.zeros(len(lengths), dtype=np.int64)  # where each keyword's last taken occurrence ends
        self._counts = np.zeros(len(lengths), dtype=np.int64)
        self._pieces: list[tuple[Any, Any]] = []  # (slots, starts) kept, a read at a time

    def take(self, starts: Any, slots: Any) -> None:
        """A read's occurrences (each keyword's in the order they start, as the automaton reports them by end)."""
        import numpy as np

        if not len(slots):
            return
        order = np.argsort(slots, kind="stable")
        slots, starts = slots[order], starts[order]
        sort_key = slots * self._stride + starts  # increasing: by keyword, then by start
        m = len(sort_key)
        # The occurrence taken after each one, if that one is taken: the keyword's first starting at or after its end.
        after = np.searchsorted(sort_key, sort_key + self._lengths[slots])
        inside = after < m
        after[inside] = np.where(slots[after[inside]] == slots[inside], after[inside], m)  # (not the next keyword's)
        keywords = slots[np.r_[0, np.flatnonzero(np.diff(slots)) + 1]]
        heads = np.searchsorted(sort_key, keywords * self._stride + self._ends[keywords])
        inside = heads < m
        heads = heads[inside][slots[heads[inside]] == keywords[inside]]
        taken = np.sort(_reached(heads, after))
        slots_taken, starts_taken = slots[taken], starts[taken]
        counts = np.bincount(slots_taken, minlength=len(self._lengths))
        last = np.r_[np.flatnonzero(np.diff(slots_taken)), len(slots_taken) - 1] if len(taken) else taken
        self._ends[slots_taken[last]] = starts_taken[last] + self._lengths[slots_taken[last]]
        # the first ones of each keyword while it has fewer than `keep` kept: its rank among this read's taken
        group_start = np.r_[0, np.flatnonzero(np.diff(slots_taken)) + 1] if len(taken) else taken
        rank = np.arange(len(taken)) - np.repeat(group_start, np.diff(np.r_[group_start, len(taken)]))
        wanted = rank < self._keep - np.minimum(self._counts[slots_taken], self._keep)
        if wanted.any():
            self._pieces.append((slots_taken[wanted], starts_taken[wanted]))
        self._counts += counts

    def result(self) -> tuple[Any, Any, list[int]]:
        """(counts, kept starts by keyword, each keyword's first index into them; one more at the end)."""
        import numpy as np

        if self._pieces:
            slots = np.concatenate([slots for slots, _ in self._pieces])
            starts = np.concatenate([starts for _, starts in self._pieces])
            order = np.argsort(slots, kind="stable")  # each keyword's in the order read
            slots, starts = slots[order], starts[order]
        else:
            slots = starts = np.zeros(0, dtype=np.int64)
        bounds = np.searchsorted(slots, np.arange(len(self._lengths) + 1)).tolist()
        return self._counts, starts, bounds


def _reached(heads: Any, after: Any) -> Any:
    """Every index on the paths from `heads` along `after` (len(after): the end), by doubling: from the steps
    [0, 2^k) from each head, their images 2^k steps on, while any is left (linear times the log)."""
    import numpy as np

    end = len(after)
    jump = np.r_[after, end]  # 2^k steps on (the end stays the end)
    reached = heads
    while True:
        on = jump[reached]
        on = on[on < end]
        if not len(on):
            return reached
        reached = np.concatenate((reached, on))
        jump = jump[jump]
