"""`select --context`: the context is capped like a journal, so a device or an endless pipe
is refused with one line instead of exhausting memory; ordinary files and stdin still work."""

from __future__ import annotations

import os
from pathlib import Path

from tests.robustness.hostile_helpers import lesson, log_bytes, make_ws
from tests.support.cli_run import run_process


def test_a_device_as_context_is_refused_with_one_line(tmp_path: Path) -> None:
    ws = make_ws(tmp_path / "ws")
    result = run_process("select", "--context", "/dev/zero", "--session-id", "s1", cwd=ws)
    assert result.returncode == 1, result.stderr
    assert result.stderr.count("\n") == 1 and "/dev/zero" in result.stderr
    assert log_bytes(ws) == b""  # nothing logged


def test_a_context_file_and_stdin_still_select(tmp_path: Path) -> None:
    ws = make_ws(tmp_path / "ws", {"a.md": lesson(["alpha"]), "b.md": lesson(["beta"])})
    (ws / "task.txt").write_text("fix the alpha module")
    result = run_process("select", "--context", "task.txt", "--session-id", "s1", "--seed", "1", cwd=ws)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["a.md"]  # only a.md's keyword occurs in the context
    assert b'"session_id":"s1"' in log_bytes(ws).replace(b" ", b"")


def test_an_empty_context_says_so_from_a_file_a_fifo_with_no_writer_and_stdin(tmp_path: Path) -> None:
    """An empty context matches no lesson: `0 of 0` alone hid a hook's empty task (an unset variable, a pipe no one
    wrote to). A file, a FIFO with no writer and blank stdin each give the same warning line, once."""
    ws = make_ws(tmp_path / "ws", {"a.md": lesson(["alpha"])})
    (ws / "empty.txt").write_text("")
    os.mkfifo(ws / "fifo")  # no writer: reading it ends at once
    said = []
    for name, stdin in (("empty.txt", None), ("fifo", None), ("-", " \n")):
        result = run_process("select", "--context", name, "--dry-run", cwd=ws, stdin=stdin)
        assert result.returncode == 0 and result.stdout == "", result.stderr
        lines = [line for line in result.stderr.splitlines() if "is empty" in line]
        assert len(lines) == 1 and "0 of 0 matching lessons" in result.stderr, result.stderr
        said.append(lines[0].replace(name, "NAME").replace("on stdin", "NAME"))
    assert said == ["# warning: the context NAME is empty: no lesson's keywords can match it"] * 3
