"""Checks of the log: lines not used, sessions never graded, rewards and posteriors that carry no signal, arms
the library does not have, entries spelled or counted oddly, a derived file out of step with the log."""

from __future__ import annotations

from pathlib import PurePosixPath

import numpy as np

from lesson_credit.core.base.numbers import counted
from lesson_credit.core.health.data import (
    COLLAPSE_SPREAD,
    ERROR,
    PENDING_STALE_DAYS,
    WARNING,
    Finding,
    HealthData,
    agree,
    names,
    parse_time,
)
from lesson_credit.core.views import SessionSummary


def unreadable_lines(h: HealthData) -> list[Finding]:
    broken = [p for p in h.log_problems if not p.reason.startswith("duplicate session")]
    if not broken:
        return []
    return [
        Finding(
            "log-unreadable-lines",
            ERROR,
            f"{counted(len(broken), 'line')} of the log could not be used: {names([str(p) for p in broken], 3)}",
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


# Sessions that never get a grade.


def _never_graded(h: HealthData) -> tuple[list[SessionSummary], list[SessionSummary]]:
    """The pending sessions never graded, logged 7+ days ago and since (or at no known time): a session
    whose grade was undone is pending again, and listed as that (`grades_retracted`)."""
    undone = {session_id for session_id, _ in h.retracted}
    stale: list[SessionSummary] = []
    recent: list[SessionSummary] = []
    for s in h.sessions:
        if s.pending and s.session_id not in undone:
            t = parse_time(s.timestamp)
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
            + names([s.session_id for s in stale]),
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
            f"{counted(len(recent), 'session')} waiting for a grade: " + names([s.session_id for s in recent]),
            "Grade them when their outcome is known.",
            tuple(s.session_id for s in recent),
            tuple(f"pending since {s.timestamp or 'an unknown time'}" for s in recent),
        )
    ]


def selected_never_recorded(h: HealthData) -> list[Finding]:
    found = h.never_recorded
    if not found:
        return []
    return [
        Finding(
            "selected-never-recorded",
            WARNING,
            f"{counted(len(found), 'session')} selected but never recorded, though a session was recorded after "
            f"{agree(len(found), 'its', 'their')} selection: " + names([session_id for session_id, _ in found]),
            "The session-end hook did not run or failed: record each with `lesson-credit record --session-id ID "
            "--journal FILE --lessons-file FILE` (it takes the selection's probabilities), and check the hook. A "
            "session with no record after its selection (still running) is not listed.",
            tuple(session_id for session_id, _ in found),
            tuple(f"selected at line {line}; no record" for _, line in found),
        )
    ]


def recorded_passed_over(h: HealthData) -> list[Finding]:
    found = h.passed_over
    if not found:
        return []
    lessons = sum(len(named) for _, named in found)
    return [
        Finding(
            "recorded-passed-over",
            WARNING,
            f"{counted(len(found), 'session')} recorded {counted(lessons, 'lesson')} that "
            f"{agree(len(found), 'its', 'their')} selection passed over (a candidate it did not choose), not marked "
            "as included during the session: " + names([session_id for session_id, _ in found]),
            "They are read as included during the session (the effect estimates do not count them as injected; "
            "credit is unchanged), as gptme's mid-session auto-include brings them in. Have the hook pass such "
            "lessons with `record --during ID` (or leave out of the record a lesson that was never in the session).",
            tuple(session_id for session_id, _ in found),
            tuple(", ".join(named) for _, named in found),
        )
    ]


MIN_UNSELECTED = 3  # sessions recorded in a row with no selection after a selected one: a hook's select failing?


def recorded_without_selection(h: HealthData) -> list[Finding]:
    tail, before = h.unselected
    if len(tail) < MIN_UNSELECTED:
        return []
    them = agree(len(tail), "it", "them")
    return [
        Finding(
            "recorded-without-selection",
            WARNING,
            f"the last {counted(len(tail), 'session')} {agree(len(tail), 'was', 'were')} recorded with no lessons "
            f"chosen before {them} and no selection logged for {them}, though {before} before them had one: "
            + names(list(tail)),
            "A hook's `select` may be failing (a context file moved, a bad option): its error line is a # comment in "
            "the file `record --lessons-file` reads, so each session is logged with no lessons. Run the hook's "
            "`select` by hand and read what it says. Sessions recorded on purpose without `select` need nothing.",
            tail,
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
            f"{counted(len(ghosts), 'lesson')} in the log {agree(len(ghosts), 'is', 'are')} not in the library: "
            + names(hints),
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


def missing_salience(h: HealthData) -> list[Finding]:
    if not h.missing_salience:
        return []
    return [
        Finding(
            "missing-salience",
            WARNING,
            f"{counted(h.missing_salience, 'lesson entry', 'lesson entries')} in the log "
            + agree(h.missing_salience, "has no salience and counts as 0.5", "have no salience and count as 0.5"),
            "Record sessions with `lesson-credit record`, which stores salience for every lesson.",
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
            + names(list(ids)),
            "The effect estimates count such a lesson once per session; fix the hook that writes the records.",
            ids,
        )
    ]


# A derived file left behind by a write that was cut short.


_PUT_THE_LOG_BACK = (
    "put the log back (version control, a backup): it is the only record of the sessions; a `record` would start a "
    "new log and rewrite bandit-state.json from it"
)
_KEPT_WITH_UPDATE = (
    "lesson-credit keeps it as it is, with that update, which the log cannot take as an update of its own numbers; "
    "replacing the file with the log's posteriors (an export onto it, or deleting it) would lose that update "
    "(docs/trust.md)"
)
_REPLACE_IT = (
    "no rule can log that save without counting a session twice or losing one; gptme's later saves there are logged "
    "over it, but the log's own sessions no longer reach the file: replace the file with the log's posteriors "
    "(`lesson-credit export-gptme` onto it, or delete it), losing the sessions the log lacks (docs/format.md §7, Two "
    "saves of one load)"
)
_REWRITTEN_NEXT = "the next record/grade (or `lesson-credit status`) rewrites it from the log"
_PUT_THE_RECORDS_BACK = (
    "put the records file back, or name it where every command runs (config.toml's [records] path, or "
    "$GPTME_SESSIONS_DIR in the hooks' environment too); gone for good: delete bandit-state.json, and the next "
    "write rewrites it from the log without those rewards"
)
STATE_FINDINGS = {  # how bandit-state.json stands -> (code, severity, advice)
    "missing": ("log-missing", ERROR, _PUT_THE_LOG_BACK),
    "records": ("records-missing", WARNING, _PUT_THE_RECORDS_BACK),
    "foreign": ("bandit-state-changed-elsewhere", WARNING, _KEPT_WITH_UPDATE),
    "replace": ("bandit-state-changed-elsewhere", WARNING, _REPLACE_IT),
    "stale": ("stale-bandit-state", WARNING, _REWRITTEN_NEXT),
}


def stale_bandit_state(h: HealthData) -> list[Finding]:
    check = h.stale_state
    if check is None or check.behind:  # (behind other agents' sessions on a shared database: no fault)
        return []
    kind = "records" if check.records else "missing" if check.missing else "stale"
    kind = ("replace" if check.replace else "foreign") if check.foreign else kind
    code, severity, advice = STATE_FINDINGS[kind]
    return [Finding(code, severity, check.why, advice)]


def torn_lines(h: HealthData) -> list[Finding]:
    if h.torn is None:
        return []
    path, lines, size = h.torn
    return [
        Finding(
            "torn-lines",
            WARNING,
            f"{counted(lines, 'torn line')} ({size} bytes) set aside in {path}: a writer cut them from the log's end "
            "(a writer killed mid-write, or a program appending without the writers' lock, whose event is then there "
            "only)",
            "Look at them: an event a program finished after the cut is whole there; append it to the log by hand, "
            "then delete the file.",
        )
    ]


def grades_retracted(h: HealthData) -> list[Finding]:
    if not h.retracted:
        return []
    return [
        Finding(
            "grades-retracted",
            WARNING,
            f"{counted(len(h.retracted), 'session')} pending again, {agree(len(h.retracted), 'its', 'their')} latest "
            "grade retracted (an undo): " + names([session_id for session_id, _ in h.retracted]),
            "Grade them again when their outcome is known; the retracted grade stays in the log's history "
            "(`lesson-credit show ID`).",
            tuple(session_id for session_id, _ in h.retracted),
            tuple(reason for _, reason in h.retracted),
        )
    ]
