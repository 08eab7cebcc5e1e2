"""Leave-one-out attribution (core.analysis via Workspace.loo): Welch lift, BH, category control, IPW, flags.

Every expected number is worked out by hand in a comment or computed a second way
(scipy.stats on the same samples, an explicit loop), never by the function under test.
"""

from __future__ import annotations

import io
import json
import math
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from engine_helpers import LOG_REL, PROPERTY, fixed_clock, grade, log_bytes, make_workspace, session
from hypothesis import given
from hypothesis import strategies as st
from scipy import stats

from cli.main import main
from core.analysis import MIN_WITH, MIN_WITHOUT, Candidacy, benjamini_hochberg, leave_one_out, reward_split
from core.workspace import Workspace

A, B, C, D = "tools/a.md", "tools/b.md", "workflow/c.md", "workflow/d.md"
LESSONS = {A: (["alpha"], "active"), B: (["beta"], "active"), C: (["gamma"], "active"), D: (["delta"], "active")}

# Lesson A: 6 graded sessions, rewards 0.9 0.8 0.7 0.9 0.8 0.7 -> mean 0.8
WITH_A = [0.9, 0.8, 0.7, 0.9, 0.8, 0.7]
# Without A: 25 graded sessions, five blocks of 0.3 0.4 0.5 0.6 0.7 -> mean 0.5
WITHOUT_A = [0.3, 0.4, 0.5, 0.6, 0.7] * 5
# C: in 3 of the sessions without A (too few); D: in 3 sessions with A and 7 without (10 in all)
C_ROWS = {0, 1, 2}  # indices into WITHOUT_A
D_WITH_ROWS = {0, 2, 4}  # indices into WITH_A
D_WITHOUT_ROWS = {3, 5, 8, 11, 14, 17, 20}  # indices into WITHOUT_A


def crafted_events() -> list[dict[str, Any]]:
    events: list[dict[str, Any]] = []
    for i, r in enumerate(WITH_A):
        lessons = {A: 0.5}
        if i in D_WITH_ROWS:
            lessons[D] = 0.5
        events.append(session(f"w{i}", r, lessons))
    for i, r in enumerate(WITHOUT_A):
        lessons = {B: 0.5}
        if i in C_ROWS:
            lessons[C] = 0.5
        if i in D_WITHOUT_ROWS:
            lessons[D] = 0.5
        events.append(session(f"o{i}", r, lessons))
    # pending sessions move nothing: two with A (one also with D), one with B
    events.append(session("p1", None, {A: 1.0}))
    events.append(session("p2", None, {A: 1.0, D: 1.0}))
    events.append(session("p3", None, {B: 0.0}))
    return events


@pytest.fixture
def crafted(tmp_path: Path) -> Path:
    return make_workspace(tmp_path, lessons=LESSONS, events=crafted_events())


def by_path(results: list[Any]) -> dict[str, Any]:
    return {r.path: r for r in results}


def welch_by_hand(x: list[float], y: list[float]) -> tuple[float, float, float]:
    """(delta, se, df) of Welch's test written out from the textbook formulas."""
    a, b = np.var(x, ddof=1) / len(x), np.var(y, ddof=1) / len(y)
    df = (a + b) ** 2 / (a**2 / (len(x) - 1) + b**2 / (len(y) - 1))
    return float(np.mean(x) - np.mean(y)), float(math.sqrt(a + b)), float(df)


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


def test_loo_p_value_and_interval_match_scipy_welch(crafted: Path) -> None:
    a = by_path(Workspace(crafted, clock=fixed_clock).loo(write=False))[A]
    expected_p = stats.ttest_ind(WITH_A, WITHOUT_A, equal_var=False).pvalue
    assert a.p_value == pytest.approx(expected_p, rel=1e-6)
    # by hand: var_with = 0.04/5 = 0.008, var_without = 0.5/24; se = sqrt(0.008/6 + 0.5/24/25) = 0.04655
    delta, se, df = welch_by_hand(WITH_A, WITHOUT_A)
    assert se == pytest.approx(math.sqrt(0.008 / 6 + (0.5 / 24) / 25))
    half = stats.t.ppf(0.975, df) * se
    assert a.ci_low == pytest.approx(delta - half, rel=1e-6)
    assert a.ci_high == pytest.approx(delta + half, rel=1e-6)
    # df ~ 12.2 so t(0.975) ~ 2.17; the interval excludes 0 (t = 0.3/0.0465 = 6.4)
    assert 0.19 < a.ci_low < a.ci_high < 0.41
    assert a.p_value < 1e-3


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
    # the lift itself is still shown: with = o0 o1 o2 = 0.3 0.4 0.5 (mean 0.4); without = (17.3 - 1.2) / 28
    assert c.delta == pytest.approx(0.4 - 16.1 / 28)
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
    expected_p = stats.ttest_ind([*WITH_A, 0.1], WITHOUT_A, equal_var=False).pvalue
    assert a.p_value == pytest.approx(expected_p, rel=1e-6)


def test_loo_adjusted_p_values_are_bh_across_sufficient_lessons(crafted: Path) -> None:
    rows = by_path(Workspace(crafted, clock=fixed_clock).loo(write=False))
    d_with = [0.9, 0.7, 0.8, 0.6, 0.3, 0.6, 0.4, 0.7, 0.5, 0.3]
    all_rewards = WITH_A + WITHOUT_A
    d_without = list(all_rewards)
    for value in d_with:
        d_without.remove(value)
    p_a = stats.ttest_ind(WITH_A, WITHOUT_A, equal_var=False).pvalue
    p_d = stats.ttest_ind(d_with, d_without, equal_var=False).pvalue
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
    events = []
    for i, r in enumerate([0.85, 0.95, 0.85, 0.95]):
        events.append(session(f"ew{i}", r, {A: 0.5}, category="easy"))
    for i, r in enumerate([0.75, 0.85] * 3):
        events.append(session(f"eo{i}", r, {B: 0.5}, category="easy"))
    for i, r in enumerate([0.4, 0.6]):
        events.append(session(f"hw{i}", r, {A: 0.5}, category="hard"))
    for i, r in enumerate([0.1, 0.3] * 4):
        events.append(session(f"ho{i}", r, {B: 0.5}, category="hard"))
    root = make_workspace(tmp_path, lessons=LESSONS, events=events)
    a = by_path(Workspace(root, clock=fixed_clock).loo(write=False))[A]
    assert a.delta_category == pytest.approx(0.18)
    # naive for comparison: with (3.6 + 1.0)/6 = 0.7667; without (4.8 + 1.6)/14 = 0.4571
    assert a.delta == pytest.approx(4.6 / 6 - 6.4 / 14)


def test_no_categories_means_not_category_controlled(crafted: Path) -> None:
    a = by_path(Workspace(crafted, clock=fixed_clock).loo(write=False))[A]
    assert not a.category_controlled
    assert a.delta_category is None and a.p_category is None


# ---------------------------------------------------------------- propensity-weighted (IPW) lift


def test_ipw_hand_example(tmp_path: Path) -> None:
    # s1: A injected, p 0.5, r 0.8   s2: not injected, p 0.5, r 0.4
    # s3: A injected, p 0.25, r 0.6  s4: not injected, p 0.75, r 0.2
    # mu1 = (0.8/0.5 + 0.6/0.25) / (1/0.5 + 1/0.25) = 4/6; mu0 = (0.4/0.5 + 0.2/0.25) / (1/0.5 + 1/0.25) = 1.6/6
    # -> 0.4. s5 injected without a selection, s6 a pending candidate: neither counts.
    rows = [("s1", 0.8, True, 0.5), ("s2", 0.4, False, 0.5), ("s3", 0.6, True, 0.25), ("s4", 0.2, False, 0.75)]
    events: list[dict[str, Any]] = []
    for sid, r, injected, p in rows:
        events.append({"type": "selection", "session_id": sid, "candidates": [A], "propensity": {A: p}})
        events.append(session(sid, r, {A: 0.5} if injected else {B: 0.5}))
    events.append(session("s5", 0.1, {A: 0.5}))
    events.append({"type": "selection", "session_id": "s6", "candidates": [A], "propensity": {A: 0.5}})
    events.append(session("s6", None, {A: 0.5}))
    root = make_workspace(tmp_path, lessons=LESSONS, events=events)
    a = by_path(Workspace(root, clock=fixed_clock).loo(write=False))[A]
    assert a.n_ipw == 4
    assert a.delta_ipw == pytest.approx(0.4)
    # naive: with s1 s3 s5 = (0.8+0.6+0.1)/3 = 0.5; without s2 s4 = 0.3 -> 0.2; gap 0.2
    assert a.delta == pytest.approx(0.2)
    assert a.ipw_gap == pytest.approx(0.2)


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
    # rows: w0 (A injected, r 0.9) is the first session, o0 (A not injected, r 0.3) follows the six with A
    row_with = 0
    row_without = len(WITH_A)  # session "o0"
    cands = [Candidacy(row_with, arm, 1.0), Candidacy(row_without, arm, 1.0)]
    a = by_path(leave_one_out(data, (), cands))[A]
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
    assert wide.confounded
    assert any("injected in 92% of sessions" in r for r in wide.confound_reasons)  # 12 of 13
    broad = rows["broad.md"]
    assert broad.confounded
    (reason,) = broad.confound_reasons
    assert "'the'" in reason and "75%" in reason  # 9 of the 12 journals on disk
    assert not rows["half.md"].confounded  # 6 of 12 is 50%: not more than half
    narrow = rows["narrow.md"]
    assert not narrow.confounded and narrow.confound_reasons == ()
    gone = rows["gone/old.md"]
    assert gone.confounded
    assert gone.confound_reasons == ("lesson file no longer exists",)
    assert gone.as_json()["confound_reason"] == "lesson file no longer exists"
    assert narrow.as_json()["confound_reason"] is None


def test_confound_reasons_are_joined_in_json(tmp_path: Path) -> None:
    # a lesson in every session whose file is gone: two reasons
    events = [session(f"s{i}", 0.1 * (i % 9), {"gone.md": 0.0}) for i in range(25)]
    root = make_workspace(tmp_path, lessons=LESSONS, events=events)
    row = by_path(Workspace(root, clock=fixed_clock).loo(write=False))["gone.md"]
    assert len(row.confound_reasons) == 2
    assert row.as_json()["confound_reason"] == "; ".join(row.confound_reasons)
    assert "100%" in row.confound_reasons[0]


# ---------------------------------------------------------------- loo-results.json and the CLI

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


def test_loo_results_file_shape(crafted: Path) -> None:
    ws = Workspace(crafted, clock=fixed_clock)
    ws.loo()
    payload = json.loads((crafted / "state" / "lesson-thompson" / "loo-results.json").read_text())
    assert {"generated", "sessions", "method"} <= set(payload["meta"])
    assert payload["meta"]["generated"] == "2026-03-05T16:30:00Z"
    assert payload["meta"]["sessions"] == 31  # graded sessions
    assert isinstance(payload["meta"]["method"], str) and payload["meta"]["method"]
    rows = {r["path"]: r for r in payload["results"]}
    assert set(rows) == {A, B, C, D}
    for row in payload["results"]:
        assert RESULT_KEYS <= set(row)
        assert isinstance(row["category_controlled"], bool) and isinstance(row["confounded"], bool)
    a = rows[A]
    assert (a["n_with"], a["n_without"]) == (6, 25)
    assert a["delta"] == pytest.approx(0.3)
    assert a["p_value_approx"] == pytest.approx(stats.ttest_ind(WITH_A, WITHOUT_A, equal_var=False).pvalue)
    assert a["category_controlled"] is False
    assert a["confounded"] is False and a["confound_reason"] is None
    assert rows[C]["p_value_approx"] is None
    assert rows[B]["confounded"] is True and "81%" in rows[B]["confound_reason"]  # 25 of 31


def run_cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = main(list(argv))
    return code, out.getvalue(), err.getvalue()


def state_listing(root: Path) -> dict[str, bytes]:
    """Files under state/, except derived read caches (.cache/), which hold nothing the log does not."""
    return {
        str(p.relative_to(root)): p.read_bytes()
        for p in (root / "state").rglob("*")
        if p.is_file() and ".cache" not in p.relative_to(root).parts
    }


def test_cli_loo_json_prints_the_written_file(crafted: Path) -> None:
    code, out, err = run_cli("loo", "--workspace", str(crafted), "--json")
    assert code == 0, err
    written = (crafted / "state" / "lesson-thompson" / "loo-results.json").read_text()
    assert json.loads(out) == json.loads(written)
    assert json.loads(out)["results"][0]["path"] in {A, B, C, D}


def test_cli_loo_no_write_writes_nothing(crafted: Path) -> None:
    before = state_listing(crafted)
    log_before = log_bytes(crafted)
    code, out, err = run_cli("loo", "--workspace", str(crafted), "--json", "--no-write", "--min-with", "3")
    assert code == 0, err
    payload = json.loads(out)
    assert payload["meta"]["min_with"] == 3
    assert {r["path"]: r["p_value_approx"] is not None for r in payload["results"]}[C]
    code, out, err = run_cli("loo", "--workspace", str(crafted), "--no-write")
    assert code == 0, err
    assert "written to" not in out
    assert not (crafted / "state" / "lesson-thompson" / "loo-results.json").exists()
    assert state_listing(crafted) == before
    assert log_bytes(crafted) == log_before


def test_cli_loo_table_lists_insufficient_rows(crafted: Path) -> None:
    code, out, err = run_cli("loo", "--workspace", str(crafted))
    assert code == 0, err
    lines = {line.split()[0]: line for line in out.splitlines() if line.startswith(("tools/", "workflow/"))}
    assert set(lines) == {A, B, C, D}
    assert "insufficient data" in lines[C] and "insufficient data" not in lines[A]
    assert "+0.300" in lines[A]
    assert "written to" in out
