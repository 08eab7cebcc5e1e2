"""A lesson's effect and credit over session order (docs/estimates.md, "Over time").

Two series per lesson, over the same windows of the log:

- **The joint effect within each window.** The lesson's graded sessions are cut, in log order, into
  windows holding as many of its own injections each (`one_step.windows`: the machinery of the
  `drifting` flag, whose halves are two such windows), about `PER_WINDOW` injections apiece and at
  most `MAX_WINDOWS`. Every graded session between two cuts belongs to the window (the lesson's
  controls there). The estimate is the one-step estimate of the injection design's robust fit: the
  lesson's coefficient plus the slope of the fit's residuals on its centred injection within the
  window (for a lesson alone in its sessions, exactly the within-window difference of means, with
  the category baselines, and the time blocks' in a log long enough to have them: `joint.time_blocks`);
  its interval is Student's t from the same HC2 sandwich restricted to
  the window. One window (the whole log) shows the joint effect itself, the one `loo` reports as
  `joint` (`claims.joint_interval`). Only a lesson the whole log identifies gets them (a group: the group's column); a
  window with fewer than `one_step.MIN_CELL` sessions with or without the lesson shows none (both counted in
  the baseline groups where its injection varies within the window: the sessions its estimate reads; the one
  window of the whole log counts every graded session, as `loo`'s `joint` does).
- **The credit posterior after each window**: the Beta posterior folded (`bandit.fold`, the credit
  settings in force) over the graded sessions up to the window's last one: what the dashboard's
  mean and interval were at that point. The last window ends at the last graded session, so its
  posterior is today's.

Intervals are 90% (`LEVEL`) for both series.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
import numpy.typing as npt
from msgspec.structs import replace as struct_replace

from lesson_credit.core.analysis.claims import Fitted, joint_interval, session_label, unidentified_reason
from lesson_credit.core.analysis.joint import Design
from lesson_credit.core.analysis.one_step import Interval, interval_of, windows
from lesson_credit.core.bandit.fold import fold
from lesson_credit.core.log.snapshot import FoldData
from lesson_credit.core.model.settings import CreditSettings

IntArray = npt.NDArray[np.int64]

MAX_WINDOWS = 8
PER_WINDOW = 10  # the lesson's injections per window (a window's estimate needs one_step.MIN_CELL)
LEVEL = 0.90


@dataclass(frozen=True)
class Window:
    """One window of the log: its graded sessions (positions in log order, 1-based, inclusive), the
    joint effect within it and the credit posterior after its last session."""

    first: int
    last: int
    last_session: str  # id of its last graded session
    effect: Interval | None
    credit_mean: float
    credit_low: float
    credit_high: float

    def as_json(self) -> dict[str, Any]:
        effect = None
        if self.effect is not None:
            low, high = self.effect.bounds(LEVEL)
            effect = {
                "estimate": self.effect.estimate,
                "ci_low": low,
                "ci_high": high,
                "n_with": self.effect.n_with,
                "n_without": self.effect.n_without,
            }
        return {
            "first": self.first,
            "last": self.last,
            "last_session": self.last_session,
            "effect": effect,
            "credit": {"mean": self.credit_mean, "ci_low": self.credit_low, "ci_high": self.credit_high},
        }


@dataclass(frozen=True)
class OverTime:
    """A lesson's two series (see the module); `windows` empty when no graded session injected it."""

    lesson_id: str
    graded: int  # graded sessions in the log
    injected: int  # of them, with the lesson (its first sessions set apart not counted: `apart`)
    identified: bool
    reason: str | None  # why no joint effect is shown (not identified, never injected)
    group: tuple[str, ...]  # the lessons it always appears with (itself included), or ()
    strategy: str
    windows: tuple[Window, ...]
    apart: int = 0  # its first graded sessions with it, set apart (`core.analysis.early`): neither with nor without
    LEVEL: ClassVar[float] = LEVEL  # of every interval in it

    def as_json(self) -> dict[str, Any]:
        return {
            "lesson": self.lesson_id,
            "level": LEVEL,
            "graded": self.graded,
            "injected": self.injected,
            "apart": self.apart,
            "identified": self.identified,
            "reason": self.reason,
            "group": list(self.group) or None,
            "strategy": self.strategy,
            "windows": [w.as_json() for w in self.windows],
        }


def window_count(injected: int) -> int:
    """How many windows a lesson with `injected` graded sessions is cut into."""
    return max(1, min(MAX_WINDOWS, injected // PER_WINDOW))


def too_few(graded: int) -> str:
    """Why nothing could be fitted: the graded sessions, as many as there are (one said "no graded sessions")."""
    if not graded:
        return "no graded sessions to compare"
    return f"only {graded:,} graded session{'' if graded == 1 else 's'}: too few to fit"


def lesson_over_time(
    data: FoldData,
    session_ids: Sequence[str],
    design: Design,
    fitted: Fitted,
    settings: CreditSettings,
    lesson_id: str,
) -> OverTime:
    """The lesson's series (see the module) from the log's design and its `claims.fit_columns`
    (`session_ids`: each fold row's session id)."""
    graded = design.n
    arm = data.arm_ids.index(lesson_id) if lesson_id in data.arm_ids else -1
    column = int(fitted.column_of[arm]) if arm >= 0 and arm < len(fitted.column_of) else -1
    if column < 0 or fitted.fit is None:
        nothing = "not injected in any graded session" if column < 0 else too_few(graded)
        return OverTime(lesson_id, graded, 0, False, nothing, (), settings.strategy, ())
    members = fitted.columns[column]
    group = tuple(data.arm_ids[a] for a in members) if len(members) > 1 else ()
    injected = int(fitted.counts[column])
    identified = bool(fitted.identified[column])
    label = session_label(design, session_ids)
    reason = None if identified else unidentified_reason(fitted, column, injected, fitted.without(column), label)
    n_windows = np.ones(fitted.op.p, dtype=np.int64)
    n_windows[column] = window_count(injected)
    estimate, var, n_with, n_without, ends = windows(fitted.op, fitted.fit, n_windows, fitted.first_columns())
    count = int(n_windows[column])
    credit = _credit_after(data, settings, arm, design.rows[ends[column, :count]])
    out, first = [], 0
    for w in range(count):
        last = int(ends[column, w])
        effect = None
        if identified and count == 1:  # the whole log: the joint effect itself (the headline's)
            effect = joint_interval(fitted, column, injected, fitted.without(column))
        elif identified:
            effect = interval_of(estimate[column, w], var[column, w], n_with[column, w], n_without[column, w])
        mean, low, high = credit[w]
        session = session_ids[int(design.rows[last])]
        out.append(Window(first + 1, last + 1, session, effect, mean, low, high))
        first = last + 1
    first = int(fitted.first_columns()[column])
    apart = int(fitted.counts[first]) if first >= 0 else 0
    return OverTime(lesson_id, graded, injected, identified, reason, group, settings.strategy, tuple(out), apart)


def _credit_after(
    data: FoldData, settings: CreditSettings, arm: int, last_rows: IntArray
) -> list[tuple[float, float, float]]:
    """The arm's Beta posterior (mean, 5% and 95% quantiles) folded over the sessions up to each row."""
    from scipy.special import betaincinv

    out = []
    rows = np.arange(data.n_sessions)
    graded = np.flatnonzero(~np.isnan(data.base))
    final = int(graded[-1]) if len(graded) else -1  # the last graded session: its window's posterior is today's
    for row in last_rows.tolist():
        base = np.where(rows <= row, data.base, np.nan)
        post = fold(_priors_then(data, arm, row) if row < final else data, settings, base)
        a, b = float(post.alpha[arm]), float(post.beta[arm])
        steps = data.added_after  # gptme's updates logged after the window: not yet (in log order, one at a time)
        for at in np.flatnonzero((steps.arm == arm) & (steps.after > row + 1)).tolist() if row < final else ():
            a, b = a - float(steps.alpha[at]), b - float(steps.beta[at])
        tail = (1.0 - LEVEL) / 2.0
        low, high = (float(betaincinv(a, b, q)) for q in (tail, 1.0 - tail))
        out.append((a / (a + b), low, high) if a > 0 and b > 0 else (math.nan, math.nan, math.nan))
    return out


def _priors_then(data: FoldData, arm: int, row: int) -> FoldData:
    """`data` with the arm's starting point as the prior events logged by the end of session `row` set
    it (none yet: the configured prior): an import logged later was not in force then."""
    steps = data.prior_after
    logged = np.flatnonzero((steps.arm == arm) & (steps.after <= row + 1))
    start = (float(steps.alpha[logged[-1]]), float(steps.beta[logged[-1]])) if len(logged) else (math.nan, math.nan)
    now = (float(data.prior_alpha[arm]), float(data.prior_beta[arm]))
    if start == now or (math.isnan(start[0]) and math.isnan(now[0])):
        return data
    prior_alpha, prior_beta = data.prior_alpha.copy(), data.prior_beta.copy()
    prior_alpha[arm], prior_beta[arm] = start
    return struct_replace(data, prior_alpha=prior_alpha, prior_beta=prior_beta)
