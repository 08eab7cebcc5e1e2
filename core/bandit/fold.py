"""Posteriors as a pure fold of the event log (docs/format.md §4-5), vectorised over integer arm indices.

`lesson_credit.core.log.index.LogIndex` turns events into columns as they are read and hands out `FoldData`
snapshots (`lesson_credit.core.log.snapshot`). `fold()` is a pure function of a snapshot and the credit settings,
so a what-if, a regrade or a preview is just another call with other arguments. Per-arm sums
are kept per block of sessions (`lesson_credit.core.log.snapshot.BlockCache`), so a new grade or session only
recomputes one block.

A lesson included during a session (`"included": "during"`, gptme pulling it in mid-conversation) is
credited exactly as one chosen before it, under the same strategy's formula: a posterior records the
sessions a lesson was in. Only the effect estimates (`core.analysis.joint.build_design`) tell the two apart.
"""

from __future__ import annotations

from functools import cached_property

import numpy as np
from msgspec import Struct

from lesson_credit.core.log.snapshot import FloatArray, IntArray, arm_stats, blocks_of, sum_by_arm
from lesson_credit.core.log.snapshot import FoldData as FoldData
from lesson_credit.core.model import credit as credit_mod
from lesson_credit.core.model.settings import CreditSettings as CreditSettings


class Regraded(Struct, frozen=True):
    """Per-session rewards `of` with one row's changed: a regrade (a preview, a session's detail)
    reads only alpha, beta and n, so the million-row copy is made only if something asks for it."""

    of: FloatArray
    row: int
    value: float  # NaN: pending

    def array(self) -> FloatArray:
        base = self.of.copy()
        base[self.row] = self.value
        return base


class Posterior(Struct, frozen=True, dict=True, eq=False):
    """Per-arm Beta posterior after a fold. Arrays are indexed like `arm_ids`.

    `rewarded` and `last_session` are only needed for the state file and the status table,
    so they are computed on first use rather than on every (what-if, preview) fold.
    """

    arm_ids: tuple[str, ...]
    alpha: FloatArray
    beta: FloatArray
    n: IntArray
    settings: CreditSettings
    graded_sessions: int
    data: FoldData
    rewards: FloatArray | Regraded  # the per-session rewards folded

    @cached_property
    def base(self) -> FloatArray:
        """The per-session rewards folded (a regrade's: built on first use, see `Regraded`)."""
        rewards = self.rewards
        return rewards.array() if isinstance(rewards, Regraded) else rewards

    @cached_property
    def total_sessions(self) -> int:
        """gptme's `total_sessions`: the sessions graded now or once (a grade taken back leaves its session
        counted: gptme's bandit never counts back, docs/format.md §7), and those other tools counted (imported
        files', their logged updates')."""
        once = ~np.isnan(self.base) | self.data.scored_once
        return int(np.count_nonzero(once)) + self.data.counted_sessions

    @property
    def mean(self) -> FloatArray:
        result: FloatArray = self.alpha / (self.alpha + self.beta)
        return result

    def index(self) -> dict[str, int]:
        return {arm: i for i, arm in enumerate(self.arm_ids)}

    @cached_property
    def rewarded(self) -> IntArray:
        """Graded sessions whose credited reward exceeded 0.5 (gptme's total_rewards)."""
        data = self.data
        counts = np.zeros(data.n_arms, dtype=np.int64)
        for block in blocks_of(data, self.base):
            part = block.rewarded(data, self.settings)
            counts[: len(part)] += part
        result: IntArray = data.prior_rewards + counts
        return result

    @cached_property
    def last_session(self) -> IntArray:
        """Row of each arm's latest graded session, -1 if none."""
        data = self.data
        last = np.full(data.n_arms, -1, dtype=np.int64)
        for block in blocks_of(data, self.base):
            part = block.sums.last
            np.maximum(last[: len(part)], part, out=last[: len(part)])
        return last


def fold(data: FoldData, settings: CreditSettings, base: FloatArray | None = None) -> Posterior:
    """Fold the whole log under `settings`; `base` overrides the per-session rewards (what-if).

    With w = floor + (1 - floor) * salience, the sums of w*base and of w over an arm's sessions
    are floor*sum(base) + (1-floor)*sum(base*salience) and floor*n + (1-floor)*sum(salience);
    seed, evidence and uniform are each a line in those (docs/format.md §4). Decay weighs every session
    differently, so it takes the entry-by-entry path.
    """
    session_base = data.base if base is None else base
    a0, b0 = settings.prior_alpha, settings.prior_beta
    start_alpha = np.where(np.isnan(data.prior_alpha), a0, data.prior_alpha)
    start_beta = np.where(np.isnan(data.prior_beta), b0, data.prior_beta)
    stats = data.stats if base is None else arm_stats(data, session_base)
    strategy, floor = settings.strategy, settings.floor
    if settings.decay < 1.0 and stats.graded_sessions:
        # Before each graded session every arm moves toward the prior by gamma, so an
        # increment from the t-th of T graded sessions is worth gamma**(T - t) at the end.
        arms, n_arms, total = data.entry_arm, data.n_arms, stats.graded_sessions
        graded_rows = ~np.isnan(session_base)
        entry_base = np.where(graded_rows, session_base, 0.0)[data.entry_session]
        w = credit_mod.weight(data.entry_salience, floor)
        d_alpha, d_beta = credit_mod.credit(entry_base, w, strategy)
        rank = np.cumsum(graded_rows)
        factor = (
            settings.decay ** (total - rank[data.entry_session]).astype(np.float64) * graded_rows[data.entry_session]
        )
        shrink = settings.decay**total
        alpha = a0 + shrink * (start_alpha - a0) + sum_by_arm(arms, d_alpha * factor, n_arms)
        beta = b0 + shrink * (start_beta - b0) + sum_by_arm(arms, d_beta * factor, n_arms)
    elif strategy == "uniform":  # alpha += base, beta += 1 - base
        alpha = start_alpha + stats.sum_base
        beta = start_beta + stats.n - stats.sum_base
    else:
        sum_wb = floor * stats.sum_base + (1.0 - floor) * stats.sum_base_salience
        alpha = start_alpha + sum_wb
        if strategy == "seed":  # alpha += base*w, beta += 1 - base*w
            beta = start_beta + stats.n - sum_wb
        else:  # evidence: alpha += w*base, beta += w*(1 - base) = w - w*base
            beta = start_beta + floor * stats.n + (1.0 - floor) * stats.sum_salience - sum_wb
    # another tool's increments (docs/format.md §5.5) count as that tool counted them: added, not decayed
    return Posterior(
        arm_ids=data.arm_ids,
        alpha=np.asarray(alpha + data.added_alpha, dtype=np.float64),
        beta=np.asarray(beta + data.added_beta, dtype=np.float64),
        n=data.prior_n + stats.n.astype(np.int64),
        settings=settings,
        graded_sessions=stats.graded_sessions,
        data=data,
        rewards=session_base,
    )


def regrade(post: Posterior, row: int, reward: float | None) -> Posterior:
    """The posterior after changing one session's reward (None: pending), touching only that
    session's entries. Exact without decay; with decay every arm's weights change, so it re-folds."""
    data, settings = post.data, post.settings
    rewards = Regraded(post.base, row, np.nan if reward is None else float(reward))
    old, new = post.base[row], np.float64(rewards.value)
    if settings.decay < 1.0:
        return fold(data, settings, rewards.array())
    ends = data.starts(row, row + 1)
    arms, salience = data.entry_arms(int(ends[0]), int(ends[1]))
    w = credit_mod.weight(salience, settings.floor)
    alpha, beta, n = post.alpha.copy(), post.beta.copy(), post.n.copy()
    for value, sign in ((old, -1.0), (new, 1.0)):
        if np.isnan(value):
            continue
        d_alpha, d_beta = credit_mod.credit(np.full_like(w, float(value)), w, settings.strategy)
        np.add.at(alpha, arms, sign * d_alpha)
        np.add.at(beta, arms, sign * d_beta)
        np.add.at(n, arms, int(sign))
    graded = post.graded_sessions + int(not np.isnan(new)) - int(not np.isnan(old))
    return Posterior(data.arm_ids, alpha, beta, n, settings, graded, data, rewards)


def fold_through(post: Posterior, last_rows: IntArray) -> tuple[FloatArray, FloatArray, IntArray] | None:
    """Per arm, (alpha, beta, n) as `post`'s fold held them right after the session at row `last_rows[arm]`:
    its sessions up to that row (under their grades and the settings now) over its priors and increments
    (all of them: one logged after that session makes the arm differ). What `export-gptme` or a write wrote
    for the arm then, unless a session of it was pending then, or an increment came after
    (core/workspace/late_evidence.py). None with decay: every later session moved every arm, known only for
    the whole log."""
    data, settings = post.data, post.settings
    if settings.decay < 1.0:
        return None
    arms, sessions = data.entry_arm, data.entry_session
    base = post.base
    counted = ~np.isnan(base)[sessions] & (sessions <= np.asarray(last_rows, dtype=np.int64)[arms])
    w = credit_mod.weight(data.entry_salience, settings.floor)
    d_alpha, d_beta = credit_mod.credit(np.where(counted, base[sessions], 0.0), w, settings.strategy)
    start_alpha = np.where(np.isnan(data.prior_alpha), settings.prior_alpha, data.prior_alpha)
    start_beta = np.where(np.isnan(data.prior_beta), settings.prior_beta, data.prior_beta)
    alpha = start_alpha + data.added_alpha + sum_by_arm(arms, d_alpha * counted, data.n_arms)
    beta = start_beta + data.added_beta + sum_by_arm(arms, d_beta * counted, data.n_arms)
    n = data.prior_n + np.bincount(arms[counted], minlength=data.n_arms).astype(np.int64)
    return alpha, beta, n
