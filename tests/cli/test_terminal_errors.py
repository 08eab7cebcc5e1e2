"""An error's one line on stderr: on a terminal it is wrapped at spaces to the terminal's width, its continuation
lines indented (the terminal cut `status --sort nope`'s line at column 80 mid-word: "(choose fro" / "m 'mean', ...");
through a pipe, a hook's log or with --json it stays the one line it was, byte for byte. The terminal is a
pseudo-terminal 80 columns wide."""

from __future__ import annotations

import fcntl
import os
import pty
import select
import struct
import subprocess
import sys
import termios
from pathlib import Path

import pytest

from tests.cli.test_terminal_width import copy_demo
from tests.support.cli_run import FINISH_LIMIT_S, process_env, run_process

COLUMNS = 80
# the demo has 2026-09-02-002 and 2026-09-02-003: the prefix is ambiguous (exit 1), a line of 105 characters
AMBIGUOUS = (
    "lesson-credit: session id prefix '2026-09-02-00' is ambiguous: 2 sessions match (2026-09-02-002, 2026-09-02-003)"
)
# argparse's own error line (exit 2), under its usage
BAD_CHOICE = (
    "lesson-credit status: error: argument --sort: invalid choice: 'nope' (choose from 'mean', 'n', 'path', 'ci_low')"
)


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return copy_demo(tmp_path_factory.mktemp("demo"))


def stderr_on_terminal(*argv: str, cwd: Path) -> tuple[int, str]:
    """`lesson-credit ARGV` with stderr a pseudo-terminal 80 columns wide and stdout a pipe, no $COLUMNS (the
    terminal's own width is read): its exit status and what the terminal showed."""
    leader, follower = pty.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 24, COLUMNS, 0, 0))
    env = {k: v for k, v in process_env().items() if k not in ("COLUMNS", "LINES")}
    child = subprocess.Popen(
        [sys.executable, "-m", "lesson_credit.cli.main", *argv],
        cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=follower,
    )  # fmt: skip
    os.close(follower)
    shown = b""
    while True:
        ready, _, _ = select.select([leader], [], [], FINISH_LIMIT_S)
        assert ready, f"no end after {FINISH_LIMIT_S} s: {shown[-500:]!r}"
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # (EIO: the child closed the terminal)
            break
        if not chunk:
            break
        shown += chunk
    os.close(leader)
    return child.wait(timeout=FINISH_LIMIT_S), shown.decode().replace("\r\n", "\n")


def assert_wrapped(shown: str, line: str) -> None:
    """`shown` ends in `line` wrapped: every row within 80 columns, each continuation row indented two spaces, and
    the rows' words those of the line in order (no word cut: joined by single spaces they give the line back)."""
    rows = shown.rstrip("\n").split("\n")
    first = next(i for i, row in enumerate(rows) if line.startswith(row))
    wrapped = rows[first:]
    assert len(wrapped) > 1, shown
    assert all(len(row) <= COLUMNS for row in wrapped), wrapped
    assert all(row.startswith("  ") and not row.startswith("   ") for row in wrapped[1:]), wrapped
    assert " ".join(row.strip() for row in wrapped) == line, wrapped


@pytest.mark.skipif(not hasattr(os, "openpty"), reason="needs a pseudo-terminal")
def test_an_error_line_wraps_at_spaces_on_a_terminal(demo: Path) -> None:
    code, shown = stderr_on_terminal("show", "2026-09-02-00", "-w", str(demo), cwd=demo)
    assert code == 1
    assert_wrapped(shown, AMBIGUOUS)


@pytest.mark.skipif(not hasattr(os, "openpty"), reason="needs a pseudo-terminal")
def test_a_usage_error_wraps_at_spaces_on_a_terminal(demo: Path) -> None:
    code, shown = stderr_on_terminal("status", "--sort", "nope", "-w", str(demo), cwd=demo)
    assert code == 2
    assert shown.startswith("usage: lesson-credit status")
    assert_wrapped(shown, BAD_CHOICE)


@pytest.mark.skipif(not hasattr(os, "openpty"), reason="needs a pseudo-terminal")
def test_with_json_an_error_stays_one_line_on_a_terminal(demo: Path) -> None:
    """--json is read by a program: its error line is never wrapped."""
    code, shown = stderr_on_terminal("show", "2026-09-02-00", "--json", "-w", str(demo), cwd=demo)
    assert (code, shown) == (1, AMBIGUOUS + "\n")


def test_through_a_pipe_an_error_stays_one_line_as_before(demo: Path) -> None:
    """A hook's log or a pipe, $COLUMNS set or not: the one line, byte for byte."""
    for env in ({}, {"COLUMNS": str(COLUMNS)}):
        done = run_process("show", "2026-09-02-00", "-w", str(demo), cwd=demo, env=env)
        assert (done.returncode, done.stderr) == (1, AMBIGUOUS + "\n")
        done = run_process("status", "--sort", "nope", "-w", str(demo), cwd=demo, env=env)
        assert done.returncode == 2 and done.stderr.endswith("\n" + BAD_CHOICE + "\n"), done.stderr


# a torn last line of the log (a crash mid-append): every command warns of it, a line of 115 characters
TORN = (
    "warning: sessions.jsonl line 398: truncated last line (crash mid-append?): not valid JSON: "
    "Input data was truncated"
)


@pytest.fixture(scope="module")
def torn(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The demo with its log's last line cut short (398 lines: 397 whole, then the torn one)."""
    root = copy_demo(tmp_path_factory.mktemp("torn"))
    log = root / "state" / "lesson-thompson" / "sessions.jsonl"
    assert len(log.read_text(encoding="utf-8").splitlines()) == 397
    with log.open("a", encoding="utf-8") as out:
        out.write('{"type": "session", "session_id": "torn-one", "timest')
    return root


@pytest.mark.skipif(not hasattr(os, "openpty"), reason="needs a pseudo-terminal")
def test_a_warning_line_wraps_at_spaces_on_a_terminal(torn: Path) -> None:
    """The warning's end fell off an 80-column terminal ("Input data was trunc" / "ated" on the next row)."""
    code, shown = stderr_on_terminal("status", "-w", str(torn), cwd=torn)
    assert code == 0
    assert_wrapped(shown, TORN)


def test_through_a_pipe_a_warning_stays_one_line(torn: Path) -> None:
    for env in ({}, {"COLUMNS": str(COLUMNS)}):
        done = run_process("status", "-w", str(torn), cwd=torn, env=env)
        assert (done.returncode, done.stderr) == (0, TORN + "\n")
