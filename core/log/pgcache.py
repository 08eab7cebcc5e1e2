"""What a reader keeps of a database store: the parsed-log cache per store position, and the
check that what it read up to a position is still there (`PositionCheck`).

The same head, sums and parts the file's cache holds (`lesson_credit.core.log.cache.PartedCache`), kept
in the workspace's `.cache/log-index-pg-<store id>*`, and used only when the database is the one it was
made from (its store id) and still reaches the position the cache covers. The events table is
append-only (triggers refuse UPDATE, DELETE and TRUNCATE), so the events up to that position
are the ones the cache was made from; a process then reads only the events after it.
"""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Any, Protocol

import xxhash

from lesson_credit.core.log.cache import PartedCache, cache_limit
from lesson_credit.core.log.index import LogIndex
from lesson_credit.core.log.sections import CacheDamaged
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
        self._seen: tuple[int, str] | None = None  # a position read to, and its fingerprint then

    def adopt(self, hasher: Any) -> None:
        self.hasher = hasher

    def trust_once(self) -> None:
        """Nothing to skip: the check reads no events."""

    def intact(self, end: int, signature: object) -> bool:
        """The same database, and (when known) the same last event up to `end`: a database restored
        to an earlier point that has since taken new events reaches `end` again with other events."""
        if end <= 0 or self._store_id is None:
            return True
        if self.store.store_id() != self._store_id:
            return False
        return self._seen is None or self._seen[0] != end or self.store.fingerprint(end) == self._seen[1]

    def checked(self, signature: object, end: int) -> None:
        self._store_id = self.store.store_id()
        if end > 0 and (self._seen is None or self._seen[0] != end):
            self._seen = (end, self.store.fingerprint(end))

    def vouch(self, end: int) -> str | None:
        return self.store.fingerprint(end)

    def vouches(self, end: int, vouch: str) -> bool:
        return self.store.fingerprint(end) == vouch


class PgLogCache(PartedCache):
    """`<cache_dir>/log-index-pg-<store id>.msgpack`, its sums and its part files, for one database
    store (not while the store reads only one agent's events: that is another index). The file
    store's layout (core/log/cache.py): a save writes the parts read since the last one and the
    head, never the whole cache again."""

    def __init__(self, store: PositionedStore, cache_dir: Path) -> None:
        self.store = store
        self.dir = Path(cache_dir)
        self.notice = False  # a database's cache is rebuilt without a word (its store id names it)
        self.min_new = MIN_NEW_EVENTS

    def _place(self) -> bool:
        if self.store.written_by is not None:
            return False
        name = f"log-index-pg-{self.store.store_id()}"
        self.path = self.dir / f"{name}.msgpack"
        self.sums_path = self.dir / f"log-sums-pg-{self.store.store_id()}.msgpack"
        self.part_prefix = f"{name}-part-"
        return True

    def load(self) -> tuple[LogIndex, xxhash.xxh3_64, bool] | None:
        """(index, a hasher for the reader's interface, partial) if the cache describes a prefix of
        this database's events, else None."""
        with contextlib.suppress(StoreError):
            if not self._place():
                return None
            size = self.store.size()  # asked once (a round trip)
            limit = cache_limit(size * 1024)  # ~1 KB per event is far past what a cache holds
            loaded = self._read(limit)
            if loaded is None:
                return None
            index, fingerprint, partial = loaded
            if partial or size < index.end or self.store.fingerprint(index.end) != fingerprint:
                return None
            self._read_sums(index, limit)
            return index, xxhash.xxh3_64(), partial
        return None

    def save(self, index: LogIndex, digest: str, partial: bool) -> None:
        """Best effort: a cache that cannot be written (read-only workspace) is simply skipped.
        It records the database and position it covers (the reader's `digest` is of no bytes)."""
        with contextlib.suppress(StoreError, OSError, CacheDamaged):
            if self._place():
                self._save(index, self.store.fingerprint(index.end), partial)
