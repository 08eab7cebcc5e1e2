"""Which lessons go with better sessions: the joint effect (headline) and leave-one-out (second opinion).

Per lesson:
- **effect** (the headline): the joint estimate of `lesson_credit.core.analysis.joint` -- category baselines plus every
  lesson's salience-weighted injection in one penalised regression -- with a 95% posterior
  interval; its p-values (a z-test on the posterior) are Benjamini-Hochberg adjusted across lessons;
- **randomized**: where gptme dropout logs exist (`core.analysis.dropout`), kept-minus-withheld mean reward;
- naive lift: graded sessions split into those the lesson was injected in (once per session,
  however often it is listed) and the rest; mean reward with minus without, a Welch t-test
  with Welch's degrees of freedom. Each side's variance is *moderated*: pooled with the whole
  log's reward variance worth `PRIOR_DF` sessions (Smyth's moderated t), and that variance is
  at least the grade resolution squared (`REWARD_RESOLUTION`), so five identical grades do not
  read as certainty. Below `min_with` / `min_without` sessions no lift is shown, nor any (naive, by
  category, IPW) for a lesson identified only by time (`TIME_ONLY`: after against before one moment);
- category-controlled lift: the same within each session category, combined with weights
  n_with*n_without/(n_with+n_without) (Cochran-Mantel-Haenszel style);
- propensity-corrected lift: self-normalised inverse-propensity weighting (Hajek) over the
  sessions where the lesson was a candidate with a logged propensity (one selection per session:
  the last before its record; a propensity stored in the session record wins for its lessons),
  with a linearised 95% interval, shown only with `MIN_IPW` sessions on each side;
- during: the graded sessions that included the lesson during the session (`"included": "during"`,
  not chosen before it) and their mean reward; those sessions count as without it everywhere above;
- confound flags: the naive and the joint intervals do not overlap (confounded by category or
  co-injected lessons); never injected without some other lesson (not separable, unless the joint fit
  identifies the lesson: then only the lift does not separate them); injected in
  every graded session (no control); plus too-broad keywords and lessons whose file is gone.

All of it is vectorised over the fold's entry arrays; scipy.special is imported lazily.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import PurePosixPath
from typing import Any

import numpy as np
import numpy.typing as npt

from lesson_credit.core.analysis.claims import Claims, lesson_claims
from lesson_credit.core.analysis.estimates import Effect, Randomized, headlines, joint_effects, notes
from lesson_credit.core.analysis.joint import Design, JointFit, build_design, fit_joint, kind_codes
from lesson_credit.core.analysis.limits import MIN_WITH, MIN_WITHOUT
from lesson_credit.core.analysis.partners import inseparable, partner_reasons
from lesson_credit.core.analysis.ranking import timed_arms
from lesson_credit.core.analysis.stats import benjamini_hochberg
from lesson_credit.core.base.numbers import signed, span
from lesson_credit.core.log.snapshot import FoldData

FloatArray = npt.NDArray[np.float64]

MIN_IPW = 5  # sessions on each side (treated and untreated candidates) before an IPW lift is shown
PROPENSITY_CLIP = (0.01, 0.99)
# Grades are given to two decimals (0.82): no honest reward variance is below one step squared.
REWARD_RESOLUTION = 0.01
# Each side's variance is pooled with the log's reward variance as if it were 4 more sessions
# (a moderated t, Smyth 2004): 5 identical grades then say "about the usual spread", not "none".
PRIOR_DF = 4.0
Z95 = 1.959963984540054
# a lesson identified only by time: its sessions with and without it are those after and before one moment, or
# those of some time blocks and of the others
TIME_ONLY = (
    "no leave-one-out comparison: identified only by time, its sessions with it and without it are those "
    "on either side of one moment (in each time block where it varies, or where a time block starts) or in "
    "different time blocks, so a change in the baseline then would give the same difference"
)


@dataclass(frozen=True)
class LooResult:
    path: str
    n_with: int
    n_without: int
    mean_with: float | None
    mean_without: float | None
    delta: float | None  # None below the minimum n on either side
    ci_low: float | None
    ci_high: float | None
    p_value: float | None
    p_adjusted: float | None  # BH across lessons of the naive p
    delta_category: float | None  # category-controlled lift, None without categories
    p_category: float | None
    delta_ipw: float | None  # propensity-corrected lift, None without enough logged propensities
    n_ipw: int  # sessions where the lesson was a candidate with a known propensity
    ipw_gap: float | None  # delta_ipw - delta
    sufficient: bool
    insufficient_reason: str | None
    confounded: bool
    confound_reasons: tuple[str, ...] = ()
    effect: Effect | None = None  # the headline (core.analysis.estimates): randomized or joint
    randomized: Randomized | None = None
    ipw_ci_low: float | None = None
    ipw_ci_high: float | None = None
    n_ipw_treated: int = 0
    n_ipw_untreated: int = 0
    n_ipw_missing: int = 0  # graded sessions with the lesson injected but no logged propensity for it
    related: tuple[str, ...] = field(default=(), compare=False)  # lessons it never appears without
    joint: Effect | None = None  # the joint effect, whichever is the headline
    n_during: int = 0  # graded sessions that included it during the session (not chosen before): no effect claimed
    mean_during: float | None = None  # their mean reward
    timed: bool = False  # identified only by time: its leave-one-out columns are withheld (`TIME_ONLY` says why)

    @property
    def category_controlled(self) -> bool:
        return self.delta_category is not None

    @property
    def headline(self) -> float | None:
        """The number to act on: the headline effect's estimate (core.analysis.estimates has the rule)."""
        return None if self.effect is None else self.effect.estimate

    def flags(self) -> list[str]:
        """What to read with care in this row, as `loo` lists it under `flags:` and the dashboard counts it
        (`N flagged`): too little data for leave-one-out, the headline's notes (unidentified, a group,
        drift, by category), then the reasons to distrust its comparison (`confound_reasons`)."""
        loo = "no LOO comparison (identified only by time)" if self.timed else "insufficient data for LOO"
        return [loo] * (not self.sufficient) + notes(self.effect) + list(self.confound_reasons)

    def as_json(self, with_path: bool = True) -> dict[str, Any]:
        out: dict[str, Any] = {"path": self.path} if with_path else {}
        out |= {
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
            "ipw_ci_low": self.ipw_ci_low,
            "ipw_ci_high": self.ipw_ci_high,
            "n_ipw": self.n_ipw,
            "n_ipw_treated": self.n_ipw_treated,
            "n_ipw_untreated": self.n_ipw_untreated,
            "n_ipw_missing": self.n_ipw_missing,
            "ipw_gap": self.ipw_gap,
            "sufficient": self.sufficient,
            "insufficient_reason": self.insufficient_reason,
            "effect": None if self.effect is None else self.effect.as_json(),
            "joint": None if self.joint is None else self.joint.as_json(),
            "confounded": self.confounded,
            "confound_reason": "; ".join(self.confound_reasons) or None,
        }
        if self.randomized is not None:
            out["randomized"] = self.randomized.as_json()
        out["during"] = {"n": self.n_during, "mean_reward": self.mean_during}
        return out


def moderated_variance(n: Any, var: Any, pooled_var: float, prior_df: float = PRIOR_DF) -> tuple[Any, Any]:
    """(moderated variance, its degrees of freedom) of a side of `n` outcomes with sample variance `var` (NaN, or
    anything, for n < 2: it has no weight then): ((n - 1) var + prior_df s0^2) / (n - 1 + prior_df), s0^2 =
    max(pooled_var, resolution^2), as if `prior_df` more outcomes had the pooled variance."""
    s0 = max(float(pooled_var), REWARD_RESOLUTION**2)
    seen = np.maximum(n - 1, 0)
    df = seen + prior_df
    return (seen * np.nan_to_num(var) + prior_df * s0) / df, df


def moderated_welch(
    mean1: FloatArray,
    var1: FloatArray,
    n1: FloatArray,
    mean2: FloatArray,
    var2: FloatArray,
    n2: FloatArray,
    pooled_var: float,
    prior_df: float = PRIOR_DF,
) -> tuple[FloatArray, FloatArray, FloatArray]:
    """(delta, two-sided p, half-width of the 95% interval) of Welch's t-test on moderated variances.

    Each side's sample variance s^2 (n - 1 degrees of freedom) becomes
    ((n - 1) s^2 + prior_df * s0^2) / (n - 1 + prior_df) with s0^2 = max(pooled_var, resolution^2),
    and counts n - 1 + prior_df degrees of freedom in Welch-Satterthwaite's formula."""
    from scipy.special import stdtr, stdtrit

    with np.errstate(divide="ignore", invalid="ignore"):
        v1, df1 = moderated_variance(n1, var1, pooled_var, prior_df)
        v2, df2 = moderated_variance(n2, var2, pooled_var, prior_df)
        a = v1 / n1
        b = v2 / n2
        se = np.sqrt(a + b)
        df = (a + b) ** 2 / (a**2 / df1 + b**2 / df2)
        delta = mean1 - mean2
        t = delta / se
        p = 2.0 * stdtr(df, -np.abs(t))
        half = stdtrit(df, 0.975) * se
    return delta, np.asarray(p, dtype=np.float64), np.asarray(half, dtype=np.float64)


def _group_stats(
    arms: npt.NDArray[np.int64], rewards: FloatArray, n_arms: int
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


# one pass assembling every column of the table per lesson: long, but splitting it would scatter one row's parts
def leave_one_out(
    data: FoldData,
    categories: Sequence[str | None] = (),
    candidacies: Sequence[Candidacy] = (),
    *,
    min_with: int = MIN_WITH,
    min_without: int = MIN_WITHOUT,
    min_ipw: int = MIN_IPW,
    existing: set[str] | None = None,
    broad_keywords: dict[str, str] | None = None,
    floor: float = 0.3,
    randomized: Mapping[str, Randomized] | None = None,
    joint: JointFit | None = None,
    agents: Sequence[str | None] = (),
    claims: Claims | None = None,
    design: Design | None = None,
    session_ids: Sequence[str] | None = None,
) -> list[LooResult]:
    """Effect and LOO lift for every arm of the log. `existing`: ids in the library (others are flagged);
    `floor`: the credit floor the joint estimate weighs salience with; `randomized`: dropout estimates;
    `agents`: who wrote each session (an agent effect in the joint estimate when there are several);
    `design`: `build_design` of these very inputs when the caller has it (the log is then not read again);
    `session_ids`: each session's id, for the reasons that name one."""
    design = design if design is not None else build_design(data, categories, floor, agents)
    n_arms = data.n_arms
    n_graded = design.n
    arms = design.entry_arm
    sessions = design.rows[design.entry_row]
    rewards = design.reward[design.entry_row]
    all_rewards = design.reward
    grand_total = float(all_rewards.sum())
    grand_squares = float((all_rewards * all_rewards).sum())
    pooled_var = float(np.var(all_rewards, ddof=1)) if n_graded > 1 else 0.0

    n1, t1, s1 = _group_stats(arms, rewards, n_arms)
    n2, t2, s2 = float(n_graded) - n1, grand_total - t1, grand_squares - s1
    mean1, var1 = _mean_var(n1, t1, s1)
    mean2, var2 = _mean_var(n2, t2, s2)
    delta, p, half = moderated_welch(mean1, var1, n1, mean2, var2, n2, pooled_var)

    graded_rows = ~np.isnan(data.base)
    delta_cat, p_cat = _category_controlled(data, categories, arms, sessions, rewards, graded_rows)
    ipw = _ipw(data, candidacies, graded_rows, arms, sessions)

    fit = joint if joint is not None else fit_joint(design)
    claims = claims if claims is not None else lesson_claims(design, session_ids=session_ids, arm_ids=data.arm_ids)
    joints = joint_effects(fit, claims, data.arm_ids, timed_arms(design))
    timed = [column is not None and column.timed for column in map(claims.of, range(n_arms))]
    rnd_of = randomized or {}
    heads = headlines(joints, [rnd_of.get(path) for path in data.arm_ids])
    partners = inseparable(design, n1)
    n_during, mean_during = _included_during(data)

    def value(x: float, keep: bool = True) -> float | None:
        return float(x) if keep and math.isfinite(x) else None

    results: list[LooResult] = []
    raw_p: list[float | None] = []
    for j, path in enumerate(data.arm_ids):
        sufficient = bool(n1[j] >= min_with and n2[j] >= min_without) and not timed[j]
        why = None
        if timed[j]:  # before against after: no comparison to show, however many sessions
            why = TIME_ONLY
        elif not sufficient:
            why = f"needs {min_with} sessions with and {min_without} without; has {int(n1[j])} and {int(n2[j])}"
        ok = sufficient and math.isfinite(p[j])
        raw_p.append(float(p[j]) if ok else None)
        effect = joints[j]
        reasons = []
        if ok and effect is not None and effect.ci_low is not None and effect.ci_high is not None:
            lo, hi = float(delta[j] - half[j]), float(delta[j] + half[j])
            if hi < effect.ci_low or lo > effect.ci_high:
                reasons.append(
                    f"confounded by category / co-injected lessons: naive {signed(delta[j])} {span(lo, hi)} "
                    f"vs adjusted {signed(effect.estimate)} {span(effect.ci_low, effect.ci_high)}"
                )
        mine = partners.get(j, [])  # in its own group or not, by column (not searching a big group's members)
        reasons += partner_reasons(
            [(data.arm_ids[k], claims.column_of[k] == claims.column_of[j]) for k in mine], effect
        )
        if n1[j] > 0 and n2[j] == 0:
            reasons.append("no control: injected in every graded session")
        if broad_keywords and path in broad_keywords:
            reasons.append(broad_keywords[path])
        if existing is not None and path not in existing:
            reasons.append("lesson file no longer exists")
        ipw_ok = bool(ipw.treated[j] >= min_ipw and ipw.untreated[j] >= min_ipw) and not timed[j]
        d_ipw = value(ipw.delta[j], ipw_ok)
        results.append(
            LooResult(
                path=path,
                n_with=int(n1[j]),
                n_without=int(n2[j]),
                mean_with=value(mean1[j]),
                mean_without=value(mean2[j]),
                delta=value(delta[j], sufficient),
                ci_low=value(delta[j] - half[j], ok),
                ci_high=value(delta[j] + half[j], ok),
                p_value=value(p[j], ok),
                p_adjusted=None,
                delta_category=value(delta_cat[j], sufficient),
                p_category=value(p_cat[j], sufficient),
                delta_ipw=d_ipw,
                n_ipw=int(ipw.treated[j] + ipw.untreated[j]),
                ipw_gap=None if d_ipw is None or not sufficient else d_ipw - float(delta[j]),
                sufficient=sufficient,
                insufficient_reason=why,
                timed=timed[j],
                confounded=bool(reasons),
                confound_reasons=tuple(reasons),
                effect=heads[j],
                randomized=rnd_of.get(path),
                ipw_ci_low=value(ipw.delta[j] - ipw.half[j], ipw_ok),
                ipw_ci_high=value(ipw.delta[j] + ipw.half[j], ipw_ok),
                n_ipw_treated=int(ipw.treated[j]),
                n_ipw_untreated=int(ipw.untreated[j]),
                n_ipw_missing=int(ipw.missing[j]),
                related=tuple(data.arm_ids[k] for k in partners.get(j, ())),
                joint=effect,
                n_during=int(n_during[j]),
                mean_during=value(mean_during[j]),
            )
        )
    adjusted = benjamini_hochberg(raw_p)
    return [_with_adjusted(r, a) for r, a in zip(results, adjusted, strict=True)]


def _included_during(data: FoldData) -> tuple[FloatArray, FloatArray]:
    """Per arm: graded sessions that included it during the session (not chosen before), and their
    mean reward (NaN without one). Reported beside the estimates, never as an effect. A session that also
    lists it as chosen before (another tool's log listing it twice) is one with it, not among these."""
    width = max(data.n_arms, 1)
    during = data.during[data.during < len(data.entry_session)]
    sessions = np.asarray(data.entry_session, dtype=np.int64)[during]
    arms = np.asarray(data.entry_arm, dtype=np.int64)[during]
    reward = data.base[sessions]
    graded = ~np.isnan(reward)
    pairs = np.unique(sessions[graded] * width + arms[graded])  # a lesson listed twice: once
    rows = np.unique(pairs // width)
    if len(rows):  # the other entries of those sessions: those chosen before
        start = np.asarray(data.session_start, dtype=np.int64)
        entries = np.concatenate([np.arange(start[r], start[r + 1]) for r in rows.tolist()])
        entries = entries[~np.isin(entries, during)]
        session_of = np.asarray(data.entry_session, dtype=np.int64)[entries]
        pairs = pairs[~np.isin(pairs, session_of * width + np.asarray(data.entry_arm, dtype=np.int64)[entries])]
    arm, row = pairs % width, pairs // width
    n = np.bincount(arm, minlength=data.n_arms).astype(np.float64)
    total = np.bincount(arm, weights=data.base[row], minlength=data.n_arms)
    with np.errstate(divide="ignore", invalid="ignore"):
        return n, np.where(n > 0, total / n, np.nan)


def _with_adjusted(result: LooResult, adjusted: float | None) -> LooResult:
    return replace(result, p_adjusted=adjusted)


def reward_split(data: FoldData, lesson_id: str) -> tuple[FloatArray, FloatArray]:
    """Rewards of graded sessions with the lesson and without it (for distribution plots), split as
    `leave_one_out` splits them: a session that included the lesson during it is one without it."""
    graded = ~np.isnan(data.base)
    if lesson_id not in data.arm_ids:
        return np.zeros(0), data.base[graded]
    arm = data.arm_ids.index(lesson_id)
    chosen = np.asarray(data.entry_arm) == arm
    chosen[data.during[data.during < len(chosen)]] = False
    member = np.zeros(data.n_sessions, dtype=bool)
    member[np.asarray(data.entry_session)[chosen]] = True
    return data.base[graded & member], data.base[graded & ~member]


def _category_controlled(
    data: FoldData,
    categories: Sequence[str | None],
    arms: npt.NDArray[np.int64],
    sessions: npt.NDArray[np.int64],
    rewards: FloatArray,
    graded_rows: npt.NDArray[np.bool_],
) -> tuple[FloatArray, FloatArray]:
    n_arms = data.n_arms
    nothing = np.full(n_arms, np.nan)
    if len(categories) != data.n_sessions or not any(categories):
        return nothing, nothing.copy()
    from scipy.special import ndtr

    cat, names = kind_codes(categories, np.arange(data.n_sessions, dtype=np.int64))  # `Code` is `code`
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


@dataclass(frozen=True)
class _Ipw:
    delta: FloatArray
    half: FloatArray
    treated: npt.NDArray[np.int64]
    untreated: npt.NDArray[np.int64]
    missing: npt.NDArray[np.int64]


def _ipw(
    data: FoldData,
    candidacies: Sequence[Candidacy],
    graded_rows: npt.NDArray[np.bool_],
    arms: npt.NDArray[np.int64],
    sessions: npt.NDArray[np.int64],
) -> _Ipw:
    """Self-normalised IPW lift among sessions where each lesson was a candidate, with a
    linearised (delta-method) variance: Var(mu1) = sum w^2 (r - mu1)^2 / (sum w)^2, same for mu0."""
    n_arms = data.n_arms
    zeros = np.zeros(n_arms, dtype=np.int64)
    width = max(n_arms, 1)
    injected_keys = sessions.astype(np.int64) * width + arms
    if not candidacies:
        missing = np.bincount(arms, minlength=n_arms).astype(np.int64)
        return _Ipw(np.full(n_arms, np.nan), np.full(n_arms, np.nan), zeros, zeros.copy(), missing)
    rows = np.array([c.session_row for c in candidacies], dtype=np.int64)
    arm = np.array([c.arm for c in candidacies], dtype=np.int64)
    prop = np.clip(np.array([c.propensity for c in candidacies], dtype=np.float64), *PROPENSITY_CLIP)
    keep = graded_rows[rows]
    rows, arm, prop = rows[keep], arm[keep], prop[keep]
    keys = rows * width + arm
    _, first = np.unique(keys, return_index=True)  # one candidacy per (session, lesson)
    first.sort()
    rows, arm, prop, keys = rows[first], arm[first], prop[first], keys[first]
    reward = data.base[rows]
    treated = np.isin(keys, injected_keys)
    w1 = np.where(treated, 1.0 / prop, 0.0)
    w0 = np.where(~treated, 1.0 / (1.0 - prop), 0.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        sw1 = np.bincount(arm, weights=w1, minlength=n_arms)
        sw0 = np.bincount(arm, weights=w0, minlength=n_arms)
        mu1 = np.bincount(arm, weights=w1 * reward, minlength=n_arms) / sw1
        mu0 = np.bincount(arm, weights=w0 * reward, minlength=n_arms) / sw0
        r1 = np.where(treated, reward - mu1[arm], 0.0)
        r0 = np.where(~treated, reward - mu0[arm], 0.0)
        v1 = np.bincount(arm, weights=(w1 * r1) ** 2, minlength=n_arms) / sw1**2
        v0 = np.bincount(arm, weights=(w0 * r0) ** 2, minlength=n_arms) / sw0**2
    n_treated = np.bincount(arm[treated], minlength=n_arms).astype(np.int64)
    n_untreated = np.bincount(arm[~treated], minlength=n_arms).astype(np.int64)
    missing = np.bincount(arms[~np.isin(injected_keys, keys)], minlength=n_arms).astype(np.int64)
    return _Ipw(
        np.asarray(mu1 - mu0, dtype=np.float64),
        np.asarray(Z95 * np.sqrt(v1 + v0), dtype=np.float64),
        n_treated,
        n_untreated,
        missing,
    )


def loo_payload(
    results: Sequence[LooResult],
    generated: str,
    min_with: int,
    min_without: int,
    *,
    sessions_without_propensity: int | None = None,
    dropout_sessions: int = 0,
    dropout_problems: Sequence[str] = (),
    effect_method: str | None = None,
    gptme_files: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """`loo-results.json` (docs/format.md §8), with the extra per-lesson fields this tool computes, in the shape
    gptme-contrib's two readers parse: the lessons MCP server reads `results[].path` as the lesson's
    folder and stem (`tools/x`, `x` at the library's root; see `gptme_key`) with its `delta`, so each
    result's lesson id is in `lesson`; gptme-dashboard reads every top-level number as `{lesson: delta}`
    (it skips `meta` and `results`), so each lesson with a delta is also a top-level key.
    `effect_method`: the joint fit's description (`JointFit.method`); `dropout_problems`: what of the
    dropout logs was not used (a line each); `gptme_files`: the files the lessons MCP server reads (`gptme_keys`)."""
    from lesson_credit.core.analysis import claims as claims_mod
    from lesson_credit.core.analysis import early, estimates

    sessions = max((r.n_with + r.n_without for r in results), default=0)
    heads = [r.effect for r in results]
    flat = {r.path: r.delta for r in results if r.delta is not None and r.path not in ("meta", "results")}
    return {
        "meta": {
            "generated": generated,
            "sessions": sessions,
            "method": "effect (headline): the randomized estimate with at least "
            f"{estimates.MIN_RANDOMIZED} kept and {estimates.MIN_RANDOMIZED} withheld sessions when its interval is "
            "no wider than the joint one's, else the joint effect; joint: per identified lesson the unshrunk "
            "change in reward per injection (category baselines and every lesson in one regression, robust HC2 "
            "variance, Student-t 95% intervals), the later half's when it drifted; ranking: the shrunk "
            "salience-weighted joint estimate (empirical-Bayes Gaussian prior); randomized: kept minus withheld "
            "among matched sessions (dropout logs); leave-one-out (second opinion): Welch t-test with moderated "
            "variances on graded sessions with vs without; category-controlled (CMH weights); self-normalised "
            "IPW where selection propensities are logged; Benjamini-Hochberg adjusted p-values",
            "effect_method": effect_method,
            "headline_rule": f"randomized with at least {estimates.MIN_RANDOMIZED} kept and withheld sessions "
            "and an interval no wider than the joint one's; else joint (its later half when drifting)",
            "identification": f"identified: at least {claims_mod.MIN_SESSIONS} graded sessions with and without "
            f"(with: a lesson of {early.MIN_SESSIONS} or more, its sessions after its first min({early.FIRST_MAX}, "
            f"n/{early.FIRST_PART}), which are a column of their own), "
            f"posterior sd at most {claims_mod.SD_RATIO_MAX:g} of the prior's, varying within time blocks by more "
            "than one switch in log order; groups: together in at least "
            f"{claims_mod.GROUP_SHARE:.0%} of each one's sessions; drifting / category_differs: BH-adjusted p "
            f"below {claims_mod.FLAG_FDR:g}",
            "min_randomized": estimates.MIN_RANDOMIZED,
            "distinguishable": estimates.distinguishable(heads),
            "nothing_distinguishable": estimates.nothing_line(heads),
            "against_average": estimates.against_average_line(heads),
            "min_with": min_with,
            "min_without": min_without,
            "min_ipw": MIN_IPW,
            "sessions_without_propensity": sessions_without_propensity,
            "dropout_sessions": dropout_sessions,
            "dropout_problems": list(dropout_problems),
            "groups": estimates.group_members([e for r in results for e in (r.effect, r.joint)]),
        },
        "results": [
            {"path": key, "lesson": r.path, **r.as_json(with_path=False)} for key, r in gptme_keys(results, gptme_files)
        ],
        **flat,
    }


def gptme_keys(results: Sequence[LooResult], files: Mapping[str, str] | None = None) -> list[tuple[str, LooResult]]:
    """Each result with the name gptme's lessons MCP server looks its file up by (`gptme_key`), unless that name
    would give another file this delta. `files`: {id: the name the server looks it up by first} of every file it
    reads (core/library/gptme_server.py; None: the results' own). A folder lesson's name another file has
    (`tools/git/worktree.md`, `workflow/git/worktree.md` and `.old/git/worktree.md` are all `git/worktree`;
    `ext/lessons/x.md` is `lessons/x`, as the root lesson `x.md` is first), or a root lesson's stem another file
    has (the server looks `tools/plain.md` up as `tools/plain`, then as `plain`) is replaced by the lesson's id,
    which the server looks no file up by; so is the name of a result whose file is gone (moved or deleted), and
    such a result is no rival to the file that has its name now."""
    if files is None:
        files = {r.path: gptme_key(r.path) if "/" in r.path else f"lessons/{gptme_key(r.path)}" for r in results}
    firsts = Counter(files.values())
    stems = Counter(PurePosixPath(lesson).stem for lesson in files)
    keyed: list[tuple[str, LooResult]] = []
    for r in results:
        key, first = gptme_key(r.path), files.get(r.path)
        alone = first is not None and (firsts[first] == 1 if "/" in key else stems[key] == 1)
        keyed.append((key if alone else r.path, r))
    return keyed


def gptme_key(lesson_id: str) -> str:
    """How gptme's lessons MCP server names a lesson file: its folder's name and its stem
    (`tools/git/worktree.md` is `git/worktree`), or the stem alone for a file at the library's root."""
    path = PurePosixPath(lesson_id)
    folder = path.parent.name
    return f"{folder}/{path.stem}" if folder else path.stem
