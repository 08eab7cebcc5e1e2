"""What a write of the dashboard's queue that reached no log leaves (a mixin of tui/writes.py's WriteQueue): a
grade or an undo discarded (ctrl+d, or the writer dropped it) or refused forgets what it promised, puts back the
commits and the expectations typed over it, and the screens go by the log again where nothing of the queue's is left.
"""

from __future__ import annotations

import threading
from collections import deque
from dataclasses import replace

from lesson_credit.tui.undo_reaim import undone_last
from lesson_credit.tui.write_state import Reaimed, Write


class UnwrittenWrites:
    """The write queue's side for writes that reached no log (WriteQueue has these attributes: tui/writes.py)."""

    _lock: threading.Lock
    _waiting: deque[Write]
    _stacks: dict[str, list[Write]]
    _undone: dict[str, Write]
    _expected: dict[str, float | None]
    _written_in: dict[str, int]
    _settled: set[str]
    _read_from: dict[str, int]
    _read_in: dict[str, int]
    _left: dict[str, tuple[float | None, bool]]
    _latest: dict[str, Write]
    _log_undos: dict[str, Write]
    _applying: Write | None
    _dropped: list[Write]

    def failed(self, write: Write) -> None:
        """`write` was discarded and reached no log: forget what it promised (on the UI thread).

        A failed commit leaves the undo stack (there is nothing to undo); a failed undo puts its
        commit back when it is written or being retried (`u` may try again), and the commit undone before it
        is again the one undone last. When no other write for the session is queued or being applied, the
        session's expectation is dropped, so prompts and next-pending go by the log again (a view read since
        the latest write here that was written says the person's score); otherwise the latest of those is
        the session's latest write, and what it was typed to leave is expected (the one being retried may yet
        be written). A settings save promised nothing of the kind."""
        if write.kind == "settings" or write.forgotten:
            return
        write.forgotten = True
        with self._lock:
            if write in self._dropped:  # (forgotten before its WriteDiscarded arrives: `_forget_dropped`)
                self._dropped.remove(write)
        sid = write.session_id
        stack = self._stacks.setdefault(sid, [])
        if write.kind == "grade":
            if write in stack:
                stack.remove(write)
            self._typed_over(write, write.expected_before, write.person_before)
        elif write.reverts is not None:
            reaimed = write.reaimed
            if write.kept is not None and write.kept.expected:  # (typed over it: over the grade it would undo)
                aimed = frozenset(id(undo) for undo, _ in reaimed.undos) if reaimed is not None else frozenset()
                self._typed_over(write, write.kept.grade, write.reverts.value, aimed)
            with self._lock:  # (a commit the writer is at may yet be written: if not, its own discard takes it off)
                at_it = write.reverts is self._applying
            if reaimed is not None:
                self._reaimed(write, reaimed)
            elif write.reverts.line is not None or at_it:
                self._restack(write.reverts)
            if reaimed is None:
                self._put_back_undone(write)
        with self._lock:
            left = [
                w for w in (self._applying, *self._waiting) if w is not None and w is not write and w.session_id == sid
            ]
        if left and left[-1].typed_leaves[0]:  # what the latest of them was typed to leave
            self._expected[sid] = left[-1].typed_leaves[1]
        elif not left:
            self._fall_back(sid)
        else:
            self._expected.pop(sid, None)
        if not left:
            read_in = self._read_in.get(sid)  # the version reading the latest write here that was written
            if read_in is not None:  # (queuing the write forgot it: from there a view says, as before it)
                self._read_from[sid] = read_in
        if self._latest.get(sid) is write:  # it reached no log: the latest left is refused or written in its place
            del self._latest[sid]
            if left:
                self._latest[sid] = left[-1]
        self.forget_log_undo(write)

    def _fall_back(self, sid: str) -> None:
        """No write on the session is left to come: the grade the latest written here left in force is in force (a
        screen's view may predate it), and once a snapshot holding it has landed, the log's (`settle`). With none
        written here (or what it left not known), the screens go by the log."""
        with self._lock:
            left = self._left.get(sid)
            read = sid not in self._written_in  # (`settle` found it read while no write was left)
        if left is None:
            self._expected.pop(sid, None)
            return
        self._expected[sid] = left[0]
        if left[1] and read:
            self._settled.add(sid)

    def _restack(self, commit: Write) -> None:
        """`commit` is undoable again: back on its session's stack in key order, under the commits typed after
        the undo that popped it."""
        stack = self._stacks.setdefault(commit.session_id, [])
        at = next((i for i, w in enumerate(stack) if w.seq > commit.seq), len(stack))
        stack.insert(at, commit)

    def _typed_over(
        self, write: Write, grade: float | None, person: float | None, reaimed: frozenset[int] = frozenset()
    ) -> None:
        """`write` reached no log: the commits typed over it were typed over what it would have replaced, the
        grade in force `grade` and the person's score `person`; an undo of one leaves that, and so on through the
        writes typed after them (in key order), as does an undo `reaimed` (ids) at another commit."""
        sid = write.session_id
        with self._lock:
            queued = [w for w in (self._applying, *self._waiting) if w is not None and w.session_id == sid]
        later = {id(w): w for w in (*self._stacks.get(sid, []), *queued, self._undone.get(sid)) if w is not None}
        below: dict[int, tuple[float | None, float | None, Write | None]] = {id(write): (grade, person, write.over)}
        moved: set[int] = set()  # commits now typed over something else: their undos leave that
        for w in sorted(later.values(), key=lambda w: w.seq):
            if w.seq <= write.seq:
                continue
            under = below.get(id(w.over)) if w.over is not None else None
            if w.kind == "grade" and under is not None:
                w.expected_before, w.person_before, w.over = under
                moved.add(id(w))
            elif w.kind == "undo" and under is not None and w.kept is not None and w.kept.expected:
                w.kept, w.over = replace(w.kept, grade=under[0]), under[2]  # (refused, it leaves that)
            if w.kind == "undo" and w.reverts is not None and (id(w.reverts) in moved or id(w) in reaimed):
                w.typed_leaves = True, w.reverts.expected_before
                below[id(w)] = (w.reverts.expected_before, w.reverts.person_before, w)

    def _reaimed(self, write: Write, reaimed: Reaimed) -> None:
        """The undo `write`, dropped by the writer, re-aimed the undos behind it (`_drop`): the commit undone last
        follows them (`undone_last`), and the commit left over is undoable again."""
        sid = write.session_id
        with self._lock:
            queued = [w for w in (self._applying, *self._waiting) if w is not None and w.session_id == sid]
        was, now = undone_last(write, reaimed, queued)
        if self._undone.get(sid) is was:
            if now is None:
                self._undone.pop(sid, None)
            else:
                self._undone[sid] = now
        if reaimed.back is not None and reaimed.back.line is not None:
            self._restack(reaimed.back)

    def discarded(self, writes: list[Write]) -> None:
        """`writes` (oldest first, as `discard` returns them) reached no log: `failed` for each, the latest first,
        so each undo puts back the commit it popped (and the one undone before it) in the order they were."""
        for write in reversed(writes):
            self.failed(write)

    def _put_back_undone(self, write: Write) -> None:
        """`write`, an undo of a commit, wrote nothing: the commit undone last is again the one before it."""
        sid = write.session_id
        if write.kept is None or self._undone.get(sid) is not write.reverts:
            return  # (another undo was queued after it and stands)
        if write.kept.undone is None:
            self._undone.pop(sid, None)
        else:
            self._undone[sid] = write.kept.undone

    def forget_log_undo(self, write: Write) -> bool:
        """No screen holds its keys for `write` to be read any more: its outcome is in and it wrote nothing, or
        (the writer) it is in the log but the log could not be read after it. True when it was an undo of the
        log's that a screen held its keys for (`log_undo_unread`)."""
        with self._lock:
            if self._log_undos.get(write.session_id) is not write:
                return False
            del self._log_undos[write.session_id]
            return True

    def refused(self, write: Write) -> None:
        """`write`, an undo, was refused and wrote nothing (on the UI thread): the session's grade is what
        it was before it, so unless a later write for the session is queued, the queue expects what it did
        then (settled: the log's grade), not what the undo would have left; and when none of this dashboard's
        writes on the session reached the log (all dropped or refused), nothing: the log and the views say."""
        if write.kind != "undo" or write.kept is None:
            return
        self.forget_log_undo(write)
        sid = write.session_id
        commit = write.reverts
        if write.stale and commit is not None and commit.line is not None:  # graded over since: so are the
            # commits written before it (not those queued after the undo)
            for older in (commit, *self._stacks.get(sid, [])):
                older.buried = older.buried or (older.line is not None and older.line <= commit.line)
        if self._latest.get(sid) is not write:
            # a write queued after it (gone once written and read back): its expectation stands (what it
            # writes, or wrote already)
            return
        del self._latest[sid]  # its outcome is in: nothing else reads it
        stored = commit is not None and (commit.line is not None or commit.unread)
        if commit is not None and stored and commit.before_own != commit.value:  # it stands: `u` may try again
            self._restack(commit)
            self._put_back_undone(write)
        kept = write.kept
        if sid not in self._read_in:  # nothing of this dashboard's on the session reached the log: the log says
            self._expected.pop(sid, None)
            self._undone.pop(sid, None)
            self._read_from[sid] = 0
            return
        if kept.expected:
            self._expected[sid] = kept.grade
        else:
            self._expected.pop(sid, None)
        if kept.settled:
            self._settled.add(sid)
        # the latest write on the session is the one written before the undo: from the version that read it, a
        # view says (an undo typed before that write was read back found no version to keep)
        read_from = kept.read_from if kept.read_from is not None else self._read_in.get(sid)
        if read_from is not None:
            self._read_from[sid] = read_from
