"""The events a write command appends, built and checked from its input (SPEC 4).

Pure functions: the workspace checks them against the log under its lock and appends the result.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Any

from core import credit as credit_mod
from core.errors import WorkspaceError
from core.events import GRADE, PRIOR, SESSION
from core.ids import normalize_id
from core.lessons import Lesson
from core.salience import SalienceBreakdown
from core.settings import CreditSettings
from core.views import GradeRecord


def check_session_id(session_id: str) -> None:
    if not session_id or not session_id.strip():
        raise WorkspaceError("session id must not be empty")
    if any(ch in session_id for ch in "\n\r\x00"):
        raise WorkspaceError("session id must be a single line")


def check_record(session_id: str, reward: float | None, lessons: Sequence[str]) -> float | None:
    """What `record` checks before reading anything; returns the reward."""
    check_session_id(session_id)
    if reward is not None:
        reward = credit_mod.check_unit(reward, "reward")
    if not lessons:
        raise WorkspaceError("no lessons given (--lessons ID ...)")
    return reward


def lesson_ids(lessons: Sequence[str], library: dict[str, Lesson]) -> list[str]:
    """The library ids of the lessons given for a session; refuses unknown or repeated ones."""
    ids = [normalize_id(lesson) for lesson in lessons]
    unknown = [lesson for lesson, lid in zip(lessons, ids, strict=True) if lid not in library]
    if unknown:
        raise WorkspaceError(f"not in the lesson library: {', '.join(unknown)}")
    duplicates = sorted({lid for lid in ids if ids.count(lid) > 1})
    if duplicates:
        raise WorkspaceError(f"lesson given twice: {', '.join(duplicates)}")
    return ids


def session_record(
    session_id: str,
    breakdowns: Sequence[SalienceBreakdown],
    settings: CreditSettings,
    *,
    reward: float | None,
    propensity: dict[str, float],
    timestamp: str,
    journal_path: str,
    journal: bytes,
    category: str | None,
    grader: str,
) -> dict[str, Any]:
    """A session event: each lesson's salience and, when graded, its credited reward under `settings`."""
    entries = []
    for b in breakdowns:
        w = float(credit_mod.weight(b.salience, settings.floor))
        entry: dict[str, Any] = {
            "path": b.lesson_id,
            "salience": b.salience,
            "reward": None if reward is None else float(credit_mod.credited_reward(reward, w, settings.strategy)),
            "keywords": len(b.keywords),
            "hits": b.hit_keywords,
        }
        if b.lesson_id in propensity:
            entry["propensity"] = propensity[b.lesson_id]
        entries.append(entry)
    return {
        "type": SESSION,
        "session_id": session_id,
        "timestamp": timestamp,
        "outcome": reward,
        "base_reward": reward,
        "lessons": entries,
        "journal_path": journal_path,
        "journal_sha256": hashlib.sha256(journal).hexdigest(),
        "category": category,
        "strategy": settings.strategy,
        "floor": settings.floor,
        "grader": grader if reward is not None else None,
    }


def check_grade(reward: float, grader: str) -> float:
    """The reward of a grade, checked (in [0, 1]) along with the grader's name."""
    reward = credit_mod.check_unit(reward, "reward")
    if not grader or "\n" in grader:
        raise WorkspaceError("grader must be a non-empty single line")
    return reward


def grade_event(session_id: str, reward: float, grader: str, timestamp: str, note: str | None) -> dict[str, Any]:
    """A grade event (checked by `check_grade`); the latest grade of a session is the one that counts."""
    event: dict[str, Any] = {
        "type": GRADE,
        "session_id": session_id,
        "base_reward": reward,
        "grader": grader,
        "timestamp": timestamp,
    }
    if note:
        event["note"] = note
    return event


def undo_event(session_id: str, history: Sequence[GradeRecord], timestamp: str, note: str | None) -> dict[str, Any]:
    """The grade event that puts the grade before the latest one back."""
    if len(history) < 2:
        state = "pending" if not history else "graded once"
        raise WorkspaceError(f"nothing to undo: session {session_id!r} is {state}; a grade cannot make it pending")
    latest, previous = history[-1], history[-2]
    return {
        "type": GRADE,
        "session_id": session_id,
        "base_reward": previous.base_reward,
        "grader": previous.grader,
        "timestamp": timestamp,
        "note": note or f"undo: {latest.base_reward:g} back to {previous.base_reward:g}",
    }


def prior_event(
    arms: dict[str, tuple[float, float, int]], rewards: dict[str, int] | None, timestamp: str
) -> dict[str, Any]:
    """A prior event: starting alpha/beta/n (and gptme's reward counts) for arms."""
    rewards = rewards or {}
    payload = {arm: {"alpha": a, "beta": b, "n": n, "rewards": rewards.get(arm, 0)} for arm, (a, b, n) in arms.items()}
    return {"type": PRIOR, "timestamp": timestamp, "arms": payload}
