"""Sessions selected but never recorded: a `select` logged for a session id that no session record has,
though a later session was recorded (a session-end hook that did not run or failed). A session still
running has no record after its selection yet and is not one of them.

Read from the log index without a pass over the log or over every selection: the ids of the recorded
sessions and of the cached blocks' selections are compared by their 64-bit hashes (core/log/lookup.py),
and only the selections whose id no recorded session has are read back (a hash two different ids share
counts as recorded: one in 2**64 per pair)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from lesson_credit.core.log.columns import Objects, StoredChunk
from lesson_credit.core.log.lookup import U64, id_hashes

if TYPE_CHECKING:
    from lesson_credit.core.log.index import LogIndex


def selected_never_recorded(index: LogIndex) -> list[tuple[str, int]]:
    """(session id, line of its latest selection) of each session id a selection names and no session
    record has, whose latest selection came before the last session record, in the order of those lines."""
    n = index.n_sessions
    if not n or not len(index.selections):
        return []
    last_record = int(index.session_lines[n - 1])
    recorded = _recorded_hashes(index)
    latest: dict[str, int] = {}
    for line, session_id in _unmatched(index, recorded):  # a hash no recorded id has: an id none has
        latest[session_id] = max(line, latest.get(session_id, line))
    found = [(session_id, line) for session_id, line in latest.items() if line < last_record]
    return sorted(found, key=lambda item: item[1])


def _recorded_hashes(index: LogIndex) -> U64:
    """The hashes of every recorded session's id: the cached blocks' tables, then the rows read since."""
    lookup = index.lookup
    held = id_hashes(index.session_ids.between(lookup.stored, index.n_sessions))
    return np.concatenate([*(chunk.table()[0] for chunk in lookup.chunks), held])


def _unmatched(index: LogIndex, recorded: U64) -> list[tuple[int, str]]:
    """(line, session id) of the selections naming a session id whose hash no recorded session's id has (the
    ones without an id are left out), in log order: of the cached blocks, only those are read back."""
    selections = index.selections
    positions: list[int] = []
    for chunk in index.selection_chunks:
        hashes, rows = chunk.table()
        missing = ~np.isin(hashes, recorded)
        positions.extend((chunk.lo + rows[missing].astype(np.int64)).tolist())
    read = map(selections.__getitem__, sorted(positions))  # each names a session (the tables hold no others)
    stored = [(line, s.session_id) for line, s in read if s.session_id is not None]
    held = selections.between(_held_from(selections), len(selections))
    named = [(line, s.session_id) for line, s in held if isinstance(s.session_id, str)]
    unknown = ~np.isin(id_hashes([session_id for _, session_id in named]), recorded)
    return stored + [pair for pair, missing in zip(named, unknown.tolist(), strict=True) if missing]


def _held_from(objects: Objects[Any]) -> int:
    """Where the items held in memory start: after the stored chunks (which come first)."""
    start = len(objects)
    for first, chunk in objects.reversed_chunks():
        if isinstance(chunk, StoredChunk):
            break
        start = first
    return start
