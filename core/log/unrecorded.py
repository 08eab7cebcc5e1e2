"""Sessions selected but never recorded: a `select` logged for a session id that no session record has,
though a later session was recorded (a session-end hook that did not run or failed). A session still
running has no record after its selection yet and is not one of them. And the other way: the sessions
recorded last with no selection logged for them (a hook whose `select` failed still records).

Read from the log index without a pass over the log or over every selection: the parsed-log cache's
blocks keep their records' and their selections' ids as 64-bit hashes (core/log/lookup.py), compared as
they are, and only the cached selections whose hash no cached record has are read back (a hash two
different ids share counts as recorded: one in 2**64 per pair); what was read since is compared by id."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from lesson_credit.core.log.columns import Objects, StoredChunk
from lesson_credit.core.log.lookup import U64, among, id_hashes

if TYPE_CHECKING:
    from lesson_credit.core.log.index import LogIndex


def selected_never_recorded(index: LogIndex) -> list[tuple[str, int]]:
    """(session id, line of its latest selection) of each session id a selection names and no session
    record has, whose latest selection came before the last session record, in the order of those lines."""
    n = index.n_sessions
    if not n or not len(index.selections):
        return []
    last_record = int(index.session_lines[n - 1])
    latest: dict[str, int] = {}
    for line, session_id in _unmatched(index):
        latest[session_id] = max(line, latest.get(session_id, line))
    found = [(session_id, line) for session_id, line in latest.items() if line < last_record]
    return sorted(found, key=lambda item: item[1])


def recorded_unselected(index: LogIndex, back: int) -> tuple[list[str], str | None]:
    """The ids of the sessions recorded last with no lesson chosen before them (those included during one do not
    count) that no selection names (in log order: what a hook whose `select` failed records), and the latest
    session before them that one names; ([], None) when a session with lessons but no selection comes first
    (recorded without `select`: another agent's, gptme's own choice), or none of the last `back` sessions is
    named by one. Ids the cached blocks' selections name are compared by hash (a hash two ids share counts as
    selected), the rest by id."""
    n = index.n_sessions
    lo = max(n - back, 0)
    held = {s.session_id for _, s in index.selections.between(_held_from(index.selections), len(index.selections))}
    hashes = [chunk.table()[0] for chunk in index.selection_chunks]
    cached: U64 = np.sort(np.concatenate([np.zeros(0, np.uint64), *hashes]))
    recent = index.session_ids.between(lo, n)
    named = among(cached, id_hashes(recent)) | np.fromiter((s in held for s in recent), bool, len(recent))
    sizes = np.diff(index.session_start.span(lo, n + 1)).tolist()
    tail: list[str] = []
    for row in range(n - 1, lo - 1, -1):
        if named[row - lo]:
            return tail[::-1], recent[row - lo]
        if sizes[row - lo] > len(index.during.get(row) or ()):  # a lesson chosen before the session (not --during)
            return [], None
        tail.append(recent[row - lo])
    return [], None


def _unmatched(index: LogIndex) -> list[tuple[int, str]]:
    """(line, session id) of the selections naming a session id no session record has (those naming none are
    left out), in log order. The records read since the cache are compared by id; the cached blocks' by the
    hashes of their ids, a different hash being a different id: of the cached selections, only those whose
    hash no cached record has are read back."""
    lookup, selections = index.lookup, index.selections
    held_ids = set(index.session_ids.between(lookup.stored, index.n_sessions))
    cached: U64 = np.sort(np.concatenate([np.zeros(0, np.uint64), *(chunk.table()[0] for chunk in lookup.chunks)]))
    positions: list[int] = []
    for chunk in index.selection_chunks:
        hashes, rows = chunk.table()
        positions.extend((chunk.lo + rows[~among(cached, hashes)].astype(np.int64)).tolist())
    read = map(selections.__getitem__, sorted(positions))  # each names a session (the tables hold no others)
    stored = [(line, s.session_id) for line, s in read if s.session_id is not None and s.session_id not in held_ids]
    held = selections.between(_held_from(selections), len(selections))
    named = [(line, s.session_id) for line, s in held if s.session_id is not None and s.session_id not in held_ids]
    if len(cached) and named:
        unknown = ~among(cached, id_hashes([session_id for _, session_id in named]))
        named = [pair for pair, missing in zip(named, unknown.tolist(), strict=True) if missing]
    return stored + named


def _held_from(objects: Objects[Any]) -> int:
    """Where the items held in memory start: after the stored chunks (which come first)."""
    start = len(objects)
    for first, chunk in objects.reversed_chunks():
        if isinstance(chunk, StoredChunk):
            break
        start = first
    return start
