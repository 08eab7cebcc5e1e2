"""Salience: which of a lesson's keywords a journal mentions, found in one pass, and why.

Semantics (SPEC 4, gptme's): case-insensitive substring, no word boundaries; ``*`` inside
a keyword matches ``\\w*``; keywords are trimmed and those left empty or all-``*`` are not
counted. Counts are of non-overlapping matches, offsets point into the original text.

Plain keywords go into one Aho-Corasick automaton, which reports every occurrence of
every keyword in a single scan (a regex alternation cannot: its matches never overlap,
so ``git`` inside ``git worktree`` would be lost). Wildcard keywords are rare and each
gets its own regex.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache

NO_KEYWORD_SALIENCE = 0.5
SNIPPET_RADIUS = 40


def normalize_keyword(raw: str) -> str | None:
    """The keyword as matched, or None when it does not count (empty or only ``*``)."""
    keyword = raw.strip()
    if not keyword.replace("*", "").strip():
        return None
    return keyword


def counted_keywords(raw: Iterable[str]) -> list[str]:
    """Counted keywords of one lesson, in order, without repeats (a repeat is one keyword)."""
    seen: dict[str, str] = {}
    for item in raw:
        keyword = normalize_keyword(item)
        if keyword is not None:
            seen.setdefault(casekey(keyword), keyword)
    return list(seen.values())


@lru_cache(maxsize=1 << 16)
def casekey(keyword: str) -> str:
    """The case-folded form keywords and journals are compared in (character by character).
    Cached: a library repeats keywords, and every breakdown looks each one up."""
    return _lower_same_length(keyword)[0]


def _lower_same_length(text: str) -> tuple[str, list[int] | None]:
    """Lower-case text character by character; when that changes lengths (rare scripts) also
    map offsets back. `str.lower()` alone is context-dependent (a final sigma lowers to 'ς'
    at the end of a word), so it is only the fast path when it cannot differ."""
    lowered = text.lower()
    if len(lowered) == len(text) and "Σ" not in text:
        return lowered, None
    pieces: list[str] = []
    back: list[int] = []
    for index, char in enumerate(text):
        low = char.lower()
        pieces.append(low)
        back.extend([index] * len(low))
    back.append(len(text))
    return "".join(pieces), back


@dataclass(frozen=True, slots=True)
class KeywordHit:
    """One keyword's part in a salience value."""

    keyword: str
    hit: bool
    count: int
    offsets: tuple[int, ...]
    lengths: tuple[int, ...] = ()

    def spans(self) -> list[tuple[int, int]]:
        return [(start, start + length) for start, length in zip(self.offsets, self.lengths, strict=True)]


@dataclass(frozen=True)
class SalienceBreakdown:
    lesson_id: str
    salience: float
    keywords: tuple[KeywordHit, ...]

    @property
    def hits(self) -> int:
        return sum(1 for k in self.keywords if k.hit)

    @property
    def hit_keywords(self) -> list[str]:
        return [k.keyword for k in self.keywords if k.hit]

    @property
    def missed_keywords(self) -> list[str]:
        return [k.keyword for k in self.keywords if not k.hit]


def snippet(text: str, start: int, end: int, radius: int = SNIPPET_RADIUS) -> str:
    """The journal around one match, on one line."""
    left = max(0, start - radius)
    right = min(len(text), end + radius)
    piece = text[left:right].replace("\r", " ").replace("\n", " ").replace("\t", " ")
    return ("…" if left > 0 else "") + piece + ("…" if right < len(text) else "")


def _is_word(char: str) -> bool:
    """What `\\w` matches in a str pattern (CPython: alphanumeric or underscore)."""
    return char.isalnum() or char == "_"


class _Wildcard:
    """A keyword with `*` (matching \\w*), searched in the lower-cased text.

    Its first literal part goes into the automaton as an anchor; the regex is tried only where
    an anchor occurs. Without a leading `*` a match can only start at an anchor; with one, it
    starts at the beginning of the word run before the anchor, which is exactly where
    finditer's leftmost match would begin."""

    def __init__(self, key: str) -> None:
        parts = key.split("*")
        self.regex = re.compile(r"\w*".join(re.escape(part) for part in parts))
        self.leading = key.startswith("*")
        self.anchor = next(part for part in parts if part)

    def spans(self, lowered: str, anchor_starts: list[int]) -> list[tuple[int, int]]:
        spans: list[tuple[int, int]] = []
        search_from = 0
        for q in anchor_starts:
            if q < search_from:
                continue
            p = q
            if self.leading:
                while p > search_from and _is_word(lowered[p - 1]):
                    p -= 1
            m = self.regex.match(lowered, p)
            if m is not None and m.end() > m.start():
                spans.append(m.span())
                search_from = m.end()
        return spans


class Scan(Mapping[str, list[tuple[int, int]]]):
    """Where each keyword occurs: case-folded keyword -> non-overlapping (start, end) spans in
    the original text. Offsets are kept as tuples, so building explanations stays cheap."""

    def __init__(self) -> None:
        self._found: dict[str, tuple[tuple[int, ...], tuple[int, ...]]] = {}

    def add(self, key: str, offsets: tuple[int, ...], lengths: tuple[int, ...]) -> None:
        self._found[key] = (offsets, lengths)

    def offsets(self, key: str) -> tuple[tuple[int, ...], tuple[int, ...]]:
        return self._found.get(key, ((), ()))

    def __getitem__(self, key: str) -> list[tuple[int, int]]:
        offsets, lengths = self._found[key]
        return [(a, a + n) for a, n in zip(offsets, lengths, strict=True)]

    def __iter__(self) -> Iterator[str]:
        return iter(self._found)

    def __len__(self) -> int:
        return len(self._found)

    def __contains__(self, key: object) -> bool:
        return key in self._found


class KeywordMatcher:
    """Finds every occurrence of a fixed set of keywords in a text, in one pass."""

    def __init__(self, keywords: Iterable[str]) -> None:
        import ahocorasick

        self._keys: list[str] = []  # automaton entries: a plain keyword, a wildcard's anchor, or both
        self._plain: list[bool] = []
        self._anchored: list[list[tuple[str, _Wildcard]]] = []
        slots: dict[str, int] = {}
        seen: set[str] = set()
        for raw in keywords:
            keyword = normalize_keyword(raw)
            if keyword is None:
                continue
            key = casekey(keyword)
            if key in seen:
                continue
            seen.add(key)
            wildcard = _Wildcard(key) if "*" in key else None
            entry = wildcard.anchor if wildcard is not None else key
            slot = slots.get(entry)
            if slot is None:
                slot = slots[entry] = len(self._keys)
                self._keys.append(entry)
                self._plain.append(False)
                self._anchored.append([])
            if wildcard is None:
                self._plain[slot] = True
            else:
                self._anchored[slot].append((key, wildcard))
        self._automaton = ahocorasick.Automaton()
        for slot, entry in enumerate(self._keys):
            self._automaton.add_word(entry, slot)
        if self._keys:
            self._automaton.make_automaton()

    def scan(self, text: str) -> Scan:
        import numpy as np

        found = Scan()
        if not self._keys:
            return found
        lowered, back = _lower_same_length(text)
        # All (end, slot) matches in one C-level pass, then grouped per entry with numpy:
        # a Python loop over every match costs more than the automaton itself.
        flat = np.fromiter(itertools.chain.from_iterable(self._automaton.iter(lowered)), dtype=np.int64)
        pairs = flat.reshape(-1, 2)
        order = np.argsort(pairs[:, 1], kind="stable")  # within an entry, ends stay increasing
        ends, slots = pairs[order, 0] + 1, pairs[order, 1]
        cuts = np.flatnonzero(np.diff(slots)) + 1
        groups = zip(np.split(ends, cuts), slots[np.r_[0, cuts]].tolist(), strict=True) if len(slots) else iter(())
        wild_spans: dict[str, list[tuple[int, int]]] = {}
        for group_ends, slot in groups:
            length = len(self._keys[slot])
            starts = group_ends - length
            for key, wildcard in self._anchored[slot]:
                spans = wildcard.spans(lowered, starts.tolist())
                if spans:
                    wild_spans[key] = spans
            if not self._plain[slot]:
                continue
            if len(starts) > 1 and bool(np.any(np.diff(starts) < length)):
                keep, last_end = [], -1
                for i, start in enumerate(starts.tolist()):  # greedy left to right, like str.count
                    if start >= last_end:
                        keep.append(i)
                        last_end = start + length
                starts = starts[keep]
            offsets = starts.tolist()
            if back is None:
                found.add(self._keys[slot], tuple(offsets), (length,) * len(offsets))
            else:
                found.add(self._keys[slot], *_original(offsets, [a + length for a in offsets], back))
        for key, spans in sorted(wild_spans.items()):
            starts_list = [a for a, _ in spans]
            ends_list = [b for _, b in spans]
            if back is None:
                found.add(key, tuple(starts_list), tuple(b - a for a, b in spans))
            else:
                found.add(key, *_original(starts_list, ends_list, back))
        return found


def _original(starts: list[int], ends: list[int], back: list[int]) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """Offsets and lengths in the original text, for text whose lowering changed lengths."""
    offsets = tuple(back[a] for a in starts)
    return offsets, tuple(back[b - 1] + 1 - a for a, b in zip(offsets, ends, strict=True))


def breakdown_from_scan(
    lesson_id: str,
    keywords: Sequence[str],
    found: Scan,
    shared: dict[str, KeywordHit] | None = None,
) -> SalienceBreakdown:
    """One lesson's breakdown from a scan; `shared` reuses hits of keywords several lessons have."""
    counted = counted_keywords(keywords)
    hits = []
    for keyword in counted:
        hit = shared.get(keyword) if shared is not None else None
        if hit is None:
            offsets, lengths = found.offsets(casekey(keyword))
            hit = KeywordHit(keyword, bool(offsets), len(offsets), offsets, lengths)
            if shared is not None:
                shared[keyword] = hit
        hits.append(hit)
    if not counted:
        value = NO_KEYWORD_SALIENCE
    else:
        value = sum(1 for h in hits if h.hit) / len(counted)
    return SalienceBreakdown(lesson_id, value, tuple(hits))


def salience_breakdowns(text: str, lessons: Sequence[tuple[str, Sequence[str]]]) -> list[SalienceBreakdown]:
    """Salience with explanation for each (lesson_id, keywords) over one journal, one scan."""
    matcher = KeywordMatcher(k for _, keywords in lessons for k in keywords)
    found = matcher.scan(text)
    shared: dict[str, KeywordHit] = {}
    return [breakdown_from_scan(lesson_id, kws, found, shared) for lesson_id, kws in lessons]


def salience(text: str, keywords: Sequence[str]) -> float:
    """Salience of one keyword list over one text."""
    return salience_breakdowns(text, [("", keywords)])[0].salience
