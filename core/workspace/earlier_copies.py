"""An earlier copy of our `bandit-state.json` with no copy of what we wrote left (a backup, or the workspace's own
file with `.cache` deleted or the caches off): its arms told one by one from the log as ours as we wrote them, the
log's, or gptme's own, by their `last_updated` and numbers (docs/format.md §7, Import)."""

from __future__ import annotations

import contextlib
import datetime as dt
import math
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from lesson_credit.core.bandit import increments as foreign
from lesson_credit.core.bandit import interop
from lesson_credit.core.bandit.fold import fold_through
from lesson_credit.core.bandit.interop import ImportReport
from lesson_credit.core.bandit.stamps import gptme_time, same_time, spellings
from lesson_credit.core.base.files import atomic_write
from lesson_credit.core.base.ids import one_form
from lesson_credit.core.base.safe_read import UnsafeFile, open_regular, read_opened
from lesson_credit.core.log.events import FileNumbers
from lesson_credit.core.log.exports import Exports, OtherNames
from lesson_credit.core.log.store import StoreError
from lesson_credit.core.workspace import kept_verdict as verdicts
from lesson_credit.core.workspace.kept_verdict import Untold
from lesson_credit.core.workspace.late_evidence import (
    LateGrades,
    log_arms,
    saved_last,
    stamped_now,
    started_elsewhere,
)
from lesson_credit.core.workspace.state_file import StateFile

DECAYED = "what the log held right after a session is not known per arm"
VERDICT_MAX_BYTES = 1 << 20  # a kept verdict is a few hundred bytes: more is not one
MAX_READINGS = 32  # sessions of an arm after the latest stamp of ours it is read at (each reads its arm's entries)


class EarlierCopies(StateFile):
    """Telling the arms of an earlier copy of our file apart, for `import-gptme`, `export-gptme` and the rewrite of
    the workspace's own file (`_rebuilt`)."""

    def _log_session_in(self, existing: dict[str, Any], report: ImportReport) -> str | None:
        """Which session of this log the file `existing` (read as `report`) holds, when an arm's `last_updated`
        is the time of a session of this log that credited its lesson (what we write; gptme's bandit keeps
        it until it updates the arm): `quote.md's session s1 (2026-11-01T10:00:00Z)`. None: no arm's is,
        or the file has no `created` (taken out by hand: imported whole, as another bandit's file)."""
        found = self._stamped(existing, report)
        if not found:
            return None
        lesson, row = min(found.values(), key=lambda item: item[2])[1:]
        session = self._reader.session(row)
        return f"{lesson}'s session {session.session_id} ({self._reader.session_times()[row]})"

    def _stamped(self, existing: dict[str, Any], report: ImportReport) -> dict[str, tuple[int, str, int]]:
        """Per key of the file `existing` (read as `report`; it has a `created`) whose arm's `last_updated` is the
        time of a session of this log that credited its lesson (`stamps.same_time`: as we write it, or as logged):
        (the latest such session's row, graded now, or -1; the lesson as the first such session names it; that
        session's row), in the order of those rows."""
        arms = existing.get("arms")
        if not isinstance(existing.get("created"), str) or not isinstance(arms, dict):
            return {}
        stamps: dict[str, tuple[str, str]] = {}  # per arm as the import read its id (interop's `source`): key, stamp
        for key, entry in arms.items():
            if isinstance(entry, dict) and isinstance(stamp := entry.get("last_updated"), str) and stamp:
                stamps[str(entry.get("arm_id") or entry.get("lesson_path") or key)] = (key, stamp)
        told = log_arms(report.arms, self.data().arm_ids)  # (the id we wrote, over a lesson moved since)
        wanted = {told[arm.source_id]: stamps[arm.source_id] for arm in report.arms if arm.source_id in stamps}
        times = self._reader.session_times().between(0, self.data().n_sessions)
        rows = _rows_holding(times, spellings({stamp for _, stamp in wanted.values()}))
        graded = self.posterior().base if rows else None  # (a foreign file, the usual case: none)
        found: dict[str, tuple[int, str, int]] = {}
        for row in rows:
            for lesson in self._reader.session(row).lesson_ids:
                key, stamp = wanted.get(one_form(lesson), ("", ""))
                if key and same_time(stamp, times[row]):
                    last, named, first = found.get(key, (-1, lesson, row))
                    found[key] = (last if graded is None or np.isnan(graded[row]) else row, named, first)
        return found

    def _earlier_copy(
        self, path: Path, existing: dict[str, Any], report: ImportReport
    ) -> tuple[FileNumbers, frozenset[str]] | str:
        """The numbers of the file at `path` (parsed: `existing`, read as `report`) that are not gptme's, when it
        is an earlier copy of ours (`_log_session_in`) and no copy of what we wrote is left: the base its updates
        are taken over, as an export's is. Per key: an arm naming a session of this log that credited it
        (`_stamped`) whose numbers the log held right after that session (as we wrote it: gptme's bandit
        restamps an arm it updates); an arm at the log's numbers now stamped as we would (`stamped_now`); what an
        import of this file saw there (`seen`: the keys returned with it; of the file moved here, or copied from
        there after it, as `_own_copy_lineage` finds it). An arm of a lesson the log holds no evidence of (no
        session names it, graded or not; no prior or increments: at the prior) counts from Beta(1, 1): gptme's; so
        does, in a file no write of ours started (gptme's bandit's own `created`) that lacks a lesson the log's
        sessions name, one with no evidence before the first session naming such a lesson (`started_elsewhere`). Its
        total_sessions: an import's, else no more than the log counts now (and then, before that session). A str
        instead: which arm is none of these and why (ours changed since: what was added to it cannot be told from
        the log's evidence)."""
        created, where, own = str(existing["created"]), str(path.resolve()), str(self.state_path)

        def grew_from(numbers: FileNumbers) -> bool:  # the file holds what an import of it by another path saw
            try:
                foreign.increments(existing, numbers.arms)
            except interop.InteropError:
                return False
            return True

        exports = self._reader.index.exports
        saved = exports.saved_elsewhere(created, where, lambda was: was != own, grew_from, other_names(path))
        seen = {} if saved is None else saved.arms
        post = self.posterior()
        at = {one_form(arm): i for i, arm in enumerate(post.arm_ids)}
        lessons = log_arms(report.arms, post.arm_ids)
        stamped = self._stamped(existing, report)
        last_rows = np.full(len(post.arm_ids), -1, dtype=np.int64)
        for row, lesson, _ in stamped.values():
            if one_form(lesson) in at:
                last_rows[at[one_form(lesson)]] = row
        through = fold_through(post, last_rows)
        late = LateGrades(post, self._reader.index, self._reader.outcomes, self._reader.rewards)
        now, fresh = (post.alpha, post.beta, post.n), (post.settings.prior_alpha, post.settings.prior_beta, 0)
        named = np.bincount(post.data.entry_arm, minlength=len(post.arm_ids))  # sessions naming it, pending too
        held = {*lessons.values(), *(one_form(arm.lesson_id) for arm in report.arms)}
        since = started_elsewhere(post, created, held)  # (a file gptme started: lacking a lesson the log names)
        imported = any(was == created for _, was in self._reader.index.prior_counts.files.values())
        since = None if stamped or imported else since  # (an arm stamped as ours, or imported: not gptme's fresh file)
        logged = None if self.appended_at is None else late.sessions_before(self.appended_at)  # (the file's log)
        logged = post.total_sessions if logged is None else logged
        if since is not None:  # (if ours, written before row `since[0]`: it counted no more than the log then could)
            logged = min(logged, int(np.count_nonzero(late.scored[: since[0]] >= 0)) + post.data.counted_sessions)
        sessions = saved.sessions if saved is not None else min(interop.file_sessions(existing), logged)
        own_file = path.resolve() == self.state_path.resolve()  # (gptme's prune there: an arm made again, below)
        again = foreign.MadeAgain({}, interop.file_sessions(existing) - sessions, created, _logged_stamps(exports))
        bound = _written_after(stamped, existing["arms"], created, _unscored_then(self._reader.index.grades, late))
        base: dict[str, foreign.Counts] = {}
        for key, entry in existing["arms"].items():
            counts = foreign.file_counts(existing, [key])[key]
            told = lessons.get(str(entry.get("arm_id") or entry.get("lesson_path") or key))
            i = at.get(told or "")
            if key in seen or counts == foreign.GPTME_NEW_ARM:
                base[key] = seen.get(key, counts)
            elif key in stamped:  # ours as written, or changed since (its stamp kept)
                if through is None:
                    return Untold(f"{key} cannot be told from an arm changed since (decay is set: {DECAYED})", told)
                if i is None or stamped[key][0] < 0 or not self._as_written(through, late, i, stamped[key][0], counts):
                    return Untold(f"{key} was changed since lesson-credit wrote it", told)
                base[key] = counts
            elif i is not None and _same(now, i, counts) and stamped_now(post, self._reader.session_times, i, entry):
                base[key] = counts
            elif i is not None and not named[i] and (last := saved_last(exports.saves, own, key, created)) is not None:
                if not _same(now, i, last):  # (moved since: by another file's import, or before that file's write)
                    return Untold(f"{key} is not the log's (logged since gptme's update of it was)", told)
                base[key] = last  # gptme's arm, logged from this file before: the log's since, as we wrote it
            elif own_file and i is not None and again.unchanged(entry, _readings(post, late, i, bound), counts):
                base[key] = self._unchanged_said(again, key, entry, counts)  # as we wrote it (gptme's stamp kept)
            elif own_file and i is not None and again.told(entry, _readings(post, late, i, bound), counts):
                pass  # gptme's arm made again after its prune: counted from Beta(1, 1) (not in `base`)
            elif i is not None and (named[i] or not _same(now, i, fresh)) and (since is None or not since[1][i]):
                return Untold(f"{key} is not the log's (an update of a lesson the log has evidence of)", told)
            # else a lesson the log has no evidence of (before the file's first lesson missing, when gptme started
            # it: `started_elsewhere`): gptme's own arm, counted from Beta(1, 1) (not in `base`)
        return FileNumbers(where, created, base, sessions), frozenset(seen)

    def _unchanged_said(
        self, again: foreign.MadeAgain, key: str, entry: dict[str, Any], counts: foreign.Counts
    ) -> foreign.Counts:
        """`counts`, an arm of the own file taken as we wrote it with no copy left (`MadeAgain.unchanged`: at numbers
        we wrote, stamped by gptme before our write), said when no increments event saw its stamp (`fresh`): gptme's
        bandit may have pruned and made it again since, on a clock behind ours, its session there then not logged
        (nothing tells which; its count is)."""
        if again.fresh(key, entry):
            said = (
                f"{self.state_path.name}'s {key} is at numbers lesson-credit wrote, stamped "
                f"{entry.get('last_updated')} in gptme's form by no update the log holds, before the file's created: "
                "taken as written, though "
                "gptme's bandit may have pruned it and made it again since on a clock behind this one (that session "
                "is then not logged; with `.cache` kept, a copy of the file tells)"
            )
            self.warnings.extend([] if said in self.warnings else [said])
        return counts

    def _rebuilt(self, state: dict[str, Any]) -> foreign.Written | str:
        """The workspace's own file `state` with no copy of ours left (`.cache` deleted, caches off): the numbers
        of it that are ours, told arm by arm as an earlier copy's (`_earlier_copy`), or which arm is none of those
        and why ("": none can be told, as with no copy). That verdict is kept (kept_verdict): the file is then
        kept at every write, and the check, which reads the whole log, runs again only when it could change."""
        raw = interop.state_bytes(self.state_path)  # read once: what is told, and kept, is of these bytes
        if interop.read_state(self.state_path, raw) != state:  # (saved again since the caller read it)
            return ""
        if (kept := self._kept_verdict(raw)) is not None:
            return kept
        try:
            report = interop.read_import(self.state_path, self.library(), raw)
        except interop.InteropError:  # (no arm to tell, a bad number)
            if state.get("arms") == {} and isinstance(state.get("created"), str):  # (gptme pruned every arm)
                return foreign.Written({}, None, state["created"])  # (nothing of gptme's in it: its count kept)
            return ""
        found = self._earlier_copy(self.state_path, state, report)
        if isinstance(found, Untold):
            self._keep_verdict(raw, found)
        return found if isinstance(found, str) else foreign.written_of(found[0])

    def _verdict_path(self) -> Path:
        return self.state_dir / ".cache" / "bandit-state-kept"

    def _verdict_inputs(self) -> str | None:
        """What the check reads besides the file and the log (None: scores from outside the log, records joined:
        no verdict is kept); the file's path too (the log's increments events from the workspace's own file are
        told by it: `saved_last`, `saved_elsewhere`)."""
        rewards = self._reader.rewards
        if rewards.external:
            return None
        library = self.library()
        lessons = [lesson.id for lesson in library.lessons]
        outcomes = sorted((self._reader.outcomes or {}).items())
        own = str(self.state_path)
        return verdicts.inputs_digest(self.settings, outcomes, rewards.priority, lessons, library.roots, own)

    def _kept_verdict(self, raw: bytes) -> str | None:
        """The verdict kept for the file of bytes `raw`, when it still holds (`kept_verdict.still_holds`)."""
        if not raw or not self._reader.caches:
            return None
        where = self._verdict_path()
        try:
            verdict = verdicts.decode(
                read_opened(open_regular(where, os.O_RDONLY | os.O_NOFOLLOW), where, VERDICT_MAX_BYTES)
            )
        except (OSError, UnsafeFile, ValueError):
            return None
        if verdict.file != verdicts.file_digest(raw) or verdict.inputs != self._verdict_inputs():
            return None
        if not self._reader.vouches(verdict.end, verdict.vouch):
            return None
        if not verdicts.still_holds(verdict, self.data(), self._reader.index):
            return None
        return Untold(verdict.why, verdict.arm)

    def _keep_verdict(self, raw: bytes, why: Untold) -> None:
        """Keep the verdict `why` on the file of bytes `raw` and the log as read (best effort: a cache)."""
        inputs, read = self._verdict_inputs(), self._reader.vouch_read()
        if not self._reader.caches or inputs is None or read is None:
            return
        index, data = self._reader.index, self.data()
        verdict = verdicts.Verdict(
            verdicts.file_digest(raw),
            str(why),
            why.arm,
            inputs,
            read[0],
            read[1],
            index.lines,
            data.n_sessions,
            verdicts.event_counts(index),
        )
        with contextlib.suppress(OSError, StoreError):  # (a symbolic link in its place is refused, never written)
            atomic_write(self._verdict_path(), verdicts.encode(verdict))

    @staticmethod
    def _as_written(
        through: tuple[Any, Any, Any],
        late: LateGrades,
        i: int,
        row: int,
        counts: tuple[float, float, int, *tuple[int, ...]],
    ) -> bool:
        """Whether arm `i` of a file is as a write of ours left it right after session `row` (`through`: the fold
        through it under the grades now), or before sessions of the arm then pending were graded (`late`)."""
        if _same(through, i, counts):
            return True
        return late.explains(i, row, (float(through[0][i]), float(through[1][i]), int(through[2][i])), counts[:3])


def other_names(path: Path) -> OtherNames:
    """How the file at `path` stands to other paths the log's imports named (`OtherNames`): the same file by
    another name (a hard link, a bind mount); nothing there now. A path unreadable is another file."""

    def same(other: str) -> bool:
        try:
            return os.path.samefile(path, other)
        except (OSError, ValueError):
            return False

    def gone(other: str) -> bool:
        try:
            return not os.path.lexists(other)
        except ValueError:  # (a NUL in a logged path: no file can be there)
            return True

    return OtherNames(same, gone)


def _written_after(
    stamped: dict[str, tuple[int, str, int]], arms: dict[str, Any], created: str, unscored: Callable[[str, int], bool]
) -> int:
    """The latest session row a write of ours that left the file (its time `created`) came after, from the stamps
    it bears (`_stamped`: each key's first session at its stamp's time; -1: none). A stamp later than `created` is
    no such sign: a write never stamps an arm with a session logged after it, and gptme's bandit stamps an arm it
    updates with its clock's time, which a session of the log logged since (a hook logging gptme's session under
    that time, say) may bear exactly. Nor is one naming a session not scored when that write was (`unscored`): we
    stamp an arm with its latest graded session, and gptme's clock, behind ours, may stamp at or before `created`
    the time a session logged since bears. (A sign left out reads the arm against more of what we may have written:
    its update is then taken for one over ours, and the file kept, rather than made again and counted twice.)"""
    written = _moment(created)
    found = -1
    for key, (_, _, first) in stamped.items():
        entry = arms.get(key)
        stamp = _moment(entry.get("last_updated")) if isinstance(entry, dict) else None
        if (written is not None and stamp is not None and stamp > written) or unscored(created, first):
            continue
        found = max(found, first)
    return found


def _logged_stamps(exports: Exports) -> tuple[frozenset[tuple[str, str]], frozenset[str]]:
    """Per key, the stamps of gptme's the increments events of the log saw (`seen`, of any file: a stamp is gptme's
    clock to the microsecond), and the keys one saw without a stamp (`MadeAgain.fresh`)."""
    seen: set[tuple[str, str]] = set()
    unstamped: set[str] = set()
    for _, n, _ in exports.history:
        for key in n.arms:
            if key in n.stamps:
                seen.add((key, n.stamps[key]))
            else:
                unstamped.add(key)
    return frozenset(seen), frozenset(unstamped)


def _unscored_then(grades: Any, late: LateGrades) -> Callable[[str, int], bool]:
    """Whether a session row was first scored (`late.scored`) on a line after a grade event dated later than `created`
    (a grade's time is our clock's when it was logged, to the second, so that grade came after the write of that
    `created`): it had no score when that file was written. The grades are read when first asked (a stamp to tell)."""
    cut: list[int | None] = []

    def unscored(created: str, row: int) -> bool:
        if not cut:
            written = _moment(created)
            later = (line for line, grade in grades if written is not None and _after(grade.timestamp, written))
            cut.append(min(later, default=None))
        first = int(late.scored[row])
        return cut[0] is not None and first > cut[0]

    return unscored


def _after(text: object, moment: dt.datetime) -> bool:
    """Whether the time `text` (a logged one; None: none) is later than `moment`."""
    when = _moment(text)
    return when is not None and when > moment


def _moment(text: object) -> dt.datetime | None:
    """`text` as an aware time (a naive one read as UTC), or None when it is no time we read."""
    if not isinstance(written := gptme_time(text), str):
        return None
    return dt.datetime.fromisoformat(written)


def _rows_holding(items: tuple[str | None, ...], values: set[str]) -> list[int]:
    """The rows whose item is one of `values`, in row order. The items are tested against the set in C (a set
    intersection): no Python step per item when none is found (a foreign file, the usual case); when some are,
    one pass over the items (an earlier copy of our own file names a session in nearly every arm: locating
    each value by `tuple.index` cost a full pass per value, 1.8 s at 100k sessions and 1,000 arms)."""
    found = values.intersection(items)
    return [row for row, item in enumerate(items) if item in found] if found else []


def _readings(post: Any, late: LateGrades, i: int, bound: int) -> Callable[[], list[foreign.Counts3] | None]:
    """`_as_written_then`, read when asked."""
    return lambda: _as_written_then(post, late, i, bound)


def _as_written_then(post: Any, late: LateGrades, i: int, bound: int) -> list[foreign.Counts3] | None:
    """Every reading of what a write of ours put for arm `i` of the workspace's own file, with no copy of it left
    (for `MadeAgain.told`): the write came after session row `bound` (the latest a stamp of ours in the file names;
    -1: none does), so the arm held its sessions up to its last at or before `bound`, or up to any of its later
    ones, each under the grades then (`LateGrades.readings`: a regrade or a grade of a session pending then, logged
    since, this command's included). None: not known (decay set; more than MAX_READINGS such sessions; a prior of
    the lesson logged after session `bound`, an import's: the readings hold the prior in force now)."""
    data = post.data
    if post.settings.decay < 1.0 or np.any((data.prior_after.arm == i) & (data.prior_after.after > bound)):
        return None
    rows = np.unique(data.entry_session[data.entry_arm == i])
    later = rows[rows > bound]
    if len(later) > MAX_READINGS:
        return None
    first = rows[rows <= bound]
    found: list[foreign.Counts3] = []
    for row in [int(first[-1]) if len(first) else -1, *later.tolist()]:
        found.extend(late.readings(i, row, late.through(i, row)))
    return found


def _same(numbers: tuple[Any, Any, Any], i: int, counts: tuple[float, float, int, *tuple[int, ...]]) -> bool:
    """Whether arm `i` of the per-arm (alpha, beta, n) `numbers` is `counts`' alpha, beta and n (a file arm's)."""
    alpha, beta, n = (float(column[i]) for column in numbers)
    close = all(
        math.isclose(mine, theirs, rel_tol=1e-9, abs_tol=1e-9)
        for mine, theirs in ((alpha, counts[0]), (beta, counts[1]))
    )
    return close and int(n) == counts[2]
