"""gptme's `bandit-state.json` files: `export-gptme` writes the posteriors as one, `import-gptme` logs one.

An export to a file other than the workspace's own is logged (an export event, docs/format.md §5.8,
holding the numbers it wrote), so that the log alone tells an import of that file, once gptme's
bandit has updated it, what is new: only that is logged (increments). The log's evidence in the
exported numbers is never counted twice, whatever local files are gone.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
from pathlib import Path
from typing import Any

from msgspec.structs import replace

from lesson_credit.core import commands
from lesson_credit.core.bandit import increments as foreign
from lesson_credit.core.bandit import interop, saving
from lesson_credit.core.bandit.interop import ImportReport
from lesson_credit.core.base.errors import WorkspaceError
from lesson_credit.core.base.files import reading_back, refuse_unreplaceable
from lesson_credit.core.base.ids import one_form
from lesson_credit.core.base.numbers import counted
from lesson_credit.core.log.events import FileNumbers, encode
from lesson_credit.core.log.exports import Untold, counted_since, stamped_alike
from lesson_credit.core.log.store import lock_file
from lesson_credit.core.workspace.base import LOG_FILE
from lesson_credit.core.workspace.earlier_copies import EarlierCopies, other_names
from lesson_credit.core.workspace.late_evidence import COPY_TIME
from lesson_credit.core.workspace.written_copies import TWO_LOADS_THEN, TwoLoads

EXPORTED = "was exported from this log"  # how an import names the file it takes increments from
OWN_COPY = "is a copy of a bandit-state.json this workspace wrote"
IMPORT_REFUSED = "nothing imported (run import-gptme again in a few seconds)"  # a file being saved
EARLIER = "is an earlier copy of this workspace's bandit-state.json"  # known by its arms' `last_updated` alone


class GptmeFiles(EarlierCopies):
    """`export-gptme` and `import-gptme`."""

    def export_gptme(self, path: Path | str) -> Path:
        """Write the posteriors as a gptme `bandit-state.json` at `path` (or in it, a folder); onto
        another file than the workspace's own, its numbers are logged first (`_export_elsewhere`);
        onto the own, that file is ours again (its copy kept), written as every rewrite of it is: under
        the writers' lock, from the log as it is under it (never over a later write's file)."""
        target = interop.export_target(path)
        if not self._is_own(target):  # (a slip in PATH: refused before anything, the lock file too)
            log_file = self.state_dir / LOG_FILE
            ours = {log_file: "the workspace's event log", lock_file(log_file): "the event log's lock file"}
            waited = interop.refuse_non_state(target, ours)  # (a save in progress there waited out first)
        else:
            waited = saving.wait_out(target)  # (a save in progress lands first)
        self.warnings.extend(saving.waited_said(target, waited, "then wrote it"))
        with self.log.locked():
            self.refresh()
            if (missing := self.log_missing()) is not None:  # a fold of nothing would wipe it
                raise WorkspaceError(f"{missing}; nothing exported")
            self._refuse_other_names(target)
            if not self._is_own(target):
                return self._export_elsewhere(target)
            was = interop.state_bytes(target, exporting=True)  # (what gptme saves after this, logged or not, is kept)
            try:  # another tool's update of it is logged first, as every write's rewrite does
                self.warnings.extend(self._log_foreign_update(locked=True)[1])
            except interop.StateKept as exc:  # not knowable: replacing it is what this export is for (docs/trust.md)
                self.warnings.extend(exc.logged)  # (gptme's saves onto a file kept as it is: logged over it first)
                self.warnings.append(
                    f"{self.state_path.name}: another tool's update to it could not be logged; it is replaced by "
                    "the log's posteriors, as asked (that update is lost)"
                )
            style = interop.read_state(target)  # onto our own file: its key style is kept
            linked = self._hard_linked(target)  # (by its own name: said once written, the write cuts the link)
            if (unread := self.records_unread()) is not None:  # (replacing it is what was asked)
                self.warnings.append(f"{unread}: it is written without their rewards, as asked")
            written = interop.export_state(
                target, lambda: self._naming_records(self._fresh_state(style)), self._keep_written, was
            )
            self.warnings.extend(linked)
            return written

    def _refuse_other_names(self, target: Path) -> None:
        """WorkspaceError (one line; nothing logged or written) when the file at `target` has other names (hard
        links): an export replaces a file (written whole, then renamed over it), so the name written would get
        the new numbers and the others keep the old ones, two files where there was one (the workspace's own
        file exported by a linked name would keep the old numbers itself). Written in place instead, a reader
        (gptme's bandit) could read it half-written. The own file by its own name is rewritten as every write
        rewrites it (`_hard_linked` says the link is cut)."""
        if target.resolve() == self.state_path.resolve():
            return
        try:
            names = os.stat(target).st_nlink
        except OSError:  # (none yet: written new)
            return
        if names > 1:
            raise WorkspaceError(
                f"{target}: the file has {counted(names - 1, 'other name')} (a hard link); an export replaces it at "
                "this name only and the others would keep the old numbers, so nothing was exported (export to a "
                "file of one name; to share it, give the other names a symbolic link to it)"
            )

    def _is_own(self, path: Path) -> bool:
        """Whether `path` is the workspace's own bandit-state.json, however either is reached (a `state`
        folder that is a symbolic link resolves elsewhere than the workspace's name for the file; a hard link
        or a bind mount names the same file, one device and inode, by another path: gptme's bandit saving
        there saves the own file; a hard link only until our next rewrite, which replaces the file)."""
        if path.resolve() == self.state_path.resolve():
            return True
        try:
            return os.path.samefile(path, self.state_path)
        except OSError:  # (either missing)
            return False

    def _export_elsewhere(self, target: Path) -> Path:
        """Under the writers' lock: refused while gptme's bandit has updated the file there since an
        export wrote it (`_refuse_over_updates`); else an export event holding the numbers about to be
        written is appended, then the file is written (a file not written after its event is logged
        holds nothing an import could take for it: its `created` is new). What a write must not
        replace there (a symbolic link, a FIFO, a device) is refused first: one line, nothing logged
        (`export_gptme` refused the event log and any file that is not a gptme state file before)."""
        refuse_unreplaceable(target)  # (StoreError: one line)
        was = interop.state_bytes(target, exporting=True)  # (what gptme's bandit saves after this is not replaced)
        self._refuse_over_updates(target)

        def log_export(payload: dict[str, Any]) -> None:
            self._log_export(foreign.exported_numbers(payload, str(target.resolve())))

        written = interop.export_state(target, lambda: self._fresh_state({}), log_export, was)
        with contextlib.suppress(OSError):  # an earlier version's copy of an export there: the log says it now
            self._legacy_copy(target).unlink()
        return written

    def _fresh_state(self, style: dict[str, Any]) -> dict[str, Any]:
        """A new state file of the posteriors, keyed in the style of the file `style` (see `state_keys`):
        arms of exactly gptme-sessions' keys; what `style` holds beside its arms (gptme's per-context
        arms) kept, and its total_sessions never less than `style`'s (gptme counts on); a `created` of
        its own (`new_created`: gptme keeps it, so a later import or write knows the file again)."""
        keys = self.state_keys(style)
        beside = {key: value for key, value in style.items() if key not in ("arms", interop.SOURCE_KEY)}
        payload = interop.gptme_state(self.posterior(), self._reader.session_times, self.now_iso(), beside, keys)
        payload["created"] = self.new_created(style)
        return self._with_holds(payload)

    def import_gptme(self, path: Path) -> ImportReport:
        """Log a gptme `bandit-state.json`'s arms as a prior event, unless its evidence is in the log
        already (docs/format.md §7): this workspace's own file as we wrote it or agreeing with the log,
        a file of ours that agrees with it, or the content of the priors already imported (the report's
        `skipped` says why, nothing logged). This workspace's own file changed by gptme's bandit: its
        increments are logged (as every write does); a file an export wrote (the log says so): only what
        was added to it since. WorkspaceError when its evidence cannot be told apart from the log's."""
        waited = saving.wait_out(Path(path))  # (a save in progress lands first: its text is what is imported)
        self.warnings.extend(saving.waited_said(Path(path), waited, "then read it"))
        with self.log.locked():
            self.refresh()
            own = self._is_own(Path(path))
            raw = saving.unsaved_bytes(Path(path), IMPORT_REFUSED)  # read once: what is decided and logged is one file
            interop.check_arm_count(Path(path), raw or b"")  # (before it is decoded)
            existing = {} if raw is None else interop.read_state(Path(path), raw)
            interop.check_arm_count(Path(path), b"", existing)
            keys = self.state_keys(existing)
            agrees = bool(existing) and self.agrees(existing, keys)
            if own and existing and not interop.written_by_us(existing) and not agrees and self._has_evidence():
                if isinstance(why := self._written_or_why(existing), TwoLoads):
                    raise WorkspaceError(
                        f"{path} is this workspace's own bandit-state.json, saved by gptme's bandit from a load "
                        f"another save of which is logged ({why}): nothing logged; {TWO_LOADS_THEN}"
                    )
                if isinstance(why, str):
                    raise WorkspaceError(
                        f"{path} is this workspace's own bandit-state.json, changed by another tool, and there is "
                        f"no copy of what lesson-credit wrote{f' ({why})' if why else ''}: importing it would count "
                        "the log's evidence twice; nothing logged"
                    )
                said = self._after_write()  # (said once, as what the import did: not a warning too)
                return ImportReport(str(path), (), skipped=" ".join(said) or None)
            if own and (agrees or interop.written_by_us(existing)):
                why = f"{path} is written from this workspace's log: nothing to import"
                return ImportReport(str(path), (), skipped=why)
            report = interop.read_import(Path(path), self.library(), raw)
            if not own and (exported := self._export_lineage(Path(path), existing)) is not None:
                # (the sessions it counted too)
                return self._import_exported(Path(path), existing, exported[0], EXPORTED, exported[1])
            if agrees and interop.STAMP_KEY in existing:
                return replace(
                    report,
                    skipped=f"{path} was written by lesson-credit and agrees with the log: its "
                    "evidence is in it already; nothing imported",
                )
            if not own and (lineage := self._own_copy_lineage(Path(path), existing)) is not None:
                return self._import_exported(Path(path), existing, lineage[0], OWN_COPY, lineage[1])
            if self._reader.index.priors and self._imported_already(report):
                return replace(report, skipped=f"the priors of {path} are in the log already; nothing imported")
            if (held := self._log_session_in(existing, report)) is not None:
                if agrees:  # (saved again by gptme as it was: our stamp gone, nothing new)
                    why = f"{path} holds this log's evidence ({held}) and agrees with the log: nothing imported"
                    return replace(report, skipped=why)
                return self._import_earlier_copy(Path(path), existing, report, held)
            created = existing.get("created")  # (gptme keeps it: how the file is known again)
            named = created if isinstance(created, str) and created else None
            self._refuse_own_back(path, existing)
            self._refuse_past_lessons((arm.lesson_id for arm in report.arms), path)
            event = commands.prior_event(*report.prior(), self.now_iso(), sessions=report.sessions, created=named)
            self.warnings.extend(self._append(event, adopted=own))
            return report

    def _import_earlier_copy(
        self, path: Path, existing: dict[str, Any], report: ImportReport, held: str
    ) -> ImportReport:
        """Import an earlier copy of ours whose copy is gone (`_earlier_copy`): only what gptme's bandit added to it
        is logged (increments); WorkspaceError when an arm we wrote was changed since (it would count twice)."""
        found = self._earlier_copy(path, existing, report)
        if isinstance(found, str):
            raise WorkspaceError(
                f"{path} holds this log's evidence ({held}), and its {found}: with no copy of what lesson-credit "
                "wrote, what was added there cannot be told from the log's evidence, and importing it would count "
                "that evidence twice; nothing logged"
            )
        return self._import_exported(path, existing, found[0], EARLIER, found[1])

    def _export_base(self, path: Path, existing: dict[str, Any]) -> FileNumbers | None:
        lineage = self._export_lineage(path, existing)
        return None if lineage is None else lineage[0]

    def _export_lineage(self, path: Path, existing: dict[str, Any]) -> tuple[FileNumbers, frozenset[str]] | None:
        """What the file at `path` (parsed: `existing`) holds of the log's, when `export-gptme` wrote it (or
        it is a copy of such a file): the numbers the log tells for the file of its `created` (gptme keeps
        it; another bandit's file has its own): the export's, with those the imports of this file saw, else
        of the latest import of a copy elsewhere whose numbers it holds (`Exports.base`). With them, the keys
        those imports saw (the next import's `seen` holds them as the file does). None: no export wrote it.
        The caller holds the writers' lock: a copy an earlier version kept of the export is logged first."""
        created = existing.get("created")
        if not isinstance(created, str):
            return None

        def grew_from(numbers: FileNumbers) -> bool:  # the file holds those numbers, and gptme's updates since
            try:
                foreign.increments(existing, numbers.arms)
            except interop.InteropError:
                return False
            return True

        where, names = str(path.resolve()), other_names(path)
        numbers, exports = _numbers(existing, where), self._reader.index.exports
        found: tuple[FileNumbers, frozenset[str]] | Untold | None
        found = exports.base(created, where, grew_from, names, numbers)
        exported = exports.export_of(created, where)
        if found is not None and numbers is not None and exported is not None:  # (arm by arm: gptme's stamps said)
            found = exports.per_arm(*found, numbers, exported.sessions)
        if found is not None:
            return _told(path, created, "exported file", found)
        legacy = self._adopt_legacy(path, existing)
        return None if legacy is None else (legacy, frozenset())

    def _own_copy_base(self, path: Path, existing: dict[str, Any]) -> FileNumbers | None:
        lineage = self._own_copy_lineage(path, existing)
        return None if lineage is None else lineage[0]

    def _own_copy_lineage(self, path: Path, existing: dict[str, Any]) -> tuple[FileNumbers, frozenset[str]] | None:
        """What the file at `path` (parsed: `existing`) holds of the log's when it is a copy of a
        bandit-state.json this workspace wrote (its `created`, which gptme keeps, names a copy of ours in
        `.cache/bandit-state-copies/`): a backup, or a file another gptme bandit saves its sessions to.
        Those numbers, with those earlier imports of the file saw there (an increments event's `seen`: of
        the file at `path`, else of the latest one imported with its `created` from another path whose
        numbers it holds: moved here, or copied from there after that import). None: no copy of ours has its
        `created` (another bandit's file, caches gone). With them, the keys whose numbers an import saw (the
        next import's `seen` holds them as the file does: they are not our copy's)."""
        created = existing.get("created")
        if not isinstance(created, str) or self._copies_linked():
            return None
        copy = self._copy(self._copy_path(created)) or self._copy(self._hashed_copy_path(created))
        if copy is None or copy.created != created:
            return None
        where = str(path.resolve())
        sessions = interop.file_sessions(existing) if copy.sessions is None else copy.sessions  # (unknown: none new)
        own = str(self.state_path)

        numbers, names, exports = _numbers(existing, where), other_names(path), self._reader.index.exports

        def grew_from(seen: FileNumbers) -> bool:  # the file holds what an import of another saw there
            if not stamped_alike(numbers, seen):  # (at its numbers under another stamp: another session's)
                return False
            if not counted_since(numbers, FileNumbers(where, created, {**copy.arms, **seen.arms}, seen.sessions)):
                return False
            try:
                foreign.increments(existing, {**copy.arms, **seen.arms})
            except interop.InteropError:
                return False
            return True

        saved = exports.saved_elsewhere(created, where, lambda was: was != own, grew_from, names)
        found = (
            (FileNumbers(where, created, copy.arms, sessions), frozenset[str]())
            if saved is None
            else (FileNumbers(where, created, {**copy.arms, **saved.arms}, saved.sessions), frozenset(saved.arms))
        )
        if numbers is None:
            return found
        logged = exports.saved(created, own)  # (once the own file's save is logged, our copy is the file as saved)
        moved = logged is not None and (copy.arms, copy.sessions) == ({**copy.arms, **logged.arms}, logged.sessions)
        told = exports.per_arm(*found, numbers, sessions, own if moved else None)
        return _told(path, created, "bandit-state.json this workspace wrote", told)

    def _legacy_copy(self, target: Path) -> Path:
        """Where an earlier version kept a copy of what `export-gptme` wrote at `target`: `exports/`."""
        digest = hashlib.sha256(str(target.resolve()).encode("utf-8", "surrogateescape")).hexdigest()[:32]
        return self.state_dir / "exports" / digest

    def _adopt_legacy(self, path: Path, existing: dict[str, Any]) -> FileNumbers | None:
        """The numbers of an export an earlier version kept a copy of (in `exports/`, no event logged),
        when the file at `path` is still that export (the copy's `created`, if it kept one, is the
        file's): logged as an export event (under the caller's lock), the copy then deleted. None: no
        such copy (another bandit's file in its place: its stale copy is deleted)."""
        where = self._legacy_copy(path)
        copy = self._copy(where, cached=False)
        created = existing.get("created")
        if copy is None or not isinstance(created, str) or copy.created not in (None, created):
            with contextlib.suppress(OSError):
                where.unlink()
            return None
        sessions = interop.file_sessions(existing) if copy.sessions is None else copy.sessions
        numbers = FileNumbers(str(path.resolve()), created, copy.arms, sessions)
        self._log_export(numbers)
        with contextlib.suppress(OSError):
            where.unlink()
        return numbers

    def _log_export(self, numbers: FileNumbers) -> None:
        """Append an export event (the caller holds the writers' lock), and read it."""
        event = encode(foreign.export_event(numbers, self.now_iso()))
        self._reader.own_append(lambda: self.log.append(event))  # we hold the lock and only append
        self._say_torn()
        with reading_back():
            self.refresh()

    def _refuse_over_updates(self, target: Path) -> None:
        """`export-gptme` onto a file it wrote before (or onto a copy of the workspace's own file:
        `_own_copy_base`) is refused (one line, nothing written) while gptme's bandit has updated arms
        there since: those sessions would be lost; `import-gptme` logs them; so is one changed otherwise
        (`_refuse_updated`). So is one onto another bandit's file holding evidence the log has not
        (`_refuse_unlogged`). The caller holds the lock."""
        existing = interop.read_state(target)
        if not existing:
            return
        exported = self._export_base(target, existing) or self._own_copy_base(target, existing)
        if exported is None:
            self._refuse_unlogged(target, existing)
            return
        self._refuse_updated(target, existing, foreign.written_of(exported), f"{target} was")

    def _refuse_updated(self, target: Path, existing: dict[str, Any], written: foreign.Written, was: str) -> None:
        """Refused (one line, nothing written; `was` begins it: the file and how it is ours) when the file
        `existing` at `target`, grown from `written` (a file of ours), holds what the log has not: gptme's bandit's
        updates since (`import-gptme` logs them first), or a number changed otherwise (down, a count not whole:
        not an update; `import-gptme` refuses such a file, so the line says to put it back, or to delete the file
        to replace it). Arms gone from it, and nothing else changed, lose nothing: replaced."""
        try:
            added, sessions = self.foreign_increments(existing, written)
        except interop.InteropError as exc:
            arms = existing.get("arms")
            there = {key: n for key, n in written.arms.items() if isinstance(arms, dict) and key in arms}
            try:  # (only arms gone, nothing added: nothing to lose)
                if self.foreign_increments(existing, foreign.Written(there, written.sessions)) == ({}, 0):
                    return
            except interop.InteropError:
                pass
            raise WorkspaceError(
                f"{was} changed since lesson-credit wrote it otherwise than by gptme's bandit's updates ({exc}): the "
                "export would replace that, and any update beside it; nothing written (delete the file to replace it "
                f"anyway, or put that back as it was: then `lesson-credit import-gptme {target}` logs the updates)"
            ) from None
        if added or sessions:  # (a session counted that moved no arm: the count would go back)
            raise WorkspaceError(
                f"{was} updated by another tool (gptme's bandit) since lesson-credit wrote it: "
                f"`lesson-credit import-gptme {target}` logs its updates first, else they are lost; nothing written"
            )

    def _refuse_unlogged(self, target: Path, existing: dict[str, Any]) -> None:
        """An export onto another bandit's file (gptme's own, in another project; no export of this log wrote
        it) holding sessions, or arms moved from Beta(1, 1), that the log has not is refused (one line,
        nothing written): the export replaces the file whole and that evidence would be gone; `import-gptme`
        logs it first; so is one whose arms `import-gptme` cannot read (two naming one lesson, a bad number).
        Nothing to lose: no arm, its arms all at Beta(1, 1) with no session counted, its numbers the log's (it
        agrees with the log, its priors are imported, or it is an earlier copy of ours: `_earlier_copy`)."""
        try:
            report = interop.read_import(target, self.library())
        except interop.InteropError as exc:  # (no arm: nothing there to lose)
            if isinstance(arms := existing.get("arms"), dict) and arms:  # (what they hold is not known to be nothing)
                raise WorkspaceError(
                    f"{target} holds arms import-gptme cannot read ({str(exc).removeprefix(f'{target}: ')}): the "
                    "export would replace them and what they hold; nothing written (delete the file to replace it)"
                ) from None
            return
        moved = [lesson for lesson, (alpha, beta, n) in report.prior()[0].items() if (alpha, beta, n) != (1, 1, 0)]
        if not moved and not report.sessions:
            return
        if self.agrees(existing, self.state_keys(existing)):
            return
        if self._reader.index.priors and self._imported_already(report):
            self._refuse_relay(target, existing)
            return
        if (held := self._log_session_in(existing, report)) is not None:
            self._refuse_earlier_copy_updates(target, existing, report, held)
            return
        what = counted(report.sessions, "session") if report.sessions else counted(len(moved), "arm")
        raise WorkspaceError(
            f"{target} holds another bandit's evidence the log has not ({what}): `lesson-credit import-gptme "
            f"{target}` logs it first, else the export replaces it and it is lost (or delete the file to replace "
            "it without it); nothing written"
        )

    def _refuse_relay(self, target: Path, existing: dict[str, Any]) -> None:
        """An export onto a file another lesson-credit workspace's log wrote (its `created` is of the form
        every write of ours gives, to the microsecond; no export of this log wrote it) whose arms this log imported
        as a prior is refused (one line, nothing written): it would write that prior back into the file, the other
        log's own sessions in it, under a `created` the other log never wrote, and that log's next `import-gptme`
        would take it for another bandit's file and count its own sessions a second time."""
        created = existing.get("created")
        if not isinstance(created, str) or not COPY_TIME.fullmatch(created):
            return
        index = self._reader.index
        if any(was == created for was, _ in index.exports.files):  # (an export of this log: known again by it)
            return
        if any(was == created for _, was in index.prior_counts.files.values()):
            raise WorkspaceError(
                f"{target} was written by another lesson-credit workspace (created {created}), whose evidence this "
                "log holds as an import: an export onto it would hand that workspace its own sessions back, "
                "counted twice at its next import-gptme; nothing written (under any name: a file of this log's "
                "posteriors that workspace imports counts its sessions twice, so share evidence one way)"
            )

    def _refuse_earlier_copy_updates(
        self, target: Path, existing: dict[str, Any], report: ImportReport, held: str
    ) -> None:
        """An export onto an earlier copy of ours whose copy is gone (`_earlier_copy`) is refused (one line,
        nothing written) while it holds what gptme's bandit added that the log has not: an arm we wrote that was
        changed since (its update cannot be logged: deleting the file lets the export replace it), or gptme's
        arms and sessions (`import-gptme` logs them first). Every arm as we wrote it or logged: replaced."""
        found = self._earlier_copy(target, existing, report)
        if isinstance(found, str):
            raise WorkspaceError(
                f"{target} is an earlier copy of this workspace's bandit-state.json ({held}), and its {found}: with "
                "no copy of what lesson-credit wrote, that change cannot be logged, and the export would replace it; "
                "nothing written (delete the file to replace it without it)"
            )
        earlier = f"{target}, an earlier copy of this workspace's bandit-state.json ({held}), was"
        self._refuse_updated(target, existing, foreign.written_of(found[0]), earlier)

    def _import_exported(
        self,
        path: Path,
        existing: dict[str, Any],
        exported: FileNumbers,
        what: str = EXPORTED,
        carried: frozenset[str] = frozenset(),
    ) -> ImportReport:
        """Import a file `export-gptme` wrote from this log (or, `what` says, a copy of the workspace's own
        file: `_own_copy_base`): its arms hold the log's evidence, so only what gptme's bandit added to it
        since is logged (an increments event), with the numbers of the keys it changed as the file has
        them now (`seen`: the base of the next import of it), and of the `carried` keys: those of its base
        that are not the export's or our copy's (an import of the file it was copied from saw them)."""
        written = foreign.written_of(exported)
        try:
            changed = foreign.increments(existing, written.arms)
            added, sessions = self.foreign_increments(existing, written)
        except interop.InteropError as exc:
            # (never as another bandit's file, its `created` removed: it grew from ours, whose evidence it holds)
            advice = (
                "if gptme's `prune` dropped it, put the arm back with those numbers and import it again"
                if isinstance(exc, interop.ArmGone)
                else "gptme's `prune` then a session making the arm again, or its `decay`, cannot be told from the "
                "log's evidence: to go on, delete the file and export to it again, its sessions since lost, none "
                'counted twice; removing its "created" would import it as another bandit\'s, counting ours twice'
            )
            raise WorkspaceError(
                f"{path} {what} and changed since otherwise than by another "
                f"tool's updates ({exc}): importing it would count the log's evidence twice; nothing logged ({advice})"
            ) from None
        if not added and not sessions:
            return ImportReport(str(path), (), skipped=f"{path} {what} and holds nothing new")
        count = max(interop.file_sessions(existing), exported.sessions)
        keys = {*changed, *carried}
        numbers, stamps = foreign.file_counts(existing, keys), foreign.file_stamps(existing, keys)
        seen = FileNumbers(exported.path, exported.created, numbers, count, stamps)
        self._refuse_past_lessons(added, path)
        event = foreign.increments_event(added, self.now_iso(), sessions, seen=seen)
        self.warnings.extend(self._append(event))
        moved = f"to {counted(len(added), 'arm')}" if added else f"{counted(sessions, 'session')} counted, no arm moved"
        why = f"{path} {what}: its updates since, {moved}, logged as increments"
        return ImportReport(str(path), (), skipped=why)

    def _imported_already(self, report: ImportReport) -> bool:
        """Whether every arm of `report` is the prior in force for its lesson, from an import that counted
        as many sessions or more (an import of the same content)."""
        index = self._reader.index
        arms, rewards = report.prior()
        keys = {arm: one_form(arm) for arm in arms}  # the index keeps priors by a lesson's NFC form
        counted = max((index.prior_counts.of(index.prior_from.get(key, -1)) for key in keys.values()), default=0)
        return report.sessions <= counted and all(
            index.priors.get(keys[arm]) == prior and index.prior_rewards.get(keys[arm], 0) == rewards.get(arm, 0)
            for arm, prior in arms.items()
        )


def _numbers(existing: dict[str, Any], path: str) -> FileNumbers | None:
    """The file `existing`'s numbers, every key, with gptme's stamps (`foreign.file_stamps`). None: an arm is not
    one `increments` reads (the import refuses the file)."""
    arms = existing.get("arms")
    if not isinstance(arms, dict) or not isinstance(created := existing.get("created"), str):
        return None
    try:
        counts = foreign.file_counts(existing, arms)
        return FileNumbers(path, created, counts, interop.file_sessions(existing), foreign.file_stamps(existing, arms))
    except (TypeError, ValueError, AttributeError, KeyError, OverflowError, interop.InteropError):
        return None


def _told(
    path: Path, created: str, what: str, found: tuple[FileNumbers, frozenset[str]] | Untold
) -> tuple[FileNumbers, frozenset[str]]:
    """`found` (`Exports.per_arm`'s answer for the file at `path`, a copy of the `what` whose `created` it keeps), or
    WorkspaceError (one line) naming the arm that cannot be told and the other copy."""
    if not isinstance(found, Untold):
        return found
    unstamped = "; that import was logged by a version that kept no stamps" if found.unstamped else ""
    raise WorkspaceError(
        f"{path}: its {found.key} may or may not hold the update of it an import of {found.other} logged (a copy of "
        f"the same {what}, created {created}; the numbers and gptme's stamps cannot tell{unstamped}): imported, that "
        "update could count twice; nothing logged or written (to go on without the sessions saved in this file since "
        f"it was copied, delete it and run `lesson-credit export-gptme {path}`)"
    )
