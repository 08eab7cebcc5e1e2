"""Leave-one-out attribution (core.analysis.effects via Workspace.loo): Welch lift, BH, category control, IPW, flags.

Every expected number is worked out by hand in a comment or computed a second way
(scipy.stats on the same samples, an explicit loop), never by the function under test.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy import stats

from lesson_credit.core.analysis.effects import (
    MIN_IPW,
    PRIOR_DF,
    REWARD_RESOLUTION,
    Candidacy,
    leave_one_out,
    reward_split,
)
from lesson_credit.core.analysis.limits import MIN_WITH, MIN_WITHOUT
from lesson_credit.core.analysis.stats import benjamini_hochberg
from lesson_credit.core.workspace import Workspace
from tests.support.crafted_loo import LESSONS, WITH_A, WITHOUT_A, A, B, C, D, crafted_workspace
from tests.support.engine_helpers import LOG_REL, PROPERTY, fixed_clock, grade, make_workspace, session


@pytest.fixture
def crafted(tmp_path: Path) -> Path:
    return crafted_workspace(tmp_path)


def by_path(results: list[Any]) -> dict[str, Any]:
    return {r.path: r for r in results}


def welch_by_hand(x: list[float], y: list[float]) -> tuple[float, float, float]:
    """(delta, se, df) of Welch's test written out from the textbook formulas."""
    a, b = np.var(x, ddof=1) / len(x), np.var(y, ddof=1) / len(y)
    df = (a + b) ** 2 / (a**2 / (len(x) - 1) + b**2 / (len(y) - 1))
    return float(np.mean(x) - np.mean(y)), float(math.sqrt(a + b)), float(df)


def moderated_by_hand(x: list[float], y: list[float], everything: list[float]) -> tuple[float, float, float]:
    """(delta, p, half-width) of Welch's test on moderated variances, from the formulas:
    s_mod^2 = ((n-1) s^2 + d0 s0^2) / (n-1+d0), s0^2 = max(var(all graded rewards), 0.01^2), d0 = 4;
    Welch-Satterthwaite df with n-1+d0 per side; p and quantile from scipy.stats.t."""
    d0 = 4.0
    s0 = max(float(np.var(everything, ddof=1)), 0.01**2)
    parts = []
    for sample in (x, y):
        n = len(sample)
        var = float(np.var(sample, ddof=1)) if n > 1 else 0.0
        parts.append((((n - 1) * var + d0 * s0) / (n - 1 + d0) / n, n - 1 + d0))
    (a, da), (b, db) = parts
    df = (a + b) ** 2 / (a * a / da + b * b / db)
    se = math.sqrt(a + b)
    delta = float(np.mean(x) - np.mean(y))
    return delta, float(2 * stats.t.sf(abs(delta) / se, df)), float(stats.t.ppf(0.975, df) * se)


def test_moderation_constants() -> None:
    assert PRIOR_DF == 4.0 and REWARD_RESOLUTION == 0.01


# ---------------------------------------------------------------- naive Welch lift


def test_loo_counts_means_and_delta_by_hand(crafted: Path) -> None:
    results = by_path(Workspace(crafted, clock=fixed_clock).loo(write=False))
    a = results[A]
    # 31 graded sessions; p1, p2 (with A) and p3 are pending and excluded
    assert (a.n_with, a.n_without) == (6, 25)
    assert a.mean_with == pytest.approx(0.8)  # (0.9+0.8+0.7)*2/6
    assert a.mean_without == pytest.approx(0.5)  # (0.3+...+0.7)*5/25
    assert a.delta == pytest.approx(0.3)
    assert a.sufficient and a.insufficient_reason is None
    # D: with = w0 w2 w4 (0.9, 0.7, 0.8) + o3 o5 o8 o11 o14 o17 o20 (0.6 0.3 0.6 0.4 0.7 0.5 0.3)
    d_with = [0.9, 0.7, 0.8, 0.6, 0.3, 0.6, 0.4, 0.7, 0.5, 0.3]
    assert (results[D].n_with, results[D].n_without) == (10, 21)
    assert results[D].mean_with == pytest.approx(sum(d_with) / 10)  # 5.8 / 10 = 0.58
    # without D: total of all 31 graded rewards is 4.8 + 12.5 = 17.3; minus 5.8 -> 11.5 over 21
    assert results[D].mean_without == pytest.approx(11.5 / 21)


def test_loo_p_value_and_interval_are_welch_on_moderated_variances(crafted: Path) -> None:
    a = by_path(Workspace(crafted, clock=fixed_clock).loo(write=False))[A]
    delta, p, half = moderated_by_hand(WITH_A, WITHOUT_A, WITH_A + WITHOUT_A)
    assert a.p_value == pytest.approx(p, rel=1e-6)
    assert a.ci_low == pytest.approx(delta - half, rel=1e-6)
    assert a.ci_high == pytest.approx(delta + half, rel=1e-6)
    # by hand: all 31 rewards: mean 17.3/31 = 0.558, variance s0^2 = 0.032516;
    # with A: (5 * 0.008 + 4 * 0.032516) / 9 = 0.018896, /6 = 0.0031494;
    # without: (24 * 0.5/24 + 4 * 0.032516) / 28 = 0.022502, /25 = 0.00090009
    # se = sqrt(0.0040495) = 0.063636 (t = 4.7; plain Welch's is 6.4);
    # df = 0.0040495^2 / (0.0031494^2 / 9 + 0.00090009^2 / 28) = 14.50
    assert a.ci_high - a.ci_low == pytest.approx(2 * stats.t.ppf(0.975, 14.50) * 0.063636, rel=2e-3)
    assert 0.13 < a.ci_low < a.ci_high < 0.47
    assert a.p_value < 0.01
    plain = stats.ttest_ind(WITH_A, WITHOUT_A, equal_var=False).pvalue
    assert a.p_value > plain  # moderation never adds certainty to a 6-session sample this noisy


def test_moderated_welch_approaches_plain_welch_with_many_sessions(tmp_path: Path) -> None:
    rng = np.random.default_rng(4)
    with_a = np.round(rng.uniform(0.4, 1.0, 400), 2).tolist()
    without = np.round(rng.uniform(0.3, 0.9, 600), 2).tolist()
    events = [session(f"w{i}", r, {A: 0.5}) for i, r in enumerate(with_a)]
    events += [session(f"o{i}", r, {B: 0.5}) for i, r in enumerate(without)]
    # in a shuffled order: all of A's sessions first would be a switch in time (where the 5th of 10 time
    # blocks starts), with no leave-one-out lift; the order moves no mean or variance
    events = [events[i] for i in np.random.default_rng(5).permutation(len(events))]
    root = make_workspace(tmp_path, lessons=LESSONS, events=events)
    a = by_path(Workspace(root, clock=fixed_clock).loo(write=False))[A]
    plain = stats.ttest_ind(with_a, without, equal_var=False)
    assert a.p_value == pytest.approx(plain.pvalue, rel=0.05)


def test_tiny_identical_samples_get_a_sane_p_and_interval(tmp_path: Path) -> None:
    # 5 sessions at 0.8 with A, 20 at 0.7 without: both sample variances are exactly 0.
    # All 25: mean 0.72, variance (5 * 0.08^2 + 20 * 0.02^2) / 24 = 0.04 / 24 = 0.0016667 = s0^2
    # with: (0 + 4 s0^2) / 8 = 0.00083333 -> /5 = 0.00016667; without: 4 s0^2 / 23 = 0.00028986 -> /20 = 1.4493e-5
    # se = sqrt(0.00018116) = 0.013460, t = 7.43; df = se^4 / ((1.6667e-4)^2 / 8 + (1.4493e-5)^2 / 23) = 9.43
    # A's sessions spread over the log (one in every five): A's sessions first would be a switch that a step
    # in the baseline explains as well, and its leave-one-out lift is then withheld (the order moves no mean)
    without = [session(f"o{i}", 0.7, {B: 0.5}) for i in range(20)]
    events = [e for i in range(5) for e in (session(f"w{i}", 0.8, {A: 0.5}), *without[4 * i : 4 * i + 4])]
    root = make_workspace(tmp_path, lessons=LESSONS, events=events)
    a = by_path(Workspace(root, clock=fixed_clock).loo(write=False))[A]
    assert a.delta == pytest.approx(0.1)
    assert a.p_value == pytest.approx(2 * stats.t.sf(0.1 / 0.013460, 9.43), rel=0.01)
    assert 1e-6 < a.p_value < 1e-3  # strong, but not 3e-29 (nor the exact case's 0)
    assert a.ci_low is not None and a.ci_high is not None
    assert a.ci_high - a.ci_low == pytest.approx(2 * stats.t.ppf(0.975, 9.43) * 0.013460, rel=0.01)  # ~0.06 wide
    assert 0.05 < a.ci_high - a.ci_low < 0.08


def test_loo_insufficient_rows_are_listed_with_a_reason(crafted: Path) -> None:
    results = Workspace(crafted, clock=fixed_clock).loo(write=False)
    assert {r.path for r in results} == {A, B, C, D}  # nothing dropped
    rows = by_path(results)
    c = rows[C]
    assert (c.n_with, c.n_without) == (3, 28)
    assert not c.sufficient
    assert c.insufficient_reason is not None
    assert f"{MIN_WITH}" in c.insufficient_reason and f"{MIN_WITHOUT}" in c.insufficient_reason
    assert "3" in c.insufficient_reason and "28" in c.insufficient_reason
    assert c.p_value is None and c.p_adjusted is None and c.ci_low is None and c.ci_high is None
    # no lift below the minimums, only the means: with = o0 o1 o2 = 0.3 0.4 0.5; without = (17.3 - 1.2) / 28
    assert c.delta is None and c.delta_category is None
    assert c.mean_with == pytest.approx(0.4) and c.mean_without == pytest.approx(16.1 / 28)
    # B: 25 with, only 6 without (< 20)
    b = rows[B]
    assert (b.n_with, b.n_without) == (25, 6)
    assert not b.sufficient and b.p_value is None


def test_loo_minimums_are_configurable(crafted: Path) -> None:
    ws = Workspace(crafted, clock=fixed_clock)
    strict = by_path(ws.loo(min_with=7, write=False))
    assert not strict[A].sufficient  # 6 < 7
    assert "7" in (strict[A].insufficient_reason or "")
    assert by_path(ws.loo(min_without=26, write=False))[A].sufficient is False  # 25 < 26
    loose = by_path(ws.loo(min_with=3, min_without=6, write=False))
    assert loose[C].sufficient and loose[C].p_value is not None
    assert loose[B].sufficient  # 25 with, 6 without
    exact = by_path(ws.loo(min_with=6, min_without=25, write=False))
    assert exact[A].sufficient  # the minimums are inclusive


def test_loo_pending_then_graded_session_counts(crafted: Path) -> None:
    root = crafted
    with (root / LOG_REL).open("a", encoding="utf-8") as handle:
        handle.write(json.dumps(grade("p1", 0.1)) + "\n")
    a = by_path(Workspace(root, clock=fixed_clock).loo(write=False))[A]
    assert (a.n_with, a.n_without) == (7, 25)
    assert a.mean_with == pytest.approx((4.8 + 0.1) / 7)
    _, expected_p, _ = moderated_by_hand([*WITH_A, 0.1], WITHOUT_A, [*WITH_A, 0.1, *WITHOUT_A])
    assert a.p_value == pytest.approx(expected_p, rel=1e-6)


def test_loo_adjusted_p_values_are_bh_across_sufficient_lessons(crafted: Path) -> None:
    rows = by_path(Workspace(crafted, clock=fixed_clock).loo(write=False))
    d_with = [0.9, 0.7, 0.8, 0.6, 0.3, 0.6, 0.4, 0.7, 0.5, 0.3]
    all_rewards = WITH_A + WITHOUT_A
    d_without = list(all_rewards)
    for value in d_with:
        d_without.remove(value)
    _, p_a, _ = moderated_by_hand(WITH_A, WITHOUT_A, all_rewards)
    _, p_d, _ = moderated_by_hand(d_with, d_without, all_rewards)
    assert rows[D].p_value == pytest.approx(p_d, rel=1e-6)
    # two tests (B and C are insufficient): the smaller p doubles, the larger stays (capped by min)
    small, large = sorted([p_a, p_d])
    expected = {p_a: min(small * 2, large), p_d: large} if p_a < p_d else {p_d: min(small * 2, large), p_a: large}
    assert rows[A].p_adjusted == pytest.approx(expected[p_a], rel=1e-6)
    assert rows[D].p_adjusted == pytest.approx(expected[p_d], rel=1e-6)


def test_reward_split_separates_graded_rewards(crafted: Path) -> None:
    ws = Workspace(crafted, clock=fixed_clock)
    with_a, without_a = reward_split(ws.data(), A)
    assert sorted(with_a.tolist()) == pytest.approx(sorted(WITH_A))
    assert sorted(without_a.tolist()) == pytest.approx(sorted(WITHOUT_A))
    none, everything = reward_split(ws.data(), "not/logged.md")
    assert len(none) == 0 and len(everything) == 31


def test_reward_split_counts_a_lesson_included_during_a_session_as_without_it(tmp_path: Path) -> None:
    # The dashboard plots these two lists beside loo's numbers, which count a session that pulled the
    # lesson in mid-conversation as one without it. Two sessions chose A before (0.8, 0.9), two pulled
    # it in when trouble came up (0.1, 0.2), two never had it (0.6, 0.7).
    events = [
        session("b1", 0.8, {A: 0.5}),
        session("b2", 0.9, {A: 0.5}),
        session("d1", 0.1, {A: 0.5}),
        session("d2", 0.2, {A: 0.5}),
        session("n1", 0.6, {B: 0.5}),
        session("n2", 0.7, {B: 0.5}),
    ]
    for event in events[:2]:
        event["lessons"][0]["included"] = "before"
    for event in events[2:4]:
        event["lessons"][0]["included"] = "during"
    ws = Workspace(make_workspace(tmp_path, LESSONS, events), clock=fixed_clock)
    with_a, without_a = reward_split(ws.data(), A)
    assert sorted(with_a.tolist()) == pytest.approx([0.8, 0.9])
    assert sorted(without_a.tolist()) == pytest.approx([0.1, 0.2, 0.6, 0.7])
    row = by_path(ws.loo(write=False, min_with=1, min_without=1))[A]
    assert (row.n_with, row.n_without) == (len(with_a), len(without_a))  # the plots show what loo compares


def test_a_session_that_chose_a_lesson_before_is_not_among_those_that_included_it_during(tmp_path: Path) -> None:
    # Another tool's log lists A twice in x1: pulled in during the session, and chosen before it. x1 is a session
    # with A (loo compares it so); `during` counts the sessions that only pulled it in: d1 alone (0.1), not
    # d1 and x1 (2 sessions, mean 0.5), which put x1 on both sides.
    events = [
        session("b1", 0.8, {A: 0.5}),
        session("d1", 0.1, {A: 0.5}),
        session("x1", 0.9, {A: 0.5}),
        session("n1", 0.6, {B: 0.5}),
    ]
    events[0]["lessons"][0]["included"] = "before"
    events[1]["lessons"][0]["included"] = "during"
    events[2]["lessons"] = [{"path": A, "salience": 0.5, "included": "during"}, {"path": A, "salience": 0.5}]
    ws = Workspace(make_workspace(tmp_path, LESSONS, events), clock=fixed_clock)
    row = by_path(ws.loo(write=False, min_with=1, min_without=1))[A]
    assert (row.n_with, row.n_without) == (2, 2)  # b1, x1 against d1, n1
    assert (row.n_during, row.mean_during) == (1, pytest.approx(0.1))


# ---------------------------------------------------------------- Benjamini-Hochberg


def test_bh_hand_example() -> None:
    # sorted 0.01 0.03 0.04 0.2 -> p*m/rank = 0.04 0.06 0.0533 0.2; step-up minimum from the top
    # gives 0.04 0.0533 0.0533 0.2, put back in input order
    got = benjamini_hochberg([0.01, 0.04, 0.03, 0.2])
    assert got == pytest.approx([0.04, 0.04 * 4 / 3, 0.04 * 4 / 3, 0.2])


def test_bh_skips_none_and_caps_at_one() -> None:
    # m = 2 (None and NaN do not count): 0.6*2/1 = 1.2 -> min(1.2, 0.7) = 0.7; 0.7*2/2 = 0.7
    got = benjamini_hochberg([None, 0.7, float("nan"), 0.6])
    assert got[0] is None and got[2] is None
    assert got[1] == pytest.approx(0.7) and got[3] == pytest.approx(0.7)
    assert benjamini_hochberg([0.9, 0.95]) == pytest.approx([0.95, 0.95])
    assert benjamini_hochberg([0.8]) == pytest.approx([0.8])
    assert benjamini_hochberg([]) == []


@PROPERTY
@given(st.lists(st.floats(min_value=0.0, max_value=1.0, allow_nan=False), min_size=1, max_size=30))
@pytest.mark.smoke
def test_bh_is_monotone_and_matches_scipy(p_values: list[float]) -> None:
    got = benjamini_hochberg(p_values)
    adjusted = [g for g in got if g is not None]
    assert len(adjusted) == len(p_values)
    expected = stats.false_discovery_control(p_values, method="bh")
    assert adjusted == pytest.approx(expected.tolist(), abs=1e-12)
    order = sorted(range(len(p_values)), key=lambda i: p_values[i])
    ranked = [adjusted[i] for i in order]
    assert all(x <= y + 1e-15 for x, y in zip(ranked, ranked[1:], strict=False))
    assert all(p <= q + 1e-15 and q <= 1.0 for p, q in zip(p_values, adjusted, strict=True))


# ---------------------------------------------------------------- category-controlled lift


def test_category_controlled_lift_removes_an_easy_category_effect(tmp_path: Path) -> None:
    # easy: 10 sessions with A (5x0.7, 5x0.9), 10 without (5x0.7, 5x0.9) -> no effect within easy
    # hard: 20 sessions without A (10x0.1, 10x0.3); A never goes there
    events = []
    for i in range(10):
        events.append(session(f"ea{i}", 0.7 if i % 2 else 0.9, {A: 0.5}, category="easy"))
        events.append(session(f"eb{i}", 0.7 if i % 2 else 0.9, {B: 0.5}, category="easy"))
    for i in range(20):
        events.append(session(f"h{i}", 0.1 if i % 2 else 0.3, {B: 0.5}, category="hard"))
    root = make_workspace(tmp_path, lessons=LESSONS, events=events)
    a = by_path(Workspace(root, clock=fixed_clock).loo(write=False))[A]
    # naive: with 0.8; without (10*0.8 + 20*0.2)/30 = 0.4 -> delta 0.4
    assert a.delta == pytest.approx(0.4)
    # within easy: 0.8 - 0.8 = 0; hard has no sessions with A and carries no weight
    assert a.category_controlled
    assert a.delta_category == pytest.approx(0.0, abs=1e-12)
    assert a.p_category is not None and a.p_category > 0.5


def test_category_controlled_lift_weights_by_cmh(tmp_path: Path) -> None:
    # easy: with A 0.85 0.95 0.85 0.95 (mean 0.9, n 4); without 0.75 0.85 x3 (mean 0.8, n 6): d = 0.1
    # hard: with A 0.4 0.6 (mean 0.5, n 2); without 0.1 0.3 x4 (mean 0.2, n 8): d = 0.3
    # weights n_w*n_o/(n_w+n_o): easy 24/10 = 2.4, hard 16/10 = 1.6 -> (2.4*0.1 + 1.6*0.3)/4 = 0.18
    # (in log order the sessions with A and without take turns in each category: all of A's first in each would be
    # two switches off, at sessions 4 and 12, and one step in the baseline at 4 takes 60% of A's spread: identified
    # only by time, no lift)
    with_a = [("ew", r, "easy") for r in [0.85, 0.95, 0.85, 0.95]] + [("hw", r, "hard") for r in [0.4, 0.6]]
    without = [("eo", r, "easy") for r in [0.75, 0.85] * 3] + [("ho", r, "hard") for r in [0.1, 0.3] * 4]
    order = [without[:3], with_a[:2], without[3:4], with_a[2:4], without[4:6], with_a[4:5], without[6:10]]
    order += [with_a[5:], without[10:]]
    events = [
        session(f"{kind}{i}", r, {A if kind.endswith("w") else B: 0.5}, category=category)
        for i, (kind, r, category) in enumerate(item for part in order for item in part)
    ]
    root = make_workspace(tmp_path, lessons=LESSONS, events=events)
    a = by_path(Workspace(root, clock=fixed_clock).loo(min_without=10, write=False))[A]
    assert a.delta_category == pytest.approx(0.18)
    # naive for comparison: with (3.6 + 1.0)/6 = 0.7667; without (4.8 + 1.6)/14 = 0.4571
    assert a.delta == pytest.approx(4.6 / 6 - 6.4 / 14)


def test_no_categories_means_not_category_controlled(crafted: Path) -> None:
    a = by_path(Workspace(crafted, clock=fixed_clock).loo(write=False))[A]
    assert not a.category_controlled
    assert a.delta_category is None and a.p_category is None


# ---------------------------------------------------------------- propensity-weighted (IPW) lift


def test_ipw_hand_example(tmp_path: Path) -> None:
    # five copies of: s1: A injected, p 0.5, r 0.8   s2: not injected, p 0.5, r 0.4
    #                 s3: A injected, p 0.25, r 0.6  s4: not injected, p 0.75, r 0.2
    # mu1 = (0.8/0.5 + 0.6/0.25) / (1/0.5 + 1/0.25) = 4/6; mu0 = (0.4/0.5 + 0.2/0.25) / (1/0.5 + 1/0.25) = 1.6/6
    # -> 0.4 (copies change no weighted mean). s5 injected without a selection, s6 a pending candidate:
    # neither counts; s5 is the one session with A and no logged propensity.
    # Interval: Var(mu1) = sum w^2 (r - mu1)^2 / (sum w)^2 over 5 copies of (w 2, r 0.8) and (w 4, r 0.6):
    # 5 * (4 * (0.8 - 2/3)^2 + 16 * (0.6 - 2/3)^2) / 30^2 = 5 * (0.071111 + 0.071111) / 900 = 0.00079012;
    # Var(mu0) over (w 2, r 0.4) and (w 4, r 0.2), mu0 = 0.26667: the same deviations -> 0.00079012
    # half-width 1.96 * sqrt(0.0015802) = 0.077913
    rows = [("s1", 0.8, True, 0.5), ("s2", 0.4, False, 0.5), ("s3", 0.6, True, 0.25), ("s4", 0.2, False, 0.75)]
    events: list[dict[str, Any]] = []
    for copy in range(5):
        for sid, r, injected, p in rows:
            sid = f"{sid}-{copy}"
            events.append({"type": "selection", "session_id": sid, "candidates": [A], "propensity": {A: p}})
            events.append(session(sid, r, {A: 0.5} if injected else {B: 0.5}))
    events.append(session("s5", 0.1, {A: 0.5}))
    events.append({"type": "selection", "session_id": "s6", "candidates": [A], "propensity": {A: 0.5}})
    events.append(session("s6", None, {A: 0.5}))
    root = make_workspace(tmp_path, lessons=LESSONS, events=events)
    ws = Workspace(root, clock=fixed_clock)
    a = by_path(ws.loo(write=False, min_with=5, min_without=5))[A]
    assert a.n_ipw == 20 and (a.n_ipw_treated, a.n_ipw_untreated) == (10, 10)
    assert a.n_ipw_missing == 1
    assert a.delta_ipw == pytest.approx(0.4)
    assert a.ipw_ci_low == pytest.approx(0.4 - 0.077913, abs=1e-5)
    assert a.ipw_ci_high == pytest.approx(0.4 + 0.077913, abs=1e-5)
    # naive: with 5 x (0.8, 0.6) and s5 = (7 + 0.1) / 11; without 5 x (0.4, 0.2) = 0.3
    assert a.delta == pytest.approx(7.1 / 11 - 0.3)
    assert a.ipw_gap == pytest.approx(0.4 - (7.1 / 11 - 0.3))
    assert ws.loo_run(write=False)[1]["sessions_without_propensity"] == 1  # s5 (s6 is pending)


def test_ipw_needs_a_minimum_on_each_side(tmp_path: Path) -> None:
    # 4 untreated candidate sessions (< MIN_IPW = 5): no IPW lift, but the counts are given
    events: list[dict[str, Any]] = []
    for i in range(10):
        injected = i >= 4
        events.append({"type": "selection", "session_id": f"s{i}", "candidates": [A], "propensity": {A: 0.5}})
        events.append(session(f"s{i}", 0.1 * i, {A: 0.5} if injected else {B: 0.5}))
    root = make_workspace(tmp_path, lessons=LESSONS, events=events)
    a = by_path(Workspace(root, clock=fixed_clock).loo(write=False))[A]
    assert MIN_IPW == 5
    assert (a.n_ipw_treated, a.n_ipw_untreated) == (6, 4)
    assert a.delta_ipw is None and a.ipw_ci_low is None and a.ipw_gap is None


def test_one_selection_per_session_the_last_before_its_record(tmp_path: Path) -> None:
    # Each session logs nine stale selections with p 0.05 and then the real one (p 0.5) before
    # its record, and one more (p 0.9) after it. Only the real one counts: every propensity is 0.5,
    # so IPW equals the plain difference of means.
    events: list[dict[str, Any]] = []
    rewards = []
    for i in range(20):
        sid = f"s{i}"
        injected = i % 2 == 0
        for _ in range(9):
            events.append({"type": "selection", "session_id": sid, "candidates": [A], "propensity": {A: 0.05}})
        events.append({"type": "selection", "session_id": sid, "candidates": [A], "propensity": {A: 0.5}})
        r = round(0.3 + 0.02 * i + (0.2 if injected else 0.0), 2)
        rewards.append((r, injected))
        events.append(session(sid, r, {A: 0.5} if injected else {B: 0.5}))
        events.append({"type": "selection", "session_id": sid, "candidates": [A], "propensity": {A: 0.9}})
    root = make_workspace(tmp_path, lessons=LESSONS, events=events)
    ws = Workspace(root, clock=fixed_clock)
    cands = ws.candidacies()
    arm_a = ws.data().arm_ids.index(A)
    assert len([c for c in cands if c.arm == arm_a]) == 20
    assert {c.propensity for c in cands} == {0.5}
    a = by_path(ws.loo(write=False, min_without=5))[A]
    with_a = [r for r, inj in rewards if inj]
    without = [r for r, inj in rewards if not inj]
    assert a.delta_ipw == pytest.approx(np.mean(with_a) - np.mean(without))
    assert a.n_ipw == 20


def test_propensity_in_the_session_record_is_used(tmp_path: Path) -> None:
    # No selection events: the record's own per-lesson propensity makes A a treated candidate.
    events = []
    for i in range(6):
        entry = session(f"s{i}", 0.5 + 0.05 * i, {A: 0.5})
        entry["lessons"][0]["propensity"] = 0.4
        events.append(entry)
    root = make_workspace(tmp_path, lessons=LESSONS, events=events)
    ws = Workspace(root, clock=fixed_clock)
    cands = ws.candidacies()
    assert [(c.session_row, c.propensity) for c in cands] == [(i, 0.4) for i in range(6)]
    a = by_path(ws.loo(write=False))[A]
    assert (a.n_ipw_treated, a.n_ipw_untreated, a.n_ipw_missing) == (6, 0, 0)
    assert a.delta_ipw is None  # no untreated candidates


def test_a_lesson_the_selection_chose_and_the_record_does_not_name_is_no_candidate(tmp_path: Path) -> None:
    # s0's selection chose A (0.6) over B (0.3, a candidate not chosen); the record names C alone (A renamed C
    # since, say). B stays a candidate left out at random; A is no candidate of s0 (before: one not injected, at
    # 0.6); C was none. s1 follows its selection: A chosen and injected (0.6), B left out (0.3). s2 (no selection)
    # names B, so that B is an arm of the log (a lesson no session names has no candidacy). By hand:
    chose_a = {"candidates": [A, B], "selected": [A], "propensity": {A: 0.6, B: 0.3}}
    events = [
        {"type": "selection", "session_id": "s0", **chose_a},
        session("s0", 0.4, {C: 0.5}),
        {"type": "selection", "session_id": "s1", **chose_a},
        session("s1", 0.7, {A: 0.5}),
        session("s2", 0.5, {B: 0.5}),
    ]
    ws = Workspace(make_workspace(tmp_path, lessons=LESSONS, events=events), clock=fixed_clock)
    arms = ws.data().arm_ids
    assert sorted((c.session_row, arms[c.arm], c.propensity) for c in ws.candidacies()) == [
        (0, B, 0.3),
        (1, A, 0.6),
        (1, B, 0.3),
    ]


def during(event: dict[str, Any], *lessons: str, propensity: float | None = None) -> dict[str, Any]:
    """`event` (a session) with `lessons` marked included during it (and, given, that propensity stored on them)."""
    for entry in event["lessons"]:
        if entry["path"] in lessons:
            entry["included"] = "during"
            if propensity is not None:
                entry["propensity"] = propensity
    return event


def test_a_lesson_the_selection_chose_and_the_record_names_only_as_included_during_is_no_candidate(
    tmp_path: Path,
) -> None:
    # Each selection chose A (0.6) over B (0.3, a candidate not chosen). The estimates' treatment is what was decided
    # before the session, so a lesson included during it counts as not injected. s0's record names A only as
    # included during the session (a log another tool wrote: `record` refuses it): the draw chose A, the record says
    # it was not injected before, as if the record did not name it. Before, A was s0's candidate "not injected" at
    # 1 / (1 - 0.6) among the sessions without it, though the draw chose it. s1 likewise, its record storing 0.6 on
    # A's entry. s2 follows its selection but pulls B in during the session: B, not chosen (1 - 0.3), is a candidate
    # not injected there, as in any session whose draw left it out (intention to treat: the draw decided, whatever
    # came up later). By hand, the candidacies:
    chose_a = {"candidates": [A, B], "selected": [A], "propensity": {A: 0.6, B: 0.3}}
    events = [
        {"type": "selection", "session_id": "s0", **chose_a},
        during(session("s0", 0.4, {A: 0.5}), A),
        {"type": "selection", "session_id": "s1", **chose_a},
        during(session("s1", 0.6, {A: 0.5}), A, propensity=0.6),
        {"type": "selection", "session_id": "s2", **chose_a},
        during(session("s2", 0.7, {A: 0.5, B: 0.5}), B, propensity=0.3),
    ]
    ws = Workspace(make_workspace(tmp_path, lessons=LESSONS, events=events), clock=fixed_clock)
    arms = ws.data().arm_ids
    assert sorted((c.session_row, arms[c.arm], c.propensity) for c in ws.candidacies()) == [
        (0, B, 0.3),
        (1, B, 0.3),
        (2, A, 0.6),
        (2, B, 0.3),
    ]
    results = by_path(ws.loo(write=False))
    # A: injected (chosen before) in s2 alone; B: injected before in none, a candidate left out in all three
    assert (results[A].n_ipw_treated, results[A].n_ipw_untreated) == (1, 0)
    assert (results[B].n_ipw_treated, results[B].n_ipw_untreated) == (0, 3)


def test_a_lesson_listed_twice_counts_once(tmp_path: Path) -> None:
    # s0..s5 list A twice; the lift is the same as with A listed once
    # (A's sessions spread over the log, not a switch at its start: the order moves no mean)
    without = [session(f"o{i}", r, {B: 0.5}) for i, r in enumerate(WITHOUT_A)]
    events = []
    for i in range(6):
        entry = session(f"w{i}", WITH_A[i], {A: 0.5})
        entry["lessons"].append({"path": A, "salience": 0.9})
        events += [entry, *without[4 * i : 4 * i + 4]]
    events += without[24:]
    root = make_workspace(tmp_path, lessons=LESSONS, events=events)
    a = by_path(Workspace(root, clock=fixed_clock).loo(write=False))[A]
    assert (a.n_with, a.n_without) == (6, 25)
    assert a.mean_with == pytest.approx(0.8) and a.delta == pytest.approx(0.3)
    _, p, _ = moderated_by_hand(WITH_A, WITHOUT_A, WITH_A + WITHOUT_A)
    assert a.p_value == pytest.approx(p, rel=1e-6)
    assert a.effect is not None


def test_ipw_without_propensities_is_none(crafted: Path) -> None:
    a = by_path(Workspace(crafted, clock=fixed_clock).loo(write=False))[A]
    assert a.delta_ipw is None and a.ipw_gap is None and a.n_ipw == 0


def test_ipw_corrects_selection_confounded_by_baseline(tmp_path: Path) -> None:
    # Half the sessions are "high" (baseline 0.7), half "low" (0.3). A is selected with
    # probability 0.8 in high sessions and 0.2 in low ones and truly adds 0.1.
    # Naive: E[r | A] = 0.8*0.8 + 0.2*0.4 = 0.72; E[r | no A] = 0.2*0.7 + 0.8*0.3 = 0.38 -> 0.34.
    rng = np.random.default_rng(20260305)
    true_effect = 0.1
    events: list[dict[str, Any]] = []
    rewards: list[float] = []
    injected_flags: list[bool] = []
    for i in range(4000):
        high = bool(rng.random() < 0.5)
        p = 0.8 if high else 0.2
        injected = bool(rng.random() < p)
        r = float(np.clip((0.7 if high else 0.3) + true_effect * injected + rng.normal(0, 0.05), 0.0, 1.0))
        sid = f"s{i}"
        events.append(
            {
                "type": "selection",
                "session_id": sid,
                "candidates": [A],
                "selected": [A] if injected else [],
                "propensity": {A: p},
                "k": 1,
                "seed": i,
            }
        )
        events.append(session(sid, r, {A: 0.5} if injected else {B: 0.5}))
        rewards.append(r)
        injected_flags.append(injected)
    root = make_workspace(tmp_path, lessons=LESSONS, events=events)
    a = by_path(Workspace(root, clock=fixed_clock).loo(write=False))[A]
    flags = np.array(injected_flags)
    r_arr = np.array(rewards)
    assert a.delta == pytest.approx(r_arr[flags].mean() - r_arr[~flags].mean())
    assert a.delta == pytest.approx(0.34, abs=0.03)
    assert a.n_ipw == 4000
    assert a.delta_ipw is not None
    assert abs(a.delta_ipw - true_effect) < 0.02
    assert abs(a.delta_ipw - true_effect) * 10 < abs(a.delta - true_effect)
    assert a.ipw_gap == pytest.approx(a.delta_ipw - a.delta)


def test_leave_one_out_clips_extreme_propensities(crafted: Path) -> None:
    """Propensity 0 or 1 would divide by zero; they are clipped to [0.01, 0.99]."""
    ws = Workspace(crafted, clock=fixed_clock)
    data = ws.data()
    arm = data.arm_ids.index(A)
    # rows: o0 (A not injected, r 0.3) is the first session, w0 (A injected, r 0.9) follows it
    row_with, row_without = ws.session_row("w0"), ws.session_row("o0")
    assert (row_with, row_without) == (1, 0)
    cands = [Candidacy(row_with, arm, 1.0), Candidacy(row_without, arm, 1.0)]
    a = by_path(leave_one_out(data, (), cands, min_ipw=1))[A]
    # treated weight 1/0.99, control weight 1/(1-0.99) = 100: each group is one session -> 0.9 - 0.3
    assert a.delta_ipw == pytest.approx(0.6)
    assert a.n_ipw == 2


# ---------------------------------------------------------------- confound flags


def confound_workspace(tmp_path: Path) -> Path:
    """12 graded sessions with journals: 'the' is in 9 of them (75%), 'sixer' in 6 (50%)."""
    lessons = {
        "broad.md": (["the", "nowhere-to-be-found"], "active"),
        "half.md": (["sixer"], "active"),
        "wide.md": (["zzz-unused"], "active"),
        "narrow.md": (["qqq-unused"], "active"),
    }
    journals = {}
    events = []
    for i in range(12):
        words = []
        if i < 9:
            words.append("The deploy went fine")
        if i < 6:
            words.append("sixer")
        journals[f"journals/s{i}.md"] = " ".join(words) or "nothing relevant"
        lessons_in = {"wide.md": 0.0}  # in every session: 100%
        if i < 3:
            lessons_in["narrow.md"] = 0.0  # 3/13 = 23%: not flagged
        if i == 0:
            lessons_in["gone/old.md"] = 0.0  # not in the library
        events.append(session(f"s{i}", 0.1 * (i % 7), lessons_in, journal_path=f"journals/s{i}.md"))
    events.append(session("s12", 0.5, {"broad.md": 1.0, "half.md": 1.0}))
    return make_workspace(tmp_path, lessons=lessons, events=events, journals=journals)


def test_confound_flags(tmp_path: Path) -> None:
    root = confound_workspace(tmp_path)
    rows = by_path(Workspace(root, clock=fixed_clock).loo(write=False))
    wide = rows["wide.md"]
    # in 12 of 13 sessions: a broad lesson, but that alone is no confound (the old 30% rule flagged it)
    assert not wide.confounded and wide.confound_reasons == ()
    broad = rows["broad.md"]
    assert broad.confounded
    (reason,) = broad.confound_reasons
    assert "'the'" in reason and "75%" in reason  # 9 of the 12 journals on disk
    assert not rows["half.md"].confounded  # 6 of 12 is 50%: not more than half; one session, nothing to separate
    narrow = rows["narrow.md"]  # s0 s1 s2, each with wide.md
    assert narrow.confounded
    assert narrow.confound_reasons == ("not separable: never injected without wide.md",)
    assert narrow.related == ("wide.md",)
    gone = rows["gone/old.md"]
    assert gone.confounded
    assert gone.confound_reasons == ("lesson file no longer exists",)
    assert gone.as_json()["confound_reason"] == "lesson file no longer exists"
    assert wide.as_json()["confound_reason"] is None


def test_confound_reasons_are_joined_in_json(tmp_path: Path) -> None:
    # a lesson in every session whose file is gone: two reasons
    events = [session(f"s{i}", 0.1 * (i % 9), {"gone.md": 0.0}) for i in range(25)]
    root = make_workspace(tmp_path, lessons=LESSONS, events=events)
    row = by_path(Workspace(root, clock=fixed_clock).loo(write=False))["gone.md"]
    assert row.confound_reasons == ("no control: injected in every graded session", "lesson file no longer exists")
    assert row.as_json()["confound_reason"] == "; ".join(row.confound_reasons)


def test_a_lesson_in_every_session_makes_no_other_lesson_inseparable(tmp_path: Path) -> None:
    # C rides in all 40 graded sessions (a core lesson always included); A is in the even ones, B in
    # every third. A's sessions all have C, but so do the sessions without A: the with/without
    # comparison holds C fixed, so C cannot confound it (C itself is flagged: no control).
    events = [
        session(
            f"s{i}",
            0.3 + 0.1 * (i % 5),
            {C: 0.5, **({A: 0.5} if i % 2 == 0 else {}), **({B: 0.5} if i % 3 == 0 else {})},
        )
        for i in range(40)
    ]
    root = make_workspace(tmp_path, lessons=LESSONS, events=events)
    rows = by_path(Workspace(root, clock=fixed_clock).loo(write=False))
    assert rows[C].confound_reasons == ("no control: injected in every graded session",)
    for lesson in (A, B):
        assert not rows[lesson].confounded, rows[lesson].confound_reasons
        assert rows[lesson].related == ()


def test_a_randomised_half_and_half_lesson_is_not_flagged(tmp_path: Path) -> None:
    rng = np.random.default_rng(2)
    events = [
        session(f"s{i}", float(np.round(rng.uniform(0.2, 0.9), 2)), {A: 0.5} if i % 2 else {B: 0.5}) for i in range(200)
    ]
    root = make_workspace(tmp_path, lessons=LESSONS, events=events)
    rows = by_path(Workspace(root, clock=fixed_clock).loo(write=False))
    assert not rows[A].confounded and not rows[B].confounded


def crafted_confounding_events(seed: int = 8, n: int = 500) -> list[dict[str, Any]]:
    """A crafted log: A truly adds +0.3 (randomised); C does nothing but goes mostly into the easy
    category (baseline 0.6 against 0.2); B does nothing. Rewards stay inside [0, 1] (no clipping)."""
    rng = np.random.default_rng(seed)
    events = []
    for i in range(n):
        easy = i % 2 == 0
        lessons: dict[str, float] = {}
        if rng.random() < 0.5:
            lessons[A] = 0.5
        if rng.random() < (0.85 if easy else 0.1):
            lessons[C] = 0.5
        if rng.random() < 0.4 or not lessons:
            lessons[B] = 0.5
        reward = (0.6 if easy else 0.2) + 0.3 * (A in lessons) + rng.normal(0, 0.04)
        events.append(session(f"s{i}", round(float(reward), 2), lessons, category="easy" if easy else "hard"))
    return events


def test_crafted_confounding_log_headline_and_flags(tmp_path: Path) -> None:
    root = make_workspace(tmp_path, lessons=LESSONS, events=crafted_confounding_events())
    rows = by_path(Workspace(root, clock=fixed_clock).loo(write=False))
    a, c = rows[A], rows[C]
    assert c.delta is not None and c.delta > 0.25  # the naive lift: C looks helpful
    assert c.effect is not None and a.effect is not None
    assert abs(c.effect.estimate) < 0.03  # the headline: nothing
    assert c.effect.ci_low < 0 < c.effect.ci_high
    assert c.confounded and c.confound_reasons[0].startswith("confounded by category / co-injected lessons")
    assert a.effect.estimate == pytest.approx(0.3, abs=0.03)
    assert a.effect.ci_low < 0.3 < a.effect.ci_high
    assert not a.confounded
    # BH over the headline: A's effect is certain, C's is not
    assert a.effect.p_adjusted is not None and a.effect.p_adjusted < 1e-6
    assert c.effect.p_adjusted is not None and c.effect.p_adjusted > 0.05


# ---------------------------------------------------------------- loo-results.json (the command: tests/cli)

RESULT_KEYS = {
    "path",
    "delta",
    "p_value_approx",
    "n_with",
    "n_without",
    "category_controlled",
    "confounded",
    "confound_reason",
}


@pytest.mark.smoke
def test_loo_results_file_shape(crafted: Path) -> None:
    ws = Workspace(crafted, clock=fixed_clock)
    ws.loo()
    payload = json.loads((crafted / "state" / "lesson-thompson" / "loo-results.json").read_text())
    assert {"generated", "sessions", "method"} <= set(payload["meta"])
    assert payload["meta"]["generated"] == "2026-03-05T16:30:00Z"
    assert payload["meta"]["sessions"] == 31  # graded sessions
    assert isinstance(payload["meta"]["method"], str) and payload["meta"]["method"]
    rows = {r["lesson"]: r for r in payload["results"]}
    assert set(rows) == {A, B, C, D}
    for row in payload["results"]:
        assert RESULT_KEYS <= set(row)
        assert isinstance(row["category_controlled"], bool) and isinstance(row["confounded"], bool)
    a = rows[A]
    assert (a["n_with"], a["n_without"]) == (6, 25)
    assert a["delta"] == pytest.approx(0.3)
    assert a["p_value_approx"] == pytest.approx(moderated_by_hand(WITH_A, WITHOUT_A, WITH_A + WITHOUT_A)[1])
    assert a["category_controlled"] is False
    assert a["confounded"] is False and a["confound_reason"] is None
    assert set(a["effect"]) >= {"estimate", "ci_low", "ci_high", "method", "identified", "ranking", "group"}
    # every graded session has A or B (never both): the log shows A - B, not A alone; nothing claimed, and the
    # reason says with which lesson A is tied (A + B is every session, a baseline)
    assert a["effect"]["identified"] is False and a["effect"]["reason"].startswith("not estimable")
    assert f"those of {B}, with the baselines" in a["effect"]["reason"]
    assert a["effect"]["ci_low"] is None and a["effect"]["p_value"] is None
    assert a["effect"]["estimate"] == a["effect"]["ranking"]
    assert a["effect"]["method"] == "joint" and a["joint"] == a["effect"]
    d = rows[D]["effect"]
    assert d["identified"] is True and d["ci_low"] < d["estimate"] < d["ci_high"]
    assert "randomized" not in a  # no dropout logs
    assert rows[C]["p_value_approx"] is None
    assert rows[B]["confounded"] is False  # in 25 of 31 sessions: no longer flagged for that alone
    assert payload["meta"]["sessions_without_propensity"] == 31
