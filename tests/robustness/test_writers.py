"""Many writers, crashes and failing disks: the log never loses or double-counts an event."""

from __future__ import annotations

import errno
import json
import os
import random
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from lesson_credit.core.base.errors import WorkspaceError
from lesson_credit.core.log.store import EventLog, StoreError
from lesson_credit.core.workspace import Workspace
from tests.support.engine_helpers import row_of

REPO = Path(__file__).resolve().parents[2]

LESSON = """---
match:
  keywords: ["merge conflict", "pytest"]
---
# A lesson
"""


def _workspace(root: Path) -> Workspace:
    (root / "lessons" / "tools").mkdir(parents=True)
    (root / "lessons" / "tools" / "a.md").write_text(LESSON)
    (root / "lessons" / "tools" / "b.md").write_text(LESSON.replace("pytest", "rebase"))
    (root / "j.md").write_text("a merge conflict, then pytest")
    return Workspace(root)


WRITER = textwrap.dedent(
    """
    import sys
    sys.path.insert(0, {repo!r})
    from lesson_credit.core.workspace import Workspace
    ws = Workspace({root!r})
    name, count = sys.argv[1], int(sys.argv[2])
    for i in range(count):
        sid = f"{{name}}-{{i}}"
        ws.record(sid, {journal!r}, ["tools/a.md", "tools/b.md"], reward=None)
        ws.grade(sid, (i % 10) / 10, note=f"{{name}} {{i}}")
        with open({acks!r} + name, "a") as acks:
            acks.write(sid + "\\n")
    """
)


@pytest.mark.smoke
def test_parallel_writers_lose_nothing(tmp_path: Path) -> None:
    ws = _workspace(tmp_path)
    assert isinstance(ws.log, EventLog)  # the workspace's JSONL file
    script = WRITER.format(
        repo=str(REPO), root=str(tmp_path), journal=str(tmp_path / "j.md"), acks=str(tmp_path / "ack-")
    )
    per_writer, writers = 60, 4
    procs = [
        subprocess.Popen([sys.executable, "-c", script, f"w{n}", str(per_writer)], stderr=subprocess.PIPE)
        for n in range(writers)
    ]
    # A reader keeps opening bandit-state.json meanwhile: it must always be whole JSON.
    reads = 0
    while any(p.poll() is None for p in procs):
        try:
            json.loads((ws.state_path).read_text())
            reads += 1
        except FileNotFoundError:
            pass
    for p in procs:
        assert p.wait() == 0, p.stderr.read().decode() if p.stderr else ""
    lines = ws.log.path.read_bytes().splitlines()
    events = [json.loads(line) for line in lines]  # every line parses
    sessions = [e["session_id"] for e in events if e["type"] == "session"]
    grades = [e["session_id"] for e in events if e["type"] == "grade"]
    expected = {f"w{n}-{i}" for n in range(writers) for i in range(per_writer)}
    assert sorted(sessions) == sorted(expected)  # each exactly once
    assert sorted(grades) == sorted(expected)
    fresh = Workspace(tmp_path)
    assert fresh.log_problems() == []
    table = fresh.lesson_table()
    # Each session credits both lessons once: n = all sessions, none counted twice.
    assert row_of(table, "tools/a.md").n == writers * per_writer
    assert reads > 0


KILLED_WRITER = textwrap.dedent(
    """
    import sys
    sys.path.insert(0, {repo!r})
    from lesson_credit.core.workspace import Workspace
    ws = Workspace({root!r})
    start = int(sys.argv[1])
    for i in range(start, start + 100000):
        ws.grade("base", (i % 100) / 100, note="x" * (i % 300))
        with open({acks!r}, "a") as acks:
            acks.write(f"{{i}}\\n")
            acks.flush()
    """
)


def test_sigkill_mid_append_never_loses_a_completed_event(tmp_path: Path) -> None:
    ws = _workspace(tmp_path)
    ws.record("base", tmp_path / "j.md", ["tools/a.md"], reward=0.5)
    acks = tmp_path / "acks"
    script = KILLED_WRITER.format(repo=str(REPO), root=str(tmp_path), acks=str(acks))
    rng = random.Random(7)
    start = 0
    for _ in range(12):
        proc = subprocess.Popen([sys.executable, "-c", script, str(start)])
        # Wait until this writer has acknowledged an append (start-up time varies with load),
        # then kill it somewhere in the middle of its next appends.
        deadline = time.monotonic() + 60
        while not (acks.exists() and any(int(i) >= start for i in acks.read_text().split())):
            assert proc.poll() is None and time.monotonic() < deadline, "writer did not start appending"
            time.sleep(0.01)
        time.sleep(rng.random() * 0.05)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        start += 100000
        # The log still folds and every acknowledged grade is in it.
        reader = Workspace(tmp_path)
        bad = [p for p in reader.log_problems() if "truncated" not in p.reason]
        assert bad == []
        notes = {g.note for g in reader.grade_history("base")}
        acked = acks.read_text().split() if acks.exists() else []
        lengths = {len(n or "") for n in notes}
        for i in acked:
            assert int(i) % 300 in lengths
        # The next append works and starts on a fresh line.
        reader.grade("base", 0.25, note="after crash")
        after = Workspace(tmp_path)
        assert [p for p in after.log_problems() if "truncated" not in p.reason] == []
        assert after.grade_history("base")[-1].note == "after crash"
        assert after.session("base").base_reward == 0.25
    total_acked = len(acks.read_text().split())
    assert total_acked > 0
    # No completed grade was lost: the log has at least as many grades as were acknowledged.
    assert len(Workspace(tmp_path).grade_history("base")) >= total_acked + 12


def test_full_disk_refuses_and_leaves_log_unchanged(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ws = _workspace(tmp_path)
    assert isinstance(ws.log, EventLog)  # the workspace's JSONL file
    ws.record("s1", tmp_path / "j.md", ["tools/a.md"], reward=0.5)
    before = ws.log.path.read_bytes()
    state_before = ws.state_path.read_bytes()

    def full(fd: int, data: bytes) -> int:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr("lesson_credit.core.log.store.os.write", full)
    with pytest.raises(StoreError, match="no space left"):
        ws.grade("s1", 0.9)
    assert ws.log.path.read_bytes() == before
    assert ws.state_path.read_bytes() == state_before


def test_short_write_is_rolled_back(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ws = _workspace(tmp_path)
    assert isinstance(ws.log, EventLog)  # the workspace's JSONL file
    ws.record("s1", tmp_path / "j.md", ["tools/a.md"], reward=0.5)
    before = ws.log.path.read_bytes()
    real_write = os.write

    def short(fd: int, data: bytes) -> int:
        return real_write(fd, data[: len(data) // 2])

    monkeypatch.setattr("lesson_credit.core.log.store.os.write", short)
    with pytest.raises(StoreError, match="short write"):
        ws.grade("s1", 0.9)
    assert ws.log.path.read_bytes() == before


def test_unwritable_log_is_a_clear_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ws = _workspace(tmp_path)
    assert isinstance(ws.log, EventLog)  # the workspace's JSONL file
    ws.record("s1", tmp_path / "j.md", ["tools/a.md"], reward=0.5)
    before = ws.log.path.read_bytes()
    real_open = os.open

    def denied(path: str, flags: int, mode: int = 0o777) -> int:
        if str(path).endswith("sessions.jsonl"):
            raise PermissionError(errno.EACCES, "Permission denied")
        return real_open(path, flags, mode)

    monkeypatch.setattr("lesson_credit.core.log.store.os.open", denied)
    with pytest.raises(StoreError, match="not writable"):
        ws.grade("s1", 0.9)
    assert ws.log.path.read_bytes() == before


def test_read_only_state_dir_is_refused_before_anything_is_written(tmp_path: Path) -> None:
    if os.geteuid() == 0:
        pytest.skip("root ignores file permissions; covered by the monkeypatched tests above")
    ws = _workspace(tmp_path)
    assert isinstance(ws.log, EventLog)  # the workspace's JSONL file
    ws.record("s1", tmp_path / "j.md", ["tools/a.md"], reward=0.5)
    before = ws.log.path.read_bytes()
    os.chmod(ws.state_dir, 0o500)
    os.chmod(ws.log.path, 0o400)
    try:
        with pytest.raises((StoreError, WorkspaceError)):
            ws.grade("s1", 0.9)
    finally:
        os.chmod(ws.state_dir, 0o700)
        os.chmod(ws.log.path, 0o600)
    assert ws.log.path.read_bytes() == before
