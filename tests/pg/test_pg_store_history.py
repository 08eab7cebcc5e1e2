"""The database store over time: the parsed-log cache per store and position, a database made afresh or
restored to an earlier point (read again from the start), and a workspace used with both stores."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest

from lesson_credit.core.log.pgstore import PgStore
from lesson_credit.core.log.store import ReadResult, StoreError
from tests.pg.pg_helpers import grade, line, session
from tests.pg.pg_server import Server
from tests.support.cli_run import run, run_json

GIT, QUOTE, PLAIN, STYLE = "tools/git.md", "tools/quote.md", "workflow/plain.md", "style.md"


def test_parsed_log_cache_per_store_position(
    pg_ws: tuple[Path, str], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from lesson_credit.core.log import cache as derived
    from lesson_credit.core.workspace import Workspace

    root, url = pg_ws
    monkeypatch.setattr(derived, "MIN_NEW_EVENTS", 5)  # a cache from 5 new events on
    writer = PgStore(url, agent="w")
    for i in range(12):
        writer.append(line(session(f"s{i}", (i % 5) / 4, {GIT: (i % 3) / 2, QUOTE: 0.5})))
    writer.append(line(grade("s3", 1.0)))
    uncached = run_json(capsys, "status", "-w", str(root), "--store", url)  # reads all 13, writes the cache
    cache_dir = root / "state" / "lesson-thompson" / ".cache"
    cached_files = sorted(p.name for p in cache_dir.glob("derived-pg-*.sqlite"))
    assert cached_files == [f"derived-pg-{writer.store_id()}.sqlite"]

    starts: list[int] = []
    read_since = PgStore.read_since

    def spy(self: PgStore, start: int, *args: Any, **kwargs: Any) -> Iterator[ReadResult]:
        starts.append(start)
        return read_since(self, start, *args, **kwargs)

    monkeypatch.setattr(PgStore, "read_since", spy)
    assert run_json(capsys, "status", "-w", str(root), "--store", url) == uncached
    assert starts == [writer.size()]  # the cache covered every event: reading began at the end
    starts.clear()
    writer.append(line(grade("s4", 0.0)))  # one more: only it is read
    store = PgStore(url, agent="r")
    ws = Workspace(root, store=store)  # the workspace gives the store its cache folder
    graded = ws.lesson_table(details=False)
    assert starts == [writer.size() - 1]
    no_cache = Workspace(root, store=PgStore(url, agent="r"), use_cache=False)  # reads everything
    assert no_cache.lesson_table(details=False) == graded
    assert starts[-1] == 0
    # a cache of another database (the same name, made afresh) is not used
    starts.clear()
    for path in cache_dir.glob("derived-pg-*.sqlite"):
        path.rename(path.with_name("derived-pg-00000000-0000-0000-0000-000000000000.sqlite"))
    assert run_json(capsys, "status", "-w", str(root), "--store", url)["sessions"] == 12
    assert starts[0] == 0
    store.close()
    writer.close()


def test_a_database_made_afresh_is_read_from_the_start(pg_server: Server, ws_root: Path) -> None:
    from lesson_credit.core.workspace import Workspace
    from tests.pg.pg_server import create_database

    url = create_database(pg_server, "afresh")
    store = PgStore(url, agent="a")
    ws = Workspace(ws_root, store=store)  # long-lived, like a dashboard
    for sid in ("old1", "old2", "old3"):
        store.append(line(session(sid, 0.5, {GIT: 0.5})))
    assert [s.session_id for s in ws.sessions()] == ["old1", "old2", "old3"]
    with psycopg.connect(pg_server.url(), autocommit=True) as conn:
        conn.execute('DROP DATABASE "afresh" WITH (FORCE)')
        conn.execute('CREATE DATABASE "afresh"')
    other = PgStore(url, agent="b")
    for sid in ("new1", "new2", "new3", "new4"):  # positions 1-4: past where the old read ended
        other.append(line(session(sid, 1.0, {QUOTE: 1.0})))
    with pytest.raises(StoreError):  # its connection was cut when the database was dropped
        ws.refresh()
    ws.refresh()  # a new connection, another database: read again from the start
    assert [s.session_id for s in ws.sessions()] == ["new1", "new2", "new3", "new4"]
    other.close()
    store.close()


def _dump(url: str, path: Path) -> None:
    import subprocess

    subprocess.run(["pg_dump", "--format=custom", "--file", str(path), url], check=True, capture_output=True)


def _restore(url: str, path: Path) -> None:
    """As an operator restores a backup into the live database: the schema's objects dropped and made
    again from the dump, the store id and the position sequence as they were (connections stay)."""
    import subprocess

    subprocess.run(
        ["pg_restore", "--clean", "--if-exists", "--single-transaction", "--dbname", url, str(path)],
        check=True,
        capture_output=True,
    )


def test_a_database_restored_to_an_earlier_point_is_read_again(
    pg_url: str, ws_root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A backup taken at 6 events, 6 more events read (the parsed-log cache covers 12, a long-lived
    reader has read 12), the backup restored, then 8 other events: positions 7..14 again, past 12,
    with other contents. Before: the cache (and the long-lived reader) trusted positions 1..12 by
    their number and kept the lost events (12 + 2 sessions against the database's 6 + 8)."""
    from lesson_credit.core.log import cache as derived
    from lesson_credit.core.workspace import Workspace

    monkeypatch.setattr(derived, "MIN_NEW_EVENTS", 1)
    writer = PgStore(url := pg_url, agent="w")
    for i in range(6):
        writer.append(line(session(f"kept{i}", 0.5, {GIT: 0.5})))
    dump = tmp_path / "backup.dump"
    _dump(url, dump)
    for i in range(6):
        writer.append(line(session(f"lost{i}", 1.0, {GIT: 1.0})))
    long_lived = Workspace(ws_root, store=PgStore(url, agent="dashboard"))
    assert len(long_lived.sessions()) == 12  # and the cache now covers 12 events
    assert Workspace(ws_root, store=PgStore(url, agent="r")).lesson_table(details=False)  # read through it
    writer.close()
    _restore(url, dump)
    other = PgStore(url, agent="b")
    for i in range(8):
        other.append(line(session(f"new{i}", 0.0, {QUOTE: 1.0})))
    assert other.size() >= 12
    expected = [f"kept{i}" for i in range(6)] + [f"new{i}" for i in range(8)]
    fresh = Workspace(ws_root, store=PgStore(url, agent="r"), use_cache=False)
    assert [s.session_id for s in fresh.sessions()] == expected
    cached = Workspace(ws_root, store=PgStore(url, agent="r"))
    assert [s.session_id for s in cached.sessions()] == expected
    assert cached.lesson_table(details=False) == fresh.lesson_table(details=False)
    long_lived.refresh()
    assert [s.session_id for s in long_lived.sessions()] == expected
    other.close()


def test_a_restored_database_whose_last_event_is_the_lost_one_again_is_read_again(
    pg_url: str, ws_root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A backup taken at 4 events; then a grade of s1 (0.9) and a grade of s2 (0.5) are read (the cache covers
    6 events, a long-lived reader has read 6); the backup restored, then a grade of s1 at 0.1 and the very same
    bytes of s2's grade: positions 5 and 6 again, the event at 6 identical to the one read there (its text, its
    copy number: a hook's grade retried after a failover, another tool's event without a timestamp). The
    database's s1 is 0.1; before, the cache and the long-lived reader vouched for positions 1..6 by the last
    one's text and copy alone, and kept 0.9 (every posterior of s1's lessons with it)."""
    from lesson_credit.core.log import cache as derived
    from lesson_credit.core.workspace import Workspace

    monkeypatch.setattr(derived, "MIN_NEW_EVENTS", 1)
    writer = PgStore(url := pg_url, agent="w")
    for i in range(4):
        writer.append(line(session(f"s{i}", 0.5, {GIT: 1.0})))
    dump = tmp_path / "backup.dump"
    _dump(url, dump)
    same = line(grade("s2", 0.5))
    writer.append(line(grade("s1", 0.9)))
    writer.append(same)
    long_lived = Workspace(ws_root, store=PgStore(url, agent="dashboard"))
    assert {s.session_id: s.base_reward for s in long_lived.sessions()}["s1"] == 0.9  # the cache now covers 6 events
    writer.close()
    _restore(url, dump)
    other = PgStore(url, agent="b")
    other.append(line(grade("s1", 0.1)))
    other.append(same)
    assert other.size() == 6
    fresh = Workspace(ws_root, store=PgStore(url, agent="r"), use_cache=False)
    assert {s.session_id: s.base_reward for s in fresh.sessions()}["s1"] == 0.1
    cached = Workspace(ws_root, store=PgStore(url, agent="r"))
    assert {s.session_id: s.base_reward for s in cached.sessions()}["s1"] == 0.1
    # seed credit at salience 1 (weight 1): alpha 1 + 0.5 x 3 + 0.1 = 2.6, beta 1 + 0.5 x 3 + 0.9 = 3.4
    assert cached.lesson_table(details=False) == fresh.lesson_table(details=False)
    posterior = cached.posterior()
    at = list(posterior.arm_ids).index(GIT)
    assert (posterior.alpha[at], posterior.beta[at]) == pytest.approx((2.6, 3.4))
    long_lived.refresh()
    assert {s.session_id: s.base_reward for s in long_lived.sessions()}["s1"] == 0.1
    other.close()


def test_a_workspace_used_with_both_stores_is_not_rewritten_back_and_forth(
    pg_ws: tuple[Path, str], capsys: pytest.CaptureFixture[str]
) -> None:
    """bandit-state.json follows the store of the last write; `status` on the other store leaves it
    (it used to rewrite it from its own log: file, database, file, ... on every status)."""
    root, url = pg_ws
    state = root / "state" / "lesson-thompson" / "bandit-state.json"

    def record(sid: str, reward: str, *store: str) -> None:
        code, _, err = run(capsys, "record", "-w", str(root), *store, "--session-id", sid, "--journal",
                           str(root / "j.txt"), "--lessons", GIT, "--reward", reward)  # fmt: skip
        assert code == 0, err

    def git_n() -> int:
        return int(json.loads(state.read_bytes())["arms"][GIT]["total_selections"])

    record("f1", "0.9")  # the file: one session of git.md
    record("d1", "0.1", "--store", url)
    record("d2", "0.2", "--store", url)  # the database: two
    assert git_n() == 2 and json.loads(state.read_bytes())["lesson_credit_store"].startswith("database ")
    written = state.read_bytes()
    for store in ([], ["--store", url], [], ["--store", url]):
        code, _, err = run(capsys, "status", "-w", str(root), *store)
        assert (code, err) == (0, "")
        assert state.read_bytes() == written  # neither rewrites what the other's last write left
    record("f2", "0.5")
    record("f3", "0.4")  # writes on the file: the file's three sessions, and no database key
    assert git_n() == 3 and "lesson_credit_store" not in json.loads(state.read_bytes())
    written = state.read_bytes()
    assert run(capsys, "status", "-w", str(root), "--store", url)[0] == 0
    assert state.read_bytes() == written
