"""Helpers for the hostile-input tests: a workspace on disk (the CLI in a subprocess is tests/support/cli_run.py)."""

from __future__ import annotations

import json
from pathlib import Path

LOG_REL = Path("state") / "lesson-thompson" / "sessions.jsonl"


def lesson(keywords: list[str]) -> str:
    return f"---\nmatch:\n  keywords: {json.dumps(keywords)}\n---\n# L\n"


def make_ws(root: Path, lessons: dict[str, str] | None = None) -> Path:
    (root / "lessons").mkdir(parents=True, exist_ok=True)
    for name, text in (lessons or {"a.md": lesson(["alpha"])}).items():
        (root / "lessons" / name).parent.mkdir(parents=True, exist_ok=True)
        (root / "lessons" / name).write_text(text)
    return root


def log_bytes(root: Path) -> bytes:
    path = root / LOG_REL
    return path.read_bytes() if path.exists() else b""
