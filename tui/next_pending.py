"""`n` on a session opened from the Sessions list: the next pending session down that list, in its order (sort and
filter as shown), not the grading queue's: a grader going down the list newest first went from the newest session
to the oldest pending one."""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt


def next_in_list(
    rows: npt.NDArray[np.int64],
    session_ids: Sequence[str],
    pending_rows: npt.NDArray[np.int64],
    after: str | None,
    start_at: str | None,
    still_pending: Callable[[str], bool],
    touched: Collection[str] = (),
) -> str | None:
    """The first session of `rows` (the list's order, rows of `session_ids`) that is pending after `after`, or at or
    after `start_at` (the highlighted row) when `after` is None; wrapping round, never `after` itself.

    `pending_rows`: those pending when the list was read, and `touched` the sessions this dashboard wrote to since
    (an undo may have made one pending again); `still_pending(id)` says whether one is now (graded here or
    elsewhere since: skipped). Neither `after` nor `start_at` in the list: from its top."""
    import numpy as np

    if touched:
        position = {session_id: row for row, session_id in enumerate(session_ids)}
        more = [position[session_id] for session_id in touched if session_id in position]
        pending_rows = np.union1d(pending_rows, np.asarray(more, dtype=np.int64))
    candidates = np.flatnonzero(np.isin(rows, pending_rows))  # positions in the list's order
    if not len(candidates):
        return None
    start = 0
    reference = after if after is not None else start_at
    if reference is not None:
        try:
            row = session_ids.index(reference)
        except ValueError:
            row = -1
        at = np.flatnonzero(rows == row)
        if len(at):
            # after `after`; at the highlighted row itself
            start = int(np.searchsorted(candidates, at[0], side="right" if after is not None else "left"))
    for position in [*candidates[start:].tolist(), *candidates[:start].tolist()]:
        session_id = session_ids[int(rows[position])]
        if session_id != after and still_pending(session_id):
            return session_id
    return None
