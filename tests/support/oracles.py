"""Reference implementations the engine is checked against: plain loops over plain data, kept here
because no product code calls them (they were in core/ before)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from lesson_credit.core.bandit.fold import CreditSettings
from lesson_credit.core.log.events import Event, GradeEvent, PriorEvent, SessionEvent
from lesson_credit.core.log.index import LogIndex
from lesson_credit.core.log.store import parse_chunk
from lesson_credit.core.model import credit as credit_mod


def fold_naive(events: list[Event], settings: CreditSettings) -> dict[str, tuple[float, float, int]]:
    """The same fold as a plain loop over events: the reference the vectorised one is checked against."""
    sessions: dict[str, SessionEvent] = {}
    order: list[str] = []
    base: dict[str, float | None] = {}
    priors: dict[str, tuple[float, float, int]] = {}
    for event in events:
        if isinstance(event, SessionEvent) and event.session_id not in sessions:
            sessions[event.session_id] = event
            order.append(event.session_id)
            base[event.session_id] = event.base_reward
        elif isinstance(event, PriorEvent):
            priors.update(event.arms)
    for event in events:
        if isinstance(event, GradeEvent) and event.session_id in sessions:
            base[event.session_id] = event.base_reward
    a0, b0 = settings.prior_alpha, settings.prior_beta
    state: dict[str, list[float]] = {arm: [a, b, n] for arm, (a, b, n) in priors.items()}
    for sid in order:
        reward = base[sid]
        if reward is None:
            continue
        for arm_state in state.values():
            arm_state[0] = a0 + settings.decay * (arm_state[0] - a0)
            arm_state[1] = b0 + settings.decay * (arm_state[1] - b0)
        session = sessions[sid]
        for lesson_id, sal in zip(session.lesson_ids, session.saliences, strict=True):
            arm_state = state.setdefault(lesson_id, [a0, b0, 0])
            w = settings.floor + (1 - settings.floor) * sal
            da, db = credit_mod.credit(reward, w, settings.strategy)
            arm_state[0] += da
            arm_state[1] += db
            arm_state[2] += 1
    return {arm: (s[0], s[1], int(s[2])) for arm, s in state.items()}


def robust_reference(
    z: npt.NDArray[np.float64], x: npt.NDArray[np.float64], y: npt.NDArray[np.float64], penalty: npt.NDArray[np.float64]
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    """Penalised least squares with the baseline columns `z` unpenalised and `penalty` on each of x's
    columns, and its HC2 sandwich variance, the slow obvious way over the dense design F = [z x]:

        b = (F'F + P)^-1 F'y,  r = y - F b,  h_i = f_i'(F'F + P)^-1 f_i,
        V = (F'F + P)^-1 F' diag(r^2 / (1 - h)) F (F'F + P)^-1

    Returns x's coefficients, their variances and h."""
    f = np.hstack([z, x])
    k = z.shape[1]
    m = np.linalg.inv(f.T @ f + np.diag(np.concatenate([np.zeros(k), penalty])))
    coef = m @ f.T @ y
    r = y - f @ coef
    h = np.einsum("ij,jk,ik->i", f, m, f)
    v = m @ (f.T * (r * r / (1.0 - h))) @ f @ m
    return coef[k:], np.diag(v)[k:], h


def best_gain(gain: npt.ArrayLike, k: int) -> float:
    """The largest total gain of any min(k, n) items: the best selection of one session."""
    values = np.asarray(gain, dtype=np.float64)
    n = min(k, len(values))
    return float(np.sort(values)[::-1][:n].sum())


def selection_regret(gain: npt.ArrayLike, chosen: Sequence[int] | npt.ArrayLike, k: int) -> float:
    """Best achievable gain among the candidates minus the gain of the chosen ones (one session).

    `gain` holds each candidate's true gain this session (its effect if relevant, else 0)."""
    values = np.asarray(gain, dtype=np.float64)
    return best_gain(values, k) - float(values[np.asarray(chosen, dtype=np.int64)].sum())


def session_event(root: Path, log_rel: Path, session_id: str) -> SessionEvent:
    """The session as the log index reads it back from the log file (first record of the id wins)."""
    result = parse_chunk((root / log_rel).read_bytes(), 0, 1, at_eof=True)
    index = LogIndex()
    for line, event in result.events:
        index.add(line, event)
    row = index.row_of(session_id)
    if row is None:
        raise KeyError(session_id)
    return index.session(row)


def time_columns(n: int, blocks: int, category: npt.NDArray[np.int64] | None = None) -> npt.NDArray[np.float64]:
    """The time-block indicators of n sessions in log order written out: session i is in block k when
    k n <= i blocks < (k + 1) n (`blocks` runs of nearly equal size); one column per block but the last. With
    `category` (each session's code): those columns per category with 12 sessions a block or more, and once more
    for the other categories together when they have as many, else with the largest category's (docs/estimates.md
    "Time")."""
    shared = np.array(
        [[float(k * n <= i * blocks < (k + 1) * n) for k in range(blocks - 1)] for i in range(n)]
    ).reshape(n, blocks - 1)
    if category is None or blocks < 2:
        return shared
    codes = np.unique(category).tolist()
    own = [c for c in codes if int((category == c).sum()) >= 12 * blocks]
    if not own:
        return shared
    rest = ~np.isin(category, own)
    largest = max(own, key=lambda c: (int((category == c).sum()), -c))
    groups = [(category == c) | (rest & (c == largest) & (rest.sum() < 12 * blocks)) for c in own]
    groups += [rest] if rest.sum() >= 12 * blocks else []
    if len(groups) < 2:
        return shared
    return np.hstack([shared * g[:, None] for g in groups])


def ridge_reference(
    z: npt.NDArray[np.float64], x: npt.NDArray[np.float64], y: npt.NDArray[np.float64], penalty: float
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64], float]:
    """The joint estimate the slow, obvious way: ridge on the lesson columns `x` only (the baseline
    columns `z` unpenalised) as one augmented least-squares problem over a dense design.

    Returns the lesson coefficients, their posterior covariance sigma^2 [(D'D)^-1]_lessons and
    sigma^2 = Q / (n - columns of z) (z of full column rank)."""
    n, p, k = len(y), x.shape[1], z.shape[1]
    design = np.vstack([np.hstack([z, x]), np.hstack([np.zeros((p, k)), np.sqrt(penalty) * np.eye(p)])])
    target = np.concatenate([y, np.zeros(p)])
    solution, *_ = np.linalg.lstsq(design, target, rcond=None)
    sigma2 = float(((design @ solution - target) ** 2).sum()) / (n - k)
    cov = sigma2 * np.linalg.inv(design.T @ design)[k:, k:]
    return solution[k:], cov, sigma2


def restricted_neg2_loglik(z: Any, x: Any, y: Any, lam: float) -> float:
    """-2 log of the restricted likelihood, from its definition: with R the residual maker of Z and
    V = R X X'R / lam + R (the covariance of R y over sigma^2), n' = n - rank Z, sigma^2 profiled:
    n' log(y'R V^+ R y / n') + log pdet(V on the range of R)."""
    n = len(y)
    q, _ = np.linalg.qr(z)
    basis = np.linalg.svd(np.eye(n) - q @ q.T)[0][:, : n - np.linalg.matrix_rank(z)]  # range of R
    xr, yr = basis.T @ x, basis.T @ y
    v = xr @ xr.T / lam + np.eye(len(yr))
    quad = float(yr @ np.linalg.solve(v, yr))
    dof = len(yr)
    return dof * math.log(quad / dof) + float(np.linalg.slogdet(v)[1])


def eb_penalty(z: npt.NDArray[np.float64], x: npt.NDArray[np.float64], y: npt.NDArray[np.float64]) -> float:
    """The empirical-Bayes penalty from its definition: the lambda minimising `restricted_neg2_loglik`, on a
    grid of log lambda in [-6, 6] (steps of 0.05), then refined by a bounded search around the grid's best
    (an interior optimum: a prior-sd floor that would bind is not applied here)."""
    from scipy.optimize import minimize_scalar

    grid = np.linspace(-6.0, 6.0, 241)
    best = float(grid[int(np.argmin([restricted_neg2_loglik(z, x, y, math.exp(g)) for g in grid]))])
    found = minimize_scalar(
        lambda g: restricted_neg2_loglik(z, x, y, math.exp(g)),
        bounds=(best - 0.05, best + 0.05),
        method="bounded",
        options={"xatol": 1e-8},
    )
    return math.exp(float(found.x))
