"""Salience: which of a lesson's keywords a journal mentions, found in one pass, and why.

Semantics (docs/format.md §3, gptme's): case-insensitive substring, no word boundaries; ``*`` inside
a keyword matches ``\\w*``; keywords are trimmed and those left empty or all-``*`` are not
counted. Counts are of non-overlapping matches, offsets point into the original text.

Plain keywords go into one Aho-Corasick automaton, which reports every occurrence of
every keyword in a single scan (a regex alternation cannot: its matches never overlap,
so ``git`` inside ``git worktree`` would be lost). A wildcard keyword's first literal part
goes into the same automaton as its anchor, and `lesson_credit.core.library.wildcard` finds its matches from there
in linear time (a regex per wildcard backtracks catastrophically).

Reporting a match costs more than reading a character, and a few frequent keywords make most
matches: a long journal's first sixteenth is scanned first, and when the keywords found there
made enough matches, the whole journal is scanned by an automaton without them. Where a plain
keyword occurs is looked up (`str.find`) only when asked.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from functools import lru_cache
from typing import Any

from msgspec import Struct

from lesson_credit.core.base.gc_pause import gc_paused
from lesson_credit.core.library.wildcard import (
    WILDCARD_MAX_PER_LESSON,
    Wildcard,
    keyword_problem,
    non_word_positions,
)

NO_KEYWORD_SALIENCE = 0.5
SNIPPET_RADIUS = 40


def normalize_keyword(raw: str) -> str | None:
    """The keyword as matched, or None when it does not count: empty, only ``*``, a wildcard of more than
    WILDCARD_MAX_PARTS literal parts, or longer than KEYWORD_MAX_CHARS (`keyword_problem`; lint reports it)."""
    keyword = raw.strip()
    if not keyword.replace("*", "").strip() or keyword_problem(keyword) is not None:
        return None
    return keyword


def counted_keywords(raw: Iterable[str]) -> list[str]:
    """Counted keywords of one lesson, in order, without repeats (a repeat is one keyword)."""
    return list(_counted(raw).values())


def counted_keys(raw: Iterable[str]) -> list[str]:
    """The case-folded forms of a lesson's counted keywords (what a scan reports hits of)."""
    return list(_counted(raw))


def _counted(raw: Iterable[str]) -> dict[str, str]:
    """A lesson's counted keywords by their case-folded form (the first spelling wins); its wildcard keywords
    beyond the first WILDCARD_MAX_PER_LESSON are not (`wildcards_beyond`)."""
    return _counting(raw)[0]


def wildcards_beyond(raw: Iterable[str]) -> int:
    """How many of a lesson's wildcard keywords are past its first WILDCARD_MAX_PER_LESSON, not counted (lint)."""
    return len(_counting(raw)[1])


def ignored_wildcards(text: str, raw: Iterable[str]) -> tuple[list[KeywordHit], int]:
    """The wildcard keywords of a lesson past its first WILDCARD_MAX_PER_LESSON (not counted) that `text`
    mentions, of the first WILDCARD_MAX_PER_LESSON of them (each looked for costs what a counted one does);
    and how many more of them were not looked for (explain)."""
    beyond = dict((casekey(keyword), keyword) for keyword in _counting(raw)[1])
    looked = dict(itertools.islice(beyond.items(), WILDCARD_MAX_PER_LESSON))
    if not looked:
        return [], 0
    found = KeywordMatcher.of_keys(looked).scan(text)
    hits = [hit for key, keyword in looked.items() if (hit := KeywordHit(keyword, key, found)).hit]
    return hits, len(beyond) - len(looked)


def _counting(raw: Iterable[str]) -> tuple[dict[str, str], list[str]]:
    seen: dict[str, str] = {}
    wildcards = 0
    beyond: list[str] = []
    for item in raw:
        keyword = normalize_keyword(item)
        if keyword is None or (key := casekey(keyword)) in seen:
            continue
        if "*" in keyword:
            if wildcards == WILDCARD_MAX_PER_LESSON:
                beyond.append(keyword)
                continue
            wildcards += 1
        seen[key] = keyword
    return seen, beyond


@lru_cache(maxsize=1 << 16)
def casekey(keyword: str) -> str:
    """The case-folded form keywords and journals are compared in (character by character).
    Cached: a library repeats keywords, and every breakdown looks each one up."""
    return _lower_same_length(keyword)[0]


# Every Latin-1 character lowers to one Latin-1 character, and none by context: a byte table.
_LATIN1_LOWER = bytes(ord(chr(code).lower()) for code in range(256))

# Lower-case letters a case-insensitive `re` search also takes for one another (gptme matches a keyword
# so in the lowered journal): each group's other members, then the one they are compared as. Python's
# `re` keeps the groups in `re._casefix`; tests/core/test_salience_unicode.py checks this table against
# what `re` does. Each group is compared as its member of lowest code that `\w` matches (a Latin-1
# member is always that one, so the byte table above needs no change).
_SAME_LETTER = dict(
    (other, group.split(">")[1])
    for group in (
        "\u0131>i \u017f>s \u03bc>\xb5 \u0345\u1fbe>\u03b9 \u1fd3>\u0390 \u1fe3>\u03b0 \u03d0>\u03b2 "
        "\u03f5>\u03b5 \u03d1>\u03b8 \u03f0>\u03ba \u03d6>\u03c0 \u03f1>\u03c1 \u03c3>\u03c2 \u03d5>\u03c6 "
        "\u1c80>\u0432 \u1c81>\u0434 \u1c82>\u043e \u1c83>\u0441 \u1c84\u1c85>\u0442 \u1c86>\u044a "
        "\u1c87>\u0463 \ua64b>\u1c88 \u1e9b>\u1e61 \ufb06>\ufb05"
    ).split()
    for other in group.split(">")[0]
)
_SAME_LETTER_FOUND = re.compile("[" + "".join(_SAME_LETTER) + "]")
_NOT_WORD_SAME_LETTER = "\u0345"  # the one member `\w` does not match (its group is compared as ι, which it does)


def _lower_same_length(text: str, same_letter: bool = True) -> tuple[str, list[int] | None]:
    """Lower-case text character by character, the letters of a `_SAME_LETTER` group made one (unless
    `same_letter` is False); when lowering changes lengths (rare scripts) also map offsets back.
    `str.lower()` lowers character by character but for a final sigma ('ς' at the end of a word,
    'σ' elsewhere): the two are one letter here."""
    if text.isascii():  # known without reading the text
        return text.lower(), None
    try:
        return text.encode("latin-1").translate(_LATIN1_LOWER).decode("latin-1"), None
    except UnicodeEncodeError:  # a character beyond Latin-1
        pass
    lowered, back = text.lower(), None
    if len(lowered) != len(text):
        pieces: list[str] = []
        back = []
        for index, char in enumerate(text):
            low = char.lower()
            pieces.append(low)
            back.extend([index] * len(low))
        back.append(len(text))
        lowered = "".join(pieces)
    if same_letter and _SAME_LETTER_FOUND.search(lowered):
        for other, letter in _SAME_LETTER.items():  # a C-speed pass each (`str.translate` with a dict is 20x slower)
            if other in lowered:
                lowered = lowered.replace(other, letter)
    return lowered, back


class KeywordHit:
    """One keyword's part in a salience value: whether the journal mentions it, and where.

    Whether is known at once; the offsets of every occurrence are worked out from the scan on
    first use, since deciding salience never needs them and an explanation only needs a few."""

    __slots__ = ("keyword", "hit", "_key", "_scan", "_where")

    def __init__(self, keyword: str, key: str, scan: Scan) -> None:
        self.keyword = keyword
        self._key = key
        self._scan = scan
        self.hit = scan.occurs(key)
        self._where: tuple[tuple[int, ...], tuple[int, ...]] | None = None if self.hit else ((), ())

    def _located(self) -> tuple[tuple[int, ...], tuple[int, ...]]:
        if self._where is None:
            self._where = self._scan.offsets(self._key)
        return self._where

    @property
    def offsets(self) -> tuple[int, ...]:
        """Start of each non-overlapping occurrence in the original text."""
        return self._located()[0]

    @property
    def lengths(self) -> tuple[int, ...]:
        """Length of each occurrence in the original text (a wildcard's matches vary)."""
        return self._located()[1]

    @property
    def count(self) -> int:
        return len(self.offsets)

    def spans(self) -> list[tuple[int, int]]:
        return [(start, start + length) for start, length in zip(self.offsets, self.lengths, strict=True)]

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, KeywordHit):
            return NotImplemented
        return (self.keyword, self.hit, self._located()) == (other.keyword, other.hit, other._located())

    def __hash__(self) -> int:
        return hash((self.keyword, self.hit, self._located()))

    def __repr__(self) -> str:
        return f"KeywordHit({self.keyword!r}, hit={self.hit}, count={self.count}, offsets={self.offsets})"


class SalienceBreakdown(Struct, frozen=True):
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


class Scan(Mapping[str, list[tuple[int, int]]]):
    """Where each keyword occurs: case-folded keyword -> non-overlapping (start, end) spans in
    the original text.

    Which keywords occur is known at once; a plain keyword's spans are found in the lowered text
    (a `str.find` from the end of each match, like `str.count`) only when someone first asks,
    since deciding salience never needs them and an explanation only needs a few."""

    def __init__(
        self,
        plain: Sequence[str] = (),
        lowered: str = "",
        back: list[int] | None = None,
        wild: dict[str, list[tuple[int, int]]] | None = None,
    ) -> None:
        self._lowered = lowered
        self._back = back
        self._found: dict[str, tuple[tuple[int, ...], tuple[int, ...]]] = {}
        for key, spans in sorted((wild or {}).items()):
            starts = [a for a, _ in spans]
            if back is None:
                self._found[key] = (tuple(starts), tuple(b - a for a, b in spans))
            else:
                self._found[key] = _original(starts, [b for _, b in spans], back)
        self._keys = [*self._found, *plain]
        self._present = frozenset(self._keys)

    def occurs(self, key: str) -> bool:
        """Whether the keyword occurs at least once (cheaper than its offsets)."""
        return key in self._present

    def offsets(self, key: str) -> tuple[tuple[int, ...], tuple[int, ...]]:
        """Start offsets and lengths of the keyword's non-overlapping occurrences."""
        got = self._found.get(key)
        if got is not None:
            return got
        if key not in self._present:
            return ((), ())
        find, length = self._lowered.find, len(key)
        offsets, at = [], find(key)
        while at != -1:  # linear: each find starts where the last match ended
            offsets.append(at)
            at = find(key, at + length)
        if self._back is None:
            got = (tuple(offsets), (length,) * len(offsets))
        else:
            got = _original(offsets, [a + length for a in offsets], self._back)
        self._found[key] = got
        return got

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


def _key_of(raw: str) -> str | None:
    keyword = normalize_keyword(raw)
    return None if keyword is None else casekey(keyword)


class KeywordMatcher:
    """Finds every occurrence of a fixed set of keywords in a text, in one pass."""

    def __init__(self, keywords: Iterable[str]) -> None:
        self._build(dict.fromkeys(key for k in keywords if (key := _key_of(k)) is not None))

    @classmethod
    def of_keys(cls, keys: Iterable[str]) -> KeywordMatcher:
        """A matcher for keywords already normalised and case-folded (see `casekey`)."""
        matcher = cls.__new__(cls)
        matcher._build(dict.fromkeys(keys))
        return matcher

    def _build(self, keys: dict[str, None]) -> None:
        import numpy as np

        # Automaton entries: the plain keywords first, then wildcards' parts no plain keyword spells.
        plain = [key for key in keys if "*" not in key]
        wildcards = [Wildcard(key) for key in keys if "*" in key]
        self._keys: list[str] = plain
        self._n_plain = len(plain)
        slots = self._slot_of = dict(zip(plain, range(len(plain)), strict=True))  # automaton entry -> slot
        self._anchored: dict[int, list[Wildcard]] = {}  # automaton entry -> wildcards it anchors
        for wildcard in wildcards:
            for part in wildcard.parts:  # all found in the same pass
                if part not in slots:
                    slots[part] = len(self._keys)
                    self._keys.append(part)
            self._anchored.setdefault(slots[wildcard.anchor], []).append(wildcard)
        self._of_parts = np.zeros(len(self._keys), dtype=bool)  # slot -> whether it is a wildcard's part
        self._of_parts[[slots[part] for wildcard in wildcards for part in wildcard.parts]] = True
        self._automaton = _automaton(enumerate(self._keys))
        self._left_out: list[int] = []  # slots a scan took out of the automaton (the next puts them back)

    def scan(self, text: str) -> Scan:
        import numpy as np

        from lesson_credit.core.base.arrays import distinct

        if not self._keys:
            return Scan()
        automaton, found = self._automaton, np.zeros(0, dtype=np.int64)
        if self._left_out:  # the last scan took keywords out: back in
            for slot in self._left_out:
                automaton.add_word(self._keys[slot], slot)
            automaton.make_automaton()
            self._left_out = []
        lowered, back = _lower_same_length(text)
        cut = len(lowered) // _SAMPLE_SHARE
        if cut >= _MIN_SAMPLE:
            # Frequent keywords make most matches, and each match costs more than a character of
            # text: the sample settles them, and the whole text is then scanned without them.
            sampled = _matches(automaton, lowered, cut)[1]
            found = distinct(sampled)
            found = found[(found < self._n_plain) & ~self._of_parts[found]]  # a part's every match is needed
            if len(sampled) * (_SAMPLE_SHARE - 1) > _REBUILD_COST * len(self._keys):
                self._left_out = found.tolist()
                for slot in self._left_out:
                    automaton.remove_word(self._keys[slot])
                if len(automaton):
                    automaton.make_automaton()
        ends, slots = _matches(automaton, lowered, len(lowered))
        plain_slots = distinct(np.concatenate([found, slots[slots < self._n_plain]]))  # np.union1d
        wild: dict[str, list[tuple[int, int]]] = {}
        if self._anchored:  # from where each part occurs (lesson_credit.core.library.wildcard)
            of_parts = self._of_parts[slots]  # usually a small share of all matches
            part_ends, part_slots = ends[of_parts], slots[of_parts]
            where: dict[str, Any] = {}

            def occurrences(entry: str) -> Any:
                if entry not in where:
                    where[entry] = part_ends[part_slots == self._slot_of[entry]] - len(entry)
                return where[entry]

            non_word: list[Any] = []  # the text's non-word positions, found once for every wildcard
            if _NOT_WORD_SAME_LETTER in text:  # `\w` is decided on the letters as lowered, not as compared
                non_word.append(non_word_positions(_lower_same_length(text, same_letter=False)[0]))
            for slot, wildcards in self._anchored.items():
                if not occurrences(self._keys[slot]).size:
                    continue
                for wildcard in wildcards:
                    spans = wildcard.spans(lowered, [occurrences(part) for part in wildcard.parts], non_word)
                    if spans:
                        wild[wildcard.key] = spans
        return Scan([self._keys[slot] for slot in plain_slots.tolist()], lowered, back, wild)


_SAMPLE_SHARE = 16  # a long text's first 1/16 is scanned first, with every keyword
_MIN_SAMPLE = 1 << 12  # characters: below 64 KB of text one scan is cheaper
_REBUILD_COST = 8  # an automaton entry costs about as much to rebuild as 8 matches do to report


def _automaton(entries: Iterable[tuple[int, str]]) -> Any:
    """An Aho-Corasick automaton that reports each entry's slot."""
    import ahocorasick

    automaton = ahocorasick.Automaton(ahocorasick.STORE_INTS)
    for slot, entry in entries:
        automaton.add_word(entry, slot)
    if len(automaton):
        automaton.make_automaton()
    return automaton


def _matches(automaton: Any, lowered: str, stop: int) -> tuple[Any, Any]:
    """End offsets (exclusive) and slots of every match ending before `stop`, in one C-level pass
    (a Python step per match costs more than the automaton itself)."""
    import numpy as np

    if not len(automaton):
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    flat = np.fromiter(itertools.chain.from_iterable(automaton.iter(lowered, 0, stop)), dtype=np.int64)
    return flat[0::2] + 1, flat[1::2]


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
    return _breakdown(lesson_id, _counted(keywords), found, {} if shared is None else shared)


def _breakdown(
    lesson_id: str, counted: dict[str, str], found: Scan, shared: dict[str, KeywordHit]
) -> SalienceBreakdown:
    hits = []
    n_hit = 0
    for key, keyword in counted.items():
        hit = shared.get(keyword)
        if hit is None:
            hit = shared[keyword] = KeywordHit(keyword, key, found)
        hits.append(hit)
        n_hit += hit.hit
    value = n_hit / len(counted) if counted else NO_KEYWORD_SALIENCE
    return SalienceBreakdown(lesson_id, value, tuple(hits))


def salience_breakdowns(text: str, lessons: Sequence[tuple[str, Sequence[str]]]) -> list[SalienceBreakdown]:
    """Salience with explanation for each (lesson_id, keywords) over one journal, one scan."""
    with gc_paused():  # a library's keywords become tens of thousands of small objects
        counted = [_counted(keywords) for _, keywords in lessons]
        found = KeywordMatcher.of_keys(key for keys in counted for key in keys).scan(text)
        shared: dict[str, KeywordHit] = {}
        return [_breakdown(lid, keys, found, shared) for (lid, _), keys in zip(lessons, counted, strict=True)]


def salience(text: str, keywords: Sequence[str]) -> float:
    """Salience of one keyword list over one text."""
    return salience_breakdowns(text, [("", keywords)])[0].salience
