"""Checks of the library and its configuration: no lessons, lesson files or gptme.toml that cannot be read
whole, lessons never injected or never salient, keywords too broad, string outcomes with no reward."""

from __future__ import annotations

from lesson_credit.core.bandit.config import PENDING_OUTCOME
from lesson_credit.core.bandit.select import names_kind
from lesson_credit.core.base.ids import quoted, read_as
from lesson_credit.core.base.numbers import counted
from lesson_credit.core.health.data import (
    ERROR,
    MIN_INJECTED_FOR_NEVER_SALIENT,
    MIN_SESSIONS_FOR_NEVER_INJECTED,
    WARNING,
    Finding,
    HealthData,
    agree,
    names,
)
from lesson_credit.core.library.keyword_limits import keywords_of_reason
from lesson_credit.core.library.lessons import CONFIG, IGNORED
from lesson_credit.core.library.problem_kinds import KINDS

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


def lesson_problems(h: HealthData) -> list[Finding]:
    findings = []
    for kind in KINDS:
        if found := [p for p in h.lesson_problems if p.kind == kind.kind]:
            n = sum(keywords_of_reason(p.reason) for p in found) if kind.kind == IGNORED else len(found)
            message = f"{kind.counted(n)}: " + names([str(p) for p in found], 3)
            items, reasons = tuple(p.path for p in found), tuple(p.reason for p in found)
            findings.append(Finding(kind.code, kind.severity, message, kind.advice, items, reasons))
    return findings


def unpassable_ids(h: HealthData) -> list[Finding]:
    """Each lesson whose id `record` reads as another (`read_as`): `select` prints it; a hook cannot pass it back."""
    findings = []
    for lesson_id in sorted(h.known):
        if (read := read_as(lesson_id)) is None:
            continue
        then = (
            f"credits {quoted(read)} instead (and is refused when select drew both)"
            if read in h.known
            else "is refused (not in the lesson library)"
        )
        findings.append(
            Finding(
                "unpassable-id",
                WARNING,
                f"lesson {quoted(lesson_id)}: record reads this id as {quoted(read)}: when select draws it, a hook "
                f"passing it back to record {then}",
                "Rename the lesson's file: record and the log's reader take an id without the spaces at its ends, "
                "a backslash as a folder's / and a leading lessons/ as gptme's prefix.",
                (lesson_id,),
            )
        )
    return findings


def library_config(h: HealthData) -> list[Finding]:
    problems = [p for p in h.lesson_problems if p.kind == CONFIG]
    if not problems:
        return []
    return [
        Finding(
            "library-config",
            ERROR,
            "the library gptme.toml configures cannot be loaded whole: " + names([p.reason for p in problems], 3),
            "Fix gptme.toml's [lessons] dirs (a folder that does not exist may be a git submodule not checked out: "
            "`git submodule update --init`); until then `select` refuses to draw from the incomplete library.",
            tuple(p.path for p in problems),
            tuple(p.reason for p in problems),
        )
    ]


def category_keywords(h: HealthData) -> list[Finding]:
    """Keywords of config.toml's [categories] that `select` does not count, as a lesson's are not."""
    if not h.category_problems:
        return []
    names_of, reasons = list(h.category_problems), ["; ".join(why) for why in h.category_problems.values()]
    n = sum(keywords_of_reason(reason) for why in h.category_problems.values() for reason in why)
    message = f"{counted(n, 'keyword')} of config.toml's [categories] {agree(n, 'is', 'are')} not used: "
    return [
        Finding(
            "category-keywords-ignored",
            WARNING,
            message + names([f"{name!r}: {why}" for name, why in zip(names_of, reasons, strict=True)], 3),
            "Fix or shorten what each reason names (a wildcard of too many parts, more wildcard keywords than a "
            "category counts); `select` without --category finds the kind of work by the rest meanwhile.",
            tuple(names_of),
            tuple(reasons),
        )
    ]


# Lessons never injected / never salient.


def never_injected(h: HealthData) -> list[Finding]:
    if h.n_sessions < MIN_SESSIONS_FOR_NEVER_INJECTED:
        return []
    never = sorted(lid for lid in h.active if lid not in h.usage or h.usage[lid].injected == 0)
    if not never:
        return []
    kinds = sorted({kind.strip() for kind in h.session_kinds})
    other_kinds = [lid for lid in never if _for_other_kinds(h.lesson_kinds.get(lid, ()), kinds)]
    message = f"{counted(len(never), 'active lesson')} never injected in {counted(h.n_sessions, 'session')}: "
    message += names(never)
    advice = "Their keywords may never match a session context; widen them or archive the lesson."
    reasons = [message] * len(never)
    if other_kinds:
        message += (
            f"; {len(other_kinds)} of them for kinds of work no session had (match.session_categories): "
            + names(other_kinds)
        )
        advice += (
            " A lesson whose match.session_categories name none of the sessions' kinds of work (their categories) "
            "is left out by `select --category`: name the kinds it is for, or remove the field (then it is for any)."
        )
        for i, lid in enumerate(never):
            if lid in other_kinds:
                own = names(list(h.lesson_kinds[lid]), 5)
                reasons[i] = f"its match.session_categories ({own}) name none of the sessions' kinds of work "
                reasons[i] += f"({names(kinds, 5)}): `select --category` leaves it out"
    return [Finding("never-injected", WARNING, message, advice, tuple(never), tuple(reasons))]


def _for_other_kinds(lesson_kinds: tuple[str, ...], session_kinds: list[str]) -> bool:
    """Whether a lesson names kinds of work and the sessions had kinds, none of them one of its own
    (compared as `select --category` compares them)."""
    return bool(lesson_kinds and session_kinds) and not any(names_kind(lesson_kinds, k) for k in session_kinds)


def never_salient(h: HealthData) -> list[Finding]:
    never = sorted(lid for lid, u in h.usage.items() if u.injected >= MIN_INJECTED_FOR_NEVER_SALIENT and u.salient == 0)
    if not never:
        return []
    return [
        Finding(
            "never-salient",
            WARNING,
            f"{counted(len(never), 'lesson')} injected 5+ times but never mentioned in a journal: " + names(never),
            "Their keywords do not describe what happens when they apply; they only ever get floor credit.",
            tuple(never),
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
            f"{counted(len(broad), 'lesson')} {agree(len(broad), 'has', 'have')} a keyword that matches most "
            "journals: " + names([f"{lid} ({reason.split(':')[0]})" for lid, reason in sorted(broad.items())], 5),
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
            f"{counted(sum(unmapped.values()), 'session')} {agree(sum(unmapped.values()), 'has', 'have')} a string "
            "outcome with no reward mapped: " + names([repr(label) for label in labels]),
            "Map them in config.toml's [outcomes] table (outcome = reward in [0, 1]); until then "
            "those sessions stay pending.",
            tuple(labels),
            tuple(counted(unmapped[label], "session") for label in labels),
        )
    ]
