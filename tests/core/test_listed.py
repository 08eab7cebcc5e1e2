"""The first few of a list, then how many more (core/base/numbers.py `listed`): one wording for every
message, table note and dashboard notice that names some items and counts the rest."""

from __future__ import annotations

from lesson_credit.core.base.numbers import and_more, listed

ABC = ["a", "b", "c", "d", "e"]


def test_a_list_that_fits_is_joined_whole() -> None:
    assert listed(ABC, 5) == "a, b, c, d, e"
    assert listed(ABC, 9) == "a, b, c, d, e"
    assert listed([], 3) == ""


def test_the_rest_is_counted() -> None:
    assert listed(ABC, 2) == "a, b and 3 more"  # 5 - 2 = 3
    assert listed(ABC, 4, "; ") == "a; b; c; d and 1 more"
    assert and_more(7) == "and 7 more"


def test_a_total_counts_what_the_caller_did_not_pass() -> None:
    assert listed(["x", "y"], 2, total=10) == "x, y and 8 more"  # 10 - 2
    assert listed(["x", "y"], 2, total=2) == "x, y"
    assert listed([], 0, total=4) == "4 more"


def test_the_dashboard_marks_the_cut_after_a_separator() -> None:
    assert listed(ABC, 2, ellipsis=True) == "a, b, … and 3 more"
    assert listed(ABC, 3, "\n", ellipsis=True) == "a\nb\nc\n… and 2 more"
    assert listed(ABC, 5, ellipsis=True) == "a, b, c, d, e"
