"""The spans a view highlights for a lesson's keyword hits: their matches before the end of what it shows, those
that overlap or touch made one (the view styles each character in any of them alike)."""

from __future__ import annotations

from lesson_credit.core.library.salience import salience_breakdowns
from lesson_credit.tui.highlights import hit_spans


def test_overlapping_and_touching_matches_are_one_span_and_those_past_the_end_shown_are_left_out() -> None:
    (breakdown,) = salience_breakdowns("aaab aa b", [("l.md", ["a", "aa", "b", "missed"])])
    # `a` at 0, 1, 2, 5, 6; `aa` at 0-2 and 5-7; `b` at 3 and 8: 0-4 (0-3 and the `b` touching it), 5-7, 8-9
    assert hit_spans(breakdown) == [(0, 4), (5, 7), (8, 9)]
    # matches that start before 6: `a` at 5 and `aa` at 5-7 still in (it ends past 6), the `b` at 8 not
    assert hit_spans(breakdown, stop=6) == [(0, 4), (5, 7)]
    assert hit_spans(breakdown, stop=0) == []
