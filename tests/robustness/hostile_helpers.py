"""Helpers for the hostile-input tests: a workspace on disk and the CLI run in a subprocess."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import core

ROOT = Path(core.__file__).resolve().parents[1]  # the tree under test (PYTHONPATH), for the subprocess
FINISH_LIMIT_S = 30.0  # "it finished": generous, never a speed assertion
MEMORY_LIMIT_BYTES = 3 << 30  # address space of a hostile-input subprocess: a bomb fails, not the machine
LOG_REL = Path("state") / "lesson-thompson" / "sessions.jsonl"


def lesson(keywords: list[str]) -> str:
    return f"---\nmatch:\n  keywords: {json.dumps(keywords)}\n---\n# L\n"


def make_ws(root: Path, lessons: dict[str, str] | None = None) -> Path:
    (root / "lessons").mkdir(parents=True, exist_ok=True)
    for name, text in (lessons or {"a.md": lesson(["alpha"])}).items():
        (root / "lessons" / name).parent.mkdir(parents=True, exist_ok=True)
        (root / "lessons" / name).write_text(text)
    return root


def _child_setup(umask: int | None) -> None:
    import resource

    cap = MEMORY_LIMIT_BYTES
    resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
    if umask is not None:
        os.umask(umask)


def run_cli(
    *argv: str,
    cwd: Path,
    timeout: float = FINISH_LIMIT_S,
    env: dict[str, str] | None = None,
    umask: int | None = None,
) -> subprocess.CompletedProcess[str]:
    """Run `lesson-credit ARGV` in a fresh process; a hang fails the test with TimeoutExpired,
    running out of the (generous) address-space cap with a MemoryError in its stderr."""
    env = dict(os.environ, PYTHONPATH=str(ROOT), **(env or {}))
    return subprocess.run(
        [sys.executable, "-m", "cli.main", *argv],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
        preexec_fn=lambda: _child_setup(umask),
    )


def log_bytes(root: Path) -> bytes:
    path = root / LOG_REL
    return path.read_bytes() if path.exists() else b""
