"""Running `lesson-credit` in tests: in-process (`main`, output caught by capsys or redirected)
or in a fresh process with a capped address space (hostile input). One copy for every test folder."""

from __future__ import annotations

import datetime as dt
import io
import json
import os
import subprocess
import sys
from collections.abc import Callable
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path
from typing import Any

import pytest

import lesson_credit
from lesson_credit.cli.main import main

Clock = Callable[[], dt.datetime] | None
ROOT = Path(lesson_credit.__file__).resolve().parents[1]  # the tree under test (PYTHONPATH), for a subprocess
FINISH_LIMIT_S = 30.0  # "it finished": generous, never a speed assertion
MEMORY_LIMIT_BYTES = 3 << 30  # address space of a subprocess: a memory bomb fails, not the machine


def run(capsys: pytest.CaptureFixture[str], *argv: str, clock: Clock = None) -> tuple[int, str, str]:
    """`main(argv)` with output caught by capsys: exit code, stdout, stderr. `clock` stands in
    for now (default: the real clock)."""
    code = main(list(argv), clock=clock)
    out, err = capsys.readouterr()
    return code, out, err


def run_json(capsys: pytest.CaptureFixture[str], *argv: str, clock: Clock = None) -> Any:
    """`run` with --json appended: the decoded stdout of a command that must succeed."""
    code, out, err = run(capsys, *argv, "--json", clock=clock)
    assert code == 0, err
    return json.loads(out)


def run_cli(*argv: str, clock: Clock = None) -> tuple[int, str, str]:
    """`main(argv)` with stdout and stderr redirected (no capsys needed): exit code, stdout, stderr."""
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = main(list(argv), clock=clock)
    return code, out.getvalue(), err.getvalue()


def run_ok(*argv: str) -> str:
    """`run_cli` of a command that must succeed: its stdout (stderr in the failure's message)."""
    code, out, err = run_cli(*argv)
    assert code == 0, err
    return out


class Terminal(io.StringIO):
    """A stdout that says it is a terminal: what a person at one sees (with $COLUMNS for its width)."""

    def isatty(self) -> bool:
        return True


def run_cli_on_terminal(*argv: str, clock: Clock = None) -> tuple[int, str, str]:
    """`run_cli` with stdout a terminal (`Terminal`), stderr caught as a pipe: exit code, stdout, stderr."""
    out, err = Terminal(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = main(list(argv), clock=clock)
    return code, out.getvalue(), err.getvalue()


def process_env(**extra: str) -> dict[str, str]:
    """The environment of a `lesson-credit` subprocess: this one's, with the tree under test first on
    the module path (whatever is installed in the environment, or wherever the tests run from)."""
    return dict(os.environ, PYTHONPATH=str(ROOT), **extra)


def _child_setup(umask: int | None) -> None:
    import resource

    cap = MEMORY_LIMIT_BYTES
    resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
    if umask is not None:
        os.umask(umask)


def run_process(
    *argv: str,
    cwd: Path,
    timeout: float = FINISH_LIMIT_S,
    env: dict[str, str] | None = None,
    umask: int | None = None,
    stdin: str | None = None,
) -> subprocess.CompletedProcess[str]:
    """Run `lesson-credit ARGV` in a fresh process (`stdin`: the text on its stdin, else this one's); a hang fails the
    test with TimeoutExpired, running out of the (generous) address-space cap with a MemoryError in its stderr."""
    return subprocess.run(
        [sys.executable, "-m", "lesson_credit.cli.main", *argv],
        cwd=cwd,
        input=stdin,
        env=process_env(**(env or {})),
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
        preexec_fn=lambda: _child_setup(umask),
    )
