"""Wildcard keywords over one journal cost a bounded amount of work, whatever their number.

64 wildcards of one-letter parts over a MB of `a`s took 23 s in one `record`: explain asked each wildcard's count
and first offsets with a pass over the journal per question, and every wildcard's matching went through its parts'
occurrences. Now the first question matches every wildcard present in one pass (core/library/scan.py), and a scan
matches wildcards while their work (their parts' occurrences) is within `work_budget`; the next are not matched,
counted as missed, and said. Work is counted, never timed."""

from __future__ import annotations

import re
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import lesson_credit.core.library.salience as salience_module
from lesson_credit.core.library import scan as scan_module
from lesson_credit.core.library.keyword_limits import WILDCARD_WORK_FLOOR, WILDCARD_WORK_PER_CHAR, work_budget
from lesson_credit.core.library.salience import KeywordMatcher, breakdown_from_scan, listed_offsets
from tests.core.test_salience import reference_counted, reference_salience, reference_spans
from tests.support.engine_helpers import PROPERTY


def counting_passes(patch: pytest.MonkeyPatch) -> list[int]:
    """Counts the automaton's passes over a text (KeywordMatcher._pass): one entry each."""
    passes: list[int] = []
    real = KeywordMatcher._pass

    def counted(self: KeywordMatcher, *args: Any) -> None:
        passes.append(1)
        real(self, *args)

    patch.setattr(KeywordMatcher, "_pass", counted)
    return passes


def test_explains_questions_about_every_wildcard_take_one_more_pass() -> None:
    # explain asks each keyword's count and first offsets (views.LessonCredit.as_json). Before: a pass over the
    # journal for each question (1 + 2 x 7 = 15 here: x*y does not occur); now the scan's and one for all.
    keywords = ["a*b", "*a*", "b*a*", "a*a*a", "*b", "ab*ba", "x*y", "a*b*a*b"]
    text = "ab ba abba aab bab xay " * 50 + "aaa"
    with pytest.MonkeyPatch.context() as patch:
        passes = counting_passes(patch)
        found = KeywordMatcher(keywords).scan(text)
        b = breakdown_from_scan("l.md", keywords, found)
        asked = [(k.keyword, k.count, listed_offsets(k)) for k in b.keywords]
    assert len(passes) == 2
    for keyword, count, offsets in asked:
        spans = reference_spans(text, keyword)
        assert (count, offsets) == (len(spans), [a for a, _ in spans]), keyword


def test_wildcards_alike_but_for_runs_of_stars_are_walked_once() -> None:
    # 64 wildcards `a*`, `a**`, ... over "a a a ..." made explain walk 64 x 524,288 matches a MB (16 s): each
    # counted its own. Those alike but for runs of `*` have the same matches: one walk each of a*, *a and *a* here.
    from lesson_credit.core.library.keyword_limits import collapse_stars
    from lesson_credit.core.library.wildcard import Wildcard

    keywords = ["a*", "a**", "a***", "*a", "**a", "*a*"]
    text = "a " * 100 + "ba ab"
    walks: list[str] = []
    real = Wildcard.spans

    def walked(self: Wildcard, *args: Any) -> Any:
        walks.append(self.key)
        return real(self, *args)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(Wildcard, "spans", walked)
        found = KeywordMatcher(keywords).scan(text)
        counts = [found.count(key) for key in keywords]
    assert len(walks) == 3 and sorted(collapse_stars(key) for key in walks) == ["*a", "*a*", "a*"]
    assert counts == [len(reference_spans(text, key)) for key in keywords]


def test_a_reader_past_the_kept_spans_gets_every_one() -> None:
    # A wildcard's first OFFSETS_LISTED spans are kept (3 here); reading on matches it again from there.
    text = "ab " * 10 + "a_b"
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(scan_module, "OFFSETS_LISTED", 3)
        found = KeywordMatcher(["a*b", "b*"]).scan(text)
        assert found.count("a*b") == 11  # ten "ab" and "a_b" (`_` is a word character)
        assert list(found.spans("a*b")) == reference_spans(text, "a*b")
        assert found["a*b"] == reference_spans(text, "a*b") and found["b*"] == reference_spans(text, "b*")


def test_wildcards_past_the_work_budget_are_not_matched() -> None:
    # 300,000 `a`s then "babab" (one word): the budget is 16 x 300,006 = 4,800,096 occurrences (the floor is
    # 1,048,576). By hand: `a` occurs 300,002 times, `aa` 299,999, `b` 3. In order: a*a*a*a works through
    # 4 x 300,002 = 1,200,008; *a*a*a*a* has its parts (nothing more); a*a*a*aa, aa*a*a*a and a*aa*a*a 1,200,005
    # each (4,800,023 in all); a*b*a would make 5,400,030: not matched; b*b 6 (4,800,029); a**a*a*a has a*a*a*a's
    # parts; a*a would make 5,400,033: not matched.
    n = 300_000
    text = "a" * n + "babab"
    assert work_budget(len(text)) == WILDCARD_WORK_PER_CHAR * (len(text) + 1) == 4_800_096 > WILDCARD_WORK_FLOOR
    wild = ["a*a*a*a", "*a*a*a*a*", "a*a*a*aa", "aa*a*a*a", "a*aa*a*a", "a*b*a", "b*b", "a**a*a*a", "a*a"]
    keywords = [*wild, "plain", "abab"]
    found = KeywordMatcher(keywords).scan(text)
    assert found.unmatched == {"a*b*a", "a*a"}
    assert found.work == 4_800_029 <= work_budget(len(text))
    # from the first `a` to the last that can end it (the last `aa` is the run's), or with `\w*` after, the end
    assert found["a*a*a*a"] == found["aa*a*a*a"] == found["a*aa*a*a"] == found["a**a*a*a"] == [(0, n + 4)]
    assert found["a*a*a*aa"] == [(0, n)]
    assert found["*a*a*a*a*"] == [(0, n + 5)] and found["b*b"] == [(n, n + 5)]
    assert "a*b*a" not in found and "a*a" not in found
    b = breakdown_from_scan("l.md", keywords, found)
    # hits: the 7 matched wildcards and abab, of 11 counted; the two unmatched count as missed
    assert b.salience == pytest.approx(8 / 11) and b.unmatched == 2
    assert [k.keyword for k in b.keywords if k.unmatched] == ["a*b*a", "a*a"]


def test_any_four_wildcards_fit_the_budget() -> None:
    # A part occurs at most once a character, a wildcard has at most 4 parts: 4 x 4 x (n + 1) <= 16 x (n + 1).
    text = "a" * 200_000
    found = KeywordMatcher(["a*a*a*a", "aa*a*a*a", "a*aa*a*a", "a*a*aa*a"]).scan(text)
    assert not found.unmatched and found["a*a*a*a"] == found["a*a*aa*a"] == [(0, 200_000)]


def reference_unmatched(text: str, keywords: list[str], budget: int) -> list[str]:
    """The wildcards past the budget, from counts of each part's (overlapping) occurrences in the text lowered,
    taken in order, each that still fits counted, once for each set of parts (ASCII texts: lowering keeps
    lengths)."""
    low = text.lower()

    def occurrences(part: str) -> int:
        return sum(1 for i in range(len(low)) if low.startswith(part, i))

    spent, out, done = 0, [], set()
    for keyword in reference_counted(keywords):
        parts = tuple(p for p in re.split(r"\*+", keyword.lower()) if p)
        if "*" not in keyword or not all(occurrences(p) for p in parts) or parts in done:
            continue
        work = sum(occurrences(p) for p in parts)
        if spent + work > budget:
            out.append(keyword.lower())
        else:
            spent += work
            done.add(parts)
    return out


@settings(PROPERTY, max_examples=300)
@given(
    text=st.text(alphabet="abAB *", max_size=40),
    keywords=st.lists(st.text(alphabet="abAB *", max_size=5), max_size=8),
    budget=st.integers(0, 60),
)
def test_under_any_budget_what_is_matched_agrees_with_the_naive_reference(
    text: str, keywords: list[str], budget: int
) -> None:
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(salience_module, "work_budget", lambda n: budget)
        found = KeywordMatcher(keywords).scan(text)
        b = breakdown_from_scan("l.md", keywords, found)
        counts = [k.count for k in b.keywords]
    unmatched = reference_unmatched(text, keywords, budget)
    assert sorted(found.unmatched) == sorted(unmatched)
    assert found.work <= budget
    for kw in reference_counted(keywords):
        expected = [] if kw.lower() in unmatched else reference_spans(text, kw)
        assert found.get(kw.lower(), []) == expected, kw
    matched = [kw for kw in reference_counted(keywords) if kw.lower() not in unmatched]
    hits = sum(1 for kw in matched if reference_spans(text, kw))
    assert b.salience == pytest.approx(hits / len(b.keywords) if b.keywords else reference_salience(text, keywords))
    assert counts == [
        0 if kw.lower() in unmatched else len(reference_spans(text, kw)) for kw in reference_counted(keywords)
    ]


def test_select_says_when_the_librarys_wildcards_were_not_all_matched() -> None:
    # The same budget over select's context: 200,000 `a`s (budget 16 x 200,001 = 3,200,016); five 4-part
    # wildcards of 800,000 (`a`) or 799,999 (`aa` for one part) occurrences each: the fifth would pass it.
    from lesson_credit.core.bandit.select import split_candidates
    from lesson_credit.core.library.lessons import Lesson

    wild = ["a*a*a*a", "aa*a*a*a", "a*aa*a*a", "a*a*aa*a", "a*a*a*aa"]
    lessons = [Lesson(f"l{i}.md", "L", "c", "active", "", (key,), ()) for i, key in enumerate(wild)]
    notes: list[str] = []
    kept, _ = split_candidates(lessons, "a" * 200_000, None, notes)
    assert [lesson.id for lesson in kept] == ["l0.md", "l1.md", "l2.md", "l3.md"]
    assert notes == [
        "1 wildcard keyword of the library not matched over this context: matching them would go through more than "
        "16 occurrences of their parts a character of it (docs/format.md §3)"
    ]


@settings(PROPERTY, max_examples=300)
@given(
    text=st.text(alphabet="abAB _*", max_size=60),
    keywords=st.lists(st.text(alphabet="abAB_*", min_size=1, max_size=5), max_size=6),
    step=st.integers(1, 6),
)
def test_a_wildcards_count_by_jumps_is_its_number_of_matches(text: str, keywords: list[str], step: int) -> None:
    # explain's count of a wildcard with more matches than it lists (none listed here: every count is counted) is
    # taken by jumps of 1, 2, 4, ... matches through a step of candidates at a time (a few here), never a Python
    # step per match; it is the number of matches re.finditer finds.
    from lesson_credit.core.library import wildcard as wildcard_module

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(scan_module, "OFFSETS_LISTED", 0)
        patch.setattr(wildcard_module, "_STEP", step)
        found = KeywordMatcher(keywords).scan(text)
        counts = {kw: found.count(kw.lower()) for kw in reference_counted(keywords)}
    assert counts == {kw: len(reference_spans(text, kw)) for kw in reference_counted(keywords)}


def test_a_dense_wildcards_count_over_many_steps() -> None:
    # `a*` over "a a a ...": 70,000 matches, more than a step of candidates (65,536): counted over two steps.
    text = "a " * 70_000
    found = KeywordMatcher(["a*", "*a*"]).scan(text)
    assert found.count("a*") == found.count("*a*") == 70_000
    assert list(found.spans("a*"))[-1] == (139_998, 139_999)


def test_wildcards_of_the_same_parts_share_one_pass_when_batched() -> None:
    # Over 20,000 `a`s, four sets of four parts (a..aaaa, a*5..a*8, a*9..a*12, a*13..a*16): each set's parts occur
    # about 4 x 20,000 times, what one batch may hold (4 a character), so each set is a batch of its own. Sixteen
    # wildcards, the four sets and then the first two alternating (review29): before, each change of set started a
    # batch, a pass over the journal each (16 passes); now those of one set go together: 4.
    text = "a" * 20_000
    sets = [tuple("a" * (4 * i + j + 1) for j in range(4)) for i in range(4)]

    def key(parts: tuple[str, ...], stars: int) -> str:
        return parts[0] + "*" * stars + "*".join(parts[1:])

    keywords = [key(p, 1) for p in sets] + ["*" * (i + 1) + key(sets[i % 2], i + 2) for i in range(12)]
    gathered: list[int] = []
    real = KeywordMatcher._gather

    def counted(self: KeywordMatcher, *args: Any) -> Any:
        gathered.append(1)
        return real(self, *args)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(KeywordMatcher, "_gather", counted)
        found = KeywordMatcher(keywords).scan(text)
    assert len(gathered) == 4
    # each is its parts in order inside one word of 20,000 `a`s: every one matches
    assert sorted(found) == sorted(keywords) and not found.unmatched
