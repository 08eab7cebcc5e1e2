"""The log on disk: locked single-write appends, tolerant incremental reads, atomic rewrites."""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, Protocol, cast

from msgspec import Struct, field

from lesson_credit.core.base.files import LockHeld, LockTimeout, WriteGuard, exclusive_lock, open_append
from lesson_credit.core.base.files import StoreError as StoreError
from lesson_credit.core.base.files import describe_os_error as _describe_os_error
from lesson_credit.core.base.logged import note_logged
from lesson_credit.core.base.safe_read import UnsafeFile, open_regular
from lesson_credit.core.log.events import InvalidEvent, decode_event

LOCK_TIMEOUT_S = 30.0  # how long a writer waits for another's lock (LOCK_TIMEOUT_ENV overrides it)
LOCK_TIMEOUT_ENV = "LESSON_CREDIT_LOCK_TIMEOUT"


def lock_timeout() -> float:
    """Seconds a writer waits for the log's lock: $LESSON_CREDIT_LOCK_TIMEOUT, else LOCK_TIMEOUT_S."""
    text = os.environ.get(LOCK_TIMEOUT_ENV, "").strip()
    if not text:
        return LOCK_TIMEOUT_S
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not 0.0 <= value <= 86400.0:  # NaN fails both
        raise StoreError(f"{LOCK_TIMEOUT_ENV} must be a number of seconds in [0, 86400], got {text[:40]!r}")
    return value


# A big log is decoded this much at a time. Under glibc's largest mmap threshold (32 MB): a freed chunk's memory
# is then reused for the next, where each 32 MB read mapped fresh pages (their faults and zeroing: the cold read
# of a million sessions 10.3-10.5 s against 9.0-9.1 s, reading a half log's bytes 0.30-0.70 s against 0.13-0.16 s).
CHUNK_BYTES = 16 * 1024 * 1024
BOM = b"\xef\xbb\xbf"  # a UTF-8 byte order mark (an editor on Windows saves one): no data at the log's start


class LogProblem(Struct, frozen=True):
    line: int
    reason: str
    session_id: str | None = None  # the session the line is about, when known

    def __str__(self) -> str:
        return f"line {self.line}: {self.reason}"


class ReadResult(Struct):
    """Events decoded from a stretch of the log, with the line number each came from."""

    events: list[tuple[int, Any]] = field(default_factory=list)  # (line number, decoded)
    problems: list[LogProblem] = field(default_factory=list)
    end: int = 0  # byte offset just after the last complete line consumed
    lines: int = 0  # number of complete lines consumed (for numbering the next chunk)
    tail_problem: LogProblem | None = None  # an unterminated last line that does not parse
    partial: bool = False  # the last line consumed had no newline yet
    offsets: list[int] | None = None  # where each event's line starts in the log (None: not known)


def parse_chunk(
    data: bytes,
    start: int,
    first_line: int,
    at_eof: bool,
    decode: Callable[[bytes], Any] = decode_event,
    continues_line: bool = False,
    decode_lines: Callable[[memoryview], Sequence[Any] | None] | None = None,
    size: int | None = None,
) -> ReadResult:
    """Decode complete lines of `data[:size]` (which begins at byte `start`, line `first_line`; `size`
    None: all of `data`). What follows `size` is not looked at (a reader's next chunk begins there).

    An unterminated last line is consumed when it parses (a writer that forgot the final
    newline; `partial` is then set, and the next read passes `continues_line` so that the
    newline the next writer puts first does not count as a line). One that does not parse is
    reported as truncated and left for the next read, since a writer may still be finishing it.

    `decode_lines`, when given, decodes all complete lines in one call. Its values are
    numbered line by line only when every line is known to hold exactly one value: no line
    is blank or starts with whitespace, and there are as many values as lines. Otherwise (or
    when it fails) each line is decoded on its own, so a bad line is reported by number. A UTF-8
    byte order mark at the log's byte 0 is no data: the first line starts after it.
    """
    result = ReadResult(end=start, lines=0, offsets=[])
    offsets = cast(list[int], result.offsets)
    size = len(data) if size is None else size
    offset = 0
    if continues_line and data.startswith(b"\n"):
        offset = 1
        result.end = start + 1
    elif start == 0 and data.startswith(BOM):
        offset = len(BOM)
        result.end = len(BOM)
    body_end = max(data.rfind(b"\n", 0, size) + 1, offset)
    tail = data[body_end:size]
    events = result.events
    decoded = None
    n_lines = 0
    starts: list[int] = []
    if decode_lines is not None and body_end > offset:
        n_lines, one_per_line, starts = _line_layout(data, offset, body_end, start + offset)
        if one_per_line:
            decoded = decode_lines(memoryview(data)[offset:body_end])
        if decoded is not None and len(decoded) != n_lines:
            decoded = None
    else:
        n_lines = data.count(b"\n", offset, body_end)
    if decoded is not None:
        events.extend(zip(range(first_line, first_line + n_lines), decoded, strict=True))
        offsets.extend(starts)
    else:
        pieces = data[offset:body_end].split(b"\n")
        pieces.pop()  # after the last newline: b""
        at = start + offset
        for line, piece in enumerate(pieces, start=first_line):
            stripped = piece.strip()
            line_start, at = at, at + len(piece) + 1
            if not stripped:  # JSON allows surrounding whitespace; a blank line is skipped
                continue
            try:
                events.append((line, decode(stripped)))
                offsets.append(line_start)
            except InvalidEvent as exc:
                result.problems.append(LogProblem(line, str(exc)))
    line_no = first_line + n_lines
    result.lines = n_lines
    result.end = start + body_end
    if tail.strip():
        try:
            events.append((line_no, decode(tail.strip())))
            offsets.append(start + body_end)
        except InvalidEvent as exc:
            if at_eof:
                result.tail_problem = LogProblem(line_no, f"truncated last line (crash mid-append?): {exc}")
            return result
        result.end = start + size
        result.lines += 1
        result.partial = True
    return result


def _line_layout(data: bytes, start: int, end: int, at: int) -> tuple[int, bool, list[int]]:
    """How many lines data[start:end] holds (it ends with a newline), whether each one
    begins with `{` and ends with `}` right before its newline, and where each starts (data[start]
    being byte `at` of the log).

    Then values decoded from the whole stretch are one per line exactly when there are as many
    values as lines: no value can span a newline (after a `}` that does not end the value, JSON
    needs `,`, `}` or `]`, never the `{` that opens the next line), so each line begins a value
    of its own, and equal counts leave no line a second one. Anything else (a value split over
    lines, `{...}{...}` glued on one line, CRLF, indentation) is decoded line by line, where it
    is a bad line with its number, as on every other read path. One vectorised pass."""
    import numpy as np

    raw = np.frombuffer(data, dtype=np.uint8, count=end - start, offset=start)
    newlines = np.flatnonzero(raw == ord("\n"))
    line_starts = np.r_[0, newlines[:-1] + 1]
    framed = bool((raw[line_starts] == ord("{")).all()) and bool((raw[newlines - 1] == ord("}")).all())
    return len(newlines), framed, (line_starts + at).tolist()


class Hasher(Protocol):
    """What a read feeds the bytes it consumes (the reader's prefix check's digest)."""

    def update(self, data: memoryview, /) -> None: ...

    def hexdigest(self) -> str: ...


def lock_file(log_path: Path) -> Path:
    """The writers' lock file of the log at `log_path` (beside it, `.lock` added)."""
    return log_path.with_name(log_path.name + ".lock")


class EventLog:
    """`sessions.jsonl`: append-only, one locked write + fsync per event."""

    def __init__(self, path: Path, guard: WriteGuard | None = None) -> None:
        """`guard`: where the log, its lock and `.torn` may be written (the workspace's; by
        default the log's own folder): never through a symlink leading out of it."""
        self.path = Path(path)
        self.lock_path = lock_file(self.path)
        self.guard = guard if guard is not None else WriteGuard.of(self.path.parent)
        self.set_aside: list[int] = []  # the torn last lines appends moved to `.torn` (their bytes): for writers to say

    @contextlib.contextmanager
    def locked(self, timeout: float | None = None) -> Iterator[None]:
        """Hold the writers' lock: read-validate-append sequences happen inside it. Waiting longer
        than `timeout` (default: `lock_timeout()`) for another writer is a temporary failure
        (LockHeld, a StoreUnavailable: exit 75): nothing was written, a retry may succeed."""
        timeout = lock_timeout() if timeout is None else timeout
        # Only taking the lock is the lock's failure: an error inside the block is the block's own.
        lock_path = self.guard.target(self.lock_path)  # StoreError: a link out of the workspace
        held = contextlib.ExitStack()
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            held.enter_context(exclusive_lock(lock_path, timeout))
        except LockTimeout:
            said = f"{self.lock_path}: another writer held the lock for {timeout:g} s; nothing written, retry later"
            raise LockHeld(said, self.lock_path, timeout) from None
        except OSError as exc:
            raise StoreError(_describe_os_error(exc, self.lock_path)) from None
        with held:  # leaving it releases the lock
            yield

    def _repair_tail(self, fd: int, size: int) -> tuple[int, bytes]:
        """(size, prefix) before an append, for a log that does not end in a newline.

        Under the lock no writer is mid-append, so an unterminated last line is either a
        complete event some tool wrote without its newline (kept: the append starts with one)
        or what a writer killed mid-write left behind. That torn event was never acknowledged;
        it is cut off, so the log holds only whole events, and kept in `<log>.torn` for a look.
        A byte order mark at byte 0 is no data and stays: readers have read past it (a log of a
        BOM alone, an editor's empty file, takes its first event right after it).
        """
        start = size
        while start > 0:
            chunk = min(64 * 1024, start)
            data = os.pread(fd, chunk, start - chunk)
            newline = data.rfind(b"\n")
            if newline != -1:
                start = start - chunk + newline + 1
                break
            start -= chunk
        tail = os.pread(fd, size - start, start)
        if start == 0 and tail.startswith(BOM):
            start, tail = len(BOM), tail[len(BOM) :]
            if not tail:
                return size, b""
        if not tail.strip():  # blanks after the last newline: no event begun, cut without a word
            os.ftruncate(fd, start)
            return start, b""
        try:
            decode_event(tail.strip())
            return size, b"\n"
        except InvalidEvent:
            torn = self.path.with_name(self.path.name + ".torn")
            with os.fdopen(open_append(torn, self.guard), "ab") as handle:
                handle.write(tail + b"\n")
            os.ftruncate(fd, start)
            self.set_aside.append(len(tail))
            return start, b""

    def append_locked(self, line: bytes) -> None:
        """Append one encoded event; the caller holds `locked()`. One write, then fsync."""
        if not line.endswith(b"\n") or b"\n" in line[:-1]:
            raise ValueError("an event is exactly one line")
        fd = open_append(self.path, self.guard, os.O_RDWR)
        size = 0
        try:
            size = os.fstat(fd).st_size
            if size > 0 and os.pread(fd, 1, size - 1) != b"\n":
                size, prefix = self._repair_tail(fd, size)
                line = prefix + line
            written = os.write(fd, line)
            if written != len(line):
                # A short write on a regular file means the disk filled; undo our part.
                os.ftruncate(fd, size)
                raise StoreError(f"{self.path}: short write (disk full?); nothing appended")
            os.fsync(fd)
            note_logged()
        except OSError as exc:
            with contextlib.suppress(OSError):
                if os.fstat(fd).st_size > size:
                    os.ftruncate(fd, size)
            raise StoreError(_describe_os_error(exc, self.path)) from None
        finally:
            os.close(fd)

    def append(self, line: bytes) -> None:
        with self.locked():
            self.append_locked(line)

    def stat(self) -> os.stat_result | None:
        """The log's stat (None while it does not exist); StoreError when it is not a regular file."""
        try:
            st = os.stat(self.path)
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise StoreError(_describe_os_error(exc, self.path, reading=True)) from None
        if not stat.S_ISREG(st.st_mode):
            try:
                os.close(open_regular(self.path))
            except UnsafeFile as exc:
                raise StoreError(str(exc)) from None
            except OSError as exc:
                raise StoreError(_describe_os_error(exc, self.path, reading=True)) from None
        return st

    def size(self) -> int:
        try:
            return self.path.stat().st_size
        except FileNotFoundError:
            return 0

    def continued(self, end: int) -> bool:
        """Whether the last line read, ending at byte `end` without its newline, has since been
        continued (bytes appended right after it): it is then one longer line, to be read again."""
        if end <= 0:
            return False
        try:
            with open(self.path, "rb") as handle:
                handle.seek(end - 1)
                pair = handle.read(2)
        except OSError:
            return True
        return len(pair) == 2 and pair[:1] != b"\n" and pair[1:] != b"\n"

    def read_chunks(
        self,
        start: int,
        first_line: int,
        decode: Callable[[bytes], Any] = decode_event,
        continues_line: bool = False,
        decode_lines: Callable[[memoryview], Sequence[Any] | None] | None = None,
        chunk_bytes: int = CHUNK_BYTES,
        hasher: Hasher | None = None,
        stop: int | None = None,
    ) -> Iterator[ReadResult]:
        """Decode the log from byte `start` (a line boundary) to its end (or to byte `stop`, just
        after a newline), whole lines at a time in chunks of about `chunk_bytes`, so a big log is
        never held decoded all at once. Each result continues where the previous one ended; only
        the last may hold a partial line. `hasher` is fed exactly the bytes the results consume."""
        try:
            handle = os.fdopen(open_regular(self.path), "rb")  # closed below; a generator holds it across yields
        except FileNotFoundError:
            yield ReadResult(end=0)
            return
        except UnsafeFile as exc:
            raise StoreError(str(exc)) from None
        except OSError as exc:
            raise StoreError(_describe_os_error(exc, self.path, reading=True)) from None
        with handle:
            handle.seek(start)
            carry = b""
            position, line, continues = start, first_line, continues_line
            left = None if stop is None else stop - start
            while True:
                want = chunk_bytes if left is None else min(chunk_bytes, left)
                try:
                    block = handle.read(want)
                except OSError as exc:
                    raise StoreError(_describe_os_error(exc, self.path, reading=True)) from None
                if left is not None:
                    left -= len(block)
                at_eof = len(block) < want or left == 0  # a regular file reads short only at its end
                data = carry + block if carry else block
                carry = b""
                size = len(data)
                if not at_eof:
                    cut = data.rfind(b"\n") + 1
                    if cut == 0:  # a line longer than a chunk: read on
                        carry = data
                        continue
                    if cut < size:  # the unfinished line after the cut: read again with the next chunk, not copied
                        handle.seek(cut - size, os.SEEK_CUR)
                        left = None if left is None else left + size - cut
                    size = cut
                result = parse_chunk(
                    data,
                    position,
                    line,
                    at_eof=at_eof,
                    decode=decode,
                    continues_line=continues,
                    decode_lines=decode_lines,
                    size=size,
                )
                if hasher is not None:
                    hasher.update(memoryview(data)[: result.end - position])
                yield result
                if at_eof:
                    return
                position, line, continues = result.end, line + result.lines, False
