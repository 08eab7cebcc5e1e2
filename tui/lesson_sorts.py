"""The Lessons table's columns, sort keys and filter (no widget: the screen and its tests use them)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from lesson_credit.core.api import LessonRow


def _last_credit(row: LessonRow) -> float:
    return -1.0 if row.last_credit is None else row.last_credit


# the Lessons screen's help: every column's meaning (at 80 columns no header says what "ranking" or "last" is)
LESSONS_HELP = (
    "Every lesson's posterior: mean, the posterior mean of its reward rate (0 to 1), and its 95% CI; n, the graded "
    "sessions it was injected in; ranking, the shrunk joint estimate of its effect on a session's reward (loo --json's "
    "ranking), to rank by: not Analysis's effect, whose sign can differ; last, its latest credit. Highlight a lesson "
    "to plot its density; pin up to three to compare. On a short terminal the lesson's panel scrolls (its bar shows "
    "it): tab to it, then the arrows."
)

# column key -> (header, sort key)
# (in display order: what matters most first, so a narrow terminal loses the rest at the right)
SORTS: dict[str, tuple[str, Callable[[LessonRow], Any]]] = {
    "lesson": ("lesson", lambda r: r.path),
    "n": ("n", lambda r: (r.n, r.path)),
    "mean": ("mean", lambda r: (r.mean, r.path)),
    "interval": ("95% CI", lambda r: (r.ci_low, r.ci_high, r.path)),
    # the shrunk joint estimate, loo-results.json's `ranking`: not Analysis's `effect` (the headline `loo`
    # prints, unshrunk), whose sign can differ. By the view's effects: see sorted_rows
    "effect": ("ranking", lambda r: (0.0, r.path)),
    "last": ("last", lambda r: (_last_credit(r), r.path)),
    "category": ("category", lambda r: (r.category, r.path)),
    "status": ("status", lambda r: (r.status, r.path)),
}


def lessons_title(policy: str | None, retired: int, show_retired: bool, unused: int) -> str:
    """The Lessons screen's title: the policy in force, the retired arms hidden or shown, and (sorted by
    mean) how many lessons never used come last."""
    title = f"Lessons · policy {policy}" if policy else "Lessons"
    if retired:
        title += f" · {retired} retired shown (R hides)" if show_retired else f" · {retired} retired hidden (R shows)"
    if unused:
        title += f" · {unused} never used, listed last"
    return title


def matches(row: LessonRow, needle: str) -> bool:
    """Case-insensitive substring match on id, title, category and status."""
    if not needle:
        return True
    needle = needle.lower()
    return any(needle in field.lower() for field in (row.path, row.title, row.category, row.status))


def sorted_rows(
    rows: tuple[LessonRow, ...], column: str, reverse: bool, effects: Mapping[str, float] | None = None
) -> list[LessonRow]:
    if column == "effect":  # lessons without an estimate last, in either direction
        known = effects or {}
        have = _ties_by_id([r for r in rows if r.path in known], lambda r: (known[r.path], r.path), reverse)
        return have + sorted((r for r in rows if r.path not in known), key=lambda r: r.path)
    key = SORTS[column][1]
    if column == "lesson":
        return sorted(rows, key=key, reverse=reverse)
    if column == "mean":  # never used (n 0): the prior's mean says nothing, so after every lesson with evidence
        used = _ties_by_id([r for r in rows if r.n > 0], key, reverse)
        return used + sorted((r for r in rows if r.n <= 0), key=lambda r: r.path)
    return _ties_by_id(list(rows), key, reverse)


def _ties_by_id(rows: list[LessonRow], key: Callable[[LessonRow], Any], reverse: bool) -> list[LessonRow]:
    """By `key` (a tuple ending with the id) in either direction, equal values always in id order, as `status`
    lists them: sorted by id first, then by the rest of the key (a reversed sort keeps equal rows in order)."""
    by_id = sorted(rows, key=lambda r: r.path)
    return sorted(by_id, key=lambda r: key(r)[:-1], reverse=reverse)
