"""Beta posterior math: means, exact credible intervals, densities, Thompson draws, P(top-k).

scipy is imported lazily (``scipy.special`` only): ``scipy.stats`` alone costs ~1.5 s of
start-up, which a session hook cannot afford.
"""

from __future__ import annotations

import math
import sys

import numpy as np
import numpy.typing as npt

from lesson_credit.core.model.topk import p_top_k_large, top_k_counts, with_draw

FloatArray = npt.NDArray[np.float64]


def loaded() -> bool:
    """Is the quantile function imported already (`interval` then costs no import)?"""
    return "scipy.special" in sys.modules


def load() -> None:
    """Import the quantile function now. Importing an extension module holds the GIL for its
    whole start-up (~0.3 s for scipy.special), so a UI imports it before its event loop runs
    rather than letting a worker thread freeze the loop on the first interval."""
    import scipy.special  # noqa: F401


def mean(alpha: FloatArray, beta: FloatArray) -> FloatArray:
    result: FloatArray = alpha / (alpha + beta)
    return result


def interval(alpha: FloatArray, beta: FloatArray, level: float = 0.95) -> tuple[FloatArray, FloatArray]:
    """Equal-tailed credible interval from the exact Beta quantile function."""
    from scipy.special import betaincinv

    a = np.asarray(alpha, dtype=np.float64)
    b = np.asarray(beta, dtype=np.float64)
    tail = (1.0 - level) / 2.0
    low = np.asarray(betaincinv(a, b, tail), dtype=np.float64)
    high = np.asarray(betaincinv(a, b, 1.0 - tail), dtype=np.float64)
    return low, high


def density(alpha: float, beta: float, x: FloatArray) -> FloatArray:
    """Beta(alpha, beta) pdf on a grid, computed in log space so large counts do not overflow.

    ln B(a, b) from the standard library's lgamma, not scipy: a plot needs no 150 ms import (the
    dashboard draws one on its first screen). Relative error about 1e-16 * ln Gamma(a + b): 3e-10
    at a + b = 1e5."""
    x = np.asarray(x, dtype=np.float64)
    inside = (x > 0.0) & (x < 1.0)
    out = np.zeros_like(x)
    xi = x[inside]
    log_beta = math.lgamma(alpha) + math.lgamma(beta) - math.lgamma(alpha + beta)
    out[inside] = np.exp((alpha - 1.0) * np.log(xi) + (beta - 1.0) * np.log1p(-xi) - log_beta)
    return out


def thompson_draw(alpha: FloatArray, beta: FloatArray, rng: np.random.Generator) -> FloatArray:
    draws: FloatArray = rng.beta(alpha, beta)
    return draws


def top_k(scores: FloatArray, k: int, rng: np.random.Generator | None = None) -> npt.NDArray[np.intp]:
    """Indices of the k largest scores, best first. With `rng` (a Thompson draw), a tie at the k-th score
    (more candidates on it than places left: Beta draws of a small prior land on exactly 0 or 1) goes to
    candidates on it drawn uniformly at random from `rng`, as `p_top_k` counts it (`topk.top_k_counts`);
    without `rng` (a ranking), and among the candidates above it, by position."""
    order = np.argsort(-scores, kind="stable")
    if rng is None or not 0 < k < len(scores) or scores[order[k - 1]] != scores[order[k]]:
        result: npt.NDArray[np.intp] = order[:k]
        return result
    kth = scores[order[k - 1]]
    above = order[: int(np.count_nonzero(scores > kth))]
    tied = rng.permutation(np.flatnonzero(scores == kth))
    picked: npt.NDArray[np.intp] = np.concatenate([above, tied[: k - len(above)]]).astype(np.intp)
    return picked


DIRECT_VALUES = 8_000_000  # draws x arms up to which every arm is drawn every time, in one array


def p_top_k(
    alpha: FloatArray,
    beta: FloatArray,
    k: int,
    rng: np.random.Generator,
    draws: int = 4000,
    chosen: FloatArray | None = None,
) -> FloatArray:
    """Monte Carlo estimate of each arm's probability of landing in a top-k Thompson draw (`top_k` with
    its generator: a tie at the k-th value shared equally among the arms on it). With `chosen` (1 for the
    arms the selection's own draw chose, else 0) that draw is counted among the draws (`topk.with_draw`):
    a chosen arm's estimate is never 0. Past DIRECT_VALUES values (2,000 arms at 4,000 draws), the same
    estimate in batches, with arms that share a posterior drawn as a group and arms that cannot reach the
    top k left out (core/model/topk.py): memory and time linear in the arms."""
    n = len(alpha)
    if n == 0:
        return np.zeros(0)
    if k >= n:
        return np.ones(n)
    if n * draws > DIRECT_VALUES:
        return p_top_k_large(np.asarray(alpha, np.float64), np.asarray(beta, np.float64), k, rng, draws, chosen)
    samples = rng.beta(alpha, beta, size=(draws, n))
    return with_draw(top_k_counts(samples, k), draws, chosen)
