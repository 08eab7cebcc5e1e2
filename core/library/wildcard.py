"""Wildcard keywords (docs/format.md §3: `*` matches `\\w*`), matched in time linear in the journal.

The obvious way, a regex such as `a\\w*\\w*b` per keyword, backtracks: `a****b` over an `a`
and a thousand `c`s takes minutes, `a*b` over 80k `a`s quadratic time. Here a keyword
`L0*L1*...*Lk` (runs of `*` collapsed: `\\w*\\w*` matches what `\\w*` does) is matched from
the occurrences of its first literal part, which the salience automaton finds in its one
pass over the text (the *anchors*):

- Forward: part i can only start within the word run right after an occurrence of part i-1
  (`\\w*` never crosses a non-word character). Those windows are merged and searched once,
  so each stretch of text is scanned once per part.
- Backward: an occurrence is *viable* when the rest of the keyword can follow it: some viable
  occurrence of the next part starts within its window. One binary search per occurrence.
- The spans are then those `re.finditer` gives for the equivalent regex: the leftmost start,
  and each `\\w*` as long as the rest still matches (what greedy backtracking settles on), i.e.
  the last viable occurrence of the next part within reach; the search goes on at the end.

Where a word run ends is found by scanning each stretch at most once: a batch of positions is
visited right to left and a scan stops at the previous position; the runs a match ends in (a
trailing `*`) or starts in (a leading one) are disjoint from one match to the next.
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right

_WORD_RUN = re.compile(r"\w*")
_STARS = re.compile(r"\*+")
WILDCARD_MAX_PARTS = 4  # literal parts between stars: matching costs a pass over the journal per part


def collapse_stars(key: str) -> str:
    """The keyword with every run of `*` made one `*` (it matches the same spans)."""
    return _STARS.sub("*", key)


def literal_parts(key: str) -> int:
    """How many literal parts a keyword's stars separate (`git*tree` 2, `*ok*` 1)."""
    return sum(1 for piece in _STARS.split(key) if piece)


def wildcard_problem(keyword: str) -> str | None:
    """Why a keyword is not matched (one line), or None: more than WILDCARD_MAX_PARTS literal
    parts, each a pass over every journal (`a*a*...*b` of 400 parts took minutes and GBs)."""
    if "*" not in keyword or (parts := literal_parts(keyword)) <= WILDCARD_MAX_PARTS:
        return None
    shown = repr(keyword) if len(keyword) <= 60 else repr(keyword[:57]) + "..."
    return (
        f"keyword {shown} has {parts} literal parts between its '*'s (at most {WILDCARD_MAX_PARTS} are matched); "
        "keyword ignored"
    )


def _run_length(text: str, start: int, stop: int) -> int:
    """How many word characters follow `start`, not looking at or past `stop`."""
    found = _WORD_RUN.match(text, start, stop)
    return 0 if found is None else found.end() - start


def run_ends(text: str, positions: list[int]) -> list[int]:
    """For each of the increasing `positions`, where the run of word characters starting there
    ends (the position itself at a non-word character). Each stretch is scanned once."""
    out = [0] * len(positions)
    following, following_end = len(text), len(text)
    for k in range(len(positions) - 1, -1, -1):
        x = positions[k]
        if x == following:
            out[k] = following_end
            continue
        end = x + _run_length(text, x, following)
        if end == following:  # the run reaches the next known position: it ends where that one's does
            end = following_end
        out[k] = end
        following, following_end = x, end
    return out


def _occurrences(text: str, part: str, windows: list[tuple[int, int]]) -> list[int]:
    """Start offsets of every occurrence of `part` (overlapping ones too) that starts inside one
    of the increasing, disjoint `windows` [a, b]."""
    found: list[int] = []
    for a, b in windows:
        position = text.find(part, a, b + len(part))
        while position != -1:
            found.append(position)
            position = text.find(part, position + 1, b + len(part))
    return found


def _merged(starts: list[int], ends: list[int]) -> list[tuple[int, int]]:
    """Windows [start, end] (increasing starts, non-decreasing ends) merged where they overlap."""
    windows: list[tuple[int, int]] = []
    for a, b in zip(starts, ends, strict=True):
        if windows and a <= windows[-1][1]:
            windows[-1] = (windows[-1][0], b)
        else:
            windows.append((a, b))
    return windows


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

    def spans(self, text: str, anchors: list[int], reversed_text: list[str]) -> list[tuple[int, int]]:
        """Non-overlapping (start, end) matches in `text` (the lowered journal), left to right.

        `anchors`: increasing start offsets of every occurrence of the first part.
        `reversed_text`: a one-item cache of text[::-1] (filled on first need; only a keyword
        with a leading `*` needs it)."""
        parts = self.parts
        last = len(parts) - 1
        occurrences = [anchors]
        gap_ends: list[list[int]] = []  # per part but the last: where the word run after each occurrence ends
        for i in range(1, len(parts)):
            ends = [p + len(parts[i - 1]) for p in occurrences[-1]]
            gap_ends.append(run_ends(text, ends))
            occurrences.append(_occurrences(text, parts[i], _merged(ends, gap_ends[-1])))
            if not occurrences[-1]:
                return []
        viable: list[list[int]] = [[] for _ in parts]
        viable[last] = occurrences[last]
        for i in range(last - 1, -1, -1):
            following, length = viable[i + 1], len(parts[i])
            viable[i] = [
                p
                for p, reach in zip(occurrences[i], gap_ends[i], strict=True)
                if (j := bisect_left(following, p + length)) < len(following) and following[j] <= reach
            ]
        reach_of = [dict(zip(occurrences[i], gap_ends[i], strict=True)) for i in range(last)]
        first = viable[0]
        n = len(text)
        spans: list[tuple[int, int]] = []
        search_from = 0
        index = 0
        while True:
            index = bisect_left(first, search_from, index)
            if index == len(first):
                return spans
            q = first[index]
            start = q
            if self.leading:
                # the leftmost start is where the word run before q begins (not before search_from);
                # the leading \w* then reaches as far as the run goes: the last viable q within it
                if not reversed_text:
                    reversed_text.append(text[::-1])
                start = q - _run_length(reversed_text[0], n - q, n - search_from)
                q = first[bisect_right(first, q + _run_length(text, q, n)) - 1]
            for i in range(1, len(parts)):
                following = viable[i]
                q = following[bisect_right(following, reach_of[i - 1][q]) - 1]
            end = q + len(parts[last])
            if self.trailing:
                end += _run_length(text, end, n)
            spans.append((start, end))
            search_from = end
