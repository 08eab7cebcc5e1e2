"""`fold_through`: per arm, the posterior right after a given session, checked against a second way: the fold
of a log that ends at that session (what an export right after it wrote)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from lesson_credit.core.bandit.fold import fold_through
from lesson_credit.core.workspace import Workspace
from tests.support.engine_helpers import BASIC_LESSONS, CONFIG_REL, grade, make_workspace, session

GIT, QUOTE, PLAIN = "tools/git.md", "tools/quote.md", "workflow/plain.md"
PRIOR = {"type": "prior", "arms": {PLAIN: {"alpha": 3.0, "beta": 2.0, "n": 4}}}
EVENTS: list[dict[str, Any]] = [
    PRIOR,
    session("s0", 0.8, {GIT: 1.0, QUOTE: 0.5}),
    session("s1", None, {GIT: 0.2}),  # pending, then graded below
    session("s2", 0.3, {QUOTE: 0.0, PLAIN: 0.7}),
    session("s3", 0.9, {GIT: 0.4, PLAIN: 1.0}),
    grade("s1", 0.6),
]


def posterior_of(tmp_path: Path, name: str, events: list[dict[str, Any]], config: str) -> Any:
    root = make_workspace(tmp_path, BASIC_LESSONS, events=events, name=name)
    (root / CONFIG_REL).write_text(config)
    return Workspace(root).posterior()


@pytest.mark.parametrize("strategy", ["seed", "evidence", "uniform"])
@pytest.mark.parametrize("cut", [-1, 0, 1, 2, 3])
def test_the_fold_through_a_row_is_the_fold_of_the_log_ending_there(tmp_path: Path, strategy: str, cut: int) -> None:
    config = f'strategy = "{strategy}"\nfloor = 0.2\n'
    whole = posterior_of(tmp_path, "whole", EVENTS, config)
    rows = np.full(len(whole.arm_ids), cut, dtype=np.int64)
    through = fold_through(whole, rows)
    assert through is not None
    sessions = [event for event in EVENTS[1:5]][: cut + 1]
    ids = {event["session_id"] for event in sessions}
    grades = [event for event in EVENTS[5:] if event["session_id"] in ids]
    second = posterior_of(tmp_path, "prefix", [PRIOR, *sessions, *grades], config)
    index = second.index()
    for i, arm in enumerate(whole.arm_ids):
        j = index.get(arm)  # (an arm no session up to the cut named: at its start, the prior's or Beta(1, 1))
        expected = (second.alpha[j], second.beta[j], second.n[j]) if j is not None else (1.0, 1.0, 0)
        assert (through[0][i], through[1][i], through[2][i]) == pytest.approx(expected), arm


def test_arms_cut_at_different_rows_each_fold_their_own_sessions(tmp_path: Path) -> None:
    # by hand, seed, floor 0.3 (w = 0.3 + 0.7 * salience, alpha += base * w, beta += 1 - base * w):
    # git through s0 (w 1, 0.8): Beta(1.8, 1.2) n 1; quote through s2: s0 w 0.65 (+0.52/+0.48), s2 w 0.3 at 0.3
    # (+0.09/+0.91): Beta(1.61, 2.39) n 2; plain through nothing: its prior Beta(3, 2) n 4
    whole = posterior_of(tmp_path, "whole", EVENTS, "")
    at = whole.index()
    rows = np.full(len(whole.arm_ids), -1, dtype=np.int64)
    rows[at[GIT]], rows[at[QUOTE]] = 0, 2
    through = fold_through(whole, rows)
    assert through is not None
    got = {arm: (through[0][at[arm]], through[1][at[arm]], through[2][at[arm]]) for arm in (GIT, QUOTE, PLAIN)}
    assert got[GIT] == pytest.approx((1.8, 1.2, 1))
    assert got[QUOTE] == pytest.approx((1.61, 2.39, 2))
    assert got[PLAIN] == pytest.approx((3.0, 2.0, 4))


def test_with_decay_the_fold_through_a_row_is_not_known(tmp_path: Path) -> None:
    whole = posterior_of(tmp_path, "whole", EVENTS, "decay = 0.9\n")
    assert fold_through(whole, np.zeros(len(whole.arm_ids), dtype=np.int64)) is None


GRADED = [
    session("g0", 0.8, {GIT: 1.0}),
    session("g1", None, {GIT: 0.5, QUOTE: 1.0}),
    grade("g1", 0.6),
    grade("g0", 0.2, grader="heuristic"),  # (another source: the reward priority says which counts)
    grade("g0", 0.3),
    grade("g1", None),  # undone: pending again
    grade("g1", 0.9, grader="heuristic"),
]


@pytest.mark.parametrize("cut", range(2, len(GRADED) + 1))
def test_the_scores_before_a_line_are_those_of_the_log_ending_there(tmp_path: Path, cut: int) -> None:
    """`LateGrades.base_before(line)`, a second way: the rewards of a log of only the events above that line."""
    from lesson_credit.core.workspace.late_evidence import LateGrades

    root = make_workspace(tmp_path, BASIC_LESSONS, events=GRADED, name="whole")
    ws = Workspace(root)
    reader = ws._reader
    late = LateGrades(ws.posterior(), reader.index, reader.outcomes, reader.rewards)
    line = int(reader.index.session_lines.view()[0]) + cut  # (the events are the log's lines, one after another)
    prefix = Workspace(make_workspace(tmp_path, BASIC_LESSONS, events=GRADED[:cut], name="prefix")).posterior()
    base = late.base_before(line)
    assert base is not None and np.array_equal(base, prefix.base, equal_nan=True)
