"""Health checks: the ways real lesson bandits have silently broken, each with what to do.

`gather` collects what the checks look at from a workspace's log, library and journals
(`HealthData`); each check is a function of that data returning findings that name the
lessons or sessions involved. An `error` fails `lesson-credit lint` (exit 1, for an
agent's CI); a `warning` is reported and fails it only with `--fail-on warning`. Sessions
waiting for a grade are warnings: a fresh session is pending by design.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from lesson_credit.core.bandit.config import PENDING_OUTCOME
from lesson_credit.core.base.numbers import counted, listed
from lesson_credit.core.derived_state import StateCheck, check_state
from lesson_credit.core.id_spellings import Spellings, prefixed_id_count
from lesson_credit.core.joined_records import RecordFinding, record_findings, records_health
from lesson_credit.core.library.lessons import CONFIG, LessonProblem
from lesson_credit.core.library.problem_kinds import KINDS
from lesson_credit.core.log.store import LogProblem
from lesson_credit.core.views import LessonUsage, SessionSummary

if TYPE_CHECKING:
    from lesson_credit.core.workspace import Workspace

ERROR, WARNING = "error", "warning"
PROBLEM = ERROR  # the name the dashboard imports
PENDING_STALE_DAYS = 7
MIN_SESSIONS_FOR_NEVER_INJECTED = 30
MIN_INJECTED_FOR_NEVER_SALIENT = 5
COLLAPSE_SPREAD = 0.01


@dataclass(frozen=True)
class Finding:
    code: str
    severity: str
    message: str
    advice: str
    items: tuple[str, ...] = ()
    reasons: tuple[str, ...] = ()  # per item, why it is listed (default: the finding's message)

    def as_json(self) -> dict[str, Any]:
        reasons = self.reasons or (self.message,) * len(self.items)
        return {
            "code": self.code,
            "severity": self.severity,
            "message": self.message,
            "advice": self.advice,
            "items": [{"item": item, "reason": reason} for item, reason in zip(self.items, reasons, strict=True)],
        }


def _parse_time(stamp: str | None) -> dt.datetime | None:
    if not stamp:
        return None
    try:
        moment = dt.datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    except ValueError:
        return None
    return moment if moment.tzinfo else moment.replace(tzinfo=dt.UTC)


def _agree(n: int, one: str, many: str) -> str:
    """The verb that agrees with a count: `_agree(1, "is", "are")`."""
    return one if n == 1 else many


def _names(items: list[str], limit: int = 8) -> str:
    return listed(items, limit)


@dataclass(frozen=True)
class HealthData:
    """What the checks look at, gathered once from a workspace."""

    log_problems: Sequence[LogProblem]
    lesson_problems: Sequence[LessonProblem]
    sessions: Sequence[SessionSummary]
    now: dt.datetime
    rewards: npt.NDArray[np.float64]  # the graded sessions' rewards in force
    n: npt.NDArray[np.int64]  # per arm of the log: sessions counted, and posterior mean
    mean: npt.NDArray[np.float64]
    arm_ids: tuple[str, ...]
    n_sessions: int
    known: frozenset[str]  # lesson ids of the library
    active: frozenset[str]  # of those, the active ones
    usage: dict[str, LessonUsage]
    prefixed_ids: Spellings  # how log entries spell lesson ids other than as the library does
    missing_salience: int  # log entries without a salience
    broad_keywords: dict[str, str]  # lesson id -> why its keyword is too broad
    root: str  # the workspace folder
    retired: frozenset[str]  # arms retired by `prune`
    outcome_labels: Sequence[str]  # string outcomes of records without base_reward, one per such record
    outcomes: dict[str, float]  # the outcome -> reward mapping in force
    stale_state: StateCheck | None = None  # how bandit-state.json disagrees with the log, if it does
    listed_twice: tuple[int, tuple[str, ...]] = (0, ())  # (lessons listed again, ids of their sessions)
    retracted: tuple[tuple[str, str], ...] = ()  # (session id, what was retracted) where the latest grade is one
    records: tuple[RecordFinding, ...] = ()  # what the gptme-sessions records' reading and joins found (lint)
    dropout_problems: tuple[str, ...] = ()  # lines and files of the dropout logs not used, a line each


def gather(ws: Workspace) -> HealthData:
    from lesson_credit.core.attribution import dropout_log

    data = ws.data()
    sessions = ws.sessions()
    library = ws.library()
    post = ws.posterior()
    usage = ws.lesson_usage()
    return HealthData(
        log_problems=ws.log_problems(),
        lesson_problems=library.problems,
        sessions=sessions,
        now=ws.clock(),
        rewards=data.base[~np.isnan(data.base)],
        n=post.n,
        mean=post.mean,
        arm_ids=data.arm_ids,
        n_sessions=data.n_sessions,
        known=frozenset(lesson.id for lesson in library.lessons),
        active=frozenset(lesson.id for lesson in library.lessons if lesson.status == "active"),
        usage=usage,
        prefixed_ids=prefixed_id_count(ws.log),
        missing_salience=ws.missing_salience_count(),
        broad_keywords=ws.broad_keywords(),
        root=str(ws.root),
        retired=frozenset(ws.retired_arms()),
        outcome_labels=tuple(ws.outcome_labels().values()),
        outcomes=ws.config.outcomes,
        stale_state=check_state(ws),
        listed_twice=_listed_twice(data.entry_session, data.entry_arm, data.n_arms, sessions),
        retracted=_retracted(ws, sessions),
        records=tuple(record_findings(records_health(ws.records()))) if ws.session_records.file().present else (),
        dropout_problems=dropout_log(ws.root, library).problems,
    )


def _retracted(ws: Workspace, sessions: Sequence[SessionSummary]) -> tuple[tuple[str, str], ...]:
    """Pending sessions whose latest grade event is a retraction (`base_reward: null`, an undo of a
    first grade), with the line of the retraction and the grade it withdrew."""
    found = []
    for s in sessions:
        if not s.pending:
            continue
        history = ws.grade_history(s.session_id)
        if history and history[-1].base_reward is None:
            earlier = [g.base_reward for g in history[:-1] if g.base_reward is not None]
            was = f"was {earlier[-1]:g}" if earlier else "no grade before it"
            found.append((s.session_id, f"retracted at line {history[-1].line} ({was})"))
    return tuple(found)


def _listed_twice(
    entry_session: npt.NDArray[np.int32],
    entry_arm: npt.NDArray[np.int32],
    n_arms: int,
    sessions: Sequence[SessionSummary],
) -> tuple[int, tuple[str, ...]]:
    """How many (session, lesson) pairs a session record lists more than once, and those sessions' ids."""
    if not len(entry_arm):
        return 0, ()
    width = max(n_arms, 1)
    values, counts = np.unique(np.asarray(entry_session, dtype=np.int64) * width + entry_arm, return_counts=True)
    twice = values[counts > 1]
    rows = sorted({int(v) // width for v in twice.tolist()})
    return len(twice), tuple(sessions[row].session_id for row in rows)


def lint(ws: Workspace) -> list[Finding]:
    """All findings for a workspace, problems first."""
    return run_checks(gather(ws))


def run_checks(health: HealthData) -> list[Finding]:
    """Every check's findings, problems first (then by code)."""
    findings = [finding for check in CHECKS for finding in check(health)]
    findings.sort(key=lambda f: (f.severity != ERROR, f.code))
    return findings


# No library at all, and files that could not be read.


def no_lessons(h: HealthData) -> list[Finding]:
    if h.known or h.lesson_problems:
        return []
    return [
        Finding(
            "no-lessons",
            ERROR,
            f"no lessons found in {h.root}",
            "Put lesson files under lessons/ (or name their folders in gptme.toml [lessons] dirs); "
            "until then nothing can be selected or credited.",
        )
    ]


def unreadable_lines(h: HealthData) -> list[Finding]:
    broken = [p for p in h.log_problems if not p.reason.startswith("duplicate session")]
    if not broken:
        return []
    return [
        Finding(
            "log-unreadable-lines",
            ERROR,
            f"{counted(len(broken), 'line')} of the log could not be used: {_names([str(p) for p in broken], 3)}",
            "Fix or remove those lines by hand; everything else still folds.",
            tuple(f"line {p.line}" for p in broken),
            tuple(p.reason for p in broken),
        )
    ]


def duplicate_session_ids(h: HealthData) -> list[Finding]:
    duplicates = [p for p in h.log_problems if p.reason.startswith("duplicate session")]
    if not duplicates:
        return []
    return [
        Finding(
            "duplicate-session-ids",
            ERROR,
            f"{counted(len(duplicates), 'session id')} logged more than once; only the first counts",
            "Make the session-end hook use a unique id per session (e.g. date + random suffix).",
            tuple(f"line {p.line}" for p in duplicates),
            tuple(p.reason for p in duplicates),
        )
    ]


def lesson_problems(h: HealthData) -> list[Finding]:
    findings = []
    for kind in KINDS:
        if found := [p for p in h.lesson_problems if p.kind == kind.kind]:
            message = f"{kind.counted(len(found))}: " + _names([str(p) for p in found], 3)
            items, reasons = tuple(p.path for p in found), tuple(p.reason for p in found)
            findings.append(Finding(kind.code, kind.severity, message, kind.advice, items, reasons))
    return findings


def library_config(h: HealthData) -> list[Finding]:
    problems = [p for p in h.lesson_problems if p.kind == CONFIG]
    if not problems:
        return []
    return [
        Finding(
            "library-config",
            ERROR,
            "the library gptme.toml configures cannot be loaded whole: " + _names([p.reason for p in problems], 3),
            "Fix gptme.toml's [lessons] dirs (a folder that does not exist may be a git submodule not checked out: "
            "`git submodule update --init`); until then `select` refuses to draw from the incomplete library.",
            tuple(p.path for p in problems),
            tuple(p.reason for p in problems),
        )
    ]


# Sessions that never get a grade.


def _never_graded(h: HealthData) -> tuple[list[SessionSummary], list[SessionSummary]]:
    """The pending sessions never graded, logged 7+ days ago and since (or at no known time): a session
    whose grade was undone is pending again, and listed as that (`grades_retracted`)."""
    undone = {session_id for session_id, _ in h.retracted}
    stale: list[SessionSummary] = []
    recent: list[SessionSummary] = []
    for s in h.sessions:
        if s.pending and s.session_id not in undone:
            t = _parse_time(s.timestamp)
            (stale if t is not None and (h.now - t).days >= PENDING_STALE_DAYS else recent).append(s)
    return stale, recent


def dropout_lines_skipped(h: HealthData) -> list[Finding]:
    if not h.dropout_problems:
        return []
    return [
        Finding(
            "dropout-lines-skipped",
            WARNING,
            f"{counted(len(h.dropout_problems), 'part')} of the dropout logs (state/lesson-dropout) not used",
            "The randomized estimates leave them out; fix or remove what each line names.",
            h.dropout_problems,
        )
    ]


def sessions_never_graded(h: HealthData) -> list[Finding]:
    stale = _never_graded(h)[0]
    if not stale:
        return []
    return [
        Finding(
            "sessions-never-graded",
            WARNING,
            f"{counted(len(stale), 'session')} never graded, pending for {PENDING_STALE_DAYS}+ days: "
            + _names([s.session_id for s in stale]),
            "Grade them (`lesson-credit grade ID REWARD`, or in the dashboard); pending sessions move nothing.",
            tuple(s.session_id for s in stale),
            tuple(f"pending since {s.timestamp}" for s in stale),
        )
    ]


def sessions_pending(h: HealthData) -> list[Finding]:
    recent = _never_graded(h)[1]
    if not recent:
        return []
    return [
        Finding(
            "sessions-pending",
            WARNING,
            f"{counted(len(recent), 'session')} waiting for a grade: " + _names([s.session_id for s in recent]),
            "Grade them when their outcome is known.",
            tuple(s.session_id for s in recent),
            tuple(f"pending since {s.timestamp or 'an unknown time'}" for s in recent),
        )
    ]


# Rewards that carry no information.


def constant_rewards(h: HealthData) -> list[Finding]:
    graded = h.rewards
    if len(graded) < 5:
        return []
    if np.all(graded == 0.0) or np.all(graded == 1.0):
        value = int(graded[0])
        return [
            Finding(
                "rewards-constant",
                ERROR,
                f"all {len(graded)} graded rewards are {value}",
                "The grader is stuck (a crashed judge or a default value); every lesson learns the same thing.",
            )
        ]
    if float(np.mean((graded == 0.0) | (graded == 1.0))) > 0.95:
        return [
            Finding(
                "rewards-binary",
                WARNING,
                f"{np.mean((graded == 0.0) | (graded == 1.0)):.0%} of rewards are exactly 0 or 1",
                "Binary rewards are valid but coarse; a graded scale separates lessons faster.",
            )
        ]
    return []


# Every arm collapsing to the same mean.


def collapsed_posteriors(h: HealthData) -> list[Finding]:
    seen = h.n >= 5
    if not (int(seen.sum()) >= 5 and float(np.std(h.mean[seen])) < COLLAPSE_SPREAD):
        return []
    return [
        Finding(
            "posteriors-collapsed",
            ERROR,
            f"the {int(seen.sum())} lessons with 5+ sessions all have mean {float(np.mean(h.mean[seen])):.3f} "
            f"(spread {float(np.std(h.mean[seen])):.4f})",
            "Credit carries no signal: check that salience is computed (not all 0.5) and rewards vary.",
        )
    ]


# Ghost arms: in the log, not in the library.


def ghost_arms(h: HealthData) -> list[Finding]:
    ghosts = [arm for arm in h.arm_ids if arm not in h.known and arm not in h.retired]
    if not ghosts:
        return []
    by_name: dict[str, list[str]] = {}
    for lesson_id in h.known:
        by_name.setdefault(PurePosixPath(lesson_id).name, []).append(lesson_id)
    hints = []
    reasons = []
    for ghost in ghosts:
        moved = by_name.get(PurePosixPath(ghost).name)
        hints.append(f"{ghost} (moved to {moved[0]}?)" if moved and len(moved) == 1 else ghost)
        reasons.append(f"no lesson file; moved to {moved[0]}?" if moved and len(moved) == 1 else "no lesson file")
    return [
        Finding(
            "ghost-arms",
            WARNING,
            f"{counted(len(ghosts), 'lesson')} in the log {_agree(len(ghosts), 'is', 'are')} not in the library: "
            + _names(hints),
            "Renamed or deleted lessons keep their old evidence under the old id; "
            "restore the file, or retire the arm with `lesson-credit prune` (history is kept).",
            tuple(ghosts),
            tuple(reasons),
        )
    ]


def prefixed_ids(h: HealthData) -> list[Finding]:
    said = h.prefixed_ids.said()
    if not said:
        return []
    return [
        Finding(
            "prefixed-ids",
            WARNING,
            said,
            "A prefix, an absolute path, backslashes or spaces around an id are read as the library's id (the part "
            "after the last lessons folder); a path with no lessons folder is not: `lesson-credit import-gptme` maps "
            "such paths by the library's folders. New records should name lessons by their id.",
        )
    ]


# Lessons never injected / never salient.


def never_injected(h: HealthData) -> list[Finding]:
    if h.n_sessions < MIN_SESSIONS_FOR_NEVER_INJECTED:
        return []
    never = sorted(lid for lid in h.active if lid not in h.usage or h.usage[lid].injected == 0)
    if not never:
        return []
    return [
        Finding(
            "never-injected",
            WARNING,
            f"{counted(len(never), 'active lesson')} never injected in {counted(h.n_sessions, 'session')}: "
            + _names(never),
            "Their keywords may never match a session context; widen them or archive the lesson.",
            tuple(never),
        )
    ]


def never_salient(h: HealthData) -> list[Finding]:
    never = sorted(lid for lid, u in h.usage.items() if u.injected >= MIN_INJECTED_FOR_NEVER_SALIENT and u.salient == 0)
    if not never:
        return []
    return [
        Finding(
            "never-salient",
            WARNING,
            f"{counted(len(never), 'lesson')} injected 5+ times but never mentioned in a journal: " + _names(never),
            "Their keywords do not describe what happens when they apply; they only ever get floor credit.",
            tuple(never),
        )
    ]


def missing_salience(h: HealthData) -> list[Finding]:
    if not h.missing_salience:
        return []
    return [
        Finding(
            "missing-salience",
            WARNING,
            f"{counted(h.missing_salience, 'lesson entry', 'lesson entries')} in the log "
            + _agree(h.missing_salience, "has no salience and counts as 0.5", "have no salience and count as 0.5"),
            "Record sessions with `lesson-credit record`, which stores salience for every lesson.",
        )
    ]


# Keywords that match almost every journal.


def broad_keywords(h: HealthData) -> list[Finding]:
    broad = h.broad_keywords
    if not broad:
        return []
    return [
        Finding(
            "broad-keywords",
            WARNING,
            f"{counted(len(broad), 'lesson')} {_agree(len(broad), 'has', 'have')} a keyword that matches most "
            "journals: " + _names([f"{lid} ({reason.split(':')[0]})" for lid, reason in sorted(broad.items())], 5),
            "A keyword that is everywhere gives full salience for free; use a more specific phrase.",
            tuple(sorted(broad)),
            tuple(reason for _, reason in sorted(broad.items())),
        )
    ]


# String outcomes (gptme-sessions) that map to no reward: those sessions stay pending.


def unmapped_outcomes(h: HealthData) -> list[Finding]:
    unmapped: dict[str, int] = {}
    for label in h.outcome_labels:
        if label not in h.outcomes and label != PENDING_OUTCOME:
            unmapped[label] = unmapped.get(label, 0) + 1
    if not unmapped:
        return []
    labels = sorted(unmapped)
    return [
        Finding(
            "unmapped-outcomes",
            WARNING,
            f"{counted(sum(unmapped.values()), 'session')} {_agree(sum(unmapped.values()), 'has', 'have')} a string "
            "outcome with no reward mapped: " + _names([repr(label) for label in labels]),
            "Map them in config.toml's [outcomes] table (outcome = reward in [0, 1]); until then "
            "those sessions stay pending.",
            tuple(labels),
            tuple(counted(unmapped[label], "session") for label in labels),
        )
    ]


def lesson_listed_twice(h: HealthData) -> list[Finding]:
    pairs, ids = h.listed_twice
    if not pairs:
        return []
    return [
        Finding(
            "lesson-listed-twice",
            WARNING,
            f"{counted(pairs, 'lesson')} listed more than once in a session record, in {counted(len(ids), 'session')}: "
            + _names(list(ids)),
            "The effect estimates count such a lesson once per session; fix the hook that writes the records.",
            ids,
        )
    ]


# A derived file left behind by a write that was cut short.


_PUT_THE_LOG_BACK = (
    "put the log back (version control, a backup): it is the only record of the sessions; a `record` would start a "
    "new log and rewrite bandit-state.json from it"
)
_EXPORT_TO_REPLACE = (
    "lesson-credit keeps it as it is; to put the log's posteriors back, run "
    "`lesson-credit export-gptme state/lesson-thompson/bandit-state.json` (that update is then lost)"
)
_REWRITTEN_NEXT = "the next record/grade (or `lesson-credit status`) rewrites it from the log"
STATE_FINDINGS = {  # how bandit-state.json stands -> (code, severity, advice)
    "missing": ("log-missing", ERROR, _PUT_THE_LOG_BACK),
    "foreign": ("bandit-state-changed-elsewhere", WARNING, _EXPORT_TO_REPLACE),
    "stale": ("stale-bandit-state", WARNING, _REWRITTEN_NEXT),
}


def stale_bandit_state(h: HealthData) -> list[Finding]:
    check = h.stale_state
    if check is None:
        return []
    code, severity, advice = STATE_FINDINGS["missing" if check.missing else "foreign" if check.foreign else "stale"]
    return [Finding(code, severity, check.why, advice)]


def grades_retracted(h: HealthData) -> list[Finding]:
    if not h.retracted:
        return []
    return [
        Finding(
            "grades-retracted",
            WARNING,
            f"{counted(len(h.retracted), 'session')} pending again, {_agree(len(h.retracted), 'its', 'their')} latest "
            "grade retracted (an undo): " + _names([session_id for session_id, _ in h.retracted]),
            "Grade them again when their outcome is known; the retracted grade stays in the log's history "
            "(`lesson-credit show ID`).",
            tuple(session_id for session_id, _ in h.retracted),
            tuple(reason for _, reason in h.retracted),
        )
    ]


CHECKS: tuple[Callable[[HealthData], list[Finding]], ...] = (
    no_lessons,
    unreadable_lines,
    stale_bandit_state,
    duplicate_session_ids,
    lesson_listed_twice,
    library_config,
    lesson_problems,
    dropout_lines_skipped,
    sessions_never_graded,
    sessions_pending,
    grades_retracted,
    constant_rewards,
    collapsed_posteriors,
    ghost_arms,
    prefixed_ids,
    never_injected,
    never_salient,
    missing_salience,
    broad_keywords,
    unmapped_outcomes,
    lambda h: [Finding(code, WARNING, message, advice, items, why) for code, message, advice, items, why in h.records],
)
