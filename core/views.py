"""Read models: the lesson table, the session table and a session's explanation, built from a fold snapshot.

The result types the CLI and the dashboard show, and pure functions that build them from a
snapshot (`FoldData`), its posterior and what the log says about sessions; `lesson_credit.core.workspace`
gathers the inputs and calls these.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
from msgspec import Struct
from msgspec.structs import replace

from lesson_credit.core.bandit.fold import Posterior, regrade
from lesson_credit.core.base.errors import WorkspaceError
from lesson_credit.core.base.ids import lesson_named
from lesson_credit.core.base.numbers import listed
from lesson_credit.core.library.lessons import MISSING, Lesson
from lesson_credit.core.library.salience import (
    OFFSETS_LISTED,
    KeywordHit,
    SalienceBreakdown,
    ignored_wildcards,
    keyword_json,
    listed_offsets,
    salience_breakdowns,
    wildcards_beyond,
)
from lesson_credit.core.log.events import GradeEvent, SessionEvent
from lesson_credit.core.log.snapshot import FoldData, salience_in
from lesson_credit.core.log.usage import lesson_usage as usage_by_arm
from lesson_credit.core.model import credit as credit_mod
from lesson_credit.core.model import intervals as intervals_mod
from lesson_credit.core.model.settings import CreditSettings
from lesson_credit.core.model.sources import OUTCOME, SOURCES, source_of


class LessonRow(Struct, frozen=True):
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


class PosteriorTable(Struct, frozen=True):
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


class SessionSummary(Struct, frozen=True):
    session_id: str
    timestamp: str | None
    category: str | None  # the name of its kind of work, as sessions are grouped (`KindNames.name`)
    base_reward: float | None  # latest grade; None = pending
    grader: str | None
    n_lessons: int
    mean_salience: float | None  # None: no lesson was injected
    journal_path: str | None
    line: int
    recorded_category: str | None = None  # the category as the log has it

    @property
    def pending(self) -> bool:
        return self.base_reward is None


class SessionTable(Struct, frozen=True, eq=False):
    """Every session as columns, in log order (row i is the i-th session read). A million
    sessions cost a few arrays here, not a million objects; `summary(row)` builds one."""

    session_ids: Sequence[str]
    timestamps: Sequence[str | None]
    categories: Sequence[str | None]  # the name of each session's kind of work (`KindNames.names`)
    base: npt.NDArray[np.float64]  # latest grade; NaN = pending
    graders: Sequence[str | None]  # who gave the grade in force; None while pending
    n_lessons: npt.NDArray[np.int64]
    mean_salience: npt.NDArray[np.float64]  # NaN: no lesson was injected
    journal_paths: Sequence[str | None]
    lines: npt.NDArray[np.int64]  # line of the session's record in sessions.jsonl
    recorded_categories: Sequence[str | None]  # each session's category as the log has it

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
            mean_salience=None if math.isnan(mean := float(self.mean_salience[row])) else mean,
            journal_path=self.journal_paths[row],
            line=int(self.lines[row]),
            recorded_category=self.recorded_categories[row],
        )


class LessonUsage(Struct, frozen=True):
    injected: int  # sessions it was injected in (graded or not)
    salient: int  # of those, sessions where at least one keyword hit (salience > 0)
    mean_salience: float


class GradeRecord(Struct, frozen=True):
    base_reward: float | None  # None: a retraction (its source's score withdrawn)
    grader: str
    timestamp: str | None
    note: str | None
    line: int
    source: str | None = None  # the reward source it belongs to (core.model.sources)


class SourceScore(Struct, frozen=True):
    """One reward source's score of a session (docs/records.md): its latest event in the log, else the
    score a gptme-sessions record gives it. `score` None: withdrawn (a retraction)."""

    source: str  # core.model.sources.SOURCES
    score: float | None
    grader: str  # who gave it: a grader's name, or record:SOURCE for a record's score
    line: int | None  # the event's line in the log; None for a record's score
    timestamp: str | None
    in_force: bool = False  # the score the posteriors use (the priority's first source with a score)

    def as_json(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "score": self.score,
            "grader": self.grader,
            "line": self.line,
            "timestamp": self.timestamp,
            "in_force": self.in_force,
        }


def source_breakdown(
    session: SessionEvent,
    line: int,
    grades: Sequence[tuple[int, GradeEvent]],
    outcome: float | None,
    outside: dict[str, float],
    priority: Sequence[str],
    outside_time: str | None = None,
) -> tuple[SourceScore, ...]:
    """Every source's score of one session, in SOURCES order, the one in force marked: the rule the
    snapshot applies to all sessions at once (core.log.snapshot.source_scores), for one session.
    `outcome`: what the record's string outcome maps to; `outside`: scores from its gptme-sessions record."""
    latest: dict[str, SourceScore] = {}
    if session.base_reward is not None:
        grader = session.grader or ("imported" if session.published_shape else "heuristic")
        source = source_of(session.grader)
        latest[source] = SourceScore(source, session.base_reward, grader, line, session.timestamp)
    if outcome is not None:
        grader = session.grader or ("imported" if session.published_shape else "heuristic")
        latest[OUTCOME] = SourceScore(OUTCOME, outcome, grader, line, session.timestamp)
    for grade_line, grade in grades:
        source = source_of(grade.grader)
        latest[source] = SourceScore(source, grade.base_reward, grade.grader, grade_line, grade.timestamp)
    for source, value in outside.items():
        if source not in latest or latest[source].score is None:
            latest[source] = SourceScore(source, value, f"record:{source}", None, outside_time)
    winner = next((s for s in priority if s in latest and latest[s].score is not None), None)
    return tuple(replace(latest[s], in_force=True) if s == winner else latest[s] for s in SOURCES if s in latest)


class LessonCredit(Struct, frozen=True):
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
    # wildcard keywords past the lesson's first WILDCARD_MAX_PER_LESSON: how many, those the journal mentions
    # (of the first that many of them, looked for), how many were not looked for
    beyond: int = 0
    ignored: tuple[KeywordHit, ...] = ()
    unchecked: int = 0
    during: bool = False  # included during the session (record --during): credited, never an effect's treatment

    def as_json(self) -> dict[str, Any]:
        hits = self.breakdown.keywords if self.breakdown is not None else ()
        keywords = [keyword_json(k) for k in hits]
        return {
            "path": self.path,
            "salience": self.salience,
            "weight": self.weight,
            "reward": self.reward,
            "alpha_delta": self.alpha_delta,
            "beta_delta": self.beta_delta,
            "during": self.during,
            "keywords": keywords,
        }


class Explanation(Struct, frozen=True):
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
            "offsets_listed": OFFSETS_LISTED,  # the most offsets a keyword lists (its `count` says how many in all)
            # by lesson with wildcard keywords past its first ones (not counted): how many, how many of them were not
            # looked for in the journal (past as many again), and those it mentions (`hits`), as explain's text says
            "ignored_keywords": {
                c.path: {
                    "beyond": c.beyond,
                    "unchecked": c.unchecked,
                    "hits": [{"keyword": k.keyword, "count": k.count, "offsets": listed_offsets(k)} for k in c.ignored],
                }
                for c in self.lessons
                if c.beyond
            },
        }


def lesson_table(
    post: Posterior,
    data: FoldData,
    library: Sequence[Lesson],
    session_ids: Callable[[], Sequence[str]],
    settings: CreditSettings,
    base: npt.NDArray[np.float64] | None = None,
    *,
    details: bool = True,
    intervals: bool = True,
    interval_cache: Path | None = None,
) -> PosteriorTable:
    """One row per lesson of the library, then per arm only the log knows: the posterior of
    `post`, or the prior for a lesson never credited. `details=False` skips each lesson's reward
    count and last credited session (two more passes over every entry). `session_ids` gives the
    log's session ids, asked for only when some lesson has a last credited session.
    `intervals=False` leaves ci_low and ci_high NaN (no scipy import: a screen's first paint
    fills them in afterwards with `beta.interval`). `interval_cache`: the file of intervals kept
    from the last call (core.model.intervals; None: computed)."""
    lessons = {lesson.id: lesson for lesson in library}
    ids = [lesson.id for lesson in library]
    known = set(ids)
    ids += [arm for arm in data.arm_ids if arm not in known]
    position = post.index()
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
    if intervals:
        low, high = intervals_mod.interval(alpha, beta, interval_cache)
    else:
        low = high = np.full(len(ids), np.nan)
    mean = alpha / (alpha + beta)
    session_base = data.base if base is None else base
    # each lesson's latest credited session and the reward it was credited there
    credited = np.flatnonzero(last >= 0)
    arm_of = np.array([position[ids[i]] for i in credited.tolist()], dtype=np.int64)
    salience = salience_in(data, last[credited], arm_of)
    w = credit_mod.weight(salience, settings.floor)
    credits = credit_mod.credited_reward(session_base[last[credited]], w, settings.strategy)
    last_credits = dict(zip(credited.tolist(), np.asarray(credits, dtype=np.float64).tolist(), strict=True))
    ids_of_sessions = session_ids() if len(credited) else []
    rows = []
    for i, arm in enumerate(ids):
        lesson = lessons.get(arm)
        last_credit = last_credits.get(i)
        last_id = ids_of_sessions[int(last[i])] if last_credit is not None else None
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


def lesson_usage(data: FoldData) -> dict[str, LessonUsage]:
    """Per arm: sessions injected in, how many of those it was salient in, mean salience."""
    usage = usage_by_arm(data)
    return {
        arm: LessonUsage(count, salient, total / count if count else 0.0)
        for arm, count, salient, total in zip(
            data.arm_ids, usage.injected.tolist(), usage.salient.tolist(), usage.salience.tolist(), strict=True
        )
    }


def session_table(
    data: FoldData,
    session_ids: Sequence[str],
    timestamps: Sequence[str | None],
    categories: Sequence[str | None],
    journal_paths: Sequence[str | None],
    lines: Any,
    names: Sequence[str | None] | None = None,
) -> SessionTable:
    """Every session of the snapshot as columns; the string columns and lines are the log's, the categories shown
    `names` (each session's kind's: `KindNames.names`; None: as logged)."""
    counts = np.diff(data.session_start)
    totals = np.bincount(data.entry_session, weights=data.entry_salience, minlength=data.n_sessions)
    with np.errstate(invalid="ignore", divide="ignore"):
        means = np.where(counts > 0, totals / np.maximum(counts, 1), np.nan)
    return SessionTable(
        session_ids=session_ids,
        timestamps=timestamps,
        categories=categories if names is None else names,
        base=data.base,
        graders=data.graders,
        n_lessons=counts.astype(np.int64),
        mean_salience=means,
        journal_paths=journal_paths,
        lines=np.asarray(lines, dtype=np.int64),
        recorded_categories=categories,
    )


def session_summary(session: SessionEvent, row: int, line: int, data: FoldData) -> SessionSummary:
    """One session's row of the session table, from its event (no pass over the other sessions)."""
    base = data.base[row]
    sal = session.saliences
    return SessionSummary(
        session_id=session.session_id,
        timestamp=session.timestamp,
        category=session.category,
        base_reward=None if math.isnan(base) else float(base),
        grader=data.grader(row),
        n_lessons=len(session.lesson_ids),
        mean_salience=sum(sal) / len(sal) if sal else None,
        journal_path=session.journal_path,
        line=line,
        recorded_category=session.category,
    )


def grade_history(
    session: SessionEvent, line: int, grades: Sequence[tuple[int, GradeEvent]], outcome: float | None = None
) -> list[GradeRecord]:
    """Every grade a session has had, oldest first: its record's own (or, without one, the
    reward its string `outcome` maps to), then its grade events (`grades`, with their lines),
    each with its reward source."""
    history = []
    own = session.base_reward if session.base_reward is not None else outcome
    if own is not None:
        grader = session.grader or ("imported" if session.published_shape else "heuristic")
        source = source_of(session.grader) if session.base_reward is not None else OUTCOME
        history.append(GradeRecord(own, grader, session.timestamp, None, line, source))
    for grade_line, grade in grades:
        record = GradeRecord(grade.base_reward, grade.grader, grade.timestamp, grade.note, grade_line)
        history.append(replace(record, source=source_of(grade.grader)))
    return history


def lesson_credits(
    session: SessionEvent,
    row: int,
    data: FoldData,
    current: Posterior,
    used: float,
    lessons: dict[str, Lesson],
    text: str | None,
    wanted: str | None = None,
) -> tuple[LessonCredit, ...]:
    """Why each lesson of a session (or only `wanted`) got its credit under `current`'s settings
    when the session's reward is `used` (NaN: pending). Keyword breakdowns come from the journal
    `text` when it was read."""
    settings = current.settings
    graded = not math.isnan(used)
    # From the cached posterior, only this session's entries change (lesson_credit.core.bandit.fold.regrade):
    # a live grade preview costs microseconds, not a re-fold of the whole log.
    after = current if used == data.base[row] else regrade(current, row, used if graded else None)
    before = regrade(current, row, None)
    position = after.index()
    breakdowns: dict[str, SalienceBreakdown] = {}
    if text is not None:
        present = [(lid, lessons[lid].keywords) for lid in session.lesson_ids if lid in lessons]
        breakdowns = {b.lesson_id: b for b in salience_breakdowns(text, present)}
    decayed = _decayed_deltas(session, row, after, before, used) if settings.decay < 1.0 else []
    credits = []
    for i, (lid, sal) in enumerate(zip(session.lesson_ids, session.saliences, strict=True)):
        if wanted is not None and lid != wanted:
            continue
        j = position[lid]
        w = float(credit_mod.weight(sal, settings.floor))
        reward = float(credit_mod.credited_reward(used, w, settings.strategy)) if graded else 0.0
        note = None
        breakdown = breakdowns.get(lid)
        if text is not None and lid not in lessons:
            note = "lesson no longer in the library: no keyword breakdown"
        elif breakdown is not None and abs(breakdown.salience - sal) > 1e-9:
            note = f"journal now gives salience {breakdown.salience:.3f}; the log's {sal:.3f} is what counts"
        if settings.decay < 1.0:  # the session's weight depends on its place: measure it
            alpha_delta, beta_delta = decayed[i]
        elif graded:  # the formula itself, free of the rounding of a difference
            d_alpha, d_beta = credit_mod.credit(used, w, settings.strategy)
            alpha_delta, beta_delta = float(d_alpha), float(d_beta)
        else:
            alpha_delta = beta_delta = 0.0
        beyond, unchecked, ignored = 0, 0, list[KeywordHit]()
        if breakdown is not None and (beyond := wildcards_beyond(lessons[lid].keywords)):
            ignored, unchecked = ignored_wildcards(text or "", lessons[lid].keywords)
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
                beyond=beyond,
                ignored=tuple(ignored),
                unchecked=unchecked,
                during=i in session.during,
            )
        )
    return tuple(credits)


def _decayed_deltas(
    session: SessionEvent, row: int, after: Posterior, before: Posterior, used: float
) -> list[tuple[float, float]]:
    """Under decay, each lesson entry's (alpha, beta) change: what the grade moves in its arm today (`after`
    less `before`, the session pending). A lesson listed more than once (another tool's line) shares that
    change: each listing its own increment, worth gamma^(graded sessions after this one) today, and an even
    share of the decay step (the rest), so that its rows add up to its arm's change, as without decay."""
    position = after.index()
    moved = {
        lid: (float(after.alpha[j] - before.alpha[j]), float(after.beta[j] - before.beta[j]))
        for lid in session.lesson_ids
        for j in (position[lid],)
    }
    listings = Counter(session.lesson_ids)
    if max(listings.values(), default=1) == 1 or math.isnan(used):
        return [moved[lid] for lid in session.lesson_ids]
    settings = after.settings
    worth = settings.decay ** int(np.count_nonzero(~np.isnan(after.base[row + 1 :])))
    weights = credit_mod.weight(np.asarray(session.saliences, dtype=np.float64), settings.floor)
    d_alpha, d_beta = credit_mod.credit(np.full_like(weights, used), weights, settings.strategy)
    increments = [(float(a) * worth, float(b) * worth) for a, b in zip(d_alpha, d_beta, strict=True)]
    step = dict.fromkeys(listings, (0.0, 0.0))
    for lid, (a, b) in zip(session.lesson_ids, increments, strict=True):
        step[lid] = (step[lid][0] + a, step[lid][1] + b)
    out = []
    for lid, (a, b) in zip(session.lesson_ids, increments, strict=True):
        (total_a, total_b), (sum_a, sum_b), m = moved[lid], step[lid], listings[lid]
        out.append((a + (total_a - sum_a) / m, b + (total_b - sum_b) / m))
    return out


def explain_inputs(
    session: SessionEvent, lesson: str | None, base_reward: float | None, recorded: float
) -> tuple[str | None, float]:
    """(the lesson to explain, None for all; the reward to explain with): `lesson` must have been
    injected in the session, `base_reward` (a preview; else the `recorded` one) must be in [0, 1]."""
    wanted = None
    if lesson is not None:
        wanted = lesson_named(lesson, session.lesson_ids)
        if wanted not in session.lesson_ids:
            said = f"lesson {lesson!r} was not injected in session {session.session_id!r}"
            raise WorkspaceError(f"{said}; {_its_lessons(session)}")
    if base_reward is not None:
        base_reward = credit_mod.check_reward(base_reward)
    return wanted, float(base_reward if base_reward is not None else recorded)


def _its_lessons(session: SessionEvent) -> str:
    """The session's lessons for a message, each once, those included during it named apart."""
    during = {session.lesson_ids[i] for i in session.during}
    before = list(dict.fromkeys(lid for lid in session.lesson_ids if lid not in during))
    pulled = list(dict.fromkeys(lid for lid in session.lesson_ids if lid in during))
    if not before:
        return f"its lessons, all included during it: {listed(pulled, 8)}" if pulled else "it injected none"
    return f"its lessons: {listed(before, 8)}" + (f" (included during it: {listed(pulled, 8)})" if pulled else "")


def explanation(
    session: SessionEvent,
    row: int,
    line: int,
    data: FoldData,
    current: Posterior,
    used: float,
    lessons: dict[str, Lesson],
    journal: tuple[str | None, str | None],
    grades: Sequence[GradeRecord],
    wanted: str | None = None,
) -> Explanation:
    """A session's explanation under `current`'s settings with reward `used` (NaN: pending);
    `journal` is (text, problem) as read."""
    text, problem = journal
    return Explanation(
        session=session_summary(session, row, line, data),
        base_reward=None if math.isnan(used) else float(used),
        settings=current.settings,
        lessons=lesson_credits(session, row, data, current, used, lessons, text, wanted),
        journal_text=text,
        journal_problem=problem,
        grades=tuple(grades),
    )
