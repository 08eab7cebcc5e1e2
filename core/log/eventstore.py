"""The event log behind one seam (docs/format.md §5): the JSONL file by default, or a PostgreSQL database.

A store keeps events in one total order, the order they fold in, and hands them out after a
position. What a Workspace needs of it:

- `locked()`: the writers' critical section. Inside it the Workspace reads what is new,
  validates its event against the log as it is at that moment, and `append_locked()`s it.
- `size()`: where the log ends now. (Whether what was read is still there is the reader's
  check: a hash of the file's bytes, core/logcheck.py; a database's identity, its table being
  append-only, core/pgstore.py `PositionCheck`.)
- `read_chunks(start, first_line, ...)`: the events after a position, as `ReadResult`s whose
  `end` is the position to read after next time and whose `lines` is how many event slots
  (lines) they consumed. Events are numbered by their place in the order, from 1.
- `wait(after, timeout)`: block until there are events after position `after` (or the timeout
  passes); returns the end position, so the caller knows what to wait after next.

`append_event()` is the stand-alone write: one event under the same validation and uniqueness
rules (it is refused when it is not a valid event, or is a second session event for an id).

The JSONL store is today's `EventLog` unchanged, with the seam's extra methods added; the
PostgreSQL store is core/pgstore.py; core/stores.py chooses between them.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from lesson_credit.core.log.events import SESSION, decode_event, decode_raw, is_session
from lesson_credit.core.log.store import CHUNK_BYTES, LOCK_TIMEOUT_S, EventLog, ReadResult, StoreError

if TYPE_CHECKING:
    import xxhash

    from lesson_credit.core.log.index import LogIndex

WAIT_POLL_S = 0.05  # how often the file store looks for an append while waiting


class DuplicateSession(StoreError):
    """A second session event for an id the log already holds."""

    def __init__(self, session_id: str) -> None:
        super().__init__(f"session {session_id!r} is already recorded")
        self.session_id = session_id


class PrefixChecker(Protocol):
    """How a reader checks that what it read up to a position is still there (the file's:
    core/logcheck.py `PrefixCheck`, a hash of its bytes; a database's: core/pgstore.py `PositionCheck`)."""

    hasher: Any  # fed the bytes read (xxh3), for the parsed-log cache's digest

    def signature(self) -> Any: ...

    def reset(self) -> None: ...

    def adopt(self, hasher: Any) -> None: ...

    def trust_once(self) -> None: ...

    def intact(self, end: int, signature: Any) -> bool: ...

    def checked(self, signature: Any) -> None: ...


class ParsedLogCache(Protocol):
    """The parsed-log cache of a store (core/cache.py `LogCache`, core/pgcache.py `PgLogCache`)."""

    def load(self) -> tuple[LogIndex, xxhash.xxh3_64, bool] | None: ...

    def save(self, index: LogIndex, digest: str, partial: bool) -> None: ...


@runtime_checkable
class EventStore(Protocol):
    """What the Workspace and the CLI use of an event log (see the module docstring)."""

    @property
    def name(self) -> str:
        """How messages name the store: the log file's name, or the URL without its password."""
        ...

    def prepare(self) -> None: ...

    def locked(self, timeout: float = LOCK_TIMEOUT_S) -> contextlib.AbstractContextManager[None]: ...

    def append_locked(self, line: bytes) -> None: ...

    def append_event(self, line: bytes) -> None: ...

    def size(self) -> int: ...

    def read_chunks(
        self,
        start: int,
        first_line: int,
        decode: Callable[[bytes], Any] = ...,
        continues_line: bool = False,
        decode_lines: Callable[[memoryview], list[Any] | None] | None = None,
        chunk_bytes: int = CHUNK_BYTES,
        hasher: Any = None,
    ) -> Iterator[ReadResult]: ...

    def wait(self, after: int, timeout: float) -> int:
        """The store's end position once it is past `after`, or when `timeout` seconds passed."""
        ...

    def raw_lines(self) -> Iterator[bytes]:
        """Every event's text as stored, in order, each ending in a newline."""
        ...

    def session_record(self, session_id: str, *, unique: bool = False) -> dict[str, Any] | None:
        """The first session event stored for the id (the one that counts), as written; None if none.
        `unique`: the caller knows the id was stored once, so a search may start from the end."""
        ...

    @property
    def is_local(self) -> bool:
        """A file on this machine: no server that can be down (`select --offline-ok` has nothing to
        fall back from, the dashboard has no connection to check before it opens)."""
        ...

    @property
    def notifies(self) -> bool:
        """Whether `wait()` is told of each commit (the dashboard then waits instead of polling)."""
        ...

    def prefix_check(self) -> PrefixChecker:
        """How a reader checks that what it read up to a position is still there."""
        ...

    def log_cache(self, cache_dir: Path) -> ParsedLogCache | None:
        """The parsed-log cache for this store, kept in `cache_dir` (the workspace's `.cache` folder);
        None: none is kept."""
        ...

    def glued(self, end: int) -> bool:
        """Whether bytes were appended right after a last line read without its newline at `end`
        (it is then one longer line, to be read again)."""
        ...

    def raw_bytes(self) -> bytes:
        """Every event's text as stored, in order, as one byte string."""
        ...

    def session_agents(self, after: int, upto: int) -> dict[str, str]:
        """Session id -> the agent that wrote its record, for the session events at positions in
        (after, upto]; {} when the store does not record who writes (the file)."""
        ...


def check_event(line: bytes) -> str | None:
    """Validate one encoded event (exactly one line); the session id when it is a session event.
    Raises InvalidEvent (a ValueError) when the line is not a valid event."""
    if not line.endswith(b"\n") or b"\n" in line[:-1]:
        raise ValueError("an event is exactly one line")
    event_line = line.strip()
    decode_event(event_line)  # the full validation the reader applies
    raw = decode_raw(event_line)
    return str(raw.session_id) if is_session(raw) else None


class JsonlStore(EventLog):
    """`state/lesson-thompson/sessions.jsonl`: the EventLog itself, plus the seam's extras."""

    @property
    def name(self) -> str:
        return self.path.name

    is_local = True
    notifies = False  # appends are found by polling its size

    def prefix_check(self) -> PrefixChecker:
        from lesson_credit.core.log.logcheck import PrefixCheck

        return PrefixCheck(self)

    def log_cache(self, cache_dir: Path) -> ParsedLogCache:
        from lesson_credit.core.log.cache import LogCache

        return LogCache(self, cache_dir)

    def glued(self, end: int) -> bool:
        try:
            with open(self.path, "rb") as handle:
                handle.seek(end)
                return handle.read(1) != b"\n"
        except OSError:
            return True

    def session_agents(self, after: int, upto: int) -> dict[str, str]:
        return {}  # the file's bytes are the events as written: no record of who wrote them

    def raw_bytes(self) -> bytes:
        try:
            return self.path.read_bytes()
        except FileNotFoundError:
            return b""
        except OSError as exc:
            raise StoreError(f"{self.path}: {exc.strerror or exc}") from None

    def append_event(self, line: bytes) -> None:
        """Append one event after validating it; a second session event for an id is refused.
        Checking uniqueness reads the whole log: this is for tools, not for the Workspace,
        which validates against the log it has already read, under `locked()`."""
        session_id = check_event(line)
        with self.locked():
            if session_id is not None and session_id in self._session_ids():
                raise DuplicateSession(session_id)
            self.append_locked(line)

    def _session_ids(self) -> set[str]:
        ids: set[str] = set()
        for result in self.read_chunks(0, 1, decode=decode_raw):
            ids.update(str(raw.session_id) for _, raw in result.events if raw.type in (None, SESSION))
        return ids

    def session_record(self, session_id: str, *, unique: bool = False) -> dict[str, Any] | None:
        from lesson_credit.core.log.records import session_record

        return session_record(self.path, session_id, unique=unique)

    def raw_lines(self) -> Iterator[bytes]:
        """The log's lines as they are on disk (a last line without its newline gets one)."""
        try:
            handle = open(self.path, "rb")  # noqa: SIM115 (closed below; a generator holds it across yields)
        except FileNotFoundError:
            return
        except OSError as exc:
            raise StoreError(f"{self.path}: {exc.strerror or exc}") from None
        with handle:
            for line in handle:
                yield line if line.endswith(b"\n") else line + b"\n"

    def wait(self, after: int, timeout: float) -> int:
        """The log's size as soon as it is past `after`, or when `timeout` seconds have passed."""
        deadline = time.monotonic() + max(timeout, 0.0)
        while True:
            end = self.size()
            left = deadline - time.monotonic()
            if end > after or left <= 0:
                return end
            time.sleep(min(WAIT_POLL_S, left))


def export_log(store: EventStore, path: Path) -> int:
    """Write the store's events, in its order, as a JSONL log at `path` (which must not exist):
    all at once, never half a file. Returns the number of events written."""
    import tempfile

    path = Path(path)
    if path.exists():
        raise StoreError(f"{path}: already exists (not overwritten)")
    if not path.parent.is_dir():
        raise StoreError(f"{path.parent}: no such folder")
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    except OSError as exc:
        raise StoreError(f"{path}: {exc.strerror or exc}") from None
    count = 0
    try:
        with os.fdopen(fd, "wb") as handle:
            for line in store.raw_lines():
                handle.write(line)
                count += 1
            handle.flush()
            os.fsync(handle.fileno())
        os.link(tmp, path)  # fails, rather than overwrites, if the file appeared meanwhile
    except FileExistsError:
        raise StoreError(f"{path}: already exists (not overwritten)") from None
    except OSError as exc:
        raise StoreError(f"{path}: {exc.strerror or exc}") from None
    finally:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
    return count
