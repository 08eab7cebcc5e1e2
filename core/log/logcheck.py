"""What a reader knows of the log bytes it has read, and whether they are still there.

A reader keeps a `PrefixDigest` of every byte it has consumed: an xxh3-64 of each 1 MB block (the
last one partial). Before trusting that prefix again it needs to know the bytes are unchanged, so
an edit anywhere in it (a same-length rewrite, a `git checkout`, a copy over the file, a cut) makes
it start over, never print stale numbers. Three ways, cheapest first:

- The log's stat is the one of the last check, in this process (a poll of an idle log then costs a
  `stat`). Only for a big log: two same-length writes within one tick of the file system's clock
  leave the stat unchanged, so a small one (under ALWAYS_VERIFY_BYTES) is checked again otherwise.
- The seal (`.cache/log-seal`) vouches for the log as it is now. After appending under the writers'
  lock, or after hashing a log that had been quiet for QUIET_S, a reader writes down the log's stat
  and its block digests. A later reader whose stat is that one knows the whole file without reading
  it: it compares block digests, and hashes again only the last, partial block of its own prefix.
  A seal counts only while the log's ctime is older than the seal file itself (so that an edit in the
  same tick of a coarse clock, which would keep the stat, cannot hide behind it); its writer waits
  out that tick. Anything our appends did not make (an edit, a cut, another program's append)
  changes the stat, so the seal no longer counts. A writer skips hashing after its append only when the
  log's stat just before it was still the one it read the log at (`unchanged`): an edit made while it
  held the lock (another program takes no lock of ours) is hashed again rather than sealed.
- Otherwise every block is hashed again: the full verification, at memory speed.
"""

from __future__ import annotations

import contextlib
import os
import struct
import time
from array import array
from pathlib import Path
from typing import Protocol

import xxhash

from lesson_credit.core.base.files import StoreError, open_cache, write_cache
from lesson_credit.core.base.safe_read import UnsafeFile, open_regular
from lesson_credit.core.base.sealed import seal, unseal
from lesson_credit.core.log.store import EventLog, Hasher

ALWAYS_VERIFY_BYTES = 16 * 1024 * 1024
BLOCK_BYTES = 1 << 20  # the log is digested per block of this many bytes
QUIET_S = 2.0  # a reader vouches only for a log unchanged this long (coarser than any file system clock)
SEAL_NAME = "log-seal"
SEAL_MAGIC = b"lesson-credit log-seal 1\n"
SEAL_MAX_BYTES = 64 * 1024 * 1024
SEAL_TICK_WAIT_S = 0.1  # longest wait for the seal file's clock to pass the log's ctime
_SEAL_HEAD = "<QQQqqQ"  # the log's dev, inode, size, mtime_ns, ctime_ns; the digest of its partial block

Signature = tuple[int, int, int, int, int]  # dev, inode, size, mtime_ns, ctime_ns


class PrefixDigest:
    """xxh3-64 digests of each 1 MB block of the first `end` bytes of the log (the last one
    partial). Fed the bytes in order, as they are read."""

    __slots__ = ("blocks", "end", "_partial")

    def __init__(self) -> None:
        self.blocks = array("Q")  # one per full block
        self.end = 0
        self._partial = xxhash.xxh3_64()  # of [len(blocks) * BLOCK_BYTES, end)

    def update(self, data: bytes | bytearray | memoryview) -> None:
        view = memoryview(data).cast("B")
        at = 0
        while at < len(view):
            take = min(BLOCK_BYTES - self.end % BLOCK_BYTES, len(view) - at)
            self._partial.update(view[at : at + take])
            self.end += take
            at += take
            if self.end % BLOCK_BYTES == 0:
                self.blocks.append(self._partial.intdigest())
                self._partial.reset()

    @property
    def partial(self) -> int:
        return self._partial.intdigest()

    def hexdigest(self) -> str:
        """The whole digest as text (what the parsed-log cache stores)."""
        return f"{self.end:x}:{self.partial:016x}:{self.blocks.tobytes().hex()}"

    def copy(self) -> PrefixDigest:
        out = PrefixDigest()
        out.blocks = array("Q", self.blocks)
        out.end = self.end
        out._partial = self._partial.copy()
        return out

    def same(self, other: PrefixDigest) -> bool:
        return self.end == other.end and self.partial == other.partial and self.blocks == other.blocks


def parse_digest(text: str) -> tuple[int, int, array[int]]:
    """(end, digest of the partial block, full block digests) of `PrefixDigest.hexdigest()` text."""
    try:
        end_text, partial_text, blocks_text = text.split(":")
        blocks = array("Q")
        blocks.frombytes(bytes.fromhex(blocks_text))
        end, partial = int(end_text, 16), int(partial_text, 16)
    except (ValueError, OverflowError):
        raise ValueError("not a prefix digest") from None
    if end < 0 or len(blocks) != end // BLOCK_BYTES:
        raise ValueError("not a prefix digest")
    return end, partial, blocks


def digest_of(log: EventLog, end: int) -> PrefixDigest | None:
    """The digest of the log's first `end` bytes, every byte read (None when it has fewer)."""
    digest = PrefixDigest()
    if end <= 0:
        return digest
    try:
        fd = open_regular(log.path)
    except (OSError, UnsafeFile):
        return None
    with os.fdopen(fd, "rb", buffering=0) as handle:
        buffer = memoryview(bytearray(min(end, BLOCK_BYTES)))
        while digest.end < end:
            got = handle.readinto(buffer[: min(end - digest.end, len(buffer))])
            if not got:
                return None
            digest.update(buffer[:got])
    return digest


def _read(log: EventLog, start: int, stop: int) -> bytes | None:
    try:
        fd = open_regular(log.path)
    except (OSError, UnsafeFile):
        return None
    try:
        data = os.pread(fd, stop - start, start)
    except OSError:
        return None
    finally:
        os.close(fd)
    return data if len(data) == stop - start else None


def signature_of(log: EventLog) -> Signature | None:
    st = log.stat()  # StoreError for a FIFO, a device, a directory
    if st is None:
        return None
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


class Seal:
    """`.cache/log-seal`: the log's stat, and the digest of the whole file as it was at that stat."""

    def __init__(self, signature: Signature, partial: int, blocks: array[int], written_ns: int) -> None:
        self.signature = signature
        self.partial = partial
        self.blocks = blocks
        self.written_ns = written_ns  # the seal file's mtime

    @staticmethod
    def path_of(log: EventLog) -> Path:
        return log.path.parent / ".cache" / SEAL_NAME

    @classmethod
    def read(cls, log: EventLog) -> Seal | None:
        fd = open_cache(cls.path_of(log))
        if fd is None:
            return None
        try:
            written_ns = os.fstat(fd).st_mtime_ns
            with os.fdopen(fd, "rb") as handle:
                data = handle.read(SEAL_MAX_BYTES + 1)
            payload = unseal(SEAL_MAGIC, data)
            head = struct.calcsize(_SEAL_HEAD)
            fields = struct.unpack(_SEAL_HEAD, payload[:head])
            blocks = array("Q")
            blocks.frombytes(payload[head:])
        except (OSError, ValueError, struct.error):
            return None
        signature: Signature = (fields[0], fields[1], fields[2], fields[3], fields[4])
        if len(blocks) != signature[2] // BLOCK_BYTES:
            return None
        return cls(signature, fields[5], blocks, written_ns)

    def vouches(self, signature: Signature | None) -> bool:
        """Whether the log, at this stat, is the file sealed: the same stat, and the log's last change
        in an earlier tick of the file system's clock than the seal was written in."""
        return signature is not None and signature == self.signature and signature[4] < self.written_ns

    def agrees(self, log: EventLog, digest: PrefixDigest) -> bool:
        """Whether `digest` is of a prefix of the sealed file (which the caller knows is the log now)."""
        full = digest.end // BLOCK_BYTES
        if digest.end > self.signature[2] or self.blocks[:full] != digest.blocks:
            return False
        if digest.end % BLOCK_BYTES == 0:
            return True
        if digest.end == self.signature[2]:
            return self.partial == digest.partial
        tail = _read(log, full * BLOCK_BYTES, digest.end)
        return tail is not None and xxhash.xxh3_64_intdigest(tail) == digest.partial


def write_seal(log: EventLog, signature: Signature, digest: PrefixDigest) -> bool:
    """Seal the log at `signature` (whose whole file `digest` is of). The seal file is then made
    younger than the log's ctime (waiting out a coarse clock's tick), and the log stat'ed again: if it
    moved meanwhile, the seal is removed. Best effort: False when no seal could be left."""
    path = Seal.path_of(log)
    if not Path(os.path.realpath(path.parent)).is_relative_to(os.path.realpath(log.path.parent)):
        return False  # the caches' folder links out of the log's folder: nothing is written there
    payload = struct.pack(_SEAL_HEAD, *signature, digest.partial) + digest.blocks.tobytes()
    if not write_cache(path, seal(SEAL_MAGIC, payload)):
        return False  # set aside (a read-only disk, a directory in its place): nothing of ours to remove
    try:
        deadline = time.monotonic() + SEAL_TICK_WAIT_S
        while os.stat(path).st_mtime_ns <= signature[4]:
            if time.monotonic() > deadline:
                raise OSError("the file system's clock did not move")
            time.sleep(0.002)
            os.utime(path)
        if signature_of(log) == signature:
            return True
    except (OSError, ValueError):
        pass
    with contextlib.suppress(OSError):
        os.unlink(path)
    return False


def resume(log: EventLog, text: str) -> PrefixDigest | None:
    """The digest `text` describes, checked against the log and ready to be fed what follows (None
    when the log no longer starts with those bytes). The full blocks are vouched for by the seal, or
    hashed again; the last, partial block is read and hashed again either way."""
    end, partial, blocks = parse_digest(text)
    signature = signature_of(log)
    if signature is None or signature[2] < end:
        return None
    full = len(blocks)
    sealed = Seal.read(log)
    if full and not (sealed is not None and sealed.vouches(signature) and sealed.blocks[:full] == blocks):
        again = digest_of(log, full * BLOCK_BYTES)
        if again is None or again.blocks != blocks:
            return None
    digest = _with_tail(log, blocks, end)
    return digest if digest is not None and digest.partial == partial else None


def _with_tail(log: EventLog, blocks: array[int], end: int) -> PrefixDigest | None:
    """The digest of the log's first `end` bytes from the digests of its full blocks (`blocks`, at
    least `end // BLOCK_BYTES` of them), the partial block read and hashed (None: it cannot be read)."""
    digest = PrefixDigest()
    full = end // BLOCK_BYTES
    digest.blocks = array("Q", blocks[:full])
    digest.end = full * BLOCK_BYTES
    tail = _read(log, digest.end, end)
    if tail is None:
        return None
    digest.update(tail)
    return digest


class PrefixCheck:
    def __init__(self, log: EventLog) -> None:
        self.log = log
        self.hasher = PrefixDigest()  # of the bytes consumed so far, [0, end)
        self._seen: Signature | None = None  # the log's stat when they were last known intact
        self._trusted = False
        self._own = False  # this read follows our own append under the writers' lock
        self._sealed: Signature | None = None  # the stat a seal (ours or found) vouches for
        self._started_ns = 0  # wall clock when this read took the log's stat

    def signature(self) -> Signature | None:
        self._started_ns = time.time_ns()
        return signature_of(self.log)

    def reset(self) -> None:
        self.hasher = PrefixDigest()
        self._seen = None
        self._trusted = False

    def adopt(self, hasher: Hasher) -> None:
        """Continue from a digest already verified against the log (a loaded cache's: the file's is a
        `PrefixDigest`)."""
        if not isinstance(hasher, PrefixDigest):
            raise TypeError("a log file's check continues from a PrefixDigest only")
        self.hasher = hasher

    def trust_once(self) -> None:
        """The next check passes without hashing: the caller appended under the writers' lock
        and nobody else (no writer of ours) touched the prefix meanwhile."""
        self._trusted = True

    def unchanged(self) -> bool:
        """Whether the log's stat is still the one it was last found intact at. A writer asks before its
        append under the writers' lock: another program, which takes no lock of ours, may have edited the
        log since it was read, and the prefix read is then no longer to be trusted after the append. Nothing
        read (a log not there yet) is a prefix nothing can change. False when the stat cannot be taken (the
        append then says why)."""
        if self.hasher.end == 0:
            return True
        try:
            return self._seen is not None and signature_of(self.log) == self._seen
        except StoreError:
            return False

    def intact(self, end: int, signature: Signature | None) -> bool:
        """Whether the log's first `end` bytes are still those that were hashed, and still end its lines."""
        trusted, self._trusted = self._trusted, False
        self._own = trusted
        if end <= 0 or trusted:
            return True
        if self.log.continued(end):  # the same bytes, but the last of them now begin a longer line
            return False
        if signature is not None and signature == self._seen and end > ALWAYS_VERIFY_BYTES:
            return True
        found = Seal.read(self.log)
        if found is not None and found.vouches(signature) and found.agrees(self.log, self.hasher):
            self._sealed = signature
            return True
        again = digest_of(self.log, end)
        return again is not None and again.same(self.hasher)

    def vouch(self, end: int) -> str | None:
        """What identifies the log's first `end` bytes, as read and checked (for data derived from
        them to carry); None unless that is what this check has read."""
        return self.hasher.hexdigest() if end == self.hasher.end else None

    def vouches(self, end: int, vouch: str) -> bool:
        """Whether the log's first `end` bytes, within those this check has read and checked, are the
        ones `vouch` (a `vouch(end)` of some reader, maybe another process's) was of."""
        if end > self.hasher.end or self.log.continued(end):
            return False
        if end == self.hasher.end:
            return vouch == self.hasher.hexdigest()
        digest = _with_tail(self.log, self.hasher.blocks, end)
        return digest is not None and vouch == digest.hexdigest()

    def checked(self, signature: Signature | None, end: int) -> None:
        """The log was found intact at this stat (taken before reading on) and read to `hasher.end`.
        When that is the whole file, seal it for the next reader (see the module docstring)."""
        self._seen = signature
        self._trusted = False
        own, self._own = self._own, False
        if signature is None or signature == self._sealed or self.hasher.end != signature[2]:
            return
        if not own and signature[4] + QUIET_S * 1e9 > self._started_ns:
            return  # changed too recently for a reader to vouch for what it hashed
        found = Seal.read(self.log)
        if found is not None and found.vouches(signature):
            self._sealed = signature
        elif write_seal(self.log, signature, self.hasher):
            self._sealed = signature


# ---------------------------------------------------------------- a database store


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
        self.hasher: Hasher = xxhash.xxh3_64()
        self._store_id: str | None = None  # of the database the events read so far came from
        self._seen: tuple[int, str] | None = None  # a position read to, and its fingerprint then

    def adopt(self, hasher: Hasher) -> None:
        self.hasher = hasher

    def unchanged(self) -> bool:
        """Always: the table is append-only, and `intact` checks the database itself."""
        return True

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


# How a reader checks that what it read up to a position is still there (core/log/stores.py `prefix_check`)
PrefixChecker = PrefixCheck | PositionCheck
