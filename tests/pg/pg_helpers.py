"""Helpers for the PostgreSQL store tests: small workspaces and event lines (CLI runners: tests/support/cli_run.py)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

LESSONS = {
    "tools/git.md": ["git", "commit"],
    "tools/quote.md": ["quote"],
    "workflow/plain.md": [],
    "style.md": ["style guide", "lint"],
}
JOURNAL = "We used git to commit, then a quote; the style guide said lint. git again.\n"


def lesson_file(keywords: list[str]) -> str:
    quoted = ", ".join(f'"{k}"' for k in keywords)
    return f"---\nmatch:\n  keywords: [{quoted}]\nstatus: active\n---\n# A lesson\n\nBody.\n"


def make_workspace(root: Path) -> Path:
    """A workspace with LESSONS and one journal (j.txt); no log."""
    for rel, keywords in LESSONS.items():
        path = root / "lessons" / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(lesson_file(keywords))
    (root / "j.txt").write_text(JOURNAL)
    (root / "state" / "lesson-thompson").mkdir(parents=True, exist_ok=True)
    return root


def log_path(root: Path) -> Path:
    return root / "state" / "lesson-thompson" / "sessions.jsonl"


def line(event: dict[str, Any]) -> bytes:
    return (json.dumps(event) + "\n").encode()
