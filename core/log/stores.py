"""Choosing the event store (`store_url`, `open_store`) and who writes (`--agent`, default the
hostname); then what the engine asks of a store beyond the seam (core/log/eventstore.py
`EventStore`), each a function of the store."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lesson_credit.core.log.eventstore import EventStore, JsonlStore
from lesson_credit.core.log.store import EventLog, StoreError

if TYPE_CHECKING:
    from lesson_credit.core.log.cache import ParsedLogCache
    from lesson_credit.core.log.logcheck import PrefixChecker
    from lesson_credit.core.log.pgstore import PgStore

STORE_ENV = "LESSON_CREDIT_STORE"
MAX_AGENT_CHARS = 200


def default_agent() -> str:
    """Who writes, when `--agent` is not given: the host's name."""
    import socket  # here: only a database store records who writes

    return socket.gethostname() or "unknown"


def is_postgres_url(url: str) -> bool:
    """A `postgresql://` / `postgres://` URL or a libpq keyword string (`host=... dbname=...`)."""
    stripped = url.strip()
    return stripped.startswith(("postgresql://", "postgres://")) or ("=" in stripped and "://" not in stripped)


def store_url(explicit: str | None, config_extra: Mapping[str, Any], config_path: Path) -> str | None:
    """The store to use: `--store`, else $LESSON_CREDIT_STORE, else `[store] url` in config.toml,
    else None (the workspace's JSONL file). An empty `--store ""` chooses the file explicitly."""
    if explicit is not None:
        return explicit if explicit.strip() else None
    from_env = os.environ.get(STORE_ENV, "")
    if from_env.strip():
        return from_env
    table = config_extra.get("store")
    if table is None:
        return None
    if not isinstance(table, dict):
        raise StoreError(f"{config_path}: [store] must be a table with a url")
    url = table.get("url")
    if url is None or url == "":
        return None
    if not isinstance(url, str):
        raise StoreError(f"{config_path}: [store] url must be a string")
    return url


def open_store(url: str | None, log_path: Path, agent: str | None = None) -> EventStore:
    """The store a URL names (None: the JSONL file at `log_path`). Opening connects to nothing."""
    if url is None or not url.strip():
        return JsonlStore(log_path)
    if is_postgres_url(url):
        try:
            from lesson_credit.core.log.pgstore import PgStore
        except ImportError as exc:  # the `pg` extra is not installed
            if (exc.name or "").split(".")[0] != "psycopg":
                raise
            raise StoreError("postgresql: the database store needs psycopg (pip install 'psycopg[binary]')") from None

        if agent is not None and (not agent.strip() or not agent.isprintable() or len(agent) > MAX_AGENT_CHARS):
            raise StoreError(f"--agent must be a printable single line of 1-{MAX_AGENT_CHARS} characters")
        return PgStore(url, agent=agent or default_agent())
    raise StoreError("unsupported store URL (expected postgresql://..., postgres://... or a libpq keyword string)")


def _database(store: EventStore) -> PgStore:
    """The database store `store` is (anything that is not the file is one)."""
    from lesson_credit.core.log.pgstore import PgStore

    if not isinstance(store, PgStore):
        raise TypeError(f"not an event store of lesson-credit's: {store!r}")
    return store


def is_local(store: EventStore) -> bool:
    """A file on this machine: no server that can be down (`select --offline-ok` has nothing to
    fall back from, the dashboard has no connection to check before it opens); its appends are
    found by polling its size, while a database's `wait` follows commits itself."""
    return isinstance(store, EventLog)


def prefix_check(store: EventStore) -> PrefixChecker:
    """How a reader checks that what it read of `store` up to a position is still there: the
    file's bytes hashed (core/log/logcheck.py), a database's identity and last event
    (core/log/logcheck.py `PositionCheck`). The reader makes one per store it reads."""
    if isinstance(store, EventLog):
        from lesson_credit.core.log.logcheck import PrefixCheck

        return PrefixCheck(store)
    from lesson_credit.core.log.logcheck import PositionCheck

    return PositionCheck(_database(store))


def log_cache(store: EventStore, cache_dir: Path) -> ParsedLogCache:
    """The parsed-log cache of `store`, kept in `cache_dir` (the workspace's `.cache` folder)."""
    if isinstance(store, EventLog):
        from lesson_credit.core.log.cache import LogCache

        return LogCache(store, cache_dir)
    from lesson_credit.core.log.cache import PgLogCache

    return PgLogCache(_database(store), cache_dir)


def session_agents(store: EventStore, after: int, upto: int) -> dict[str, str]:
    """Session id -> the agent that wrote its record, for the session events at positions in
    (after, upto]; {} for the file, which does not record who writes."""
    return {} if isinstance(store, EventLog) else _database(store).session_agents(after, upto)


@contextlib.contextmanager
def record_lock(store: EventStore) -> Iterator[bool]:
    """What recording a session holds (True: the writers' lock): the file's lock, its id being
    checked new against the log read under it; nothing on a database, whose unique index refuses
    a second session event for an id whoever commits first (`append` raises DuplicateSession), so
    that a fleet's records do not wait for one another."""
    if not isinstance(store, EventLog):
        yield False
        return
    with store.locked():
        yield True


def prepare(store: EventStore) -> None:
    """Ahead of the first write (the dashboard calls this in a worker at start-up): connect to the
    database (and check its schema); the file's lock needs nothing ahead. A failure is left for
    that write to report."""
    if isinstance(store, EventLog):
        return
    with contextlib.suppress(StoreError):
        store.size()


def raw_lines(store: EventStore) -> Iterator[bytes]:
    """Every event's text as stored, in order, each ending in a newline."""
    return store.raw_lines() if isinstance(store, JsonlStore) else _database(store).raw_lines()
