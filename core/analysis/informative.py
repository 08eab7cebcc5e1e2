"""Grade where it counts: the sessions whose human grade would most change the estimates (docs/records.md).

For a session no person has graded, a grade h would move each of its lessons' posterior means.
We score the session by the expected squared change, summed over its lessons:

    score = sum over the session's lessons of E[(mean after - mean now)^2]

with h uncertain: mean mu and variance s2 (below). For a lesson with posterior Beta(alpha, beta),
nu = alpha + beta, m = alpha / nu, and credit weight w = floor + (1 - floor) * salience (docs/format.md §4):

- the session is pending (no source scores it), so the grade adds evidence:
    seed      Delta m = (w h - m) / (nu + 1)       E = (w^2 s2 + (w mu - m)^2) / (nu + 1)^2
    evidence  Delta m = w (h - m) / (nu + w)       E = w^2 (s2 + (mu - m)^2) / (nu + w)^2
    uniform   Delta m = (h - m) / (nu + 1)         E = (s2 + (mu - m)^2) / (nu + 1)^2
- an automatic score b is in force (a judge, a heuristic, an outcome), so the grade replaces it:
    seed, evidence  Delta m = w (h - b) / nu       E = w^2 (s2 + (mu - b)^2) / nu^2
    uniform         Delta m = (h - b) / nu         E = (s2 + (mu - b)^2) / nu^2

What a person would say, h: mu is the mean of the automatic scores the session has (else the mean
of all human grades, else 0.5); s2 is the variance of the human grades (1/12, a uniform grade,
until two exist) plus the variance among the session's automatic scores, so sources that disagree
make a session more worth grading. Decay is left out (each session counted at full weight).
Sessions a person graded score 0 and come last; ties keep log order (oldest first). So do those a
person's grade would not be in force for, moving nothing: `[rewards] priority` puts the source in
force before people, or names no person.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from lesson_credit.core.bandit.fold import FoldData, Posterior
from lesson_credit.core.model import credit as credit_mod
from lesson_credit.core.model.sources import HUMAN, SOURCES

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]
UNIFORM_VARIANCE = 1.0 / 12.0


@dataclass(frozen=True, eq=False)
class InformativeOrder:
    rows: IntArray  # sessions no person graded, most informative first
    score: FloatArray  # per session row: expected squared change of its lessons' means (0: a person graded it)
    disagreement: FloatArray  # per row: highest minus lowest automatic score (NaN: fewer than two)
    expected: FloatArray  # per row: mu, what a person is expected to say
    spread: FloatArray  # per row: sqrt(s2)


def informative_order(data: FoldData, post: Posterior) -> InformativeOrder:
    """The grading order described in the module docstring, over every session of the snapshot."""
    scores = data.scores()
    n = data.n_sessions
    human = scores.values[HUMAN][:n] if HUMAN in scores.values else np.full(n, np.nan)
    auto = np.vstack(
        [scores.values[s][:n] for s in SOURCES if s != HUMAN and s in scores.values] or [np.full(n, np.nan)]
    )
    graded = human[~np.isnan(human)]
    people_mean = float(graded.mean()) if len(graded) else 0.5
    people_var = float(graded.var()) if len(graded) >= 2 else UNIFORM_VARIANCE
    valid = ~np.isnan(auto)  # (automatic sources, sessions)
    count = valid.sum(axis=0)
    mu = np.where(count > 0, np.where(valid, auto, 0.0).sum(axis=0) / np.maximum(count, 1), people_mean)
    spread = np.where(valid, (auto - mu) ** 2, 0.0).sum(axis=0) / np.maximum(count, 1)
    s2 = people_var + np.where(count > 1, spread, 0.0)
    high = np.where(valid, auto, -np.inf).max(axis=0, initial=-np.inf)
    low = np.where(valid, auto, np.inf).min(axis=0, initial=np.inf)
    disagreement = np.where(count > 1, high - low, np.nan)
    score = _entry_scores(data, post, mu, s2)
    score[~np.isnan(human)] = 0.0
    score[_unused(scores.priority, scores.chosen[:n])] = 0.0
    candidates = np.flatnonzero(np.isnan(human))
    order = candidates[np.lexsort((candidates, -score[candidates]))]
    return InformativeOrder(order.astype(np.int64), score, disagreement, mu, np.sqrt(s2))


def _unused(priority: tuple[str, ...], chosen: npt.NDArray[np.int8]) -> npt.NDArray[np.bool_]:
    """Per session: whether a person's grade would not be in force (so moves nothing): the priority names no
    person, or the source in force (`chosen`, its code; NO_SOURCE: pending) comes before people in it."""
    if HUMAN not in priority:
        return np.ones(len(chosen), dtype=np.bool_)
    ahead = np.array([s in priority[: priority.index(HUMAN)] for s in SOURCES], dtype=np.bool_)
    return np.where(chosen >= 0, ahead[np.maximum(chosen, 0)], False)


def _entry_scores(data: FoldData, post: Posterior, mu: FloatArray, s2: FloatArray) -> FloatArray:
    """Per session: the sum over its entries (lessons) of the expected squared change of the mean."""
    settings = post.settings
    arms, rows = data.entry_arm, data.entry_session.astype(np.int64)
    if not len(arms):
        return np.zeros(data.n_sessions)
    w = credit_mod.weight(data.entry_salience, settings.floor)
    nu = (post.alpha + post.beta)[arms]
    m = post.mean[arms]
    h_mu, h_var, b = mu[rows], s2[rows], data.base[rows]
    pending = np.isnan(b)
    b = np.where(pending, 0.0, b)
    uniform = settings.strategy == "uniform"
    weight = np.ones_like(w) if uniform else w
    if settings.strategy == "seed":
        added = (w * w * h_var + (w * h_mu - m) ** 2) / (nu + 1.0) ** 2
    elif settings.strategy == "evidence":
        added = w * w * (h_var + (h_mu - m) ** 2) / (nu + w) ** 2
    else:
        added = (h_var + (h_mu - m) ** 2) / (nu + 1.0) ** 2
    replaced = weight * weight * (h_var + (h_mu - b) ** 2) / nu**2
    per_entry = np.where(pending, added, replaced)
    return np.bincount(rows, weights=per_entry, minlength=data.n_sessions).astype(np.float64)
