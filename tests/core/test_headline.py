"""One headline (core.analysis.estimates): the randomized estimate only with enough kept and withheld
sessions and at least the joint one's precision; otherwise the joint effect. Both stay available.
The rule itself, by hand: tests/core/test_estimates.py."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from lesson_credit.core.workspace import Workspace
from tests.support.dropout_logs import gptme_line, write_logs
from tests.support.engine_helpers import fixed_clock, make_workspace, session
from tests.support.headline_logs import LESSONS, W, X, Y, Z, two_by_two_workspace


def test_two_kept_against_two_withheld_is_not_the_headline(tmp_path: Path) -> None:
    # the workspace: X has no effect, but its 2 kept sessions happen to be good and its 2
    # withheld ones poor: a randomized +0.4 from 2 against 2 must not lead
    root = two_by_two_workspace(tmp_path)
    rows = {r.path: r for r in Workspace(root, clock=fixed_clock).loo(write=False)}
    x = rows[X]
    assert x.randomized is not None and (x.randomized.n_kept, x.randomized.n_withheld) == (2, 2)
    assert x.randomized.estimate is not None and x.randomized.estimate > 0.2
    assert x.headline != x.randomized.estimate
    assert x.effect is not None and x.joint is not None
    assert x.effect.method == "joint" and x.headline == x.joint.estimate != x.randomized.estimate
    assert x.effect.ci_low is not None and x.effect.ci_high is not None
    assert x.effect.ci_low < 0 < x.effect.ci_high  # X: nothing


def test_a_trial_separates_lessons_the_log_cannot(tmp_path: Path) -> None:
    # Y and Z are always injected together (a group: the joint fit claims nothing for either); gptme
    # withheld both in 25 of 50 sessions, so the trial has 25 kept and 25 withheld for Y
    rng = np.random.default_rng(2)
    events, records = [], {}
    for i in range(50):
        kept = i % 2 == 0
        reward = 0.5 + (0.2 if kept else 0.0) + float(rng.normal(0, 0.05))
        events.append(session(f"s{i}", round(reward, 2), {Y: 0.5, Z: 0.5} if kept else {W: 0.5}))
        records[f"s{i}"] = [gptme_line(f"s{i}", [Y, Z], []) if kept else gptme_line(f"s{i}", [], [Y, Z])]
    root = make_workspace(tmp_path, lessons=LESSONS, events=events)
    write_logs(root, records)
    rows = {r.path: r for r in Workspace(root, clock=fixed_clock).loo(write=False)}
    y, z = rows[Y], rows[Z]
    assert y.joint is not None and y.joint.group == (Y, Z) and not y.joint.claims
    assert y.effect is not None and y.effect.method == "randomized"
    assert y.randomized is not None and y.effect.estimate == y.randomized.estimate
    assert (y.randomized.n_kept, y.randomized.n_withheld) == (25, 25)
    assert y.effect.p_adjusted is not None and y.effect.p_adjusted < 1e-6
    # Z's trial is the same coin: its own randomized row leads too
    assert z.effect is not None and z.effect.method == "randomized"
    # every session has the group or W, never both: the group's column plus W's is every session, a tie the joint
    # fit cannot read (it once read it as the lessons' common direction and gave the group W's difference)
    assert y.joint.group_effect is None and "the group is not estimable" in (y.joint.reason or "")
    assert W in (y.joint.reason or "")
