"""`explain` and `show` list a retraction in a session's grade history (docs/format.md §5.3)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.cli_run import run, run_json
from tests.support.engine_helpers import grade, make_workspace
from tests.support.retraction_log import BASE, LESSONS, retraction


def test_explain_cli_lists_a_retraction_in_the_history(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = make_workspace(tmp_path, LESSONS, [*BASE, grade("s2", 0.6), retraction("s2")])
    code, out, err = run(capsys, "explain", "s2", "--workspace", str(root))
    assert code == 0, err
    assert "retracted  manual" in out and "grade pending" in out


def test_show_cli_lists_a_retraction_in_the_history(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = make_workspace(tmp_path, LESSONS, [*BASE, grade("s2", 0.6), retraction("s2")])
    code, out, err = run(capsys, "show", "s2", "--workspace", str(root))
    assert code == 0, err
    assert "retracted  manual" in out and "0.6" in out
    grades = run_json(capsys, "show", "s2", "--workspace", str(root))["grades"]
    assert [(g["base_reward"], g["grader"]) for g in grades] == [(0.6, "manual"), (None, "manual")]


def test_a_retraction_under_another_score_in_force_does_not_say_pending(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """s1's own reward 0.4 stays in force when a person's 0.6 on it is retracted (the person's score is
    withdrawn, not the session's): the history said "retracted (pending)" under "grade 0.4", as if the
    session were pending again."""
    root = make_workspace(tmp_path, LESSONS, [*BASE, grade("s1", 0.6), retraction("s1")])
    code, out, err = run(capsys, "show", "s1", "--workspace", str(root))
    assert code == 0, err
    assert "grade     0.4" in out
    history = out[out.index("grade history:") :]
    assert "retracted" in history and "pending" not in history
