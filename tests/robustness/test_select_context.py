"""`select --context`: the context is capped like a journal, so a device or an endless pipe
is refused with one line instead of exhausting memory; ordinary files and stdin still work."""

from __future__ import annotations

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
