"""A derived cache of the parsed log, so a big log is parsed once and only its tail afterwards.

The cache records how many bytes of the log it covers and an xxh3-64 hash of all of them,
and carries a checksum of its own payload (lesson_credit.core.base.sealed). It is used only when its checksum
holds and the log still starts with exactly those bytes, every one of them hashed again;
otherwise it is ignored (with a one-line notice) and rebuilt. It holds nothing the log does
not: deleting it never changes a number, only how long the next read takes.
"""

from __future__ import annotations

import contextlib
import sys
from array import array
from pathlib import Path

import msgspec
import numpy as np
import xxhash

from lesson_credit.core.base.files import atomic_write
from lesson_credit.core.base.safe_read import UnsafeFile, read_regular
from lesson_credit.core.base.sealed import seal, unseal
from lesson_credit.core.log.columns import Column, Encoded
from lesson_credit.core.log.index import LAZY_ATTRIBUTES, LogIndex
from lesson_credit.core.log.snapshot import BlockSums, BlockUsage
from lesson_credit.core.log.store import EventLog, LogProblem, StoreError

CACHE_VERSION = 6
CACHE_MAGIC = b"lesson-credit log-index 6\n"
MIN_NEW_BYTES = 4 * 1024 * 1024  # rewrite the cache when a read parsed at least this much
CACHE_BASE_BYTES = 64 * 1024 * 1024  # a cache may be this much larger than CACHE_PER_LOG_BYTE times its log
CACHE_PER_LOG_BYTE = 4  # measured: the demo's cache is 0.48 of its log; the per-arm sums add ~1x at worst


def cache_limit(covered: int) -> int:
    """The largest cache file read for a log of `covered` bytes: anything bigger is not ours (or is
    damaged) and is refused by its size before a byte of it is read."""
    return CACHE_BASE_BYTES + CACHE_PER_LOG_BYTE * max(covered, 0)


# numeric columns: stored as raw bytes, read back as numpy views of the file's bytes
_COLUMNS = {
    "session_lines": np.int64,
    "session_base": np.float64,
    "session_published": np.bool_,
    "session_start": np.int64,
    "entry_arm": np.int32,
    "entry_salience": np.float64,
    "entry_session": np.int32,
}
_ARRAYS = {"grade_rows": "q", "grade_base": "d"}  # module `array` columns
_FLOATS = ("base", "n", "sum_base", "sum_base_salience", "sum_salience")


def encode_index(index: LogIndex, digest: str, partial: bool) -> bytes:
    """The sealed cache file for an index covering the log's first `index.end` bytes, whose
    xxh3-64 hex digest is `digest`."""
    blocks = [
        {
            "block": block,
            "rows": rows,
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
    payload = {
        "version": CACHE_VERSION,
        "end": index.end,
        "lines": index.lines,
        "digest": digest,
        "partial": partial,
        "arm_ids": index.arm_ids,
        **{name: getattr(index, name).tobytes() for name in (*_COLUMNS, *_ARRAYS)},
        **{name: getattr(LogIndex, name).stored(index) for name in LAZY_ATTRIBUTES},
        "priors": {arm: list(prior) for arm, prior in index.priors.items()},
        "prior_rewards": index.prior_rewards,
        "problems": [[p.line, p.reason, p.session_id] for p in index.problems],
        "blocks": blocks,
        "usage": usage,
    }
    return seal(CACHE_MAGIC, msgspec.msgpack.encode(payload))


def decode_index(data: bytes) -> tuple[LogIndex, str, bool]:
    """The index, log digest and partial flag stored in a cache; ValueError if unusable."""
    try:
        p = msgspec.msgpack.decode(unseal(CACHE_MAGIC, data))
    except msgspec.DecodeError as exc:
        raise ValueError(f"unreadable cache: {exc}") from None
    if not isinstance(p, dict) or p.get("version") != CACHE_VERSION:
        raise ValueError("cache from another version")
    try:
        index = LogIndex()
        index.arm_ids = list(p["arm_ids"])
        index.arm_index = {arm: i for i, arm in enumerate(index.arm_ids)}
        for name, dtype in _COLUMNS.items():
            setattr(index, name, Column.from_bytes(dtype, p[name]))
        for name, code in _ARRAYS.items():
            column = array(code)
            column.frombytes(p[name])
            setattr(index, name, column)
        for name in LAZY_ATTRIBUTES:
            setattr(index, name, Encoded(p[name]))
        index.priors = {arm: (v[0], v[1], v[2]) for arm, v in p["priors"].items()}
        index.prior_rewards = dict(p["prior_rewards"])
        index.problems = [LogProblem(line, reason, sid) for line, reason, sid in p["problems"]]
        index.end = int(p["end"])
        index.lines = int(p["lines"])
        n_arms = len(index.arm_ids)
        for b in p["blocks"]:
            floats = {name: np.frombuffer(b[name], dtype=np.float64) for name in _FLOATS}
            last = np.frombuffer(b["last"], dtype=np.int64)
            rewarded = {(s, float(f)): np.frombuffer(c, dtype=np.int64) for s, f, c in b["rewarded"]}
            if not all(len(v) <= n_arms for v in (*list(floats.values())[1:], last)):
                raise ValueError("block sums for more arms than the index has")
            index.blocks.sums[(int(b["block"]), int(b["rows"]))] = BlockSums(**floats, last=last, rewarded=rewarded)
        for block, rows, injected, salient, salience in p["usage"]:
            counts = BlockUsage(
                np.frombuffer(injected, dtype=np.int64),
                np.frombuffer(salient, dtype=np.int64),
                np.frombuffer(salience, dtype=np.float64),
            )
            if not len(counts.injected) == len(counts.salient) == len(counts.salience) <= n_arms:
                raise ValueError("usage counts for more arms than the index has")
            index.blocks.usage[(int(block), int(rows))] = counts
    except (KeyError, TypeError, ValueError, IndexError, OverflowError, AttributeError) as exc:
        raise ValueError(f"malformed cache: {exc}") from None
    n = len(index.session_base)
    sizes = {len(index.session_lines), len(index.session_published), len(index.session_start) - 1}
    entries = {len(index.entry_arm), len(index.entry_salience), len(index.entry_session)}
    grades = {len(index.grade_rows), len(index.grade_base)}
    if sizes != {n} or len(entries) != 1 or len(grades) != 1 or int(index.session_start[-1]) != entries.pop():
        raise ValueError("inconsistent cache")
    return index, str(p["digest"]), bool(p["partial"])


class LogCache:
    """`state/lesson-thompson/.cache/log-index.msgpack` for one log."""

    def __init__(self, log: EventLog, cache_dir: Path | None = None, notice: bool = True) -> None:
        """`cache_dir`: the workspace's `.cache` folder (default: the one beside the log, which it is)."""
        self.log = log
        self.path = (log.path.parent / ".cache" if cache_dir is None else cache_dir) / "log-index.msgpack"
        self.notice = notice  # say on stderr when a cache is there but cannot be used

    def _say(self, why: str) -> None:
        if self.notice:
            print(f"lesson-credit: note: {self.path.name} {why}; rebuilding it from the log", file=sys.stderr)

    def load(self) -> tuple[LogIndex, xxhash.xxh3_64, bool] | None:
        """(index, hasher of the covered bytes, partial) if the cache is intact and still
        describes a prefix of the log, byte for byte; else None."""
        try:
            data = read_regular(self.path, cache_limit(self.log.size()))
        except FileNotFoundError:
            return None
        except (OSError, UnsafeFile) as exc:
            self._say(f"cannot be read ({exc})")
            return None
        try:
            index, digest, partial = decode_index(data)
        except ValueError as exc:
            self._say(f"is damaged or from another version ({exc})")
            return None
        hasher = self.log.hash_prefix(index.end) if self.log.size() >= index.end else None
        if hasher is None or hasher.hexdigest() != digest:
            self._say("no longer matches the log (it was edited, replaced or cut)")
            return None
        return index, hasher, partial

    def save(self, index: LogIndex, digest: str, partial: bool) -> None:
        """Best effort: a cache that cannot be written (read-only workspace) is simply skipped."""
        with contextlib.suppress(StoreError, OSError):
            atomic_write(self.path, encode_index(index, digest, partial))
