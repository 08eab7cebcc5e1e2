"""P(each arm lands in a top-k Thompson draw) for thousands of arms, in time and memory linear in them.

The plain estimate draws every arm `draws` times at once: 4,000 x 30,000 Beta samples is a second
array of 960 MB and ten seconds. Three things make it linear with a small constant, none of which
changes what is estimated:

- Batches: the draws are taken BATCH_VALUES values at a time (memory: one batch).
- Arms with the same posterior (a library whose lessons have no evidence yet is mostly arms at the
  prior) form a group; a big group's part in a draw is its top order statistics, not one value
  per arm: the largest of m uniforms is V^(1/m), the next that times V'^(1/(m-1)), ..., each
  mapped through the Beta quantile function. Its members share the group's count equally (they are
  exchangeable).
- Arms that cannot reach the top k are left out: the k-th largest of the arms' lower quantiles at
  EPSILON (with a group counted min(k, m) times) is a value at least k arms exceed in every draw
  but one in 1/EPSILON, so an arm whose upper quantile at 1 - EPSILON lies below it is never
  selected but with probability under n * EPSILON per draw (its estimate would be 0 anyway).

Each draw still selects exactly k arms, so the estimates add up to k, as the plain ones do.

A tie at a draw's k-th value (Beta draws of a small prior, or with little evidence against a small
prior, land on exactly 0.0 or 1.0: at Beta(0.01, 0.01) nearly every draw does) is broken uniformly at
random in the selection (`beta.top_k`), so each arm on it gets an equal share of the places left
(`top_k_counts`): the estimate is the draw's real frequency. A group's order statistics cannot say how
many of its arms share such a value, so a group is drawn arm by arm unless a draw with one of its arms on
0 or 1 beside another arm there is rarer than `ATOM_GROUP` (`_atom_mass`): at the default prior Beta(1, 1),
1e-16 an arm.

The selection's own draw (`with_draw`, `chosen`) is counted as one more: a lesson the selection chose has
an estimate of at least 1 / (draws + 1), one it did not at most draws / (draws + 1). The draw is one more
sample of the same distribution, so the estimate stays unbiased, and the inverse-propensity weight of a
chosen lesson, (draws + 1) / (hits + 1) with hits ~ Binomial(draws, p), has mean 1 / p times
1 - (1 - p)^(draws + 1): weighted by it, a lesson's sessions count 1 - (1 - p)^(draws + 1) times as
often as they should (0.98 at p = 0.001 and 4,000 draws), where a plain estimate of 0 counted a chosen
lesson infinitely (the analysis then clipped it).

What is left is drawn at most VALUE_BUDGET values in all: thirty thousand arms whose posteriors all
overlap get 533 draws instead of 4,000 (under a second, not six). An arm's estimate is then coarser,
but at such a size most arms' chances are of order k / arms, below what 4,000 draws resolve too
(the analysis clips propensities before weighting by them).
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

FloatArray = npt.NDArray[np.float64]

BATCH_VALUES = 4_000_000  # values drawn per batch (32 MB)
VALUE_BUDGET = 16_000_000  # values drawn in all, at most (under a second)
MIN_DRAWS = 400
BIG_GROUP = 64  # arms sharing a posterior from which their order statistics are drawn instead
EPSILON = 1e-12
ATOM_GROUP = 1e-6  # the chance a group's order statistics miss a tie in a draw, at most


def top_k_counts(values: FloatArray, k: int) -> FloatArray:
    """Per column of `values` (a row per draw), the draws in which it lands in the top k: 1 above the row's
    k-th value; on it, the places left shared equally among the columns there (`beta.top_k` gives them to
    ones drawn at random). Each row counts k in all."""
    width = values.shape[1]
    kth = np.partition(values, width - k, axis=1)[:, width - k][:, None]
    at_least = values >= kth
    counts: FloatArray = at_least.sum(axis=0).astype(np.float64)
    over = np.flatnonzero(at_least.sum(axis=1) > k)  # draws with more columns on the k-th value than places
    if len(over):
        rows, bar = values[over], kth[over]
        above, on = rows > bar, rows == bar
        share = (k - above.sum(axis=1)) / on.sum(axis=1)
        counts += above.sum(axis=0) + (on * share[:, None]).sum(axis=0) - at_least[over].sum(axis=0)
    return counts


def with_draw(counts: FloatArray, draws: int, chosen: FloatArray | None) -> FloatArray:
    """The estimate from `counts` over `draws` draws, and with `chosen` (per arm 1 if the selection's own
    draw chose it, else 0) that draw counted too (see the module docstring)."""
    result: FloatArray = counts / draws if chosen is None else (counts + chosen) / (draws + 1)
    return result


def chosen_of(picked: npt.NDArray[np.intp], n: int) -> FloatArray:
    """Per arm of n, 1 for those `picked`, else 0."""
    out = np.zeros(n)
    out[picked] = 1.0
    return out


def p_top_k_large(
    alpha: FloatArray,
    beta: FloatArray,
    k: int,
    rng: np.random.Generator,
    draws: int,
    chosen: FloatArray | None = None,
) -> FloatArray:
    """The Monte Carlo estimate of `beta.p_top_k` (`draws` draws), for many arms (k < number of arms)."""
    params, arm_group, sizes = np.unique(
        np.stack([alpha, beta], axis=1), axis=0, return_inverse=True, return_counts=True
    )
    arm_group = arm_group.reshape(-1)
    a, b = params[:, 0], params[:, 1]
    low, high = _quantile(a, b, EPSILON), _quantile(a, b, 1.0 - EPSILON)
    copies = np.minimum(sizes, k)
    bar = np.sort(np.repeat(low, copies))[-k]  # at least k arms exceed it in every draw (but 1 in 1/EPSILON)
    kept = np.flatnonzero(high >= bar)
    atoms = sizes * _atom_mass(a, b)  # per group, the chance one of its arms lands on 0 or 1 (at most)
    grouped = (sizes > BIG_GROUP) & (atoms * atoms.sum() < ATOM_GROUP)
    big = kept[grouped[kept]]
    # one column per arm of a small group (its arms drawn one by one), per big group its top k (all, if fewer)
    single_groups = kept[~grouped[kept]]
    single_arms = np.flatnonzero(np.isin(arm_group, single_groups))
    tops = copies[big]
    columns_group = np.concatenate([arm_group[single_arms], np.repeat(big, tops)]).astype(np.int64)
    ends = len(single_arms) + np.cumsum(tops)
    width = len(columns_group)
    hits = np.zeros(len(params))
    if width <= k:  # every arm kept is in every draw's top k
        hits[kept] = draws * np.minimum(sizes[kept], k)
    else:
        draws = min(draws, max(MIN_DRAWS, VALUE_BUDGET // width))
        batch = max(1, BATCH_VALUES // width)
        for start in range(0, draws, batch):
            n = min(batch, draws - start)
            values = np.empty((n, width))
            values[:, : len(single_arms)] = rng.beta(alpha[single_arms], beta[single_arms], size=(n, len(single_arms)))
            for i, group in enumerate(big.tolist()):
                count = int(tops[i])
                top = _quantile(
                    a[group : group + 1], b[group : group + 1], _top_order_statistics(rng, n, int(sizes[group]), count)
                )
                values[:, int(ends[i]) - count : int(ends[i])] = top
            hits += np.bincount(columns_group, weights=top_k_counts(values, k), minlength=len(params))
    return with_draw((hits / sizes)[arm_group], draws, chosen)


def _atom_mass(a: FloatArray, b: FloatArray) -> FloatArray:
    """Per Beta(a, b), the chance of a draw within 2^-53 of 1 (it rounds to 1.0) or below 2^-1022 (it may
    round to 0.0): an upper bound on its chance to land on a value another draw can share."""
    if (a == 1.0).all() and (b == 1.0).all():
        return np.full(len(a), 2.0**-53 + 2.0**-1022)
    from scipy.special import betainc

    return np.asarray(betainc(a, b, 2.0**-1022) + betainc(b, a, 2.0**-53), dtype=np.float64)


def _quantile(a: FloatArray, b: FloatArray, q: float | FloatArray) -> FloatArray:
    """Beta(a, b) quantiles at q; Beta(1, 1) is the uniform, whose quantile is q itself (a library
    without evidence needs no scipy: its import is 0.2-0.4 s of a `select`)."""
    if (a == 1.0).all() and (b == 1.0).all():
        return np.broadcast_to(np.asarray(q, dtype=np.float64), np.broadcast_shapes(np.shape(q), a.shape)).copy()
    from scipy.special import betaincinv

    return np.asarray(betaincinv(a, b, q), dtype=np.float64)


def _top_order_statistics(rng: np.random.Generator, n: int, m: int, k: int) -> FloatArray:
    """The k largest of m uniforms (k <= m), n times: (n, k), largest first (Renyi: U(m) = V1^(1/m), U(m-j) =
    U(m-j+1) * Vj^(1/(m-j)))."""
    exponents = 1.0 / np.arange(m, m - k, -1, dtype=np.float64)
    out: FloatArray = np.exp(np.cumsum(np.log(rng.random((n, k))) * exponents, axis=1))
    return out
