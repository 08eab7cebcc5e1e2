"""A derived cache of the parsed log, so a big log is parsed once and only its tail afterwards.

The cache is one SQLite database per store in the workspace's `.cache` folder (`derived-log.sqlite`
for the log file, `derived-pg-<store id>.sqlite` for a database): a `meta` table holds the head (how
much of the store it covers and what vouches for it, the per-arm priors, the per-block directory)
and the per-block sums, each sealed with a checksum of its own (lesson_credit.core.base.sealed); a
`parts` table holds one blob per block of sessions, its columns as sections with checksums of their
own (core/log/parts.py). Loading reads the head; a section is read when something first uses it,
so a command on a million sessions reads what it touches (core/log/columns.py). A full block never
changes, so a later save writes only the last block, the sums and the head, in one transaction.

The head is used only when the store still holds what it covers (the file: its first bytes, vouched
for by the log's seal or hashed again, core/log/logcheck.py `resume`; a database: the same store
and the same event at that position); otherwise it is ignored (with a one-line notice) and rebuilt.
A section that turns out damaged once loaded (a flipped byte, a block removed) is derived again from
the log (`Healer`): nothing damaged reaches a caller. The cache holds nothing the store does not:
deleting it never changes a number, only how long the next read takes.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import struct
import sys
import time
from array import array
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import msgspec
import numpy as np
import xxhash

from lesson_credit.core.base.files import open_cache, set_aside
from lesson_credit.core.base.gc_pause import gc_paused
from lesson_credit.core.base.sealed import seal, unseal
from lesson_credit.core.log import halves, logcheck, snapshot
from lesson_credit.core.log.columns import Column
from lesson_credit.core.log.events import decode_raw
from lesson_credit.core.log.exports import Exports
from lesson_credit.core.log.index import LogIndex
from lesson_credit.core.log.parts import Extent, Part, attach_part, encode_part, part_extents
from lesson_credit.core.log.prior_counts import PriorCounts
from lesson_credit.core.log.sections import CacheDamaged, Section, SectionSource
from lesson_credit.core.log.snapshot import BlockSums, BlockUsage, Claim
from lesson_credit.core.log.steps import Steps
from lesson_credit.core.log.store import EventLog, LogProblem, StoreError
from lesson_credit.core.log.vocab import decode_lines

# 8: each session's and grade's reward source (core.model.sources); 9: judge-like names (`llm judge`), increment
# events; 10: the lessons each session included during it ("included": "during"); 11: one SQLite database;
# 12: a selection's category; 13: a pointer map, and each block's sections read by every command laid out first;
# 14: the sessions prior and increment events name; 15: the prior events in force, what exports wrote;
# 16: the `created` of each imported file that counts sessions; 17: what increments events saw of the own file;
# 18: after how many sessions each increments event was logged; 19: absolute lesson paths name library ids;
# 20: after how many sessions each prior event was logged; 21: those steps as typed arrays (core/log/steps.py);
# 22: graders' names in one Unicode form (NFC); 23: what imports of an exported file saw is kept per file (a copy's
# apart from the original's), beside the export's numbers; 24: each block's sessions counted per category;
# 25: one arm per lesson whatever Unicode form its id was logged in (an arm's NFC form), kept as the log spells it;
# 26: a session event naming more than MAX_SESSION_LESSONS lessons is a bad line, skipped; 27: a line skipped for
# an unknown `included` makes no arm (the batch read made its arms first); 28: an event naming lessons past
# MAX_LOG_LESSONS (core/log/arm_names.py) is a bad line, skipped; 29: an earlier import of a file imported again is
# kept with its `created` (core/log/prior_counts.py); 30: every import's `seen` kept in log order, with gptme's
# stamps and the sessions its event logged (an arm of a copy told by the stamp another import saw); 31: the head's
# accumulators each under its own name (`ACCUMULATORS`)
CACHE_VERSION = 31
CACHE_MAGIC = b"lesson-credit log-index 11\n"
SUMS_MAGIC = b"lesson-credit log-sums 11\n"
MIN_NEW_BYTES = 4 * 1024 * 1024  # rewrite the cache when a read parsed at least this much
# and when a read of a log that big parsed this much past the cache: every command parses what the cache does not
# hold (a record at a million sessions: ~11 ms of CPU per MB), and a save writes the last block (0.1-0.16 s of CPU
# with 17,000 sessions in it)
MIN_TAIL_BYTES = 512 * 1024
MIN_NEW_EVENTS = 5_000  # the same for a database store: events (~4 MB of log, as the file)
BUSY_TIMEOUT_S = 5.0  # a save waits this long for another process's; then it is skipped
UNUSED_PART_AGE_S = 60.0  # a block no head names is deleted once this old (a reader of an older head reads it)
# Pointer-map pages: a section far into a block's blob is found from them, not by reading each overflow page
# before it (a 64 KB section at the end of a 22 MB block: 1.8 -> 0.03 ms; the 16 id filters a 1M `record` reads)
AUTO_VACUUM = 2  # incremental: the pointer map is kept, nothing is vacuumed unless asked (never)
PAGE_BYTES = 65536  # a block spans fewer pages: a cold million-session save writes in half the CPU (0.58 -> 0.27 s)
SCHEMA = f"""
DROP TABLE IF EXISTS meta;
DROP TABLE IF EXISTS parts;
CREATE TABLE meta(key TEXT PRIMARY KEY, value BLOB NOT NULL);
CREATE TABLE parts(name TEXT PRIMARY KEY, data BLOB NOT NULL, written REAL NOT NULL);
PRAGMA user_version = {CACHE_VERSION}
"""
CACHE_BASE_BYTES = 64 * 1024 * 1024  # a cache may be this much larger than CACHE_PER_LOG_BYTE times its log
CACHE_PER_LOG_BYTE = 4  # measured: the demo's cache is 0.48 of its log; the per-arm sums add ~1x at worst


def cache_limit(covered: int) -> int:
    """The largest cache file read for a log of `covered` bytes: anything bigger is not ours (or is
    damaged) and is refused by its size before a byte of it is read."""
    return CACHE_BASE_BYTES + CACHE_PER_LOG_BYTE * max(covered, 0)


_FLOATS = ("n", "sum_base", "sum_base_salience", "sum_salience")


def _sums(index: LogIndex, vouch: str) -> dict[str, Any]:
    """The per-block sums and usage counts (each valid for the rewards it names: kept apart from the
    head, they are saved whenever a write computed new ones), with what vouches for the bytes they
    were computed from: the store's content up to `index.end`, as `vouch` identifies it (a reader's
    core/log/logcheck.py `PrefixChecker.vouch`). Every sum the index holds is of that content or of a prefix of it."""
    blocks = [
        {
            "block": block,
            "rows": rows,
            "base_key": sums.base_key,
            **{name: getattr(sums, name).tobytes() for name in _FLOATS},
            "last": sums.last.tobytes(),
            "rewarded": [[strategy, floor, counts.tobytes()] for (strategy, floor), counts in sums.rewarded.items()],
        }
        for (block, rows), sums in index.blocks.sums.items()
    ]
    usage = [
        [block, rows, u.injected.tobytes(), u.salient.tobytes(), u.salience.tobytes()]
        for (block, rows), u in index.blocks.usage.items()
    ]
    return {"version": CACHE_VERSION, "end": index.end, "vouch": vouch, "blocks": blocks, "usage": usage}


# What the index accumulates as it reads, beside its columns (core/log/index.py `LogIndex`), by attribute name; the
# head holds each as plain values (`_plain`): a type msgspec reads back, a class of its own with `plain()` and
# `of_plain()`, or a typed array's code
ACCUMULATORS: dict[str, Any] = {
    "priors": dict[str, tuple[float, float, int]],
    "prior_rewards": dict[str, int],
    "increments": dict[str, tuple[float, float, int, int]],
    "increment_steps": Steps,
    "prior_steps": Steps,
    "prior_from": dict[str, int],
    "prior_counts": PriorCounts,
    "added_sessions": int,
    "exports": Exports,
    "retired": dict[str, int],
    "problems": list[LogProblem],
    "grade_rows": "q",
    "grade_base": "d",
    "grade_source": "b",
}


def _plain(kind: Any, value: Any) -> Any:
    """An accumulator as msgpack's plain values (a dict, a list of structs, a number: as msgspec writes them)."""
    if isinstance(kind, str):
        return value.tobytes()
    return value.plain() if hasattr(kind, "plain") else value


def _of_plain(kind: Any, plain: Any) -> Any:
    """`_plain`'s values back (ValueError, TypeError, msgspec.ValidationError... when they are not)."""
    if isinstance(kind, str):  # (bytes only: bytes(16) and bytes([0] * 16) are 16 zero bytes, read as grades)
        return array(kind, msgspec.convert(plain, bytes))
    return kind.of_plain(plain) if hasattr(kind, "of_plain") else msgspec.convert(plain, kind)


def _head(index: LogIndex, digest: str, partial: bool, parts: list[Part]) -> dict[str, Any]:
    return {
        "version": CACHE_VERSION,
        "end": index.end,
        "lines": index.lines,
        "digest": digest,
        "partial": partial,
        "arm_ids": index.logged_ids(),  # as the log spells them: the library's spelling is applied when read
        **{name: _plain(kind, getattr(index, name)) for name, kind in ACCUMULATORS.items()},
        "n_sessions": index.n_sessions,
        "n_entries": len(index.entry_arm),
        "parts": parts,  # (msgpack writes each as a map of its fields)
    }


def _index_of(p: dict[str, Any], sources: list[SectionSource]) -> tuple[LogIndex, str, bool]:
    """The index a head describes, its parts' sections read from `sources` (one per part)."""
    if not isinstance(p, dict) or p.get("version") != CACHE_VERSION:
        raise ValueError("cache from another version")
    try:
        index = LogIndex()
        index.load_arms([str(arm) for arm in p["arm_ids"]])  # ValueError for two arms of one lesson
        for name, kind in ACCUMULATORS.items():
            setattr(index, name, _of_plain(kind, p[name]))
        index.end, index.lines = int(p["end"]), int(p["lines"])
        parts = [Part.of(x) for x in p["parts"]]
        if len(sources) != len(parts):
            raise ValueError("parts and files differ")
        index.session_start = Column(np.int64)  # the parts' starts, then the end of the last entry
        for part, source in zip(parts, sources, strict=True):
            attach_part(index, part, _sections_of(part, source))
        index.session_start.append(int(p["n_entries"]))
        index.parts = parts
    except (KeyError, TypeError, ValueError, IndexError, OverflowError, AttributeError, struct.error) as exc:
        raise ValueError(f"malformed cache: {exc}") from None
    sizes = {index.n_sessions, len(index.session_lines), len(index.session_published), len(index.session_source)}
    sizes.add(len(index.session_start) - 1)
    entries = {len(index.entry_arm), len(index.entry_salience), len(index.entry_session), int(p["n_entries"])}
    grades = {len(index.grade_rows), len(index.grade_base), len(index.grade_source)}
    if sizes != {int(p["n_sessions"])} or len(entries) != 1 or len(grades) != 1:
        raise ValueError("inconsistent cache")
    if len(index.grades) != len(index.grade_rows):
        raise ValueError("inconsistent cache")
    return index, str(p["digest"]), bool(p["partial"])


def _sections_of(part: Part, source: SectionSource) -> Callable[[str], Section]:
    def section(name: str) -> Section:
        offset, length, digest = part.sections[name]
        return Section(source, name, offset, length, digest)

    return section


def _claim_of(index: LogIndex, p: dict[str, Any]) -> Claim:
    """The sums file's contents, for arms the index has; used once the log vouches for them."""
    n_arms = len(index.arm_ids)
    claim = Claim(int(p["end"]), str(p["vouch"]), {}, {})
    for b in p["blocks"]:
        floats = {name: np.frombuffer(b[name], dtype=np.float64) for name in _FLOATS}
        last = np.frombuffer(b["last"], dtype=np.int64)
        rewarded = {(str(s), float(f)): np.frombuffer(c, dtype=np.int64) for s, f, c in b["rewarded"]}
        if not all(len(v) <= n_arms for v in (*floats.values(), last)) or len(bytes(b["base_key"])) != 16:
            raise ValueError("block sums for more arms than the index has")
        key = (int(b["block"]), int(b["rows"]))
        claim.sums[key] = BlockSums(base_key=bytes(b["base_key"]), **floats, last=last, rewarded=rewarded)
    for block, rows, injected, salient, salience in p["usage"]:
        counts = BlockUsage(
            np.frombuffer(injected, dtype=np.int64),
            np.frombuffer(salient, dtype=np.int64),
            np.frombuffer(salience, dtype=np.float64),
        )
        if not len(counts.injected) == len(counts.salient) == len(counts.salience) <= n_arms:
            raise ValueError("usage counts for more arms than the index has")
        claim.usage[(int(block), int(rows))] = counts
    return claim


# ---------------------------------------------------------------- the container


def _gone(exc: sqlite3.Error) -> bool:
    """A busy database (another process writing it): skipped this time, not set aside."""
    return isinstance(exc, sqlite3.OperationalError) and ("locked" in str(exc) or "busy" in str(exc))


class BlobSource:
    """A part's blob in the database, its sections read when first used (incremental blob I/O: one
    section, not the whole blob). What cannot be read back as written is derived again from the log
    (`Healer`), so a damaged block never reaches a caller."""

    def __init__(self, cache: DerivedCache, name: str, rowid: int, size: int, healer: Healer) -> None:
        self.cache, self.name, self.rowid, self.size, self.healer = cache, name, rowid, size, healer

    def read(self, offset: int, length: int) -> bytes:
        if offset < 0 or length < 0 or offset + length > self.size:
            raise CacheDamaged(f"{self.name}: a section lies outside its block")
        try:
            conn = self.cache.reading()
            with conn.blobopen("parts", "data", self.rowid, readonly=True) as blob:
                blob.seek(offset)
                data = blob.read(length)
        except (sqlite3.Error, OSError) as exc:
            raise CacheDamaged(f"{self.name}: {exc}") from None
        if len(data) != length:
            raise CacheDamaged(f"{self.name}: shorter than its directory says")
        return data

    def heal(self, section: str, why: str) -> bytes:
        return self.healer.section(self.name, section, why)


class Healer:
    """The blocks of a loaded index derived again from the log, for a section that turned out damaged
    after the load (a flipped byte, a block another process's save removed): the log's first `end`
    bytes (positions of a database), read from scratch once, encoded as the block was. The cache's
    head is then forgotten, so the next command writes it afresh."""

    def __init__(self, cache: DerivedCache, parts: list[Part], end: int) -> None:
        self.cache, self.parts, self.end = cache, parts, end
        self._blobs: dict[str, tuple[Part, bytes]] = {}
        self._index: LogIndex | None = None

    def section(self, name: str, section: str, why: str) -> bytes:
        """Section `section` of block `name` as the log gives it (by name: the damaged head's offsets
        and lengths are not used)."""
        if name not in self._blobs:
            if self._index is None:
                self.cache.note(f"has a damaged block ({why})")
                self.cache.forget()
                self._index = _read_from_scratch(self.cache.store, self.end)
            starts = [0, 0, 0, 0]
            for part in self.parts:
                r0, e0, g0, s0 = starts
                starts = [r0 + part.rows, e0 + part.entries, g0 + part.grades, s0 + part.selections]
                if part.file == name:
                    x = Extent(r0 // snapshot.BLOCK_ROWS, r0, starts[0], e0, starts[1], g0, starts[2], s0, starts[3])
                    self._blobs[name] = encode_part(self._index, x, name)
        part, blob = self._blobs[name]
        offset, length, _ = part.sections[section]
        return blob[offset : offset + length]


def _read_from_scratch(store: Any, end: int) -> LogIndex:
    """The store's events from its start to at least `end`, read into a new index."""
    index = LogIndex()
    with gc_paused():
        for result in store.read_since(0, 1, decode=decode_raw, decode_lines=decode_lines):
            index.add_many(result.events, result.offsets)
            index.end = result.end
            if index.end >= end:
                break
    return index


class DerivedCache:
    """The cache's database (see the module docstring). A subclass says which store (`store`,
    `_place`) and whether the head still describes it (`load`)."""

    dir: Path
    path: Path
    store: Any
    notice: bool
    min_new: int  # rewrite the cache when a read took this much (bytes of a file, events of a database)
    min_tail: int  # and when a read of a store at least min_new big took this much
    _conn: sqlite3.Connection | None = None

    def _place(self) -> bool:
        """Set `path` (False: no cache for this store)."""
        return True

    def note(self, why: str) -> None:
        """Say (once, on stderr) that the cache cannot be used, and why."""
        if self.notice:
            print(f"lesson-credit: note: {self.path.name} {why}; rebuilding it from the log", file=sys.stderr)

    def reading(self) -> sqlite3.Connection:
        """The connection sections are read through (opened read-only by `_read`)."""
        if self._conn is None:
            raise CacheDamaged(f"{self.path.name}: closed")
        return self._conn

    def _connect(self, limit: int | None) -> sqlite3.Connection | None:
        """A connection to the database: None when there is none (to read), it is too big to be ours, or
        it is set aside (a directory, FIFO or symlink in its place; core.base.files.open_cache says so).
        `limit`: the largest file read (None: to write; made when there is none, of this version)."""
        write = limit is None
        fd = open_cache(self.path)
        if fd is None and (not write or os.path.lexists(self.path)):
            return None
        if fd is not None:
            size = os.fstat(fd).st_size
            os.close(fd)
            if limit is not None and size > limit:
                self.note("is larger than a cache of this log can be")
                return None
        if write:
            self.dir.mkdir(parents=True, exist_ok=True)
        uri = f"{self.path.absolute().as_uri()}?mode={'rwc' if write else 'ro'}"
        conn = sqlite3.connect(uri, uri=True, timeout=BUSY_TIMEOUT_S, isolation_level=None, check_same_thread=False)
        if write and conn.execute("PRAGMA user_version").fetchone()[0] != CACHE_VERSION:
            conn.execute(f"PRAGMA page_size = {PAGE_BYTES}")  # (a new database's: outside a transaction)
            conn.execute(f"PRAGMA auto_vacuum = {AUTO_VACUUM}")  # (the same)
            conn.execute("BEGIN IMMEDIATE")  # (two processes may find an older version at once)
            if conn.execute("PRAGMA user_version").fetchone()[0] != CACHE_VERSION:
                for statement in SCHEMA.strip().split(";\n"):
                    conn.execute(statement)
            conn.execute("COMMIT")
        return conn

    def _read(self, limit: int) -> tuple[LogIndex, str, bool] | None:
        try:
            conn = self._connect(limit)
            if conn is None:
                return None
            if conn.execute("PRAGMA user_version").fetchone()[0] != CACHE_VERSION:
                self.note("is from another version")
                return None
            rows = dict(conn.execute("SELECT key, value FROM meta"))
            if "head" not in rows:
                return None
            p = msgspec.msgpack.decode(unseal(CACHE_MAGIC, rows["head"]))
            files = {str(part.get("file")) for part in p.get("parts", [])} if isinstance(p, dict) else set()
            found = {
                name: (rowid, size)
                for name, rowid, size in conn.execute("SELECT name, rowid, length(data) FROM parts").fetchall()
                if name in files
            }
            if len(found) != len(files):
                raise ValueError("a block is missing")
            parts = [Part.of(x) for x in p["parts"]] if isinstance(p, dict) else []
            healer = Healer(self, parts, int(p["end"]))
            sources: list[SectionSource] = [
                BlobSource(self, str(part.file), *found[str(part.file)], healer) for part in parts
            ]
            self._conn = conn
            loaded = _index_of(p, sources)
            if "sums" in rows:
                self._claim_sums(loaded[0], rows["sums"])
            return loaded
        except (sqlite3.Error, OSError, ValueError, TypeError, KeyError, msgspec.DecodeError) as exc:
            if isinstance(exc, sqlite3.Error) and _gone(exc):
                return None
            self.note(f"is damaged or from another version ({exc})")
            return None

    def _claim_sums(self, index: LogIndex, data: bytes) -> None:
        """The block sums saved with the head (damaged: computed again), held as a claim: the reader
        uses them once the log vouches for the bytes they came from (core/reader.py)."""
        with contextlib.suppress(ValueError, msgspec.DecodeError, KeyError, TypeError, struct.error):
            p = msgspec.msgpack.decode(unseal(SUMS_MAGIC, data))
            if isinstance(p, dict) and p.get("version") == CACHE_VERSION:
                index.blocks.claimed(_claim_of(index, p))

    def forget(self) -> None:
        """Drop the head (best effort): the next command reads the log and writes the cache afresh."""
        with contextlib.suppress(StoreError), self._transaction() as conn:
            if conn is not None:
                conn.execute("DELETE FROM meta WHERE key = 'head'")

    def save_sums(self, index: LogIndex, vouch: str | None) -> None:
        """Save the block sums when some were computed since they were read or saved (best effort:
        lost ones are computed again); only for an index the cache holds. `vouch`: what identifies
        the content the index was read from (None: nothing does, and nothing is saved)."""
        with contextlib.suppress(StoreError):  # (a database store names its cache by asking it)
            if vouch is not None and index.blocks.changed and index.parts and self._place():
                sums = seal(SUMS_MAGIC, msgspec.msgpack.encode(_sums(index, vouch)))
                with self._transaction() as conn:
                    if conn is not None:
                        conn.execute("INSERT OR REPLACE INTO meta VALUES ('sums', ?)", (sums,))
                        index.blocks.changed = False

    @contextlib.contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection | None]:
        """A write transaction (committed when the block ends without an exception), or None: what
        cannot be written is skipped (`_failed`)."""
        try:
            conn = self._connect(None)
        except (sqlite3.Error, OSError) as exc:
            self._failed(exc)
            conn = None
        if conn is None:
            yield None
            return
        try:
            with conn:
                conn.execute("BEGIN IMMEDIATE")
                yield conn
        except (sqlite3.Error, OSError) as exc:
            self._failed(exc)
        finally:
            conn.close()

    def _failed(self, exc: sqlite3.Error | OSError) -> None:
        """A database busy with another process's save is skipped; a file that is not a database is
        removed (the next save starts a new one); one that cannot be written is set aside."""
        if isinstance(exc, sqlite3.DatabaseError) and not isinstance(exc, sqlite3.OperationalError):
            with contextlib.suppress(OSError):
                self.path.unlink()
        elif not (isinstance(exc, sqlite3.Error) and _gone(exc)):
            why = exc.strerror if isinstance(exc, OSError) and exc.strerror else exc
            set_aside(self.path, f"{self.path}: cannot be written ({why})")

    def _save(self, index: LogIndex, digest: str, partial: bool, meanwhile: Callable[[], None] | None) -> None:
        """Write the blocks that changed since the index's own (the last one, new ones; one at a time),
        the sums and the head, in one transaction: what was read since the last save, not the whole
        log again. Blocks no head names are deleted once no reader of an earlier head reads them.
        `meanwhile` runs while a child encodes blocks (`halves.map_halves`), before the sums are written."""
        with self._transaction() as conn:
            if conn is None:
                return
            now = time.time()
            stored = {name for (name,) in conn.execute("SELECT name FROM parts")}
            keep = [part for part in index.parts[:-1] if part.file in stored]
            if len(keep) != max(len(index.parts) - 1, 0):
                keep = []
            starts = (sum(p.rows for p in keep), sum(p.entries for p in keep))
            events = (sum(p.grades for p in keep), sum(p.selections for p in keep))
            parts = list(keep)
            extents = part_extents(index, starts[0], starts[1], *events)
            for extent, (part, blob) in zip(
                extents, halves.map_halves(_encoded(index), extents, meanwhile), strict=True
            ):
                part.file = f"{extent.block:05d}-{xxhash.xxh3_64_hexdigest(blob)}"
                conn.execute("INSERT OR IGNORE INTO parts VALUES (?, ?, ?)", (part.file, blob, now))
                parts.append(part)
            head = seal(CACHE_MAGIC, msgspec.msgpack.encode(_head(index, digest, partial, parts)))
            sums = seal(SUMS_MAGIC, msgspec.msgpack.encode(_sums(index, digest)))
            conn.executemany("INSERT OR REPLACE INTO meta VALUES (?, ?)", [("head", head), ("sums", sums)])
            used = {part.file for part in parts}
            old = [n for (n,) in conn.execute("SELECT name FROM parts WHERE written < ?", (now - UNUSED_PART_AGE_S,))]
            conn.executemany("DELETE FROM parts WHERE name = ?", [(n,) for n in old if n not in used])
            index.parts = parts
            index.blocks.changed = False

    def save(self, index: LogIndex, digest: str, partial: bool, meanwhile: Callable[[], None] | None = None) -> None:
        """Best effort: a cache that cannot be written (read-only workspace) is simply skipped.
        `meanwhile`: work of the caller's that may run while the blocks are encoded, before the block
        sums are written (it may not run: when nothing is written)."""
        with contextlib.suppress(StoreError, OSError, CacheDamaged):
            if self._place():
                self._save(index, self._digest(index, digest), partial, meanwhile)

    def _digest(self, index: LogIndex, digest: str) -> str:
        return digest


def _encoded(index: LogIndex) -> Callable[[Extent], tuple[Part, bytes]]:
    """A block's part encoded (on two cores when one is idle: `halves.map_halves`)."""
    return lambda extent: encode_part(index, extent, None)


class LogCache(DerivedCache):
    """`state/lesson-thompson/.cache/derived-log.sqlite`, for the log file."""

    def __init__(self, log: EventLog, cache_dir: Path | None = None, notice: bool = True) -> None:
        """`cache_dir`: the workspace's `.cache` folder (default: the one beside the log, which it is)."""
        self.store = self.log = log
        self.dir = log.path.parent / ".cache" if cache_dir is None else Path(cache_dir)
        self.path = self.dir / "derived-log.sqlite"
        self.notice = notice  # say on stderr when a cache is there but cannot be used
        self.min_new = MIN_NEW_BYTES
        self.min_tail = MIN_TAIL_BYTES

    def load(self) -> tuple[LogIndex, logcheck.PrefixDigest, bool] | None:
        """(index, digest of the covered bytes, partial) if the cache is intact and still
        describes a prefix of the log, byte for byte; else None."""
        loaded = self._read(cache_limit(self.log.size()))
        if loaded is None:
            return None
        index, digest, partial = loaded
        try:
            hasher = logcheck.resume(self.log, digest)
        except ValueError:
            hasher = None
        if hasher is None or hasher.end != index.end:
            self.note("no longer matches the log (it was edited, replaced or cut)")
            return None
        if partial and self.log.continued(index.end):  # its last line, read without a newline, went on
            return None
        return index, hasher, partial


class PgLogCache(DerivedCache):
    """`<cache_dir>/derived-pg-<store id>.sqlite`, for one database store (not while the store reads
    only one agent's events: that is another index). It records the position it covers and the
    store's fingerprint there; the events table is append-only, so the events up to that position are
    the ones the cache was made from."""

    def __init__(self, store: Any, cache_dir: Path) -> None:
        self.store = store
        self.dir = Path(cache_dir)
        self.notice = False  # a database's cache is rebuilt without a word (its store id names it)
        self.min_new = self.min_tail = MIN_NEW_EVENTS

    def _place(self) -> bool:
        if self.store.written_by is not None:
            return False
        self.path = self.dir / f"derived-pg-{self.store.store_id()}.sqlite"
        return True

    def load(self) -> tuple[LogIndex, xxhash.xxh3_64, bool] | None:
        """(index, a hasher for the reader's interface, partial) if the cache describes a prefix of
        this database's events, else None."""
        with contextlib.suppress(StoreError):
            if not self._place():
                return None
            size = self.store.size()  # asked once (a round trip)
            loaded = self._read(cache_limit(size * 1024))  # ~1 KB per event is far past what a cache holds
            if loaded is None:
                return None
            index, fingerprint, partial = loaded
            if partial or size < index.end or self.store.fingerprint(index.end) != fingerprint:
                return None
            return index, xxhash.xxh3_64(), partial
        return None

    def _digest(self, index: LogIndex, digest: str) -> str:
        return str(self.store.fingerprint(index.end))  # (the reader's digest is of no bytes)


ParsedLogCache = LogCache | PgLogCache  # the parsed-log cache of a store (core/log/stores.py `log_cache`)
