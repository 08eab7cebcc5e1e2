"""Salience (docs/format.md §3): case-insensitive substring hits, wildcards, counts, offsets, explanations."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lesson_credit.core.library.salience import (
    NO_KEYWORD_SALIENCE,
    KeywordMatcher,
    SalienceBreakdown,
    breakdown_from_scan,
    counted_keywords,
    salience,
    salience_breakdowns,
    snippet,
)
from tests.support.engine_helpers import PROPERTY


def breakdown(text: str, keywords: list[str]) -> SalienceBreakdown:
    return salience_breakdowns(text, [("l.md", keywords)])[0]


# ---------------------------------------------------------------- hits


def test_substring_without_word_boundaries() -> None:
    # gptme's semantics: `quote` hits `misquoted`
    assert salience("the reviewer misquoted me", ["quote"]) == 1.0


def test_case_insensitive_both_ways() -> None:
    assert salience("GIT Worktree", ["git worktree"]) == 1.0
    assert salience("git worktree", ["GIT WORKTREE"]) == 1.0


def test_fraction_of_counted_keywords() -> None:
    # 2 of 3 keywords hit -> 2/3
    assert salience("alpha and gamma", ["alpha", "beta", "gamma"]) == pytest.approx(2 / 3)
    assert salience("nothing here", ["alpha", "beta"]) == 0.0


@pytest.mark.smoke
def test_wildcard_matches_word_characters() -> None:
    b = breakdown("running tests: testing, tested_ok", ["test*"])
    (hit,) = b.keywords
    assert hit.hit
    # "tests" at 8, "testing" at 15, "tested_ok" at 24 (\w includes "_")
    assert hit.offsets == (8, 15, 24)
    assert hit.lengths == (5, 7, 9)


def test_wildcard_does_not_cross_space_or_punctuation() -> None:
    assert salience("git push", ["git*push"]) == 0.0
    assert salience("git-push", ["git*push"]) == 0.0
    assert salience("gitpush", ["git*push"]) == 1.0
    assert salience("git_force_push", ["git*push"]) == 1.0
    # a leading wildcard works too
    assert salience("autotest", ["*test"]) == 1.0


def test_wildcard_is_case_insensitive() -> None:
    assert salience("TIMEOUT30S", ["timeout*"]) == 1.0


def test_regex_metacharacters_are_literal() -> None:
    assert salience("call f(x) now", ["f(x)"]) == 1.0
    assert salience("call fx now", ["f(x)"]) == 0.0
    assert salience("a+b", ["a+b"]) == 1.0
    assert salience("aab", ["a+b"]) == 0.0
    assert salience("v1.2", ["v1.2"]) == 1.0
    assert salience("v1x2", ["v1.2"]) == 0.0


# ---------------------------------------------------------------- counted keywords


def test_keywords_are_trimmed() -> None:
    b = breakdown("a quote", ["  quote  "])
    assert [k.keyword for k in b.keywords] == ["quote"]
    assert b.salience == 1.0
    # the trimmed keyword must not require the surrounding spaces
    assert salience("quoted", [" quote "]) == 1.0


@pytest.mark.parametrize("junk", ["", "   ", "*", "**", " * ", "\t*\t"])
def test_empty_and_star_keywords_are_ignored_and_not_counted(junk: str) -> None:
    # 1 real keyword that hits + junk -> 1/1, not 1/2
    assert salience("git", ["git", junk]) == 1.0
    # 1 real keyword that misses + junk -> 0/1 (a bare * would otherwise hit everything)
    assert salience("git", ["svn", junk]) == 0.0
    assert counted_keywords(["git", junk]) == ["git"]


def test_no_counted_keywords_gives_one_half() -> None:
    assert NO_KEYWORD_SALIENCE == 0.5
    assert salience("anything at all", []) == 0.5
    assert salience("anything at all", ["", "*", "  "]) == 0.5
    b = breakdown("anything", [])
    assert b.keywords == ()
    assert b.salience == 0.5


def test_star_and_space_keywords_are_ignored_alike() -> None:
    # nothing literal is left in '* *' or '* * *' (they would hit any text with a space): not counted
    assert counted_keywords(["* *", "* * *", " ** * "]) == []
    assert salience("a b c", ["* *", "* * *", "zzz"]) == 0.0
    # a keyword with one literal character still counts
    assert counted_keywords(["* x *"]) == ["* x *"]


# ---------------------------------------------------------------- overlaps and counts


def test_overlapping_keywords_both_hit() -> None:
    b = breakdown("use git worktree here", ["git", "git worktree", "worktree"])
    assert b.salience == 1.0
    by_kw = {k.keyword: k for k in b.keywords}
    assert by_kw["git"].offsets == (4,)
    assert by_kw["git worktree"].offsets == (4,)
    assert by_kw["worktree"].offsets == (8,)


@pytest.mark.smoke
def test_keyword_inside_another_in_one_library_scan() -> None:
    # two lessons in one scan: one lesson's keyword is inside the other's
    a, b = salience_breakdowns(
        "git worktree prune",
        [("a.md", ["git worktree"]), ("b.md", ["worktree", "git"])],
    )
    assert a.salience == 1.0
    assert b.salience == 1.0
    assert {k.keyword: k.offsets for k in b.keywords} == {"worktree": (4,), "git": (0,)}


@pytest.mark.parametrize(
    ("text", "keyword", "count", "offsets"),
    [
        ("aaaa", "aa", 2, (0, 2)),  # non-overlapping, like str.count
        ("aaa", "aa", 1, (0,)),
        ("abababab", "aba", 2, (0, 4)),  # 0..3, then the next one starting at >= 3 is at 4
        ("Git git GIT", "git", 3, (0, 4, 8)),
    ],
)
def test_counts_are_non_overlapping(text: str, keyword: str, count: int, offsets: tuple[int, ...]) -> None:
    (hit,) = breakdown(text, [keyword]).keywords
    assert hit.count == count
    assert hit.offsets == offsets
    assert hit.count == text.lower().count(keyword.lower())


# ---------------------------------------------------------------- offsets into the original text


def test_offsets_point_into_original_text_when_lower_changes_length() -> None:
    text = "İstanbul: the quote İS here, İİ QUOTE"
    assert len(text.lower()) != len(text)  # the premise: "İ".lower() is two code points
    (hit,) = breakdown(text, ["quote"]).keywords
    # "İstanbul: the " is 14 characters, so the first "quote" starts at 14; the second
    # is after "İS here, İİ " -> hand count: text.index("QUOTE") in the original string
    assert hit.offsets == (14, 32)
    for start, length in zip(hit.offsets, hit.lengths, strict=True):
        assert text[start : start + length].lower() == "quote"


def test_offsets_for_a_keyword_right_after_dotted_capital_i() -> None:
    text = "İgit"
    (hit,) = breakdown(text, ["git"]).keywords
    assert hit.offsets == (1,)
    assert text[1:4] == "git"


def test_match_does_not_depend_on_unrelated_length_changing_characters() -> None:
    # 'İ'.lower() is two code points; lowering must still treat a final sigma the same way
    assert salience("ΟΔΟΣ", ["ΟΔΟΣ"]) == 1.0  # the premise: a keyword written as in the text hits
    assert salience("İ ΟΔΟΣ", ["ΟΔΟΣ"]) == 1.0


def test_spans_cover_the_matched_text() -> None:
    text = "x QUOTE y"
    (hit,) = breakdown(text, ["quote"]).keywords
    assert hit.spans() == [(2, 7)]


# ---------------------------------------------------------------- explanation


def test_breakdown_lists_hits_and_misses() -> None:
    b = breakdown("git only", ["git", "svn"])
    assert b.hit_keywords == ["git"]
    assert b.missed_keywords == ["svn"]
    assert b.hits == 1
    assert b.salience == 0.5
    miss = b.keywords[1]
    assert (miss.hit, miss.count, miss.offsets) == (False, 0, ())


def test_snippet_contains_the_keyword() -> None:
    text = "x" * 100 + " the reviewer MISQUOTED me " + "y" * 100
    (hit,) = breakdown(text, ["quote"]).keywords
    start = hit.offsets[0]
    piece = snippet(text, start, start + hit.lengths[0])
    assert "quote" in piece.lower()
    assert piece.startswith("…") and piece.endswith("…")
    assert len(piece) <= 2 * 40 + 5 + 2


def test_a_long_matchs_snippet_shows_its_ends() -> None:
    # `a*b` matches the whole 1,000,002-character word: explain's line held all of it. Now nothing before (it starts
    # the text), the match's first 40 and last 40 characters with `…` between, 40 after and `…`: 40+1+40+40+1 = 122.
    text = "a" * 1_000_000 + "xb" + " then" + "\n" + "z" * 100
    (hit,) = breakdown(text, ["a*b"]).keywords
    assert hit.spans() == [(0, 1_000_002)]
    piece = snippet(text, 0, 1_000_002)
    assert piece == "a" * 40 + "…" + "a" * 38 + "xb" + " then " + "z" * 34 + "…" and len(piece) == 122
    assert snippet("one quote", 4, 9) == "one quote"  # a short one: as before


def test_snippet_is_one_line() -> None:
    text = "first line\nsecond quote line\r\nthird"
    start = text.index("quote")
    piece = snippet(text, start, start + 5)
    assert "\n" not in piece and "\r" not in piece
    assert "quote" in piece


# ---------------------------------------------------------------- against a naive reference


def reference_counted(keywords: list[str]) -> list[str]:
    """docs/format.md §3: trim; drop what is empty or only '*' (and spaces between them); a repeat is one keyword."""
    out: list[str] = []
    for raw in keywords:
        kw = raw.strip()
        if set(kw) <= {"*", " "}:
            continue
        if kw.lower() not in [o.lower() for o in out]:
            out.append(kw)
    return out


def reference_spans(text: str, keyword: str) -> list[tuple[int, int]]:
    """str.lower().find loop for plain keywords, re.finditer for wildcards (ASCII texts only)."""
    if "*" in keyword:
        pattern = r"\w*".join(re.escape(p) for p in keyword.split("*"))
        return [m.span() for m in re.finditer(pattern, text, re.IGNORECASE) if m.end() > m.start()]
    low_text, low_kw = text.lower(), keyword.lower()
    spans = []
    pos = low_text.find(low_kw)
    while pos != -1:
        spans.append((pos, pos + len(low_kw)))
        pos = low_text.find(low_kw, pos + len(low_kw))
    return spans


def reference_salience(text: str, keywords: list[str]) -> float:
    counted = reference_counted(keywords)
    if not counted:
        return 0.5
    return sum(1 for kw in counted if reference_spans(text, kw)) / len(counted)


texts = st.text(alphabet="abAB *", max_size=40)
keyword_lists = st.lists(st.text(alphabet="abAB *", max_size=5), max_size=6)


@settings(PROPERTY, max_examples=300)
@given(text=texts, keywords=keyword_lists)
def test_matcher_agrees_with_naive_reference(text: str, keywords: list[str]) -> None:
    found = KeywordMatcher(keywords).scan(text)
    for kw in reference_counted(keywords):
        assert found.get(kw.lower(), []) == reference_spans(text, kw), kw
    # as a mapping it holds exactly the keywords that occur
    occurring = {kw.lower() for kw in reference_counted(keywords) if reference_spans(text, kw)}
    assert set(found) == occurring and len(found) == len(occurring)
    assert all((kw.lower() in found) == (kw.lower() in occurring) for kw in reference_counted(keywords))
    assert salience(text, keywords) == pytest.approx(reference_salience(text, keywords))
    b = breakdown(text, keywords)
    assert [k.keyword.lower() for k in b.keywords] == [k.lower() for k in reference_counted(keywords)]
    for k in b.keywords:
        assert k.count == len(reference_spans(text, k.keyword))
        assert k.hit == (k.count > 0)


@settings(PROPERTY, max_examples=150)
@given(
    prefix=st.text(alphabet="aİıK ", max_size=8),
    middle=st.text(alphabet="aİıK ", max_size=8),
)
def test_offsets_round_trip_with_length_changing_lowercase(prefix: str, middle: str) -> None:
    # whatever precedes them, every reported span slices the keyword out of the ORIGINAL text
    text = prefix + "Quote" + middle + "quote"
    (hit,) = breakdown(text, ["quote"]).keywords
    assert hit.count == 2
    for start, end in hit.spans():
        assert text[start:end].lower() == "quote"
    assert hit.offsets[0] == len(prefix)
    assert hit.offsets[1] == len(prefix) + 5 + len(middle)


latin1_texts = st.text(alphabet="abAéÉ *", max_size=200)
latin1_keywords = st.lists(st.text(alphabet="abAéÉ*", min_size=1, max_size=4), max_size=8)


@settings(PROPERTY, max_examples=300)
@given(
    text=latin1_texts,
    keywords=latin1_keywords,
    window=st.integers(1, 9),
    take_out=st.booleans(),
    budget=st.sampled_from([None, 0, 1]),
)
def test_windowed_scan_agrees_with_naive_reference(
    text: str, keywords: list[str], window: int, take_out: bool, budget: int | None
) -> None:
    # The automaton reads a few characters at a time (a match across a border is whole in the next read), takes
    # the keywords found out at every read when `take_out`, and with a budget of wildcard parts' occurrences (per
    # character) of 0 or 1 matches the wildcards a batch at a time, from passes of their own.
    import lesson_credit.core.library.salience as module

    with pytest.MonkeyPatch.context() as patch:
        if take_out:
            patch.setattr(module, "_REBUILD_COST", 0)
        if budget is not None:
            patch.setattr(module, "_PART_BUDGET", budget)
        matcher = KeywordMatcher(keywords)
        first = matcher.scan(text, window)
        found = matcher.scan(text, window)  # a matcher scans again as it did the first time
        b = breakdown_from_scan("l.md", keywords, found)
    assert dict(first) == dict(found)
    counted = reference_counted(keywords)
    for kw in counted:
        assert found.get(kw.lower(), []) == reference_spans(text, kw), kw
    assert set(found) == {kw.lower() for kw in counted if reference_spans(text, kw)}
    assert b.salience == pytest.approx(reference_salience(text, keywords))
    assert [k.count for k in b.keywords] == [len(reference_spans(text, kw)) for kw in counted]


@settings(PROPERTY, max_examples=300)
@given(
    text=st.text(alphabet="aAbİıKkσςΣ\u0345ιßſs_ *", max_size=60),
    keywords=st.lists(st.text(alphabet="aAbİıKkσςΣ\u0345ιßſs_*", min_size=1, max_size=5), max_size=8),
    window=st.integers(1, 9),
    take_out=st.booleans(),
    budget=st.sampled_from([None, 0, 1]),
)
def test_windowed_scan_equals_one_read_of_the_whole_text(
    text: str, keywords: list[str], window: int, take_out: bool, budget: int | None
) -> None:
    # Texts whose lowering changes lengths (`İ`: offsets are mapped back), letters compared as one (`ſ`, `ς`),
    # wildcards: the scan a few characters at a time finds what one read of the whole text does, at the same
    # offsets and lengths in the original text.
    import lesson_credit.core.library.salience as module

    whole = KeywordMatcher(keywords).scan(text, len(text) + 1)
    with pytest.MonkeyPatch.context() as patch:
        if take_out:
            patch.setattr(module, "_REBUILD_COST", 0)
        if budget is not None:
            patch.setattr(module, "_PART_BUDGET", budget)
        windowed = KeywordMatcher(keywords).scan(text, window)
    assert list(windowed) == list(whole)
    for key in whole:
        assert windowed.offsets(key) == whole.offsets(key), key


def test_a_keyword_that_is_a_wildcards_part_stays_in_the_automaton() -> None:
    # `a` is found in the first read and repeats, but the wildcard needs every occurrence of its part `a`: read a
    # character at a time, taking found keywords out at every read, `a*b` still matches at 6 ("ab", by hand).
    import lesson_credit.core.library.salience as module

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(module, "_REBUILD_COST", 0)
        found = KeywordMatcher(["a", "a*b"]).scan("aa aa ab", 1)
    assert found["a*b"] == [(6, 8)]
    assert found["a"] == [(0, 1), (1, 2), (3, 4), (4, 5), (6, 7)]


def test_a_keyword_taken_out_of_the_automaton_keeps_every_offset() -> None:
    # 70,021 characters read 16,384 at a time: "git" occurs 20,000 times in the first read (enough for the rest of
    # the text to be scanned without it), then twice at the end; "tree" only there. Offsets counted by hand.
    text = "git" * 20_000 + "y" * 10_000 + " GIT tree git"
    found = KeywordMatcher(["git", "tree", "zzz"]).scan(text)
    assert found["git"][:2] == [(0, 3), (3, 6)] and len(found["git"]) == 20_002
    assert found["git"][-2:] == [(70_001, 70_004), (70_010, 70_013)]
    assert found["tree"] == [(70_005, 70_009)]
    assert "zzz" not in found
