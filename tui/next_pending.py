"""`n` on a session opened from the Sessions list: the next pending session down that list, in its order (sort and
filter as shown), not the grading queue's: a grader going down the list newest first went from the newest session
to the oldest pending one.

The list's order is read once per (list read, filter, sort) into a `ListOrder`; each `n` then costs the sessions
it looks at, not a sort or a search of every session (a million of them: about a second a key on the app's
thread)."""

from __future__ import annotations

import heapq
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

CHUNK = 256  # positions turned into Python ints at a time while walking the pending ones


@dataclass(frozen=True, eq=False)
class ListOrder:
    """A Sessions list's order as rows of its table, read once: `rows[p]` is the row at position `p`."""

    rows: npt.NDArray[np.int64]
    position: npt.NDArray[np.int64]  # row -> its position in the list; -1: the filter hides it
    pending: npt.NDArray[np.int64]  # positions of the rows pending when the list was read, ascending

    @classmethod
    def of(cls, rows: npt.NDArray[np.int64], pending_rows: npt.NDArray[np.int64], n_rows: int) -> ListOrder:
        """`rows` in the list's order (of a table of `n_rows`), `pending_rows` those pending when it was read."""
        import numpy as np

        position = np.full(n_rows, -1, dtype=np.int64)
        position[rows] = np.arange(len(rows), dtype=np.int64)
        pending = position[np.asarray(pending_rows, dtype=np.int64)]
        return cls(np.asarray(rows, dtype=np.int64), position, np.sort(pending[pending >= 0]))

    def position_of(self, row: int | None) -> int | None:
        """Where `row` is in the list (None: not in it)."""
        if row is None or not 0 <= row < len(self.position):
            return None
        at = int(self.position[row])
        return None if at < 0 else at


def _walk(sorted_positions: npt.NDArray[np.int64], start: int) -> Iterator[int]:
    """The positions from the first at or after `start`, then those before it: a chunk at a time."""
    import numpy as np

    split = int(np.searchsorted(sorted_positions, start))
    for lo, hi in ((split, len(sorted_positions)), (0, split)):
        for at in range(lo, hi, CHUNK):
            yield from sorted_positions[at : min(at + CHUNK, hi)].tolist()


def next_in_list(
    order: ListOrder,
    start: int,
    after_row: int | None,
    still_pending: Callable[[int], bool],
    touched_rows: Sequence[int] = (),
) -> int | None:
    """The row of the first session pending at or after position `start` of the list (wrapping round), never
    `after_row` itself (the session `n` was typed on).

    Candidates are the rows pending when the list was read and `touched_rows` (those this dashboard wrote to
    since: an undo may have made one pending again); `still_pending(row)` says whether one is now (graded here
    or elsewhere since: skipped)."""
    size = len(order.rows)
    if not size:
        return None
    start %= size
    touched = sorted({p for p in map(order.position_of, touched_rows) if p is not None})
    # the touched ones in the same round from `start` as the walk: at or after it, then before it
    touched_round = [p for p in touched if p >= start] + [p for p in touched if p < start]

    def cyclic(position: int) -> int:
        return (position - start) % size

    seen = -1
    for position in heapq.merge(_walk(order.pending, start), touched_round, key=cyclic):
        if position == seen:
            continue  # pending when read and touched since: looked at once
        seen = position
        row = int(order.rows[position])
        if row != after_row and still_pending(row):
            return row
    return None


def start_position(order: ListOrder, row: int | None, after: bool) -> int:
    """Where `n` starts looking: just after the open session's position (`after`), at the highlighted row's
    otherwise; the list's top when that row is not in it."""
    at = order.position_of(row)
    if at is None:
        return 0
    return at + 1 if after else at
