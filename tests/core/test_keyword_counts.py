"""A keyword hit's count, first occurrences and those before an offset are worked out without every offset (a plain
keyword's count is `str.count` in the lowered text; the others a lazy `str.find` or wildcard match): each equals
what every offset (`offsets`, `spans()`: the find from each match's end, the wildcard's matches, mapped back into
the original text where lowering changed lengths) says, on texts whose keywords overlap themselves (`aa` in
`aaa`) and whose letters lower to more than one character (İ) or are compared as another (ſ, ς, K)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lesson_credit.core.library import salience
from lesson_credit.core.library.casefold import lower_same_length
from lesson_credit.core.library.salience import KeywordHit, listed_offsets, salience_breakdowns
from tests.support.engine_helpers import PROPERTY

LETTERS = "aAbB \u0130i\u0307\u017fsS\u03c3\u03c2\u212ak_-"  # İ lowers to i + U+0307; ſ is s; ς is σ; Kelvin K is k


def _hits(text: str, keywords: list[str]) -> list[KeywordHit]:
    return list(salience_breakdowns(text, [("l.md", keywords)])[0].keywords)


@settings(PROPERTY, max_examples=400)
@given(
    st.text(LETTERS, max_size=40),
    st.lists(st.text(LETTERS + "*", min_size=1, max_size=4), min_size=1, max_size=6),
    st.integers(0, 8),
    st.integers(0, 45),
)
def test_count_first_and_spans_before_agree_with_every_offset(
    text: str, keywords: list[str], first: int, stop: int
) -> None:
    every = _hits(text, keywords)  # a scan of its own: each hit's offsets worked out in full
    lazy = _hits(text, keywords)  # another: nothing worked out before each question below
    for whole, hit in zip(every, lazy, strict=True):
        spans = [(start, start + length) for start, length in zip(whole.offsets, whole.lengths, strict=True)]
        assert hit.count == len(spans), (text, hit.keyword)
        assert hit.first(first) == spans[:first]
        assert list(hit.spans_before(stop)) == [span for span in spans if span[0] < stop]
        assert hit.count == len(whole.offsets)  # (a count after the offsets are known: taken from them)


def test_overlapping_and_lengthened_by_hand() -> None:
    # `aa` in `aaaaa`: at 0 and 2 (one at 1 would overlap the first), the last `a` left over.
    # `İaİa` lowers to `i̇ai̇a` (İ to i + U+0307: 6 characters); `İa`, lowered `i̇a`, is there at 0 and 3,
    # which are the original's 0 and 2, each match 2 characters of the original long.
    (aa,) = _hits("aaaaa", ["aa"])
    assert (aa.count, aa.first(5), list(aa.spans_before(2))) == (2, [(0, 2), (2, 4)], [(0, 2)])
    (dotted,) = _hits("\u0130a\u0130a", ["\u0130a"])
    assert (dotted.count, dotted.first(1), list(dotted.spans_before(3))) == (2, [(0, 2)], [(0, 2), (2, 4)])


class _Counted(str):
    """The lowered journal, adding up the characters `str.count` and `str.find` read of it."""

    read = 0

    def count(self, sub: str, start: Any = None, end: Any = None) -> int:
        begin, stop, _ = slice(start, end).indices(len(self))
        _Counted.read += max(0, stop - begin)
        return super().count(sub, start, end)

    def find(self, sub: str, start: Any = None, end: Any = None) -> int:
        begin, stop, _ = slice(start, end).indices(len(self))
        at = super().find(sub, start, end)
        _Counted.read += max(0, (stop if at == -1 else at + len(sub)) - begin)
        return at


def test_counts_and_first_offsets_of_many_hit_keywords_do_not_read_the_journal_once_each(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """200 keywords, each 5 times in a journal of 5,000 characters: a `str.count` each read 200 x 5,000 =
    1,000,000 characters, and the first six offsets (a find to past the fifth) about as many again. Every
    count, first six and first OFFSETS_LISTED offsets now come from one pass: the finds and counts read none."""
    monkeypatch.setattr(salience, "lower_same_length", lambda *a, **k: (_Counted(lower_same_length(*a, **k)[0]), None))
    text = " ".join(f"w{i:03d}" for i in range(200)) + " "  # 1,000 characters
    keywords = [f"w{i:03d}" for i in range(200)]
    _Counted.read = 0
    hits = _hits(text * 5, keywords)
    assert [hit.count for hit in hits] == [5] * 200
    assert [hit.first(6) for hit in hits[:2]] == [[(a, a + 4) for a in (0, 1000, 2000, 3000, 4000)]] + [
        [(a, a + 4) for a in (5, 1005, 2005, 3005, 4005)]
    ]
    assert all(listed_offsets(hit) == [5 * i + 1000 * k for k in range(5)] for i, hit in enumerate(hits))
    assert _Counted.read == 0


def test_spans_before_an_offset_read_no_further_than_a_span_from_before_it_reaches(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """20 keywords at the start of a journal of 1,000,000 more characters, asked for their spans before 200 (as the
    dashboard asks for those in the part of a journal it shows): the find after each one's only match read on to
    the journal's end, 20 x ~1,000,000 characters. A span starting before 200 ends by 199 + 5: each keyword's
    finds now read its 204 first characters (up to its match, then from there to 204), 4,080 in all."""
    monkeypatch.setattr(salience, "lower_same_length", lambda *a, **k: (_Counted(lower_same_length(*a, **k)[0]), None))
    keywords = [f"kw{i:03d}" for i in range(20)]
    hits = _hits(" ".join(keywords) + "." * 1_000_000, keywords)
    _Counted.read = 0
    assert [list(hit.spans_before(200)) for hit in hits] == [[(6 * i, 6 * i + 5)] for i in range(20)]
    assert _Counted.read == 20 * 204


def test_find_cost_is_the_text_once_and_a_plain_searchs_comparisons_at_the_keywords_last_letter() -> None:
    """Over 100 `a`s: `aa` (a plain search: under 6 letters) reads the 100 characters and compares its 2 letters at
    each of the 100 `a`s (its last letter): 300, under `search_cost`'s 100 x (4 + 1) = 500; the first keyword ending
    in `a` also pays for counting them (100). Before 10: the text to where a span from 9 ends (11), 11 + 2 x 11 = 33,
    and 11 for that count. `a` * 7 is searched plainly only in the last 30,000 characters: `search_cost` 100 x
    (4 + 3) = 700, under 100 + 7 x 100. `a` (one letter: a scan for it) and a keyword that does not occur: 100, 0."""
    aa, seven, a, missing = _hits("a" * 100, ["aa", "a" * 7, "a", "zz"])
    assert (aa.find_cost(1000), aa.find_cost(1000), aa.find_cost(10), aa.find_cost(10)) == (400, 300, 44, 33)
    assert (seven.find_cost(1000), a.find_cost(1000), missing.find_cost(1000)) == (700, 100, 0)
