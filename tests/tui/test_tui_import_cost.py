"""What the dashboard's first paint imports: nothing slow that the Lessons rows do not need.

Measured (python -X importtime): scipy.special ~150 ms, plotext ~40 ms; the other screens load
when first shown. A fresh interpreter imports the app as `lesson-credit` does, and the list of
loaded modules is checked (no timing: the machine may be busy).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).parents[2]
NOT_AT_START = (
    "scipy",
    "plotext",
    "textual_plotext",
    "filelock",
    "lesson_credit.tui.screens.session_detail",
    "lesson_credit.tui.screens.sessions",
    "lesson_credit.tui.screens.health",
    "lesson_credit.tui.screens.analysis",
    "lesson_credit.tui.screens.simulation",
    "lesson_credit.tui.screens.what_if",
    "lesson_credit.tui.screens.help",
)


def loaded_after(code: str) -> set[str]:
    script = code + "\nimport json, sys\nprint(json.dumps(sorted(sys.modules)))\n"
    proc = subprocess.run([sys.executable, "-c", script], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return set(json.loads(proc.stdout.splitlines()[-1]))


def test_the_app_and_its_first_screen_import_nothing_slow() -> None:
    modules = loaded_after(
        "import lesson_credit.cli.main, lesson_credit.tui.app, "
        "lesson_credit.tui.screens.lessons, lesson_credit.tui.source"
    )
    assert "lesson_credit.tui.screens.lessons" in modules  # the first screen is imported with the app
    assert sorted(m for m in NOT_AT_START if m in modules) == []


def test_the_lessons_view_is_built_without_scipy(tmp_path: Path) -> None:
    lessons = tmp_path / "lessons" / "tools"
    lessons.mkdir(parents=True)
    (lessons / "git.md").write_text("---\nmatch:\n  keywords: [git]\n---\n# Git\n")
    code = f"""
import math
from lesson_credit.core.workspace import Workspace
from lesson_credit.tui.source import WorkspaceSource
view = WorkspaceSource(Workspace({str(tmp_path)!r})).lessons_view()
assert view.intervals_missing and math.isnan(view.rows[0].ci_low) and view.rows[0].mean == 0.5
"""
    modules = loaded_after(code)
    assert not any(m.split(".")[0] == "scipy" for m in modules)
