"""A small deterministic workspace for the dashboard tests: five lessons, four sessions, a fixed clock."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

from core.workspace import Workspace

FIXED_NOW = dt.datetime(2026, 3, 5, 16, 30, tzinfo=dt.UTC)
LOG_REL = Path("state") / "lesson-thompson" / "sessions.jsonl"
STATE_REL = Path("state") / "lesson-thompson" / "bandit-state.json"
CONFIG_REL = Path("state") / "lesson-thompson" / "config.toml"
FLOOR = 0.3  # the default

MARKUP_JOURNAL = "Tried [red]boom[/] and \x1b[31mred\x1b[0m; then git worktree add.\n\tindented\tline\n"


def fixed_clock() -> dt.datetime:
    return FIXED_NOW


def lesson(keywords: list[str], title: str, status: str = "active", description: str = "A test lesson.") -> str:
    return "\n".join(
        [
            "---",
            "match:",
            f"  keywords: {json.dumps(keywords)}",
            f"status: {status}",
            f"description: {json.dumps(description)}",
            "---",
            f"# {title}",
            "",
            "Body.",
            "",
        ]
    )


LESSONS = {
    "tools/git-worktree.md": lesson(["git worktree", "stale branch"], "Keep worktrees tidy"),
    "tools/shell-quoting.md": lesson(["quote", "shell", "xargs"], "Quote shell arguments"),
    "testing/run-tests.md": lesson(["pytest", "tests pass"], "Run the tests before claiming"),
    "workflow/small-commits.md": lesson(["commit"], "Small focused commits"),
    "communication/ask-first.md": lesson(["rm -rf", "destructive"], "Ask before destructive", status="deprecated"),
    "tools/old-lesson.md": lesson(["legacy"], "Removed after logging"),  # deleted below: becomes missing
}

JOURNALS = {
    "s1.md": "Set up a git worktree for the fix.\nRan pytest; the git worktree was stale.\n",
    "s2.md": "Had to quote the shell glob, then commit the change.\n",
    "s3.md": MARKUP_JOURNAL,
    "s4.md": "Ran pytest and made one commit.\n",
    "s5.md": "Another git worktree session with a shell loop.\n",
}

# (session id, journal, lessons, reward or None for pending, category, timestamp)
SESSIONS: list[tuple[str, str, list[str], float | None, str, str]] = [
    (
        "s1",
        "s1.md",
        ["tools/git-worktree.md", "testing/run-tests.md", "tools/shell-quoting.md"],
        0.8,
        "code",
        "2026-03-01T10:00:00Z",
    ),
    (
        "s2",
        "s2.md",
        ["tools/shell-quoting.md", "workflow/small-commits.md", "tools/old-lesson.md"],
        0.4,
        "code",
        "2026-03-02T11:00:00Z",
    ),
    ("s3", "s3.md", ["tools/git-worktree.md", "workflow/small-commits.md"], 0.6, "ops", "2026-03-03T12:00:00Z"),
    ("s4", "s4.md", ["testing/run-tests.md", "workflow/small-commits.md"], None, "code", "2026-03-04T13:00:00Z"),
]

NEW_SESSION = ("s5", "s5.md", ["tools/git-worktree.md", "tools/shell-quoting.md"], 0.9, "code", "2026-03-05T14:00:00Z")


def build_workspace(root: Path) -> Path:
    """Write the lessons and journals, record the sessions, then delete one lesson (now `missing`)."""
    root.mkdir(parents=True, exist_ok=True)
    for lesson_id, text in LESSONS.items():
        path = root / "lessons" / lesson_id
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    journals = root / "state" / "journals"
    journals.mkdir(parents=True, exist_ok=True)
    for name, text in JOURNALS.items():
        (journals / name).write_text(text, encoding="utf-8")
    ws = Workspace(root, clock=fixed_clock)
    for session in SESSIONS:
        record(ws, root, session)
    (root / "lessons" / "tools" / "old-lesson.md").unlink()
    return root


def record(ws: Workspace, root: Path, session: tuple[str, str, list[str], float | None, str, str]) -> None:
    session_id, journal, lessons, reward, category, stamp = session
    ws.record(
        session_id,
        root / "state" / "journals" / journal,
        lessons,
        reward=reward,
        category=category,
        timestamp=stamp,
    )


def log_lines(root: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (root / LOG_REL).read_text(encoding="utf-8").splitlines() if line.strip()]


def weight(salience: float, floor: float = FLOOR) -> float:
    return floor + (1 - floor) * salience
