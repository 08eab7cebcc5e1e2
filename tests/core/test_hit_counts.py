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
    st.integers(0, 20),
)
def test_one_at_a_time_gives_the_same_numbers(text: str, keys: list[str], keep: int, chars: int) -> None:
    # (2**29 characters' work counts all of these; a budget of `chars` thousand ones some of them)
    for budget in (1 << 29, chars * 1000):
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(hit_counts, "ONE_AT_A_TIME", 0)
            patch.setattr(hit_counts, "ONE_AT_A_TIME_CHARS", budget)
            past = plain_counts(text, keys, keep, budget=-1)  # past the budget at the first read
        counted = [past.count(key) is not None for key in keys]
        assert counted == sorted(counted, reverse=True)  # the first ones
        assert all(counted) or budget < 1 << 29
        for key, done in zip(keys, counted, strict=True):
            assert past.count(key) == (text.count(key) if done else None)
            assert past.first(key) == (_found(text, key)[:keep] if done else None)


class _Calls(str):
    """A journal that counts the `str.find` and `str.count` calls made on it (slices are plain `str`)."""

    finds = counts = 0

    def find(self, *args: object) -> int:
        _Calls.finds += 1
        return str.find(self, *args)  # type: ignore[arg-type]

    def count(self, *args: object) -> int:
        _Calls.counts += 1
        return str.count(self, *args)  # type: ignore[arg-type]


def _calls(text: str, keys: list[str], keep: int) -> tuple[list[int | None], list[int]]:
    """Past the one-pass budget: each keyword's count, and the finds and counts made on the journal."""
    _Calls.finds = _Calls.counts = 0
    past = plain_counts(_Calls(text), keys, keep, budget=-1)
    return [past.count(key) for key in keys], [_Calls.finds, _Calls.counts]


def test_one_at_a_time_finds_are_in_its_budget(monkeypatch: pytest.MonkeyPatch) -> None:
    # 100,000 characters of `ab`; `ababab`, `bababa`, `abababa`, ... (6 to 100 characters) each occur at least
    # 999 times. The first is counted whatever the budget: its read costs 70,000 + 30,000 x (4 + 6 // 2) (its last
    # 30,000 characters searched plainly) = 280,000, its 1,000 finds 1,000 x 256: 536,000 in all. `bababa` may
    # cost as much again: past 1,000,000, so it and those after it are not counted. Before, the budget counted
    # one read a keyword (1,000,000 // 100,000: 10 keywords) and none of their finds: 10,010 of them.
    monkeypatch.setattr(hit_counts, "ONE_AT_A_TIME", 1)
    monkeypatch.setattr(hit_counts, "ONE_AT_A_TIME_CHARS", 1_000_000)
    text = "ab" * 50_000
    keys = [key for m in range(6, 101) for key in (("ab" * 50)[:m], ("ba" * 50)[:m])]
    counts, calls = _calls(text, keys, 1000)
    # `ababab` at 0, 6, ..., 99,990: 16,666 (found a thousand times, then counted from 6,000 on)
    assert counts == [16_666] + [None] * (len(keys) - 1)
    assert calls == [1000, 1]


def test_short_journals_searched_plainly_count_what_they_cost(monkeypatch: pytest.MonkeyPatch) -> None:
    # 10,000 characters, under 30,000: CPython compares up to the keyword's length at each position (`a..abaa`
    # over `a`s: the whole `a..a` before each mismatch). The first keyword (100 characters, at 9,900 only) costs
    # 10,000 x (4 + 100 // 2) = 540,000 and 2 finds (512); the next may cost 10,000 x (4 + 99 // 2) + 1,000 x 256:
    # past 1,000,000. Before, its budget read 1,000,000 // 10,000 = 100 keywords, so all 95 were counted (95 counts
    # and 190 finds, each comparing ~50 characters a position).
    monkeypatch.setattr(hit_counts, "ONE_AT_A_TIME", 1)
    monkeypatch.setattr(hit_counts, "ONE_AT_A_TIME_CHARS", 1_000_000)
    text = "a" * 9_997 + "baa"
    keys = ["a" * i + "baa" for i in range(97, 2, -1)]
    counts, calls = _calls(text, keys, 1000)
    assert counts == [1] + [None] * 94
    assert calls == [2, 0]


def test_a_read_costs_more_where_cpython_searches_plainly() -> None:
    assert hit_counts.search_cost(1 << 20, 1) == 1 << 20  # one character: a scan for it
    assert hit_counts.search_cost(1 << 20, 5) == (1 << 20) * 6  # under 6 characters: plainly throughout
    assert hit_counts.search_cost(1 << 20, 6) == (1 << 20) - 30_000 + 30_000 * 7  # the last 30,000 plainly
    assert hit_counts.search_cost(20_000, 100) == 20_000 * 54  # a journal under 30,000: all of it


def test_the_budget_is_a_quarter_occurrence_a_character_and_a_floor() -> None:
    assert count_budget(64 << 20) == 16 << 20  # 67,108,864 characters / 4
    assert count_budget(1000) == 1 << 20  # the floor: 1,048,576
    assert count_budget(0) == 1 << 20
