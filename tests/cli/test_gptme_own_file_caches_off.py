"""The workspace's own bandit-state.json with no copy of what we wrote (`.cache` deleted, or leading out of the
workspace: the caches off for good), saved by gptme's bandit more than once; and kept at every write for an arm
that cannot be told apart (the verdict kept, not made again at every command). The numbers of each test are worked
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
def timed(tmp_path: Path) -> Path:
    """s1 and s2 with their times, git Beta(1.92, 2.08) n 2 (by hand: tests/support/gptme_timed.py)."""
    return timed_workspace(tmp_path)


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


@pytest.fixture
def checks(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The files the arm-by-arm check of an earlier copy ran on, one entry per run (by the files' `created`)."""
    from lesson_credit.core.workspace.earlier_copies import EarlierCopies

    ran: list[str] = []
    check = EarlierCopies._earlier_copy

    def counted(self: EarlierCopies, path: Path, existing: dict[str, Any], report: Any) -> Any:
        ran.append(str(existing.get("created")))
        return check(self, path, existing, report)

    monkeypatch.setattr(EarlierCopies, "_earlier_copy", counted)
    return ran


def kept_workspace(root: Path) -> bytes:
    """gptme's bandit updated our git arm (+1/+0, one selection, restamped) and `.cache` is deleted: what it added
    cannot be told from the log's Beta(1.92, 2.08) n 2 (the file is kept at every write). The file's bytes."""
    gptme_saves(root, {GIT: (1.0, 0.0, 1, 1)}, sessions=1)
    shutil.rmtree(root / STATE_REL.parent / ".cache")
    return (root / STATE_REL).read_bytes()


def test_a_kept_file_is_checked_once_per_change_of_it_or_of_its_arms_evidence(timed: Path, checks: list[str]) -> None:
    """The file kept for git: every `record` and `status` ran the arm-by-arm check over the whole log again (at
    100k sessions 0.1 s of each command). The verdict is kept for the file's bytes and the log it was made on:
    sessions and grades that do not name git since cannot change it (the check ran 5 times here, now once). A
    session of git since, gptme's next save, or the log edited before it: checked again. Always kept, one
    warning each time, the log's numbers as they are."""
    before = kept_workspace(timed)
    assert "left as it is" in ok("status", "--workspace", str(timed))
    assert "left as it is" in record(timed, "s3", QUOTE)  # (quote: not git)
    for argv in (("status",), ("grade", "s3", "0.7"), ("status",)):
        assert "left as it is" in ok(*argv, "--workspace", str(timed))
    assert len(checks) == 1, checks
    assert "left as it is" in record(timed, "s4", GIT)  # git's evidence moved: checked again
    assert len(checks) == 2 and (timed / STATE_REL).read_bytes() == before
    gptme_saves_again = json.loads(before)
    gptme_saves_again["total_sessions"] += 1  # gptme counted one more session there: another file
    (timed / STATE_REL).write_text(json.dumps(gptme_saves_again))
    assert "left as it is" in ok("status", "--workspace", str(timed))
    assert len(checks) == 3
    log = (timed / LOG_REL).read_bytes()
    (timed / LOG_REL).write_bytes(log.replace(b'"base_reward": 0.8', b'"base_reward": 0.9', 1))  # s1 edited
    assert "left as it is" in ok("status", "--workspace", str(timed))
    assert len(checks) == 4
    assert "left as it is" in ok("status", "--workspace", str(timed))
    assert len(checks) == 4


def test_a_damaged_verdict_is_not_used(timed: Path, checks: list[str]) -> None:
    """The verdict kept is a cache: one damaged (or of another version) is checked again, never trusted."""
    kept_workspace(timed)
    assert "left as it is" in ok("status", "--workspace", str(timed))
    cache = timed / STATE_REL.parent / ".cache"
    verdicts = [path for path in cache.rglob("*kept*") if path.is_file()]
    assert len(verdicts) == 1, list(cache.rglob("*"))
    verdicts[0].write_bytes(verdicts[0].read_bytes()[:-3] + b"xyz")
    assert "left as it is" in ok("status", "--workspace", str(timed))
    assert len(checks) == 2
    assert "left as it is" in ok("status", "--workspace", str(timed))
    assert len(checks) == 2


def test_a_kept_verdict_made_under_other_settings_is_not_used(timed: Path, checks: list[str]) -> None:
    """gptme's bandit adds tools/other.md (+4/+1, five selections) to the file we wrote, `.cache` is deleted, and the
    floor is set to 0.5: git's s2 (salience 0) then weighs 0.5, +0.2/+0.8, so the log holds git at Beta(2, 2) right
    after s2, not the file's Beta(1.92, 2.08) (floor 0.3: +0.12/+0.88): git 'was changed since', the file kept, the
    verdict kept (a second status checks nothing). The floor set back to 0.3, git is as we wrote it again: the
    verdict made under 0.5 does not hold, and gptme's other.md is logged from Beta(1, 1): Beta(5, 2) n 5."""
    gptme_saves(timed, {OTHER: (4.0, 1.0, 5, 4)}, sessions=5)
    shutil.rmtree(timed / STATE_REL.parent / ".cache")
    config = timed / STATE_REL.parent / "config.toml"
    config.write_text("floor = 0.5\n")
    for _ in range(2):
        err = ok("status", "--workspace", str(timed))
        assert "left as it is" in err and f"{GIT} was changed since lesson-credit wrote it" in err, err
    assert len(checks) == 1
    config.write_text("floor = 0.3\n")
    err = ok("status", "--workspace", str(timed))
    assert "left as it is" not in err and "increments to 1 arm (up to 5 selections" in err, err
    assert rows(timed) == near({**LOGGED, OTHER: (5.0, 2.0, 5)})


def test_a_kept_verdict_does_not_hold_after_a_grade_of_a_session_of_its_arm(timed: Path, checks: list[str]) -> None:
    """As above, the floor at 0.5, then s1 graded 0.52 / 0.75 (quote's salience 0.5 weighs 0.75 there: +0.52/+0.48,
    quote as we wrote it again; git's s1 w 1: +0.6933/+0.3067, with s2's +0.2/+0.8 Beta(1.8933, 2.1067), not the
    file's): git was changed since, the verdict kept for git. s2, a session of git logged before that verdict, then
    graded (0.92 - 0.6933) / 0.5 = 0.4533 (w 0.5: +0.2267/+0.7733) puts git back at Beta(1.92, 2.08): the verdict
    does not hold, the file is as we wrote it, and gptme's other.md is logged (Beta(5, 2) n 5)."""
    gptme_saves(timed, {OTHER: (4.0, 1.0, 5, 4)}, sessions=5)
    shutil.rmtree(timed / STATE_REL.parent / ".cache")
    (timed / STATE_REL.parent / "config.toml").write_text("floor = 0.5\n")
    err = ok("grade", "s1", repr(0.52 / 0.75), "--workspace", str(timed))
    assert "left as it is" in err and f"{GIT} was changed since lesson-credit wrote it" in err, err
    assert "left as it is" in ok("status", "--workspace", str(timed))
    assert len(checks) == 1
    err = ok("grade", "s2", repr((0.92 - 0.52 / 0.75) / 0.5), "--workspace", str(timed))
    assert "left as it is" not in err and "increments to 1 arm (up to 5 selections" in err, err
    assert rows(timed) == near({GIT: (1.92, 2.08, 2), QUOTE: (1.52, 1.48, 1), OTHER: (5.0, 2.0, 5)})


def test_a_kept_verdict_made_in_a_workspace_moved_since_is_not_used(timed: Path, tmp_path: Path) -> None:
    """gptme's bandit adds other.md (+4/+1), `record s3` logs it from the workspace's own file and writes other.md
    at Beta(5, 2) n 5; gptme saves that file again (+1/+0) and `.cache` is deleted. Moved to another folder, the
    file is no longer where that increments event was logged from: other.md, its only evidence that event, 'is not
    the log's', the file is kept and that verdict kept. Moved back, the file is where the event was logged from
    again: the verdict (made for another path of the file) does not hold, and gptme's second save is logged once,
    Beta(6, 2) n 6, as in the first test."""
    gptme_saves(timed, {OTHER: (4.0, 1.0, 5, 4)}, sessions=5)
    record(timed, "s3")
    gptme_saves(timed, {OTHER: (1.0, 0.0, 1, 1)}, sessions=1)
    shutil.rmtree(timed / STATE_REL.parent / ".cache")
    moved = tmp_path / "moved"
    timed.rename(moved)
    for _ in range(2):
        err = ok("status", "--workspace", str(moved))
        assert "left as it is" in err and f"{OTHER} is not the log's" in err, err
    assert [path.name for path in (moved / STATE_REL.parent / ".cache").glob("*kept*")] == ["bandit-state-kept"]
    moved.rename(timed)
    err = ok("status", "--workspace", str(timed))
    assert "left as it is" not in err and "increments to 1 arm (up to 1 selection" in err, err
    assert rows(timed) == near({**LOGGED, OTHER: (6.0, 2.0, 6)})
