"""The event log behind one seam (docs/format.md §5): the JSONL file by default, or a PostgreSQL database.

A store keeps events in one total order, the order they fold in, and speaks events: positions
are opaque to its users (the file's are byte offsets, a database's a sequence), and how events
are framed on disk (lines, a last line still without its newline) stays inside the store. What a
store does is `EventStore` below, a docstring per member. Whether what a reader read is still
there is the reader's check (core/log/stores.py `prefix_check`). A failure that may pass (a
database down, read-only, or timing out) is a `StoreUnavailable`: the CLI exits 75 (EX_TEMPFAIL),
and a hook may retry.

The JSONL store is `EventLog` (core/log/store.py) with the seam's methods added; the
PostgreSQL store is core/log/pgstore.py; core/log/stores.py chooses between them and holds what
else the engine asks of a store.
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from lesson_credit.core.base.files import StoreUnavailable as StoreUnavailable
from lesson_credit.core.base.files import WriteGuard
from lesson_credit.core.log.events import SESSION, RawEvent, decode_event, decode_raw, is_session, validate
from lesson_credit.core.log.store import BOM, EventLog, ReadResult, StoreError
from lesson_credit.core.log.store import Hasher as Hasher

WAIT_POLL_S = 0.05  # how often the file store looks for an append while waiting


class DuplicateSession(StoreError):
    """A second session event for an id the log already holds."""

    def __init__(self, session_id: str) -> None:
        super().__init__(f"session {session_id!r} is already recorded")
        self.session_id = session_id


@runtime_checkable
class EventStore(Protocol):
    """What a store is (see the module docstring); what else the engine asks of one (the reader's
    checks and cache, who wrote each session, exporting) are functions in core/log/stores.py."""

    @property
    def name(self) -> str:
        """How messages name the store: the log file's name, or the URL without its password."""
        ...

    def locked(self, timeout: float | None = None) -> contextlib.AbstractContextManager[None]:
        """The writers' lock (one holder at a time, across processes and threads; re-entered in the
        holding thread): a read of what is new, a check against it, and an append made inside it
        are not interleaved with another writer's. Waiting longer than `timeout` (default:
        `lock_timeout()`) is a LockHeld (a StoreUnavailable), nothing written. The file's is a file
        lock; a database's an advisory lock (core/log/pgstore.py). A session's record needs none on a
        database: its unique index refuses a second one (core/log/stores.py `record_lock`)."""
        ...

    def append(self, line: bytes) -> None:
        """Store one encoded event (exactly one line), validated as the reader validates it
        (InvalidEvent, a ValueError, when it is not a valid event); committed on return. A second
        session event for an id is refused (DuplicateSession): by a database's unique index
        always; by the file when called outside `locked()` (it then searches the log), while
        inside it the caller has checked against the log it read under the lock."""
        ...

    def size(self) -> int:
        """Where the log ends now (a position)."""
        ...

    def read_since(
        self,
        after: int,
        first: int,
        decode: Callable[[bytes], object] = ...,
        decode_lines: Callable[[memoryview], Sequence[object] | None] | None = None,
        hasher: Hasher | None = None,
    ) -> Iterator[ReadResult]:
        """`ReadResult`s of the events after position `after` (0: the start), numbered from `first`:
        a result's `end` is the position to read after next time, `lines` how many numbers it used.
        `decode` decodes one event's text, `decode_lines` many at once (None when one fails);
        `hasher` is fed exactly the bytes the read consumes (a database's: nothing)."""
        ...

    def wait(self, after: int, timeout: float) -> int:
        """The store's end position once it is past `after`, or when `timeout` seconds passed."""
        ...

    def session_record(self, session_id: str, *, unique: bool = False) -> dict[str, Any] | None:
        """The first session event stored for the id (the one that counts), as written; None if none.
        `unique`: the caller knows the id was stored once, so a search may start from the end."""
        ...

    def identity(self) -> str | None:
        """What the events are of, for what is derived from them: None for a file (its bytes are
        its identity: the reader hashes them), `database <uuid>` for a database (one dropped and
        created again has another)."""
        ...


def check_event(line: bytes) -> str | None:
    """Validate one encoded event (exactly one line); the session id when it is a session event.
    Raises InvalidEvent (a ValueError) when the line is not a valid event."""
    raw = checked_raw(line)
    return str(raw.session_id) if is_session(raw) else None


def checked_raw(line: bytes) -> RawEvent:
    """The decoded fields of one encoded event, validated as the reader validates it (InvalidEvent,
    a ValueError, when it is not a valid event; ValueError when it is not exactly one line)."""
    if not line.endswith(b"\n") or b"\n" in line[:-1]:
        raise ValueError("an event is exactly one line")
    raw = decode_raw(line.strip())
    validate(raw)  # the full validation the reader applies
    return raw


class JsonlStore(EventLog):
    """`state/lesson-thompson/sessions.jsonl`: the EventLog itself, plus the seam's extras."""

    def __init__(self, path: Path, guard: WriteGuard | None = None) -> None:
        super().__init__(path, guard)
        self._holding = threading.local()  # depth: inside `locked()` in this thread

    @property
    def name(self) -> str:
        return self.path.name

    def identity(self) -> str | None:
        return None  # the file's bytes are its identity: the reader hashes them

    @contextlib.contextmanager
    def locked(self, timeout: float | None = None) -> Iterator[None]:
        """The file lock (EventLog.locked), re-entered in the thread that holds it."""
        depth = getattr(self._holding, "depth", 0)
        with contextlib.nullcontext() if depth else super().locked(timeout):
            self._holding.depth = depth + 1
            try:
                yield
            finally:
                self._holding.depth = depth

    def read_since(
        self,
        after: int,
        first: int,
        decode: Callable[[bytes], object] = decode_event,
        decode_lines: Callable[[memoryview], Sequence[object] | None] | None = None,
        hasher: Hasher | None = None,
    ) -> Iterator[ReadResult]:
        """The lines after byte `after`. When the last line read had no newline yet (the byte
        before `after`), the newline the next writer puts first does not count as a line."""
        return self.read_chunks(
            after, first, decode=decode, continues_line=self._ends_open(after), decode_lines=decode_lines, hasher=hasher
        )

    def _ends_open(self, end: int) -> bool:
        if end <= 0:
            return False
        try:
            with open(self.path, "rb") as handle:
                handle.seek(end - 1)
                return handle.read(1) != b"\n"
        except OSError:
            return False

    def append(self, line: bytes) -> None:
        """Append one event after validating it. Outside `locked()` a second session event for an id
        is refused, which reads the whole log (for tools); inside it the caller has checked against
        the log it read under the lock (the Workspace's index)."""
        session_id = check_event(line)
        if getattr(self._holding, "depth", 0):
            self.append_locked(line)
            return
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
        """The log's lines as they are on disk (a last line without its newline gets one; a UTF-8 byte
        order mark before the first, no data, is left out as every read leaves it out)."""
        try:
            handle = open(self.path, "rb")  # noqa: SIM115 (closed below; a generator holds it across yields)
        except FileNotFoundError:
            return
        except OSError as exc:
            raise StoreError(f"{self.path}: {exc.strerror or exc}") from None
        with handle:
            for number, line in enumerate(handle):
                line = line.removeprefix(BOM) if number == 0 else line
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


def export_log(lines: Iterator[bytes], path: Path) -> int:
    """Write a store's event lines (core/log/stores.py `raw_lines`), in order, as a JSONL log at
    `path` (which must not exist): all at once, never half a file. Returns the number written."""
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
            for line in lines:
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
