"""The one service object the CLI and the dashboard use: a workspace's lessons, log and posteriors.

Reads are cheap and incremental (`refresh()` decodes only what was appended since the last
read); every write is one event appended under the lock after validating against the log
as it is at that moment, followed by an atomic rewrite of `bandit-state.json`.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import gc
import hashlib
import math
import re
import secrets
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec
import numpy as np
import numpy.typing as npt

from core import beta as beta_mod
from core import credit as credit_mod
from core.analysis import BROAD_KEYWORD_SHARE, MIN_WITH, MIN_WITHOUT, Candidacy, LooResult, leave_one_out, loo_payload
from core.cache import MIN_NEW_BYTES, LogCache
from core.config import Config, ConfigError, load_config, save_config
from core.events import GRADE, PRIOR, SELECTION, SESSION, SessionEvent, decode_raw, decode_raw_lines, encode
from core.eventstore import EventStore, JsonlStore
from core.fold import CreditSettings, FoldData, Posterior, fold, regrade, salience_in
from core.fold import lesson_usage as fold_usage
from core.index import LogIndex
from core.lessons import MISSING, Lesson, LessonProblem, Library, load_library, normalize_id
from core.patterns import pattern_matches
from core.salience import (
    KeywordMatcher,
    SalienceBreakdown,
    breakdown_from_scan,
    casekey,
    counted_keywords,
    salience_breakdowns,
)
from core.store import EventLog, LogProblem, StoreError, atomic_write

STATE_DIR = Path("state") / "lesson-thompson"
JOURNAL_READ_LIMIT = 64 * 1024 * 1024


class WorkspaceError(ValueError):
    """Bad input or a state that forbids the operation; the message is one line for the user."""


def utc_now() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


def iso(moment: dt.datetime) -> str:
    return moment.astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass(frozen=True)
class LessonRow:
    """One lesson's posterior summary, as the status table and the dashboard show it."""

    path: str
    title: str
    category: str
    status: str
    n: int
    alpha: float
    beta: float
    mean: float
    ci_low: float
    ci_high: float
    rewarded: int
    last_session: str | None  # id of the latest graded session it was injected in
    last_credit: float | None  # credited reward in that session

    def as_json(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "category": self.category,
            "status": self.status,
            "n": self.n,
            "alpha": self.alpha,
            "beta": self.beta,
            "mean": self.mean,
            "ci_low": self.ci_low,
            "ci_high": self.ci_high,
        }


@dataclass(frozen=True)
class PosteriorTable:
    rows: tuple[LessonRow, ...]
    settings: CreditSettings
    sessions: int  # session events in the log
    graded: int

    def row(self, path: str) -> LessonRow | None:
        for row in self.rows:
            if row.path == path:
                return row
        return None

    def as_json(self) -> dict[str, Any]:
        return {
            "lessons": [row.as_json() for row in self.rows],
            "sessions": self.sessions,
            "strategy": self.settings.strategy,
            "floor": self.settings.floor,
        }


@dataclass(frozen=True)
class SessionSummary:
    session_id: str
    timestamp: str | None
    category: str | None
    base_reward: float | None  # latest grade; None = pending
    grader: str | None
    n_lessons: int
    mean_salience: float
    journal_path: str | None
    line: int

    @property
    def pending(self) -> bool:
        return self.base_reward is None


@dataclass(frozen=True, eq=False)
class SessionTable:
    """Every session as columns, in log order (row i is the i-th session read). A million
    sessions cost a few arrays here, not a million objects; `summary(row)` builds one."""

    session_ids: Sequence[str]
    timestamps: Sequence[str | None]
    categories: Sequence[str | None]
    base: npt.NDArray[np.float64]  # latest grade; NaN = pending
    graders: Sequence[str | None]  # who gave the grade in force; None while pending
    n_lessons: npt.NDArray[np.int64]
    mean_salience: npt.NDArray[np.float64]
    journal_paths: Sequence[str | None]
    lines: npt.NDArray[np.int64]  # line of the session's record in sessions.jsonl

    def __len__(self) -> int:
        return len(self.base)

    def summary(self, row: int) -> SessionSummary:
        base = float(self.base[row])
        return SessionSummary(
            session_id=self.session_ids[row],
            timestamp=self.timestamps[row],
            category=self.categories[row],
            base_reward=None if math.isnan(base) else base,
            grader=self.graders[row],
            n_lessons=int(self.n_lessons[row]),
            mean_salience=float(self.mean_salience[row]),
            journal_path=self.journal_paths[row],
            line=int(self.lines[row]),
        )


@dataclass(frozen=True)
class LessonUsage:
    injected: int  # sessions it was injected in (graded or not)
    salient: int  # of those, sessions where at least one keyword hit (salience > 0)
    mean_salience: float


@dataclass(frozen=True)
class GradeRecord:
    base_reward: float
    grader: str
    timestamp: str | None
    note: str | None
    line: int


@dataclass(frozen=True)
class LessonCredit:
    """Why one lesson got the credit it got in one session."""

    path: str
    salience: float
    weight: float
    reward: float  # credited reward (seed: base * w; else base); 0 when pending
    alpha_delta: float
    beta_delta: float
    alpha_before: float
    beta_before: float
    alpha_after: float
    beta_after: float
    breakdown: SalienceBreakdown | None  # None when the journal or the lesson is not available
    salience_missing: bool = False
    note: str | None = None  # why there is no breakdown, or why it disagrees with the stored salience

    def as_json(self) -> dict[str, Any]:
        keywords = []
        if self.breakdown is not None:
            keywords = [
                {"keyword": k.keyword, "hit": k.hit, "count": k.count, "offsets": list(k.offsets)}
                for k in self.breakdown.keywords
            ]
        return {
            "path": self.path,
            "salience": self.salience,
            "weight": self.weight,
            "reward": self.reward,
            "alpha_delta": self.alpha_delta,
            "beta_delta": self.beta_delta,
            "keywords": keywords,
        }


@dataclass(frozen=True)
class Explanation:
    session: SessionSummary
    base_reward: float | None  # the grade used (latest, or the what-if one)
    settings: CreditSettings
    lessons: tuple[LessonCredit, ...]
    journal_text: str | None
    journal_problem: str | None
    grades: tuple[GradeRecord, ...]

    def as_json(self) -> dict[str, Any]:
        return {
            "session_id": self.session.session_id,
            "base_reward": self.base_reward,
            "strategy": self.settings.strategy,
            "floor": self.settings.floor,
            "lessons": [lesson.as_json() for lesson in self.lessons],
        }


@dataclass(frozen=True)
class Selection:
    session_id: str
    candidates: tuple[str, ...]
    selected: tuple[str, ...]
    propensity: dict[str, float]
    draws: dict[str, float]
    k: int
    seed: int


@dataclass
class _Cache:
    data: FoldData | None = None
    posteriors: dict[CreditSettings, Posterior] = field(default_factory=dict)


class Workspace:
    """A workspace folder: lessons, the event log, settings. See SPEC 2."""

    def __init__(
        self,
        root: Path | str = ".",
        *,
        clock: Callable[[], dt.datetime] = utc_now,
        allow_outside_journals: bool = False,
        use_cache: bool = True,
        store: EventStore | None = None,
    ) -> None:
        self.root = Path(root).resolve()
        self.state_dir = self.root / STATE_DIR
        # the event log: the workspace's JSONL file unless another store is given (core/eventstore.py)
        self.log: EventStore = JsonlStore(self.state_dir / "sessions.jsonl") if store is None else store
        self.state_path = self.state_dir / "bandit-state.json"
        self.config_path = self.state_dir / "config.toml"
        self.clock = clock
        self.allow_outside_journals = allow_outside_journals
        try:
            self.config: Config = load_config(self.config_path)
        except ConfigError as exc:
            raise WorkspaceError(str(exc)) from None
        self._library: Library | None = None
        self._index = LogIndex()
        self._fingerprint = "0:"
        self._tail_problem: LogProblem | None = None
        self._partial = False  # the last line read had no newline yet
        self._log_cache = LogCache(self.log) if use_cache and isinstance(self.log, EventLog) else None
        self._cache = _Cache()
        self.version = 0  # bumped whenever the log read so far changes

    # ---------------------------------------------------------------- reading

    @property
    def settings(self) -> CreditSettings:
        return self.config.credit

    def library(self, reload: bool = False) -> Library:
        if self._library is None or reload:
            cache = self.state_dir / ".cache" / "lessons.msgpack" if self._log_cache is not None else None
            self._library = load_library(self.root, cache)
        return self._library

    def refresh(self) -> bool:
        """Read what was appended to the log since the last read. True when anything changed."""
        size = self.log.size()
        index = self._index
        reset = False
        if size < index.end or (index.end and self.log.fingerprint(index.end) != self._fingerprint):
            # The log was replaced or cut: start over rather than trust a stale prefix.
            self._index = index = LogIndex()
            self._partial = False
            reset = True
        if index.end == 0 and self._log_cache is not None and size >= MIN_NEW_BYTES:
            loaded = self._log_cache.load()
            if loaded is not None:
                self._index, self._fingerprint, self._partial = loaded
                index = self._index
                reset = True
        if size == index.end and self._tail_problem is None and not reset:
            return False
        started_at = index.end
        changed = reset
        tail_problem = None
        with _gc_paused():  # millions of small containers: the cyclic GC would rescan them many times
            for result in self.log.read_chunks(
                index.end,
                index.lines + 1,
                decode=decode_raw,
                continues_line=self._partial,
                decode_lines=decode_raw_lines,
            ):
                index.problems.extend(sorted(result.problems + index.add_many(result.events), key=lambda p: p.line))
                changed = changed or bool(result.events or result.problems)
                tail_problem = result.tail_problem
                if result.end != index.end:
                    index.end = result.end
                    index.lines += result.lines
                    self._partial = result.partial
        changed = changed or tail_problem != self._tail_problem
        self._tail_problem = tail_problem
        prepared = None
        if index.end != started_at:
            self._fingerprint = self.log.fingerprint(index.end)
            if index.end - started_at >= MIN_NEW_BYTES:
                index.settle()
                if self._log_cache is not None:
                    prepared = self._with_block_sums(index)
                    self._log_cache.save(index, self._fingerprint, self._partial)
        if changed:
            self._cache = _Cache()
            self._cache.data = prepared
            self.version += 1
        return changed

    def _with_block_sums(self, index: LogIndex) -> FoldData:
        """A snapshot whose per-arm block sums (and, for the current settings, reward counts and
        last sessions) are computed, so that the parsed-log cache carries them: a later process
        then folds a big log without a pass over its entries."""
        data = index.snapshot()
        post = fold(data, self.settings)
        _ = data.stats, post.rewarded, post.last_session, fold_usage(data)
        return data

    def data(self) -> FoldData:
        if self._cache.data is None:
            self.refresh()
        if self._cache.data is None:
            self._cache.data = self._index.snapshot()
        return self._cache.data

    def log_problems(self) -> list[LogProblem]:
        data = self.data()
        problems = list(data.problems)
        if self._tail_problem is not None:
            problems.append(self._tail_problem)
        return sorted(problems, key=lambda p: p.line)

    def lesson_problems(self) -> tuple[LessonProblem, ...]:
        return self.library().problems

    def posterior(self, settings: CreditSettings | None = None, base: np.ndarray | None = None) -> Posterior:
        settings = settings or self.settings
        if base is not None:
            return fold(self.data(), settings, base)
        cached = self._cache.posteriors.get(settings)
        if cached is None:
            cached = self._cache.posteriors[settings] = fold(self.data(), settings)
        return cached

    def arm_ids(self) -> list[str]:
        """Every lesson in the library, then arms the log knows that the library does not."""
        ids = [lesson.id for lesson in self.library().lessons]
        known = set(ids)
        ids += [arm for arm in self.data().arm_ids if arm not in known]
        return ids

    def posteriors(
        self, settings: CreditSettings | None = None, base: np.ndarray | None = None, *, details: bool = True
    ) -> PosteriorTable:
        """The status table: every lesson of the library and every arm of the log.

        `details=False` skips each lesson's reward count and last credited session (two more
        passes over every entry), which `status` does not print."""
        settings = settings or self.settings
        data = self.data()
        post = self.posterior(settings, base)
        position = post.index()
        lessons = self.library().by_id()
        ids = self.arm_ids()
        alpha = np.empty(len(ids))
        beta = np.empty(len(ids))
        n = np.zeros(len(ids), dtype=np.int64)
        rewarded = np.zeros(len(ids), dtype=np.int64)
        last = np.full(len(ids), -1, dtype=np.int64)
        a0, b0 = settings.prior_alpha, settings.prior_beta
        for i, arm in enumerate(ids):
            j = position.get(arm)
            if j is None:
                alpha[i], beta[i] = a0, b0
            else:
                alpha[i], beta[i], n[i] = post.alpha[j], post.beta[j], post.n[j]
                if details:
                    rewarded[i], last[i] = post.rewarded[j], post.last_session[j]
        low, high = beta_mod.interval(alpha, beta)
        mean = alpha / (alpha + beta)
        session_base = data.base if base is None else base
        # each lesson's latest credited session and the reward it was credited there
        credited = np.flatnonzero(last >= 0)
        arm_of = np.array([position[ids[i]] for i in credited.tolist()], dtype=np.int64)
        salience = salience_in(data, last[credited], arm_of)
        w = credit_mod.weight(salience, settings.floor)
        credits = credit_mod.credited_reward(session_base[last[credited]], w, settings.strategy)
        last_credits = dict(zip(credited.tolist(), np.asarray(credits, dtype=np.float64).tolist(), strict=True))
        session_ids = self._index.session_ids if len(credited) else []
        rows = []
        for i, arm in enumerate(ids):
            lesson = lessons.get(arm)
            last_credit = last_credits.get(i)
            last_id = session_ids[int(last[i])] if last_credit is not None else None
            rows.append(
                LessonRow(
                    path=arm,
                    title=lesson.title if lesson else arm,
                    category=lesson.category if lesson else arm.split("/")[0] if "/" in arm else "",
                    status=lesson.status if lesson else MISSING,
                    n=int(n[i]),
                    alpha=float(alpha[i]),
                    beta=float(beta[i]),
                    mean=float(mean[i]),
                    ci_low=float(low[i]),
                    ci_high=float(high[i]),
                    rewarded=int(rewarded[i]),
                    last_session=last_id,
                    last_credit=last_credit,
                )
            )
        return PosteriorTable(tuple(rows), settings, data.n_sessions, post.graded_sessions)

    def lesson_usage(self) -> dict[str, LessonUsage]:
        """Per arm: sessions injected in, how many of those it was salient in, mean salience."""
        data = self.data()
        usage = fold_usage(data)
        return {
            arm: LessonUsage(count, salient, total / count if count else 0.0)
            for arm, count, salient, total in zip(
                data.arm_ids, usage.injected.tolist(), usage.salient.tolist(), usage.salience.tolist(), strict=True
            )
        }

    def p_top_k(
        self, settings: CreditSettings | None = None, k: int | None = None, seed: int = 0, draws: int = 2000
    ) -> dict[str, float]:
        """P(each active lesson lands in a top-k Thompson draw among all active lessons)."""
        table = self.posterior(settings)
        position = table.index()
        active = [lesson.id for lesson in self.library().lessons if lesson.status == "active"]
        a0, b0 = (settings or self.settings).prior_alpha, (settings or self.settings).prior_beta
        alpha = np.array([table.alpha[position[i]] if i in position else a0 for i in active])
        beta = np.array([table.beta[position[i]] if i in position else b0 for i in active])
        probability = beta_mod.p_top_k(alpha, beta, k or self.config.k, np.random.default_rng(seed), draws)
        return {lesson_id: float(p) for lesson_id, p in zip(active, probability, strict=True)}

    def sessions(self) -> list[SessionSummary]:
        table = self.session_table()
        return [table.summary(row) for row in range(len(table))]

    def session_table(self) -> SessionTable:
        """Every session as columns (see SessionTable); what a view of a big log should use."""
        data = self.data()
        counts = np.diff(data.session_start)
        totals = np.bincount(data.entry_session, weights=data.entry_salience, minlength=data.n_sessions)
        with np.errstate(invalid="ignore", divide="ignore"):
            means = np.where(counts > 0, totals / np.maximum(counts, 1), 0.0)
        index = self._index
        n = data.n_sessions
        return SessionTable(
            session_ids=index.session_ids[:n],
            timestamps=index.session_times[:n],
            categories=index.session_categories[:n],
            base=data.base,
            graders=data.graders,
            n_lessons=counts.astype(np.int64),
            mean_salience=means,
            journal_paths=index.session_journals[:n],
            lines=np.asarray(index.session_lines[:n], dtype=np.int64),
        )

    def _summary(self, row: int, data: FoldData) -> SessionSummary:
        session = self._index.session(row)
        base = data.base[row]
        sal = session.saliences
        return SessionSummary(
            session_id=session.session_id,
            timestamp=session.timestamp,
            category=session.category,
            base_reward=None if math.isnan(base) else float(base),
            grader=data.grader(row),
            n_lessons=len(session.lesson_ids),
            mean_salience=sum(sal) / len(sal) if sal else 0.0,
            journal_path=session.journal_path,
            line=int(self._index.session_lines[row]),
        )

    def session(self, session_id: str) -> SessionSummary:
        data = self.data()
        row = self._index.row_of(session_id)
        if row is None:
            raise WorkspaceError(f"unknown session {session_id!r}")
        return self._summary(row, data)

    def session_event(self, session_id: str) -> SessionEvent:
        self.data()
        row = self._index.row_of(session_id)
        if row is None:
            raise WorkspaceError(f"unknown session {session_id!r}")
        return self._index.session(row)

    def grade_history(self, session_id: str) -> list[GradeRecord]:
        """Every grade the session has had, oldest first; the last one is in force."""
        self.data()
        row = self._index.row_of(session_id)
        if row is None:
            raise WorkspaceError(f"unknown session {session_id!r}")
        session = self._index.session(row)
        history = []
        if session.base_reward is not None:
            grader = session.grader or ("imported" if session.published_shape else "heuristic")
            history.append(
                GradeRecord(
                    session.base_reward,
                    grader,
                    session.timestamp,
                    None,
                    int(self._index.session_lines[row]),
                )
            )
        for line, grade in self._index.grades:
            if grade.session_id == session_id:
                history.append(GradeRecord(grade.base_reward, grade.grader, grade.timestamp, grade.note, line))
        return history

    def selections(self) -> list[tuple[int, Any]]:
        self.data()
        return list(self._index.selections)

    def journal_text(self, journal_path: str | None) -> tuple[str | None, str | None]:
        """(text, problem): the journal a session points to, if it can and may be read."""
        if not journal_path:
            return None, "the session names no journal"
        path = Path(journal_path)
        if not path.is_absolute():
            path = self.root / path
        resolved = path.resolve()
        if not self.allow_outside_journals and not resolved.is_relative_to(self.root):
            return (
                None,
                f"journal {journal_path} is outside the workspace (not read without --allow-outside)",
            )
        try:
            with open(resolved, "rb") as handle:
                raw = handle.read(JOURNAL_READ_LIMIT + 1)
        except FileNotFoundError:
            return None, f"journal {journal_path} not found"
        except OSError as exc:
            return None, f"journal {journal_path}: {exc.strerror}"
        problem = None
        if len(raw) > JOURNAL_READ_LIMIT:
            raw = raw[:JOURNAL_READ_LIMIT]
            problem = f"journal {journal_path} is larger than {JOURNAL_READ_LIMIT >> 20} MB; only its start is shown"
        return raw.decode("utf-8", errors="replace"), problem

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
        row = self._index.row_of(session_id)
        if row is None:
            raise WorkspaceError(f"unknown session {session_id!r}")
        session = self._index.session(row)
        wanted = None
        if lesson is not None:
            wanted = normalize_id(lesson)
            if wanted not in session.lesson_ids:
                raise WorkspaceError(f"lesson {lesson!r} was not injected in session {session_id!r}")
        if base_reward is not None:
            base_reward = credit_mod.check_unit(base_reward, "reward")
        used = float(base_reward if base_reward is not None else data.base[row])
        graded = not math.isnan(used)
        # From the cached posterior, only this session's entries change (core.fold.regrade):
        # a live grade preview costs microseconds, not a re-fold of the whole log.
        current = self.posterior(settings)
        after = current if used == data.base[row] else regrade(current, row, used if graded else None)
        before = regrade(current, row, None)
        position = after.index()
        text, problem = self.journal_text(session.journal_path) if with_journal else (None, None)
        lessons_by_id = self.library().by_id()
        breakdowns: dict[str, SalienceBreakdown] = {}
        if text is not None:
            present = [(lid, lessons_by_id[lid].keywords) for lid in session.lesson_ids if lid in lessons_by_id]
            breakdowns = {b.lesson_id: b for b in salience_breakdowns(text, present)}
        credits = []
        for i, (lid, sal) in enumerate(zip(session.lesson_ids, session.saliences, strict=True)):
            if wanted is not None and lid != wanted:
                continue
            j = position[lid]
            w = float(credit_mod.weight(sal, settings.floor))
            reward = float(credit_mod.credited_reward(used, w, settings.strategy)) if graded else 0.0
            note = None
            breakdown = breakdowns.get(lid)
            if text is not None and lid not in lessons_by_id:
                note = "lesson no longer in the library: no keyword breakdown"
            elif breakdown is not None and abs(breakdown.salience - sal) > 1e-9:
                note = f"journal now gives salience {breakdown.salience:.3f}; the log's {sal:.3f} is what counts"
            if settings.decay < 1.0:  # the session's weight depends on its place: measure it
                alpha_delta = float(after.alpha[j] - before.alpha[j])
                beta_delta = float(after.beta[j] - before.beta[j])
            elif graded:  # the formula itself, free of the rounding of a difference
                d_alpha, d_beta = credit_mod.credit(used, w, settings.strategy)
                alpha_delta, beta_delta = float(d_alpha), float(d_beta)
            else:
                alpha_delta = beta_delta = 0.0
            credits.append(
                LessonCredit(
                    path=lid,
                    salience=sal,
                    weight=w,
                    reward=reward,
                    alpha_delta=alpha_delta,
                    beta_delta=beta_delta,
                    alpha_before=float(before.alpha[j]),
                    beta_before=float(before.beta[j]),
                    alpha_after=float(after.alpha[j]),
                    beta_after=float(after.beta[j]),
                    breakdown=breakdown,
                    salience_missing=i in session.missing_salience,
                    note=note,
                )
            )
        summary = self._summary(row, data)
        return Explanation(
            session=summary,
            base_reward=None if not graded else float(used),
            settings=settings,
            lessons=tuple(credits),
            journal_text=text,
            journal_problem=problem,
            grades=tuple(self.grade_history(session_id)),
        )

    # ---------------------------------------------------------------- analysis

    def keyword_coverage(self, max_journals: int = 2000) -> tuple[int, dict[str, float]]:
        """(journals read, share of them each library keyword hits), over the latest journals."""
        lessons = self.library().lessons
        matcher = KeywordMatcher(k for lesson in lessons for k in lesson.keywords)
        counts: dict[str, int] = {}
        read = 0
        self.data()
        for journal_path in reversed(self._index.session_journals):
            if read >= max_journals:
                break
            text, _ = self.journal_text(journal_path)
            if text is None:
                continue
            read += 1
            for keyword in matcher.scan(text):
                counts[keyword] = counts.get(keyword, 0) + 1
        return read, {k: c / read for k, c in counts.items()} if read else {}

    def prefixed_id_count(self) -> int:
        """Lesson entries in the raw log written with a 'lessons/' prefix (merged on read)."""
        try:
            raw = self.log.path.read_bytes() if isinstance(self.log, EventLog) else b"".join(self.log.raw_lines())
        except (OSError, StoreError):
            return 0
        return len(re.findall(rb'"(?:path|arm_id)"\s*:\s*"(?:\./)?lessons/', raw))

    def missing_salience_count(self) -> int:
        self.data()
        return sum(len(positions) for positions in self._index.missing_salience.values())

    def broad_keywords(self, share: float = BROAD_KEYWORD_SHARE) -> dict[str, str]:
        """Lessons with a keyword that hits more than `share` of journals, with the reason."""
        read, coverage = self.keyword_coverage()
        if read < 10:
            return {}
        found = {}
        for lesson in self.library().lessons:
            worst = max(((coverage.get(casekey(k), 0.0), k) for k in counted_keywords(lesson.keywords)), default=None)
            if worst is not None and worst[0] > share:
                found[lesson.id] = f"keyword {worst[1]!r} matches {worst[0]:.0%} of journals: too broad"
        return found

    def candidacies(self) -> list[Candidacy]:
        """(session, lesson, propensity) for every candidate of every logged selection."""
        self.data()
        out = []
        arm_index = self._index.arm_index
        for _, selection in self._index.selections:
            row = self._index.session_index.get(selection.session_id or "")
            if row is None:
                continue
            for lesson_id, propensity in selection.propensity.items():
                arm = arm_index.get(lesson_id)
                if arm is not None and 0.0 <= propensity <= 1.0:
                    out.append(Candidacy(row, arm, propensity))
        return out

    def loo(self, *, min_with: int = MIN_WITH, min_without: int = MIN_WITHOUT, write: bool = True) -> list[LooResult]:
        """Leave-one-out lift per lesson; written to loo-results.json (SPEC 8) unless write=False."""
        data = self.data()
        categories = self._index.session_categories
        existing = {lesson.id for lesson in self.library().lessons}
        results = leave_one_out(
            data,
            categories,
            self.candidacies(),
            min_with=min_with,
            min_without=min_without,
            existing=existing,
            broad_keywords=self.broad_keywords(),
        )
        if write:
            payload = loo_payload(results, self.now_iso(), min_with, min_without)
            atomic_write(self.state_dir / "loo-results.json", msgspec.json.format(msgspec.json.encode(payload)) + b"\n")
        return results

    # ---------------------------------------------------------------- selection

    def candidates(self, context: str) -> list[Lesson]:
        """Active lessons whose keywords or patterns match the context text."""
        active = [lesson for lesson in self.library().lessons if lesson.status == "active"]
        matcher = KeywordMatcher(k for lesson in active for k in lesson.keywords)
        found = matcher.scan(context)
        chosen = []
        for lesson in active:
            if breakdown_from_scan(lesson.id, lesson.keywords, found).hits:
                chosen.append(lesson)
                continue
            if any(pattern_matches(pattern, context) for pattern in lesson.patterns):
                chosen.append(lesson)
        return chosen

    def select(
        self,
        context: str,
        *,
        k: int | None = None,
        seed: int | None = None,
        session_id: str | None = None,
        log: bool = True,
        draws: int = 4000,
    ) -> Selection:
        """Thompson top-k among matching lessons; logs a selection event with propensities."""
        k = self.config.k if k is None else k
        if k < 1:
            raise WorkspaceError(f"k must be at least 1, got {k}")
        if seed is None:
            seed = secrets.randbelow(2**31)
        if session_id is not None:
            _check_session_id(session_id)
        else:
            session_id = f"{self.clock().strftime('%Y%m%dT%H%M%S')}-{secrets.token_hex(3)}"
        candidates = self.candidates(context)
        table = self.posterior()
        position = table.index()
        a0, b0 = self.settings.prior_alpha, self.settings.prior_beta
        alpha = np.array([table.alpha[position[c.id]] if c.id in position else a0 for c in candidates])
        beta = np.array([table.beta[position[c.id]] if c.id in position else b0 for c in candidates])
        rng = np.random.default_rng(seed)
        sample = beta_mod.thompson_draw(alpha, beta, rng) if candidates else np.zeros(0)
        picked = beta_mod.top_k(sample, k)
        propensity = beta_mod.p_top_k(alpha, beta, k, np.random.default_rng([seed, 1]), draws)
        selection = Selection(
            session_id=session_id,
            candidates=tuple(c.id for c in candidates),
            selected=tuple(candidates[i].id for i in picked),
            propensity={c.id: float(p) for c, p in zip(candidates, propensity, strict=True)},
            draws={c.id: float(d) for c, d in zip(candidates, sample, strict=True)},
            k=k,
            seed=seed,
        )
        if log:
            with self.log.locked():
                self.refresh()
                if self._index.row_of(session_id) is not None:
                    raise WorkspaceError(f"session {session_id!r} is already recorded")
                self.log.append_locked(
                    encode(
                        {
                            "type": SELECTION,
                            "session_id": session_id,
                            "timestamp": iso(self.clock()),
                            "candidates": list(selection.candidates),
                            "selected": list(selection.selected),
                            "propensity": selection.propensity,
                            "k": k,
                            "seed": seed,
                        }
                    )
                )
            self.refresh()
        return selection

    # ---------------------------------------------------------------- writing

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
    ) -> Explanation:
        """Log a session: salience from the journal, credit under the current settings."""
        _check_session_id(session_id)
        if reward is not None:
            reward = credit_mod.check_unit(reward, "reward")
        if not lessons:
            raise WorkspaceError("no lessons given (--lessons ID ...)")
        journal = Path(journal)
        journal_file = journal if journal.is_absolute() else Path.cwd() / journal
        try:
            raw = journal_file.read_bytes()
        except FileNotFoundError:
            raise WorkspaceError(f"journal not found: {journal}") from None
        except IsADirectoryError:
            raise WorkspaceError(f"journal is a directory: {journal}") from None
        except OSError as exc:
            raise WorkspaceError(f"cannot read journal {journal}: {exc.strerror}") from None
        text = raw.decode("utf-8", errors="replace")
        library = self.library().by_id()
        ids = [normalize_id(lesson) for lesson in lessons]
        unknown = [lesson for lesson, lid in zip(lessons, ids, strict=True) if lid not in library]
        if unknown:
            raise WorkspaceError(f"not in the lesson library: {', '.join(unknown)}")
        duplicates = sorted({lid for lid in ids if ids.count(lid) > 1})
        if duplicates:
            raise WorkspaceError(f"lesson given twice: {', '.join(duplicates)}")
        breakdowns = salience_breakdowns(text, [(lid, library[lid].keywords) for lid in ids])
        resolved = journal_file.resolve()
        stored_path = (
            resolved.relative_to(self.root).as_posix() if resolved.is_relative_to(self.root) else str(resolved)
        )
        settings = self.settings
        with self.log.locked():
            self.refresh()
            if self._index.row_of(session_id) is not None:
                raise WorkspaceError(f"session {session_id!r} is already recorded")
            propensity = self._selection_propensity(session_id)
            entries = []
            for b in breakdowns:
                w = float(credit_mod.weight(b.salience, settings.floor))
                entry: dict[str, Any] = {
                    "path": b.lesson_id,
                    "salience": b.salience,
                    "reward": None
                    if reward is None
                    else float(credit_mod.credited_reward(reward, w, settings.strategy)),
                    "keywords": len(b.keywords),
                    "hits": b.hit_keywords,
                }
                if b.lesson_id in propensity:
                    entry["propensity"] = propensity[b.lesson_id]
                entries.append(entry)
            event: dict[str, Any] = {
                "type": SESSION,
                "session_id": session_id,
                "timestamp": timestamp or iso(self.clock()),
                "outcome": reward,
                "base_reward": reward,
                "lessons": entries,
                "journal_path": stored_path,
                "journal_sha256": hashlib.sha256(raw).hexdigest(),
                "category": category,
                "strategy": settings.strategy,
                "floor": settings.floor,
                "grader": grader if reward is not None else None,
            }
            self.log.append_locked(encode(event))
            self.refresh()
            self.write_state()
        return self.explain(session_id)

    def _selection_propensity(self, session_id: str) -> dict[str, float]:
        for _, selection in reversed(self._index.selections):
            if selection.session_id == session_id:
                return dict(selection.propensity)
        return {}

    def grade(self, session_id: str, reward: float, *, grader: str = "manual", note: str | None = None) -> GradeRecord:
        """Append a grade; the latest grade of a session is the one that counts."""
        reward = credit_mod.check_unit(reward, "reward")
        if not grader or "\n" in grader:
            raise WorkspaceError("grader must be a non-empty single line")
        with self.log.locked():
            self.refresh()
            if self._index.row_of(session_id) is None:
                raise WorkspaceError(f"unknown session {session_id!r}")
            stamp = iso(self.clock())
            event: dict[str, Any] = {
                "type": GRADE,
                "session_id": session_id,
                "base_reward": reward,
                "grader": grader,
                "timestamp": stamp,
            }
            if note:
                event["note"] = note
            self.log.append_locked(encode(event))
            self.refresh()
            self.write_state()
        return self.grade_history(session_id)[-1]

    def undo_grade(self, session_id: str, *, note: str | None = None) -> GradeRecord:
        """Append the grade before the latest one back, atomically (checked under the log lock,
        so a grade another process appended meanwhile is what gets undone, knowingly)."""
        with self.log.locked():
            self.refresh()
            if self._index.row_of(session_id) is None:
                raise WorkspaceError(f"unknown session {session_id!r}")
            history = self.grade_history(session_id)
            if len(history) < 2:
                state = "pending" if not history else "graded once"
                raise WorkspaceError(
                    f"nothing to undo: session {session_id!r} is {state}; a grade cannot make it pending"
                )
            latest, previous = history[-1], history[-2]
            event: dict[str, Any] = {
                "type": GRADE,
                "session_id": session_id,
                "base_reward": previous.base_reward,
                "grader": previous.grader,
                "timestamp": iso(self.clock()),
                "note": note or f"undo: {latest.base_reward:g} back to {previous.base_reward:g}",
            }
            self.log.append_locked(encode(event))
            self.refresh()
            self.write_state()
        return self.grade_history(session_id)[-1]

    def add_prior(self, arms: dict[str, tuple[float, float, int]], rewards: dict[str, int] | None = None) -> None:
        """Log starting alpha/beta/n (and gptme's reward counts) for arms, e.g. imported evidence."""
        rewards = rewards or {}
        with self.log.locked():
            payload = {
                arm: {"alpha": a, "beta": b, "n": n, "rewards": rewards.get(arm, 0)} for arm, (a, b, n) in arms.items()
            }
            self.log.append_locked(encode({"type": PRIOR, "timestamp": iso(self.clock()), "arms": payload}))
            self.refresh()
            self.write_state()

    def replay(self, strategy: str | None = None, floor: float | None = None, *, write: bool = False) -> PosteriorTable:
        """Re-fold under other settings; with `write` they become the workspace's settings."""
        try:
            settings = self.settings.with_(strategy=strategy, floor=floor)
        except ValueError as exc:
            raise WorkspaceError(str(exc)) from None
        if write:
            with self.log.locked():
                self.config = Config(settings, self.config.k, self.config.extra)
                save_config(self.config_path, self.config)
                self.refresh()
                self.write_state()
        return self.posteriors(settings, details=False)

    def write_state(self) -> None:
        """Rewrite `bandit-state.json` (gptme-sessions shape) from the fold, atomically."""
        existing: dict[str, Any] = {}
        try:
            loaded = msgspec.json.decode(self.state_path.read_bytes())
            if isinstance(loaded, dict):
                existing = loaded
        except (OSError, msgspec.DecodeError):
            existing = {}
        now = self.now_iso()
        post = self.posterior()
        old_arms = existing.get("arms") if isinstance(existing.get("arms"), dict) else {}
        assert isinstance(old_arms, dict)
        arms: dict[str, Any] = {}
        stamps = self.arms_last_updated(post)
        columns = zip(post.alpha.tolist(), post.beta.tolist(), post.n.tolist(), post.rewarded.tolist(), strict=True)
        for arm, stamp, (alpha, beta, n, rewarded) in zip(post.arm_ids, stamps, columns, strict=True):
            entry = dict(old_arms.get(arm, {})) if isinstance(old_arms.get(arm), dict) else {}
            entry.update(
                arm_id=arm,
                alpha=alpha,
                beta=beta,
                total_selections=n,
                total_rewards=rewarded,
                last_updated=stamp or entry.get("last_updated") or now,
            )
            arms[arm] = entry
        state = dict(existing)
        state.update(
            arms=arms,
            total_sessions=post.graded_sessions,
            created=existing.get("created") or now,
            last_updated=now,
        )
        atomic_write(self.state_path, msgspec.json.format(msgspec.json.encode(state), indent=2) + b"\n")

    def now_iso(self) -> str:
        return iso(self.clock())

    def arms_last_updated(self, post: Posterior) -> list[str | None]:
        """Per arm: the timestamp of the latest graded session it was credited in (None if none)."""
        rows = post.last_session.tolist()
        times = self._index.session_times if max(rows, default=-1) >= 0 else []
        return [times[row] if row >= 0 else None for row in rows]

    def save_settings(self, settings: CreditSettings) -> None:
        self.replay(settings.strategy, settings.floor, write=True)


@contextlib.contextmanager
def _gc_paused() -> Iterator[None]:
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _check_session_id(session_id: str) -> None:
    if not session_id or not session_id.strip():
        raise WorkspaceError("session id must not be empty")
    if any(ch in session_id for ch in "\n\r\x00"):
        raise WorkspaceError("session id must be a single line")


__all__ = [
    "Explanation",
    "GradeRecord",
    "LessonCredit",
    "LessonRow",
    "LessonUsage",
    "PosteriorTable",
    "Selection",
    "SessionSummary",
    "StoreError",
    "Workspace",
    "WorkspaceError",
]
