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


def p_top_k_large(alpha: FloatArray, beta: FloatArray, k: int, rng: np.random.Generator, draws: int) -> FloatArray:
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
    big = kept[sizes[kept] > BIG_GROUP]
    # one column per arm of a small group (its arms drawn one by one), k per big group (its top k)
    single_groups = kept[sizes[kept] <= BIG_GROUP]
    single_arms = np.flatnonzero(np.isin(arm_group, single_groups))
    columns_group = np.concatenate([arm_group[single_arms], np.repeat(big, k)]).astype(np.int64)
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
                top = _quantile(
                    a[group : group + 1], b[group : group + 1], _top_order_statistics(rng, n, int(sizes[group]), k)
                )
                values[:, len(single_arms) + i * k : len(single_arms) + (i + 1) * k] = top
            kth = np.partition(values, width - k, axis=1)[:, width - k]
            hits += np.bincount(columns_group, weights=(values >= kth[:, None]).sum(axis=0), minlength=len(params))
    per_arm: FloatArray = (hits / (draws * sizes))[arm_group]
    return per_arm


def _quantile(a: FloatArray, b: FloatArray, q: float | FloatArray) -> FloatArray:
    """Beta(a, b) quantiles at q; Beta(1, 1) is the uniform, whose quantile is q itself (a library
    without evidence needs no scipy: its import is 0.2-0.4 s of a `select`)."""
    if (a == 1.0).all() and (b == 1.0).all():
        return np.broadcast_to(np.asarray(q, dtype=np.float64), np.broadcast_shapes(np.shape(q), a.shape)).copy()
    from scipy.special import betaincinv

    return np.asarray(betaincinv(a, b, q), dtype=np.float64)


def _top_order_statistics(rng: np.random.Generator, n: int, m: int, k: int) -> FloatArray:
    """The k largest of m uniforms, n times: (n, k), largest first (Renyi: U(m) = V1^(1/m), U(m-j) =
    U(m-j+1) * Vj^(1/(m-j)))."""
    exponents = 1.0 / np.arange(m, m - k, -1, dtype=np.float64)
    out: FloatArray = np.exp(np.cumsum(np.log(rng.random((n, k))) * exponents, axis=1))
    return out
