"""Salience: which of a lesson's keywords a journal mentions, found in one pass, and why.

Semantics (docs/format.md §3, gptme's): case-insensitive substring, no word boundaries; ``*`` inside
a keyword matches ``\\w*``; keywords are trimmed and those left empty or all-``*`` are not
counted. Counts are of non-overlapping matches, offsets point into the original text.

Plain keywords go into one Aho-Corasick automaton, which reports every occurrence of
every keyword in a single scan (a regex alternation cannot: its matches never overlap,
so ``git`` inside ``git worktree`` would be lost). A wildcard keyword's first literal part
goes into the same automaton as its anchor, and `lesson_credit.core.library.wildcard` finds its matches from there
in linear time (a regex per wildcard backtracks catastrophically).

The automaton reads the journal a window at a time and what a read reports is let go before the next: keywords
nested in one another (`a`, `aa`, ... over a journal of `a`s) make up to 100 matches a character, and holding
every match took 170 bytes a character (11 GB over a 64 MB journal). Of a plain keyword only whether it occurs is
kept; a wildcard's parts' occurrences are kept (it needs them all), up to a budget a character of journal, past
which the wildcards are matched a batch at a time (`KeywordMatcher._wild`). Matching them is work in proportion
to their parts' occurrences: a scan matches wildcards while that work is within `work_budget` (core/library/
keyword_limits.py), and the rest are not matched (`Scan.unmatched`, counted as missed).

Reporting a match costs more than reading a character, and a few frequent keywords make most
matches: once the keywords already found make enough of them, the rest of the journal is scanned
by an automaton without them. Where a keyword occurs is worked out only when asked (a plain one by `str.find`).
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Iterator, Sequence
from functools import partial
from typing import TYPE_CHECKING, Any, cast

from msgspec import Struct

from lesson_credit.core.base.gc_pause import gc_paused
from lesson_credit.core.library.casefold import NOT_WORD_SAME_LETTER, lower_same_length
from lesson_credit.core.library.casefold import casekey as casekey  # (tests and callers import it from here)
from lesson_credit.core.library.keyword_limits import (
    KEYWORD_MAX_CHARS,
    WILDCARD_MAX_PARTS,
    WILDCARD_MAX_PER_LESSON,
    collapse_stars,
    keyword_problem,
    work_budget,
)
from lesson_credit.core.library.scan import OFFSETS_LISTED as OFFSETS_LISTED  # (callers import it from here)
from lesson_credit.core.library.scan import Scan, Take

if TYPE_CHECKING:
    from lesson_credit.core.library.wildcard import Wildcard  # (numpy's: imported for a wildcard keyword, `_wildcards`)

NO_KEYWORD_SALIENCE = 0.5
SNIPPET_RADIUS = 40


def normalize_keyword(raw: str) -> str | None:
    """The keyword as matched, or None when it does not count: empty, only ``*``, a wildcard of more than
    WILDCARD_MAX_PARTS literal parts, or longer than KEYWORD_MAX_CHARS (`keyword_problem`; lint reports it)."""
    keyword = raw.strip()
    if "*" not in keyword:  # the common case, what `keyword_problem` says of it without its message
        return keyword if keyword and len(keyword) <= KEYWORD_MAX_CHARS else None
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


class KeywordHit:
    """One keyword's part in a salience value: whether the journal mentions it, and where.

    Whether is known at once; how often, the first few occurrences or those before an offset are worked out when
    asked, never all at once (nested keywords over 64 MB of `a`s: 17 GB of offsets). `offsets` has every one."""

    __slots__ = ("keyword", "hit", "unmatched", "_key", "_scan", "_where", "_count")

    def __init__(self, keyword: str, key: str, scan: Scan) -> None:
        self.keyword = keyword
        self._key = key
        self._scan = scan
        self.hit = scan.occurs(key)
        self.unmatched = key in scan.unmatched  # a wildcard not matched: the scan's work budget spent (a miss)
        self._where: tuple[tuple[int, ...], tuple[int, ...]] | None = None if self.hit else ((), ())
        self._count: int | None = -1 if self.hit else 0  # -1: not asked yet

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
    def count(self) -> int | None:
        """How many non-overlapping occurrences (without working out where each is); None when not counted, the
        journal's hit keywords too many occurrences together for the budget (core/library/hit_counts.py)."""
        if self._count == -1:
            self._count = len(self._where[0]) if self._where is not None else self._scan.count(self._key)
        return self._count

    def first(self, limit: int) -> list[tuple[int, int]]:
        """The first `limit` occurrences' (start, end) spans in the original text (none when not counted)."""
        return self._scan.first(self._key, limit)

    def spans_before(self, stop: int) -> Iterator[tuple[int, int]]:
        """The (start, end) spans that start before offset `stop` (what a view of the text's start shows)."""
        return itertools.takewhile(lambda span: span[0] < stop, self._scan.spans(self._key, stop))

    def find_cost(self, stop: int) -> int:
        """What `spans_before(stop)` reads, its finds aside, in characters read linearly (Scan.find_cost)."""
        return self._scan.find_cost(self._key, stop) if self.hit else 0

    def spans(self) -> list[tuple[int, int]]:
        return [(start, start + length) for start, length in zip(self.offsets, self.lengths, strict=True)]

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, KeywordHit):
            return NotImplemented
        return (self.keyword, self.hit, self._located()) == (other.keyword, other.hit, other._located())

    def __hash__(self) -> int:
        return hash((self.keyword, self.hit, self._located()))

    def __repr__(self) -> str:
        first = [start for start, _ in self.first(6)]
        shown = ", ".join(map(str, first[:5])) + (", ..." if len(first) > 5 else "")
        return f"KeywordHit({self.keyword!r}, hit={self.hit}, count={self.count}, offsets=({shown}))"


def listed_offsets(hit: KeywordHit) -> list[int]:
    """The offsets of a keyword's first OFFSETS_LISTED occurrences (what explain's JSON lists)."""
    return [start for start, _ in hit.first(OFFSETS_LISTED)]


def keyword_json(k: KeywordHit) -> dict[str, Any]:
    """A counted keyword in explain's JSON (docs/format.md §3)."""
    return (
        {"keyword": k.keyword, "hit": k.hit, "count": k.count, "offsets": listed_offsets(k)}
        | ({"unmatched": True} if k.unmatched else {})  # not matched: the scan's work budget spent (a miss)
        | ({"counted": False} if k.hit and k.count is None else {})  # count null, offsets []: the pass's budget spent
    )


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

    @property
    def unmatched(self) -> int:
        """How many of its wildcard keywords were not matched (missed): the scan's work budget was spent."""
        return sum(1 for k in self.keywords if k.unmatched)


def snippet(text: str, start: int, end: int, radius: int = SNIPPET_RADIUS) -> str:
    """The journal around one match, on one line; of a match longer than twice `radius`, its first and last
    `radius` characters (a wildcard's match can be a word of megabytes: explain printed it whole)."""
    left = max(0, start - radius)
    right = min(len(text), end + radius)
    piece = (
        text[left:right]
        if end - start <= 2 * radius
        else text[left : start + radius] + "…" + text[end - radius : right]
    )
    piece = piece.replace("\r", " ").replace("\n", " ").replace("\t", " ")
    return ("…" if left > 0 else "") + piece + ("…" if right < len(text) else "")


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
        wild = [key for key in keys if "*" in key]
        self._wildcards = _wildcards(wild) if wild else []
        self._keys: list[str] = plain
        self._n_plain = len(plain)
        slots = self._slot_of = dict(zip(plain, range(len(plain)), strict=True))  # automaton entry -> slot
        parts: dict[int, None] = {}  # slots of wildcards' parts, numbered in this order
        for wildcard in self._wildcards:
            for part in wildcard.parts:  # all found in the same pass
                if part not in slots:
                    slots[part] = len(self._keys)
                    self._keys.append(part)
                parts[slots[part]] = None
        # slot -> its number as a part, else -1 (16 bits where they fit: a stable sort of them is then a radix sort)
        self._part_of = np.full(len(self._keys), -1, dtype=np.int16 if len(parts) < 1 << 15 else np.int64)
        self._part_of[list(parts)] = np.arange(len(parts))
        self._part_lengths = np.array([len(self._keys[slot]) for slot in parts] or [0], dtype=np.int64)
        self._longest = max(map(len, self._keys), default=1)
        self._automaton = _automaton(enumerate(self._keys))
        self._left_out: list[int] = []  # slots a scan took out of the automaton (the next puts them back)

    def scan(self, text: str, window: int = 0) -> Scan:
        """Where the keywords occur in `text`. The automaton reads `window` characters at a time (0: as many as
        make at most _READ_MATCHES matches; tests make it small): what one read reports is held at once."""
        import numpy as np

        if not self._keys:
            return Scan()
        automaton = self._automaton
        if self._left_out:  # the last scan took keywords out: back in
            for slot in self._left_out:
                automaton.add_word(self._keys[slot], slot)
            automaton.make_automaton()
            self._left_out = []
        lowered, back = lower_same_length(text)
        found = np.zeros(self._n_plain, dtype=bool)  # plain slot -> whether it occurs
        parts = _Parts(self._part_of, self._part_lengths, _PART_BUDGET * (len(lowered) + 1), len(lowered))
        window = window or max(_WINDOW, _READ_MATCHES // self._longest)
        self._pass(lowered, window, found, parts)
        wild, unmatched, work = self._wild(text, lowered, parts, window) if self._wildcards else ({}, [], 0)
        plain = [self._keys[slot] for slot in np.flatnonzero(found).tolist()]
        return Scan(plain, lowered, back, wild, partial(_wild_spans, text, lowered, window), unmatched, work)

    def _pass(self, lowered: str, window: int, found: Any, parts: _Parts) -> None:
        """One pass over the text, `window` characters at a time (each read begins the longest entry's length
        less one earlier, so that a match across the border is whole in one). A plain keyword is only noted as
        found; once those already found have made enough matches for the rest of the text to be expected to
        make more than rebuilding the automaton costs, they are taken out of it (frequent keywords make most
        matches, and a match costs more to report than a character to read)."""
        from lesson_credit.core.base.arrays import distinct

        automaton, n_plain, n = self._automaton, self._n_plain, len(lowered)
        overlap, read, wasted = self._longest - 1, 0, 0  # since the last rebuild: characters, repeated matches
        for begin in range(0, n, window):
            if not len(automaton):  # every entry taken out: nothing more to find
                return
            ends, slots = _matches(automaton, lowered, max(0, begin - overlap), begin + window)
            if self._wildcards:
                parts.add(begin, ends, slots)
            plain = slots[slots < n_plain]
            fresh = plain[~found[plain]]
            found[fresh] = True
            wasted += len(plain) - (len(distinct(fresh)) if len(fresh) else 0)
            read += window
            cost = _REBUILD_COST * len(automaton)
            if wasted * _SAMPLE_SHARE > cost and wasted * max(0, n - begin - window) > cost * read:
                self._take_out(found)
                read, wasted = 0, 0

    def _take_out(self, found: Any) -> None:
        import numpy as np

        taken = set(self._left_out)
        out = [slot for slot in np.flatnonzero(found).tolist() if self._part_of[slot] < 0 and slot not in taken]
        for slot in out:
            self._automaton.remove_word(self._keys[slot])
        self._left_out.extend(out)
        if len(self._automaton):
            self._automaton.make_automaton()

    def _wild(
        self,
        text: str,
        lowered: str,
        parts: _Parts,
        window: int,
        take: Take | None = None,
        spans: bool = False,
    ) -> tuple[dict[str, Any], list[str], int]:
        """The wildcards that match; those the work budget left unmatched (`_within_budget`); the work spent.
        With `spans` (every wildcard asked for matches: no budget), each one's matches, worked out as they are
        read, or what `take` makes of them, taken within its batch (a salience never needs them, and 64 wildcards
        matching at every other character of a MB held 5 GB of them), from where their parts occur
        (core/library/wildcard.py). When the parts' occurrences were more than `_Parts` keeps, the wildcards are
        matched a batch at a time, each from a pass of an automaton of its parts only; a batch's parts occur at
        most `_PART_BUDGET` times a character of text, or it is one wildcard (WILDCARD_MAX_PARTS parts: at most
        that many times)."""
        counts = parts.counts
        live = [w for w in self._wildcards if all(counts[self._part_of[self._slot_of[p]]] for p in w.parts)]
        live, unmatched, work = (live, [], 0) if spans else self._within_budget(live, counts, len(lowered))
        non_word: list[Any] = []  # the text's non-word positions, found once for every wildcard
        if live and NOT_WORD_SAME_LETTER in text:  # `\w` is decided on the letters as lowered, not as compared
            from lesson_credit.core.library.wildcard import non_word_positions

            non_word.append(non_word_positions(lower_same_length(text, same_letter=False)[0]))
        wild: dict[str, Any] = {}
        occurs: dict[tuple[str, ...], bool] = {}  # by parts: `*` before or after the first and last changes no match
        taken: dict[str, Any] = {}  # what `take` made, by key with runs of `*` made one (`a*`, `a**`: the same)
        for wildcards, where in self._batches(lowered, window, live, parts):
            viable: tuple[tuple[str, ...], Any] = ((), None)  # the last parts' viable occurrences (Wildcard.viable)
            for wildcard in sorted(wildcards, key=lambda w: w.parts) if spans else wildcards:
                occurrences = [where.starts(int(self._part_of[self._slot_of[part]])) for part in wildcard.parts]
                if spans:
                    same = collapse_stars(wildcard.key)
                    if take is not None and same in taken:
                        wild[wildcard.key] = taken[same]
                        continue
                    if viable[0] != wildcard.parts:
                        viable = ((), None)  # (let go first)
                        viable = (wildcard.parts, wildcard.viable(lowered, occurrences, non_word))
                    found = wildcard.spans(lowered, occurrences, non_word, viable[1])
                    if take is not None:
                        count = partial(wildcard.count, lowered, occurrences, non_word, viable[1])
                        found = taken[same] = take(found, count)
                    wild[wildcard.key] = found
                    continue
                if wildcard.parts not in occurs:
                    occurs[wildcard.parts] = wildcard.occurs(lowered, occurrences, non_word)
                if occurs[wildcard.parts]:
                    wild[wildcard.key] = None
            viable = ((), None)
            del wildcards, where  # a batch's occurrences (and viable ones) go before the next batch's are gathered
        return {w.key: wild[w.key] for w in live if w.key in wild}, unmatched, work  # (in `live`'s order, as before)

    def _within_budget(self, live: list[Wildcard], counts: Any, n: int) -> tuple[list[Wildcard], list[str], int]:
        """The wildcards matched, in order, while the work of matching them adds up to at most the budget
        (`work_budget`); the keys of those it leaves unmatched, and the work spent. A wildcard's work is the
        occurrences of its parts, each part as often as the wildcard has it (its matching works through each);
        nothing for one whose parts an earlier one has (`a*b`, `*a*b*`, `a**b`: whether it occurs is that one's)."""
        budget, spent = work_budget(n), 0
        kept: list[Wildcard] = []
        unmatched: list[str] = []
        done: set[tuple[str, ...]] = set()
        for wildcard in live:
            work = sum(int(counts[self._part_of[self._slot_of[part]]]) for part in wildcard.parts)
            if wildcard.parts not in done and spent + work > budget:
                unmatched.append(wildcard.key)
                continue
            if wildcard.parts not in done:
                spent += work
                done.add(wildcard.parts)
            kept.append(wildcard)
        return kept, unmatched, spent

    def _batches(
        self, lowered: str, window: int, live: list[Wildcard], parts: _Parts
    ) -> Iterator[tuple[list[Wildcard], _Parts]]:
        """The wildcards with where their parts occur: all at once when the pass kept every occurrence, else in
        batches whose parts occur at most the budget's number of times (or of one wildcard), a pass each."""
        if not parts.overflow:
            yield live, parts
            return
        batch: list[Wildcard] = []
        numbers: set[int] = set()
        for wildcard in sorted(live, key=lambda w: w.parts):  # those of the same parts in one batch: one pass for all
            own = {int(self._part_of[self._slot_of[part]]) for part in wildcard.parts}
            if batch and sum(int(parts.counts[k]) for k in numbers | own) > cast(int, parts.budget):
                yield batch, self._gather(lowered, window, numbers)
                batch, numbers = [], set()
            batch.append(wildcard)
            numbers |= own
        if batch:
            yield batch, self._gather(lowered, window, numbers)

    def _gather(self, lowered: str, window: int, numbers: set[int]) -> _Parts:
        """Where the parts numbered `numbers` occur: a pass of an automaton of them only."""
        slots = [slot for slot in range(len(self._keys)) if self._part_of[slot] in numbers]
        automaton = _automaton((slot, self._keys[slot]) for slot in slots)
        where = _Parts(self._part_of, self._part_lengths, None, len(lowered))
        overlap = max(len(self._keys[slot]) for slot in slots) - 1
        for begin in range(0, len(lowered), window):
            where.add(begin, *_matches(automaton, lowered, max(0, begin - overlap), begin + window))
        return where


class _Parts:
    """Where wildcards' parts occur (each part's start offsets, increasing), gathered a pass's read at a time,
    and how often. Past `budget` occurrences in all (None: no limit) they are only counted (`overflow`)."""

    def __init__(self, part_of: Any, lengths: Any, budget: int | None, n: int) -> None:
        import numpy as np

        self._part_of, self._lengths, self.budget = part_of, lengths, budget
        self._dtype = np.int32 if n < 1 << 31 else np.int64  # half the memory (a journal is at most 64 MB)
        self.counts = np.zeros(len(lengths), dtype=np.int64)
        self._total = 0
        self._held: dict[int, list[Any]] = {}
        self.overflow = False

    def add(self, begin: int, ends: Any, slots: Any) -> None:
        """A read's matches: `ends` (exclusive) and `slots`; those ending at or before `begin` were the last
        read's (the reads overlap)."""
        import numpy as np

        numbers = self._part_of[slots]
        keep = (numbers >= 0) & (ends > begin)
        if not keep.any():
            return
        numbers = numbers[keep]
        order = np.argsort(numbers, kind="stable")  # each part's matches stay in the order they end
        numbers, starts = numbers[order], (ends[keep] - self._lengths[numbers])[order]
        bounds = [0, *(np.flatnonzero(numbers[1:] != numbers[:-1]) + 1).tolist(), len(numbers)]
        firsts = numbers[bounds[:-1]]
        self.counts[firsts] += np.diff(bounds)
        self._total += len(numbers)
        if self.overflow:
            return
        if self.budget is not None and self._total > self.budget:
            self.overflow = True
            self._held = {}
            return
        starts = starts.astype(self._dtype)
        for number, a, b in zip(firsts.tolist(), bounds[:-1], bounds[1:], strict=True):
            self._held.setdefault(number, []).append(starts[a:b].copy())  # a view would hold the whole read

    def starts(self, number: int) -> Any:
        import numpy as np

        pieces = self._held.get(number)
        if not pieces:
            return np.zeros(0, dtype=self._dtype)
        if len(pieces) > 1:
            pieces[:] = [np.concatenate(pieces)]
        return pieces[0]


# Characters of text a read of the automaton covers: as many as make at most _READ_MATCHES matches (16 bytes each)
# where each character ends as many keywords as the longest is long (`a`, `aa`, ... over `a`s), at least _WINDOW.
_READ_MATCHES = 1 << 21
_WINDOW = 1 << 14
_SAMPLE_SHARE = 16  # found keywords are taken out once their repeats make a sixteenth of a rebuild's cost...
_REBUILD_COST = 8  # ...and more than it over the rest of the text: an entry costs about as much to rebuild as 8 matches
_PART_BUDGET = WILDCARD_MAX_PARTS  # wildcards' parts' occurrences held at once a character of text (`_batches`)


def _wildcards(keys: list[str]) -> list[Wildcard]:
    """The wildcard keywords' matchers (core/library/wildcard.py: imported only for a scan that has one)."""
    from lesson_credit.core.library.wildcard import Wildcard

    return [Wildcard(key) for key in keys]


def _automaton(entries: Iterable[tuple[int, str]]) -> Any:
    """An Aho-Corasick automaton that reports each entry's slot."""
    import ahocorasick

    automaton = ahocorasick.Automaton(ahocorasick.STORE_INTS)
    for slot, entry in entries:
        automaton.add_word(entry, slot)
    if len(automaton):
        automaton.make_automaton()
    return automaton


def _matches(automaton: Any, lowered: str, start: int, stop: int) -> tuple[Any, Any]:
    """End offsets (exclusive) and slots of every match within `lowered[start:stop]`, in one C-level pass
    (a Python step per match costs more than the automaton itself)."""
    import numpy as np

    if not len(automaton):
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    # A slice: pyahocorasick converts the whole string it is given at each call, whatever part it reads.
    flat = np.fromiter(itertools.chain.from_iterable(automaton.iter(lowered[start:stop])), dtype=np.int64)
    return flat[0::2] + (start + 1), flat[1::2]


def _wild_spans(text: str, lowered: str, window: int, keys: list[str], take: Take | None) -> dict[str, Any]:
    """Wildcard keywords' matches in `lowered` (`text` lowered), or what `take` makes of each one's, from a pass of
    their own (core/library/scan.py)."""
    import numpy as np

    matcher = KeywordMatcher.of_keys(keys)
    parts = _Parts(matcher._part_of, matcher._part_lengths, _PART_BUDGET * (len(lowered) + 1), len(lowered))
    matcher._pass(lowered, window, np.zeros(0, dtype=bool), parts)
    return matcher._wild(text, lowered, parts, window, take, spans=True)[0]


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
