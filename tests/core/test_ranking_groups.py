"""A lesson grouped with one identified only by time is ranked at the prior's 0 too, by `loo`, the Lessons
screen's rankings and the joint policy alike.

a is injected in every session from s040 on and in none before, when the baseline steps +0.15; b rides
with a, in 38 of a's 40 sessions (95%: `loo` groups them, "only the group's effect can be known") and in no
other. The group's effect cannot be told from the step; b's alone rests on the two sessions that part them.
a was ranked 0 (its own switch) while b kept the shrunk fit's reading (-0.015 by `loo` on this log; +0.046,
second in the ranking without any effect, on another draw of the noise). c (in every even session, +0.10, no
tie to time) is untouched: its ranking stays near +0.10."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from lesson_credit.core.workspace import Workspace
from tests.support.cli_run import run_cli
from tests.support.engine_helpers import fixed_clock, make_workspace, session

LESSONS = {"a.md": (["a"], "active"), "b.md": (["b"], "active"), "c.md": (["c"], "active")}
GAPS = (45, 60)  # sessions of a without b


def group_log(tmp_path: Path) -> Path:
    rng = np.random.default_rng(5)
    events = []
    for i in range(80):
        injected = {"a.md": 1.0} if i >= 40 else {}
        if i >= 40 and i not in GAPS:
            injected["b.md"] = 1.0
        if i % 2 == 0:
            injected["c.md"] = 1.0
        reward = 0.40 + 0.15 * (i >= 40) + 0.10 * ("c.md" in injected) + rng.normal(0.0, 0.05)
        events.append(session(f"s{i:03d}", round(float(reward), 4), injected))
    return make_workspace(tmp_path, LESSONS, events)


def test_a_lesson_grouped_with_a_time_only_one_is_ranked_at_the_prior(tmp_path: Path) -> None:
    root = group_log(tmp_path)
    code, out, err = run_cli("loo", "--workspace", str(root), "--no-write", "--json", clock=fixed_clock)
    assert code == 0, err
    ranking = {r["lesson"]: r["joint"]["ranking"] for r in json.loads(out)["results"]}
    assert ranking["a.md"] == 0.0 and ranking["b.md"] == 0.0
    assert 0.05 < ranking["c.md"] < 0.15
    ws = Workspace(root, clock=fixed_clock)
    effects = ws.effects()
    assert effects["a.md"] == 0.0 and effects["b.md"] == 0.0 and effects["c.md"] == ranking["c.md"]
    post = ws.joint_posterior()
    mean = dict(zip(post.arm_ids, np.asarray(post.mean).tolist(), strict=True))
    assert mean["a.md"] == 0.0 and mean["b.md"] == 0.0
    assert 0.05 < mean["c.md"] < 0.15


def test_a_group_holding_a_lesson_identified_only_by_time_claims_no_effect(tmp_path: Path) -> None:
    """b rides with a as above and in one session before a's switch too (s020): the group's column then no longer
    switches once, so `loo` claimed the baseline's step as the group's effect (+0.148 [+0.11, +0.19], BH p 2e-8)
    beside its members' prior rankings, counted it among the other lessons' BH tests (c's p doubled), and showed
    a's and b's leave-one-out lifts (after against before s040: +0.165 and +0.152, p 0), all of which it
    withholds for a lesson identified only by time. c is untouched."""
    rng = np.random.default_rng(5)
    events = []
    for i in range(80):
        injected = {"a.md": 1.0} if i >= 40 else {}
        if (i >= 40 and i not in GAPS) or i == 20:
            injected["b.md"] = 1.0
        if i % 2 == 0:
            injected["c.md"] = 1.0
        reward = 0.40 + 0.15 * (i >= 40) + 0.10 * ("c.md" in injected) + rng.normal(0.0, 0.05)
        events.append(session(f"s{i:03d}", round(float(reward), 4), injected))
    root = make_workspace(tmp_path, LESSONS, events)
    code, out, err = run_cli("loo", "--workspace", str(root), "--no-write", "--json", clock=fixed_clock)
    assert code == 0, err
    payload = json.loads(out)
    results = {r["lesson"]: r for r in payload["results"]}
    for lesson in ("a.md", "b.md"):
        row = results[lesson]
        assert sorted(row["effect"]["group"]) == ["a.md", "b.md"] and row["effect"]["group_size"] == 2
        assert sorted(payload["meta"]["groups"][row["effect"]["group"][0]]) == ["a.md", "b.md"]
        assert row["effect"]["group_effect"] is None, row["effect"]["group_effect"]
        assert "identified only by time" in row["effect"]["reason"]
        assert row["effect"]["ranking"] == 0.0
        assert row["delta"] is None and row["p_value_approx"] is None and row["sufficient"] is False
        assert row["insufficient_reason"].startswith("no leave-one-out comparison")
    c = results["c.md"]  # every even session: its +0.10 stands, its test alone in the BH family
    assert c["effect"]["identified"] is True and 0.05 < c["effect"]["estimate"] < 0.15
    assert c["effect"]["p_adjusted"] == c["effect"]["p_value"]
