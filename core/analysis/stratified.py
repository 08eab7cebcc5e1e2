"""A randomized trial whose assignment probability differs between strata: each stratum's treated-minus-control
difference in means, combined with weights proportional to the stratum's size (docs/estimates.md, "The randomized
estimate").

Within a stratum every unit had the same probability of treatment, so its difference in means is unbiased for the
stratum's average effect whatever else differs between strata (a baseline that moved when the probability changed);
pooling the strata is not: it compares units of the strata with more treated against those with more controls. The
weights N_s / N make the combination estimate the average effect over all units of the usable strata, the quantity the
plain difference estimates when there is one stratum (to which this reduces exactly). Its variance is the sum over
strata of w_s^2 (v_treated / n_treated + v_control / n_control) (Neyman's, per stratum), each side's variance
moderated as `lesson_credit.core.analysis.effects.moderated_variance` has it, with Welch-Satterthwaite degrees of
freedom over all the sides. A stratum without a treated or without a control unit says nothing about the effect: it
is left out (its units are counted apart)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from lesson_credit.core.analysis.effects import moderated_variance


@dataclass(frozen=True)
class Stratified:
    """The combined difference, or None (fewer than `min_side` treated or control units in the usable strata)."""

    estimate: float | None
    ci_low: float | None
    ci_high: float | None
    p_value: float | None
    n_treated: int  # in the usable strata (each with a treated and a control unit)
    n_control: int
    n_unused: int  # units of strata with no treated or no control unit
    strata: int  # usable strata


def stratified_difference(
    strata: Sequence[tuple[Sequence[float], Sequence[float]]], pooled_var: float, min_side: int
) -> Stratified:
    """`strata`: (treated outcomes, control outcomes) per stratum; `pooled_var`: the prior variance each side's
    sample variance is moderated toward (as if `PRIOR_DF` more units had it)."""
    from scipy.special import stdtr, stdtrit

    usable = [(np.asarray(t, dtype=np.float64), np.asarray(c, dtype=np.float64)) for t, c in strata if t and c]
    n_treated = sum(len(t) for t, _ in usable)
    n_control = sum(len(c) for _, c in usable)
    n_unused = sum(len(t) + len(c) for t, c in strata) - n_treated - n_control
    if not usable or n_treated < min_side or n_control < min_side:
        return Stratified(None, None, None, None, n_treated, n_control, n_unused, len(usable))
    total = float(n_treated + n_control)
    estimate, parts, dfs = 0.0, [], []
    for treated, control in usable:
        weight = (len(treated) + len(control)) / total
        estimate += weight * float(treated.mean() - control.mean())
        for side in (treated, control):
            sample = float(side.var(ddof=1)) if len(side) > 1 else 0.0
            var, df = moderated_variance(float(len(side)), sample, pooled_var)
            parts.append(weight * weight * float(var) / len(side))
            dfs.append(float(df))
    a = np.array(parts)
    se = float(np.sqrt(a.sum()))
    df_total = float(a.sum() ** 2 / np.sum(a * a / np.array(dfs)))
    half = float(stdtrit(df_total, 0.975)) * se
    p_value = float(2.0 * stdtr(df_total, -abs(estimate) / se))
    return Stratified(estimate, estimate - half, estimate + half, p_value, n_treated, n_control, n_unused, len(usable))
