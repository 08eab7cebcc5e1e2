"""Every plain hit keyword's count and first occurrences from one pass (core/library/hit_counts.py): the same as
`str.count` and a `str.find` from the end of each match, keywords overlapping themselves and one another included,
whatever the reads' size; and a pass that would go through more occurrences than its budget counts nothing."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lesson_credit.core.library import hit_counts
from lesson_credit.core.library.hit_counts import count_budget, plain_counts
from tests.support.engine_helpers import PROPERTY


def _found(text: str, key: str) -> list[int]:
    """The reference: `str.find` from where the last match ended (what `str.count` counts)."""
    starts, at = [], text.find(key)
    while at != -1:
        starts.append(at)
        at = text.find(key, at + len(key))
    return starts


@settings(PROPERTY, max_examples=600)
@given(
    st.text("ab ", max_size=60),
    st.lists(st.text("ab", min_size=1, max_size=5), min_size=1, max_size=8, unique=True),
    st.integers(0, 6),
    st.integers(1, 12),
)
def test_counts_and_first_occurrences_are_str_counts(text: str, keys: list[str], keep: int, window: int) -> None:
    counts = plain_counts(text, keys, keep, window=window)
    assert counts.counted
    for key in keys:
        assert counts.count(key) == text.count(key) == len(_found(text, key)), (text, key)
        assert counts.first(key) == _found(text, key)[:keep], (text, key, window)
    assert counts.count("zz") == 0 and counts.first("zz") == []  # (a key not asked about)


def test_overlapping_keywords_by_hand() -> None:
    # "aaaaa": `aa` at 0 and 2 (1 and 3 overlap the one before), `aaa` at 0 only (2 would run past the end),
    # `a` five times; occurrences reported: a 5 + aa 4 + aaa 3 = 12, whatever the reads.
    for window in (1, 2, 3, 100):
        counts = plain_counts("aaaaa", ["a", "aa", "aaa"], 10, window=window)
        assert [counts.count(k) for k in ("a", "aa", "aaa")] == [5, 2, 1]
        assert [counts.first(k) for k in ("a", "aa", "aaa")] == [[0, 1, 2, 3, 4], [0, 2], [0]]
        assert counts.work == 12


def test_past_its_budget_the_first_keywords_are_counted_one_at_a_time(monkeypatch: pytest.MonkeyPatch) -> None:
    # "abab": `a` at 0, 2; `ab` at 0, 2; `b` at 1, 3: 6 occurrences in all.
    within = plain_counts("abab", ["a", "ab", "b"], 5, budget=6)
    assert within.counted and within.work == 6 and [within.count(k) for k in ("a", "ab", "b")] == [2, 2, 2]
    monkeypatch.setattr(hit_counts, "ONE_AT_A_TIME", 2)
    monkeypatch.setattr(hit_counts, "ONE_AT_A_TIME_CHARS", 0)
    past = plain_counts("abab", ["a", "ab", "b"], 1, budget=5)
    assert not past.counted
    assert [past.count(k) for k in ("a", "ab", "b")] == [2, 2, None]
    assert [past.first(k) for k in ("a", "ab", "b")] == [[0], [0], None]
    assert past.count("zz") == 0 and past.first("zz") == []


@settings(PROPERTY, max_examples=200)
@given(
    st.text("ab", min_size=1, max_size=30),
    st.lists(st.text("ab", min_size=1, max_size=4), min_size=1, max_size=20, unique=True),
    st.integers(0, 4),
)
def test_one_at_a_time_gives_the_same_numbers(text: str, keys: list[str], keep: int) -> None:
    past = plain_counts(text, keys, keep, budget=-1)  # past the budget at the first read
    for slot, key in enumerate(keys):
        # the first 16, or as many as 2**29 characters read allow, one read of the text each
        counted = slot < max(hit_counts.ONE_AT_A_TIME, (1 << 29) // len(text))
        assert past.count(key) == (text.count(key) if counted else None)
        assert past.first(key) == (_found(text, key)[:keep] if counted else None)


def test_the_budget_is_a_quarter_occurrence_a_character_and_a_floor() -> None:
    assert count_budget(64 << 20) == 16 << 20  # 67,108,864 characters / 4
    assert count_budget(1000) == 1 << 20  # the floor: 1,048,576
    assert count_budget(0) == 1 << 20
