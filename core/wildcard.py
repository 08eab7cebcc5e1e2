"""Wildcard keywords (SPEC 4: `*` matches `\\w*`), matched in time linear in the journal.

The obvious way, a regex such as `a\\w*\\w*b` per keyword, backtracks: `a****b` over an `a`
and a thousand `c`s takes minutes, `a*b` over 80k `a`s quadratic time. Here a keyword
`L0*L1*...*Lk` (runs of `*` collapsed: `\\w*\\w*` matches what `\\w*` does) is matched from
the occurrences of its literal parts, which the salience automaton already finds (all of
them, overlapping) in its one pass over the text:

- An occurrence of part i is *viable* when the rest of the keyword can follow it: some viable
  occurrence of part i+1 starts within the word run right after it (`\\w*` never crosses a
  non-word character). From the last part backwards that is one binary search per occurrence.
- The spans are then those `re.finditer` gives for the equivalent regex: the leftmost start,
  and each `\\w*` as long as the rest still matches (what greedy backtracking settles on), i.e.
  the last viable occurrence of the next part within reach; the search goes on at the end.

Where a word run ends is found by scanning each stretch of text at most once (positions are
visited right to left and a scan stops at the previous position), so the whole is linear in
the text plus the number of occurrences times log.
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from collections.abc import Iterable

_WORD_RUN = re.compile(r"\w*")
_STARS = re.compile(r"\*+")


def _run_length(text: str, start: int, stop: int) -> int:
    """How many word characters follow `start`, not looking at or past `stop`."""
    found = _WORD_RUN.match(text, start, stop)
    return 0 if found is None else found.end() - start


def collapse_stars(key: str) -> str:
    """The keyword with every run of `*` made one `*` (it matches the same spans)."""
    return _STARS.sub("*", key)


def run_ends(text: str, positions: Iterable[int]) -> dict[int, int]:
    """For each position, where the run of word characters starting there ends (the position
    itself when the character there is not one). Linear: each stretch is scanned once."""
    out: dict[int, int] = {}
    following = len(text)
    following_end = len(text)
    for x in sorted(set(positions), reverse=True):
        end = _run_length(text, x, following) + x
        if end == following:  # the run reaches the next known position: it ends where that one's does
            end = following_end
        out[x] = end
        following, following_end = x, end
    return out


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

    def positions_needed(self, starts: list[list[int]]) -> Iterable[int]:
        """Positions whose word-run end `spans` asks for (given each part's occurrences)."""
        for part, found in zip(self.parts, starts, strict=True):
            yield from found
            yield from (p + len(part) for p in found)

    def spans(
        self, text: str, starts: list[list[int]], run_end: dict[int, int], reversed_text: str | None = None
    ) -> list[tuple[int, int]]:
        """Non-overlapping (start, end) matches in `text` (the lowered journal), left to right.

        `starts[i]`: sorted start offsets of every occurrence of part i; `run_end`: `run_ends`
        of at least `positions_needed(starts)`; `reversed_text`: text[::-1], needed (and built
        when not given) only for a keyword with a leading `*`."""
        parts = self.parts
        last = len(parts) - 1
        viable: list[list[int]] = [[] for _ in parts]
        viable[last] = starts[last]
        for i in range(last - 1, -1, -1):
            following, length = viable[i + 1], len(parts[i])
            if not following:
                return []
            keep = []
            for p in starts[i]:
                e = p + length
                j = bisect_left(following, e)
                if j < len(following) and following[j] <= run_end[e]:
                    keep.append(p)
            viable[i] = keep
        first = viable[0]
        spans: list[tuple[int, int]] = []
        search_from = 0
        index = 0
        n = len(text)
        while True:
            index = bisect_left(first, search_from, index)
            if index == len(first):
                return spans
            q = first[index]
            start = q
            if self.leading:
                # the leftmost start is where the word run before q begins (not before search_from);
                # the leading \w* then reaches as far as the run goes: the last viable q within it
                if reversed_text is None:
                    reversed_text = text[::-1]
                back = _run_length(reversed_text, n - q, n - search_from)
                start = q - back
                q = first[bisect_right(first, run_end[q]) - 1]
            end = self._extend(q, viable, run_end)
            spans.append((start, end))
            search_from = end

    def _extend(self, q: int, viable: list[list[int]], run_end: dict[int, int]) -> int:
        """End of the greedy match whose first part occurs (viably) at q."""
        parts = self.parts
        end = q + len(parts[0])
        for i in range(1, len(parts)):
            following = viable[i]
            q = following[bisect_right(following, run_end[end]) - 1]
            end = q + len(parts[i])
        return run_end[end] if self.trailing else end
