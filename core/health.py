"""Health checks: the ways real lesson bandits have silently broken, each with what to do.

Every check looks at a workspace's log, library and journals and returns findings that name
the lessons or sessions involved. A `problem` fails `lesson-credit lint` (exit 1, for an
agent's CI); a `warning` is reported but does not.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from core.workspace import Workspace

PROBLEM, WARNING = "problem", "warning"
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

    def as_json(self) -> dict[str, Any]:
        return {
            "code": self.code,
            "severity": self.severity,
            "message": self.message,
            "advice": self.advice,
            "items": list(self.items),
        }


def _parse_time(stamp: str | None) -> dt.datetime | None:
    if not stamp:
        return None
    try:
        moment = dt.datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    except ValueError:
        return None
    return moment if moment.tzinfo else moment.replace(tzinfo=dt.UTC)


def _names(items: list[str], limit: int = 8) -> str:
    shown = ", ".join(items[:limit])
    return shown + (f" and {len(items) - limit} more" if len(items) > limit else "")


def lint(ws: Workspace) -> list[Finding]:
    """All findings for a workspace, problems first."""
    findings: list[Finding] = []
    data = ws.data()
    sessions = ws.sessions()
    library = ws.library()
    active = {lesson.id for lesson in library.lessons if lesson.status == "active"}
    known = {lesson.id for lesson in library.lessons}
    post = ws.posterior()
    usage = ws.lesson_usage()

    # Files that could not be read at all.
    log_problems = ws.log_problems()
    duplicates = [p for p in log_problems if p.reason.startswith("duplicate session")]
    broken = [p for p in log_problems if not p.reason.startswith("duplicate session")]
    if broken:
        findings.append(
            Finding(
                "log-unreadable-lines",
                PROBLEM,
                f"{len(broken)} line(s) of the log could not be used: {_names([str(p) for p in broken], 3)}",
                "Fix or remove those lines by hand; everything else still folds.",
                tuple(f"line {p.line}" for p in broken),
            )
        )
    if duplicates:
        findings.append(
            Finding(
                "duplicate-session-ids",
                PROBLEM,
                f"{len(duplicates)} session id(s) logged more than once; only the first counts",
                "Make the session-end hook use a unique id per session (e.g. date + random suffix).",
                tuple(f"line {p.line}" for p in duplicates),
            )
        )
    if library.problems:
        findings.append(
            Finding(
                "broken-lessons",
                PROBLEM,
                f"{len(library.problems)} lesson file(s) could not be loaded: "
                + _names([str(p) for p in library.problems], 3),
                "Fix their frontmatter; until then they are never selected.",
                tuple(p.path for p in library.problems),
            )
        )

    # A lesson listed more than once in one session record.
    if len(data.entry_arm):
        pair = np.asarray(data.entry_session, dtype=np.int64) * max(data.n_arms, 1) + data.entry_arm
        values, counts = np.unique(pair, return_counts=True)
        twice = values[counts > 1]
        if len(twice):
            rows = sorted({int(v) // max(data.n_arms, 1) for v in twice.tolist()})
            ids = [sessions[row].session_id for row in rows]
            findings.append(
                Finding(
                    "lesson-listed-twice",
                    WARNING,
                    f"{len(twice)} lesson(s) listed more than once in a session record, in {len(rows)} session(s): "
                    + _names(ids),
                    "The effect estimates count such a lesson once per session; fix the hook that writes the records.",
                    tuple(ids),
                )
            )

    # Sessions that never get a grade.
    now = ws.clock()
    pending = [s for s in sessions if s.pending]
    stale = [s for s in pending if (t := _parse_time(s.timestamp)) and (now - t).days >= PENDING_STALE_DAYS]
    if stale:
        findings.append(
            Finding(
                "sessions-never-graded",
                PROBLEM,
                f"{len(stale)} session(s) pending for {PENDING_STALE_DAYS}+ days: "
                + _names([s.session_id for s in stale]),
                "Grade them (`lesson-credit grade ID REWARD`, or in the dashboard); pending sessions move nothing.",
                tuple(s.session_id for s in stale),
            )
        )
    recent = [s for s in pending if s not in stale]
    if recent:
        findings.append(
            Finding(
                "sessions-pending",
                WARNING,
                f"{len(recent)} session(s) waiting for a grade: " + _names([s.session_id for s in recent]),
                "Grade them when their outcome is known.",
                tuple(s.session_id for s in recent),
            )
        )

    # Rewards that carry no information.
    graded = data.base[~np.isnan(data.base)]
    if len(graded) >= 5:
        if np.all(graded == 0.0) or np.all(graded == 1.0):
            value = int(graded[0])
            findings.append(
                Finding(
                    "rewards-constant",
                    PROBLEM,
                    f"all {len(graded)} graded rewards are {value}",
                    "The grader is stuck (a crashed judge or a default value); every lesson learns the same thing.",
                )
            )
        elif float(np.mean((graded == 0.0) | (graded == 1.0))) > 0.95:
            findings.append(
                Finding(
                    "rewards-binary",
                    WARNING,
                    f"{np.mean((graded == 0.0) | (graded == 1.0)):.0%} of rewards are exactly 0 or 1",
                    "Binary rewards are valid but coarse; a graded scale separates lessons faster.",
                )
            )

    # Every arm collapsing to the same mean.
    seen = post.n >= 5
    if int(seen.sum()) >= 5 and float(np.std(post.mean[seen])) < COLLAPSE_SPREAD:
        findings.append(
            Finding(
                "posteriors-collapsed",
                PROBLEM,
                f"the {int(seen.sum())} lessons with 5+ sessions all have mean {float(np.mean(post.mean[seen])):.3f} "
                f"(spread {float(np.std(post.mean[seen])):.4f})",
                "Credit carries no signal: check that salience is computed (not all 0.5) and rewards vary.",
            )
        )

    # Ghost arms: in the log, not in the library.
    ghosts = [arm for arm in data.arm_ids if arm not in known]
    if ghosts:
        by_name: dict[str, list[str]] = {}
        for lesson_id in known:
            by_name.setdefault(PurePosixPath(lesson_id).name, []).append(lesson_id)
        hints = []
        for ghost in ghosts:
            moved = by_name.get(PurePosixPath(ghost).name)
            hints.append(f"{ghost} (moved to {moved[0]}?)" if moved and len(moved) == 1 else ghost)
        findings.append(
            Finding(
                "ghost-arms",
                WARNING,
                f"{len(ghosts)} lesson(s) in the log are not in the library: {_names(hints)}",
                "Renamed or deleted lessons keep their old evidence under the old id; "
                "restore the file or accept that the arm is retired.",
                tuple(ghosts),
            )
        )
    prefixed = ws.prefixed_id_count()
    if prefixed:
        findings.append(
            Finding(
                "prefixed-ids",
                WARNING,
                f"{prefixed} lesson entries in the log use a 'lessons/' prefix",
                "They are read as the same arm as the unprefixed id; new records should omit the prefix.",
            )
        )

    # Lessons never injected / never salient.
    if data.n_sessions >= MIN_SESSIONS_FOR_NEVER_INJECTED:
        never = sorted(lid for lid in active if lid not in usage or usage[lid].injected == 0)
        if never:
            findings.append(
                Finding(
                    "never-injected",
                    WARNING,
                    f"{len(never)} active lesson(s) never injected in {data.n_sessions} sessions: {_names(never)}",
                    "Their keywords may never match a session context; widen them or archive the lesson.",
                    tuple(never),
                )
            )
    never_salient = sorted(
        lid for lid, u in usage.items() if u.injected >= MIN_INJECTED_FOR_NEVER_SALIENT and u.salient == 0
    )
    if never_salient:
        findings.append(
            Finding(
                "never-salient",
                WARNING,
                f"{len(never_salient)} lesson(s) injected 5+ times but never mentioned in a journal: "
                + _names(never_salient),
                "Their keywords do not describe what happens when they apply; they only ever get floor credit.",
                tuple(never_salient),
            )
        )
    missing = ws.missing_salience_count()
    if missing:
        findings.append(
            Finding(
                "missing-salience",
                WARNING,
                f"{missing} lesson entries in the log have no salience and count as 0.5",
                "Record sessions with `lesson-credit record`, which stores salience for every lesson.",
            )
        )

    # Keywords that match almost every journal.
    broad = ws.broad_keywords()
    if broad:
        findings.append(
            Finding(
                "broad-keywords",
                WARNING,
                f"{len(broad)} lesson(s) have a keyword that matches most journals: "
                + _names([f"{lid} ({reason.split(':')[0]})" for lid, reason in sorted(broad.items())], 5),
                "A keyword that is everywhere gives full salience for free; use a more specific phrase.",
                tuple(sorted(broad)),
            )
        )
    findings.sort(key=lambda f: (f.severity != PROBLEM, f.code))
    return findings
