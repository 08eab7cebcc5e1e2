"""gptme's `bandit-state.json`: rewritten from the log after each write (export and import: gptme_files).

The state file is derived: a write whose event reached the log has succeeded, and a state file
that could not be rewritten is a warning (`_after_write` returns them). When another tool
(gptme's bandit) updated the file since we wrote it, its increments are logged first
(lesson_credit.core.bandit.increments).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lesson_credit.core.bandit import increments as foreign
from lesson_credit.core.bandit import interop
from lesson_credit.core.base.files import StoreUnavailable, atomic_write
from lesson_credit.core.base.safe_read import STATE_MAX_BYTES, UnsafeFile, read_regular
from lesson_credit.core.log.events import encode
from lesson_credit.core.log.store import StoreError
from lesson_credit.core.workspace.analysis import Analysis

if TYPE_CHECKING:  # imported where used: the analysis and the joint fit are not needed to show posteriors
    pass


STATE_ATTEMPTS = 3  # rewrites of bandit-state.json tried while another tool keeps saving it meanwhile


class StateFile(Analysis):
    """The state file gptme reads, kept following the log."""

    def _append(self, event: dict[str, Any], adopted: bool = False, locked: bool = True) -> tuple[str, ...]:
        """Append an event (under the lock, or a record's: `record_lock`), read it back, and rewrite the
        state file; the warnings of the rewrite (`_after_write`). A record on a database appends
        without the writers' lock (its unique index orders records), so the rewrite takes it: from the
        log as it is under the lock, a record's file never replaces one a later write made meanwhile."""
        self.log.append(encode(event))
        self._reader.trust_once()  # we hold the lock and only appended: the prefix read is intact
        if locked:
            return self._after_write(adopted, locked)
        try:
            with self.log.locked():
                return self._after_write(adopted, locked=True)
        except StoreUnavailable:  # the lock not had in time (its message says "nothing written": not so)
            name = self.state_path.name
            why = f"{name} not rewritten: another writer held the log's lock too long"
            return (f"{why}; the event is logged, and the next write or `status` rewrites {name}",)
        except StoreError as exc:
            return (interop.state_not_written(exc, self.state_path),)

    def _after_write(self, adopted: bool = False, locked: bool = True) -> tuple[str, ...]:
        """The event is in the log (or the settings in config.toml): the command has succeeded, and
        a failure to rewrite `bandit-state.json` (a derived file) is only a warning (see interop),
        returned with the others of the rewrite (`write_state`), one line each. The caller holds the
        log's lock. `adopted`: the file's evidence is in the log now (see write_state)."""
        try:
            self.refresh()
            return self.write_state(locked=locked, adopted=adopted)
        except interop.StateKept as exc:
            return (str(exc),)
        except (StoreError, OSError) as exc:
            return (interop.state_not_written(exc, self.state_path),)

    def write_state(self, *, locked: bool = False, adopted: bool = False) -> tuple[str, ...]:
        """Rewrite `bandit-state.json` from the fold, atomically, keeping what else the file holds and
        its key style (`state_keys`). When another tool (gptme's bandit) updated it since we wrote it,
        its increments over what we wrote (`.cache/bandit-state-written`) are logged first, as an
        increments event (under the log's lock: `locked` says the caller holds it), and the file
        follows the log again; interop.StateKept (nothing written) when they cannot be known (no
        copy of what we wrote, a number that went down) or when the log is missing (a derived
        file is never rewritten from a log that is not there). `adopted`: rewrite whatever the file
        holds (its evidence was just logged). Then saves the block sums the folds computed, this
        one's included (the blocks the write changed), for the next command. Returns what it says
        (another tool's increments logged), one line each."""
        said: tuple[str, ...] = ()
        try:
            self._refuse_missing_log()
            for attempt in range(STATE_ATTEMPTS):  # again from the file as it is, when it was saved meanwhile
                if not adopted:
                    adopted, logged = self._log_foreign_update(locked)
                    said += logged
                check = None if adopted else self.posterior
                try:
                    interop.rewrite_state(
                        self.state_path, self._own_state, self.guard, check, self.state_keys, self._keep_written
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
        return said

    def _refuse_missing_log(self) -> None:
        """StateKept when the log file is gone (moved, a failed checkout) and bandit-state.json is there
        (`log_missing`): rewriting it from the empty fold would throw its evidence away."""
        missing = self.log_missing()
        if missing is not None:
            raise interop.StateKept(missing)

    def _written_path(self) -> Path:
        return self.state_dir / ".cache" / "bandit-state-written"

    def _keep_written(self, payload: dict[str, Any]) -> None:
        """Keep a copy of the numbers of the state file about to be written (before it, so that a crash
        between the two never makes the copy older than the file), best effort: without it, another
        tool's update of the file is kept as it is, not logged."""
        self._keeper(self._written_path())(payload)

    def _keeper(self, where: Path) -> Callable[[dict[str, Any]], None]:
        """What keeps a copy of a state file's numbers at `where` (`_keep_written`, best effort; none
        with the caches off)."""

        def keep(payload: dict[str, Any]) -> None:
            if not self._reader.caches:
                return
            try:
                atomic_write(where, foreign.written_copy(payload), self.guard)
            except (StoreError, OSError):
                with contextlib.suppress(OSError):
                    where.unlink()

        return keep

    def keep_written_copy(self, state: dict[str, Any]) -> None:
        """Keep the copy of a state file verified as ours (its stamp matches) when the copy is missing or
        says otherwise (a workspace written before copies were kept), best effort: under the writers'
        lock (not waited for) and only while the file still holds `state`. A copy older than the file
        (a write's copy and file came between the read of `state` and this) would count that write's
        evidence as another tool's increments at gptme's next update."""
        if not self._reader.caches or self._written() == foreign.read_written_copy(foreign.written_copy(state)):
            return
        try:
            with self.log.locked(timeout=0):
                if interop.read_state(self.state_path) == state:
                    self._keep_written(state)
        except StoreError:  # a writer holds the lock: its rewrite keeps the copy of its own file
            pass

    def _written(self) -> foreign.Written | None:
        """The numbers of the state file as we last wrote it (None: no copy, or a damaged one)."""
        return self._copy(self._written_path())

    def _copy(self, where: Path, cached: bool = True) -> foreign.Written | None:
        """The numbers a copy at `where` holds (None: no copy, or a damaged one, or a cache's with the
        caches off; `cached` False: a copy an earlier version kept of an export, in `exports/`)."""
        if cached and not self._reader.caches:
            return None
        try:
            return foreign.read_written_copy(read_regular(where, STATE_MAX_BYTES))
        except (OSError, UnsafeFile, ValueError):
            return None

    def foreign_increments(
        self, state: dict[str, Any], written: foreign.Written | None = None
    ) -> tuple[dict[str, foreign.Counts], int]:
        """Per lesson id, what another tool added to the parsed state file `state` since we wrote it
        (`written`; default: the copy of the workspace's own file), and the sessions it counted
        meanwhile; InteropError (why) when that cannot be known."""
        written = written or self._written()
        if written is None:
            raise interop.InteropError(f"no copy of what lesson-credit last wrote in {self._written_path().parent}")
        mapper = interop.ArmMapper((lesson.id for lesson in self.library().lessons), self.library().roots)
        by_id: dict[str, foreign.Counts] = {}
        for key, (a, b, n, r) in foreign.increments(state, written.arms).items():  # two keys of one lesson: both
            was = by_id.get(lesson_id := mapper.map(key)[0], (0.0, 0.0, 0, 0))
            by_id[lesson_id] = (was[0] + a, was[1] + b, was[2] + n, was[3] + r)
        return by_id, foreign.sessions_added(state, written)

    def _log_foreign_update(self, locked: bool) -> tuple[bool, tuple[str, ...]]:
        """When the state file was changed by another tool since we wrote it and disagrees with the log,
        log that tool's increments (`foreign_increments`): (True when its evidence is in the log now,
        the warning that says they were logged). StateKept when they cannot be known."""
        if not self._foreign_disagreement():
            return False, ()
        with contextlib.nullcontext() if locked else self.log.locked():
            if not locked:  # decided again under the lock: another command may have logged it meanwhile
                self.refresh()
            why = self._foreign_disagreement()
            if why is None:
                return False, ()
            existing = interop.read_state(self.state_path)
            post = self.posterior()
            arms_only = {**existing, "total_sessions": post.total_sessions}
            if interop.disagreement(arms_only, post, keys=self.state_keys(existing)) is None:
                # its arms are the log's already (another command logged them meanwhile, or it moved none)
                added: dict[str, foreign.Counts] = {}
                sessions = self.sessions_counted_alone(existing)
            else:
                try:
                    added, sessions = self.foreign_increments(existing)
                except interop.InteropError as exc:
                    raise interop.StateKept(interop.kept_message(self.state_path, f"{why}; {exc}")) from None
            if added or sessions:  # (sessions alone too: a file written again from the log counts them)
                self.log.append(encode(foreign.increments_event(added, self.now_iso(), sessions)))
                self._reader.trust_once()
                self.refresh()
                self._keep_written(existing)  # the base of the next increments: this file's are logged now
        if not added and not sessions:  # only its stamp changed: the numbers are ours
            return True, ()
        if not added:
            return True, (
                f"{self.state_path} was updated by another tool (gptme's bandit) since lesson-credit wrote it: "
                f"{sessions} session(s) it counted, moving no arm, are logged as an increments event from "
                f"{foreign.GPTME_BANDIT}",
            )
        sessions = max(counts[2] for counts in added.values())
        return True, (
            f"{self.state_path} was updated by another tool (gptme's bandit) since lesson-credit wrote it: "
            f"its increments to {len(added)} arm(s) (up to {sessions} selection(s) each) are logged as an "
            f"increments event from {foreign.GPTME_BANDIT}, and the file follows the log again",
        )

    def _foreign_disagreement(self) -> str | None:
        """How the state file disagrees with the log when another tool wrote it last (None: ours, or
        it agrees, or there is none), sessions it counted that moved no arm included."""
        existing = interop.read_state(self.state_path)
        if not existing or interop.written_by_us(existing):
            return None
        why = interop.disagreement(existing, self.posterior(), self.state_path.name, self.state_keys(existing))
        if why is None and (alone := self.sessions_counted_alone(existing)):
            return f"{self.state_path.name}: {alone} session(s) counted by another tool since lesson-credit wrote it"
        return why

    def sessions_counted_alone(self, state: dict[str, Any]) -> int:
        """The sessions another tool counted in the workspace's state file `state` since we wrote it
        (its total_sessions less the one we wrote; 0 without a copy of what we wrote, or one that does
        not say)."""
        written = self._written()
        return 0 if written is None else foreign.sessions_added(state, written)

    def state_keys(self, existing: dict[str, Any]) -> tuple[str, ...]:
        """Each arm's key in the state file: the key the file as it is names it by, when one key does
        (gptme's bandit looks an arm up by the key it wrote: `lessons/tools/x.md`, an absolute path);
        else its library id, or its lesson's absolute path when the file names arms so (gptme's Claude
        Code hook looks them up by path)."""
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
        return tuple(
            found[0] if len(found := named.get(arm, [])) == 1 and key not in arms else key
            for arm, key in zip(arm_ids, keys, strict=True)
        )

    def state_payload(self, existing: dict[str, Any] | None = None) -> dict[str, Any]:
        """The posteriors as gptme's `bandit-state.json` (fresh: what `export-gptme` writes)."""
        keys = self.state_keys(existing or {})
        return interop.gptme_state(self.posterior(), self._reader.session_times, self.now_iso(), existing, keys)

    def _own_state(self, existing: dict[str, Any]) -> dict[str, Any]:
        """The workspace's own `bandit-state.json`: `state_payload`, naming a database store it is
        folded from (interop.SOURCE_KEY; none: the workspace's file)."""
        payload = self.state_payload(existing)
        payload.pop(interop.SOURCE_KEY, None)
        if (source := self.state_source()) is not None:
            payload[interop.SOURCE_KEY] = source
        return payload

    def state_source(self) -> str | None:
        """The event store as `bandit-state.json` names it (interop.SOURCE_KEY): None for the
        workspace's file, `database <store id>` for a database."""
        return self.log.identity()
