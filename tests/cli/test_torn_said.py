"""A torn last line of the log (no newline, not an event: a writer killed mid-write, or a program appending without
our lock that finishes its line later) is moved to `sessions.jsonl.torn` by the next writer. That writer said
nothing, and nothing said the file was there: a program's event finished after the cut was lost without a word.
The writer now says it, and `lint` finds the file while it holds lines."""

from __future__ import annotations

import json
from pathlib import Path

from tests.support.cli_run import run_cli
from tests.support.engine_helpers import BASIC_JOURNAL, BASIC_LESSONS, LOG_REL, make_workspace, session

HALF = b'{"type": "grade", "session_id": "s1", "base_rew'  # 47 bytes, no newline


def test_a_torn_line_set_aside_is_said_by_the_writer_and_by_lint(tmp_path: Path) -> None:
    root = make_workspace(
        tmp_path, BASIC_LESSONS, events=[session("s1", 0.8, {"tools/git.md": 1.0})], journals={"j.txt": BASIC_JOURNAL}
    )
    with open(root / LOG_REL, "ab") as handle:
        handle.write(HALF)
    code, _, err = run_cli("grade", "s1", "0.4", "-w", str(root))
    assert code == 0, err
    torn = root / (str(LOG_REL) + ".torn")
    assert torn.read_bytes() == HALF + b"\n"
    assert "a torn last line of the log (47 bytes, no event) was moved to sessions.jsonl.torn" in err, err
    code, out, _ = run_cli("lint", "-w", str(root), "--no-pager")
    assert "torn-lines" in out and "1 torn line (48 bytes) set aside in" in out, out
    torn.unlink()
    code, out, _ = run_cli("lint", "-w", str(root), "--no-pager")
    assert "torn-lines" not in out, out


def test_a_tail_of_blanks_is_no_torn_line(tmp_path: Path) -> None:
    """Spaces or a carriage return after the last newline are no event begun: they were moved to `.torn` and said as
    "a torn last line (1 bytes)", and lint kept finding the file. They are cut now, without a word."""
    root = make_workspace(
        tmp_path, BASIC_LESSONS, events=[session("s1", 0.8, {"tools/git.md": 1.0})], journals={"j.txt": BASIC_JOURNAL}
    )
    with open(root / LOG_REL, "ab") as handle:
        handle.write(b"  \r")
    code, _, err = run_cli("grade", "s1", "0.4", "-w", str(root))
    assert code == 0 and "torn" not in err, err
    assert not (root / (str(LOG_REL) + ".torn")).exists()
    last = (root / LOG_REL).read_bytes().splitlines()[-1]
    assert json.loads(last)["type"] == "grade"  # right after the newline the blanks followed
    code, out, _ = run_cli("lint", "-w", str(root), "--no-pager")
    assert "torn-lines" not in out and "unreadable" not in out, out
