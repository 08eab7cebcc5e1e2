"""The What-if screen's read model: every lesson's mean and rank now and under the proposed settings."""

from __future__ import annotations

from dataclasses import dataclass

from msgspec.structs import replace

from lesson_credit.core.api import CreditSettings, LessonRow, PosteriorTable


@dataclass(frozen=True)
class WhatIfRow:
    path: str
    category: str
    status: str
    n: int
    mean_now: float
    mean_then: float
    rank_now: int  # 1 = best mean
    rank_then: int

    @property
    def delta(self) -> float:
        return self.mean_then - self.mean_now

    @property
    def rank_change(self) -> int:
        """Places moved up (positive) or down (negative) under the what-if settings."""
        return self.rank_now - self.rank_then


@dataclass(frozen=True, eq=False)
class WhatIfView:
    current: CreditSettings
    proposed: CreditSettings
    rows: tuple[WhatIfRow, ...]  # by rank under the proposed settings
    policy: str = ""  # the selection policy in force (saved)
    current_priority: tuple[str, ...] = ()  # the reward priority saved, and the one proposed (docs/records.md)
    proposed_priority: tuple[str, ...] = ()


def ranks(rows: tuple[LessonRow, ...]) -> dict[str, int]:
    """1-based rank by posterior mean, best first; ties broken by id so ranks are stable. Lessons never
    used (n 0: the prior's mean) rank after every lesson with evidence, as Lessons, status and replay list them."""
    order = sorted(rows, key=lambda r: (r.n <= 0, -r.mean, r.path))
    return {row.path: i + 1 for i, row in enumerate(order)}


def what_if_view(
    current: PosteriorTable,
    proposed: PosteriorTable,
    settings: CreditSettings,
    hidden: frozenset[str],
    policy: str,
    priorities: tuple[tuple[str, ...], tuple[str, ...]],
) -> WhatIfView:
    """The view of two tables, without the `hidden` rows (retired arms, as `replay` shows them);
    `priorities`: (saved, proposed) reward priorities."""
    if hidden:
        current = replace(current, rows=tuple(r for r in current.rows if r.path not in hidden))
        proposed = replace(proposed, rows=tuple(r for r in proposed.rows if r.path not in hidden))
    rank_now = ranks(current.rows)
    rank_then = ranks(proposed.rows)
    now = {row.path: row for row in current.rows}
    rows = [
        WhatIfRow(
            path=row.path,
            category=row.category,
            status=row.status,
            n=row.n,
            mean_now=now[row.path].mean if row.path in now else row.mean,
            mean_then=row.mean,
            rank_now=rank_now.get(row.path, rank_then[row.path]),
            rank_then=rank_then[row.path],
        )
        for row in proposed.rows
    ]
    rows.sort(key=lambda r: (r.rank_then, r.path))
    return WhatIfView(current.settings, settings, tuple(rows), policy, *priorities)
