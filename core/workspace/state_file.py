"""gptme's `bandit-state.json`: rewritten from the log after each write, exported, imported.

The state file is derived: a write whose event reached the log has succeeded, and a state file
that could not be rewritten is a warning (`_after_write` returns them). When another tool
(gptme's bandit) updated the file since we wrote it, its increments are logged first
(lesson_credit.core.bandit.increments).
"""

from __future__ import annotations

import contextlib
import hashlib
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lesson_credit.core import commands
from lesson_credit.core.bandit import increments as foreign
from lesson_credit.core.bandit import interop
from lesson_credit.core.bandit.interop import ImportReport
from lesson_credit.core.base.errors import WorkspaceError
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

    def _keeper(self, where: Path, cached: bool = True) -> Callable[[dict[str, Any]], None]:
        """What keeps a copy of a state file's numbers at `where` (`_keep_written`, best effort); `cached`:
        a cache's (none kept with the caches off), else a record's (an export's, `_exported`)."""

        def keep(payload: dict[str, Any]) -> None:
            if cached and not self._reader.caches:
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
        caches off)."""
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

    def export_gptme(self, path: Path | str) -> Path:
        """Write the posteriors as a gptme `bandit-state.json` at `path` (or in it, a folder); onto the
        workspace's own file, that file is ours again (its copy kept), written as every rewrite of it
        is: under the writers' lock, from the log as it is under it (never over a later write's file)."""
        target = interop.export_target(path)
        if target.resolve() != self.state_path:  # its copy kept: importing it back logs only what came since
            self._refuse_over_updates(target)
            keep = self._keeper(self._exported(target), cached=False)
            return interop.export_state(target, lambda: self._fresh_state({}), keep)
        with self.log.locked():
            self.refresh()
            if (missing := self.log_missing()) is not None:  # a fold of nothing would wipe it
                raise WorkspaceError(f"{missing}; nothing exported")
            try:  # another tool's update of it is logged first, as every write's rewrite does
                self.warnings.extend(self._log_foreign_update(locked=True)[1])
            except interop.StateKept:  # not knowable: replacing it is what this export is for (docs/trust.md)
                self.warnings.append(
                    f"{self.state_path.name}: another tool's update to it could not be logged; it is replaced by "
                    "the log's posteriors, as asked (that update is lost)"
                )
            style = interop.read_state(target)  # onto our own file: its key style is kept
            return interop.export_state(target, lambda: self._fresh_state(style), self._keep_written)

    def _fresh_state(self, style: dict[str, Any]) -> dict[str, Any]:
        """A new state file of the posteriors, keyed in the style of the file `style` (see `state_keys`):
        arms of exactly gptme-sessions' keys; what `style` holds beside its arms (gptme's per-context
        arms, its `created`) kept, and its total_sessions never less than `style`'s (gptme counts on)."""
        keys = self.state_keys(style)
        beside = {key: value for key, value in style.items() if key not in ("arms", interop.SOURCE_KEY)}
        return interop.gptme_state(self.posterior(), self._reader.session_times, self.now_iso(), beside, keys)

    def import_gptme(self, path: Path) -> ImportReport:
        """Log a gptme `bandit-state.json`'s arms as a prior event, unless its evidence is in the log
        already (docs/format.md §7): this workspace's own file as we wrote it or agreeing with the log,
        a file of ours that agrees with it, or the content of the priors already imported (the report's
        `skipped` says why, nothing logged). This workspace's own file changed by gptme's bandit: its
        increments are logged (as every write does). WorkspaceError when its evidence cannot be told
        apart from the log's."""
        with self.log.locked():
            self.refresh()
            own = Path(path).resolve() == self.state_path
            existing = interop.read_state(Path(path))
            keys = self.state_keys(existing)
            agrees = bool(existing) and interop.disagreement(existing, self.posterior(), "", keys) is None
            if own and existing and not interop.written_by_us(existing) and not agrees and self._has_evidence():
                if self._written() is None:
                    raise WorkspaceError(
                        f"{path} is this workspace's own bandit-state.json, changed by another tool, and there is "
                        "no copy of what lesson-credit wrote: importing it would count the log's evidence twice; "
                        "nothing logged"
                    )
                said = self._after_write()  # (said once, as what the import did: not a warning too)
                return ImportReport(str(path), (), skipped=" ".join(said) or None)
            if own and (agrees or interop.written_by_us(existing)):
                why = f"{path} is written from this workspace's log: nothing to import"
                return ImportReport(str(path), (), skipped=why)
            report = interop.read_import(Path(path), self.library())
            if not own and (exported := self._export_copy(Path(path), existing)) is not None:
                return self._import_exported(Path(path), existing, exported)  # (the sessions it counted too)
            if agrees and interop.STAMP_KEY in existing:
                return replace(
                    report,
                    skipped=f"{path} was written by lesson-credit and agrees with the log: its "
                    "evidence is in it already; nothing imported",
                )
            if self._reader.index.priors and self._imported_already(report):
                return replace(report, skipped=f"the priors of {path} are in the log already; nothing imported")
            event = commands.prior_event(*report.prior(), self.now_iso(), sessions=report.sessions)
            self.warnings.extend(self._append(event, adopted=own))
            return report

    def _exported(self, target: Path) -> Path:
        """Where the copy of what `export-gptme` wrote at `target` (another file than the own) is kept: in
        `exports/`, not `.cache/`: no log event holds what an export wrote, so the copy is a record, not
        derived (deleted, an import of that file after gptme's updates counts the log's evidence twice)."""
        digest = hashlib.sha256(str(target.resolve()).encode("utf-8", "surrogateescape")).hexdigest()[:32]
        return self.state_dir / "exports" / digest

    def _export_copy(self, path: Path, existing: dict[str, Any]) -> foreign.Written | None:
        """The copy of what `export-gptme` wrote at `path` while the file there (`existing`) is still that
        export: gptme keeps its `created`, and another bandit's file put in its place has its own (the
        stale copy is then dropped). None: no copy, or not that file any more."""
        where = self._exported(path)
        copy = self._copy(where, cached=False)
        if copy is not None and copy.created is not None and existing.get("created") != copy.created:
            with contextlib.suppress(OSError):
                where.unlink()
            return None
        return copy

    def _refuse_over_updates(self, target: Path) -> None:
        """`export-gptme` onto a file it wrote before is refused (one line, nothing written) while gptme's
        bandit has updated arms there since: those sessions would be lost; `import-gptme` logs them. A
        file changed otherwise, or another one, is replaced as asked."""
        existing = interop.read_state(target)
        if not existing or (copy := self._export_copy(target, existing)) is None:
            return
        try:
            added, sessions = self.foreign_increments(existing, copy)
        except interop.InteropError:
            return
        if added or sessions:  # (a session counted that moved no arm: the count would go back)
            raise WorkspaceError(
                f"{target} was updated by another tool (gptme's bandit) since lesson-credit exported it: "
                f"`lesson-credit import-gptme {target}` logs its updates first, else they are lost; nothing written"
            )

    def _import_exported(self, path: Path, existing: dict[str, Any], exported: foreign.Written) -> ImportReport:
        """Import a file `export-gptme` wrote from this log: its arms hold the log's evidence, so only
        what gptme's bandit added to it since is logged (an increments event), then its copy follows it."""
        try:
            added, sessions = self.foreign_increments(existing, exported)
        except interop.InteropError as exc:
            raise WorkspaceError(
                f"{path} was exported from this workspace's log and changed since otherwise than by another "
                f"tool's updates ({exc}): importing it would count the log's evidence twice; nothing logged "
                f"(if it is another bandit's file now, delete {self._exported(path)} and import it again)"
            ) from None
        if not added and not sessions:
            return ImportReport(str(path), (), skipped=f"{path} was exported from this log and holds nothing new")
        self.warnings.extend(self._append(foreign.increments_event(added, self.now_iso(), sessions)))
        self._keeper(self._exported(path), cached=False)(existing)
        what = f"to {len(added)} arm(s)" if added else f"{sessions} session(s) counted, no arm moved"
        why = f"{path} was exported from this log: its updates since, {what}, logged as increments"
        return ImportReport(str(path), (), skipped=why)

    def _imported_already(self, report: ImportReport) -> bool:
        """Whether every arm of `report` is the prior in force for its lesson (an import of the same content)."""
        index = self._reader.index
        arms, rewards = report.prior()
        return report.sessions <= index.prior_sessions and all(
            index.priors.get(arm) == prior and index.prior_rewards.get(arm, 0) == rewards.get(arm, 0)
            for arm, prior in arms.items()
        )
