"""On a terminal, a long read says how far it has come on one stderr line, wiped before the command
prints: the first read of a million sessions is 15-25 s of silence otherwise. Never on a pipe."""

from __future__ import annotations

import functools
import io
import json
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import pytest
from engine_helpers import BASIC_LESSONS, make_workspace, session

from lesson_credit.cli import common
from lesson_credit.cli.common import ProgressLine
from lesson_credit.cli.main import main
from lesson_credit.core.log.store import EventLog
from lesson_credit.core.reader import ReadProgress


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_the_line_waits_a_second_is_rate_limited_and_is_wiped() -> None:
    now = [0.0]
    out = Terminal()
    line = ProgressLine(out, clock=lambda: now[0])
    step = functools.partial(ReadProgress, "reading", total=4 << 30, of_bytes=True, since=0.0)
    for t, done in ((0.5, 1 << 30), (1.0, 2 << 30), (1.1, 3 << 30), (1.3, 3 << 30)):
        now[0] = t
        line(step(done=done))
    line(None)
    # 0.5 s: too early; 1.0 s: 2 of 4 GB = 50%; 1.1 s: within 0.25 s of the last; 1.3 s: 3 of 4 = 75%
    assert out.getvalue() == (
        "\rlesson-credit: reading the log: 50% of 4.0 GB\x1b[K"
        "\rlesson-credit: reading the log: 75% of 4.0 GB\x1b[K"
        "\r\x1b[K"
    )
    line(None)  # nothing shown since: nothing to wipe
    assert out.getvalue().endswith("75% of 4.0 GB\x1b[K\r\x1b[K")


def _workspace(tmp_path: Path) -> Path:
    events = [session(f"s{i}", 0.5, {"tools/git.md": 0.5}) for i in range(60)]
    return make_workspace(tmp_path, BASIC_LESSONS, events=events)


def test_a_command_on_a_terminal_shows_the_read_and_wipes_it_before_its_output(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _workspace(tmp_path)
    monkeypatch.setattr(common, "PROGRESS_AFTER_S", 0.0)
    monkeypatch.setattr(common, "PROGRESS_EVERY_S", 0.0)
    monkeypatch.setattr(EventLog, "read_chunks", functools.partialmethod(EventLog.read_chunks, chunk_bytes=1024))
    out, err = io.StringIO(), Terminal()
    with redirect_stdout(out), redirect_stderr(err):
        assert main(["status", "--json", "--workspace", str(root)]) == 0
    said = err.getvalue()
    assert said.startswith("\rlesson-credit: reading the log: 0% of ") and said.count("reading the log") >= 5
    assert said.endswith("\r\x1b[K")  # wiped: the terminal's line is clean for what follows
    assert json.loads(out.getvalue())["sessions"] == 60


def test_nothing_is_said_on_a_pipe(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = _workspace(tmp_path)
    monkeypatch.setattr(common, "PROGRESS_AFTER_S", 0.0)
    monkeypatch.setattr(common, "PROGRESS_EVERY_S", 0.0)
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        assert main(["status", "--json", "--workspace", str(root)]) == 0
    assert err.getvalue() == ""
