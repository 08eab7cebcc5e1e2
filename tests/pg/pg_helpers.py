"""Helpers for the PostgreSQL store tests: small workspaces, event lines, and `store push` run as a user would
(other CLI runners: tests/support/cli_run.py)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.support.cli_run import run, run_json

LESSONS = {
    "tools/git.md": ["git", "commit"],
    "tools/quote.md": ["quote"],
    "workflow/plain.md": [],
    "style.md": ["style guide", "lint"],
}
JOURNAL = "We used git to commit, then a quote; the style guide said lint. git again.\n"


def lesson_file(keywords: list[str]) -> str:
    quoted = ", ".join(f'"{k}"' for k in keywords)
    return f"---\nmatch:\n  keywords: [{quoted}]\nstatus: active\n---\n# A lesson\n\nBody.\n"


def make_workspace(root: Path) -> Path:
    """A workspace with LESSONS and one journal (j.txt); no log."""
    for rel, keywords in LESSONS.items():
        path = root / "lessons" / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(lesson_file(keywords))
    (root / "j.txt").write_text(JOURNAL)
    (root / "state" / "lesson-thompson").mkdir(parents=True, exist_ok=True)
    return root


def log_path(root: Path) -> Path:
    return root / "state" / "lesson-thompson" / "sessions.jsonl"


def line(event: dict[str, Any]) -> bytes:
    return (json.dumps(event) + "\n").encode()


def wait_until(condition: Any, what: str, timeout: float = 60.0) -> None:
    """Wait for `condition()` to hold (a generous bound: "it got there", never a speed assertion)."""
    import time

    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting until {what}")
        time.sleep(0.01)


def insert_raw(conn: Any, event: bytes, agent: str = "holder", occurrence: int = 0) -> int:
    """Insert an event line as the store stores it, through `conn` (a transaction the caller may
    leave open, holding the position drawn); returns that position."""
    from lesson_credit.core.log.pgschema import row_fields

    f = row_fields(event.strip())
    row = conn.execute(
        "INSERT INTO lesson_credit.events (type, session_id, event_time, event, raw, agent, digest, occurrence)"
        " VALUES (%s, %s, %s, %s::jsonb, %s, %s, %s, %s) RETURNING position",
        (f["type"], f["session_id"], f["event_time"], f["event"], f["raw"], agent, f["digest"], occurrence),
    ).fetchone()
    return int(row[0])


def waiting_on_a_lock(url: str, statement: str = "INSERT INTO lesson_credit.events") -> bool:
    """Whether a lesson-credit connection is waiting for a lock in a statement holding `statement`."""
    import psycopg

    with psycopg.connect(url, autocommit=True) as watcher:
        row = watcher.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'lesson-credit'"
            " AND datname = current_database() AND wait_event_type = 'Lock' AND strpos(query, %s) > 0",
            (statement,),
        ).fetchone()
    return bool(row and row[0])


def session(sid: str, base: float | None, lessons: dict[str, float], **extra: object) -> dict[str, object]:
    entries = [{"path": path, "salience": sal} for path, sal in lessons.items()]
    return {
        "type": "session",
        "session_id": sid,
        "timestamp": "2026-03-05T16:30:00Z",
        "base_reward": base,
        "lessons": entries,
        **extra,
    }


def grade(sid: str, base: float, grader: str = "manual") -> dict[str, object]:
    return {
        "type": "grade",
        "session_id": sid,
        "base_reward": base,
        "grader": grader,
        "timestamp": "2026-03-06T10:00:00Z",
    }


def push(capsys: pytest.CaptureFixture[str], root: Path, url: str) -> dict[str, object]:
    """`store push` of the workspace at `root` into `url`: its --json report."""
    out: dict[str, object] = run_json(capsys, "store", "push", "-w", str(root), "--store", url)
    return out


def refused(capsys: pytest.CaptureFixture[str], root: Path, url: str) -> str:
    """The one line of a push refused (exit 1, nothing on stdout)."""
    code, out, err = run(capsys, "store", "push", "-w", str(root), "--store", url)
    assert (code, out) == (1, "") and err.count("\n") == 1 and "nothing pushed" in err, (code, out, err)
    return err
