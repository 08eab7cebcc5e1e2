"""A session whose grade is taken back stays counted in bandit-state.json's `total_sessions` (docs/format.md §7):
gptme's bandit counted it when it was graded and never counts back. Before, the count was the sessions graded
now, floored at the file's number: a retraction left the floor at the old count, and the next session recorded
was swallowed by it (S1, S1 retracted, S2: 1, not 2), until S1 was graded again."""

from __future__ import annotations

import datetime as dt
import itertools
import json
import shutil
from pathlib import Path
from typing import Any

from tests.support.cli_run import run_cli
from tests.support.engine_helpers import BASIC_JOURNAL, BASIC_LESSONS, LOG_REL, STATE_REL, make_workspace

GIT = "tools/git.md"
MINUTES = itertools.count()


def ok(*argv: str) -> None:
    """A command that must succeed, each a minute after the last (a session's time names one session: the
    file's arms are told from the log by it when no copy is left)."""
    now = dt.datetime(2026, 12, 7, tzinfo=dt.UTC) + dt.timedelta(minutes=next(MINUTES))
    code, _, err = run_cli(*argv, clock=lambda: now)
    assert code == 0, err


def total(root: Path) -> Any:
    return json.loads((root / STATE_REL).read_text())["total_sessions"]


def record(root: Path, session_id: str, *reward: str) -> None:
    ok("record", "-w", str(root), "--session-id", session_id, "--journal", "j.txt", "--lessons", GIT,
       *(("--reward", *reward) if reward else ()))  # fmt: skip


def workspace(tmp_path: Path) -> Path:
    return make_workspace(tmp_path, BASIC_LESSONS, journals={"j.txt": BASIC_JOURNAL})


def test_a_retracted_session_stays_counted_and_the_next_one_adds_to_it(tmp_path: Path) -> None:
    root = workspace(tmp_path)
    record(root, "S1", "0.8")
    assert total(root) == 1
    retraction = {"type": "grade", "session_id": "S1", "base_reward": None, "grader": "heuristic",
                  "timestamp": "2026-12-07T02:10:00Z"}  # fmt: skip
    with (root / LOG_REL).open("a") as log:  # appended by hand: the shape docs/format.md §5.3 gives
        log.write(json.dumps(retraction) + "\n")
    ok("status", "-w", str(root))
    assert total(root) == 1  # S1, taken back, still counted
    record(root, "S2", "1.0")
    assert total(root) == 2  # S1 and S2 (was 1)
    record(root, "S3", "1.0")
    assert total(root) == 3  # (was 2)
    ok("grade", "S1", "0.5", "-w", str(root))
    assert total(root) == 3  # S1 graded again is still one session
    (root / STATE_REL).unlink()  # derived: written again from the log by the next write, the same count
    record(root, "S4")  # pending: adds nothing
    assert total(root) == 3


def test_undoing_a_first_grade_keeps_the_session_counted(tmp_path: Path) -> None:
    """An undo of a session's only grade is a retraction (the record was pending): the session stays counted."""
    root = workspace(tmp_path)
    record(root, "S1")  # pending: not counted yet
    assert total(root) == 0
    ok("grade", "S1", "0.9", "-w", str(root))
    assert total(root) == 1
    ok("undo", "S1", "-w", str(root))
    assert json.loads((root / LOG_REL).read_text().splitlines()[-1])["base_reward"] is None  # a retraction
    assert total(root) == 1
    record(root, "S2", "0.6")
    assert total(root) == 2  # (was 1)
    (root / STATE_REL).unlink()
    record(root, "S3")  # pending: adds nothing
    assert total(root) == 2


def test_with_no_copy_left_a_file_written_after_an_undo_takes_gptmes_count_only(tmp_path: Path) -> None:
    """The caches deleted: the file's numbers are told from the log as it was when the file was written, its
    total_sessions too (S1, undone, and S2: 2). Told as the sessions graded then (1), the file was taken for one
    changed since and left as it was, and gptme's session was lost once the file was written again."""
    root = workspace(tmp_path)
    record(root, "S1")
    ok("grade", "S1", "0.9", "-w", str(root))
    ok("undo", "S1", "-w", str(root))
    record(root, "S2", "0.6")
    shutil.rmtree(root / STATE_REL.parent / ".cache")  # no copy of the file we wrote left
    state = json.loads((root / STATE_REL).read_text())
    saved = {key: state[key] for key in ("arms", "total_sessions", "created", "last_updated")}
    saved["total_sessions"] += 1  # gptme's bandit: a session that moved no arm, saved with its own keys
    (root / STATE_REL).write_text(json.dumps(saved))
    record(root, "S3", "0.5")
    assert total(root) == 4  # S1, S2, gptme's and S3 (was 2)
    (root / STATE_REL).unlink()
    record(root, "S4")  # pending
    assert total(root) == 4  # gptme's session logged: the log counts it (was 2)
