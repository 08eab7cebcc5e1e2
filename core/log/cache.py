"""A derived cache of the parsed log, so a big log is parsed once and only its tail afterwards.

The cache is a head file (`log-index.msgpack`: how many bytes of the log it covers, their digest,
the per-arm sums, the per-block directory) and one part file per block of sessions
(`log-index-part-*.bin`: the block's columns, each a section with a checksum of its own). Loading
reads the head; a part's sections are read when something first uses them, so a command on a
million sessions reads what it touches (core/log/columns.py). A full block's part never changes,
so a later save writes only the last block's part and the head: what was read since the last save.
A database store's cache has the same layout under names of its own (core/log/pgcache.py).

The head carries a checksum of its own payload (lesson_credit.core.base.sealed), each section its
own. It is used only when the log still starts with exactly the bytes it covers
(core/log/logcheck.py `resume`: vouched for by the log's seal, else hashed again); otherwise it is
ignored (with a one-line notice) and rebuilt. It holds nothing the log does not: deleting it never
changes a number, only how long the next read takes.
"""

from __future__ import annotations

import contextlib
import os
import struct
import sys
import time
from array import array
from collections.abc import Callable
from pathlib import Path
from typing import Any

import msgspec
import numpy as np
import xxhash

from lesson_credit.core.base.files import open_cache, read_cache, write_cache
from lesson_credit.core.base.safe_read import UnsafeFile
from lesson_credit.core.base.sealed import seal, unseal
from lesson_credit.core.log import logcheck
from lesson_credit.core.log.columns import Column
from lesson_credit.core.log.index import LogIndex
from lesson_credit.core.log.parts import Part, attach_part, encode_part, part_extents
from lesson_credit.core.log.sections import CacheDamaged, FileSource, Section, SectionSource
from lesson_credit.core.log.snapshot import BlockSums, BlockUsage, Claim
from lesson_credit.core.log.store import EventLog, LogProblem, StoreError

# 8: each session's and grade's reward source (core.model.sources); 9: judge-like names (`llm judge`), increment
# events; 10: the lessons each session included during it ("included": "during")
CACHE_VERSION = 10
CACHE_MAGIC = b"lesson-credit log-index 10\n"
SUMS_MAGIC = b"lesson-credit log-sums 10\n"
MIN_NEW_BYTES = 4 * 1024 * 1024  # rewrite the cache when a read parsed at least this much
HEAD_MAX_BYTES = 1 << 30
CACHE_BASE_BYTES = 64 * 1024 * 1024  # a cache may be this much larger than CACHE_PER_LOG_BYTE times its log
CACHE_PER_LOG_BYTE = 4  # measured: the demo's cache is 0.48 of its log; the per-arm sums add ~1x at worst


def cache_limit(covered: int) -> int:
    """The largest cache file read for a log of `covered` bytes: anything bigger is not ours (or is
    damaged) and is refused by its size before a byte of it is read."""
    return CACHE_BASE_BYTES + CACHE_PER_LOG_BYTE * max(covered, 0)


PART_PREFIX = "log-index-part-"
UNUSED_PART_AGE_S = 60.0  # a part no head names is deleted once this old (a reader that read an older head has it open)
_FLOATS = ("n", "sum_base", "sum_base_salience", "sum_salience")


def _sums(index: LogIndex, vouch: str) -> dict[str, Any]:
    """The per-block sums and usage counts (each valid for the rewards it names: kept apart from the
    head, they are saved whenever a write computed new ones), with what vouches for the bytes they
    were computed from: the store's content up to `index.end`, as `vouch` identifies it (a reader's
    `PrefixChecker.vouch`). Every sum the index holds is of that content or of a prefix of it."""
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


def _head(index: LogIndex, digest: str, partial: bool, parts: list[Part]) -> dict[str, Any]:
    return {
        "version": CACHE_VERSION,
        "end": index.end,
        "lines": index.lines,
        "digest": digest,
        "partial": partial,
        "arm_ids": index.arm_ids,
        "priors": {arm: list(prior) for arm, prior in index.priors.items()},
        "prior_rewards": index.prior_rewards,
        "increments": {arm: list(added) for arm, added in index.increments.items()},
        "retired": index.retired,
        "problems": [[p.line, p.reason, p.session_id] for p in index.problems],
        "grade_rows": index.grade_rows.tobytes(),
        "grade_base": index.grade_base.tobytes(),
        "grade_source": index.grade_source.tobytes(),
        "n_sessions": index.n_sessions,
        "n_entries": len(index.entry_arm),
        "parts": [part.plain() for part in parts],
    }


def _index_of(p: dict[str, Any], sources: list[SectionSource]) -> tuple[LogIndex, str, bool]:
    """The index a head describes, its parts' sections read from `sources` (one per part)."""
    if not isinstance(p, dict) or p.get("version") != CACHE_VERSION:
        raise ValueError("cache from another version")
    try:
        index = LogIndex()
        index.arm_ids = [str(arm) for arm in p["arm_ids"]]
        index.arm_index = {arm: i for i, arm in enumerate(index.arm_ids)}
        if len(index.arm_index) != len(index.arm_ids):
            raise ValueError("an arm twice")
        index.priors = {str(arm): (float(v[0]), float(v[1]), int(v[2])) for arm, v in p["priors"].items()}
        index.prior_rewards = {str(arm): int(v) for arm, v in p["prior_rewards"].items()}
        index.increments = {
            str(arm): (float(v[0]), float(v[1]), int(v[2]), int(v[3])) for arm, v in p["increments"].items()
        }
        index.retired = {str(arm): int(v) for arm, v in p["retired"].items()}
        index.problems = [LogProblem(int(line), str(reason), sid) for line, reason, sid in p["problems"]]
        index.grade_rows = array("q")
        index.grade_rows.frombytes(p["grade_rows"])
        index.grade_base = array("d")
        index.grade_base.frombytes(p["grade_base"])
        index.grade_source = array("b")
        index.grade_source.frombytes(p["grade_source"])
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
        return Section(source, offset, length, digest)

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


# ---------------------------------------------------------------- the file store's cache


class SetAside(Exception):
    """A part file is set aside (core.base.files.set_aside said so): the cache is not used."""


class PartedCache:
    """A parsed-log cache of head, sums and part files in one folder (see the module docstring):
    what the file store's and a database store's caches share. A subclass says which files
    (`_place`) and whether the head still describes its store (`load`), and gives the reads the
    largest size a file of its may have (`cache_limit` of what its store holds)."""

    dir: Path
    path: Path  # the head
    sums_path: Path
    part_prefix: str
    notice: bool
    min_new: int  # rewrite the cache when a read took this much (bytes of a file, events of a database)

    def _place(self) -> bool:
        """Set the paths (False: no cache for this store)."""
        return True

    def note(self, why: str) -> None:
        """Say (once, on stderr) that the cache cannot be used, and why."""
        self._say(why)

    def _say(self, why: str) -> None:
        if self.notice:
            print(f"lesson-credit: note: {self.path.name} {why}; rebuilding it from the log", file=sys.stderr)

    def _open_parts(self, p: Any, limit: int) -> list[SectionSource]:
        sources: list[SectionSource] = []
        for meta in p.get("parts", []) if isinstance(p, dict) else []:
            name = meta.get("file") if isinstance(meta, dict) else None
            if not isinstance(name, str) or not name.startswith(self.part_prefix) or "/" in name:
                raise ValueError("a part without a file")
            fd = open_cache(self.dir / name)
            if fd is None:
                if os.path.lexists(self.dir / name):
                    raise SetAside(name)  # (it said so)
                raise ValueError(f"part {name} is missing")
            source = FileSource(fd, name)  # closes fd when dropped
            if source.size > limit:
                raise ValueError(f"part {name} is larger than a cache of this log can be")
            sources.append(source)
        return sources

    def _read(self, limit: int) -> tuple[LogIndex, str, bool] | None:
        try:
            magic = read_cache(self.path, len(CACHE_MAGIC), longer=True)
            if magic is None:  # none, or set aside (a directory in its place, ...)
                return None
            if not magic.startswith(CACHE_MAGIC):
                # not read whole: an older version's database cache was the whole index in one file
                self._say("is from another version")
                return None
            data = read_cache(self.path, min(HEAD_MAX_BYTES, limit))
        except (OSError, UnsafeFile) as exc:
            self._say(f"cannot be read ({exc})")
            return None
        if data is None:
            return None
        try:
            p = msgspec.msgpack.decode(unseal(CACHE_MAGIC, data))
            return _index_of(p, self._open_parts(p, limit))
        except SetAside:  # a part was (it says so)
            return None
        except (ValueError, msgspec.DecodeError) as exc:
            self._say(f"is damaged or from another version ({exc})")
            return None

    def _read_sums(self, index: LogIndex, limit: int) -> None:
        """The block sums saved beside the head (none, or damaged: they are computed again), held as a
        claim: the reader uses them once the log vouches for the bytes they came from (core/reader.py)."""
        try:
            data = read_cache(self.sums_path, min(HEAD_MAX_BYTES, limit))
            p = None if data is None else msgspec.msgpack.decode(unseal(SUMS_MAGIC, data))
            if isinstance(p, dict) and p.get("version") == CACHE_VERSION:
                index.blocks.claimed(_claim_of(index, p))
        except (OSError, UnsafeFile, ValueError, msgspec.DecodeError, KeyError, TypeError, struct.error):
            pass

    def save_sums(self, index: LogIndex, vouch: str | None) -> None:
        """Save the block sums when some were computed since they were read or saved (best effort,
        no fsync: lost ones are computed again); only for an index the cache holds (a log too small
        for the cache is read whole, sums and all, by every process). `vouch`: what identifies the
        content the index was read from (None: nothing does, and nothing is saved)."""
        with contextlib.suppress(StoreError):  # (a database store names its files by asking it)
            if vouch is not None and index.blocks.changed and index.parts and self._place():
                self._write_sums(index, vouch)

    def _write_sums(self, index: LogIndex, vouch: str) -> None:
        if write_cache(self.sums_path, seal(SUMS_MAGIC, msgspec.msgpack.encode(_sums(index, vouch)))):
            index.blocks.changed = False

    def _save(self, index: LogIndex, digest: str, partial: bool) -> None:
        """Write the parts that changed since the index's own (the last one, new ones), then the
        sums and the head: what was read since the last save, not the whole log again."""
        keep = [part for part in index.parts[:-1] if part.file and (self.dir / part.file).exists()]
        if len(keep) != max(len(index.parts) - 1, 0):
            keep = []
        starts = (sum(p.rows for p in keep), sum(p.entries for p in keep))
        events = (sum(p.grades for p in keep), sum(p.selections for p in keep))
        parts = list(keep)
        for extent in part_extents(index, starts[0], starts[1], *events):
            part, blob = encode_part(index, extent, None)
            name = f"{self.part_prefix}{extent.block:05d}-{xxhash.xxh3_64_hexdigest(blob)}.bin"
            if not write_cache(self.dir / name, blob, sync=True):  # (a file of that name may be one found damaged)
                return
            part.file = name
            parts.append(part)
        self._write_sums(index, digest)  # (the head's digest identifies the content up to index.end)
        head = _head(index, digest, partial, parts)
        if not write_cache(self.path, seal(CACHE_MAGIC, msgspec.msgpack.encode(head)), sync=True):
            return
        index.parts = parts
        self._remove_unused({part.file for part in parts if part.file})

    def _remove_unused(self, used: set[str]) -> None:
        now = time.time()
        with contextlib.suppress(OSError):
            for entry in os.scandir(self.dir):
                if entry.name.startswith(self.part_prefix) and entry.name not in used:
                    with contextlib.suppress(OSError):
                        if now - entry.stat(follow_symlinks=False).st_mtime > UNUSED_PART_AGE_S:
                            os.unlink(entry.path)


class LogCache(PartedCache):
    """`state/lesson-thompson/.cache/log-index.msgpack` and its part files, for one log."""

    def __init__(self, log: EventLog, cache_dir: Path | None = None, notice: bool = True) -> None:
        """`cache_dir`: the workspace's `.cache` folder (default: the one beside the log, which it is)."""
        self.log = log
        self.dir = log.path.parent / ".cache" if cache_dir is None else Path(cache_dir)
        self.path = self.dir / "log-index.msgpack"
        self.sums_path = self.dir / "log-sums.msgpack"
        self.part_prefix = PART_PREFIX
        self.notice = notice  # say on stderr when a cache is there but cannot be used
        self.min_new = MIN_NEW_BYTES

    def load(self) -> tuple[LogIndex, logcheck.PrefixDigest, bool] | None:
        """(index, digest of the covered bytes, partial) if the cache is intact and still
        describes a prefix of the log, byte for byte; else None."""
        limit = cache_limit(self.log.size())
        loaded = self._read(limit)
        if loaded is None:
            return None
        index, digest, partial = loaded
        try:
            hasher = logcheck.resume(self.log, digest)
        except ValueError:
            hasher = None
        if hasher is None or hasher.end != index.end:
            self._say("no longer matches the log (it was edited, replaced or cut)")
            return None
        if partial and self.log.continued(index.end):  # its last line, read without a newline, went on
            return None
        self._read_sums(index, limit)
        return index, hasher, partial

    def save(self, index: LogIndex, digest: str, partial: bool) -> None:
        """Best effort: a cache that cannot be written (read-only workspace) is simply skipped."""
        with contextlib.suppress(StoreError, OSError, CacheDamaged):
            self._save(index, digest, partial)
