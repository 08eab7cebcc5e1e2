"""The one service object the CLI and the dashboard use: a workspace's lessons, log and posteriors.

A facade over `lesson_credit.core.reader` (reads only what was appended since the last read; the snapshot
and its folds), `core.views` (what it returns), `core.bandit.select` and `core.selection_draw` (a
`select` and its dropout trial), `core.attribution` (which lessons help), `core.commands` (the
events a write appends under the lock, checked against the log as it is then; `bandit-state.json`
is rewritten after each) and `lesson_credit.core.bandit.interop` (gptme's state file).
"""

from __future__ import annotations

import contextlib
import datetime as dt
import functools
import os
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Concatenate, ParamSpec, TypeVar, cast

import numpy as np

from lesson_credit.core import commands, grading, views
from lesson_credit.core.analysis.limits import BROAD_KEYWORD_SHARE, MIN_WITH, MIN_WITHOUT
from lesson_credit.core.bandit import interop
from lesson_credit.core.bandit import select as select_mod
from lesson_credit.core.bandit.config import PENDING_OUTCOME, Config, ConfigError, load_config, save_config
from lesson_credit.core.bandit.fold import Posterior, fold
from lesson_credit.core.bandit.interop import ImportReport
from lesson_credit.core.bandit.select import Selection
from lesson_credit.core.base.clock import iso, utc_now
from lesson_credit.core.base.errors import WorkspaceError
from lesson_credit.core.base.files import WriteGuard, atomic_write, set_aside_notices
from lesson_credit.core.base.gc_pause import gc_paused
from lesson_credit.core.base.safe_read import STATE_MAX_BYTES, UnsafeFile, read_regular
from lesson_credit.core.grading import GradeAppended
from lesson_credit.core.joined_records import JoinedRecords, SessionRecords, trajectory_for
from lesson_credit.core.library.journals import outside_library_allowed, read_journal
from lesson_credit.core.library.lessons import LessonProblem, Library, load_library
from lesson_credit.core.log.columns import ids_starting
from lesson_credit.core.log.events import SelectionEvent, encode
from lesson_credit.core.log.eventstore import EventStore, JsonlStore
from lesson_credit.core.log.sections import CacheDamaged
from lesson_credit.core.log.snapshot import FoldData
from lesson_credit.core.log.store import LogProblem, StoreError
from lesson_credit.core.log.stores import record_lock
from lesson_credit.core.model.settings import CreditSettings
from lesson_credit.core.model.sources import HUMAN, OUTCOME, SOURCES, RewardInputs, check_priority
from lesson_credit.core.reader import LogReader, ReadProgress
from lesson_credit.core.sessions.record_file import Record
from lesson_credit.core.views import (
    Explanation,
    GradeRecord,
    LessonUsage,
    PosteriorTable,
    SessionSummary,
    SessionTable,
    SourceScore,
)

if TYPE_CHECKING:  # imported where used: the analysis and the joint fit are not needed to show posteriors
    from lesson_credit.core.analysis.claims import Fitted
    from lesson_credit.core.analysis.effects import Candidacy, LooResult
    from lesson_credit.core.analysis.joint import Design, JointFit
    from lesson_credit.core.analysis.joint_posterior import JointPosterior
    from lesson_credit.core.analysis.over_time import OverTime
    from lesson_credit.core.sessions.trajectory import Trajectory

STATE_DIR = Path("state") / "lesson-thompson"
MATCHES_SHOWN = 5  # ids an ambiguous prefix's message names


_P = ParamSpec("_P")
_R = TypeVar("_R")


def rereads(method: Callable[Concatenate[Workspace, _P], _R]) -> Callable[Concatenate[Workspace, _P], _R]:
    """Run `method` again, once, from a fresh read of the log when it found a section of the
    parsed-log cache damaged (sections are checked when first read: core/log/columns.py). A write
    retried this way has not appended yet: after its append, `_after_write` reads again itself."""

    @functools.wraps(method)
    def run(self: Workspace, *args: _P.args, **kwargs: _P.kwargs) -> _R:
        try:
            return method(self, *args, **kwargs)
        except CacheDamaged as exc:
            if self._rereading:
                raise
            self._reader.drop(str(exc))
            self._rereading = True
            try:
                return method(self, *args, **kwargs)
            finally:
                self._rereading = False

    return cast("Callable[Concatenate[Workspace, _P], _R]", run)


class Workspace:
    """A workspace folder: lessons, the event log, settings. See docs/format.md §1."""

    def __init__(
        self,
        root: Path | str = ".",
        *,
        clock: Callable[[], dt.datetime] = utc_now,
        use_cache: bool = True,
        allow_outside_journals: bool = False,
        allow_outside_library: bool | None = None,
        cache_threshold: int | None = None,
        store: EventStore | None = None,
        allow_outside_writes: bool | None = None,
    ) -> None:
        """`allow_outside_writes`: let writes follow symlinks out of the workspace (default: only
        with LESSON_CREDIT_WRITE_OUTSIDE=1; see core.base.files)."""
        self.root = Path(root).resolve()
        self.state_dir = self.root / STATE_DIR
        self.guard = WriteGuard.of(self.root, allow_outside_writes)
        # the event log: the workspace's JSONL file unless another store is given (core/eventstore.py)
        self.log: EventStore = JsonlStore(self.state_dir / "sessions.jsonl", self.guard) if store is None else store
        self.state_path = self.state_dir / "bandit-state.json"
        self.config_path = self.state_dir / "config.toml"
        self.clock = clock
        self.allow_outside_journals = allow_outside_journals
        self.allow_outside_library = outside_library_allowed(allow_outside_library, allow_outside_journals)
        self._warnings: list[str] = []  # see `warnings`
        try:
            self.config: Config = load_config(self.config_path)
        except ConfigError as exc:
            raise WorkspaceError(str(exc)) from None
        self._library: Library | None = None
        self._reader = LogReader(
            self.log,
            cache_dir=self.state_dir / ".cache",
            use_cache=use_cache and self._cache_folder_inside(),
            cache_threshold=cache_threshold,
            outcomes=self.config.outcomes,
            rewards=RewardInputs(self.config.reward_priority),
        )
        self.session_records = SessionRecords(self.root, self.config.records)  # gptme-sessions' (docs/records.md)
        self.version = 0  # bumped whenever the log read so far changes
        self._rereading = False  # see rereads()
        self.loo_meta: dict[str, Any] = {}  # behind the last loo(): sessions without propensities, dropout, model
        self._joint: tuple[tuple[int, float], JointPosterior] | None = None  # by (version, floor)
        self._joint_fit: tuple[tuple[int, float], JointFit] | None = None  # the analysis' fit, by (version, floor)
        self._columns: tuple[int, Design, Fitted] | None = None  # the injection design's fit, by version

    @property
    def warnings(self) -> list[str]:
        """What a command that succeeded could not do (a derived file), one line each: appended to
        by the commands, and each cache file set aside under the state folder (core.base.files)."""
        self._warnings.extend(set_aside_notices(self.state_dir))
        return self._warnings

    def _cache_folder_inside(self) -> bool:
        """Whether the caches' folder may be written (it does not link out of the workspace); when
        not, no cache is kept, and a warning says why."""
        folder = self.state_dir / ".cache"
        try:
            self.guard.folder(folder)
        except StoreError as exc:
            self.warnings.append(f"{exc}; no caches are kept")
            return False
        return True

    # ---------------------------------------------------------------- reading

    @property
    def settings(self) -> CreditSettings:
        return self.config.credit

    def library(self, reload: bool = False) -> Library:
        if self._library is None or reload:
            cache = self.state_dir / ".cache" / "lessons.msgpack" if self._reader.caches else None
            with gc_paused():  # thousands of lessons, each a few small containers (see gc_paused)
                self._library = load_library(self.root, cache, allow_outside=self.allow_outside_library)
        return self._library

    def refresh(self) -> bool:
        """Read what was appended to the log since the last read (and the records file, when it
        changed: its scores count for their sources). True when anything changed."""
        changed = self._reader.refresh(self.settings)
        changed = self._sync_rewards() or changed
        self.version += changed
        return changed

    def _sync_rewards(self) -> bool:
        """Hand the reader the reward priority and the records' scores; True when they changed."""
        priority = self.config.reward_priority
        if not self.session_records.file().records:
            return self._reader.set_rewards(RewardInputs(priority))
        joined = self.records()
        return self._reader.set_rewards(RewardInputs(priority, joined.scores, joined.token))

    def records(self) -> JoinedRecords:
        """The gptme-sessions records joined to the sessions read so far (see core.session_records)."""
        n = self._reader.index.n_sessions

        def columns() -> tuple[Sequence[str], Sequence[str | None]]:
            c = self._reader.session_columns(n)
            return c.session_ids, c.timestamps

        return self.session_records.joined(n, columns, self.config.outcomes)

    @rereads
    def data(self) -> FoldData:
        """The fold snapshot of the log (read first if the last change has not been read)."""
        if self._reader.snapshot is None:
            self.refresh()
        return self._reader.data()

    @rereads
    def log_problems(self) -> list[LogProblem]:
        return self._reader.problems(self.data())

    def log_missing(self) -> str | None:
        """Why every lesson shows as never used, when the workspace's log file is gone (deleted, moved)
        while `bandit-state.json`, written after every append, is still there: one line naming the
        log; None otherwise (a fresh workspace has neither). The state file is then left as it is."""
        if not isinstance(self.log, JsonlStore) or os.path.lexists(self.log.path):
            return None
        if not os.path.lexists(self.state_path):
            return None
        return (
            f"{self.log.path}: the event log is missing (deleted or moved?); every lesson shows as never "
            f"used, and {self.state_path.name} is left as it is"
        )

    def lesson_problems(self) -> tuple[LessonProblem, ...]:
        return self.library().problems

    @rereads
    def posterior(self, settings: CreditSettings | None = None, base: np.ndarray | None = None) -> Posterior:
        """The fold's per-arm arrays (see `lesson_table` for the table by lesson)."""
        settings, data = settings or self.settings, self.data()
        return self._reader.posterior(settings) if base is None else fold(data, settings, base)

    @rereads
    def lesson_table(
        self,
        settings: CreditSettings | None = None,
        base: np.ndarray | None = None,
        *,
        details: bool = True,
        intervals: bool = True,
    ) -> PosteriorTable:
        """The status table: every lesson of the library and every arm of the log (see views.lesson_table)."""
        own = self._reader.caches and settings is None and base is None  # what-if tables keep no intervals
        settings = settings or self.settings
        post, data, lessons = self.posterior(settings, base), self.data(), self.library().lessons
        cache = self.state_dir / ".cache" / "intervals" if own else None
        return views.lesson_table(
            post, data, lessons, self._reader.session_ids, settings, base, details=details, intervals=intervals,
            interval_cache=cache,
        )  # fmt: skip

    @rereads
    def lesson_usage(self) -> dict[str, LessonUsage]:
        """Per arm: sessions injected in, how many of those it was salient in, mean salience."""
        return views.lesson_usage(self.data())

    @rereads
    def p_top_k(
        self,
        settings: CreditSettings | None = None,
        k: int | None = None,
        seed: int = 0,
        draws: int = 2000,
        policy: str | None = None,
    ) -> dict[str, float]:
        """P(each active lesson lands in a top-k Thompson draw among all active lessons) under `policy`
        (default: `settings`' strategy when given, else the policy in force)."""
        return self.p_top_k_later(settings, k, seed, draws, policy)()

    def p_top_k_later(
        self,
        settings: CreditSettings | None = None,
        k: int | None = None,
        seed: int = 0,
        draws: int = 2000,
        policy: str | None = None,
    ) -> Callable[[], dict[str, float]]:
        """`p_top_k()` in two steps, for a caller that holds a lock while it reads: the posterior is
        taken now (a snapshot), the Monte Carlo draws (most of the time) run when the result is called."""
        from lesson_credit.core.bandit import policy as policy_mod

        policy = policy or (settings.strategy if settings is not None else self.policy)
        k, lessons = k or self.config.k, self.library().lessons
        if policy == policy_mod.JOINT:
            joint = self.joint_posterior()
            normal = policy_mod.NormalPosterior(joint.arm_ids, joint.mean, joint.sd, joint.prior_sd)
            return policy_mod.p_top_k_active_later(normal, lessons, k, seed, draws)
        credit = (settings or self.settings).with_(strategy=policy)
        return select_mod.p_top_k_later(self.posterior(credit), credit, lessons, k, seed, draws)

    @rereads
    def effects(self) -> dict[str, float]:
        """Each lesson's joint (ranking) effect estimate (core.analysis.joint), without LOO or flags.
        Kept in .cache per log version (`saved_effects`)."""
        fit = self.joint_fit()
        effects = {arm: float(e) for arm, e in zip(self.data().arm_ids, fit.estimate.tolist(), strict=True) if e == e}
        self.remember_effects(effects)
        return effects

    def effects_later(self) -> Callable[[], dict[str, float]]:
        """`effects()` in two steps, for a caller that holds a lock while it reads: the log's inputs are
        taken now (a snapshot: later appends do not change them), the fit runs when the result is called."""
        from lesson_credit.core.analysis.joint import effects_by_lesson

        inputs = self.data(), self.session_categories(), self.settings.floor, self.session_agents()
        return lambda: effects_by_lesson(*inputs)

    def remember_effects(self, effects: dict[str, float]) -> None:
        """Save joint effects fitted on the log as read now (`saved_effects` gives them back)."""
        from lesson_credit.core import attribution

        key = self._effects_key()
        if key is not None:
            attribution.save_effects(self.state_dir / ".cache" / "effects.msgpack", key, effects)

    @rereads
    def saved_effects(self) -> dict[str, float] | None:
        """The joint effects `effects()` saved for the log as it is now read (None: none yet)."""
        from lesson_credit.core import attribution

        key = self._effects_key()
        return None if key is None else attribution.saved_effects(self.state_dir / ".cache" / "effects.msgpack", key)

    def _effects_key(self) -> str | None:
        self.data()
        content = self._reader.content_key()
        return None if content is None else f"{content}:{self.settings.floor!r}:{_fit_version()}"

    @rereads
    def joint_fit(self, floor: float | None = None) -> JointFit:
        """The analysis' joint fit of the log as read (core.analysis.joint, the analysis' prior floor),
        reused by `effects` and `loo` until the log or the floor changes. `floor`: the salience floor
        of the weights (default: the configured one; 1.0 weighs every injection 1, whatever its journal
        says). The selection policy's posterior is `joint_posterior` (its own prior floor)."""
        from lesson_credit.core.analysis.joint import fit_log

        data = self.data()
        floor = self.settings.floor if floor is None else floor
        key = (self.version, floor)
        if self._joint_fit is None or self._joint_fit[0] != key:
            self._joint_fit = (key, fit_log(data, self.session_categories(), floor, self.session_agents()))
        return self._joint_fit[1]

    @rereads
    def lesson_over_time(self, lesson_id: str) -> OverTime:
        """A lesson's joint effect by window of the log and its credit posterior after each
        (core.analysis.over_time); the injection design's fit is reused until the log changes."""
        from lesson_credit.core.analysis.claims import fit_columns
        from lesson_credit.core.analysis.joint import build_design
        from lesson_credit.core.analysis.over_time import lesson_over_time

        data = self.data()
        if self._columns is None or self._columns[0] != self.version:
            design = build_design(data, self.session_categories(), 1.0, self.session_agents())
            self._columns = (self.version, design, fit_columns(design))
        _, design, fitted = self._columns
        return lesson_over_time(data, self._reader.session_ids(), design, fitted, self.settings, lesson_id)

    @property
    def policy(self) -> str:
        """The selection policy in force: config.toml's [select] policy, else `joint`; but a log with an
        imported prior (gptme's bandit-state: the joint estimate does not read priors) keeps the credit
        strategy's Beta posteriors until [select] says otherwise (docs/policy.md)."""
        if self.config.policy is not None:
            return self.config.policy
        return self.settings.strategy if bool(np.isfinite(self.data().prior_alpha).any()) else "joint"

    @rereads
    def joint_posterior(self) -> JointPosterior:
        """The joint estimate as a posterior per lesson (core.analysis.joint_posterior): kept per log
        version in memory, and on disk in the verified cache `.cache/joint-posterior.msgpack`."""
        from lesson_credit.core.analysis.joint_posterior import cached_joint_posterior

        data = self.data()
        key = (self.version, self.settings.floor)
        if self._joint is None or self._joint[0] != key:
            cache_dir = self.state_dir / ".cache" if self._reader.caches else None
            post = cached_joint_posterior(
                data, self.session_categories(), self.settings.floor, self.session_agents(), cache_dir=cache_dir
            )
            self._joint = (key, post)
        return self._joint[1]

    @rereads
    def session_categories(self) -> Sequence[str | None]:
        """Each session's category as of the current snapshot (a copy: later reads do not change it)."""
        return tuple(self._reader.session_categories()[: self.data().n_sessions])

    @rereads
    def session_agents(self) -> Sequence[str | None]:
        """Who wrote each session of the current snapshot (a database store; () for the file)."""
        return tuple(self._reader.session_agents(self.data().n_sessions))

    @rereads
    def sessions(self) -> list[SessionSummary]:
        table = self.session_table()
        return [table.summary(row) for row in range(len(table))]

    @rereads
    def session_table(self) -> SessionTable:
        """Every session as columns (see SessionTable); what a view of a big log should use."""
        data = self.data()
        c = self._reader.session_columns(data.n_sessions)
        return views.session_table(data, c.session_ids, c.timestamps, c.categories, c.journal_paths, c.lines)

    def _journal(self, journal_path: str | None) -> tuple[str | None, str | None]:
        return read_journal(self.root, journal_path, self.allow_outside_journals)

    def _row(self, session_id: str) -> int:
        row = self._reader.row_of(session_id)
        if row is None:
            raise WorkspaceError(f"unknown session {session_id!r}")
        return row

    @rereads
    def session_row(self, session_id: str) -> int:
        """The session's row: its place in log order (found by id, not by listing every session)."""
        self.data()
        return self._row(session_id)

    @rereads
    def session(self, session_id: str) -> SessionSummary:
        data, row = self.data(), self._row(session_id)
        return views.session_summary(self._reader.session(row), row, self._reader.session_line(row), data)

    @rereads
    def grade_history(self, session_id: str) -> list[GradeRecord]:
        """Every grade event the session has had (its record's own first), oldest first. Which one
        is in force is the reward priority's choice (`reward_sources`)."""
        self.data()
        return self._reader.grade_history(self._row(session_id))

    @rereads
    def reward_sources(self, session_id: str, priority: Sequence[str] | None = None) -> tuple[SourceScore, ...]:
        """Every reward source's score of the session, the one in force (under `priority`, default
        the configured one) marked (docs/records.md)."""
        data, row = self.data(), self._row(session_id)
        label = self._reader.outcome_label(row)
        outcome = self.config.outcomes.get(label) if label is not None else None
        record, outside = self.record_at(row), {}
        if record is not None:
            scores = self.records().scores
            outside = {s: float(v[row]) for s, v in scores.items() if row < len(v) and not np.isnan(v[row])}
        return views.source_breakdown(
            self._reader.session(row), self._reader.session_line(row), self._reader.grades_of(row),
            outcome, outside, priority or data.scores().priority, None if record is None else record.timestamp,
        )  # fmt: skip

    @rereads
    def person_scores(self) -> dict[str, np.ndarray]:
        """Per person (a grader of the people's source): their latest score of each session, NaN where none."""
        return self._reader.grader_scores(self.data().n_sessions, SOURCES.index(HUMAN))

    def record_at(self, row: int) -> Record | None:
        """The gptme-sessions record joined to the session at `row` (None: none joined)."""
        return self.records().record_at(row) if self.session_records.file().records else None

    @rereads
    def record_of(self, session_id: str) -> Record | None:
        self.data()
        return self.record_at(self._row(session_id))

    def trajectory_of(self, session_id: str) -> tuple[Trajectory | None, str | None]:
        """(the session's trajectory, why there is none): see core.session_records.trajectory_for."""
        record, settings = self.record_of(session_id), self.config.records
        return trajectory_for(self.root, record, session_id, settings, self.allow_outside_journals)

    def priority_base(self, priority: Sequence[str]) -> np.ndarray:
        """Each session's score in force under another reward priority (a what-if; NaN: pending)."""
        return self.data().scores().in_force(tuple(priority))

    @rereads
    def outcome_labels(self) -> dict[int, str]:
        """Row -> string outcome of each record logged without base_reward (see lesson_credit.core.bandit.config)."""
        self.data()
        return self._reader.outcome_labels()

    @rereads
    def outcome_label(self, session_id: str) -> str | None:
        """The string outcome of the session's record when it was logged without base_reward."""
        self.data()
        return self._reader.outcome_label(self._row(session_id))

    @property
    def read_progress(self) -> ReadProgress | None:
        """How far the read under way has come (None: none is), safe to ask from another thread."""
        return self._reader.progress

    def on_read_progress(self, hook: Callable[[ReadProgress | None], None] | None) -> None:
        """Call `hook` in the reading thread with each step of a read, and None when it ends."""
        self._reader.progress_hook = hook

    @property
    def read_generation(self) -> int:
        """Changes when the log is read again from its start (rows read before may be other sessions)."""
        return self._reader.generation

    @rereads
    def session_ids_between(self, start: int, stop: int) -> tuple[str, ...]:
        """The ids of the sessions at rows [start, stop), as read."""
        self.data()
        return tuple(self._reader.session_ids().between(start, stop))

    @rereads
    def session_id_of(self, text: str) -> str:
        """The one session id `text` names: itself when logged, else the only id it starts. An
        unknown or ambiguous prefix raises QueryError naming the matches (one line). Neither reads
        every id: an id is looked up by its hash, a prefix compared with the ids' stored bytes."""
        from lesson_credit.core.query import QueryError, ambiguous

        if not text:
            raise QueryError("session id must not be empty")
        self.data()
        if self._reader.row_of(text) is not None:
            return text
        ids = self._reader.session_ids()
        rows = ids_starting(ids, text, self.data().n_sessions)
        if not rows:
            raise QueryError(f"unknown session {text!r}")
        if len(rows) > 1:
            raise QueryError(ambiguous(text, [ids[row] for row in rows[:MATCHES_SHOWN]], len(rows)))
        return ids[rows[0]]

    @rereads
    def session_record(self, session_id: str) -> dict[str, Any]:
        """The session's record as logged ({} if it cannot be read back): read where the index says
        it starts in the file, else searched for in the store."""
        from lesson_credit.core.log.records import record_at

        self.data()
        row = self._row(session_id)
        offset = self._reader.session_offset(row)
        if offset is not None and isinstance(self.log, JsonlStore):
            found = record_at(self.log.path, offset, session_id)
            if found is not None:
                return found
        duplicated = any(p.session_id == session_id and p.reason.startswith("duplicate") for p in self.log_problems())
        return self.log.session_record(session_id, unique=not duplicated) or {}

    @rereads
    def retired_arms(self) -> dict[str, int]:
        """Arm -> line of the retire event (`prune`) that retired it."""
        self.data()
        return self._reader.retired()

    @rereads
    def selections(self) -> list[tuple[int, SelectionEvent]]:
        self.data()
        return self._reader.selections()

    @rereads
    def explain(
        self,
        session_id: str,
        *,
        lesson: str | None = None,
        base_reward: float | None = None,
        settings: CreditSettings | None = None,
        with_journal: bool = True,
    ) -> Explanation:
        """Why each lesson of a session got its credit; `base_reward` previews another grade."""
        settings = settings or self.settings
        data = self.data()
        row = self._row(session_id)
        session = self._reader.session(row)
        wanted, used = views.explain_inputs(session, lesson, base_reward, float(data.base[row]))
        current = self.posterior(settings)
        journal = self._journal(session.journal_path) if with_journal else (None, None)
        lessons, line, grades = self.library().by_id(), self._reader.session_line(row), self.grade_history(session_id)
        return views.explanation(session, row, line, data, current, used, lessons, journal, grades, wanted)

    # ---------------------------------------------------------------- analysis and selection

    @rereads
    def missing_salience_count(self) -> int:
        self.data()
        return self._reader.missing_salience_count()

    @rereads
    def broad_keywords(self, share: float = BROAD_KEYWORD_SHARE) -> dict[str, str]:
        """Lessons with a keyword that hits more than `share` of the latest 2,000 journals, with the reason."""
        from lesson_credit.core import attribution

        self.data()
        journals = reversed(self._reader.session_journals())
        return attribution.broad_keywords_of(self.library().lessons, journals, lambda p: self._journal(p)[0], share)

    @rereads
    def candidacies(self) -> list[Candidacy]:
        """(session, lesson, propensity): one selection per session (the last before its record)."""
        from lesson_credit.core import attribution

        return list(attribution.candidacies_of(self._reader.index, self.data()).items)

    @rereads
    def loo(self, *, min_with: int = MIN_WITH, min_without: int = MIN_WITHOUT, write: bool = True) -> list[LooResult]:
        """Joint effect and leave-one-out lift per lesson; written to loo-results.json (docs/format.md §8)
        unless write=False."""
        from lesson_credit.core import attribution

        results, self.loo_meta = attribution.loo(
            self.data(), self._reader, self.library(), self.root, self.broad_keywords(), self.settings.floor,
            min_with, min_without, self.joint_fit(),
        )  # fmt: skip
        if write:
            attribution.write_loo(
                self.state_dir, results, self.now_iso(), min_with, min_without, self.loo_meta, self.guard
            )
        return results

    @rereads
    def select(
        self,
        context: str,
        *,
        k: int | None = None,
        seed: int | None = None,
        session_id: str | None = None,
        log: bool = True,
        draws: int = 4000,
        dropout: float = 0.0,
        policy: str | None = None,
        category: str | None = None,
    ) -> Selection:
        """Thompson top-k among matching lessons; logs a selection event with propensities.

        `policy` (default: the one in force, `self.policy`): seed, evidence or uniform draw from the
        Beta posteriors folded under that credit strategy, joint from the joint estimate's posterior.
        `dropout` epsilon: each chosen lesson is then withheld with that probability and the draw
        is logged to state/lesson-dropout/<session_id>.jsonl in gptme's format (a randomized trial).
        `category`: the session's kind of work (default: the one config.toml's [categories] finds in the
        context, else none); the joint policy draws each lesson's effect in it; it is logged either way."""
        from lesson_credit.core import selection_draw

        if (problem := self.library().config_problem()) is not None:  # nothing drawn from half a library
            raise WorkspaceError(f"{problem}; not selecting from an incomplete library (fix gptme.toml)")
        k = self.config.k if k is None else k
        drawn = selection_draw.draw(
            context, lambda: self.library().lessons, self.posterior, self.settings,
            k=k, seed=seed, session_id=session_id, clock=self.clock, draws=draws, dropout=dropout,
            policy=self.policy if policy is None else policy, joint=self.joint_posterior,
            category=category, categories=self.config.categories,
        )  # fmt: skip
        if log:
            selection_draw.log_draw(self.log, drawn, self.root, self.clock, self._check_new, self.guard)
            self.refresh()
        return drawn.selection

    # ---------------------------------------------------------------- writing

    def _check_new(self, session_id: str) -> None:
        self.refresh()
        if self._reader.row_of(session_id) is not None:
            raise WorkspaceError(f"session {session_id!r} is already recorded")

    def _append(self, event: dict[str, Any], adopted: bool = False, locked: bool = True) -> None:
        """Append an event (under the lock, or a record's: `record_lock`), read it back, and rewrite the state file."""
        self.log.append(encode(event))
        self._reader.trust_once()  # we hold the lock and only appended: the prefix read is intact
        self._after_write(adopted, locked)

    def _after_write(self, adopted: bool = False, locked: bool = True) -> None:
        """The event is in the log (or the settings in config.toml): the command has succeeded, and
        a failure to rewrite `bandit-state.json` (a derived file) is only a warning (see interop).
        The caller holds the log's lock. `adopted`: the file's evidence is in the log now (see write_state)."""
        try:
            try:
                self.refresh()
                self.write_state(locked=locked, adopted=adopted)
            except CacheDamaged as exc:
                self._reader.drop(str(exc))
                self.refresh()
                self.write_state(locked=locked, adopted=adopted)
        except interop.StateKept as exc:
            self.warnings.append(str(exc))
        except (StoreError, OSError) as exc:
            self.warnings.append(interop.state_not_written(exc, self.state_path))

    @rereads
    def record(
        self,
        session_id: str,
        journal: Path | str,
        lessons: Sequence[str],
        *,
        reward: float | None = None,
        category: str | None = None,
        grader: str = "heuristic",
        timestamp: str | None = None,
        outcome: str | None = None,
        during: Sequence[str] = (),
    ) -> Explanation:
        """Log a session: salience from the journal, credit under the current settings. With `outcome`,
        a gptme outcome word (see `outcome_reward`), the event logs the word as gptme does and its
        reward follows the [outcomes] mapping. `during`: lessons included during the session (not
        chosen before it), logged with `"included": "during"`; the lessons the session's logged
        selection chose get `"included": "before"`."""
        if outcome is not None:
            reward = self.outcome_reward(outcome, pending_ok=True)
        grading.check_grader(grader)
        new = commands.recording(
            session_id,
            Path(journal),
            lessons,
            lambda: self.library().by_id(),
            self.root,
            reward=reward,
            category=category,
            grader=grader,
            allow_outside=self.allow_outside_journals,
            outcome=outcome,
            during=during,
        )
        settings = self.settings
        with record_lock(self.log) as held:  # none on a database: its unique index refuses a second record
            self._check_new(session_id)
            selection = self._reader.index.latest_selection(session_id)
            propensity, selected = ({}, ()) if selection is None else (dict(selection.propensity), selection.selected)
            self._append(new.event(settings, propensity, timestamp or iso(self.clock()), selected), locked=held)
        if not new.journal.strip():  # logged as given; most likely the wrong file, or one not yet written
            self.warnings.append(f"journal {journal} is empty: every lesson's salience is 0 (its weight the floor)")
        return self.explain(session_id)

    @rereads
    def append_grade(
        self,
        session_id: str,
        reward: float | None,
        *,
        grader: str = "manual",
        note: str | None = None,
        expect_line: int | None = None,
        outcome: str | None = None,
    ) -> GradeAppended:
        """The one writer of a grade event (`reward` None: a retraction), for the CLI and the dashboard.

        With `expect_line`, refuse (GradeConflict, nothing written) unless the session's latest
        grade event is the one at that line. The event is logged once this returns; what could not
        be done besides (rewriting bandit-state.json) is in the result's `warnings`. With `outcome`, a
        gptme outcome word, the reward is what [outcomes] maps it to, and the event keeps the word."""
        if outcome is not None:
            reward = self.outcome_reward(outcome)
        reward = grading.check_reward(reward)
        grading.check_grader(grader)
        decide = lambda history, line: (reward, note, grader)  # noqa: E731
        return self._append_grade(session_id, decide, grader, expect_line, outcome)

    def grade(
        self, session_id: str, reward: float | None, *, grader: str = "manual", note: str | None = None,
        outcome: str | None = None,
    ) -> GradeRecord:  # fmt: skip
        """Append a grade (a number, or a gptme `outcome` word); the latest grade of a session counts."""
        return self.append_grade(session_id, reward, grader=grader, note=note, outcome=outcome).record

    def outcome_reward(self, word: str, *, pending_ok: bool = False) -> float | None:
        """The reward a gptme outcome word stands for in this workspace ([outcomes] over gptme-sessions'
        defaults); with `pending_ok`, `unknown` is None (pending, as gptme records it). WorkspaceError
        naming the accepted words for any other."""
        outcomes = self.config.outcomes
        if word in outcomes:
            return outcomes[word]
        if pending_ok and word == PENDING_OUTCOME:
            return None
        accepted = sorted(outcomes) + ([PENDING_OUTCOME] if pending_ok else [])
        raise WorkspaceError(f"reward must be a number in [0, 1] or one of {', '.join(accepted)}, got {word!r}")

    def outcome_words(self) -> dict[int, str]:
        """Row -> the gptme outcome word a session's reward in force comes from: sessions logged with a
        word and no base_reward (imported from gptme, or `record --reward WORD`) whose score in force is
        the outcome source's (no source before it in the priority scores them) and still the word's
        (no `outcome` grade since, no record's outcome in its place)."""
        labels = self._reader.outcome_labels()
        if not labels:
            return {}
        scores = self.data().scores()
        outcome = SOURCES.index(OUTCOME)
        index = self._reader.index
        regraded = {row for row, code in zip(index.grade_rows, index.grade_source, strict=True) if code == outcome}
        outside = set(scores.external_rows.tolist())
        n = len(scores.chosen)
        return {
            row: word
            for row, word in labels.items()
            if row < n and scores.chosen[row] == outcome and row not in regraded and row not in outside
        }

    @rereads
    def undo_grade(self, session_id: str, *, grader: str = "manual", note: str | None = None) -> GradeRecord:
        """Revert the session's latest grade event within its reward source (grading.undo_of):
        the score in force is again what it was before it. `grader` is who undoes it (named in the
        note); checked under the log lock, so a grade appended meanwhile is what gets undone."""
        grading.check_grader(grader)
        return self._append_grade(
            session_id,
            lambda history, line: grading.undo_of(
                session_id, history, line, grader, note, self.reward_sources(session_id), self.config.reward_priority
            ),
            grader,
            None,
        ).record

    def _append_grade(
        self,
        session_id: str,
        decide: Callable[[list[GradeRecord], int], tuple[float | None, str | None, str]],
        grader: str,
        expect_line: int | None,
        outcome: str | None = None,
    ) -> GradeAppended:
        """Under the lock: the session's grade history as it is now, `decide`'s (reward, note, grader)
        from it and the session's record line, the event appended and read back."""
        with self.log.locked():
            self.refresh()
            row = self._row(session_id)
            history = self.grade_history(session_id)
            sources = self.reward_sources(session_id)
            grading.check_expected(session_id, history, expect_line)
            reward, note, logged_as = decide(history, self._reader.session_line(row))
            known = len(self.warnings)
            self._append(grading.grade_event(session_id, reward, logged_as, self.now_iso(), note, outcome))
            after = self.grade_history(session_id)[-1]
        before, own = grading.grade_in_force(sources), grading.own_source_score(sources, logged_as)
        return GradeAppended(before, after, tuple(self.warnings[known:]), own)

    @rereads
    def add_prior(self, arms: dict[str, tuple[float, float, int]], rewards: dict[str, int] | None = None) -> None:
        """Log starting alpha/beta/n (and gptme's reward counts) for arms, e.g. imported evidence."""
        with self.log.locked():
            self._append(commands.prior_event(arms, rewards, iso(self.clock())))

    @rereads
    def replay(
        self, strategy: str | None = None, floor: float | None = None, *, decay: float | None = None,
        priority: Sequence[str] | None = None, write: bool = False,
    ) -> PosteriorTable:  # fmt: skip
        """Re-fold under other settings or another reward priority (docs/records.md); with `write` they
        become the workspace's settings."""
        settings = commands.settings_with(self.settings, strategy, floor, decay)
        chosen = self.config.reward_priority if priority is None else check_priority(priority)
        if write:
            with self.log.locked():
                self.config = replace(self.config, credit=settings, reward_priority=chosen)
                save_config(self.config_path, self.config, self.guard)
                self._after_write()
        base = None if chosen == self.data().scores().priority else self.priority_base(chosen)
        return self.lesson_table(settings, base, details=False)

    def save_settings(self, settings: CreditSettings, policy: str | None = None) -> None:
        """Make `settings` (and `policy`, the [select] policy, when given) the workspace's."""
        if policy is None or policy == self.config.policy:
            self.replay(settings.strategy, settings.floor, decay=settings.decay, write=True)
            return
        from lesson_credit.core.bandit.policy import check_policy

        try:
            policy = check_policy(policy)
        except ValueError as exc:
            raise WorkspaceError(str(exc)) from None
        settings = commands.settings_with(self.settings, settings.strategy, settings.floor, settings.decay)
        with self.log.locked():
            self.config = replace(self.config, credit=settings, policy=policy)
            save_config(self.config_path, self.config, self.guard)
            self._after_write()

    # ---------------------------------------------------------------- gptme state (lesson_credit.core.bandit.interop)

    def write_state(self, *, locked: bool = False, adopted: bool = False) -> None:
        """Rewrite `bandit-state.json` from the fold, atomically, keeping what else the file holds and
        its key style (`state_keys`). When another tool (gptme's bandit) updated it since we wrote it,
        its increments over what we wrote (`.cache/bandit-state-written`) are logged first, as an
        increments event (under the log's lock: `locked` says the caller holds it), and the file
        follows the log again; interop.StateKept (nothing written) when they cannot be known (no
        copy of what we wrote, a number that went down) or when the log is missing (a derived
        file is never rewritten from a log that is not there). `adopted`: rewrite whatever the file
        holds (its evidence was just logged). Then saves the block sums the folds computed, this
        one's included (the blocks the write changed), for the next command."""
        try:
            self._refuse_missing_log()
            if not adopted:
                adopted = self._log_foreign_update(locked)
            check = None if adopted else self.posterior
            interop.rewrite_state(
                self.state_path, self._own_state, self.guard, check, self.state_keys, self._keep_written
            )
        except interop.StateKept:
            self._reader.keep_sums()
            raise
        self._reader.keep_sums()

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
        if not self._reader.caches:
            return
        try:
            atomic_write(self._written_path(), interop.written_copy(payload), self.guard)
        except (StoreError, OSError):
            with contextlib.suppress(OSError):
                self._written_path().unlink()

    def keep_written_copy(self, state: dict[str, Any]) -> None:
        """Keep the copy of a state file verified as ours (its stamp matches) when the copy is missing or
        says otherwise (a workspace written before copies were kept), best effort."""
        if self._reader.caches and self._written() != interop.read_written_copy(interop.written_copy(state)):
            self._keep_written(state)

    def _written(self) -> dict[str, interop.Counts] | None:
        """The numbers of the state file as we last wrote it (None: no copy, or a damaged one)."""
        if not self._reader.caches:
            return None
        try:
            return interop.read_written_copy(read_regular(self._written_path(), STATE_MAX_BYTES))
        except (OSError, UnsafeFile, ValueError):
            return None

    def foreign_increments(self, state: dict[str, Any]) -> dict[str, interop.Counts]:
        """Per lesson id, what another tool added to the parsed state file `state` since we wrote it;
        InteropError (why) when that cannot be known."""
        written = self._written()
        if written is None:
            raise interop.InteropError(f"no copy of what lesson-credit last wrote in {self._written_path().parent}")
        added = interop.increments(state, written)
        mapper = interop.ArmMapper((lesson.id for lesson in self.library().lessons), self.library().roots)
        return {mapper.map(key)[0]: counts for key, counts in added.items()}

    def _log_foreign_update(self, locked: bool) -> bool:
        """When the state file was changed by another tool since we wrote it and disagrees with the log,
        log that tool's increments (`foreign_increments`) and say so in a warning; True when logged.
        StateKept when they cannot be known."""
        if not self._foreign_disagreement():
            return False
        with contextlib.nullcontext() if locked else self.log.locked():
            if not locked:  # decided again under the lock: another command may have logged it meanwhile
                self.refresh()
            why = self._foreign_disagreement()
            if why is None:
                return False
            existing = interop.read_state(self.state_path)
            post = self.posterior()
            arms_only = {**existing, "total_sessions": post.graded_sessions}
            if interop.disagreement(arms_only, post, keys=self.state_keys(existing)) is None:
                return True  # its numbers are the log's already: another command logged them meanwhile
            try:
                added = self.foreign_increments(existing)
            except interop.InteropError as exc:
                raise interop.StateKept(interop.kept_message(self.state_path, f"{why}; {exc}")) from None
            if added:
                self.log.append(encode(interop.increments_event(added, self.now_iso())))
                self._reader.trust_once()
                self.refresh()
        if not added:  # only its stamp (or its total_sessions) changed: the numbers are ours
            return True
        sessions = max(counts[2] for counts in added.values())
        self.warnings.append(
            f"{self.state_path} was updated by another tool (gptme's bandit) since lesson-credit wrote it: "
            f"its increments to {len(added)} arm(s) (up to {sessions} selection(s) each) are logged as an "
            f"increments event from {interop.GPTME_BANDIT}, and the file follows the log again"
        )
        return True

    def _foreign_disagreement(self) -> str | None:
        """How the state file disagrees with the log when another tool wrote it last (None: ours, or
        it agrees, or there is none)."""
        existing = interop.read_state(self.state_path)
        if not existing or interop.written_by_us(existing):
            return None
        return interop.disagreement(existing, self.posterior(), self.state_path.name, self.state_keys(existing))

    def state_keys(self, existing: dict[str, Any]) -> tuple[str, ...]:
        """Each arm's key in the state file: library ids, or the lessons' absolute paths when the file
        as it is names arms so (gptme's Claude Code hook looks them up by path)."""
        arm_ids = self.posterior().arm_ids
        if not interop.absolute_keys(existing):
            return tuple(arm_ids)
        paths = {lesson.id: lesson.path for lesson in self.library().lessons}
        return interop.state_keys(arm_ids, paths, True)

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

    @rereads
    def export_gptme(self, path: Path | str) -> Path:
        """Write the posteriors as a gptme `bandit-state.json` at `path` (or in it, a folder); onto the
        workspace's own file, that file is ours again (its copy kept)."""
        target = interop.export_target(path)
        own = target.resolve() == self.state_path
        style = interop.read_state(target) if own else {}  # onto our own file: its key style is kept

        def fresh() -> dict[str, Any]:
            keys = self.state_keys(style)
            return interop.gptme_state(self.posterior(), self._reader.session_times, self.now_iso(), None, keys)

        return interop.export_state(target, fresh, self._keep_written if own else None)

    @rereads
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
                known = len(self.warnings)
                self._after_write()
                return ImportReport(str(path), (), skipped=" ".join(self.warnings[known:]) or None)
            if own and (agrees or interop.written_by_us(existing)):
                why = f"{path} is written from this workspace's log: nothing to import"
                return ImportReport(str(path), (), skipped=why)
            report = interop.read_import(Path(path), self.library())
            if agrees and interop.STAMP_KEY in existing:
                return replace(report, skipped=f"{path} was written by lesson-credit and agrees with the log: its "
                               "evidence is in it already; nothing imported")  # fmt: skip
            if self._reader.index.priors and self._imported_already(report):
                return replace(report, skipped=f"the priors of {path} are in the log already; nothing imported")
            self._append(commands.prior_event(*report.prior(), self.now_iso()), adopted=own)
            return report

    def _has_evidence(self) -> bool:
        data = self.data()
        return data.n_sessions > 0 or bool(self._reader.index.priors) or bool(self._reader.index.increments)

    def _imported_already(self, report: ImportReport) -> bool:
        """Whether every arm of `report` is the prior in force for its lesson (an import of the same content)."""
        index = self._reader.index
        arms, rewards = report.prior()
        return all(
            index.priors.get(arm) == prior and index.prior_rewards.get(arm, 0) == rewards.get(arm, 0)
            for arm, prior in arms.items()
        )

    def now_iso(self) -> str:
        return iso(self.clock())


@functools.cache
def _fit_version() -> str:
    """A digest of the analysis code: effects saved by another version of the fit are not reused."""
    import xxhash

    from lesson_credit.core import analysis

    digest = xxhash.xxh3_64()
    for path in sorted(Path(analysis.__file__).parent.glob("*.py")):
        digest.update(path.name.encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()
