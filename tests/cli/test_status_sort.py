"""`status --sort mean` lists lessons never used (n 0, the prior's mean 0.5) after every lesson
with evidence, and says so (the dashboard's Lessons screen: tests/tui/test_tui_trust.py)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.support.cli_run import run_cli
from tests.support.engine_helpers import make_workspace, session

LESSONS = {"good.md": (["a"], "active"), "bad.md": (["b"], "active"), "unused.md": (["c"], "active")}


def test_never_used_lessons_come_after_the_evidence(tmp_path: Path) -> None:
    # good: reward 1 at salience 1 -> Beta(2, 1), mean 0.667; bad: reward 0 -> Beta(1, 2), mean 0.333;
    # unused: Beta(1, 1), mean 0.5, n 0 (it sat between them)
    events = [session("s1", 1.0, {"good.md": 1.0}), session("s2", 0.0, {"bad.md": 1.0})]
    root = make_workspace(tmp_path, LESSONS, events=events)
    code, out, err = run_cli("status", "--workspace", str(root), "--json")
    assert code == 0, err
    assert [row["path"] for row in json.loads(out)["lessons"]] == ["good.md", "bad.md", "unused.md"]
    code, out, _ = run_cli("status", "--workspace", str(root))
    assert "1 lesson never used (n 0, the prior's mean) is listed last" in out
    code, out, _ = run_cli("status", "--workspace", str(root), "--sort", "n")
    assert "never used" not in out
