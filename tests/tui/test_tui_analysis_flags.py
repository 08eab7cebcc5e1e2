"""The Analysis summary's `N flagged` counts what `loo` lists under `flags:` (every lesson with a flag),
and says how many of those are ⚠ rows (a comparison to distrust)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from lesson_credit.core.workspace import Workspace
from lesson_credit.tui.screens.analysis import summary
from lesson_credit.tui.source_views import AnalysisView
from tests.support.cli_run import run_cli
from tests.support.engine_helpers import fixed_clock, make_workspace, session

LESSONS = {name: ([name[0] + "word"], "active") for name in ("always.md", "random.md", "rare.md")}


def workspace(tmp_path: Path) -> Path:
    """40 graded sessions: always.md in every one (no control: a ⚠ row), random.md in about half (no flag),
    rare.md in three (too few for leave-one-out: a flag, no ⚠)."""
    rng = np.random.default_rng(9)
    events = []
    for i in range(40):
        used = ["always.md"] + ["random.md"] * bool(rng.random() < 0.5) + ["rare.md"] * (i < 3)
        events.append(session(f"s{i:02d}", round(float(0.5 + rng.normal(0.0, 0.1)), 3), dict.fromkeys(used, 1.0)))
    return make_workspace(tmp_path, LESSONS, events)


def test_flagged_counts_the_lessons_loo_lists_under_flags(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = workspace(tmp_path)
    ws = Workspace(root, clock=fixed_clock)
    results = tuple(ws.loo(write=False))
    view = AnalysisView(1, results, 40, 5, 20)
    # by hand: always.md (no control) and rare.md (3 with: too few) are flagged; only always.md is a ⚠ row
    assert " · 2 flagged (1 ⚠)" in summary(view).plain
    # the same two, counted a second way: the rows `loo` lists under flags: at 80 columns
    monkeypatch.setenv("COLUMNS", "80")
    code, out, err = run_cli("loo", "-w", str(root), "--no-write")
    assert code == 0, err
    listed = out.split("\nflags:\n", 1)[1].split("\n\n", 1)[0].splitlines()
    # a lesson's line starts two spaces in; the lines it wraps to hang four
    lessons = [line.split(":", 1)[0].strip() for line in listed if line.startswith("  ") and line[2] != " "]
    assert sorted(lessons) == ["always.md", "rare.md"]


def test_the_summary_says_the_minimum_counts_as_minimums(tmp_path: Path) -> None:
    """The summary's "(5 sessions with, 20 without)" read as counts of sessions (loo says "min 5 with, 20 without")."""
    root = workspace(tmp_path)
    results = tuple(Workspace(root, clock=fixed_clock).loo(write=False))
    plain = summary(AnalysisView(1, results, 40, 5, 20)).plain
    assert "with enough data for LOO (at least 5 sessions with, 20 without)" in plain
