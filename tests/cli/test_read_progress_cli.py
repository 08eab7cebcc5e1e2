"""On a terminal, a long read says how far it has come on one stderr line, wiped before the command
prints: the first read of a million sessions is 15-25 s of silence otherwise. Never on a pipe."""

from __future__ import annotations

import functools
import io
import json
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import pytest

from lesson_credit.cli import common
from lesson_credit.cli.common import ProgressLine
from lesson_credit.cli.main import main
from lesson_credit.core.log.store import EventLog
from lesson_credit.core.reader import ReadProgress
from tests.support import derived_cache
from tests.support.derived_cache import DB_NAME
from tests.support.engine_helpers import BASIC_LESSONS, make_workspace, session


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


def test_a_command_with_stderr_closed_still_works(tmp_path: Path) -> None:
    """`2>&-` (a hook silencing the command) makes sys.stderr None: asking it whether it is a terminal
    failed every command that opens a workspace, with no message (exit 1)."""
    root = _workspace(tmp_path)
    out = io.StringIO()
    with redirect_stdout(out), redirect_stderr(None):
        assert main(["status", "--json", "--workspace", str(root)]) == 0
    assert json.loads(out.getvalue())["sessions"] == 60


def test_the_line_fits_the_terminal_so_wiping_it_wipes_it_all() -> None:
    """A line wider than the terminal wraps: `\\r` goes back to the start of its last row only, so each
    redraw added a row and the wipe left the others on screen. Cut to the width less one cell."""
    now = [5.0]
    out = Terminal()
    line = ProgressLine(out, clock=lambda: now[0], width=lambda: 30)
    line(ReadProgress("reading", 1, 4, True, 0.0))
    drawn = out.getvalue()
    # "lesson-credit: reading the log: 25% of 4 bytes" cut to 29 cells
    assert drawn == "\r" + "lesson-credit: reading the lo" + "\x1b[K"


def test_a_new_stage_is_shown_at_once() -> None:
    """The cache is written right after the last chunk is read: held back by the rate limit, the
    line said "reading the log: 99%" through the whole save."""
    now = [5.0]
    out = Terminal()
    line = ProgressLine(out, clock=lambda: now[0], width=lambda: 200)
    line(ReadProgress("reading", 99, 100, True, 0.0))
    now[0] = 5.01
    line(ReadProgress("reading", 100, 100, True, 0.0))  # within 0.25 s: not drawn
    line(ReadProgress("caching", 0, 0, True, 0.0))  # a new stage: drawn
    assert out.getvalue() == (
        "\rlesson-credit: reading the log: 99% of 100 bytes\x1b[K\rlesson-credit: saving the parsed-log cache\x1b[K"
    )


def test_a_terminal_that_fails_ends_the_line_not_the_read() -> None:
    """A terminal gone (EIO, a closed stream) fails the write: the read goes on, without a line."""

    class Gone(Terminal):
        def write(self, text: str) -> int:
            raise OSError(5, "Input/output error")

    line = ProgressLine(Gone(), clock=lambda: 5.0, width=lambda: 80)
    line(ReadProgress("reading", 1, 4, True, 0.0))
    line(ReadProgress("caching", 0, 0, True, 0.0))
    line(None)  # no exception


def test_with_stderr_closed_no_message_lands_in_the_json(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """With stderr closed, `print(..., file=sys.stderr)` writes to stdout (print's file=None): the
    note that a damaged cache is rebuilt came out ahead of `--json`'s document, and a hook reading it
    got no JSON. What goes to stderr now goes nowhere, as `2>&-` asked."""
    monkeypatch.setattr("lesson_credit.core.log.cache.MIN_NEW_BYTES", 0)  # the parsed-log cache on a small log
    root = _workspace(tmp_path)
    assert main(["status", "--workspace", str(root)]) == 0  # writes the cache
    db = root / "state" / "lesson-thompson" / ".cache" / DB_NAME
    data = bytearray(derived_cache.meta(db)["head"])
    data[-1] ^= 0xFF  # damaged: a note on stderr, and the log read again
    derived_cache.put_meta(db, "head", bytes(data))
    out = io.StringIO()
    with redirect_stdout(out), redirect_stderr(None):
        assert main(["status", "--json", "--workspace", str(root)]) == 0
    assert json.loads(out.getvalue())["sessions"] == 60
