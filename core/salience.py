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

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

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


def _wildcard_regex(keyword: str) -> re.Pattern[str]:
    parts = [re.escape(part) for part in keyword.split("*")]
    return re.compile(r"\w*".join(parts), re.IGNORECASE)


def casekey(text: str) -> str:
    """The case-folded form keywords and journals are compared in (character by character)."""
    return _lower_same_length(text)[0]


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


@dataclass(frozen=True)
class KeywordHit:
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


class KeywordMatcher:
    """Finds every occurrence of a fixed set of keywords in a text, in one pass."""

    def __init__(self, keywords: Iterable[str]) -> None:
        import ahocorasick

        self._plain: list[str] = []
        self._wild: dict[str, re.Pattern[str]] = {}
        self._automaton = ahocorasick.Automaton()
        seen: set[str] = set()
        for raw in keywords:
            keyword = normalize_keyword(raw)
            if keyword is None:
                continue
            key = casekey(keyword)
            if key in seen:
                continue
            seen.add(key)
            if "*" in keyword:
                self._wild[key] = _wildcard_regex(keyword)
            else:
                self._automaton.add_word(key, (len(self._plain), len(key)))
                self._plain.append(key)
        self._has_plain = bool(self._plain)
        if self._has_plain:
            self._automaton.make_automaton()

    def scan(self, text: str) -> dict[str, list[tuple[int, int]]]:
        """Non-overlapping (start, end) spans per lower-cased keyword that occurs in text."""
        found: dict[str, list[tuple[int, int]]] = {}
        if self._has_plain:
            lowered, back = _lower_same_length(text)
            last_end = [-1] * len(self._plain)
            # iter() yields matches by end position; for one keyword, starts increase too,
            # so a greedy left-to-right pick gives the non-overlapping count (like str.count).
            for end_index, (slot, length) in self._automaton.iter(lowered):
                start = end_index - length + 1
                if start < last_end[slot]:
                    continue
                last_end[slot] = end_index + 1
                if back is not None:
                    span = (back[start], back[end_index] + 1)
                else:
                    span = (start, end_index + 1)
                found.setdefault(self._plain[slot], []).append(span)
        for keyword, regex in self._wild.items():
            spans = [m.span() for m in regex.finditer(text) if m.end() > m.start()]
            if spans:
                found[keyword] = spans
        return found


def breakdown_from_scan(
    lesson_id: str, keywords: Sequence[str], found: dict[str, list[tuple[int, int]]]
) -> SalienceBreakdown:
    counted = counted_keywords(keywords)
    hits = []
    for keyword in counted:
        spans = found.get(casekey(keyword), [])
        hits.append(
            KeywordHit(
                keyword=keyword,
                hit=bool(spans),
                count=len(spans),
                offsets=tuple(s for s, _ in spans),
                lengths=tuple(e - s for s, e in spans),
            )
        )
    if not counted:
        value = NO_KEYWORD_SALIENCE
    else:
        value = sum(1 for h in hits if h.hit) / len(counted)
    return SalienceBreakdown(lesson_id, value, tuple(hits))


def salience_breakdowns(text: str, lessons: Sequence[tuple[str, Sequence[str]]]) -> list[SalienceBreakdown]:
    """Salience with explanation for each (lesson_id, keywords) over one journal, one scan."""
    matcher = KeywordMatcher(k for _, keywords in lessons for k in keywords)
    found = matcher.scan(text)
    return [breakdown_from_scan(lesson_id, kws, found) for lesson_id, kws in lessons]


def salience(text: str, keywords: Sequence[str]) -> float:
    """Salience of one keyword list over one text."""
    return salience_breakdowns(text, [("", keywords)])[0].salience
