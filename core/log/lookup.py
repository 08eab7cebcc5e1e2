"""Finding a session's row by its id without reading every id.

Rows that came from the parsed-log cache are found through each block's sorted array of id
hashes (a binary search, then the one candidate id read back and compared); rows read since, in
memory, by scanning their ids (a few lookups: a C-speed `tuple.index`) or, once there have been
more than a few, through a dict of those rows. A million-session `grade` then reads one block's
hashes per block, not a million ids.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import repeat

import numpy as np
import numpy.typing as npt
import xxhash

from lesson_credit.core.log.columns import Objects
from lesson_credit.core.log.sections import CacheDamaged, Section

BULK_SHARE = 16  # `rows_of` reads the cached rows' ids into a dict for more ids than 1 in this many rows
SCAN_LOOKUPS = 8  # memory lookups answered by a scan before the id -> row dict is built
U64 = npt.NDArray[np.uint64]


def id_hash(session_id: str) -> int:
    return xxhash.xxh3_64_intdigest(session_id.encode("utf-8", "surrogatepass"))


def id_hashes(session_ids: Sequence[str]) -> U64:
    """`id_hash` of each id (through `map` of the builtins: no Python frame per id, about twice as fast)."""
    n = len(session_ids)
    encoded = map(str.encode, session_ids, repeat("utf-8", n), repeat("surrogatepass", n))
    return np.fromiter(map(xxhash.xxh3_64_intdigest, encoded), dtype=np.uint64, count=n)


def hash_table(session_ids: Sequence[str]) -> tuple[U64, npt.NDArray[np.int32]]:
    """(the ids' hashes sorted, the row each came from): what a cached block stores."""
    hashes = id_hashes(session_ids)
    order = np.argsort(hashes, kind="stable").astype(np.int32)
    return hashes[order], order


def among(sorted_hashes: U64, hashes: U64) -> npt.NDArray[np.bool_]:
    """Which of `hashes` are in `sorted_hashes` (a binary search each)."""
    if not len(sorted_hashes):
        return np.zeros(len(hashes), dtype=np.bool_)
    at = np.minimum(np.searchsorted(sorted_hashes, hashes), len(sorted_hashes) - 1)
    found: npt.NDArray[np.bool_] = sorted_hashes[at] == hashes
    return found


BLOOM_BITS_PER_ID = 8  # three probes: about 3% of the ids not in a block pass its filter
_PROBES = 3
_PROBE_BITS = 21  # bits of the 64-bit hash each probe takes (a filter of at most 2**21 bits)


def _probes(hashes: U64, bits: int) -> list[U64]:
    return [(hashes >> np.uint64(_PROBE_BITS * k)) & np.uint64(bits - 1) for k in range(_PROBES)]


def bloom_filter(hashes: U64) -> U64:
    """A Bloom filter of the hashes, as 64-bit words: which ids a block certainly does not have,
    read at an eighth of the cost of its hash table."""
    bits = 64
    while bits < BLOOM_BITS_PER_ID * len(hashes) and bits < 1 << _PROBE_BITS:
        bits *= 2
    words = np.zeros(bits // 64, dtype=np.uint64)
    for position in _probes(hashes, bits):
        np.bitwise_or.at(words, position >> np.uint64(6), np.left_shift(np.uint64(1), position & np.uint64(63)))
    return words


def bloom_may_hold(words: U64, hashes: U64) -> npt.NDArray[np.bool_]:
    bits = len(words) * 64
    if not bits or bits & (bits - 1):
        raise CacheDamaged("an id filter has a length that is not a power of two")
    hit = np.ones(len(hashes), dtype=np.bool_)
    for position in _probes(hashes, bits):
        hit &= ((words[position >> np.uint64(6)] >> (position & np.uint64(63))) & np.uint64(1)).astype(np.bool_)
    return hit


class IdChunk:
    """The hash table of one cached block of sessions (rows [lo, lo + n)), behind its Bloom filter."""

    __slots__ = ("lo", "n", "_hashes", "_rows", "_sections", "_bloom")

    def __init__(self, lo: int, n: int, hashes: Section, rows: Section, bloom: Section) -> None:
        self.lo = lo
        self.n = n
        self._sections = (hashes, rows, bloom)
        self._hashes: U64 | None = None
        self._rows: npt.NDArray[np.int32] | None = None
        self._bloom: U64 | None = None

    def _may_hold(self, digests: U64) -> npt.NDArray[np.bool_]:
        if self._bloom is None:
            self._bloom = self._sections[2].array(np.uint64)
        return bloom_may_hold(self._bloom, digests)

    def _sorted_hashes(self) -> U64:
        if self._hashes is None:
            hashes = self._sections[0].array(np.uint64)
            if len(hashes) != self.n:
                raise CacheDamaged(f"{self._sections[0].source.name}: an id table has the wrong length")
            self._hashes = hashes
        return self._hashes

    def table(self) -> tuple[U64, npt.NDArray[np.int32]]:
        """The block's whole table: every id's hash, sorted, and the row (counted from `lo`) each came
        from (the rows read only when asked for: a lookup asks once a hash was found)."""
        hashes = self._sorted_hashes()
        if self._rows is None:
            rows = self._sections[1].array(np.int32)
            if len(rows) != self.n:
                raise CacheDamaged(f"{self._sections[1].source.name}: an id table has the wrong length")
            self._rows = rows
        return hashes, self._rows

    def candidates(self, digest: int) -> list[int]:
        """Rows (of the whole index) whose id has this hash."""
        key = np.uint64(digest)
        if not self.n or not self._may_hold(np.array([key], dtype=np.uint64))[0]:
            return []
        hashes = self._sorted_hashes()
        first = int(np.searchsorted(hashes, key, side="left"))
        last = int(np.searchsorted(hashes, key, side="right"))
        if first == last:
            return []
        _, rows = self.table()
        return [self.lo + int(r) for r in rows[first:last].tolist()]

    def maybe_any(self, digests: U64) -> U64:
        """The digests that some id of this block has (the others are certainly not here)."""
        if not self.n:
            return digests[:0]
        digests = digests[self._may_hold(digests)]
        found: U64 = digests[among(self._sorted_hashes(), digests)] if len(digests) else digests
        return found


class SessionLookup:
    """session id -> row for an index: cached blocks by hash, rows in memory by scan or dict."""

    def __init__(self, session_ids: Objects[str]) -> None:
        self.session_ids = session_ids
        self.chunks: list[IdChunk] = []
        self.stored = 0  # rows covered by the chunks; rows from here on are in memory
        self._index: dict[str, int] | None = None  # memory rows, once built
        self._scans = 0
        self._scanned: dict[str, int] = {}  # answers of scans (a row never changes)
        self._known: dict[str, int | None] = {}  # answers among the chunks (`prefetch`: they never change)

    def add_chunk(self, chunk: IdChunk) -> None:
        self.chunks.append(chunk)
        self.stored = chunk.lo + chunk.n
        self._known.clear()

    def prefetch(self, session_ids: Sequence[object]) -> None:
        """Look up many ids among the cached blocks at once (the sessions that grade events read from
        the log's tail name); the answers serve `row_of` after."""
        wanted = [sid for sid in dict.fromkeys(session_ids) if type(sid) is str and sid not in self._known]
        if self.chunks and wanted:
            self._known.update(dict.fromkeys(wanted))
            self._known.update(self._stored_rows(wanted))

    def _stored_rows(self, wanted: list[str]) -> dict[str, int]:
        """The first cached row of each of these ids that has one: one vectorised probe of each block's
        filter and table for them all, rather than one per id and block (16 blocks at a million
        sessions), then only the ids whose hash a block holds read back."""
        found: dict[str, int] = {}
        digests = id_hashes(wanted)
        listed, ids = digests.tolist(), self.session_ids
        for chunk in self.chunks:  # in row order, as _stored_row: the first row with the id
            hits = set(chunk.maybe_any(digests).tolist())
            for sid, digest in zip(wanted, listed, strict=True) if hits else ():
                if digest in hits and sid not in found:
                    row = next((row for row in chunk.candidates(digest) if ids[row] == sid), None)
                    if row is not None:
                        found[sid] = row
        return found

    def added(self, session_id: str, row: int) -> None:
        """A session was appended at `row`."""
        if self._index is not None:
            self._index[session_id] = row

    def added_many(self, rows: dict[str, int]) -> None:
        if self._index is not None:
            self._index.update(rows)

    def _stored_row(self, session_id: str) -> int | None:
        if not self.chunks:
            return None
        if session_id in self._known:
            return self._known[session_id]
        digest = id_hash(session_id)
        ids = self.session_ids
        for chunk in self.chunks:
            for row in chunk.candidates(digest):
                if ids[row] == session_id:
                    return row
        return None

    def _memory_index(self) -> dict[str, int]:
        if self._index is None:
            ids = self.session_ids
            self._index = {sid: row for row, sid in enumerate(ids.between(self.stored, len(ids)), start=self.stored)}
        return self._index

    def _memory_row(self, session_id: str) -> int | None:
        """The first few lookups scan the ids in memory (a few ms even for a million) rather than
        build the whole id -> row dict (far slower) for one answer."""
        if self._index is None and self._scans < SCAN_LOOKUPS:
            found = self._scanned.get(session_id)
            if found is None:
                self._scans += 1
                position = self.session_ids.find_held(session_id, self.stored)
                if position is None:
                    return None
                found = self._scanned[session_id] = position
            return found
        return self._memory_index().get(session_id)

    def row_of(self, session_id: str) -> int | None:
        row = self._stored_row(session_id)
        return row if row is not None else self._memory_row(session_id)

    def rows_of(self, session_ids: Sequence[str]) -> dict[str, int]:
        """The rows of many ids at once, those with none left out: the cached blocks probed once for them all
        (`prefetch`), the rows in memory read through one id -> row dict (a few ids: scanned, as `row_of`)."""
        wanted = list(dict.fromkeys(session_ids))
        if BULK_SHARE * len(wanted) < self.stored:
            self.prefetch(wanted)
            found = {sid: row for sid in wanted if (row := self._known.get(sid)) is not None}
        else:  # most of the cached rows wanted: their ids read once into a dict (first row of an id), not probed
            first: dict[str, int] = {}
            for row, sid in enumerate(self.session_ids.between(0, self.stored)):
                first.setdefault(sid, row)
            found = {sid: row for sid in wanted if (row := first.get(sid)) is not None}
        rest = [sid for sid in wanted if sid not in found]
        if self._index is None and len(rest) <= SCAN_LOOKUPS - self._scans:
            found.update((sid, row) for sid in rest if (row := self._memory_row(sid)) is not None)
        else:
            memory = self._memory_index()
            found.update((sid, row) for sid in rest if (row := memory.get(sid)) is not None)
        return found

    def any_known(self, session_ids: list[str]) -> bool:
        """Whether any of these ids has a row already."""
        if self.chunks and self._stored_rows(session_ids):
            return True
        if self._index is None and len(session_ids) <= SCAN_LOOKUPS - self._scans:
            return any(self._memory_row(sid) is not None for sid in session_ids)
        return not self._memory_index().keys().isdisjoint(session_ids)
