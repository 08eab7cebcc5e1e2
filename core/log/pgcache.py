"""What a reader keeps of a database store: the parsed-log cache per store position, and the
check that what it read up to a position is still there (`PositionCheck`).

The same columns the file's cache holds (`lesson_credit.core.log.cache.write_index`), kept in the workspace's
`.cache/log-index-pg-<store id>.msgpack`, and used only when the database is the one it was
made from (its store id) and still reaches the position the cache covers. The events table is
append-only (triggers refuse UPDATE, DELETE and TRUNCATE), so the events up to that position
are the ones the cache was made from; a process then reads only the events after it.
"""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Any, Protocol

import xxhash

from lesson_credit.core.base.safe_read import UnsafeFile, read_regular
from lesson_credit.core.log.cache import cache_limit, decode_index, write_index
from lesson_credit.core.log.index import LogIndex
from lesson_credit.core.log.store import StoreError

MIN_NEW_EVENTS = 5_000  # rewrite the cache when a read took this many events (~4 MB of log, as the file)


class PositionedStore(Protocol):
    """What the cache and the check need of a database store (core/log/pgstore.py `PgStore`)."""

    written_by: str | None

    def size(self) -> int: ...

    def store_id(self) -> str: ...

    def fingerprint(self, end: int) -> str: ...


class PositionCheck:
    """For a reader of a database store, what `lesson_credit.core.log.logcheck.PrefixCheck` is for
    the file's: whether what was read up to a position is still there. The table is append-only
    (migration 2), so it is while the database is the same one (its store id); one created afresh
    starts the read over. The reader's hasher is kept for its interface; nothing feeds it."""

    def __init__(self, store: PositionedStore) -> None:
        self.store = store
        self.reset()

    def signature(self) -> None:
        return None

    def reset(self) -> None:
        self.hasher = xxhash.xxh3_64()
        self._store_id: str | None = None  # of the database the events read so far came from

    def adopt(self, hasher: Any) -> None:
        self.hasher = hasher

    def trust_once(self) -> None:
        """Nothing to skip: the check reads no events."""

    def intact(self, end: int, signature: object) -> bool:
        if end <= 0 or self._store_id is None:
            return True
        return self.store.store_id() == self._store_id

    def checked(self, signature: object) -> None:
        self._store_id = self.store.store_id()


class PgLogCache:
    """`<cache_dir>/log-index-pg-<store id>.msgpack` for one database store (not while the store
    reads only one agent's events: that is another index)."""

    def __init__(self, store: PositionedStore, cache_dir: Path) -> None:
        self.store = store
        self.cache_dir = Path(cache_dir)
        self.min_new = MIN_NEW_EVENTS

    def _path(self) -> Path | None:
        if self.store.written_by is not None:
            return None
        return self.cache_dir / f"log-index-pg-{self.store.store_id()}.msgpack"

    def load(self) -> tuple[LogIndex, xxhash.xxh3_64, bool] | None:
        """(index, a hasher for the reader's interface, partial) if the cache describes a prefix of
        this database's events, else None."""
        path = self._path()
        if path is None:
            return None
        try:  # refused by its size before reading: ~1 KB per event is far past what a cache holds
            data = read_regular(path, cache_limit(self.store.size() * 1024))
        except (OSError, UnsafeFile):
            return None
        try:
            index, fingerprint, partial = decode_index(data)
        except ValueError:
            return None
        if partial or self.store.size() < index.end or self.store.fingerprint(index.end) != fingerprint:
            return None
        return index, xxhash.xxh3_64(), partial

    def save(self, index: LogIndex, digest: str, partial: bool) -> None:
        """Best effort: a cache that cannot be written (read-only workspace) is simply skipped.
        It records the database and position it covers (the reader's `digest` is of no bytes)."""
        path = self._path()
        if path is not None:
            with contextlib.suppress(StoreError, OSError):
                write_index(path, index, self.store.fingerprint(index.end), partial)
