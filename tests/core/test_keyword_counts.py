"""A keyword hit's count, first occurrences and those before an offset are worked out without every offset (a plain
keyword's count is `str.count` in the lowered text; the others a lazy `str.find` or wildcard match): each equals
what every offset (`offsets`, `spans()`: the find from each match's end, the wildcard's matches, mapped back into
the original text where lowering changed lengths) says, on texts whose keywords overlap themselves (`aa` in
`aaa`) and whose letters lower to more than one character (İ) or are compared as another (ſ, ς, K)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from lesson_credit.core.library.salience import KeywordHit, salience_breakdowns
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
