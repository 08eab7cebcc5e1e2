"""Each session's grade events found by its row, and the rows whose grades carry a kind of note.

The index keeps grade events in log order only: finding one session's meant a pass over all of them
(5,000 at 100k sessions), and the sessions table and the people's scores did that once per session with
an undo. `GradedRows` groups the positions by row once and extends the grouping as the index grows (it
only appends); a grade read before its session (its row unknown then) is placed when the session is read.
The first few rows asked for are found by a scan of the index's row column instead (`SCANS`): grouping every
grade event of the log (50,000 at a million sessions, ~20 ms) for the one session a `record` or a `grade`
shows cost more than the rest of showing it.
"""

from __future__ import annotations

import bisect
import threading
from collections.abc import Callable

import numpy as np

from lesson_credit.core.log.index import LogIndex

SCANS = 8  # rows found by a scan of the index before the grade events are grouped by row
SCAN_EARLY = 64  # grade events read before their session that a scan looks up; more are grouped (looked up once)


class GradedRows:
    """The grade events of an index by the row of the session they name (positions in `index.grades`)."""

    def __init__(self, index: LogIndex) -> None:
        self.index = index
        self._seen = 0  # grade events grouped so far
        self._rows: dict[int, list[int]] = {}  # row -> positions, in log order
        self._row_of: dict[int, int] = {}  # position -> row, for the events placed
        self._loose: list[int] = []  # positions naming no session read yet
        self._loose_at = -1  # sessions read when the loose ones were last looked up
        self._noted: dict[Callable[[str], bool], tuple[int, list[int]]] = {}  # note test -> (seen, positions)
        self._lock = threading.Lock()  # the dashboard reads from worker threads: one grouping at a time
        self._scans = 0  # rows found by a scan so far (`_scanned`)

    def positions(self, row: int) -> list[int]:
        """The positions of the grade events naming the session at `row`, in log order."""
        with self._lock:
            if self._seen == 0 and self._scans < SCANS:  # nothing grouped yet: one row is a scan
                self._scans += 1
                found = self._scanned(row)
                if found is not None:
                    return found
            self._catch_up()
            return list(self._rows.get(row, ()))

    def _scanned(self, row: int) -> list[int] | None:
        """What `positions(row)` returns, by a scan of the index's row column: the events
        read after the session, and those read before it (row -1 then) whose session has that row now;
        None when more than SCAN_EARLY were read before theirs (each scan would look them all up again)."""
        index = self.index
        rows = np.array(index.grade_rows, dtype=np.int64)  # (a copy: no view holds the growing array)
        unknown = np.flatnonzero(rows < 0).tolist()
        if len(unknown) > SCAN_EARLY:
            return None
        found = np.flatnonzero(rows == row).tolist()
        early = [p for p in unknown if index.row_of(index.grades[p][1].session_id) == row]
        return sorted(found + early) if early else found

    def rows_noted(self, noted: Callable[[str], bool], n: int) -> list[int]:
        """The rows below `n` of the sessions with a grade event whose note `noted` picks, in row order.
        Each note is tested once: the positions picked are kept per test (a module's function, not a lambda)."""
        with self._lock:
            self._catch_up()
            grades = self.index.grades
            seen, picked = self._noted.get(noted, (0, []))
            picked = picked + [p for p in range(seen, len(grades)) if (note := grades[p][1].note) and noted(note)]
            self._noted[noted] = (len(grades), picked)
            rows = {self._row_of[p] for p in picked if p in self._row_of}
        return sorted(row for row in rows if row < n)

    def _catch_up(self) -> None:
        index = self.index
        total, sessions = len(index.grades), index.n_sessions  # (sessions: before any look-up below)
        if self._loose and self._loose_at != sessions:  # their sessions may have been read since
            loose, self._loose = self._loose, []
            for position in loose:
                self._place(position, index.row_of(index.grades[position][1].session_id))
        for position in range(self._seen, total):
            known = index.grade_rows[position]
            self._place(position, known if known >= 0 else index.row_of(index.grades[position][1].session_id))
        self._seen = total
        self._loose_at = sessions  # every loose one was looked up with at least these sessions read

    def _place(self, position: int, row: int | None) -> None:
        if row is None:
            self._loose.append(position)
            return
        self._row_of[position] = row
        bisect.insort(self._rows.setdefault(row, []), position)
