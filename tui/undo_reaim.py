"""Undos queued behind an undo the dashboard's writer dropped (tui/writes.py): it reached no log, so the commit it
would have undone is still on top there, and each undo typed after it aims one commit up, as if it had never been
typed (`u u`, the first dropped: the second undoes the grade on top, not the one under it, refused)."""

from __future__ import annotations

from collections.abc import Iterable, MutableMapping
from dataclasses import replace

from lesson_credit.tui.write_state import Reaimed, Write


def reaim(write: Write, waiting: Iterable[Write], log_undos: MutableMapping[str, Write]) -> None:
    """(under the queue's lock, before the writer takes another write) `write` was dropped: `reaim_behind` the
    undos `waiting`, after those it re-aimed already (a key queued after the drop but typed before it: the writer
    dropped it between that key's look for drops and its queueing); an undo of the log's now aimed at a commit
    waits for no screen to read what it leaves (`log_undos`)."""
    was = write.reaimed
    write.reaimed = reaim_behind(write, waiting, was)
    for undo, aimed in write.reaimed.undos[len(was.undos) if was is not None else 0 :] if write.reaimed else ():
        if aimed is None and log_undos.get(undo.session_id) is undo:
            del log_undos[undo.session_id]


def reaim_behind(write: Write, waiting: Iterable[Write], start: Reaimed | None = None) -> Reaimed | None:
    """(the writer, under the queue's lock, before it takes another write) `write`, dropped, was an undo of a
    commit in the log: the undos `waiting` on its session that aim under that commit (or at the log's latest)
    aim one commit up, in key order, after those `start` re-aimed; None when `write` undid nothing in the log."""
    commit = write.reverts
    if write.kind != "undo" or commit is None or commit.line is None:
        return None
    back: Write | None = commit if start is None else start.back
    undos: list[tuple[Write, Write | None]] = [] if start is None else list(start.undos)
    for later in waiting:
        if back is None or later.session_id != write.session_id or later.kind != "undo":
            continue
        if later.reverts is None or later.reverts.seq < back.seq:  # (the log's undo: it takes the one on top)
            undos.append((later, later.reverts))
            later.reverts, back = back, later.reverts
    return Reaimed(tuple(undos), back)


def undone_last(write: Write, reaimed: Reaimed, queued: Iterable[Write]) -> tuple[Write | None, Write | None]:
    """(UI thread) after `reaim_behind`: the commit undone last before each undo `queued` after `write` is the one
    undone last as they now aim, starting from the one undone before `write` (its `kept.undone` follows). Returns
    the commit undone last after them all: (as typed, as they now aim)."""
    before = {id(undo): aimed for undo, aimed in reaimed.undos}
    was, now = write.reverts, write.kept.undone if write.kept is not None else None
    for undo in sorted(queued, key=lambda w: w.seq):
        if undo.seq <= write.seq or undo.kind != "undo":
            continue
        if undo.kept is not None and undo.kept.undone is was and was is not now:
            undo.kept = replace(undo.kept, undone=now)
        was, now = before.get(id(undo), undo.reverts) or was, undo.reverts or now
    return was, now
