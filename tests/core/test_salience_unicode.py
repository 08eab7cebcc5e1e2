"""Keywords in any script hit as gptme's matching hits them: the keyword lowered and trimmed, searched
case-insensitively by `re` in the lowered journal (docs/format.md §3). `re` takes some lower-case
letters for one another (dotless ı and i, long ſ and s, final ς and σ, Greek symbol forms, old
Cyrillic forms); a comparison of lowered letters alone missed those (`ΛΌΓΟΣ` against `λόγος`,
`5 μs` against `µs`). The second way here is `re` itself."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lesson_credit.core.library.salience import KeywordMatcher, casekey, salience_breakdowns
from tests.support.engine_helpers import PROPERTY


def gptme_hits(keyword: str, text: str) -> int:
    """How many times the keyword occurs as gptme matches it: `*` is `\\w*`, case-insensitive `re`
    over the lowered text (non-overlapping, non-empty matches)."""
    pattern = r"\w*".join(re.escape(part) for part in keyword.lower().strip().split("*"))
    return sum(1 for m in re.finditer(pattern, text.lower(), re.IGNORECASE) if m.end() > m.start())


def our_hits(keyword: str, text: str) -> int:
    (hit,) = salience_breakdowns(text, [("l.md", [keyword])])[0].keywords
    assert hit.count is not None and hit.hit == (hit.count > 0)
    return hit.count


# every letter `re` takes for another, their capitals, and letters whose lowering is special
GROUPED = (
    "ISis\xb5\u0131\u017f\u0345\u0390\u0392\u0395\u0398\u0399\u039a\u039c\u03a0\u03a1\u03a3\u03a6"
    "\u03b0\u03b2\u03b5\u03b8\u03b9\u03ba\u03bc\u03c0\u03c1\u03c2\u03c3\u03c6\u03d0\u03d1\u03d5\u03d6"
    "\u03f0\u03f1\u03f5\u0412\u0414\u041e\u0421\u0422\u042a\u0432\u0434\u043e\u0441\u0442\u044a\u0462"
    "\u0463\u1c80\u1c81\u1c82\u1c83\u1c84\u1c85\u1c86\u1c87\u1c88\u1e60\u1e61\u1e9b\u1fbe\u1fd3\u1fe3"
    "\ua64a\ua64b\ufb05\ufb06"
)
SPECIAL = "\u0130\u212a\u212b\xdf\u1e9e\u01c5\u01c6\u01c4"  # İ lowers to i + U+0307; Kelvin K, Angstrom Å; ǅ


def test_the_letter_groups_are_the_ones_re_has() -> None:
    casefix = pytest.importorskip("re._casefix")  # where CPython's `re` keeps them (3.11 and later)
    groups = {frozenset([chr(c), *map(chr, others)]) for c, others in casefix._EXTRA_CASES.items()}
    for group in groups:
        assert len({casekey(letter) for letter in group}) == 1, sorted(group)
    assert set("".join(group for group in map("".join, groups))) <= set(GROUPED)


def test_every_pair_of_letters_matches_as_re_matches_it() -> None:
    letters = sorted(set(GROUPED + SPECIAL + "abkzAZ"))
    wrong = [(a, b) for a in letters for b in letters if (our_hits(a, f"x{b}y") > 0) != (gptme_hits(a, f"x{b}y") > 0)]
    assert wrong == []


def test_words_in_other_scripts() -> None:
    # a word-final capital sigma lowers to ς, the keyword's σ: the same letter for `re`
    assert (our_hits("λόγος", "ΛΌΓΟΣ και λόγοσ"), gptme_hits("λόγος", "ΛΌΓΟΣ και λόγοσ")) == (2, 2)
    assert our_hits("µs", "took 5 μs") == 1  # the micro sign and the Greek mu
    assert our_hits("git", "GIT and gıt") == 2  # dotless ı is i for `re`
    assert our_hits("istanbul", "\u0130stanbul") == gptme_hits("istanbul", "\u0130stanbul") == 0  # i + U+0307
    assert our_hits("i\u0307stanbul", "\u0130STANBUL") == gptme_hits("i\u0307stanbul", "\u0130STANBUL") == 1


def test_a_wildcard_does_not_cross_ypogegrammeni() -> None:
    # U+0345 is the letter ι for `re`'s case-insensitive comparison, but `\w` does not match it
    text = "\u03b1\u0345\u03b2 \u03b1\u03b9\u03b2"  # alpha, U+0345, beta; then alpha, iota, beta
    assert gptme_hits("α*β", text) == 1
    assert our_hits("α*β", text) == 1
    assert our_hits("αιβ", text) == gptme_hits("αιβ", text) == 2


tricky = st.text(alphabet="aisIıſσςΣµμİ ͅι*", max_size=6)


@settings(PROPERTY, max_examples=300)
@given(text=st.text(alphabet="aisIıſσςΣµμİ ͅι-", max_size=40), keyword=tricky)
def test_hits_agree_with_re(text: str, keyword: str) -> None:
    if not keyword.replace("*", "").strip() or len(keyword.strip()) == 0:
        return  # not counted (docs/format.md §3)
    (hit,) = salience_breakdowns(text, [("l.md", [keyword])])[0].keywords
    assert hit.count == gptme_hits(keyword, text), (keyword, text)
    found = KeywordMatcher([keyword]).scan(text)
    assert found.occurs(casekey(keyword.strip())) == (hit.count > 0)
