"""The dashboard's one door to the engine: Workspace calls made thread-safe, answers as immutable views.

Workers run in threads and the Workspace caches what it has read, so every call goes
through one lock. The UI thread never calls the Workspace: it only reads the views.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from msgspec.structs import replace as struct_replace

from lesson_credit.core.library import lessons as lessons_mod
from lesson_credit.core.library.lessons import LessonProblem
from lesson_credit.tui.session_ids import GrowingIds
from lesson_credit.tui.source_views import (
    BROKEN,
    AnalysisView,
    HealthView,
    LessonRewards,
    LessonsView,
    Problems,
    SessionsView,
    SourceSnapshot,
)

if TYPE_CHECKING:  # imported where used: what a screen or the joint fit needs loads when first asked for,
    # the engine (numpy, the reader) once the first frame has listed the lessons (tests/tui/test_tui_first_frame.py)
    from lesson_credit.core.grading import GradeAppended
    from lesson_credit.core.health import Finding
    from lesson_credit.core.model.settings import CreditSettings
    from lesson_credit.core.reader import ReadProgress
    from lesson_credit.core.sim.simulate import SimulationReport
    from lesson_credit.core.views import Explanation, LessonRow
    from lesson_credit.core.workspace import Workspace as Workspace  # the type `tui.app.run` opens
    from lesson_credit.tui.effects_job import EffectsJob
    from lesson_credit.tui.what_if_view import WhatIfView

T = TypeVar("T")


@dataclass(frozen=True)
class Opening:
    """A workspace the dashboard opens itself, once its first frame lists the lessons: `root`'s
    lesson files are named without importing the engine; `open` is the CLI's (its errors end the
    dashboard with the CLI's line and exit code: `tui.app.run`)."""

    root: Path
    open: Callable[[], Workspace]
    allow_outside_library: bool = False


SOURCE_WAIT_S = 0.05  # how long a write holding the log's lock waits for the source before letting the lock go


class WorkspaceSource:
    """Serialises access to one Workspace and turns its answers into views for the screens."""

    def __init__(self, workspace: Workspace | Opening, *, seed: int = 0) -> None:
        self._workspace = None if isinstance(workspace, Opening) else workspace
        self._opening = workspace if isinstance(workspace, Opening) else None
        self.open_error: Exception | None = None  # why the Opening failed: the app ends with it
        self.seed = seed  # P(top-k) is a Monte Carlo estimate: a fixed seed keeps it steady
        self._lock = threading.RLock()
        self._lock_waits = threading.local()  # (`lock_waits`: per thread, the writer's)
        self._analysis: AnalysisView | None = None  # the last LOO computed, reused until the log changes
        self._seen_log: int | None = None  # the log version the last snapshot (or the first read) saw
        self.version = 0  # bumped once per write or poll that changed something (see `check`)
        self._effects: tuple[int, Mapping[str, float]] | None = None  # the last joint effects, by log version
        self._ids = GrowingIds()  # the session ids as of the last snapshot (extended, not rebuilt)
        self._job: EffectsJob | None = None  # the joint fit of a big log, in a child process (made at the first fit)
        self._fitting = threading.Lock()

    @property
    def workspace(self) -> Workspace:
        """The workspace, opened at the first call when given as an Opening (from a worker: the
        engine's import and the open take 0.2-0.4 s; a failed open is kept in `open_error`)."""
        if self._workspace is None:
            with self._lock:
                if self._workspace is None:
                    assert self._opening is not None
                    if self.open_error is not None:
                        raise self.open_error
                    try:
                        self._workspace = self._opening.open()
                    except Exception as exc:
                        self.open_error = exc
                        raise
        return self._workspace

    @property
    def name(self) -> str:
        return (self.workspace.root if self._opening is None else self._opening.root).name

    def read_progress(self) -> ReadProgress | None:
        """How far the read under way has come (None: none is). Not under the lock, which that read
        holds: a first read of a million sessions takes 15-25 s, and the title bar says how far."""
        return None if self._workspace is None else self._workspace.read_progress

    def check(self, *, wrote: bool = False) -> SourceSnapshot | None:
        """Read the log to its end; when it changed since the last check (or `wrote`: this dashboard
        just changed the workspace), bump the version once and return the new snapshot.

        The poll and the writer are the only callers: views never read the log themselves, so
        one change reaches the screens as one snapshot."""
        with self._lock:
            ws = self.workspace
            ws.refresh()
            first = self._seen_log is None
            if not wrote and (first or ws.version == self._seen_log):
                self._seen_log = ws.version  # the first read is what the screens load: no change
                return None
            self._seen_log = ws.version
            self.version += 1
            return self._snapshot_of(ws)

    def snapshot(self) -> SourceSnapshot:
        """The state as of now, at the current version (no bump): what the app starts from."""
        with self._lock:
            return self._snapshot_of(self._refreshed())

    def _snapshot_of(self, ws: Workspace) -> SourceSnapshot:
        """`ws` as read, at the current version (hold the lock): the one snapshot `check` and `snapshot` make."""
        data = ws.data()
        return SourceSnapshot(
            version=self.version,
            log_version=ws.version,
            session_ids=self._ids.first(data.n_sessions, ws.read_generation, ws.session_ids_between),
            base=data.base,
            problems=_problems(ws),
        )

    def _refreshed(self) -> Workspace:
        """The workspace as the last check left it (hold the lock). Only the very first read
        reads the log: later appends reach the views through `check` and its one snapshot."""
        ws = self.workspace
        if self._seen_log is None:
            ws.refresh()
            self._seen_log = ws.version
        return ws

    def settings(self) -> CreditSettings:
        with self._lock:
            return self.workspace.settings

    def call(self, read: Callable[[Workspace], T]) -> T:
        """`read(workspace)` under the lock, on the workspace as the last check left it (from a worker:
        the read models of new screens live in their own modules, e.g. lesson_credit.tui.records_views)."""
        with self._lock:
            return read(self._refreshed())

    def problems(self) -> Problems:
        with self._lock:
            return _problems(self.workspace)

    def lesson_names(self) -> tuple[str, ...]:
        """The library's lesson ids (a file that could not be loaded too), without reading the log:
        what the first frame shows while the first read (seconds at a million sessions) gives the numbers.
        Before an Opening is opened: the ids of its lesson files, none read."""
        if self._opening is not None and self._workspace is None:
            return tuple(lessons_mod.lesson_file_ids(self._opening.root, self._opening.allow_outside_library))
        with self._lock:
            library = self.workspace.library()
        broken = (lesson_id for lesson_id in _problems_by_lesson(library.problems) if lesson_id.endswith(".md"))
        return tuple(sorted({*library.by_id(), *broken}))

    def lessons_view(self) -> LessonsView:
        """Until scipy is loaded (the first paint), the rows come without their 95% intervals
        (NaN, `LessonsView.intervals_missing`): importing it costs ~150 ms that the first rows need
        not wait for; the screen adds them with `with_intervals` once the rows are shown."""
        from lesson_credit.core.model import beta as beta_mod
        from lesson_credit.core.retire import hidden_rows

        intervals = beta_mod.loaded()
        with self._lock:
            ws = self._refreshed()
            table = ws.lesson_table(intervals=intervals)
            library = ws.library()
            problems = _problems_by_lesson(library.problems)
            rows = list(table.rows)
            known = {row.path for row in rows}
            settings = table.settings
            for lesson_id in problems:
                if lesson_id not in known and lesson_id.endswith(".md"):
                    rows.append(_placeholder_row(lesson_id, settings, intervals))
            effects = self._effects if self._effects is not None and self._effects[0] == ws.version else None
            return LessonsView(
                version=ws.version,
                table=table,
                rows=tuple(rows),
                usage=ws.lesson_usage(),
                p_top_k=None,
                k=ws.config.k,
                lessons=library.by_id(),
                problems=problems,
                retired=hidden_rows(ws, rows),
                effects=None if effects is None else effects[1],
                effects_of=None if effects is None else effects[0],
                policy=ws.policy,
            )

    @staticmethod
    def with_intervals(view: LessonsView) -> LessonsView:
        """The view with every row's 95% interval computed (imports scipy.special the first time:
        call it from a worker; the import does not hold the event loop, measured: < 10 ms stalls)."""
        if not view.intervals_missing:
            return view
        import numpy as np

        from lesson_credit.core.model import beta as beta_mod

        alpha = np.array([row.alpha for row in view.rows], dtype=np.float64)
        beta = np.array([row.beta for row in view.rows], dtype=np.float64)
        low, high = beta_mod.interval(alpha, beta)
        by_path = {
            row.path: struct_replace(row, ci_low=lo, ci_high=hi)
            for row, lo, hi in zip(view.rows, low.tolist(), high.tolist(), strict=True)
        }
        table = struct_replace(view.table, rows=tuple(by_path.get(row.path, row) for row in view.table.rows))
        return replace(view, table=table, rows=tuple(by_path[row.path] for row in view.rows))

    def p_top_k(self) -> tuple[int, Mapping[str, float]]:
        """(log version, each active lesson's probability of a top-k Thompson draw). A Monte Carlo
        estimate (0.3-0.8 s at 3,000 lessons), asked for after the Lessons table is shown; its draws
        run outside the lock: a live update's read (`check`) does not wait for them. Under the joint
        policy a big log's posterior is fitted in the joint fit's child (`effects_job.p_top_k_later`)."""
        from lesson_credit.tui import effects_job

        with self._lock:
            ws = self._refreshed()
            version, draw = ws.version, effects_job.p_top_k_later(ws, self.seed)
            job = self._effects_job()
        return version, draw(job)

    def known_effects(self) -> tuple[int, Mapping[str, float]] | None:
        """(log version, the joint effects) when they are at hand for the log as read: fitted by
        this dashboard, or saved by the last fit of this log version (none: `effects` fits)."""
        with self._lock:
            ws = self._refreshed()
            if self._effects is None or self._effects[0] != ws.version:
                saved = ws.saved_effects()
                self._effects = None if saved is None else (ws.version, saved)
            return self._effects

    def effects(self) -> tuple[int, Mapping[str, float]]:
        """(log version, each lesson's joint effect estimate): one regression over the log, asked for
        after the Lessons table is shown, fitted outside the lock (`effects_job.fit_later`: a big log
        in a child process). A fit that read a newer log than the version asked for is shown until the next."""
        with self._fitting:  # one fit at a time: callers that waited for it mostly find their answer known
            if (known := self.known_effects()) is not None:
                return known
            from lesson_credit.tui import effects_job

            with self._lock:
                ws = self._refreshed()
                version, (fit, here) = ws.version, effects_job.fit_later(ws, self.seed)
                job = self._effects_job()
            effects = fit(job)
            with self._lock:
                if here and self.workspace.version == version:
                    self.workspace.remember_effects(effects)  # (a child process saves its own)
                self._effects = (version, effects)
            return version, effects

    def _effects_job(self) -> EffectsJob:
        """The joint fits' child process runner (under the lock; made at the first fit)."""
        from lesson_credit.tui import effects_job

        if self._job is None:
            self._job = effects_job.EffectsJob()
        return self._job

    def close(self) -> None:
        """The dashboard is closing: end a fit running in a child process."""
        with self._lock:
            job = self._job
        if job is not None:
            job.stop()

    def sessions_view(self) -> SessionsView:
        """The session table as columns; the search text and reward series are derived outside the lock
        (the table is a snapshot: later appends do not change it)."""
        from lesson_credit.tui.series import reward_series
        from lesson_credit.tui.session_search import SessionSearch

        with self._lock:
            ws = self._refreshed()
            table = ws.session_table()
            problems = tuple(ws.log_problems())
            version, read_at = ws.version, self.version
            data = ws.data()
            entries = (data.arm_ids, data.entry_arm, data.entry_session)
            words = {table.session_ids[row]: word for row, word in ws.outcome_words().items()}
        troubled = frozenset(p.session_id for p in problems if p.session_id is not None)
        return SessionsView(
            version=version,
            read_at=read_at,
            table=table,
            log_problems=problems,
            rewards=reward_series(table.base),
            search=SessionSearch.build(table),
            troubled=troubled,
            lesson_entries=entries,
            words=words,
        )

    def explain(self, session_id: str, draft: float | None = None, *, with_journal: bool = True) -> Explanation:
        with self._lock:
            return self.workspace.explain(session_id, base_reward=draft, with_journal=with_journal)

    def append_grade(
        self,
        session_id: str,
        reward: float | None,
        *,
        grader: str,
        note: str | None = None,
        expect_line: int | None = None,
        outcome: str | None = None,
        seen_line: int | None = None,
    ) -> GradeAppended:
        """Append a grade (None: a retraction) under the log lock: the workspace's one writer of grades
        (Workspace.append_grade, its checks `expect_line` and `seen_line`), as the CLI's; `outcome`: the gptme word
        it was typed as, kept beside it."""
        with self._writing() as ws:
            return ws.append_grade(
                session_id,
                reward,
                grader=grader,
                note=note,
                expect_line=expect_line,
                outcome=outcome,
                seen_line=seen_line,
            )

    def append_undo(
        self, session_id: str, *, grader: str, expect_line: int | None = None, line: int | None = None
    ) -> GradeAppended:
        """`grader` undoes their latest grade on the session under the log lock (Workspace.append_undo, the
        CLI's undo): GradeConflict unless it is the one at `line` and `expect_line` the latest grade event
        (None: no check); NothingToUndo when they have none left."""
        with self._writing() as ws:
            return ws.append_undo(session_id, grader=grader, expect_line=expect_line, line=line)

    @contextlib.contextmanager
    def _writing(self) -> Iterator[Workspace]:
        """The log's writers' lock and this source's, never one held while waiting long for the other: a
        write that waits for another process's lock (up to $LESSON_CREDIT_LOCK_TIMEOUT) holds no view
        back, and a long read of this dashboard's (a first read of a big log, LOO) holds no other
        writer back (the log's lock is re-entered by the workspace's write, in this thread). When another
        writer holds the log's lock, what `lock_waits` set in this thread is called before the wait for it."""
        ws = self.workspace
        while True:
            with _log_lock(ws, getattr(self._lock_waits, "call", None)):
                if self._lock.acquire(timeout=SOURCE_WAIT_S):  # a poll's check holds it for a moment
                    try:
                        yield ws
                        return
                    finally:
                        self._lock.release()
            with self._lock:  # a long read: wait for it with the log's lock let go, then again
                pass

    def what_if(self, settings: CreditSettings, priority: tuple[str, ...] | None = None) -> WhatIfView:
        """Every lesson now and under `settings` and the reward `priority` (None: the saved one)."""
        from lesson_credit.core.retire import hidden_rows
        from lesson_credit.tui.what_if_view import what_if_view

        with self._lock:
            ws = self._refreshed()
            saved = ws.config.reward_priority
            priority = priority or saved
            current = ws.lesson_table()
            proposed = ws.lesson_table(settings, None if priority == saved else ws.priority_base(priority))
            hidden = hidden_rows(ws, proposed.rows)
        return what_if_view(current, proposed, settings, hidden, self.policy(), (saved, priority))

    def policy(self) -> str:
        """The selection policy in force."""
        with self._lock:
            return self.workspace.policy

    def save_settings(
        self, settings: CreditSettings, policy: str | None = None, priority: tuple[str, ...] | None = None
    ) -> tuple[str, ...]:
        """The settings, the selection policy and the reward priority as the workspace's; what could not
        be done besides (bandit-state.json kept or not written: a warning each)."""
        with self._writing() as ws:
            said = len(ws.warnings)
            ws.save_settings(settings, policy)
            if priority is not None and priority != ws.config.reward_priority:
                ws.replay(settings.strategy, settings.floor, decay=settings.decay, priority=priority, write=True)
            return tuple(ws.warnings[said:])

    # ---------------------------------------------------------------- the event store

    @contextlib.contextmanager
    def lock_waits(self, call: Callable[[], object]) -> Iterator[None]:
        """Within the block, a write of this thread's that finds the log's lock held by another writer calls `call`
        as its wait for it starts (the dashboard's writer: the title bar says why the write waits)."""
        self._lock_waits.call = call
        try:
            yield
        finally:
            self._lock_waits.call = None

    @property
    def root(self) -> Path:
        """The workspace's folder."""
        return self.workspace.root

    @property
    def store_name(self) -> str:
        """The event store as problems name it (the log file's name, or the database's)."""
        return self.workspace.log.name

    @property
    def follows(self) -> bool:
        """The store's `wait` follows other writers' commits (a database: it looks at the position
        every 0.1 s on a connection of its own); else the app polls the log."""
        from lesson_credit.core.log.stores import is_local

        return not is_local(self.workspace.log)

    def prepare_writes(self) -> None:
        """Import what an append needs now, so the first grade commits without that wait."""
        from lesson_credit.core.log.stores import prepare

        prepare(self.workspace.log)

    def wait_for_commit(self, seen: int, timeout: float) -> int:
        """The store's end once it is past `seen`, or after `timeout` seconds (takes no lock: it waits)."""
        return self.workspace.log.wait(seen, timeout)

    # ---------------------------------------------------------------- analysis, health, simulation

    def analysis(self, *, write: bool = False) -> AnalysisView:
        """Leave-one-out lifts; loo-results.json is written only with `write`.

        LOO reads journals (the broad-keyword flag), so a view is reused until the log changes.
        """
        with self._lock:
            ws = self._refreshed()
            cached = self._analysis
            if not write and cached is not None and cached.version == ws.version:
                return replace(cached, written=None)
            import numpy as np

            from lesson_credit.core.analysis.limits import MIN_WITH, MIN_WITHOUT

            found, _ = ws.loo_run(min_with=MIN_WITH, min_without=MIN_WITHOUT, write=write)
            data = ws.data()
            graded = int(np.count_nonzero(~np.isnan(data.base)))
            view = AnalysisView(
                ws.version,
                tuple(found),
                graded,
                MIN_WITH,
                MIN_WITHOUT,
                sessions=data.n_sessions,
            )
            self._analysis = view
            if write:
                return replace(view, written=(ws.state_dir / "loo-results.json").relative_to(ws.root).as_posix())
            return view

    def lesson_rewards(self, lesson_id: str) -> LessonRewards:
        """A lesson's LOO numbers with the reward distributions they compare, from one version of the log."""
        from lesson_credit.tui.series import reward_histogram

        with self._lock:
            view = self.analysis()
            from lesson_credit.core.analysis.effects import reward_split

            with_lesson, without_lesson = reward_split(self.workspace.analysis_data(), lesson_id)
        return LessonRewards(
            view.version,
            view.result(lesson_id),
            reward_histogram(with_lesson.tolist()),
            reward_histogram(without_lesson.tolist()),
        )

    def health(self, *, reload_library: bool = False) -> HealthView:
        """The lint findings, with paths shown relative to the workspace (its name is in the header).

        `reload_library` re-reads the lesson files first (the Workspace keeps the library it read),
        so an operator who fixed a lesson sees the finding go away.
        """
        with self._lock:
            ws = self._refreshed()
            changed = False
            if reload_library:
                before = ws.library()
                changed = ws.library(reload=True) != before
                if changed:
                    self._analysis = None  # its flags depend on which lessons exist
            from lesson_credit.core.health import lint

            findings = lint(ws)
            version, read_at = ws.version, self.version
            lessons = frozenset([*ws.library().by_id(), *ws.lesson_usage()])
        prefix = str(ws.root) + "/"
        relative = tuple(_relative_finding(f, prefix) for f in findings)
        return HealthView(version, relative, changed, read_at, lessons)

    def simulate(
        self,
        scenario_name: str,
        seeds: int,
        progress: Callable[[int, int], None] | None = None,
        partial: Callable[[SimulationReport], None] | None = None,
    ) -> SimulationReport:
        """Run a named scenario over seeds 0..seeds-1 (`partial`: the report so far, after each seed).
        Touches no workspace state, so takes no lock."""
        from lesson_credit.core.sim.simulate import run_simulation, scenario

        return run_simulation(scenario(scenario_name), seeds, progress=progress, partial=partial)


def _problems(ws: Workspace) -> Problems:
    log, lessons = tuple(ws.log_problems()), tuple(ws.lesson_problems())
    return Problems(log, lessons, ws.log_missing(), ws.config_problem, ws.records_missing())


def _problems_by_lesson(problems: tuple[LessonProblem, ...]) -> dict[str, str]:
    """Lesson files that could not be loaded, keyed by the lesson id the file would have had (its path
    when it has none); an overridden copy of a lesson that loaded is not that lesson's problem."""
    broken = (problem for problem in problems if problem.kind == lessons_mod.BROKEN)
    return {problem.lesson_id or problem.path: problem.reason for problem in broken}


def _relative_finding(finding: Finding, prefix: str) -> Finding:
    def strip(text: str) -> str:
        return text.replace(prefix, "")

    return replace(
        finding,
        message=strip(finding.message),
        advice=strip(finding.advice),
        items=tuple(strip(item) for item in finding.items),
    )


def _placeholder_row(lesson_id: str, settings: CreditSettings, intervals: bool = True) -> LessonRow:
    """A row for a lesson file that failed to load and has no evidence: the prior, status broken."""
    import numpy as np

    from lesson_credit.core.model import beta as beta_mod
    from lesson_credit.core.views import LessonRow

    a, b = settings.prior_alpha, settings.prior_beta
    if intervals:
        low, high = beta_mod.interval(np.array([a]), np.array([b]))
    else:
        low = high = np.array([np.nan])
    return LessonRow(
        path=lesson_id,
        title=lesson_id,
        category=lesson_id.split("/")[0] if "/" in lesson_id else "",
        status=BROKEN,
        n=0,
        alpha=a,
        beta=b,
        mean=a / (a + b),
        ci_low=float(low[0]),
        ci_high=float(high[0]),
        rewarded=0,
        last_session=None,
        last_credit=None,
    )


def _log_lock(ws: Workspace, waiting: Callable[[], object] | None) -> contextlib.ExitStack:
    """The log's writers' lock, held until the stack returned is closed: tried once, and when another writer holds
    it, `waiting` is called before the wait for it (up to $LESSON_CREDIT_LOCK_TIMEOUT, then LockHeld)."""
    from lesson_credit.core.base.files import LockHeld  # the engine's: not before the first frame

    held = contextlib.ExitStack()
    if waiting is None:
        held.enter_context(ws.log.locked())
        return held
    try:
        held.enter_context(ws.log.locked(timeout=0))
    except LockHeld:
        waiting()
        held.enter_context(ws.log.locked())
    return held
