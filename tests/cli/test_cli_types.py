"""The CLI is typed: a command's workspace is a `Workspace` to mypy, so a misspelt method is an error
before anything runs (`open_workspace` returned `Any`, and `ws.recrod(` passed)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).parents[2]

COMMAND = """
import argparse

from lesson_credit.cli.common import open_workspace


def cmd_misspelt(args: argparse.Namespace) -> int:
    ws = open_workspace(args, writes=True)
    ws.record("s1", "journal.md", ["a.md"])  # spelt right: no error
    ws.recrod("s1", "journal.md", ["a.md"])  # misspelt: line 10
    return 0
"""


@pytest.mark.long
def test_mypy_reports_a_misspelt_workspace_method_in_a_command(tmp_path: Path) -> None:
    pytest.importorskip("mypy")
    sys.path.insert(0, str(REPO / "scripts"))
    try:
        from typecheck_tree import make_tree
    finally:
        sys.path.remove(str(REPO / "scripts"))
    make_tree(tmp_path / "tree")  # the package as it installs (mypy cannot follow package-dir's hook)
    (tmp_path / "command.py").write_text(COMMAND)
    argv = [sys.executable, "-m", "mypy", "--strict", "--ignore-missing-imports", "--follow-imports=silent"]
    argv += ["--cache-dir", str(tmp_path / "cache"), "--config-file", os.devnull, "command.py"]
    env = {**os.environ, "MYPYPATH": str(tmp_path / "tree")}
    proc = subprocess.run(argv, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    errors = [line for line in proc.stdout.splitlines() if ": error:" in line]
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert len(errors) == 1, errors  # the misspelt call only: the right one type-checks
    assert errors[0].startswith("command.py:10: error:") and 'has no attribute "recrod"' in errors[0]
