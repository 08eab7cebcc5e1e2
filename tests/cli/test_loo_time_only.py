"""`loo` and a lesson identified only by time: injected in every session from s040 on and in none before,
while the baseline steps +0.15 there. Its leave-one-out columns would compare the sessions after the
switch with those before it, a confident +0.15 beside "nothing claimed": they are left blank, with the
reason, in the table, in `--json` and in the written file's top-level map."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

from tests.support.cli_run import run_cli
from tests.support.engine_helpers import fixed_clock, make_workspace, session
from tests.support.headline_logs import parse_table

LESSONS = {"t/alpha.md": (["alpha"], "active"), "t/delta.md": (["delta"], "active")}
N, SWITCH = 80, 40


def switch_workspace(tmp_path: Path) -> Path:
    """alpha at random in half the sessions (+0.10); delta from s040 on (no effect); the baseline 0.40 steps
    +0.15 at s040; noise sd 0.05."""
    rng = np.random.default_rng(3)
    events: list[dict[str, object]] = []
    for i in range(N):
        injected = ["t/alpha.md"] * bool(rng.random() < 0.5) + ["t/delta.md"] * (i >= SWITCH)
        reward = 0.40 + 0.15 * (i >= SWITCH) + 0.10 * ("t/alpha.md" in injected) + rng.normal(0.0, 0.05)
        events.append(session(f"s{i:03d}", round(float(reward), 4), dict.fromkeys(injected, 1.0)))
    return make_workspace(tmp_path, LESSONS, events)


def test_a_lesson_identified_only_by_time_shows_no_leave_one_out_lift(tmp_path: Path) -> None:
    root = switch_workspace(tmp_path)
    code, js, err = run_cli("loo", "--workspace", str(root), "--json")
    assert code == 0, err
    payload = json.loads(js)
    by_path = {r["lesson"]: r for r in payload["results"]}
    delta, alpha = by_path["t/delta.md"], by_path["t/alpha.md"]
    assert delta["effect"]["identified"] is False and "identified only by time" in delta["effect"]["reason"]
    # 40 sessions with it, 40 without: enough for a comparison, but it is before against after (before: a
    # lift near the step, +0.15, with an interval far from 0)
    assert (delta["n_with"], delta["n_without"]) == (SWITCH, N - SWITCH)
    for key in ("delta", "ci_low", "ci_high", "p_value_approx", "p_adjusted", "delta_category", "delta_ipw"):
        assert delta[key] is None, key
    assert delta["sufficient"] is False
    # the reason's words fit a switch where a block starts (it said "in each time block where it varies" only)
    assert "or where a time block starts" in delta["insufficient_reason"]
    assert delta["insufficient_reason"].startswith("no leave-one-out comparison: identified only by time")
    assert "t/delta.md" not in payload  # the top-level map of lesson -> delta gptme reads has no number for it
    # the means stay, descriptive: by hand from the log's rewards they differ by about the step, +0.15
    assert 0.10 < delta["mean_with"] - delta["mean_without"] < 0.20
    assert alpha["delta"] is not None and alpha["sufficient"] is True  # varies within blocks: compared
    assert payload["t/alpha.md"] == alpha["delta"]

    code, out, err = run_cli("loo", "--workspace", str(root), "--no-write")
    assert code == 0, err
    _, rows = parse_table(out)
    row = next(r for r in rows if r["lesson"] == "t/delta.md")
    assert row["naive Δ"] == "-" and row["95% CI"] == "-"
    assert "no LOO comparison (identified only by time)" in out


def test_the_dashboard_says_so_too(tmp_path: Path) -> None:
    from lesson_credit.core.workspace import Workspace
    from lesson_credit.tui.loo_text import describe, short_flags

    results = Workspace(switch_workspace(tmp_path), clock=fixed_clock).loo(write=False)
    delta = next(r for r in results if r.path == "t/delta.md")
    assert delta.timed and "no LOO comparison" in short_flags(delta)
    assert "insufficient data" not in short_flags(delta)
    text = describe(delta).plain
    assert "no leave-one-out comparison: identified only by time" in text and "insufficient data" not in text
    # no lift shown (the old one was +0.162 [+0.13, +0.19]), nor the means whose difference it was: the counts
    assert f"graded sessions with it {N - SWITCH}, without {SWITCH}: no leave-one-out comparison" in text
    assert "mean reward" not in text and "+0.16" not in text


def variant_workspace(
    tmp_path: Path, switch: int = SWITCH, pending: tuple[int, ...] = (), by_category: bool = False
) -> Path:
    """`switch_workspace`'s log with the switch (and the baseline's step) at `switch`; a pending session
    holding delta after each graded session in `pending`; `by_category`: sessions alternate between
    categories x (even) and y (odd) and delta is only ever injected in y (from the switch on)."""
    rng = np.random.default_rng(3)
    events: list[dict[str, object]] = []
    for i in range(N):
        name = "xy"[i % 2]
        extra = {"category": name} if by_category else {}
        has_delta = i >= switch and (not by_category or name == "y")
        injected = ["t/alpha.md"] * bool(rng.random() < 0.5) + ["t/delta.md"] * has_delta
        reward = 0.40 + 0.15 * (i >= switch) + 0.10 * ("t/alpha.md" in injected) + rng.normal(0.0, 0.05)
        events.append(session(f"s{i:03d}", round(float(reward), 4), dict.fromkeys(injected, 1.0), **extra))
        if i in pending:
            events.append(session(f"p{i:03d}", None, {"t/delta.md": 1.0}, **extra))
    return make_workspace(tmp_path, LESSONS, events)


def delta_of(root: Path) -> dict[str, Any]:
    code, js, err = run_cli("loo", "--workspace", str(root), "--json")
    assert code == 0, err
    by_path: dict[str, dict[str, Any]] = {r["lesson"]: r for r in json.loads(js)["results"]}
    return by_path["t/delta.md"]


def test_its_ranking_is_the_prior_not_the_baselines_step(tmp_path: Path) -> None:
    from lesson_credit.core.workspace import Workspace
    from lesson_credit.tui.loo_text import describe, headline_text

    root = switch_workspace(tmp_path)
    # the shrunk fit read the step at s040 as its effect (+0.158: the step is +0.15); a selection policy
    # draws it from the prior (mean 0), and so does the ranking now: 0 exactly, in parentheses
    effect = delta_of(root)["effect"]
    assert effect["estimate"] == 0.0 and effect["ranking"] == 0.0 and effect["identified"] is False
    assert effect["ranking_sd"] > 0.0
    code, out, err = run_cli("loo", "--workspace", str(root), "--no-write")
    assert code == 0, err
    _, rows = parse_table(out)
    assert next(r for r in rows if r["lesson"] == "t/delta.md")["effect"] == "(0.000)"
    results = Workspace(root, clock=fixed_clock).loo(write=False)
    delta = next(r for r in results if r.path == "t/delta.md")
    assert headline_text(delta) == "(0.000)"
    assert "ranking (shrunk joint estimate) 0.000" in describe(delta).plain


def test_pending_sessions_before_the_switch_are_not_denied(tmp_path: Path) -> None:
    # p010 and p030, pending, hold delta before s040: it was injected before s040, only never graded there
    reason = delta_of(variant_workspace(tmp_path, pending=(10, 30)))["effect"]["reason"]
    assert "it switched at session s040 (never injected in a graded session before it and in every one from it on" in (
        reason
    )
    assert "(never injected before it" not in reason


def test_a_switch_on_a_time_block_boundary_gives_the_switch_reason(tmp_path: Path) -> None:
    # 80 graded sessions: floor(2 log2(80 / 25)) = 3 time blocks, session i in block floor(3 i / 80): the
    # second block starts at s027 (81 // 80 = 1; s026: 78 // 80 = 0). Switched there, delta never varies
    # within a block and the data barely move it (posterior sd 100% of the prior's), but what makes it
    # unknowable is the switch, and its leave-one-out lift (about the step, +0.15) is before against after
    delta = delta_of(variant_workspace(tmp_path, switch=27))
    reason = delta["effect"]["reason"]
    assert reason.startswith(
        "identified only by time: it switched at session s027 (never injected in a graded session before it and "
        "in every one from it on, at the start of a time block)"
    ), reason
    assert delta["delta"] is None and delta["sufficient"] is False
    # the reason's words fit a switch where a block starts (it said "in each time block where it varies" only)
    assert "or where a time block starts" in delta["insufficient_reason"]
    assert delta["insufficient_reason"].startswith("no leave-one-out comparison: identified only by time")


def test_a_switch_in_one_category_names_it(tmp_path: Path) -> None:
    # delta only in category y (odd sessions), from s040 on: the first y session there is s041
    reason = delta_of(variant_workspace(tmp_path, by_category=True))["effect"]["reason"]
    assert (
        "it switched at session s041 (never injected in a graded session of category y before it and in every one "
        "from it on, within its time block)" in reason
    ), reason


def test_a_switch_at_a_block_start_in_one_category_is_drawn_from_the_prior_as_loo_says(tmp_path: Path) -> None:
    # categories x (even sessions) and y (odd); delta only in y from s027, where the second of 3 time blocks
    # starts, and the reward steps +0.15 there in y only: no block baseline takes a step of one category, so a
    # fit that did not know the switch read it as delta's effect (the policy drew delta at +0.18, sd 0.03)
    # while `loo` ranked it at the prior's 0
    from lesson_credit.core.workspace import Workspace

    rng = np.random.default_rng(3)
    events: list[dict[str, object]] = []
    for i in range(N):
        name = "xy"[i % 2]
        has = i >= 27 and name == "y"
        injected = ["t/alpha.md"] * bool(rng.random() < 0.5) + ["t/delta.md"] * has
        reward = 0.40 + 0.15 * has + 0.10 * ("t/alpha.md" in injected) + rng.normal(0.0, 0.05)
        events.append(session(f"s{i:03d}", round(float(reward), 4), dict.fromkeys(injected, 1.0), category=name))
    root = make_workspace(tmp_path, LESSONS, events)
    effect = delta_of(root)["effect"]
    assert "identified only by time" in effect["reason"] and effect["ranking"] == 0.0
    posterior = Workspace(root, clock=fixed_clock).joint_posterior()
    delta = list(posterior.arm_ids).index("t/delta.md")
    alpha = list(posterior.arm_ids).index("t/alpha.md")
    # drawn as a lesson without data: mean 0, and an sd far wider than alpha's (alpha's +0.10 is read from data)
    assert posterior.mean[delta] == 0.0 and posterior.sd[delta] > 3 * posterior.sd[alpha]


def test_a_switch_just_inside_a_block_that_the_data_barely_move_gives_the_switch_reason(tmp_path: Path) -> None:
    # the 3 time blocks of 80 graded sessions start at s000, s027 and s054 (floor(3 i / 80)); delta switched on
    # at s028 has one session without it in the second block (s027), so with noisy grades (sd 0.20) the data
    # barely move it (posterior sd about 97% of the prior's). Its with and without are still the sessions
    # after and before s028: the lift compared them (+0.17, BH p 0.003, the baseline's +0.15 step) beside
    # the reason "the data barely move it", and `loo` ranked it at +0.011 while the policy drew it at 0
    from lesson_credit.core.workspace import Workspace

    rng = np.random.default_rng(3)
    events: list[dict[str, object]] = []
    for i in range(N):
        injected = ["t/alpha.md"] * bool(rng.random() < 0.5) + ["t/delta.md"] * (i >= 28)
        reward = 0.40 + 0.15 * (i >= 28) + 0.10 * ("t/alpha.md" in injected) + rng.normal(0.0, 0.20)
        events.append(session(f"s{i:03d}", round(float(np.clip(reward, 0.0, 1.0)), 4), dict.fromkeys(injected, 1.0)))
    root = make_workspace(tmp_path, LESSONS, events)
    delta = delta_of(root)
    assert (delta["n_with"], delta["n_without"]) == (N - 28, 28)
    assert delta["effect"]["reason"].startswith(
        "identified only by time: it switched at session s028 (never injected in a graded session before it and "
        "in every one from it on, within its time block)"
    ), delta["effect"]["reason"]
    for key in ("delta", "ci_low", "ci_high", "p_value_approx", "p_adjusted", "delta_category"):
        assert delta[key] is None, key
    assert delta["sufficient"] is False
    assert delta["insufficient_reason"].startswith("no leave-one-out comparison: identified only by time")
    posterior = Workspace(root, clock=fixed_clock).joint_posterior()
    assert posterior.mean[list(posterior.arm_ids).index("t/delta.md")] == 0.0
    assert delta["effect"]["ranking"] == 0.0  # as the policy draws it


def test_a_lesson_on_in_one_whole_time_block_is_identified_only_by_time(tmp_path: Path) -> None:
    # 80 graded sessions, 3 time blocks: s000-s026, s027-s053, s054-s079 (floor(3 i / 80)). delta is in every
    # session of the middle block and in no other (no effect), the baseline steps +0.15 in that block only: two
    # switches, both where a block starts, its column the middle block's indicator. Before, one such switch was
    # read as time but two were not: `loo` printed "the data barely move it" beside a leave-one-out lift of about
    # the step (+0.15, every session of the block against the rest) and the joint policy drew it from a posterior
    # the step had moved
    from lesson_credit.core.workspace import Workspace
    from lesson_credit.tui.loo_text import describe

    rng = np.random.default_rng(3)
    events: list[dict[str, object]] = []
    for i in range(N):
        inside = 27 <= i < 54
        injected = ["t/alpha.md"] * bool(rng.random() < 0.5) + ["t/delta.md"] * inside
        reward = 0.40 + 0.15 * inside + 0.10 * ("t/alpha.md" in injected) + rng.normal(0.0, 0.05)
        events.append(session(f"s{i:03d}", round(float(reward), 4), dict.fromkeys(injected, 1.0)))
    root = make_workspace(tmp_path, LESSONS, events)
    delta = delta_of(root)
    assert (delta["n_with"], delta["n_without"]) == (27, N - 27)
    assert delta["effect"]["reason"].startswith(
        "identified only by time: it was injected in every graded session of some time blocks and in none of the "
        "others (within its category and agent), which the time blocks' baselines take all of"
    ), delta["effect"]["reason"]
    for key in ("delta", "ci_low", "ci_high", "p_value_approx", "p_adjusted", "delta_category", "delta_ipw"):
        assert delta[key] is None, key
    assert delta["sufficient"] is False
    assert delta["insufficient_reason"].startswith("no leave-one-out comparison: identified only by time")
    assert "or in different time blocks" in delta["insufficient_reason"]
    assert delta["effect"]["ranking"] == 0.0 and delta["effect"]["identified"] is False
    ws = Workspace(root, clock=fixed_clock)
    assert ws.effects()["t/delta.md"] == 0.0  # the Lessons screen's ranking
    posterior = ws.joint_posterior()
    index = list(posterior.arm_ids).index("t/delta.md")
    # drawn from the prior: mean 0, the prior's sd (a lesson without data), as `loo` ranks it
    assert posterior.mean[index] == 0.0 and posterior.sd[index] == posterior.prior_sd
    shown = next(r for r in ws.loo(write=False) if r.path == "t/delta.md")
    assert shown.timed and "it was injected in every graded session of some time blocks" in describe(shown).plain
