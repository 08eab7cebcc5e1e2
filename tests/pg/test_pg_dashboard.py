"""The dashboard on a database store: another agent's commit shows without the app's polling (the
store's `wait` follows the position)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from pathlib import Path

from textual.pilot import Pilot

from lesson_credit.core.log.pgstore import PgStore
from lesson_credit.core.workspace import Workspace
from lesson_credit.tui.app import LessonCreditApp
from tests.pg.pg_helpers import line
from tests.support.textual_private import notification_texts

SIZE = (100, 30)
WAIT_S = 20.0  # a generous bound for "it arrived"; the 0.5 s target is the bench's


def session(sid: str) -> bytes:
    return line({"type": "session", "session_id": sid, "base_reward": 0.8,
                 "lessons": [{"path": "tools/git.md", "salience": 1.0}]})  # fmt: skip


def test_another_agents_commit_shows_without_polling(ws_root: Path, pg_url: str) -> None:
    asyncio.run(_another_agents_commit_shows(ws_root, pg_url))


async def _another_agents_commit_shows(ws_root: Path, pg_url: str) -> None:
    PgStore(pg_url, agent="other").append(session("s1"))
    store = PgStore(pg_url, agent="operator")
    ws = Workspace(ws_root, store=store)  # the dashboard's workspace: its log is `store`
    # an hour between the app's polls: only the store's `wait` can bring the change in time
    app = LessonCreditApp(ws, poll_seconds=3600)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: ws.version > 0 and store._follower is not None, "the first read and look")
        before = app.data_version
        other = PgStore(pg_url, agent="other")
        other.append(session("s2"))
        started = time.monotonic()
        while app.data_version == before and time.monotonic() - started < WAIT_S:
            await asyncio.sleep(0.02)
            await pilot.pause()
        assert app.data_version > before
        assert ws.session("s2").base_reward == 0.8
        row = app.source.workspace.lesson_table().row("tools/git.md")
        assert row is not None and row.n == 2
        other.close()


def test_log_problems_name_the_database(ws_root: Path, pg_url: str) -> None:
    asyncio.run(_log_problems_name_the_database(ws_root, pg_url))


async def _log_problems_name_the_database(ws_root: Path, pg_url: str) -> None:
    import hashlib

    import psycopg

    store = PgStore(pg_url, agent="operator")
    store.append(session("s1"))
    with psycopg.connect(pg_url, autocommit=True) as conn:  # a row no writer of ours would store
        conn.execute(
            "INSERT INTO lesson_credit.events (type, raw, agent, digest, occurrence) VALUES (%s, %s, %s, %s, 0)",
            ("note", "this is not json", "elsewhere", hashlib.sha256(b"this is not json").digest()),
        )
    # the URL without its password, as every message names the store
    host_part = pg_url.split("@", 1)[1]
    user = pg_url.split("//", 1)[1].split(":", 1)[0]
    named = f"postgresql://{user}@{host_part}"
    assert store.name == named and "pg-test-secret" not in named
    app = LessonCreditApp(Workspace(ws_root, store=store), poll_seconds=0)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: any("unreadable" in title for title, _ in notification_texts(app)), "the notice")
        titles = [title for title, _ in notification_texts(app)]
        assert f"1 unreadable line in {named}" in titles
        await pilot.press("s")

        def shown() -> bool:
            problems = app.screen.query("#log-problems")
            return bool(problems) and problems.first().display

        await until(pilot, shown, "the Sessions screen's log problems")
        text = str(app.screen.query_one("#log-problems").render())
        assert text.startswith(f"⚠ 1 problem in {named}: line 2")
        assert "sessions.jsonl" not in text
    store.close()


def terminate_lesson_credit_backends(url: str) -> int:
    """What a failover or a pooler does: end every lesson-credit connection to the database from
    another one (`pg_terminate_backend`); returns how many were ended."""
    import psycopg

    with psycopg.connect(url, autocommit=True) as admin:
        rows = admin.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'lesson-credit'"
            " AND datname = current_database() AND pid <> pg_backend_pid()"
        ).fetchall()
    return sum(1 for (ended,) in rows if ended)


async def until(pilot: Pilot[None], condition: Callable[[], bool], what: str) -> None:
    """Pause the app until `condition()` holds (WAIT_S is a generous bound, never a speed assertion)."""
    started = time.monotonic()
    while not condition():
        assert time.monotonic() - started < WAIT_S, f"timed out waiting until {what}"
        await asyncio.sleep(0.02)
        await pilot.pause()


def test_a_grade_committed_after_the_dashboards_connections_were_terminated_shows(
    tmp_path: Path, ws_root: Path, pg_url: str
) -> None:
    asyncio.run(_grade_after_terminated_connections_shows(tmp_path, ws_root, pg_url))


async def _grade_after_terminated_connections_shows(tmp_path: Path, ws_root: Path, pg_url: str) -> None:
    from tests.pg.pg_helpers import make_workspace

    first = PgStore(pg_url, agent="other")
    first.append(session("s1"))  # base_reward 0.8
    first.close()
    store = PgStore(pg_url, agent="operator")
    app = LessonCreditApp(Workspace(ws_root, store=store), poll_seconds=3600)  # only `wait` brings changes
    async with app.run_test(size=SIZE) as pilot:

        def grade() -> float | None:
            return None if app.snapshot is None else app.snapshot.grade_of("s1")

        await until(pilot, lambda: store._follower is not None and grade() is not None, "the watcher looks")
        assert grade() == 0.8
        # the reading connection and the follower's: both gone, as after a failover
        assert terminate_lesson_credit_backends(pg_url) == 2
        other = PgStore(pg_url, agent="other")
        Workspace(make_workspace(tmp_path / "other"), store=other).grade("s1", 0.3, grader="alice")
        other.close()
        # nothing else happens: the dashboard must reconnect and read again by itself
        await until(pilot, lambda: grade() == 0.3, "the other client's grade shows")
        assert app.source.workspace.session("s1").base_reward == 0.3
    store.close()


def test_a_grade_typed_after_the_dashboards_connections_were_terminated_is_written_once(
    ws_root: Path, pg_url: str
) -> None:
    asyncio.run(_grade_typed_after_terminated_connections(ws_root, pg_url))


async def _grade_typed_after_terminated_connections(ws_root: Path, pg_url: str) -> None:
    from lesson_credit.tui.screens.session_detail import SessionDetailScreen

    first = PgStore(pg_url, agent="other")
    first.append(session("s1"))  # base_reward 0.8
    first.close()
    store = PgStore(pg_url, agent="operator")
    app = LessonCreditApp(Workspace(ws_root, store=store), poll_seconds=3600)
    app.retry_seconds = 0.01
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: store._follower is not None and app.snapshot is not None, "the watcher looks")
        await app.push_screen(SessionDetailScreen(app.source, "s1"))
        await until(pilot, lambda: isinstance(app.screen, SessionDetailScreen), "the session shows")
        assert terminate_lesson_credit_backends(pg_url) == 2  # a failover: the grade's connection is gone
        await pilot.press("3", "c")  # over the heuristic's 0.8: no question
        await until(pilot, lambda: app.writes.pending == 0, "the grade is written")
        assert app.writes.waiting() is None and app.saving == ""
    store.close()
    reader = PgStore(pg_url, agent="reader")
    grades = [line for line in reader.raw_lines() if b'"type":"grade"' in line.replace(b" ", b"")]
    reader.close()
    assert len(grades) == 1 and b"0.3" in grades[0], grades  # written once, after a retry if it failed
