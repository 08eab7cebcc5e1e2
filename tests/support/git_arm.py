"""One lesson's numbers three ways, for the tests of gptme's bandit saving our state file: the log's events, what
`status --json` says of tools/git.md, and its arm in bandit-state.json."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.support.cli_run import run
from tests.support.engine_helpers import LOG_REL, STATE_REL

GIT = "tools/git.md"


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
