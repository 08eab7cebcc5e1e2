"""The events a write command appends, built and checked from its input (docs/format.md §5.2-5.5).

Nothing here touches the log: `recording` reads the session's journal, the rest are functions of
their arguments; the workspace checks an event against the log under its lock and appends it.
"""

from __future__ import annotations

import datetime as dt
import hashlib
from collections import Counter
from collections.abc import Callable, Collection, Sequence
from pathlib import Path
from typing import Any

from msgspec import Struct

from lesson_credit.core.base.errors import WorkspaceError
from lesson_credit.core.base.ids import lesson_named, normalize_id, one_form, unicode_form_name, unicode_forms
from lesson_credit.core.library.journals import read_for_record
from lesson_credit.core.library.lessons import LessonProblem, Library
from lesson_credit.core.library.salience import SalienceBreakdown, salience_breakdowns
from lesson_credit.core.log import events as log_events
from lesson_credit.core.log.events import PRIOR, SESSION
from lesson_credit.core.model import credit as credit_mod
from lesson_credit.core.model.settings import CreditSettings

MAX_SESSION_ID = 200  # characters; longer ids (or control characters) are refused by the writers


def check_session_id(session_id: str) -> None:
    if not session_id or not session_id.strip():
        raise WorkspaceError("session id must not be empty")
    if any(ch in session_id for ch in "\n\r\x00"):
        raise WorkspaceError("session id must be a single line")
    if len(session_id) > MAX_SESSION_ID or not session_id.isprintable():
        shown = session_id[:60] + ("..." if len(session_id) > 60 else "")
        raise WorkspaceError(f"session id {shown!r}: at most {MAX_SESSION_ID} printable characters, please")


def is_category(category: str) -> bool:
    """Whether `category` can be given to record or select: one printable line of at most MAX_SESSION_ID
    characters (a log written by another tool may hold any string)."""
    return len(category) <= MAX_SESSION_ID and category.isprintable()


def check_category(category: str | None) -> None:
    """A session's category (record, select) is one printable line of at most MAX_SESSION_ID characters."""
    if category is not None and not is_category(category):
        raise WorkspaceError(f"category must be one line of at most {MAX_SESSION_ID} printable characters")


class Recording(Struct, frozen=True):
    """A session to record, checked and measured from its journal before the log is locked."""

    session_id: str
    reward: float | None
    journal: bytes
    journal_path: str  # as stored: relative to the workspace when inside it
    breakdowns: tuple[SalienceBreakdown, ...]
    category: str | None
    grader: str
    outcome: str | None = None  # a gptme outcome word given for the reward (`reward` is what it maps to)
    during: frozenset[str] = frozenset()  # lessons included during the session, not chosen before it
    notes: tuple[str, ...] = ()  # what the caller says besides: a lesson named in another Unicode form

    def left_out(self, selected: Sequence[str]) -> list[str]:
        """The lessons a selection chose (as the log's reader read them) that this record does not name, in any
        Unicode form: the effect estimates count them in no way for the session (core/analysis/candidacy.py)."""
        named = {arm_key(b.lesson_id) for b in self.breakdowns}
        return [lesson_id for lesson_id in selected if one_form(lesson_id) not in named]

    def passed_over(self, selection: log_events.SelectionEvent | None) -> list[str]:
        """The lessons this record names, not as included during the session, that `selection` (its session's latest,
        as the log's reader read it) had among its candidates and did not choose (`SelectionEvent.passed_over`, the
        rule the log's reading applies too): the log reads them as included during the session
        (core/log/unchosen.py)."""
        passed = frozenset[str]() if selection is None else selection.passed_over()
        during = {arm_key(lesson_id) for lesson_id in self.during}
        keys = [(arm_key(b.lesson_id), b.lesson_id) for b in self.breakdowns]
        return [lesson_id for key, lesson_id in keys if key in passed and key not in during]

    def event(
        self, settings: CreditSettings, propensity: dict[str, float], timestamp: str, selected: Sequence[str] = ()
    ) -> dict[str, Any]:
        """The session event: each lesson's salience and, when graded, its credited reward under
        `settings`, with the propensity a logged selection gave it; `"included"`: "during" for the
        lessons included during the session, "before" for those its logged selection (`selected`) chose.
        The selection's lessons (as the log's reader read them: `normalize_id` applied) are found by the arm
        they name (`arm_key`), so a lesson the selection spelled in another Unicode form (its file's name on
        another machine) keeps its propensity and its mark."""
        propensity = {one_form(lesson_id): p for lesson_id, p in propensity.items()}
        chosen = {one_form(lesson_id) for lesson_id in selected}
        during = {arm_key(lesson_id): lesson_id for lesson_id in self.during}
        before = chosen - set(during)
        twice = sorted(during[key] for key in chosen.intersection(during))
        if twice:
            raise WorkspaceError(
                f"chosen before the session by its select event, so not included during it: {twice[0]}"
            )
        reward = self.reward
        entries = []
        for b in self.breakdowns:
            w = float(credit_mod.weight(b.salience, settings.floor))
            entry: dict[str, Any] = {
                "path": b.lesson_id,
                "salience": b.salience,
                "reward": None if reward is None else float(credit_mod.credited_reward(reward, w, settings.strategy)),
                "keywords": len(b.keywords),
                "hits": b.hit_keywords,
            }
            key = arm_key(b.lesson_id)
            if key in propensity:
                entry["propensity"] = propensity[key]
            if key in during or key in before:
                entry["included"] = "during" if key in during else "before"
            entries.append(entry)
        event = {
            "type": SESSION,
            "session_id": self.session_id,
            "timestamp": timestamp,
            "outcome": reward,
            "base_reward": reward,
            "lessons": entries,
            "journal_path": self.journal_path,
            "journal_sha256": hashlib.sha256(self.journal).hexdigest(),
            "category": self.category,
            "strategy": settings.strategy,
            "floor": settings.floor,
            "grader": self.grader if reward is not None else None,
        }
        if self.outcome is not None:  # as gptme-sessions logs it: the word, and the [outcomes] mapping decides
            event["outcome"] = self.outcome
            del event["base_reward"]
        return event


def arm_key(lesson_id: str) -> str:
    """The arm a lesson id names, as the log's reader keys it: `lessons/x.md` and `x.md`, `café.md` with é as one
    code point and as `e` and a combining accent, are one arm (core/log/arm_names.py)."""
    return one_form(normalize_id(lesson_id))


def recording(
    session_id: str,
    journal: Path,
    lessons: Sequence[str],
    library: Callable[[], Library],
    root: Path,
    *,
    reward: float | None,
    category: str | None,
    grader: str,
    allow_outside: bool = False,
    outcome: str | None = None,
    during: Sequence[str] = (),
) -> Recording:
    """A session to record: the id, reward and lessons checked (every lesson in the library, none
    twice; `library` is asked for once the journal is read), the journal read and each lesson's
    salience in it. No lessons is fine: a session with nothing injected still counts for the baseline.
    `during`: more lessons of the session, included during it (gptme pulls a lesson in when its
    keywords come up), not chosen before it."""
    lessons = [*lessons, *during]
    check_session_id(session_id)
    if len(lessons) > log_events.MAX_SESSION_LESSONS:
        raise WorkspaceError(f"{len(lessons):,} lessons for one session: at most {log_events.MAX_SESSION_LESSONS:,}")
    check_category(category)
    if reward is not None:
        reward = credit_mod.check_reward(reward)
    raw, text, stored_path = read_for_record(journal, root, allow_outside)
    read = library()
    by_id = read.by_id()
    ids, notes = _library_forms([normalize_id(lesson) for lesson in lessons], by_id)
    unknown = [(lesson, lid) for lesson, lid in zip(lessons, ids, strict=True) if lid not in by_id]
    if unknown:
        broken = {one_form(p.lesson_id): p for p in read.problems if p.broken and p.lesson_id is not None}
        names = [
            _not_loaded(name, broken[one_form(lid)]) if one_form(lid) in broken else _with_nearest(name, by_id)
            for name, lid in unknown
        ]
        raise WorkspaceError(f"not in the lesson library: {', '.join(names)}")
    both = sorted(set(ids[: len(ids) - len(during)]) & set(ids[len(ids) - len(during) :]))
    if both:  # (a lesson is one or the other: named apart from one listed twice in one list)
        said = "given both as chosen before the session and as included during it (--during)"
        raise WorkspaceError(f"{said}: {', '.join(both)}")
    duplicates = sorted(lid for lid, n in Counter(ids).items() if n > 1)
    if duplicates:
        raise WorkspaceError(f"lesson given twice: {', '.join(duplicates)}")
    breakdowns = salience_breakdowns(text, [(lid, by_id[lid].keywords) for lid in ids])
    included = frozenset(ids[len(ids) - len(during) :])
    return Recording(
        session_id, reward, raw, stored_path, tuple(breakdowns), category, grader, outcome, included, notes
    )


def _library_forms(ids: list[str], by_id: Collection[str]) -> tuple[list[str], tuple[str, ...]]:
    """`ids` with each one not in the library but whose other Unicode form is (`café.md` typed with a
    combining accent, the file's name with é as one code point: they look the same) as the library's id,
    and a note for each such."""
    notes = []
    for i, lesson_id in enumerate(ids):
        library_id = next((form for form in unicode_forms(lesson_id)[1:] if form in by_id), None)
        if lesson_id not in by_id and library_id is not None:
            ids[i] = library_id
            notes.append(
                f"lesson {lesson_id!r} ({unicode_form_name(lesson_id)}) is logged as the library's {library_id!r} "
                f"({unicode_form_name(library_id)}): the same name in another Unicode form"
            )
    return ids, tuple(notes)


def _not_loaded(name: str, problem: LessonProblem) -> str:
    """`name`, a lesson whose file the library could not load (lint's broken-lessons), and why."""
    return f"{name} (its file {problem.path} is not loaded: {problem.reason})"


def _with_nearest(name: str, ids: Collection[str]) -> str:
    """`name`, and the library id it may have meant: the one whose file name or tail it is (as other
    commands' `--lesson` take it; a record names lessons exactly), else the closest spelling of an id or of
    a file name alone (`mock-boundries`); ids joined by commas are said to be one name."""
    import difflib

    if "," in name:
        return f"{name} (lesson ids are separated by spaces, not commas)"
    try:
        near = lesson_named(name, ids)
    except WorkspaceError:  # several end in it: no one to name
        return name
    if near not in ids:
        wanted = normalize_id(name)
        stems: dict[str, list[str]] = {}
        for lesson_id in ids:
            stems.setdefault(lesson_id.rsplit("/", 1)[-1].removesuffix(".md"), []).append(lesson_id)
        close = difflib.get_close_matches(wanted, list(ids), n=1, cutoff=0.8)
        stem = difflib.get_close_matches(wanted.rsplit("/", 1)[-1].removesuffix(".md"), list(stems), n=1, cutoff=0.8)
        near = close[0] if close else stems[stem[0]][0] if stem and len(stems[stem[0]]) == 1 else ""
    return f"{name} (did you mean {near}?)" if near else name


def selection_id(session_id: str | None, clock: Callable[[], dt.datetime]) -> str:
    """The id a selection is logged under: the one given (checked), else a new one from the
    clock and a random suffix."""
    if session_id is not None:
        check_session_id(session_id)
        return session_id
    import secrets  # only a selection without a session id draws one

    return f"{clock().strftime('%Y%m%dT%H%M%S')}-{secrets.token_hex(3)}"


def settings_with(
    settings: CreditSettings, strategy: str | None, floor: float | None, decay: float | None = None
) -> CreditSettings:
    """The settings with another strategy, floor and/or decay, checked."""
    try:
        return settings.with_(strategy=strategy, floor=floor, decay=decay)
    except ValueError as exc:
        raise WorkspaceError(str(exc)) from None


def prior_event(
    arms: dict[str, tuple[float, float, int]],
    rewards: dict[str, int] | None,
    timestamp: str,
    sessions: int = 0,
    created: str | None = None,
) -> dict[str, Any]:
    """A prior event: starting alpha/beta/n (and gptme's reward counts) for arms; `sessions`, the
    sessions the file it came from counted (its total_sessions; written when not 0); `created`, that
    file's (written when it has one: another import of that file is known by it)."""
    rewards = rewards or {}
    payload = {arm: {"alpha": a, "beta": b, "n": n, "rewards": rewards.get(arm, 0)} for arm, (a, b, n) in arms.items()}
    event: dict[str, Any] = {"type": PRIOR, "timestamp": timestamp, "arms": payload}
    if sessions:
        event["sessions"] = sessions
    if created is not None:
        event["created"] = created
    return event
