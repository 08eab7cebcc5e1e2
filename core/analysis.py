"""Leave-one-out attribution: which lessons go with better sessions, and how far to trust it.

For each lesson, graded sessions split into those it was injected in and the rest:
- naive lift: mean reward with minus without, Welch's t-test and a 95% interval;
- category-controlled lift: the same within each session category, combined with
  weights n_with*n_without/(n_with+n_without) (Cochran-Mantel-Haenszel style), so a lesson
  injected mostly into easy categories does not look helpful for that reason;
- propensity-corrected lift: where selection events logged each candidate's probability of
  being selected, a self-normalised inverse-propensity-weighted (Hajek) estimate over the
  sessions in which the lesson was a candidate;
- Benjamini-Hochberg adjusted p-values across lessons, and confound flags with reasons.

All of it is vectorised over the fold's entry arrays; t quantiles come from scipy.special.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import numpy.typing as npt

from core.snapshot import FoldData

FloatArray = npt.NDArray[np.float64]

MIN_WITH = 5
MIN_WITHOUT = 20
BROAD_INJECTION_SHARE = 0.30
BROAD_KEYWORD_SHARE = 0.50
PROPENSITY_CLIP = (0.01, 0.99)


@dataclass(frozen=True)
class LooResult:
    path: str
    n_with: int
    n_without: int
    mean_with: float | None
    mean_without: float | None
    delta: float | None
    ci_low: float | None
    ci_high: float | None
    p_value: float | None
    p_adjusted: float | None
    delta_category: float | None  # category-controlled lift, None without categories
    p_category: float | None
    delta_ipw: float | None  # propensity-corrected lift, None without logged propensities
    n_ipw: int  # sessions where the lesson was a candidate with a known propensity
    ipw_gap: float | None  # delta_ipw - delta
    sufficient: bool
    insufficient_reason: str | None
    confounded: bool
    confound_reasons: tuple[str, ...] = ()

    @property
    def category_controlled(self) -> bool:
        return self.delta_category is not None

    def as_json(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "delta": self.delta,
            "p_value_approx": self.p_value,
            "p_adjusted": self.p_adjusted,
            "n_with": self.n_with,
            "n_without": self.n_without,
            "mean_with": self.mean_with,
            "mean_without": self.mean_without,
            "ci_low": self.ci_low,
            "ci_high": self.ci_high,
            "category_controlled": self.category_controlled,
            "delta_category": self.delta_category,
            "p_category": self.p_category,
            "delta_ipw": self.delta_ipw,
            "n_ipw": self.n_ipw,
            "ipw_gap": self.ipw_gap,
            "sufficient": self.sufficient,
            "insufficient_reason": self.insufficient_reason,
            "confounded": self.confounded,
            "confound_reason": "; ".join(self.confound_reasons) or None,
        }


def welch(
    mean1: FloatArray, var1: FloatArray, n1: FloatArray, mean2: FloatArray, var2: FloatArray, n2: FloatArray
) -> tuple[FloatArray, FloatArray, FloatArray]:
    """(delta, two-sided p, half-width of the 95% interval) of Welch's unequal-variance t-test."""
    from scipy.special import stdtr, stdtrit

    with np.errstate(divide="ignore", invalid="ignore"):
        a = var1 / n1
        b = var2 / n2
        se = np.sqrt(a + b)
        df = (a + b) ** 2 / (a**2 / (n1 - 1) + b**2 / (n2 - 1))
        delta = mean1 - mean2
        t = delta / se
        p = 2.0 * stdtr(df, -np.abs(t))
        half = stdtrit(df, 0.975) * se
    # Zero variance on both sides: the difference is exact.
    exact = (se == 0) & (n1 > 1) & (n2 > 1)
    p = np.where(exact, np.where(delta == 0, 1.0, 0.0), p)
    half = np.where(exact, 0.0, half)
    return delta, np.asarray(p, dtype=np.float64), np.asarray(half, dtype=np.float64)


def benjamini_hochberg(p_values: Sequence[float | None]) -> list[float | None]:
    """BH-adjusted p-values (step-up, monotone), None where the raw p is None."""
    indexed = [(p, i) for i, p in enumerate(p_values) if p is not None and not math.isnan(p)]
    out: list[float | None] = [None] * len(p_values)
    m = len(indexed)
    if not m:
        return out
    indexed.sort()
    running = 1.0
    for rank in range(m, 0, -1):
        p, i = indexed[rank - 1]
        running = min(running, p * m / rank)
        out[i] = min(1.0, running)
    return out


def _group_stats(
    arms: npt.NDArray[np.int32], rewards: FloatArray, n_arms: int
) -> tuple[FloatArray, FloatArray, FloatArray]:
    count = np.bincount(arms, minlength=n_arms).astype(np.float64)
    total = np.bincount(arms, weights=rewards, minlength=n_arms).astype(np.float64)
    squares = np.bincount(arms, weights=rewards * rewards, minlength=n_arms).astype(np.float64)
    return count, total, squares


def _mean_var(count: FloatArray, total: FloatArray, squares: FloatArray) -> tuple[FloatArray, FloatArray]:
    with np.errstate(divide="ignore", invalid="ignore"):
        mean = total / count
        var = (squares - count * mean * mean) / (count - 1)
    return mean, np.maximum(var, 0.0)


@dataclass(frozen=True)
class Candidacy:
    """One (session, lesson) pair where the lesson was a candidate with a logged propensity."""

    session_row: int
    arm: int
    propensity: float


def leave_one_out(
    data: FoldData,
    categories: Sequence[str | None] = (),
    candidacies: Sequence[Candidacy] = (),
    *,
    min_with: int = MIN_WITH,
    min_without: int = MIN_WITHOUT,
    existing: set[str] | None = None,
    broad_keywords: dict[str, str] | None = None,
) -> list[LooResult]:
    """LOO lift for every arm of the log. `existing`: ids in the library (others are flagged)."""
    graded_rows = ~np.isnan(data.base)
    n_graded = int(graded_rows.sum())
    entry_graded = graded_rows[data.entry_session]
    arms = data.entry_arm[entry_graded]
    sessions = data.entry_session[entry_graded]
    rewards = data.base[sessions]
    n_arms = data.n_arms
    all_rewards = data.base[graded_rows]
    grand_n = float(n_graded)
    grand_total = float(all_rewards.sum())
    grand_squares = float((all_rewards * all_rewards).sum())

    n1, t1, s1 = _group_stats(arms, rewards, n_arms)
    n2, t2, s2 = grand_n - n1, grand_total - t1, grand_squares - s1
    mean1, var1 = _mean_var(n1, t1, s1)
    mean2, var2 = _mean_var(n2, t2, s2)
    delta, p, half = welch(mean1, var1, n1, mean2, var2, n2)

    delta_cat, p_cat = _category_controlled(data, categories, arms, sessions, rewards, graded_rows)
    delta_ipw, n_ipw = _ipw(data, candidacies, graded_rows)

    injected_share = n1 / grand_n if grand_n else np.zeros(n_arms)
    results: list[LooResult] = []
    raw_p: list[float | None] = []
    for j, path in enumerate(data.arm_ids):
        reasons = []
        if injected_share[j] > BROAD_INJECTION_SHARE:
            reasons.append(f"injected in {injected_share[j]:.0%} of sessions: no real control group")
        if broad_keywords and path in broad_keywords:
            reasons.append(broad_keywords[path])
        if existing is not None and path not in existing:
            reasons.append("lesson file no longer exists")
        sufficient = bool(n1[j] >= min_with and n2[j] >= min_without)
        why = None
        if not sufficient:
            why = f"needs {min_with} sessions with and {min_without} without; has {int(n1[j])} and {int(n2[j])}"
        ok = sufficient and math.isfinite(p[j])
        raw_p.append(float(p[j]) if ok else None)

        def value(x: float, keep: bool = True) -> float | None:
            return float(x) if keep and math.isfinite(x) else None

        results.append(
            LooResult(
                path=path,
                n_with=int(n1[j]),
                n_without=int(n2[j]),
                mean_with=value(mean1[j]),
                mean_without=value(mean2[j]),
                delta=value(delta[j]),
                ci_low=value(delta[j] - half[j], ok),
                ci_high=value(delta[j] + half[j], ok),
                p_value=value(p[j], ok),
                p_adjusted=None,
                delta_category=value(delta_cat[j]),
                p_category=value(p_cat[j], sufficient),
                delta_ipw=value(delta_ipw[j]),
                n_ipw=int(n_ipw[j]),
                ipw_gap=value(delta_ipw[j] - delta[j]),
                sufficient=sufficient,
                insufficient_reason=why,
                confounded=bool(reasons),
                confound_reasons=tuple(reasons),
            )
        )
    adjusted = benjamini_hochberg(raw_p)
    return [_with_adjusted(r, a) for r, a in zip(results, adjusted, strict=True)]


def _with_adjusted(result: LooResult, adjusted: float | None) -> LooResult:
    return replace(result, p_adjusted=adjusted)


def reward_split(data: FoldData, lesson_id: str) -> tuple[FloatArray, FloatArray]:
    """Rewards of graded sessions with the lesson and without it (for distribution plots)."""
    graded = ~np.isnan(data.base)
    if lesson_id not in data.arm_ids:
        return np.zeros(0), data.base[graded]
    arm = data.arm_ids.index(lesson_id)
    member = np.zeros(data.n_sessions, dtype=bool)
    member[data.entry_session[data.entry_arm == arm]] = True
    return data.base[graded & member], data.base[graded & ~member]


def _category_controlled(
    data: FoldData,
    categories: Sequence[str | None],
    arms: npt.NDArray[np.int32],
    sessions: npt.NDArray[np.int32],
    rewards: FloatArray,
    graded_rows: npt.NDArray[np.bool_],
) -> tuple[FloatArray, FloatArray]:
    n_arms = data.n_arms
    nothing = np.full(n_arms, np.nan)
    if len(categories) != data.n_sessions or not any(categories):
        return nothing, nothing.copy()
    from scipy.special import ndtr

    names = sorted({c or "" for c in categories})
    code = {name: i for i, name in enumerate(names)}
    cat = np.array([code[c or ""] for c in categories], dtype=np.int64)
    n_cat = len(names)
    # per (arm, category) with-stats; per category totals
    key = arms.astype(np.int64) * n_cat + cat[sessions]
    size = n_arms * n_cat
    nw = np.bincount(key, minlength=size).astype(np.float64).reshape(n_arms, n_cat)
    tw = np.bincount(key, weights=rewards, minlength=size).reshape(n_arms, n_cat)
    sw = np.bincount(key, weights=rewards * rewards, minlength=size).reshape(n_arms, n_cat)
    graded_cat = cat[graded_rows]
    graded_r = data.base[graded_rows]
    nc = np.bincount(graded_cat, minlength=n_cat).astype(np.float64)
    tc = np.bincount(graded_cat, weights=graded_r, minlength=n_cat)
    sc = np.bincount(graded_cat, weights=graded_r * graded_r, minlength=n_cat)
    no, to, so = nc - nw, tc - tw, sc - sw
    overall_var = float(np.var(graded_r, ddof=1)) if len(graded_r) > 1 else 0.0
    with np.errstate(divide="ignore", invalid="ignore"):
        mw, mo = tw / nw, to / no
        vw = np.where(nw > 1, (sw - nw * mw * mw) / (nw - 1), overall_var)
        vo = np.where(no > 1, (so - no * mo * mo) / (no - 1), overall_var)
        usable = (nw > 0) & (no > 0)
        h = np.where(usable, nw * no / (nw + no), 0.0)
        d = np.where(usable, mw - mo, 0.0)
        var_d = np.where(usable, np.maximum(vw, 0) / nw + np.maximum(vo, 0) / no, 0.0)
        weight_sum = h.sum(axis=1)
        delta = (h * d).sum(axis=1) / weight_sum
        se = np.sqrt((h * h * var_d).sum(axis=1)) / weight_sum
        z = delta / se
        p = 2.0 * ndtr(-np.abs(z))
    p = np.where(se == 0, np.where(delta == 0, 1.0, 0.0), p)
    delta = np.where(weight_sum > 0, delta, np.nan)
    return np.asarray(delta, dtype=np.float64), np.asarray(np.where(weight_sum > 0, p, np.nan), dtype=np.float64)


def _ipw(
    data: FoldData, candidacies: Sequence[Candidacy], graded_rows: npt.NDArray[np.bool_]
) -> tuple[FloatArray, npt.NDArray[np.int64]]:
    """Self-normalised IPW lift among sessions where each lesson was a candidate."""
    n_arms = data.n_arms
    if not candidacies:
        return np.full(n_arms, np.nan), np.zeros(n_arms, dtype=np.int64)
    rows = np.array([c.session_row for c in candidacies], dtype=np.int64)
    arm = np.array([c.arm for c in candidacies], dtype=np.int64)
    prop = np.clip(np.array([c.propensity for c in candidacies]), *PROPENSITY_CLIP)
    keep = graded_rows[rows]
    rows, arm, prop = rows[keep], arm[keep], prop[keep]
    reward = data.base[rows]
    injected_pairs = set(
        zip(data.entry_session.astype(np.int64).tolist(), data.entry_arm.astype(np.int64).tolist(), strict=True)
    )
    treated = np.array([(r, a) in injected_pairs for r, a in zip(rows.tolist(), arm.tolist(), strict=True)], dtype=bool)
    w1 = np.where(treated, 1.0 / prop, 0.0)
    w0 = np.where(~treated, 1.0 / (1.0 - prop), 0.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        mu1 = np.bincount(arm, weights=w1 * reward, minlength=n_arms) / np.bincount(arm, weights=w1, minlength=n_arms)
        mu0 = np.bincount(arm, weights=w0 * reward, minlength=n_arms) / np.bincount(arm, weights=w0, minlength=n_arms)
    count = np.bincount(arm, minlength=n_arms).astype(np.int64)
    return np.asarray(mu1 - mu0, dtype=np.float64), count


def loo_payload(results: Sequence[LooResult], generated: str, min_with: int, min_without: int) -> dict[str, Any]:
    """`loo-results.json` (SPEC 8), with the extra per-lesson fields this tool computes."""
    sessions = max((r.n_with + r.n_without for r in results), default=0)
    return {
        "meta": {
            "generated": generated,
            "sessions": sessions,
            "method": "leave-one-out: Welch t-test on graded sessions with vs without; category-controlled "
            "(CMH weights); self-normalised IPW where selection propensities are logged; "
            "Benjamini-Hochberg adjusted p-values",
            "min_with": min_with,
            "min_without": min_without,
        },
        "results": [r.as_json() for r in results],
    }
