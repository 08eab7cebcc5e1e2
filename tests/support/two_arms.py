"""Two lessons, a and b, and the CLI runs the gptme state-file tests share: a command that must succeed, and each
lesson's (alpha, beta, n) as `status --json` gives them."""

from __future__ import annotations

import json
from pathlib import Path

from tests.support.cli_run import run_cli

A, B = "tools/a.md", "tools/b.md"
LESSONS = {A: (["alpha"], "active"), B: (["beta"], "active")}
GPTME_TIME = "2026-12-06T08:19:27.925928+00:00"  # gptme's bandit's stamp: isoformat, +00:00


def ok(*argv: str) -> str:
    """Run the CLI; it must exit 0. Its stderr."""
    code, _, err = run_cli(*argv)
    assert code == 0, err
    return err


def rows_said(root: Path) -> tuple[dict[str, tuple[float, float, int]], str]:
    """Each lesson's (alpha, beta, n) (to 9 places) in the workspace at `root`, and what `status` said on stderr."""
    code, out, err = run_cli("status", "--json", "-w", str(root))
    assert code == 0, err
    lessons = json.loads(out)["lessons"]
    return {row["path"]: (round(row["alpha"], 9), round(row["beta"], 9), row["n"]) for row in lessons}, err


def rows(root: Path) -> dict[str, tuple[float, float, int]]:
    return rows_said(root)[0]
