"""Reading a big log from its start on two cores.

A child process (forked: it shares the code and the modules loaded) decodes and indexes the second
half of the log while this process reads the first; its index comes back through a temporary file with a
digest of the bytes it read and is appended (`LogIndex.add_part`) once this process has hashed the
same bytes and found the digest equal. Whatever goes wrong (the child fails, dies or disagrees; the
half held a problem, a prior or a retire event, or a session id of the first half) leaves the index
as the first half made it: the second half is then read here, in order, as any read goes on.
"""

from __future__ import annotations

import contextlib
import os
import pickle
import struct
import tempfile
import threading
from collections.abc import Callable, Iterator, Sequence
from typing import Any, BinaryIO, TypeVar

import xxhash

from lesson_credit.core.base.safe_read import open_regular
from lesson_credit.core.log.events import decode_raw
from lesson_credit.core.log.index import LogIndex
from lesson_credit.core.log.logcheck import PrefixDigest
from lesson_credit.core.log.store import CHUNK_BYTES, EventLog
from lesson_credit.core.log.vocab import decode_lines

# A smaller log is read in one process. Parse + fold of a log's first bytes from scratch, one process
# against two (medians of 5, alternated): 4 MB 51 against 53 ms, 8 MB 112 against 97 ms, 16 MB 235 against
# 172 ms, 96 MB 1.16 against 0.86 s.
PARALLEL_MIN_BYTES = 8 << 20
# Hundredths of the log this process reads: the child's half ends with writing its index (0.3-0.5 s at a
# million sessions), this one's with hashing the child's bytes (about as long), and with equal halves the
# child still finished 0.7-1.3 s after this process had (measured at a million sessions, 3 runs).
FIRST_SHARE = 52
_DIGEST = struct.Struct("<Q")
T = TypeVar("T")
R = TypeVar("R")


class _Forked:
    """A forked child (it shares the code and the modules loaded) running `write` on a temporary file:
    not a pipe, which would hold the child until this process reads, after its own work."""

    def __init__(self, write: Callable[[BinaryIO], None]) -> None:
        self._out: BinaryIO | None = tempfile.TemporaryFile()
        try:
            self.pid = os.fork()
        except OSError:  # no memory or processes left for a child: the caller works alone
            self._out.close()
            raise
        if self.pid == 0:  # the child: its results to the file, then out without running any cleanup
            code = 1
            try:
                with os.fdopen(os.dup(self._out.fileno()), "wb") as file:
                    write(file)
                code = 0
            finally:
                os._exit(code)

    def _done(self) -> tuple[BinaryIO, int] | None:
        """The file, at its start, and the child's exit code, once it has exited (None: closed)."""
        if self._out is None:
            return None
        _, status = os.waitpid(self.pid, 0)
        out, self._out = self._out, None
        out.seek(0)
        return out, os.waitstatus_to_exitcode(status)

    def close(self) -> None:
        """Stop the child if it is still running (a read that failed or was interrupted) and reap it."""
        if self._out is None:
            return
        self._out.close()
        self._out = None
        _stop(self.pid)


class Half(_Forked):
    """The child process reading [split, stop) of the log; its result is written while this process
    still reads."""

    def __init__(self, log: EventLog, split: int, stop: int) -> None:
        self.log, self.split, self.stop = log, split, stop
        super().__init__(lambda file: _child(log, split, stop, file))

    def take(self, index: LogIndex, hasher: PrefixDigest) -> PrefixDigest | None:
        """Append the child's index to `index` (read up to `split`); the digest of the log through
        `stop` (`hasher` fed the second half) when done, None (the index unchanged) otherwise."""
        if index.end != self.split or hasher.end != self.split:
            return None
        fed = hasher.copy()
        digest = self._digest(fed)  # while the child may still be reading: the same bytes either way
        data = self._collect()
        if data is None or len(data) < _DIGEST.size or _DIGEST.unpack_from(data)[0] != digest:
            return None
        try:
            part = pickle.loads(memoryview(data)[_DIGEST.size :])
        except Exception:  # a child cut off mid-write
            return None
        if part is None or part["end"] != self.stop:
            return None
        return fed if index.add_part(part) else None

    def _digest(self, fed: PrefixDigest) -> int:
        """The xxh3 digest of [split, stop) as this process reads it, feeding `fed` the same bytes."""
        plain = xxhash.xxh3_64()
        with os.fdopen(open_regular(self.log.path), "rb") as handle:
            handle.seek(self.split)
            left = self.stop - self.split
            while left > 0:
                block = handle.read(min(CHUNK_BYTES, left))
                if not block:
                    break
                plain.update(block)
                fed.update(block)
                left -= len(block)
        return plain.intdigest() if left == 0 else -1

    def _collect(self) -> bytes | None:
        """What the child wrote, once it has exited well; None otherwise."""
        done = self._done()
        if done is None:
            return None
        with done[0] as out:
            return out.read() if done[1] == 0 else None


def start(log: object, start_at: int, size: int) -> Half | None:
    """A child reading the second half of a big log read from its start; None for another store,
    a small log, a read from a later position, a process with threads (fork copies only the
    calling thread: a lock another holds would stay locked in the child) or no idle core."""
    if not isinstance(log, EventLog) or start_at or size < PARALLEL_MIN_BYTES or not can_fork():
        return None
    points = _split_points(log, size)
    try:
        return None if points is None else Half(log, *points)
    except OSError:
        return None


def can_fork() -> bool:
    """Whether a child may help now: a process without threads (fork copies only the calling thread:
    a lock another holds would stay locked in the child) and an idle core."""
    return hasattr(os, "fork") and threading.active_count() == 1 and idle_core()


def map_halves(fn: Callable[[T], R], items: Sequence[T], meanwhile: Callable[[], None] | None = None) -> Iterator[R]:
    """`fn` of each item, in order: of the larger half of `items` (the later ones) in a forked child
    (`can_fork`) while this process computes the first ones' and then runs `meanwhile` (if given;
    with no child, it runs first). The child writes its results to a temporary file as it has them
    (a pipe would hold it at its first result until this process came to read it); whatever it did
    not deliver (it failed, died or cannot be had) is computed here: the results are the same either way."""
    cut = (len(items) - 1) // 2
    child = None
    if cut and can_fork():
        with contextlib.suppress(OSError):  # no file or no child to be had: all computed here
            child = _Mapper(fn, items[cut:])
    try:
        for item in items[: cut if child is not None else 0]:
            yield fn(item)
        if meanwhile is not None:
            meanwhile()
        done = 0 if child is None else cut
        for result in () if child is None else child.results():
            yield result
            done += 1
        for item in items[done:]:
            yield fn(item)
    finally:
        if child is not None:
            child.close()


class _Mapper(_Forked):
    """A forked child writing `fn` of each item to a temporary file, one pickle each."""

    def __init__(self, fn: Callable[[Any], Any], items: Sequence[Any]) -> None:
        def write(file: BinaryIO) -> None:
            for item in items:
                pickle.dump(fn(item), file, protocol=pickle.HIGHEST_PROTOCOL)

        super().__init__(write)

    def results(self) -> Iterator[Any]:
        """The child's results once it has exited, up to the first that is not whole."""
        done = self._done()
        if done is None:
            return
        with done[0] as out:
            while True:
                try:
                    result = pickle.load(out)
                except Exception:  # the end, or a child cut off mid-write
                    return
                yield result


def idle_core(loadavg: str = "/proc/loadavg") -> bool:
    """Whether a second core is free now: no more processes running than the cores usable less one
    (this one among them; Linux's /proc/loadavg, elsewhere the last minute's load average). On a busy
    machine the two processes only share the cores others use, and their work together is some 15%
    more than one process's (at a million sessions 23 s of CPU against 20 s: with 8 processes running
    on 2 cores the two-process read took longer than the one-process read)."""
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        cores = os.cpu_count() or 1
    try:
        with open(loadavg, "rb") as handle:
            running = float(handle.read(256).split()[3].split(b"/")[0])
    except (OSError, ValueError, IndexError):
        try:
            running = os.getloadavg()[0] + 1
        except OSError:
            return False
    return cores >= 2 and running <= cores - 1


def _split_points(log: EventLog, size: int) -> tuple[int, int] | None:
    """(split, stop): just after the first newline from `FIRST_SHARE` of the log, and just after its last
    newline (a last line without one is read in order, with its checks); None when there are none."""
    middle_at = size * FIRST_SHARE // 100
    try:
        with os.fdopen(open_regular(log.path), "rb") as handle:
            handle.seek(middle_at)
            middle = handle.read(1 << 20)
            tail_at = max(size - (1 << 20), 0)
            handle.seek(tail_at)
            tail = handle.read(size - tail_at)
    except OSError:
        return None
    cut, last = middle.find(b"\n"), tail.rfind(b"\n")
    if cut < 0 or last < 0:
        return None
    split, stop = middle_at + cut + 1, tail_at + last + 1
    return (split, stop) if split < stop else None


def _child(log: EventLog, split: int, stop: int, file: BinaryIO) -> None:
    """Read [split, stop) into an index of its own and write its digest and `part()` to `file`."""
    index = LogIndex()
    plain = xxhash.xxh3_64()
    for result in log.read_chunks(
        split, 1, decode=decode_raw, decode_lines=decode_lines, hasher=plain, stop=stop, continues_line=False
    ):
        index.problems.extend(result.problems + index.add_many(result.events, result.offsets))
        index.end, index.lines = result.end, index.lines + result.lines
    part: Any = index.part() if index.end == stop else None
    file.write(_DIGEST.pack(plain.intdigest()))
    pickle.dump(part, file, protocol=pickle.HIGHEST_PROTOCOL)


def _stop(pid: int) -> None:
    """Kill the child `pid` (if it still runs) and reap it. (signal imported here: its enums cost a
    command that reads no big log ~0.5 ms.)"""
    import signal

    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    os.waitpid(pid, 0)
