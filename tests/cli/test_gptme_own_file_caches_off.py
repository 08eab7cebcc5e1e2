"""The workspace's own bandit-state.json with no copy of what we wrote (`.cache` deleted, or leading out of the
workspace: the caches off for good), saved by gptme's bandit more than once. The numbers of each test are worked
out by hand in its comments (the workspace: tests/support/gptme_timed.py)."""

from __future__ import annotations

import json
import shutil
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from tests.support.cli_run import run_cli
from tests.support.engine_helpers import LOG_REL, STATE_REL
from tests.support.gptme_timed import gptme_saved, rows, timed_workspace

GIT, QUOTE, OTHER = "tools/git.md", "tools/quote.md", "tools/other.md"
STAMP = "lesson_credit_written"  # our stamp: gptme's save drops it
# git: s1 w 1 +0.8/+0.2, s2 w 0.3 +0.12/+0.88 over Beta(1, 1); quote: s1 w 0.65 +0.52/+0.48 (see `timed_workspace`)
LOGGED = {GIT: (1.92, 2.08, 2), QUOTE: (1.52, 1.48, 1)}


def ok(*argv: str) -> str:
    code, _, err = run_cli(*argv)
    assert code == 0, err
    return err


def near(numbers: Mapping[str, tuple[float, ...]]) -> dict[str, Any]:
    return {key: pytest.approx(value) for key, value in numbers.items()}


def state(root: Path) -> dict[str, Any]:
    parsed: dict[str, Any] = json.loads((root / STATE_REL).read_text())
    return parsed


def gptme_saves(root: Path, added: dict[str, tuple[float, float, int, int]], sessions: int) -> None:
    """gptme's bandit's `sessions` on the own file as we last wrote it (see `gptme_saved`)."""
    assert STAMP in state(root)  # (ours as we wrote it, before)
    (root / STATE_REL).write_text(gptme_saved(state(root), added, sessions))


def record(root: Path, session_id: str, *lessons: str) -> str:
    argv = ("record", "--workspace", str(root), "--session-id", session_id, "--journal", str(root / "j.txt"))
    return ok(*argv, "--lessons", *lessons, "--reward", "0.5")


@pytest.fixture
def caches_off(tmp_path: Path) -> Path:
    """The timed workspace (s1, s2 graded: 2 sessions) with its `.cache` a link out of the workspace: no cache is
    read or written through it, so no copy of what we write is ever kept."""
    root = timed_workspace(tmp_path)
    cache = root / STATE_REL.parent / ".cache"
    shutil.rmtree(cache)
    (tmp_path / "elsewhere").mkdir()
    cache.symlink_to(tmp_path / "elsewhere")
    return root


def test_gptmes_arm_saved_a_second_time_with_the_caches_off_is_logged_once(caches_off: Path) -> None:
    """gptme's bandit adds tools/other.md at Beta(5, 2) n 5 (four rewarded of five); `record s3` logs it and writes
    the file from the log (other.md Beta(5, 2) n 5: its only evidence, that increments event). gptme saves that
    file again, other.md +1/+0, one rewarded selection. With no copy, other.md was 'not the log's' and the file
    was kept from then on (a warning at every write, gptme reading stale numbers). Now the base of other.md is
    what the write put there, the log's numbers after its last increments (nothing has named it since): +1/+0 n 1
    is logged, once: Beta(6, 2) n 6, and the file follows the log again."""
    gptme_saves(caches_off, {OTHER: (4.0, 1.0, 5, 4)}, sessions=5)
    assert "logged as an increments event" in record(caches_off, "s3")
    gptme_saves(caches_off, {OTHER: (1.0, 0.0, 1, 1)}, sessions=1)
    err = record(caches_off, "s4")
    assert "left as it is" not in err and "increments to 1 arm (up to 1 selection" in err, err
    expected = {**LOGGED, OTHER: (6.0, 2.0, 6)}
    assert rows(caches_off) == near(expected)
    assert STAMP in state(caches_off) and state(caches_off)["arms"][OTHER]["total_rewards"] == 5  # (4 + 1)
    log = (caches_off / LOG_REL).read_bytes()
    assert "another tool" not in ok("grade", "s4", "0.5", "--workspace", str(caches_off))  # nothing more to log
    assert (caches_off / LOG_REL).read_bytes().count(b"gptme-bandit") == log.count(b"gptme-bandit") == 2
    assert rows(caches_off) == near(expected)


def test_gptmes_arm_moved_by_another_import_since_is_never_undercounted(caches_off: Path, tmp_path: Path) -> None:
    """As above, but between our write of other.md Beta(5, 2) n 5 and gptme's second save of that file, another
    file's import logged other.md at +1/+0 n 1 (an export of ours elsewhere, gptme there adding a rewarded
    selection): the log says Beta(6, 2) n 6. The file gptme saved, from what it had loaded before that import,
    adds two rewarded selections: Beta(7, 2) n 7. Over the log's numbers now only +1/+0 n 1 of gptme's two would
    be logged (one of its sessions lost); its base is what was written before that import, Beta(5, 2) n 5. The
    file cannot be told to have been written before or after that import: it is kept (one warning) and nothing
    is logged for it, never a part of gptme's update lost or counted twice."""
    gptme_saves(caches_off, {OTHER: (4.0, 1.0, 5, 4)}, sessions=5)
    record(caches_off, "s3")
    held = state(caches_off)  # gptme's bandit loads the file (other.md Beta(5, 2) n 5) ...
    elsewhere = tmp_path / "agent" / "bandit-state.json"
    elsewhere.parent.mkdir()
    ok("export-gptme", "--workspace", str(caches_off), str(elsewhere))
    elsewhere.write_text(gptme_saved(json.loads(elsewhere.read_text()), {OTHER: (1.0, 0.0, 1, 1)}, 1))
    ok("import-gptme", "--workspace", str(caches_off), str(elsewhere))  # other.md +1/+0 n 1: Beta(6, 2) n 6
    assert rows(caches_off)[OTHER] == pytest.approx((6.0, 2.0, 6))
    (caches_off / STATE_REL).write_text(gptme_saved(held, {OTHER: (2.0, 0.0, 2, 2)}, 2))  # ... and saves it
    log = (caches_off / LOG_REL).read_bytes()
    before = (caches_off / STATE_REL).read_bytes()
    err = ok("status", "--workspace", str(caches_off))
    assert "left as it is" in err and OTHER in err, err
    assert (caches_off / LOG_REL).read_bytes() == log and (caches_off / STATE_REL).read_bytes() == before
    assert rows(caches_off) == near({**LOGGED, OTHER: (6.0, 2.0, 6)})


def test_gptmes_session_count_on_the_own_file_with_no_copy_is_exact_after_a_record(caches_off: Path) -> None:
    """Our file counts 2 sessions (s1, s2). gptme's bandit counts 5 of its own there (7), and `record s3` (graded)
    logs them: they were measured over the log's count with s3 in it (3), so 4 were logged, one short: the file
    then said 2 + 1 + 4 = 7, where 2 + 1 + 5 = 8 sessions happened. Now they are measured over the count before
    s3 (2, what the file was written from): 5 are logged, and the file says 8. gptme's next session there (9) is
    logged over the 8 written: 1, and after `record s4` the file says 4 graded + 6 of gptme's = 10."""
    gptme_saves(caches_off, {OTHER: (4.0, 1.0, 5, 4)}, sessions=5)
    record(caches_off, "s3")
    assert state(caches_off)["total_sessions"] == 8
    gptme_saves(caches_off, {OTHER: (1.0, 0.0, 1, 1)}, sessions=1)
    record(caches_off, "s4")
    assert state(caches_off)["total_sessions"] == 10
    record(caches_off, "s5")  # (the file ours: 5 graded + 6 = 11, the log's last line a session)
    gptme_saves(caches_off, {}, sessions=2)  # 13: two sessions of gptme's moving no arm
    record(caches_off, "s6")  # over the 11 before s6: 2 of gptme's, 6 graded + 8 = 14
    assert state(caches_off)["total_sessions"] == 14
