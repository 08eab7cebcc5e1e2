"""Events changed behind lesson-credit's back: a DBA who gets past the append-only triggers
(`session_replication_role = replica`, as a replication tool or a restore runs) and UPDATEs,
DELETEs or TRUNCATEs rows of `lesson_credit.events`. What a command prints afterwards must be
the fold of the table as it is now: the parsed-log cache and a long-lived reader (the
dashboard's) must not keep the events as they were."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import psycopg
import pytest

from lesson_credit.core.log.pgstore import PgStore
from tests.pg.pg_helpers import line
from tests.support.cli_run import run_json

GIT = "tools/git.md"


def session(sid: str, base: float) -> bytes:
    # salience 1.0: w = 0.3 + 0.7 * 1.0 = 1, so (seed) alpha += base and beta += 1 - base
    return line({"type": "session", "session_id": sid, "timestamp": "2026-03-05T16:30:00Z", "base_reward": base,
                 "lessons": [{"path": GIT, "salience": 1.0}]})  # fmt: skip


def as_dba(url: str, statement: str) -> None:
    """One statement run as an operator who gets past the triggers that refuse changes."""
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("SET session_replication_role = replica")
        conn.execute(statement)


def git(root: Path, url: str, capsys: pytest.CaptureFixture[str]) -> tuple[float, float, int]:
    status = run_json(capsys, "status", "-w", str(root), "--store", url)
    row = next(r for r in status["lessons"] if r["path"] == GIT)
    return round(row["alpha"], 9), round(row["beta"], 9), int(row["n"])


@pytest.fixture
def cached(ws_root: Path, pg_url: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> Any:
    """Six sessions of git.md at base 0.5 (alpha 1 + 3 = 4, beta 4, n 6), read once so that the
    parsed-log cache covers all six."""
    from lesson_credit.core.log import cache as derived

    monkeypatch.setattr(derived, "MIN_NEW_EVENTS", 1)
    writer = PgStore(pg_url, agent="w")
    for i in range(6):
        writer.append(session(f"s{i}", 0.5))
    writer.close()
    assert git(ws_root, pg_url, capsys) == (4.0, 4.0, 6)
    assert list((ws_root / "state" / "lesson-thompson" / ".cache").glob("derived-pg-*.sqlite"))
    return ws_root, pg_url


def _edit(url: str, position: str, old: str, new: str) -> None:
    # what a hand UPDATE changes: the text (and its JSONB copy), not the digest column we compute
    as_dba(
        url,
        f"UPDATE lesson_credit.events SET raw = replace(raw, '{old}', '{new}'), "
        f"event = replace(raw, '{old}', '{new}')::jsonb WHERE position = {position}",
    )


def test_the_last_event_edited_in_place_is_read_again(cached: Any, capsys: pytest.CaptureFixture[str]) -> None:
    root, url = cached
    _edit(url, "(SELECT max(position) FROM lesson_credit.events)", '"base_reward": 0.5', '"base_reward": 1.0')
    assert git(root, url, capsys) == (4.5, 3.5, 6)  # s5 now 1.0: alpha 1 + 2.5 + 1.0, beta 1 + 2.5 + 0


def test_a_middle_event_edited_to_another_length_is_read_again(cached: Any, capsys: pytest.CaptureFixture[str]) -> None:
    root, url = cached
    _edit(url, "3", '"base_reward": 0.5', '"base_reward": 0.25')
    assert git(root, url, capsys) == (3.75, 4.25, 6)  # s2 now 0.25: alpha 1 + 2.5 + 0.25, beta 1 + 2.5 + 0.75


def test_a_deleted_event_is_gone_from_the_numbers(cached: Any, capsys: pytest.CaptureFixture[str]) -> None:
    root, url = cached
    as_dba(url, "DELETE FROM lesson_credit.events WHERE position = 2")
    assert git(root, url, capsys) == (3.5, 3.5, 5)  # five sessions at 0.5


def test_a_table_truncated_and_filled_again_to_the_same_last_event_is_read_again(
    cached: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    """Emptied (the positions started again) and six events put back, the first five other than they
    were and the last the same bytes at the same position: the last event alone vouches for nothing."""
    root, url = cached
    as_dba(url, "TRUNCATE lesson_credit.events RESTART IDENTITY")
    writer = PgStore(url, agent="w")
    for i in range(5):
        writer.append(session(f"t{i}", 0.0))
    writer.append(session("s5", 0.5))
    writer.close()
    assert git(root, url, capsys) == (1.5, 6.5, 6)  # alpha 1 + 0.5, beta 1 + 5 + 0.5


def test_a_long_lived_reader_reads_an_edited_event_again(ws_root: Path, pg_url: str) -> None:
    """The dashboard's workspace: read once, a middle event edited, then one more commit. Its
    numbers are those of a workspace that reads the table from the start."""
    from lesson_credit.core.workspace import Workspace

    writer = PgStore(pg_url, agent="w")
    for i in range(4):
        writer.append(session(f"s{i}", 0.5))
    long_lived = Workspace(ws_root, store=PgStore(pg_url, agent="dashboard"))
    assert len(long_lived.sessions()) == 4
    _edit(pg_url, "2", '"base_reward": 0.5', '"base_reward": 0.0')
    writer.append(session("s4", 1.0))
    writer.close()
    long_lived.refresh()
    rows = {row.path: row for row in long_lived.lesson_table(details=False).rows}
    # s1 now 0.0: alpha 1 + 0.5 * 3 + 0 + 1.0 = 3.5, beta 1 + 0.5 * 3 + 1 + 0 = 3.5
    assert (round(rows[GIT].alpha, 9), round(rows[GIT].beta, 9)) == (3.5, 3.5)
    fresh = Workspace(ws_root, store=PgStore(pg_url, agent="r"), use_cache=False)
    again = {row.path: row for row in fresh.lesson_table(details=False).rows}
    assert (again[GIT].alpha, again[GIT].beta) == (rows[GIT].alpha, rows[GIT].beta)
