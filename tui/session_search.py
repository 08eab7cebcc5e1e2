"""The Sessions screen's filter over the columns of a SessionTable: no object per session.

The filter matches a session when the text, case-insensitively, is part of its id, category,
grader or timestamp (`fields_match`). For a big log those four fields are lower-cased once,
in a worker, into one string (a "haystack": per session `id␀category␀grader␀timestamp␀␁␀`).
A search is then `str.rfind` from the end, which finds the newest matches and stops at the
ones shown, plus one regex pass over the older part to count the rest: both run in C.

Lower-casing the joined string equals joining the lower-cased fields: the separators are
neither cased nor case-ignorable, so they end any context (Greek final sigma) a field's
lower-casing depends on, and no character lower-cases to a separator.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from lesson_credit.core.api import SessionTable

FIELD_SEP = "\x00"
ROW_SEP = "\x01"
CHUNK = 1 << 16  # sessions lower-cased and joined at a time: the worker holds the GIL briefly each step

IntArray = npt.NDArray[np.int64]


def fields_match(needle: str, session_id: str, category: str | None, grader: str | None, timestamp: str | None) -> bool:
    """The filter's rule for one session; `needle` is already lower-cased and not empty."""
    return (
        needle in session_id.lower()
        or needle in (category or "").lower()
        or needle in (grader or "").lower()
        or needle in (timestamp or "").lower()
    )


@dataclass(frozen=True, eq=False)
class Haystack:
    """The searchable text of some sessions (all of them, or the pending ones), in log order."""

    text: str
    ends: IntArray  # offset in `text` of each session's ROW_SEP
    rows: IntArray | None  # the table row of each session here; None: row i is table row i

    def newest(self, needle: str, limit: int) -> tuple[IntArray, int]:
        """(table rows of up to `limit` matching sessions newest first, how many match in all)."""
        text, ends = self.text, self.ends
        found: list[int] = []
        end = len(text)
        while len(found) < limit and end > 0:
            pos = text.rfind(needle, 0, end)
            if pos < 0:
                end = 0
                break
            local = int(np.searchsorted(ends, pos))  # the first session ending after the match
            found.append(local)
            end = int(ends[local - 1]) if local else 0  # go on before this session
        count = len(found)
        if end > 0:
            # the older part is not searched yet: count the sessions matching there. Each match runs on
            # to its session's end, so a session counts once; the empty group makes findall list ""s
            # (no object per match), faster than finditer
            pattern = re.compile(re.escape(needle) + f"()[^{ROW_SEP}]*")
            count += len(pattern.findall(text, 0, end))
        local_rows = np.asarray(found, dtype=np.int64)
        return (local_rows if self.rows is None else self.rows[local_rows]), count


def build_haystack(table: SessionTable, rows: IntArray | None = None, chunk: int = CHUNK) -> Haystack | None:
    """The haystack of `rows` of the table (every row when None); None when a field holds ROW_SEP."""
    ids = table.session_ids
    nullable: tuple[Sequence[str | None], ...] = (table.categories, table.graders, table.timestamps)
    n = len(table) if rows is None else len(rows)
    pieces: list[str] = []
    ends: list[IntArray] = []
    offset = 0
    for start in range(0, n, chunk):
        stop = min(n, start + chunk)
        count = stop - start
        parts: list[str] = [ROW_SEP] * (5 * count)
        if rows is None:
            parts[0::5] = ids[start:stop]
            for slot, column in enumerate(nullable, 1):
                parts[slot::5] = ["" if value is None else value for value in column[start:stop]]
        else:
            picked = rows[start:stop].tolist()
            parts[0::5] = [ids[row] for row in picked]
            for slot, column in enumerate(nullable, 1):
                parts[slot::5] = ["" if (value := column[row]) is None else value for row in picked]
        text = (FIELD_SEP.join(parts) + FIELD_SEP).lower()
        codes = (
            np.frombuffer(text.encode("ascii"), dtype=np.uint8)
            if text.isascii()  # one byte per character
            else np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
        )
        chunk_ends = np.flatnonzero(codes == ord(ROW_SEP))
        if len(chunk_ends) != count:
            return None  # a field holds the row separator: search row by row instead
        pieces.append(text)
        ends.append(chunk_ends + offset)
        offset += len(text)
    return Haystack(
        "".join(pieces),
        np.concatenate(ends) if ends else np.zeros(0, dtype=np.int64),
        None if rows is None else np.asarray(rows, dtype=np.int64),
    )


@dataclass(frozen=True)
class Found:
    rows: IntArray  # table rows to show, newest first
    count: int  # sessions matching in all (may be more than shown)


@dataclass(frozen=True, eq=False)
class SessionSearch:
    """Finds the newest sessions matching the filter; built off the UI thread (see `build`)."""

    table: SessionTable
    pending_rows: IntArray  # rows of pending sessions, in log order
    every: Haystack | None  # None: search row by row (a field holds a separator)
    pending: Haystack | None

    @classmethod
    def build(cls, table: SessionTable, chunk: int = CHUNK) -> SessionSearch:
        pending_rows = np.flatnonzero(np.isnan(table.base)).astype(np.int64)
        every = build_haystack(table, chunk=chunk)
        if every is None:
            pending = None
        elif len(pending_rows) == len(table):
            pending = every  # every session is pending: the same text
        else:
            pending = build_haystack(table, pending_rows, chunk)
        return cls(table, pending_rows, every, pending)

    def find(self, needle: str, pending_only: bool, limit: int) -> Found:
        """Up to `limit` matching sessions newest first, and how many match in all.

        `needle` as typed (matched case-insensitively); empty matches every session."""
        if not needle:
            if pending_only:
                return Found(self.pending_rows[::-1][:limit].copy(), len(self.pending_rows))
            n = len(self.table)
            return Found(np.arange(n - 1, max(n - limit, 0) - 1, -1, dtype=np.int64), n)
        needle = needle.lower()
        haystack = self.pending if pending_only else self.every
        if haystack is not None and FIELD_SEP not in needle and ROW_SEP not in needle:
            rows, count = haystack.newest(needle, limit)
            return Found(rows, count)
        return self._scan(needle, pending_only, limit)

    def _scan(self, needle: str, pending_only: bool, limit: int) -> Found:
        """Row by row, newest first: for a needle or a field holding a separator character."""
        table = self.table
        candidates = self.pending_rows if pending_only else np.arange(len(table), dtype=np.int64)
        found: list[int] = []
        count = 0
        ids, categories, graders, timestamps = table.session_ids, table.categories, table.graders, table.timestamps
        for row in reversed(candidates.tolist()):
            if fields_match(needle, ids[row], categories[row], graders[row], timestamps[row]):
                count += 1
                if len(found) < limit:
                    found.append(row)
        return Found(np.asarray(found, dtype=np.int64), count)
