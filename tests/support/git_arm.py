"""One lesson's numbers three ways, for the tests of gptme's bandit saving our state file: the log's events, what
`status --json` says of tools/git.md, and its arm in bandit-state.json."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.support.cli_run import run
from tests.support.engine_helpers import BASIC_JOURNAL, BASIC_LESSONS, LOG_REL, STATE_REL, make_workspace, session

GIT = "tools/git.md"


def graded_workspace(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    """A workspace of one session, s1 (git at salience 1), graded 0.9 by `grade`: bandit-state.json written by us,
    git at Beta(1.9, 1.1) n 1 (weight 1)."""
    root = make_workspace(
        tmp_path, BASIC_LESSONS, events=[session("s1", 0.8, {GIT: 1.0})], journals={"j.txt": BASIC_JOURNAL}
    )
    code, _, err = run(capsys, "grade", "s1", "0.9", "--workspace", str(root))
    assert code == 0, err
    return root


def events(root: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (root / LOG_REL).read_text().splitlines()]


def status_git(capsys: pytest.CaptureFixture[str], root: Path) -> tuple[float, float, int]:
    code, out, err = run(capsys, "status", "--workspace", str(root), "--json")
    assert code == 0, err
    (row,) = [r for r in json.loads(out)["lessons"] if r["path"] == GIT]
    return row["alpha"], row["beta"], row["n"]


def file_git(root: Path) -> tuple[float, float, int]:
    arm = json.loads((root / STATE_REL).read_text())["arms"][GIT]
    return arm["alpha"], arm["beta"], arm["total_selections"]
