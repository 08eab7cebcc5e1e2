"""An arm of an earlier copy of our bandit-state.json written before some of the log's evidence of it.

`fold_through` (core/bandit/fold.py) gives an arm's numbers right after the session its `last_updated` names,
under the grades now, with every increment. A write made before a later grade of one of those sessions (a
session recorded pending and graded since, the usual order when a grader runs after the session; a regrade;
an undo) left the arm under the grades before that grade event; one made before gptme's bandit's update of the
workspace's own file was logged (increments: the next write logs it) left it without those increments. Those
numbers are compared too: the arm's sessions scored as before each such grade event (the latest MAX_CUTS), with
and without its increments when every one was logged after the session.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from functools import cached_property
from typing import Any

import numpy as np
import numpy.typing as npt

from lesson_credit.core.bandit.fold import Posterior
from lesson_credit.core.bandit.increments import Counts
from lesson_credit.core.bandit.interop import ImportedArm
from lesson_credit.core.bandit.stamps import gptme_time, same_time
from lesson_credit.core.base.ids import normalize_id, one_form
from lesson_credit.core.log import scoring
from lesson_credit.core.log.events import FileNumbers
from lesson_credit.core.log.evidence import scored_by_log, source_inputs
from lesson_credit.core.log.index import LogIndex
from lesson_credit.core.log.snapshot import FloatArray
from lesson_credit.core.model import credit as credit_mod
from lesson_credit.core.model.sources import RewardInputs

Numbers = tuple[float, float, int]
COPY_TIME = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z")  # a `created` we write (their order: as text)
OURS_EVER = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{6})?Z")  # any we wrote (to the second: before copies)
MAX_CUTS = 32  # the latest grade events after a copy's session it is compared before (each a scoring of the log)
MAX_SCORINGS = 64  # scorings of the log for one file, whatever its arms: past that, an arm is not compared so


def first_scored(index: LogIndex, n_sessions: int) -> npt.NDArray[np.int64]:
    """Per session row, the line from which it had a score: its record's line when the record holds one (a
    reward, or an outcome), else the line of its first grade event (whatever that grade said); -1: never scored."""
    never = np.iinfo(np.int64).max
    found = np.full(n_sessions, never, dtype=np.int64)
    for position, (line, grade) in enumerate(index.grades):
        row = index.grade_rows[position]
        if row < 0:
            found_row = index.row_of(grade.session_id)  # (a grade read before its session)
            row = -1 if found_row is None else found_row
        if 0 <= row < n_sessions:
            found[row] = min(int(found[row]), line)
    own = ~np.isnan(index.session_base.view()[:n_sessions])
    own[[row for row, _ in index.outcome_labels.items() if row < n_sessions]] = True
    found[own] = index.session_lines.view()[:n_sessions][own]
    found[found == never] = -1
    return found


class LateGrades:
    """The evidence of a log logged after an earlier copy of our file was written (grades, increments), for
    `explains`; what it reads of the log is read once, when first asked."""

    def __init__(
        self, post: Posterior, index: LogIndex, outcomes: Mapping[str, float] | None, rewards: RewardInputs
    ) -> None:
        self.post, self.index, self.outcomes, self.rewards = post, index, outcomes or {}, rewards
        self._bases: dict[int, FloatArray] = {}
        self._once: dict[int, npt.NDArray[np.bool_]] = {}  # per line: the sessions scored once above it

    @cached_property
    def scored(self) -> npt.NDArray[np.int64]:
        return first_scored(self.index, self.post.data.n_sessions)

    @cached_property
    def _grades(self) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
        """Each grade event's line and the row it grades (-1: none)."""
        index = self.index
        lines = np.array([line for line, _ in index.grades], dtype=np.int64)
        rows = np.array(index.grade_rows, dtype=np.int64)
        for position in np.flatnonzero(rows < 0).tolist():  # (a grade read before its session)
            found = index.row_of(index.grades[position][1].session_id)
            rows[position] = -1 if found is None else found
        return lines, rows

    def base_before(self, line: int) -> FloatArray | None:
        """Each session's score in force before line `line` of the log: under the grade events above it, the
        reward settings now. None past MAX_SCORINGS lines asked."""
        if line not in self._bases:
            if len(self._bases) >= MAX_SCORINGS:
                return None
            index, n = self.index, self.post.data.n_sessions
            lines, rows = self._grades
            before = lines < line
            inputs = source_inputs(
                ((row, label) for row, label in index.outcome_labels.items() if row < n),
                self.outcomes,
                self.rewards.external,
                (index.session_base.view()[:n], index.session_source.view()[:n]),
                (
                    rows[before],
                    np.array(index.grade_base, dtype=np.float64)[before],
                    np.array(index.grade_source, dtype=np.int8)[before],
                ),
            )
            self._bases[line] = scoring.scores(inputs, self.rewards)[0]
            self._once[line] = scored_by_log(inputs, n)
        return self._bases[line]

    def sessions_before(self, line: int) -> int | None:
        """gptme's `total_sessions` as the log said it before line `line`: its sessions recorded above that line
        and scored there, or scored there once (a grade taken back), and those other tools counted (a session or
        grade event at `line` counts none). None past MAX_SCORINGS lines asked."""
        base = self.base_before(line)
        if base is None:
            return None
        n = self.post.data.n_sessions
        recorded = self.index.session_lines.view()[:n] < line
        once = ~np.isnan(base) | self._once[line][:n]
        return int(np.count_nonzero(recorded & once)) + self.post.data.counted_sessions

    def explains(self, arm: int, row: int, through: Numbers, counts: Numbers) -> bool:
        """Whether `counts` (an arm's alpha, beta, n in a file) are arm `arm`'s numbers right after session `row`
        as a write made before later evidence left them (`readings`)."""
        return any(_close(numbers, counts) for numbers in self.readings(arm, row, through))

    def readings(self, arm: int, row: int, through: Numbers) -> list[Numbers]:
        """Arm `arm`'s numbers right after session `row` (-1: before any session of it) as a write made then left
        them: `through` (under the grades now) with the arm's sessions up to `row` under the grades before a grade
        event of one of them logged after `row` had its score (the latest MAX_CUTS such events), and without the
        arm's increments when every one was logged after `row`."""
        found: list[Numbers] = []
        since = int(self.scored[row]) if row >= 0 else -1
        if row >= 0 and since < 0:
            return found
        post, data = self.post, self.post.data
        entries = np.flatnonzero((data.entry_arm == arm) & (data.entry_session <= row))  # the arm's, up to `row`
        sessions = np.unique(data.entry_session[entries])
        lines, rows = self._grades
        cuts = np.unique(lines[np.isin(rows, sessions) & (lines > since)])[::-1][:MAX_CUTS].tolist()
        now = self._sums(entries, post.base)
        for alpha, beta, n in (through, *self._before_increments(arm, row, through)):
            bases = [base for base in map(self.base_before, cuts) if base is not None]
            found.append((alpha, beta, n))
            found.extend(
                (alpha - now[0] + a, beta - now[1] + b, n - now[2] + k)
                for a, b, k in (self._sums(entries, base) for base in bases)
            )
        return found

    def through(self, arm: int, row: int) -> Numbers:
        """Arm `arm`'s (alpha, beta, n) right after session `row` (-1: before any of its sessions) under the grades
        and settings now, over its priors and every increment (`fold.fold_through` for one arm; no decay)."""
        post, data, settings = self.post, self.post.data, self.post.settings
        alpha, beta, n = self._sums(np.flatnonzero((data.entry_arm == arm) & (data.entry_session <= row)), post.base)
        start_alpha = settings.prior_alpha if np.isnan(data.prior_alpha[arm]) else float(data.prior_alpha[arm])
        start_beta = settings.prior_beta if np.isnan(data.prior_beta[arm]) else float(data.prior_beta[arm])
        return (
            start_alpha + float(data.added_alpha[arm]) + alpha,
            start_beta + float(data.added_beta[arm]) + beta,
            int(data.prior_n[arm]) + n,
        )

    def _sums(self, entries: npt.NDArray[np.intp], base: FloatArray) -> Numbers:
        """What the graded sessions of `entries` add to their arm under the per-session rewards `base`."""
        data, settings = self.post.data, self.post.settings
        rewards = base[data.entry_session[entries]]
        graded = ~np.isnan(rewards)
        w = credit_mod.weight(data.entry_salience[entries][graded], settings.floor)
        d_alpha, d_beta = credit_mod.credit(rewards[graded], w, settings.strategy)
        return float(d_alpha.sum()), float(d_beta.sum()), int(graded.sum())

    def _before_increments(self, arm: int, row: int, through: Numbers) -> list[Numbers]:
        """`through` without the arm's increments, when every increments event naming it was logged after session
        `row` (their selections are known only summed); none otherwise."""
        steps = self.post.data.added_after
        mine = steps.arm == arm
        if not np.any(mine) or np.any(steps.after[mine] <= row):
            return []
        increments = self.index.increments.items()
        selections = sum(n for lesson, (_, _, n, _) in increments if self.index.find_arm(lesson) == arm)
        return [
            (
                float(through[0]) - float(steps.alpha[mine].sum()),
                float(through[1]) - float(steps.beta[mine].sum()),
                int(through[2]) - selections,
            )
        ]


def _close(mine: Numbers, file: Numbers) -> bool:
    return (
        all(math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-9) for a, b in zip(mine[:2], file[:2], strict=True))
        and mine[2] == file[2]
    )


def log_arms(arms: Iterable[ImportedArm], log_ids: Iterable[str]) -> dict[str, str]:
    """Per arm of an earlier copy of our file (by its id there), the lesson (one Unicode form) its numbers are
    told against: the log's arm of the id the file names it by, when the log has one (we wrote it so), else the
    library's lesson the import maps it to. A lesson moved in the library since (`tools/git.md` now
    `x/tools/git.md`, matched by its path's end) keeps the log's evidence under the id we wrote: telling the arm
    against the moved lesson, which has none, took our numbers for gptme's new arm, counted a second time."""
    logged = {one_form(arm) for arm in log_ids}
    told = {}
    for arm in arms:
        own = one_form(normalize_id(arm.source_id.replace("\\", "/")))
        told[arm.source_id] = own if own in logged else one_form(arm.lesson_id)
    return told


def saved_last(
    saves: Mapping[tuple[str, str], tuple[int, FileNumbers]], own: str, key: str, created: str
) -> Counts | None:
    """The numbers of `key` that the latest increments event logged from the workspace's own file (at `own`) saw
    there, when a file of ours whose `created` is `created` was written after every file such an event grew from
    (ours are written in the order of their `created`, to the microsecond). What a write after that event put
    under `key`, for an arm whose only evidence is such events, as long as the log's numbers are still those.
    None: no such event, or a file written before one of theirs."""
    found = [(line, numbers) for (_, path), (line, numbers) in saves.items() if path == own and key in numbers.arms]
    if not found or not COPY_TIME.fullmatch(created):
        return None
    if any(not COPY_TIME.fullmatch(numbers.created) or numbers.created >= created for _, numbers in found):
        return None
    return max(found, key=lambda item: item[0])[1].arms[key]


def stamped_now(post: Posterior, times: Callable[[], Sequence[str | None]], arm: int, entry: Mapping[str, Any]) -> bool:
    """Whether the file's arm `entry`, at arm `arm`'s numbers in the log now, bears the stamp a write of ours gives
    it now (`interop.last_credited`): the time of the latest graded session crediting it (`stamps.same_time`: as we
    write it, or as logged, as versions before wrote it). An arm no such session with a time credits (a prior's, an
    increments event's, a session whose time is not one we read), or one without a stamp, may bear any. gptme's
    bandit restamps an arm it updates: an update of ours the log's sessions since matched (a full reward each side)
    is not ours as we wrote it."""
    row, kept = int(post.last_session[arm]), entry.get("last_updated")
    stamp = times()[row] if row >= 0 and isinstance(kept, str) else None
    return gptme_time(stamp) is None or same_time(kept, stamp)


def started_elsewhere(post: Posterior, created: str, held: set[str]) -> tuple[int, npt.NDArray[np.bool_]] | None:
    """For a file with no copy of ours whose `created` (`created`) no write of ours gives (gptme's bandit's own, say:
    it starts a file it does not find with one of its own) and which holds arms of the lessons `held` (one Unicode
    form): the first session row `f` naming a lesson the file lacks, and per arm of the log whether it has no
    evidence before `f` (no session before `f` names it; no prior or increments event logged before `f` moves it).

    A file of ours holds an arm for every lesson a session of the log named when it was written (pending, retired,
    gone from the library: all). So, if ours, it was written before row `f`, and an arm with no evidence before `f`
    was not in it: that arm is gptme's from Beta(1, 1), whichever wrote the file. None: no lesson the log's
    sessions name is missing, or the `created` is one of ours: gptme keeps a file's `created`, and its `prune` drops
    an arm (never selected, or not updated in 90 days), so a file of ours may lack an arm it had."""
    if OURS_EVER.fullmatch(created):
        return None
    data, never = post.data, np.iinfo(np.int64).max
    first = np.full(len(post.arm_ids), never, dtype=np.int64)
    np.minimum.at(first, data.entry_arm, data.entry_session)
    missing = [i for i, arm in enumerate(post.arm_ids) if first[i] != never and one_form(arm) not in held]
    if not missing:
        return None
    row = int(first[missing].min())
    fresh = first >= row
    for steps in (data.prior_after, data.added_after):
        fresh[steps.arm[steps.after <= row]] = False
    return row, fresh
