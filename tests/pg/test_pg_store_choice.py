"""Choosing the event store (no server needed): --store, $LESSON_CREDIT_STORE, [store] url;
the JSONL store's side of the seam; URLs in messages without their password."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from lesson_credit.core.log.events import InvalidEvent
from lesson_credit.core.log.eventstore import DuplicateSession, JsonlStore
from lesson_credit.core.log.pgstore import PgStore, display_url
from lesson_credit.core.log.store import StoreError
from lesson_credit.core.log.stores import STORE_ENV, open_store, store_url
from tests.pg.pg_helpers import line, log_path
from tests.support.cli_run import run, run_json

CONFIG = Path("state") / "lesson-thompson" / "config.toml"


def session(sid: str, base: float | None = 0.5) -> dict[str, object]:
    return {
        "type": "session",
        "session_id": sid,
        "base_reward": base,
        "lessons": [{"path": "tools/git.md", "salience": 0.5}],
    }


def test_precedence_flag_then_env_then_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    config = tmp_path / "config.toml"
    table = {"store": {"url": "postgresql://from-config/db"}}
    monkeypatch.delenv(STORE_ENV, raising=False)
    assert store_url(None, {}, config) is None
    assert store_url(None, table, config) == "postgresql://from-config/db"
    monkeypatch.setenv(STORE_ENV, "postgresql://from-env/db")
    assert store_url(None, table, config) == "postgresql://from-env/db"
    assert store_url("host=flag dbname=db", table, config) == "host=flag dbname=db"
    assert store_url("", table, config) is None  # --store "": the file, whatever else is set
    monkeypatch.setenv(STORE_ENV, "  ")  # blank: not set
    assert store_url(None, {}, config) is None


def test_open_store_kinds(tmp_path: Path) -> None:
    log = tmp_path / "sessions.jsonl"
    assert isinstance(open_store(None, log), JsonlStore)
    assert isinstance(open_store("postgresql://h/db", log, "a1"), PgStore)
    assert isinstance(open_store("host=h dbname=db", log, "a1"), PgStore)
    with pytest.raises(StoreError, match="unsupported store URL"):
        open_store("mysql://h/db", log)
    for bad in ("", "  ", "two\nlines", "x" * 201):
        with pytest.raises(StoreError, match="--agent must be"):
            open_store("postgresql://h/db", log, bad)
    longest = open_store("postgresql://h/db", log, "x" * 200)
    assert isinstance(longest, PgStore) and longest.agent == "x" * 200


def test_bad_store_settings_exit_1_with_one_line(ws_root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (ws_root / CONFIG).write_text("[store]\nurl = 5\n")
    code, out, err = run(capsys, "status", "-w", str(ws_root))
    assert code == 1 and out == ""
    assert err.count("\n") == 1 and "[store] url must be a string" in err
    (ws_root / CONFIG).unlink()
    code, _, err = run(capsys, "status", "-w", str(ws_root), "--store", "mysql://u:pw@h/db")
    assert code == 1 and err.count("\n") == 1 and "unsupported store URL" in err and "pw" not in err


def test_replay_write_keeps_the_store_table(ws_root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # replay --write rewrites config.toml; a [store] url there must survive it
    (ws_root / CONFIG).write_text('floor = 0.3\n\n[store]\nurl = "postgresql://db.example/lc"\n')
    from lesson_credit.core.bandit.config import load_config

    before = load_config(ws_root / CONFIG).extra["store"]
    code, _, err = run(capsys, "replay", "-w", str(ws_root), "--store", "", "--floor", "0.5", "--write")
    assert code == 0, err
    after = load_config(ws_root / CONFIG)
    assert after.credit.floor == 0.5
    assert after.extra["store"] == before == {"url": "postgresql://db.example/lc"}


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("postgresql://alice:s3cr3t@db.example:6543/lc", "postgresql://alice@db.example:6543/lc"),
        ("postgres://alice:s3cr3t@db.example/lc?sslmode=require", "postgresql://alice@db.example/lc"),
        ("host=db.example port=6543 user=alice password=s3cr3t dbname=lc", "postgresql://alice@db.example:6543/lc"),
        ("postgresql://db.example/lc?password=s3cr3t", "postgresql://db.example/lc"),
        ("host=db.example password='s3cr3t", "postgresql (unparseable connection string)"),
    ],
)
def test_display_url_never_shows_the_password(url: str, shown: str) -> None:
    assert display_url(url) == shown


# ---------------------------------------------------------------- the JSONL store's side of the seam


def test_jsonl_append_event_validates_and_refuses_a_second_session(tmp_path: Path) -> None:
    store = JsonlStore(tmp_path / "sessions.jsonl")
    store.append(line(session("s1")))
    with pytest.raises(DuplicateSession, match="'s1' is already recorded"):
        store.append(line(session("s1", 0.9)))
    with pytest.raises(InvalidEvent, match="outside"):
        store.append(line(session("s2", 1.5)))
    with pytest.raises(ValueError, match="exactly one line"):
        store.append(b'{"type": "grade",\n"session_id": "s1", "base_reward": 0.5}\n')
    store.append(line({"type": "grade", "session_id": "s1", "base_reward": 0.9, "grader": "manual"}))
    assert store.path.read_bytes() == line(session("s1")) + line(
        {"type": "grade", "session_id": "s1", "base_reward": 0.9, "grader": "manual"}
    )
    assert list(store.raw_lines()) == store.path.read_bytes().splitlines(keepends=True)


def test_jsonl_wait_is_told_of_an_append_and_times_out(tmp_path: Path) -> None:
    store = JsonlStore(tmp_path / "sessions.jsonl")
    assert store.wait(0, 0.05) == 0
    timer = threading.Timer(0.1, store.append, args=(line(session("s1")),))
    timer.start()
    try:
        started = time.monotonic()
        end = store.wait(0, 30.0)
        assert time.monotonic() - started < 30.0
    finally:
        timer.join()
    assert end == store.size() > 0
    assert store.wait(0, 0.0) == store.size()  # already there: no waiting


def test_file_store_status_is_unchanged_by_the_seam(ws_root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # the default store is the workspace's file; one session graded 1.0 with git at salience 0.5:
    # seed, floor 0.3: w = 0.3 + 0.7 * 0.5 = 0.65, r = 0.65 -> Beta(1.65, 1.35)
    log_path(ws_root).write_bytes(line(session("s1", 1.0)))
    payload = run_json(capsys, "status", "-w", str(ws_root))
    git = next(row for row in payload["lessons"] if row["path"] == "tools/git.md")
    assert (git["n"], git["alpha"], git["beta"]) == (1, pytest.approx(1.65), pytest.approx(1.35))


def test_a_script_built_workspace_chooses_its_store_from_config_and_environment(
    ws_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`Workspace(root)`, as a script builds it, picks the store as the CLI does (opening connects to
    nothing): it used to take the JSONL file whatever config.toml said."""
    from lesson_credit.core.workspace import Workspace

    monkeypatch.delenv(STORE_ENV, raising=False)
    (ws_root / CONFIG).write_text('[store]\nurl = "postgresql://db.example/lc"\n')
    ws = Workspace(ws_root)
    assert isinstance(ws.log, PgStore) and ws.log.agent
    assert isinstance(Workspace(ws_root, store="").log, JsonlStore)  # "": the file, explicitly
    monkeypatch.setenv(STORE_ENV, "mysql://h/db")
    with pytest.raises(StoreError, match="unsupported store URL"):  # refused, not silently the file
        Workspace(ws_root)
