"""gptme's `bandit-state.json`: rewritten from the log after each write (export and import: gptme_files).

The state file is derived: a write whose event reached the log has succeeded, and a state file
that could not be rewritten is a warning (`_after_write` returns them). When another tool
(gptme's bandit) updated the file since we wrote it, its increments are logged first
(lesson_credit.core.bandit.increments), over the copy kept of what we wrote or, with none left (a cache:
deleted, or the caches off), over the numbers the log tells arm by arm as ours (gptme_files: `_rebuilt`).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterable
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from lesson_credit.core.bandit import increments as foreign
from lesson_credit.core.bandit import interop
from lesson_credit.core.bandit.arm_count import ARM_KEYS
from lesson_credit.core.bandit.saving import StateToReplace
from lesson_credit.core.base.errors import WorkspaceError
from lesson_credit.core.base.files import LockHeld, StoredUnread, reading_back
from lesson_credit.core.base.ids import normalize_id, one_form
from lesson_credit.core.base.numbers import counted
from lesson_credit.core.log import arm_names
from lesson_credit.core.log.arm_names import past_cap_said
from lesson_credit.core.log.events import GRADE, SESSION, encode
from lesson_credit.core.log.store import StoreError
from lesson_credit.core.workspace.key_choice import chosen_key
from lesson_credit.core.workspace.late_evidence import stamped_now
from lesson_credit.core.workspace.written_copies import TWO_LOADS_THEN, HeldBase, TwoLoads, TwoLoadsError, WrittenCopies

if TYPE_CHECKING:  # imported where used: the analysis and the joint fit are not needed to show posteriors
    pass


# what becomes of the state file after a command that logs gptme's update without rewriting it (a `select`)
LEFT_TILL_REWRITTEN = "the file is left as it is until a write or `status` rewrites it from the log"
STATE_ATTEMPTS = 3  # rewrites of bandit-state.json tried while another tool keeps saving it meanwhile
NEW_ARMS_SLACK = 1_000  # arms beyond the library's lessons an update of the own state file may bring (new_arms_room)
# the keys of a state file lesson-credit reads (its arms: interop.READ_KEYS) take at most this and STATE_BYTES_PER_ARM
# an arm (refuse_arms_file); the other keys, kept as their bytes, never decoded, CONTEXT_BYTES_PER_LESSON more a lesson
STATE_BYTES_FLOOR = 4 << 20
STATE_BYTES_PER_ARM = 4096  # gptme's arm is 200 bytes; room for keys we do not know in it
# gptme's contextual arms of a lesson (`contextual_arms`, kept on our rewrites): 310 bytes a context, a few hundred
# contexts (categories x models: 12 x 11, 132, is 41 KB; 1,000 lessons under 300 contexts, 94 MB)
CONTEXT_BYTES_PER_LESSON = 256 << 10
# what deleting a refused file loses (its next write is the log's): gptme's contextual arms, which the log does not hold
LEFT = (
    "left as it is, nothing logged (deleting it has the next write write it from the log, without what the log does "
    "not hold: gptme's contextual arms and other keys)"
)


def state_bytes_room(arms: int, lessons: int = 0) -> int:
    """The bytes the keys lesson-credit reads of a state file of `arms` arms may take, and with gptme's contextual arms
    of `lessons` lessons (the other keys) the whole file (refuse_arms_file)."""
    return STATE_BYTES_FLOOR + STATE_BYTES_PER_ARM * arms + CONTEXT_BYTES_PER_LESSON * lessons


class StateFile(WrittenCopies):
    """The state file gptme reads, kept following the log."""

    appended_at: int | None = None  # the line (from 1) of the session or grade this command is appending

    def _refuse_past_lessons(self, lesson_ids: Iterable[str], path: Path | str | None = None) -> None:
        """WorkspaceError (one line, nothing written) when an event naming `lesson_ids` would take the log past the
        distinct lessons a log may name (core/log/arm_names.py MAX_LOG_LESSONS): every reader would skip it. With
        the `path` of the file imported: it and the first lesson past them are named."""
        ids = [normalize_id(lesson_id) for lesson_id in lesson_ids]  # (as the reader does)
        if (why := self._reader.index.room_for(ids)) is not None:
            said = why if path is None else f"{path} names {past_cap_said(self._reader.index.past_cap(ids))}"
            raise WorkspaceError(f"{said}; nothing written")

    def _append(self, event: dict[str, Any], adopted: bool = False, locked: bool = True) -> tuple[str, ...]:
        """Append an event (under the lock, or a record's: `record_lock`), read it back, and rewrite the
        state file; the warnings of the rewrite (`_after_write`). A record on a database appends
        without the writers' lock (its unique index orders records), so the rewrite takes it: from the
        log as it is under the lock, a record's file never replaces one a later write made meanwhile."""
        # (a session or a grade counts no session of another tool: the rewrite measures gptme's over the log before it)
        self.appended_at = self._reader.index.lines + 1 if event.get("type", SESSION) in (SESSION, GRADE) else None
        try:
            return self._append_and_write(event, adopted, locked)
        finally:
            self.appended_at = None

    def _append_and_write(self, event: dict[str, Any], adopted: bool, locked: bool) -> tuple[str, ...]:
        self._reader.own_append(lambda: self.log.append(encode(event)))  # we hold the lock and only append
        self._say_torn()
        if locked:
            with reading_back():
                return self._after_write(adopted, locked, appended=True)
        try:
            with self.log.locked(), reading_back():
                return self._after_write(adopted, locked=True, appended=True)
        except LockHeld:  # the lock not had in time (its message says "nothing written": not so)
            name = self.state_path.name
            why = f"{name} not rewritten: another writer held the log's lock too long"
            return (f"{why}; the event is logged, and the next write or `status` rewrites {name}",)
        except StoredUnread:
            raise
        except StoreError as exc:  # (the lock not taken: a lost connection, say)
            return (interop.state_not_written(exc, self.state_path),)

    def _after_write(
        self, adopted: bool = False, locked: bool = True, appended: bool = False, done: str = "the event is logged"
    ) -> tuple[str, ...]:
        """The event is in the log (or, `done` says, the settings in config.toml): the command has succeeded, and
        a failure to rewrite `bandit-state.json` (a derived file) is only a warning (see interop),
        returned with the others of the rewrite (`write_state`), one line each. The caller holds the
        log's lock. `adopted`: the file's evidence is in the log now (see write_state). `appended`:
        the caller appended an event, which it shows from the fold: a connection lost right after the
        commit, the log is read again on a new one (the writers' lock went with the old: the state
        file is left to the next write); when it cannot be read back, StoredUnread, never a fold
        without the event."""
        try:
            self.refresh()
        except StoredUnread:  # (waited for an insert in flight below the event: not again)
            raise
        except StoreError as exc:
            if not appended:
                return (interop.state_not_written(exc, self.state_path, done),)
            try:
                self.refresh()  # (a store whose connection broke connects afresh)
            except StoreError as again:
                raise StoredUnread.after(again) from None
            return (interop.state_not_written(exc, self.state_path, done),)
        except OSError as exc:
            return (interop.state_not_written(exc, self.state_path, done),)
        try:
            return self.write_state(locked=locked, adopted=adopted)
        except interop.StateKept as exc:
            return (str(exc),)
        except (StoreError, OSError, MemoryError) as exc:
            return (interop.state_not_written(exc, self.state_path, done),)

    def write_state(self, *, locked: bool = False, adopted: bool = False) -> tuple[str, ...]:
        """Rewrite `bandit-state.json` from the fold, atomically, keeping what else the file holds and
        its key style (`state_keys`). When another tool (gptme's bandit) updated it since we wrote it,
        its increments over the file of ours it grew from (`_written`) are logged first, as an
        increments event (under the log's lock: `locked` says the caller holds it), and the file
        follows the log again (with no copy left, over the arms the log tells as ours: `_written`);
        interop.StateKept (nothing written) when they cannot be known (no copy of the file it grew
        from and an arm the log cannot tell apart, a number that went down) or when the log is missing (a derived
        file is never rewritten from a log that is not there). `adopted`: rewrite whatever the file
        holds (its evidence was just logged). Then saves the block sums the folds computed, this
        one's included (the blocks the write changed), for the next command. Returns what it says
        (another tool's increments logged), one line each."""
        said: tuple[str, ...] = ()
        try:
            self._refuse_missing_log(locked)
            said += self.late_save()  # (a save of gptme's landed in a file replaced as crashed: put back, then logged)
            linked = self._hard_linked()
            for attempt in range(STATE_ATTEMPTS):  # again from the file as it is, when it was saved meanwhile
                was = interop.state_bytes(self.state_path)  # (before its increments are logged: a save after)
                if not adopted:
                    adopted, logged = self._log_foreign_update(locked)
                    said += logged
                check = None if adopted else self.posterior
                try:
                    interop.rewrite_state(
                        self.state_path, self._own_state, self.guard, check, self.state_keys, self._keep_written, was
                    )
                    break
                except interop.StateChanged:
                    if attempt == STATE_ATTEMPTS - 1:
                        raise
                    adopted = False
        except interop.StateKept as exc:
            self._reader.keep_sums()
            if said:  # the increments were logged all the same: both are said
                raise interop.StateKept(" ".join((*said, str(exc)))) from None
            raise
        self._reader.keep_sums()
        return said + linked

    def _hard_linked(self, path: Path | None = None) -> tuple[str, ...]:
        """What to say before a rewrite replaces `bandit-state.json` (at `path`, default its own name) while
        the file has other names (hard links): the new file has the name written alone, the others keep the
        old one (gptme's bandit saving at one of them no longer saves this workspace's file). Said once: the
        rewrite cuts the link."""
        try:
            names = os.stat(path or self.state_path).st_nlink  # (through a symbolic link: the file replaced)
        except OSError:
            return ()
        if names < 2:
            return ()
        return (
            f"{self.state_path.name} had {counted(names - 1, 'other name')} (a hard link): rewriting it makes a new "
            "file at the name written and the other names keep the old one, which gptme's bandit saving there no "
            "longer shares with this workspace; to share the file, use a symbolic link to it or mount its folder",
        )

    def _refuse_missing_log(self, locked: bool) -> None:
        """StateKept when the log file is gone (moved, a failed checkout) and bandit-state.json is there
        (`log_missing`): rewriting it from the empty fold would throw its evidence away; or when
        bandit-state.json is a link to the log or config.toml (read as a state file, then replaced)."""
        if (missing := self.log_missing()) is not None:
            raise interop.StateKept(missing)
        self.refuse_arms_file()  # (before the records it names are looked for in it)
        if (missing := self.records_missing()) is not None:  # (gptme's updates meanwhile logged: none lost)
            self.warnings.extend(self.log_other_update(locked))
            raise interop.StateKept(missing)
        try:
            self.guard.replaceable(self.state_path)
        except StoreError as exc:
            raise interop.StateKept(str(exc)) from None

    def foreign_increments(
        self, state: dict[str, Any], written: foreign.Written | None = None
    ) -> tuple[dict[str, foreign.Counts], int]:
        """Per lesson id, what another tool added to the parsed state file `state` since we wrote the file
        it grew from (`written`; default: its copy, or the log's arms told apart, `_written`), and the sessions
        it counted meanwhile; InteropError (why) when that cannot be known."""
        memo = self._update_memo
        if written is None and memo is not None and memo[0] is state and memo[1] == self._log_at():
            return memo[2]  # (each arm compared once a command: a check, its repeat under the lock, the write)
        found = written or self._written_or_why(state)
        if isinstance(found, TwoLoads):
            raise TwoLoadsError(found)
        if isinstance(found, str):
            created = state.get("created")
            named = f" (its created, {created})" if isinstance(created, str) else ""
            why = f", and {found}" if found else ""
            raise interop.InteropError(f"no copy of the file lesson-credit wrote that it grew from{named}{why}")
        mapper = interop.ArmMapper((lesson.id for lesson in self.library().lessons), self.library().roots)
        by_id: dict[str, foreign.Counts] = {}
        lessons: dict[str, str] = {}  # each key changed: its lesson
        pruned = written is None  # (the own file: an arm gptme's prune dropped loses nothing; one made again counts)
        added, created = foreign.sessions_added(state, found), state.get("created")
        made = foreign.MadeAgain(found.stamps or {}, added, created if isinstance(created, str) else None)
        again = made if pruned else None
        for key, (a, b, n, r) in foreign.increments(state, found.arms, pruned, again).items():  # two keys: both
            was = by_id.get(lesson_id := mapper.map(key)[0], (0.0, 0.0, 0, 0))
            by_id[lesson_id], lessons[key] = (was[0] + a, was[1] + b, was[2] + n, was[3] + r), lesson_id
        result = by_id, foreign.sessions_added(state, found)
        if written is None:
            self._update_memo = (state, self._log_at(), result, lessons)
        return result

    def _log_at(self) -> tuple[int, int]:
        """Where the log read so far is (what `foreign_increments` of the own file depends on besides the file and
        the copies: `_keep_written` forgets it)."""
        return self.version, self._reader.index.end

    def _changed_keys(self, state: dict[str, Any]) -> dict[str, str]:
        """The keys of the own state file `state` another tool changed, each with its lesson (`foreign_increments`,
        compared once)."""
        memo = self._update_memo
        if memo is None or memo[0] is not state or memo[1] != self._log_at():
            self.foreign_increments(state)
            memo = self._update_memo
        assert memo is not None
        return memo[3]

    def new_arms_room(self) -> tuple[int, str]:
        """How many arms beyond the log's an update of the own state file may bring, and what that number is: the
        library's lessons (gptme's bandit draws from them) and NEW_ARMS_SLACK more (lessons gptme has and the
        library lacks), at most the lessons a log names (arm_names.MAX_LOG_LESSONS). Each arm logged costs every
        command after its work (99,000 arms beyond the demo's: 7.9 s and 456 MB the command that logged them, 3.9 s
        and 392 MB every command after, against 0.5 s and 71 MB)."""
        library = len(self.library().lessons)
        if library + NEW_ARMS_SLACK >= (cap := arm_names.MAX_LOG_LESSONS):
            return cap, f"the {cap:,} lessons a log names"
        return library + NEW_ARMS_SLACK, f"the library's {library:,} lessons plus {NEW_ARMS_SLACK:,}"

    def refuse_too_many(self, state: dict[str, Any]) -> None:
        """StateKept when the state file `state`, not as we wrote it, has more arms beyond the log's than an update
        may bring (`new_arms_room`): no update of gptme's bandit (a session adds the few lessons it drew), and each
        arm would cost every command its work (1,500,000 arms: 243 s and 2.86 GB), so it is refused before any is
        read. gptme's save drops our stamp: a file without it is not ours, told without hashing it. Such a file is
        refused before it is decoded (`refuse_arms_file`); this tells one its bytes did not (two "arms" keys)."""
        arms = state.get("arms")
        room, said = self.new_arms_room()
        if not isinstance(arms, dict) or len(arms) <= room:  # (no fold needed to tell)
            return
        if (more := len(arms) - (logged := len(self.posterior().arm_ids))) <= room:
            return
        if interop.STAMP_KEY not in state or not interop.written_by_us(state):
            raise interop.StateKept(
                f"{self.state_path} has {len(arms):,} arms, {more:,} more than the {logged:,} of the log: more than "
                f"{said}, so no update of gptme's bandit; {LEFT}"
            )

    def refuse_arms_file(self) -> None:
        """`refuse_too_many` before the state file is read, never decoded: StateKept when the keys a read decodes
        (its arms: interop.READ_KEYS) take more bytes than those of a file of the log's arms and `new_arms_room` more
        can (STATE_BYTES_FLOOR, STATE_BYTES_PER_ARM: decoding takes 0.1 s and 15 MB a MB of small keys, however few
        its arms), or the whole file more than that and gptme's contextual arms of the library's lessons and the
        log's (CONTEXT_BYTES_PER_LESSON: kept as bytes, read, never decoded), or it has more top-level keys than
        interop.MAX_TOP_KEYS, or when its bytes show more arms than the log's and that room (the keys of its arms
        object, counted that far and no further: interop.arms_past; decoding 1,500,000 arms cost every command 10 s
        of CPU and 1.4 GB). No file of ours is any: we write the log's arms. Nothing said of a file no command reads
        as the state file (a link to the log: `guard.replaceable` says that)."""
        try:
            self.guard.replaceable(self.state_path)
            size = os.stat(self.state_path).st_size if os.path.isfile(self.state_path) else 0
        except (StoreError, OSError):
            return
        room, said = self.new_arms_room()
        if size <= state_bytes_room(room) and not interop.arms_past(self.state_path, room):  # (no fold to tell)
            return
        logged = len(self.posterior().arm_ids)
        if size > state_bytes_room(logged + room):
            self._refuse_bytes(size, logged, room, said)
        if interop.arms_past(self.state_path, limit := logged + room):
            raise interop.StateKept(
                f"{self.state_path} has over {limit:,} arms ({ARM_KEYS}; counted no further): over {room:,} more "
                f"than the {logged:,} of the log, more than {said}, so no update of gptme's bandit; {LEFT}"
            )

    def _refuse_bytes(self, size: int, logged: int, room: int, said: str) -> None:
        """`refuse_arms_file` of a file of `size` bytes, more than the keys read of a file of the log's `logged` arms
        and the `room` (`said`) may take: refused by its size past that and gptme's contextual arms, by its top-level
        keys, or by the bytes of the keys read (a document that is no JSON object: all of them, decoded whole)."""
        most, library = state_bytes_room(logged + room), len(self.library().lessons)
        if size > (whole := state_bytes_room(logged + room, library + logged)):
            raise interop.StateKept(
                f"{self.state_path} takes {size:,} bytes, more than the {whole:,} a state file of the {logged:,} arms "
                f"of the log and {said} takes with gptme's contextual arms of the library's {library:,} lessons and "
                f"the log's {logged:,} arms, so no update of gptme's bandit; {LEFT}"
            )
        found = interop.layout(self.state_path)
        if found is None:
            raise interop.StateKept(
                f"{self.state_path} takes {size:,} bytes, more than the {most:,} a state file of the {logged:,} arms "
                f"of the log and {said} takes, so no update of gptme's bandit; {LEFT}"
            )
        if found[0] > (top := interop.MAX_TOP_KEYS):
            raise interop.StateKept(
                f"{self.state_path} has over {top:,} top-level keys (counted no further; gptme's bandit writes 5), so "
                f"no update of gptme's bandit; {LEFT}"
            )
        if found[1] > most:
            raise interop.StateKept(
                f"{self.state_path} takes {found[1]:,} bytes in its arms and the other keys lesson-credit reads, more "
                f"than the {most:,} a state file of the {logged:,} arms of the log and {said} takes, so no update of "
                f"gptme's bandit; {LEFT}"
            )

    def records_unread(self) -> str | None:
        """As the base's, of a state file no command refuses unread (`refuse_arms_file`: every command says why it
        is left as it is); the records a refused file names are not looked for (its decode would cost each refresh
        of the dashboard as much as the commands are spared)."""
        try:
            self.refuse_arms_file()
        except interop.StateKept:
            return None
        return super().records_unread()

    def foreign_update(self, state: dict[str, Any]) -> tuple[dict[str, foreign.Counts], int] | None:
        """What another tool (gptme's bandit) added to the state file `state` over the file of ours it
        grew from (`foreign_increments`), or None: the file is ours as we wrote it, empty, or agrees with
        the log with nothing to tell its update by. interop.StateKept (why) when the file disagrees with
        the log and its update cannot be known (no copy of the file it grew from, a number down)."""
        if not state:
            return None
        self.refuse_too_many(state)  # (before the hash of the whole file: `written_by_us`)
        if interop.written_by_us(state):
            return None
        try:
            return self.foreign_increments(state)
        except interop.InteropError as exc:
            keys = self.state_keys(state)
            why = interop.disagreement(state, self.posterior(), self.state_path.name, keys) or self._restamped(
                state, keys
            )
            if why is None:
                return None
            if isinstance(exc, TwoLoadsError):
                raise StateToReplace(interop.kept_message(self.state_path, f"{why}; {exc}", TWO_LOADS_THEN)) from None
            raise interop.StateKept(interop.kept_message(self.state_path, f"{why}; {exc}")) from None

    def agrees(self, state: dict[str, Any], keys: tuple[str, ...]) -> bool:
        """Whether the parsed state file `state` (its arms named by `keys`: `state_keys`) is at the log's numbers
        (`interop.disagreement`) with no arm restamped by another tool there (`_restamped`)."""
        return interop.disagreement(state, self.posterior(), "", keys) is None and self._restamped(state, keys) is None

    def _restamped(self, state: dict[str, Any], keys: tuple[str, ...]) -> str | None:
        """Why the state file `state`, at the log's numbers, is not as we wrote it though (None: it may be): an
        arm not stamped as every write of ours stamps it now (`stamped_now`). gptme's bandit restamps an arm it
        updates: an update of ours the log's sessions since matched (a full reward each side) leaves the file at
        the log's numbers, and with no copy of ours to tell it by, rewriting the file would drop it unlogged."""
        post, arms = self.posterior(), state["arms"]
        for i, key in enumerate(keys):
            if not stamped_now(post, self._reader.session_times, i, arms[key]):
                return f"{self.state_path.name}'s {key} was restamped by another tool ({arms[key]['last_updated']})"
        return None

    def log_other_update(self, locked: bool = False) -> tuple[str, ...]:
        """Log another tool's update of the state file (`_log_foreign_update`) for a command that does not rewrite
        the file: a selection, or any while the file is left as it is because the records its rewards came from
        are not read (deleting it then loses nothing). What it says, one line each; nothing while the log is
        missing (an increments event would start a new log) or the file cannot be told apart (said, not logged)."""
        if self.log_missing() is not None:
            return ()
        try:
            return self._log_foreign_update(locked, rewrites=False)[1]
        except interop.StateKept as exc:  # (the next write that rewrites the file says it again)
            return (str(exc),)
        except StoreError as exc:  # (the lock not had in time): the next write logs it
            return (f"{self.state_path.name}: another tool's update is not logged now ({exc})",)

    def _log_foreign_update(self, locked: bool, rewrites: bool = True) -> tuple[bool, tuple[str, ...]]:
        """When the state file was changed by another tool since we wrote it, log that tool's increments
        (`foreign_update`): (True when the file's evidence is in the log now, the warning that says they
        were logged, and what becomes of the file: rewritten from the log by this command, or, not `rewrites`, left
        as it is for a later one). StateKept when they cannot be known."""
        self.refuse_arms_file()  # (before it is read)
        update = self.foreign_update(interop.read_state(self.state_path))
        if update is None:
            return False, ()
        past: list[str] = []  # lessons past the log's cap: not logged, left out of the file rewritten
        held = None  # (a save of one load kept as it is, its update logged over it: kept still, `_held_logged`)
        if update != ({}, 0):
            with contextlib.nullcontext() if locked else self.log.locked():
                if not locked:  # decided again under the lock: another command may have logged it meanwhile
                    self.refresh()
                existing = interop.read_state(self.state_path)
                update = self.foreign_update(existing)
                if update is None:
                    return False, ()
                held = self._held(existing)
                added, past = self.within_cap(update[0])  # (an event naming them: a bad line every reader skips)
                if (update := (added, update[1])) != ({}, 0):
                    keys = [key for key, lesson_id in self._changed_keys(existing).items() if lesson_id in added]
                    seen = self._seen(existing, keys)  # (a key past the cap: not logged, no base to keep)
                    event = foreign.increments_event(update[0], self.now_iso(), update[1], seen=seen)
                    self._reader.own_append(lambda: self.log.append(encode(event)))
                    self._say_torn()
                    self.refresh()
                if update != ({}, 0) or past:
                    self._keep_written(existing)  # (the event's `seen` says so too: the copy for a workspace moved)
        added, sessions = update
        name = f"{self.state_path} was updated by another tool (gptme's bandit) since lesson-credit wrote it"
        out = "is left out of the file" if rewrites else "a write or `status` leaves it out of the file"
        left_out = f"its update of {past_cap_said(past)} is not logged, and {out}" if past else ""
        then = "the file follows the log again" if rewrites else LEFT_TILL_REWRITTEN
        then = "over the file as it was kept" if isinstance(held, HeldBase) else then
        if not added and not sessions:  # only its stamp changed (or a file of ours saved as it was)
            return True, (f"{name}: {left_out}",) if past else ()
        if not added:
            logged = (
                f"{counted(sessions, 'session')} it counted, moving no arm, {'is' if sessions == 1 else 'are'} logged "
                f"as an increments event from {foreign.GPTME_BANDIT}"
            )
        else:
            most = max(counts[2] for counts in added.values())
            logged = (
                f"its increments to {counted(len(added), 'arm')} (up to {counted(most, 'selection')} each) are "
                f"logged as an increments event from {foreign.GPTME_BANDIT}, and {then}"
            )
        said = (f"{name}: {logged}{f'; {left_out}' if past else ''}",)
        self._held_logged(existing, held, said)
        return True, said

    def within_cap(self, added: dict[str, foreign.Counts]) -> tuple[dict[str, foreign.Counts], list[str]]:
        """Of another tool's increments `added` (by lesson id), those the log can take, and the lessons past the
        distinct lessons a log may name (`past_cap`, each id as the reader reads it), left out."""
        if (memo := self._cap_memo) is not None and memo[0] is added and memo[1] == self._log_at():
            return memo[2]  # (the update `foreign_increments` found once: said by the check, then logged)
        ids = {lesson_id: normalize_id(lesson_id) for lesson_id in added}
        if not (past := self._reader.index.past_cap(ids.values())):
            result: tuple[dict[str, foreign.Counts], list[str]] = added, []
        else:
            out = {one_form(lesson_id) for lesson_id in past}
            kept = {lesson_id: counts for lesson_id, counts in added.items() if one_form(ids[lesson_id]) not in out}
            result = kept, past
        self._cap_memo = (added, self._log_at(), result)
        return result

    def state_keys(self, existing: dict[str, Any]) -> tuple[str, ...]:
        """Each arm's key in the state file: the key the file as it is names it by, when one key does (gptme's bandit
        looks an arm up by the key it wrote: `lessons/tools/x.md`, an absolute path); else its library id, or its
        lesson's absolute path when the file names arms so (gptme's Claude Code hook looks them up by path)."""
        if (memo := self._keys_memo) is not None and memo[0] is existing and memo[1] == self._log_at():
            return memo[2]  # (the file's keys mapped once a command: checked, then rewritten)
        keys = self._state_keys(existing)
        self._keys_memo = (existing, self._log_at(), keys)
        return keys

    def _state_keys(self, existing: dict[str, Any]) -> tuple[str, ...]:
        arm_ids = self.posterior().arm_ids
        if interop.absolute_keys(existing):
            paths = {lesson.id: lesson.path for lesson in self.library().lessons}
            keys = interop.state_keys(arm_ids, paths, True)
        else:
            keys = tuple(arm_ids)
        arms = existing.get("arms")
        ours = set(keys)
        if not isinstance(arms, dict) or all(key in ours for key in arms):
            return keys
        mapper = interop.ArmMapper((lesson.id for lesson in self.library().lessons), self.library().roots)
        named: dict[str, list[str]] = {}
        for key in arms:
            if isinstance(key, str) and key not in ours:  # (never another arm's key)
                named.setdefault(mapper.map(key)[0], []).append(key)
        times = self._session_times()
        return tuple(
            chosen_key(arms, found, key, partial(times, i)) if (found := named.get(arm)) else key
            for i, (arm, key) in enumerate(zip(arm_ids, keys, strict=True))
        )

    def _session_times(self) -> Callable[[int], list[str | None]]:
        """By arm, the times of the log's sessions naming it: the entries grouped once, at the first arm asked for (a
        file gptme keyed its own way names each arm twice: a pass over every entry per arm was the cost)."""
        grouped: list[Any] = []  # (the entries' sessions in arm order, each arm's bounds, the session times)

        def of(arm: int) -> list[str | None]:
            if not grouped:
                data = self.posterior().data
                order = np.argsort(data.entry_arm, kind="stable")
                bounds = np.searchsorted(data.entry_arm[order], np.arange(len(self.posterior().arm_ids) + 1))
                grouped.extend((data.entry_session[order], bounds, self._reader.session_times()))
            sessions, bounds, times = grouped
            return [times[row] for row in np.unique(sessions[bounds[arm] : bounds[arm + 1]]).tolist()]

        return of

    def state_payload(self, existing: dict[str, Any] | None = None) -> dict[str, Any]:
        """The posteriors as gptme's `bandit-state.json` (fresh: what `export-gptme` writes): what `existing` holds
        beside its arms kept, but the `created` of the files imported (interop.HOLDS_KEY) this log's own."""
        keys = self.state_keys(existing or {})
        payload = interop.gptme_state(self.posterior(), self._reader.session_times, self.now_iso(), existing, keys)
        return self._with_holds(payload)

    def _with_holds(self, payload: dict[str, Any]) -> dict[str, Any]:
        """`payload` naming (interop.HOLDS_KEY) the `created` of each file this log holds an import of, and no other."""
        payload.pop(interop.HOLDS_KEY, None)
        index = self._reader.index
        in_force = map(index.prior_counts.created_of, set(index.prior_from.values()))  # (an earlier import's too)
        if holds := sorted({created for created in in_force if created is not None}):
            payload[interop.HOLDS_KEY] = holds
        return payload

    def _own_names(self) -> set[str]:
        """The `created` the own file has had as far as this workspace knows: now, and its kept copies'."""
        names = {created} if isinstance(created := interop.read_state(self.state_path).get("created"), str) else set()
        with contextlib.suppress(OSError):
            for kind, _, name in self._copy_names():  # (named by their `created`, colons as dashes)
                names.update([name[:10] + name[10:].replace("-", ":")] if kind else [])
        return names

    def _refuse_own_back(self, path: Path | str, state: dict[str, Any]) -> None:
        """WorkspaceError (one line, nothing logged) when the state file `state` at `path` holds, as another log's
        import (interop.HOLDS_KEY), a file this log exported or its own file (as far as its copies tell): its own
        sessions would be counted twice."""
        holds = state.get(interop.HOLDS_KEY)
        ours = {created for created, _ in self._reader.index.exports.files} | self._own_names()
        named = [created for created in holds if isinstance(created, str)] if isinstance(holds, list) else []
        if back := sorted(ours.intersection(named)):
            raise WorkspaceError(
                f"{path} holds this workspace's own sessions: another workspace imported its file (created "
                f"{back[0]}) and wrote this file from them; importing it would count them twice; nothing imported "
                "(share evidence one way)"
            )

    def _own_state(self, existing: dict[str, Any]) -> dict[str, Any]:
        """The workspace's own `bandit-state.json`: `state_payload`, with a `created` of its own
        (`new_created`), naming a database store it is folded from (interop.SOURCE_KEY; none: the
        workspace's file) and the records file sessions took their rewards from (interop.RECORDS_KEY)."""
        payload = self.state_payload(existing)
        payload["created"] = self.new_created(existing)
        payload.pop(interop.SOURCE_KEY, None)
        if (source := self.state_source()) is not None:
            payload[interop.SOURCE_KEY] = source
        return self._naming_records(payload)

    def _naming_records(self, payload: dict[str, Any]) -> dict[str, Any]:
        """The workspace's own state file `payload` naming the records file sessions took their rewards from
        (interop.RECORDS_KEY: `records_missing` guards the file by it), and no other."""
        payload.pop(interop.RECORDS_KEY, None)
        if used := len(self.data().scores().external_rows):
            payload[interop.RECORDS_KEY] = {"path": self.records_shown(), "sessions": used}
        return payload

    def state_source(self) -> str | None:
        """The event store as `bandit-state.json` names it (interop.SOURCE_KEY): None for the
        workspace's file, `database <store id>` for a database."""
        return self.log.identity()
