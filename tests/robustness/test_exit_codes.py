"""Honest exit codes: a refused command changes nothing; a committed event is a success.

Also the upkeep that goes with writing derived files: their mode follows the umask, and temp
files an interrupted write left behind are cleaned up by the next write.
"""

from __future__ import annotations

import errno
import json
import os
import time
from pathlib import Path

import pytest

from lesson_credit.core.base.files import StoreError, atomic_write
from lesson_credit.core.log.store import EventLog
from tests.robustness.hostile_helpers import LOG_REL, lesson, log_bytes, make_ws
from tests.support.cli_run import run_cli, run_process
from tests.support.lock_holder import LockHolder

STATE_REL = LOG_REL.parent / "bandit-state.json"


@pytest.mark.parametrize("where", ["absolute", "dotdot", "symlink"])
def test_record_refuses_a_journal_outside_the_workspace(tmp_path: Path, where: str) -> None:
    ws = make_ws(tmp_path / "ws")
    secret = tmp_path / "secret.md"
    secret.write_text("alpha is the password")
    journal = {"absolute": str(secret), "dotdot": "../secret.md", "symlink": "link.md"}[where]
    (ws / "link.md").symlink_to(secret)
    done = run_process("record", "--session-id", "s1", "--journal", journal, "--lessons", "a.md", cwd=ws)
    assert done.returncode == 1 and done.stderr.count("\n") == 1, done.stderr
    assert "outside the workspace" in done.stderr and "--allow-outside" in done.stderr
    assert log_bytes(ws) == b""
    allowed = run_process(
        "record", "--session-id", "s1", "--journal", journal, "--lessons", "a.md", "--allow-outside", cwd=ws
    )
    assert allowed.returncode == 0, allowed.stderr
    assert b'"salience":1.0' in log_bytes(ws)


def test_a_committed_event_is_a_success_when_bandit_state_cannot_be_written(tmp_path: Path) -> None:
    ws = make_ws(tmp_path)
    (ws / "j.md").write_text("alpha")
    (ws / STATE_REL).mkdir(parents=True)  # bandit-state.json replaced by a directory
    done = run_process(
        "record", "--session-id", "s1", "--journal", "j.md", "--lessons", "a.md", "--reward", "0.8", cwd=ws
    )
    assert done.returncode == 0, done.stderr
    warning = [line for line in done.stderr.splitlines() if line.startswith("warning:")]
    assert len(warning) == 1 and "bandit-state.json" in warning[0] and "the event is logged" in warning[0]
    assert log_bytes(ws).count(b"\n") == 1
    graded = run_process("grade", "s1", "0.3", cwd=ws)
    assert graded.returncode == 0 and "bandit-state.json" in graded.stderr, graded.stderr
    assert log_bytes(ws).count(b'"type":"grade"') == 1
    (ws / STATE_REL).rmdir()
    regraded = run_process("grade", "s1", "0.4", cwd=ws)  # the next write puts the derived file right
    assert regraded.returncode == 0 and regraded.stderr == "", regraded.stderr
    # seed strategy, floor 0.3, salience 1 -> w = 1: alpha = 1 + 0.4, beta = 1 + 0.6
    arm = json.loads((ws / STATE_REL).read_text())["arms"]["a.md"]
    assert (arm["alpha"], arm["beta"], arm["total_selections"]) == (1.4, 1.6, 1)


def test_an_error_inside_the_locked_block_is_not_blamed_on_the_lock(tmp_path: Path) -> None:
    log = EventLog(tmp_path / "sessions.jsonl")
    with pytest.raises(OSError, match="inside") as caught, log.locked():
        raise OSError(errno.ENOSPC, "inside the block")
    assert not isinstance(caught.value, StoreError)
    with log.locked():  # and the lock was released
        pass


def test_loo_on_a_read_only_workspace_is_a_one_line_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ws = make_ws(tmp_path)

    def read_only(*args: object, **kwargs: object) -> tuple[int, str]:
        raise OSError(errno.EROFS, "Read-only file system")

    monkeypatch.setattr("tempfile.mkstemp", read_only)
    code, out, err = run_cli("loo", "--workspace", str(ws))
    assert code == 1 and out == ""
    *notices, error = err.splitlines()  # the caches the read could not write are set aside (warnings)
    assert error.startswith("lesson-credit: ") and "loo-results.json" in error
    assert all(line.startswith("warning: ") and "set aside" in line for line in notices)


def test_export_to_a_missing_folder_is_refused(tmp_path: Path) -> None:
    ws = make_ws(tmp_path)
    done = run_process("export-gptme", "out/", cwd=ws)
    assert done.returncode == 1 and "folder not found" in done.stderr, done.stderr
    assert not (ws / "out").exists()
    (ws / "out").mkdir()
    done = run_process("export-gptme", "out/", cwd=ws)
    assert done.returncode == 0 and (ws / "out" / "bandit-state.json").is_file()


def test_import_from_a_device_is_refused_not_read_forever(tmp_path: Path) -> None:
    ws = make_ws(tmp_path)
    done = run_process("import-gptme", "/dev/zero", cwd=ws)
    assert done.returncode == 1 and done.stderr.count("\n") == 1, done.stderr[-300:]
    assert "larger than 256 MB" in done.stderr
    assert log_bytes(ws) == b""


@pytest.mark.parametrize("umask", [0o022, 0o002, 0o077])
def test_derived_files_follow_the_umask(tmp_path: Path, umask: int) -> None:
    ws = make_ws(tmp_path)
    (ws / "state" / "lesson-thompson").mkdir(parents=True)  # (a folder of lessons alone keeps no caches)
    (ws / "j.md").write_text("alpha")
    done = run_process(
        "record",
        "--session-id",
        "s1",
        "--journal",
        "j.md",
        "--lessons",
        "a.md",
        "--reward",
        "0.5",
        cwd=ws,
        umask=umask,
    )
    assert done.returncode == 0, done.stderr
    for path in (ws / LOG_REL, ws / STATE_REL, ws / "state" / "lesson-thompson" / ".cache" / "lessons.msgpack"):
        assert path.stat().st_mode & 0o777 == 0o666 & ~umask, path


def test_stale_temp_files_of_ours_are_removed_by_the_next_write(tmp_path: Path) -> None:
    target = tmp_path / ".cache" / "log-index.msgpack"
    target.parent.mkdir()
    stale = target.parent / ".log-index.msgpack.k2j3h4.tmp"
    fresh = target.parent / ".log-index.msgpack.a1b2c3.tmp"  # another writer's, still being written
    foreign = target.parent / ".other.k2j3h4.tmp"
    for path in (stale, fresh, foreign):
        path.write_bytes(b"x" * 1000)
    an_hour_ago = time.time() - 3600
    os.utime(stale, (an_hour_ago, an_hour_ago))
    os.utime(foreign, (an_hour_ago, an_hour_ago))
    atomic_write(target, b"new")
    assert target.read_bytes() == b"new"
    assert not stale.exists() and fresh.exists() and foreign.exists()
    assert sorted(p.name for p in target.parent.iterdir()) == sorted([target.name, fresh.name, foreign.name])


def test_lesson_files_are_read_as_before(tmp_path: Path) -> None:
    """Guard for the helpers: a plain workspace records and reports without warnings."""
    ws = make_ws(tmp_path, {"a.md": lesson(["alpha", "beta"])})
    (ws / "j.md").write_text("alpha")
    done = run_process(
        "record", "--session-id", "s1", "--journal", "j.md", "--lessons", "a.md", "--reward", "1", cwd=ws
    )
    assert done.returncode == 0 and done.stderr == "", done.stderr


def test_a_lock_held_too_long_by_another_process_exits_75_naming_the_lock(tmp_path: Path) -> None:
    """docs/format.md: waiting too long for another writer's lock is a temporary failure of the store (75:
    retry later, nothing written), one line naming the lock file; $LESSON_CREDIT_LOCK_TIMEOUT sets
    the wait (0.2 s here, so the test does not wait 30 s)."""

    ws = make_ws(tmp_path / "ws")
    (ws / "j.md").write_text("alpha")
    assert run_process("record", "--session-id", "s1", "--journal", "j.md", "--lessons", "a.md", cwd=ws).returncode == 0
    before = log_bytes(ws)
    lock = ws / LOG_REL.parent / "sessions.jsonl.lock"
    with LockHolder(lock):  # another writer, holding the lock
        env = {"LESSON_CREDIT_LOCK_TIMEOUT": "0.2"}
        done = run_process("grade", "s1", "0.7", cwd=ws, env=env)
        assert done.returncode == 75, done.stderr
        assert done.stderr.count("\n") == 1 and str(lock) in done.stderr and "retry later" in done.stderr
        assert "Traceback" not in done.stderr and done.stdout == ""
        assert log_bytes(ws) == before  # nothing written
    retried = run_process("grade", "s1", "0.7", cwd=ws, env=env)
    assert retried.returncode == 0, retried.stderr
    assert log_bytes(ws).startswith(before) and b'"base_reward":0.7' in log_bytes(ws)[len(before) :]


@pytest.mark.parametrize("bad", ["soon", "-1", "nan", "1e9"])
def test_a_lock_timeout_that_is_no_number_of_seconds_is_refused(tmp_path: Path, bad: str) -> None:
    ws = make_ws(tmp_path / "ws")
    (ws / "j.md").write_text("alpha")
    done = run_process("record", "--session-id", "s1", "--journal", "j.md", "--lessons", "a.md", cwd=ws,
                       env={"LESSON_CREDIT_LOCK_TIMEOUT": bad})  # fmt: skip
    assert done.returncode == 1 and done.stderr.count("\n") == 1 and "LESSON_CREDIT_LOCK_TIMEOUT" in done.stderr
    assert log_bytes(ws) == b""


def test_settings_saved_while_bandit_state_cannot_be_written_say_so_not_that_an_event_is_logged(
    tmp_path: Path,
) -> None:
    """`replay --write` logs no event (it saves config.toml): its warning said "the event is logged"."""
    ws = make_ws(tmp_path)
    (ws / "j.md").write_text("alpha")
    assert run_process("record", "--session-id", "s1", "--journal", "j.md", "--lessons", "a.md", cwd=ws).returncode == 0
    before = log_bytes(ws)
    (ws / STATE_REL).unlink()
    (ws / STATE_REL).mkdir()  # bandit-state.json replaced by a directory
    done = run_process("replay", "--floor", "0.5", "--write", cwd=ws)
    assert done.returncode == 0, done.stderr
    warning = [line for line in done.stderr.splitlines() if line.startswith("warning:")]
    assert len(warning) == 1 and "bandit-state.json" in warning[0], done.stderr
    assert "event" not in warning[0] and "the settings are saved" in warning[0], warning[0]
    assert log_bytes(ws) == before and "floor = 0.5" in (ws / LOG_REL.parent / "config.toml").read_text()
