"""The headline rule of core.analysis.estimates by hand: randomized only with MIN_RANDOMIZED kept and
withheld sessions and an interval no wider than the joint one's; p-values adjusted over the headlines;
the line shown when nothing is distinguishable from zero."""

from __future__ import annotations

import pytest

from lesson_credit.core.analysis.estimates import (
    MIN_RANDOMIZED,
    Effect,
    Randomized,
    distinguishable,
    headlines,
    notes,
    nothing_line,
    randomized_wins,
)


def joint(estimate: float, half: float | None, p: float | None = None) -> Effect:
    low, high = (None, None) if half is None else (estimate - half, estimate + half)
    return Effect(estimate, low, high, "joint", p_value=p, identified=half is not None)


def test_the_rule() -> None:
    narrow = Randomized(0.1, 0.0, 0.2, MIN_RANDOMIZED, MIN_RANDOMIZED, 0.05)
    assert randomized_wins(joint(0.1, 0.2), narrow)  # 0.2 wide against 0.4
    assert not randomized_wins(joint(0.1, 0.05), narrow)  # the joint one is more precise
    assert randomized_wins(joint(0.0, None), narrow)  # the joint one claims nothing
    assert randomized_wins(None, narrow)
    for kept, withheld in ((2, 2), (MIN_RANDOMIZED - 1, 50), (50, MIN_RANDOMIZED - 1)):
        assert not randomized_wins(joint(0.0, None), Randomized(0.3, 0.2, 0.4, kept, withheld, 0.01))
    assert not randomized_wins(joint(0.0, None), Randomized(None, None, None, 30, 30))


def test_headlines_keep_both_and_adjust_over_the_headlines() -> None:
    effects: list[Effect | None] = [joint(0.2, 0.1, 0.001), joint(0.0, None), joint(0.05, 0.1, 0.3)]
    rnd = [None, Randomized(0.3, 0.2, 0.4, 25, 25, 0.002), Randomized(0.9, -1.0, 2.8, 2, 2, 0.5)]
    out = headlines(effects, rnd)
    assert [e.method for e in out if e is not None] == ["joint", "randomized", "joint"]
    assert out[1] is not None and (out[1].estimate, out[1].ci_low, out[1].ci_high) == (0.3, 0.2, 0.4)
    # BH over the three headlines' p-values 0.001, 0.002, 0.3: 0.003, 0.003, 0.3
    assert [e.p_adjusted for e in out if e is not None] == pytest.approx([0.003, 0.003, 0.3])
    assert distinguishable(out) == 2 and nothing_line(out) is None
    quiet = headlines([joint(0.01, 0.1, 0.8), joint(0.0, None)], [None, None])
    assert distinguishable(quiet) == 0
    line = nothing_line(quiet)
    assert line is not None and "distinguishable from zero" in line and "1 with an interval" in line


def test_the_line_says_why_an_interval_clear_of_zero_is_not_a_finding() -> None:
    """Three lessons tested: one's 95% interval [0.05, 0.25] excludes zero on its own (raw p 0.02), but over
    three p-values (0.02, 0.5, 0.9) BH gives 0.02 x 3 / 1 = 0.06, not below 0.05. The line said only "none of
    3", above a row showing [+0.05, +0.25]: it now says the interval excludes zero taken alone."""
    quiet = headlines([joint(0.15, 0.1, 0.02), joint(0.0, 0.2, 0.5), joint(-0.02, 0.1, 0.9)], [None, None, None])
    assert [e.p_adjusted for e in quiet if e is not None] == pytest.approx([0.06, 0.75, 0.9])
    assert nothing_line(quiet) == (
        "No lesson's effect is distinguishable from zero (BH-adjusted p < 0.05 for none of 3 with an interval; "
        "1 of their 95% intervals excludes zero taken alone, not when 3 are tested together): the list is not "
        "a ranking of proven effects."
    )


def test_with_no_interval_at_all_the_line_says_so_not_none_of_0() -> None:
    # two lessons, neither identified (no interval): there is nothing to be distinguishable
    line = nothing_line(headlines([joint(0.01, None), joint(0.0, None)], [None, None]))
    assert line == (
        "No lesson's effect is distinguishable from zero: none is identified yet, so none has an interval (each "
        "lesson's flags say why); the list is not a ranking of proven effects."
    )


def test_a_groups_note_names_its_members_without_saying_with_itself() -> None:
    # the lesson's own row listed itself after "group with"
    member = Effect(0.0, None, None, "joint", identified=False, group=("a.md", "b.md"))
    assert notes(member) == ["one group of lessons mostly injected together: a.md, b.md (not identified)"]
