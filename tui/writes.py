"""The dashboard's writes: one FIFO queue of grades, undos and settings saves, applied in key order,
never cancelled.

Keys enqueue at once (on the UI thread, in the order they were pressed); one writer at a time
takes the oldest write and appends it under the log lock (`WriteQueue.take`, `apply`). A write
that fails (another writer holds the lock too long, the database is down, the disk refuses) stays
the oldest: the writer waits and tries it again (`retry_after_failure`), the writes behind it
wait behind it, and the app says that it waits and why. A write leaves the queue only once
written, or when the operator discards what is not written yet (`discard`). A settings save (What-if's
ctrl+s, confirmed) is a write like the others: it writes config.toml and bandit-state.json, not the
log, and waits, is retried and is discarded the same way. Undo is a
stack per session for the dashboard's lifetime: the stack is popped when `u` is pressed, so
`5 c u` undoes the 0.5 whatever the timing. An undo is the CLI's (`Workspace.append_undo`,
grading.undo_of), checked to revert the commit popped: a grade event, logged by the operator, that
puts back the operator's reward source (people, docs/records.md) as it was before the commit, with a
note naming the line it reverts: the person's earlier grade, or a retraction (`base_reward` null)
when there was none, so the score in force is again the one before the commit (a judge's or a
heuristic's, or pending), and no grade the operator never gave is logged. A commit that changed
nothing (the operator's own grade again) has nothing to undo, here as in the log's undo stack. With
none of its commits left on the stack, `u` undoes the operator's latest grade in the log not undone yet
(`reverts` None), exactly as `lesson-credit undo` does, refusals worded alike. What such an undo leaves is
the log's to say, so the session's screen holds the keys typed after it (`log_undo_unread`) until its
outcome is in: refused, or read in the view the keys act on (not while it is unwritten and a write waits to be
retried, nor once the read that would show it failed: waiting would not help). An undo of a commit graded over
since (the operator graded again elsewhere, or another person did) is refused in the engine's words, and `u`
passes by the dashboard's commits it buried (`buried`): the next `u` undoes as `lesson-credit undo` would.
What a write that reached no log leaves (discarded, dropped, refused) is tui/write_failures.py's.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, TypeVar

from lesson_credit.tui.source import WorkspaceSource
from lesson_credit.tui.text import one_line
from lesson_credit.tui.undo_reaim import reaim
from lesson_credit.tui.write_events import append_event, grade_words
from lesson_credit.tui.write_failures import UnwrittenWrites
from lesson_credit.tui.write_state import Kept, SettingsSave, Write, WriteOutcome

if TYPE_CHECKING:
    from lesson_credit.core.api import GradeAppended

OPERATOR = "manual"  # the grader name of everything this dashboard writes

T = TypeVar("T")


class WriteQueue(UnwrittenWrites):
    """Writes waiting for the writer, the undo stacks, and what each session is expected to be once
    the queue is applied (read on the UI thread to decide whether a commit replaces a grade)."""

    def __init__(self, operator: str = OPERATOR) -> None:
        self.operator = operator
        self._lock = threading.Lock()
        self._waiting: deque[Write] = deque()
        self._draining = False
        self._stacks: dict[str, list[Write]] = {}
        self._undone: dict[str, Write] = {}  # the commit undone last per session (`expected_person`)
        self._expected: dict[str, float | None] = {}  # after every queued write, as typed
        self._last_line: dict[str, int] = {}  # the line of this dashboard's latest event per session
        self._written_in: dict[str, int] = {}  # the first source version whose snapshots hold our latest write
        self._settled: set[str] = set()  # sessions whose writes from here are all in a snapshot landed since
        self._read_from: dict[str, int] = {}  # the first source version holding the latest write (kept after settle)
        self._read_in: dict[str, int] = {}  # the first source version holding the latest write written (`refused`)
        # the grade in force just after the latest write written per session, and whether `read_in` followed (`failed`)
        self._left: dict[str, tuple[float | None, bool]] = {}
        # the latest grade or undo queued per session until its outcome is in (UI thread): `refused` reads it
        self._latest: dict[str, Write] = {}
        # the latest undo of the log's (`reverts` None) per session, until a later write (`log_undo_unread`)
        self._log_undos: dict[str, Write] = {}
        self._log_grade: Callable[[str], float | None] | None = None  # the grade in force in the latest snapshot
        self._applying: Write | None = None  # the write the writer has taken and not finished
        self._taken_at = 0.0  # when the writer took `_applying` (time.monotonic)
        self._trouble: str | None = None  # why `_applying` failed last (None: it has not failed)
        self._discard = False  # the operator discarded `_applying`: the writer drops it unless it is written
        self._wake = threading.Event()  # ends the writer's wait before a retry early
        self._queued = 0  # writes queued so far (each write's `seq`)
        self._dropped: list[Write] = []  # writes the writer dropped, until `failed` forgets them (UI thread)

    # ---------------------------------------------------------------- UI thread

    def commit(
        self,
        session_id: str,
        value: float,
        note: str | None,
        shown: float | None,
        outcome: str | None = None,
        person_before: float | None = None,
        asked_line: int | None = None,
        seen_line: int | None = None,
    ) -> Write:
        """Queue a grade; `shown` is the grade in force on screen (what it replaces if nothing is queued),
        `person_before` the operator's source's score it replaces as typed (`expected_person`); `asked_line` and
        `seen_line` Write's."""
        self._forget_dropped()
        write = Write("grade", session_id, value=value, note=note or None, outcome=outcome, asked_line=asked_line)
        write.seen_line = seen_line
        write.expected_before = self.expected(session_id, shown)
        write.person_before = person_before
        self._stacks.setdefault(session_id, []).append(write)
        self._expected[session_id] = value
        self._settled.discard(session_id)
        self._read_from.pop(session_id, None)
        with self._lock:  # (the writer reads it: `read_in`)
            self._log_undos.pop(session_id, None)
        self._enqueue(write)
        return write

    def _latest_commit_session(self) -> str | None:
        """The session of this dashboard's latest grade not undone (None: none): where `u` undoes one."""
        latest = max(
            (w for stack in self._stacks.values() for w in stack if not w.buried), key=lambda w: w.seq, default=None
        )
        return None if latest is None else latest.session_id

    def undo(self, session_id: str) -> Write:
        """Queue an undo of the operator's latest grade on the session not undone yet: this dashboard's
        latest commit not undone, else (`reverts` None) the log's, as `lesson-credit undo` finds it."""
        self._forget_dropped()
        stack = self._stacks.get(session_id)
        while stack and stack[-1].buried:  # (it stays the person's score as typed until then: `expected_person`)
            stack.pop()
        commit = stack.pop() if stack else None
        kept = Kept(
            expected=session_id in self._expected,
            grade=self._expected.get(session_id),
            settled=session_id in self._settled,
            read_from=self._read_from.get(session_id),
            undone=self._undone.get(session_id),
        )
        write = Write("undo", session_id, reverts=commit, kept=kept)
        if commit is None:  # (where `u` would have found one: told beside a refusal, `_append_undo`)
            write.elsewhere = self._latest_commit_session()
        if commit is not None:
            self._read_from.pop(session_id, None)
            self._undone[session_id] = commit
            self._expected[session_id] = commit.expected_before
            self._settled.discard(session_id)
        # (else what it leaves is the log's to say: expected as before until the snapshot holding it lands, and
        # the session's screen holds the keys meanwhile: `log_undo_unread`)
        with self._lock:
            if commit is None:
                self._log_undos[session_id] = write
            else:
                self._log_undos.pop(session_id, None)
        self._enqueue(write)
        return write

    def save_settings(self, save: SettingsSave, then: Callable[[], None] | None = None) -> Write:
        """Queue a settings save; `then` runs on the UI thread once it is written."""
        write = Write("settings", "", save=save, then=then)
        self._enqueue(write)
        return write

    def saving_settings(self) -> bool:
        """Whether a settings save is queued or being applied (the saved settings are about to change)."""
        with self._lock:
            return any(w.kind == "settings" for w in (*self._waiting, self._applying) if w is not None)

    def expected(self, session_id: str, shown: float | None) -> float | None:
        """The grade the session will have once the queue is applied (`shown` when nothing is queued).

        Once `settle` found the session's writes from here read, the log says: the grade in force in the
        latest snapshot (it holds those writes, so it is never older than them, and it holds what another
        process logged since, such as an undo), not what this dashboard wrote nor a screen's `shown`, which
        may predate the snapshot."""
        if session_id in self._settled and self._log_grade is not None:
            return self._log_grade(session_id)
        return self._expected.get(session_id, shown)

    def expected_person(self, session_id: str, shown: float | None, read_at: int | None) -> float | None:
        """The operator's source's (people's) score once the queue is applied, which a commit would replace:
        `shown`, from a view read at source version `read_at`, when that view holds this dashboard's latest
        write on the session or there is none; else as typed here: the latest commit not undone, or, every
        commit undone, the score before the one undone last (the log's, once it was written). Not the grade
        in force (`expected`): an undo over a judge's score leaves the judge's in force and no person's."""
        since = self._read_from.get(session_id)
        if since is not None and read_at is not None and read_at >= since:
            return shown
        stack = self._stacks.get(session_id)
        if stack:
            return stack[-1].value
        commit = self._undone.get(session_id)
        if commit is None:
            return shown
        return commit.before_own if commit.line is not None else commit.person_before

    def touched(self) -> frozenset[str]:
        """Sessions this dashboard has queued writes for that the log as read may not show yet (their
        expected grade may differ from the log's): not those `settle` found read."""
        return frozenset(sid for sid in self._expected if sid not in self._settled)

    def written_here(self) -> int:
        """How many sessions this dashboard has queued writes for (a list filtered by `graded_unread`
        may leave out that many of its rows)."""
        return len(self._expected)

    def graded_unread(self, session_id: str, read_at: int) -> bool:
        """This dashboard has queued a grade for the session that its undos have not taken back, and a
        view read at source version `read_at` does not hold it (not written yet, or read in a later
        snapshot): a person graded it, as the operator will find it once the view is loaded again. A view
        that holds the write says for itself (a grade undone elsewhere since is pending in it).

        By version, not by `settle`: a write read in a snapshot that landed while a list was under
        another screen is in the log as read, not in that list (`escape enter` typed ahead opened the
        session just graded again)."""
        if self._expected.get(session_id) is None:
            return False
        since = self._read_from.get(session_id)
        return since is None or since > read_at

    def still_to_grade(self, items: Iterable[T], read_at: int, session_of: Callable[[T], str]) -> list[T]:
        """`items`, each about the session `session_of` names, without those graded here that a view read at
        source version `read_at` does not hold (`graded_unread`): a list of sessions to grade as the operator
        will find it once it is loaded again. The pending list, the grading queue and Health's pending findings
        leave them out at once, so `escape enter` typed ahead after a grade opens the next session, not it."""
        return [item for item in items if not self.graded_unread(session_of(item), read_at)]

    def settle(self, version: int, grade_of: Callable[[str], float | None] | None = None) -> None:
        """The source's snapshot `version` landed (on the UI thread), `grade_of` its grade in force per
        session: a session whose writes from here are all written, and read in it (`read_in`), is pending
        or not as the log says again for `n` (`touched`) and for the replace prompt (`expected`), so a
        grade another process undid or retracted since makes it pending here too. (The pending list and
        the grading queue go by the version their own view was read at: `graded_unread`.)"""
        if grade_of is not None:
            self._log_grade = grade_of
        with self._lock:
            busy = {w.session_id for w in (*self._waiting, self._applying) if w is not None}
            read = [sid for sid, since in self._written_in.items() if sid not in busy and since <= version]
            for sid in read:
                del self._written_in[sid]
        self._settled.update(sid for sid in read if sid in self._expected)
        for sid in read:  # read back: written, so never refused (the map would grow with every session graded)
            latest = self._latest.get(sid)
            if latest is not None and (latest.line is not None or latest.unread):
                del self._latest[sid]

    def log_undo_unread(self, session_id: str, *read_at: int | None) -> bool:
        """An undo of the log's (`reverts` None) is queued for the session and the views read at source versions
        `read_at` (None: not loaded) do not all hold it: until it is refused or discarded, or written and read in
        such a view, the queue cannot say what the session's grade or person's score is (the grade it takes
        back is the log's), so a screen that asks it (`expected`, `expected_person`, `touched`) holds its keys.
        Not while the undo is not written and the queue waits to retry a write (`waiting`: the undo or one before
        it): waiting would not help, and the keys typed meanwhile (ctrl+d, which discards it) go on, the queue
        answering as typed, and a question names no grade (`log_undo_queued`)."""
        with self._lock:
            undo = self._log_undos.get(session_id)
            if undo is None or (self._trouble is not None and undo.line is None and not undo.unread):
                return False
            return undo.read_back is None or any(at is None or at < undo.read_back for at in read_at)

    def log_undo_queued(self, session_id: str) -> bool:
        """An undo of the log's (`reverts` None) is queued or being applied for the session, not written: the
        grade and the person's score the queue answers as typed (`expected`, `expected_person`) may be the ones
        it takes back, so a question does not name them."""
        with self._lock:
            writes = [w for w in (self._applying, *self._waiting) if w is not None and w.session_id == session_id]
        return any(w.kind == "undo" and w.reverts is None for w in writes)

    def can_undo(self, session_id: str) -> bool:
        return any(not commit.buried for commit in self._stacks.get(session_id, []))

    def wrote_last(self, session_id: str, line: int) -> bool:
        """Is the event at `line` this dashboard's latest on the session?"""
        return self._last_line.get(session_id) == line

    def _enqueue(self, write: Write) -> None:
        if write.kind != "settings":
            self._queued += 1
            write.seq, write.over = self._queued, self._latest.get(write.session_id)
            self._latest[write.session_id] = write
            write.typed_leaves = write.session_id in self._expected, self._expected.get(write.session_id)
        with self._lock:
            self._waiting.append(write)
            for dropped in self._dropped:  # (dropped since the key looked, `_forget_dropped`: as if queued before)
                reaim(dropped, (write,), self._log_undos)

    def waiting(self) -> tuple[int, str] | None:
        """(writes not yet written, why the oldest failed) while the writer waits to retry; else None."""
        with self._lock:
            if self._trouble is None:
                return None
            return len(self._waiting) + 1, self._trouble

    def not_written(self) -> list[Write]:
        """Every write not written yet, oldest first: the one the writer is at, then those queued behind it."""
        with self._lock:
            return ([self._applying] if self._applying is not None else []) + list(self._waiting)

    def applying(self) -> tuple[int, float] | None:
        """(writes not yet written, seconds the writer has been at the oldest) while it is at one."""
        with self._lock:
            if self._applying is None:
                return None
            return len(self._waiting) + 1, time.monotonic() - self._taken_at

    def discard(self) -> list[Write]:
        """The operator gives up on every write not yet written: the queued ones are returned (oldest
        first) and leave the queue now; the one the writer retries is dropped at its next failure
        (the writer's WriteDiscarded), or written if that attempt succeeds. Pass them to `discarded`."""
        with self._lock:
            dropped = list(self._waiting)
            self._waiting.clear()
            self._discard, self._trouble = self._applying is not None, None
            self._wake.set()
        return dropped

    def stop(self) -> None:
        """The app is closing: a writer waiting to retry drops its write (nothing else will write it)."""
        self.discard()

    # ---------------------------------------------------------------- the writer

    def start_draining(self) -> bool:
        """True when the caller is now the writer (none was running and a write is waiting)."""
        with self._lock:
            if self._draining or not self._waiting:
                return False
            self._draining = True
            return True

    def take(self) -> Write | None:
        """The oldest waiting write; None (and the writer stops) when the queue is empty."""
        with self._lock:
            if not self._waiting:
                self._draining = False
                self._applying = None
                return None
            self._applying = self._waiting.popleft()
            self._taken_at = time.monotonic()
            self._discard, self._trouble = False, None  # a discard before it was queued is not about it
            return self._applying

    def retry_after_failure(self, write: Write, reason: str, delay: float, announce: Callable[[], object]) -> bool:
        """(writer) `write`, the oldest, failed for `reason`: `announce` it (`waiting` now says so),
        wait `delay` seconds, then True (try it again); False, announcing nothing, when the operator
        discarded it meanwhile (it leaves the queue)."""
        with self._lock:
            if self._discard:  # (ctrl+d y while it was tried: nothing to announce, it leaves the queue)
                self._discard = False
                self._drop(write)
                return False
            self._trouble = reason
            self._wake.clear()
        announce()
        self._wake.wait(delay)
        with self._lock:
            if not self._discard:
                return True
            self._discard, self._trouble = False, None
            self._drop(write)
            return False

    def _drop(self, write: Write) -> None:
        """(writer, under the lock) `write` is dropped: it reaches no log. An undo of a commit in the log re-aims
        the undos queued behind it before the writer takes them (`reaim_behind`); what the screens expect follows
        on the UI thread (`failed`), which a key typed meanwhile runs first (`_forget_dropped`)."""
        self._dropped.append(write)
        reaim(write, self._waiting, self._log_undos)

    def _forget_dropped(self) -> None:
        """(UI thread) forget the writes the writer dropped whose WriteDiscarded has not arrived yet, before a key
        typed after the drop is queued (`u` then pops the stack the drop left)."""
        with self._lock:
            dropped, self._dropped = self._dropped, []
        self.discarded(dropped)

    def read_in(self, session_id: str, version: int) -> None:
        """(writer) the session's latest write is in the log, and the source's snapshots from `version`
        on have read it (`settle`)."""
        with self._lock:
            self._written_in[session_id] = version
            self._read_in[session_id] = version
            if session_id in self._left:
                self._left[session_id] = self._left[session_id][0], True
            undo = self._log_undos.get(session_id)
            if undo is not None and undo.read_back is None and (undo.line is not None or undo.unread):
                undo.read_back = version
            if not any(w.session_id == session_id for w in self._waiting):  # else the latest is still to come
                self._read_from[session_id] = version

    def _written(self) -> None:
        """(writer) the write taken was written (or refused for good): nothing waits any more."""
        with self._lock:
            self._discard, self._trouble, self._applying = False, None, None

    @property
    def pending(self) -> int:
        with self._lock:
            return len(self._waiting) + int(self._draining)

    def apply(self, source: WorkspaceSource, write: Write) -> WriteOutcome:
        """Append one write (on the writer's thread). Errors other than a refusal propagate."""
        sid = one_line(write.session_id)
        if write.save is not None:
            save = write.save
            warnings = source.save_settings(save.settings, save.policy, save.priority)
            self._written()
            rewritten = "" if warnings else "; bandit-state.json rewritten"  # (else the warnings say what it is)
            return WriteOutcome(write, True, f"Saved {save.describe()} to config.toml{rewritten}.", warnings)
        from lesson_credit.core.api import StoredUnread  # the engine's error: not before the first frame

        try:
            outcome, appended = append_event(source, write, sid, self.operator, self._last_line.get(write.session_id))
        except StoredUnread as exc:  # stored: written, never again (a retry would log it twice)
            write.unread = True
            with self._lock:  # (what it left in force is not known: a discard goes by the screen's view)
                self._left.pop(write.session_id, None)
            self._written()
            what = f"grade {grade_words(write.value)}" if write.kind == "grade" else "undo"
            return WriteOutcome(write, True, f"Saved {what} for {sid}; not read back yet: {one_line(str(exc))}")
        if appended is not None:
            self._wrote(write, appended)
        self._written()
        return outcome

    def _wrote(self, write: Write, appended: GradeAppended) -> None:
        """(writer) `write` is in the log as `appended`: its line, and the grade it left in force (the [rewards]
        priority may keep another source's: `appended.in_force`), which a discard falls back on (`failed`)."""
        in_force = appended.in_force
        with self._lock:
            self._last_line[write.session_id] = appended.record.line
            self._left[write.session_id] = None if in_force is None else in_force.base_reward, False
