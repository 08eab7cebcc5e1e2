"""Helpers for the hostile-input tests: a workspace on disk and the CLI run in a subprocess."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FINISH_LIMIT_S = 30.0  # "it finished": generous, never a speed assertion
LOG_REL = Path("state") / "lesson-thompson" / "sessions.jsonl"


def lesson(keywords: list[str]) -> str:
    return f"---\nmatch:\n  keywords: {json.dumps(keywords)}\n---\n# L\n"


def make_ws(root: Path, lessons: dict[str, str] | None = None) -> Path:
    (root / "lessons").mkdir(parents=True, exist_ok=True)
    for name, text in (lessons or {"a.md": lesson(["alpha"])}).items():
        (root / "lessons" / name).write_text(text)
    return root


def run_cli(*argv: str, cwd: Path, timeout: float = FINISH_LIMIT_S) -> subprocess.CompletedProcess[str]:
    """Run `lesson-credit ARGV` in a fresh process; a hang fails the test with TimeoutExpired."""
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.run(
        [sys.executable, "-m", "cli.main", *argv],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def log_bytes(root: Path) -> bytes:
    path = root / LOG_REL
    return path.read_bytes() if path.exists() else b""
