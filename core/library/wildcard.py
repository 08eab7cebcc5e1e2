"""Wildcard keywords (docs/format.md §3: `*` matches `\\w*`), matched in time linear in the journal.

The obvious way, a regex such as `a\\w*\\w*b` per keyword, backtracks: `a****b` over an `a`
and a thousand `c`s takes minutes, `a*b` over 80k `a`s quadratic time. Here a keyword
`L0*L1*...*Lk` (runs of `*` collapsed: `\\w*\\w*` matches what `\\w*` does) is matched from
the occurrences of each literal part (the first part's, the *anchors*, come from the salience
automaton's one pass over the text), with numpy arrays rather than a Python step per occurrence:

- The *reach* of a position is where the run of word characters starting there ends (the first
  non-word character at or after it): `\\w*` never crosses one. One sorted array of the text's
  non-word positions answers every reach with a binary search.
- Backward: an occurrence of part i is *viable* when the rest of the keyword can follow it: some
  viable occurrence of part i+1 starts between its end and that end's reach.
- The spans are then those `re.finditer` gives for the equivalent regex: the leftmost start, and
  each `\\w*` as long as the rest still matches (what greedy backtracking settles on), i.e. the
  last viable occurrence of the next part within reach; the search goes on at the end. Each
  viable first occurrence's span is computed for all at once; the walk from one match to the
  next is a binary search per match.

A keyword of more than WILDCARD_MAX_PARTS literal parts is not matched (core/library/keyword_limits.py
`keyword_problem`): each part is a pass over the text; nor are a lesson's wildcard keywords beyond its first
WILDCARD_MAX_PER_LESSON (core/library/salience.py `_counted`), nor, in one journal, the wildcards
past its work budget (`work_budget`: each wildcard's work is its parts' occurrences, whatever
their number: KeywordMatcher._within_budget).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import numpy.typing as npt

from lesson_credit.core.library.keyword_limits import collapse_stars

_CHUNK = 1 << 20  # characters classified at a time (4 bytes each as UTF-32)
_STEP = 1 << 16  # occurrences a wildcard's matching works on at a time (each step's arrays are held at once)
_LATIN1_WORD = np.array([chr(c).isalnum() or c == ord("_") for c in range(256)])
_ASCII_WORD = _LATIN1_WORD[:128]

Positions = npt.NDArray[np.int64]


def non_word_positions(text: str) -> Positions:
    """Sorted offsets of the characters `\\w` does not match (str.isalnum() or `_`, as `re` decides)."""
    try:  # one byte a character
        codes = np.frombuffer(text.encode("latin-1"), dtype=np.uint8)
        return np.flatnonzero(~_LATIN1_WORD[codes]).astype(np.int64)
    except UnicodeEncodeError:  # a character beyond Latin-1
        pass
    found = [np.zeros(0, dtype=np.int64)]
    for start in range(0, len(text), _CHUNK):
        codes = np.frombuffer(text[start : start + _CHUNK].encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
        word = np.zeros(len(codes), dtype=bool)
        ascii_ = codes < 128
        word[ascii_] = _ASCII_WORD[codes[ascii_]]
        if not ascii_.all():
            distinct, which = np.unique(codes[~ascii_], return_inverse=True)
            word[~ascii_] = np.array([chr(c).isalnum() for c in distinct.tolist()], dtype=bool)[which]
        found.append(np.flatnonzero(~word).astype(np.int64) + start)
    return np.concatenate(found)


def _reach(non_word: Positions, n: int, positions: Positions) -> Positions:
    """For each position, where the run of word characters starting there ends."""
    index = np.searchsorted(non_word, positions, side="left")
    if not len(non_word):
        return np.full(len(positions), n, dtype=np.int64)
    return np.where(index < len(non_word), non_word[np.minimum(index, len(non_word) - 1)], np.int64(n))


def _last_within(sorted_: Positions, limits: Positions) -> Positions:
    """For each limit, the last element of `sorted_` at or before it (one exists: the caller knows). The limits
    take the array's type: searchsorted would otherwise make a copy of the whole array of the wider one."""
    return sorted_[np.searchsorted(sorted_, limits.astype(sorted_.dtype, copy=False), side="right") - 1]


class Wildcard:
    """One wildcard keyword, already trimmed and case-folded, with at least one literal part."""

    __slots__ = ("key", "parts", "leading", "trailing")

    def __init__(self, key: str) -> None:
        self.key = key
        pieces = collapse_stars(key).split("*")
        self.leading = pieces[0] == ""
        self.trailing = pieces[-1] == ""
        self.parts = tuple(piece for piece in pieces if piece)
        if not self.parts:
            raise ValueError(f"wildcard keyword {key!r} has no literal part")

    @property
    def anchor(self) -> str:
        """The literal part the automaton looks for."""
        return self.parts[0]

    def occurs(self, text: str, occurrences: list[Positions], non_word: list[Any]) -> bool:
        """Whether the keyword matches `text` at all (`spans` without working out each match)."""
        return bool(len(self.viable(text, occurrences, non_word)[0]))

    def spans(
        self, text: str, occurrences: list[Positions], non_word: list[Any], viable: list[Positions] | None = None
    ) -> Iterator[tuple[int, int]]:
        """Non-overlapping (start, end) matches in `text` (the lowered journal), left to right, each worked out
        as it is asked for (a count or the first few never hold them all: `a*` over `a a a ...` matches at every
        other character).

        `occurrences`: per literal part, the increasing start offsets of all its occurrences
        (overlapping ones too), as the salience automaton finds them.
        `non_word`: a one-item cache of `non_word_positions(text)` (filled on first need).
        `viable`: `viable(...)` when already worked out (for a wildcard of the same parts)."""
        viable_of = self.viable(text, occurrences, non_word) if viable is None else viable
        gaps: Positions = non_word[0]
        n = len(text)
        first = viable_of[0]
        at, search_from, step_at = 0, 0, -_STEP
        while at < len(first):  # leftmost first, then on from where each match ends (a step per match)
            if at >= step_at + _STEP:  # each viable first occurrence's match, a step of them at a time
                step_at = at
                begins, end = self._ends(gaps, n, viable_of, first[at : at + _STEP])
                following = np.searchsorted(first, end.astype(first.dtype, copy=False))  # the candidate after each
            stop = int(end[at - step_at])
            yield max(search_from, int(begins[at - step_at])), stop
            search_from, at = stop, int(following[at - step_at])

    def count(
        self, text: str, occurrences: list[Positions], non_word: list[Any], viable: list[Positions] | None = None
    ) -> int:
        """How many matches `spans` gives, without a Python step per match: from each match, the next is the first
        viable first occurrence at or after its end (`following`); the walk through a step of them is counted by
        jumps of 1, 2, 4, ... matches, each table made from the last (a step's tables are held at once)."""
        viable_of = self.viable(text, occurrences, non_word) if viable is None else viable
        gaps: Positions = non_word[0]
        first = viable_of[0]
        total, at = 0, 0
        while at < len(first):  # `at`: a match's first occurrence; the step is the candidates from it on
            size = min(_STEP, len(first) - at)
            end = self._ends(gaps, len(text), viable_of, first[at : at + size])[1]
            jumps = [np.searchsorted(first, end.astype(first.dtype, copy=False)) - at]  # >= size: out of the step
            while (1 << len(jumps)) < size:
                last = jumps[-1]
                jumps.append(np.where(last < size, last[np.minimum(last, size - 1)], last))
            here = 0
            for k in range(len(jumps) - 1, -1, -1):  # the furthest match within the step, by halving jumps
                if jumps[k][here] < size:
                    here = int(jumps[k][here])
                    total += 1 << k
            total += 1  # that match; the next is past the step
            at += int(jumps[0][here])
        return total

    def viable(self, text: str, occurrences: list[Positions], non_word: list[Any]) -> list[Positions]:
        """Per part, its viable occurrences: those the rest of the keyword can follow (the same for every wildcard
        of the same parts: `*` before the first or after the last changes only where a match begins or ends)."""
        if not non_word:
            non_word.append(non_word_positions(text))
        gaps: Positions = non_word[0]
        n, parts = len(text), self.parts
        viable = occurrences[-1]
        later: list[Positions] = [viable]  # viable occurrences of parts len-1, len-2, ..., 0
        for i in range(len(parts) - 2, -1, -1):
            found = occurrences[i]
            keep = np.zeros(len(found), dtype=bool)
            for at in range(0, len(found), _STEP):  # a step at a time: what it makes is held at once
                after = found[at : at + _STEP] + len(parts[i])
                j = np.searchsorted(viable, after.astype(viable.dtype, copy=False), side="left")  # not a copy of viable
                ok = j < len(viable)
                ok[ok] = viable[j[ok]] <= _reach(gaps, n, after[ok])
                keep[at : at + _STEP] = ok
            viable = found if keep.all() else found[keep]
            later.append(viable)
        return later[::-1]

    def _ends(self, gaps: Positions, n: int, viable_of: list[Positions], first: Positions) -> tuple[Any, Any]:
        """Where the match from each of the viable first occurrences `first` begins and ends."""
        parts = self.parts
        q, begins = first, first
        if self.leading:  # \w* before: from the start of the run, the last viable first part the run reaches
            before = np.searchsorted(gaps, first, side="left")  # the non-word character before each, if any
            begins = np.where(before > 0, gaps[np.maximum(before - 1, 0)] + 1, 0) if len(gaps) else first * 0
            q = _last_within(viable_of[0], _reach(gaps, n, first))
        for i in range(1, len(parts)):
            q = _last_within(viable_of[i], _reach(gaps, n, q + len(parts[i - 1])))
        end = q + len(parts[-1])
        if self.trailing:
            end = _reach(gaps, n, end)
        return begins, end
