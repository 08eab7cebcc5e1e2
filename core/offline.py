"""Selecting lessons without the event log: from the last known posteriors in `bandit-state.json`.

An agent's session-start hook runs `select`; when the log's store (a database) cannot be
reached, `select --offline-ok` still answers, by Thompson sampling from the alpha/beta that
the last write of this workspace left in `bandit-state.json` (docs/format.md §7). The draw is the one
`lesson_credit.core.bandit.select.thompson_select` makes for the same posteriors, seed and candidates; nothing is
logged.
"""

from __future__ import annotations

import secrets
from typing import TYPE_CHECKING, Any

import numpy as np

from lesson_credit.core import attribution
from lesson_credit.core.analysis import dropout
from lesson_credit.core.bandit import select as select_mod
from lesson_credit.core.bandit.select import Selection
from lesson_credit.core.bandit.state_reading import arms_past, never_read, read_state
from lesson_credit.core.base.safe_read import UnsafeFile, read_regular
from lesson_credit.core.model import beta as beta_mod
from lesson_credit.core.model import topk

if TYPE_CHECKING:
    from lesson_credit.core.workspace import Workspace

MAX_STATE_BYTES = 64 * 1024 * 1024


def last_known_posteriors(ws: Workspace) -> dict[str, tuple[float, float]]:
    """Arm -> (alpha, beta) from bandit-state.json; empty when there is none or it is unreadable."""
    if arms_past(ws.state_path, never_read()):  # (refused by every command that reads it: never decoded)
        return {}
    try:  # a regular file only (a FIFO would block), refused by its size before reading
        data = read_regular(ws.state_path, MAX_STATE_BYTES)
    except (OSError, UnsafeFile):
        return {}
    state: Any = read_state(ws.state_path, data)  # (its arms decoded: gptme's contextual arms kept as bytes)
    arms = state.get("arms") if isinstance(state, dict) else None
    out: dict[str, tuple[float, float]] = {}
    if not isinstance(arms, dict):
        return out
    for arm, entry in arms.items():
        if not isinstance(entry, dict):
            continue
        a, b = entry.get("alpha"), entry.get("beta")
        if not all(isinstance(v, int | float) and not isinstance(v, bool) for v in (a, b)):
            continue
        alpha, beta = float(a), float(b)  # type: ignore[arg-type]
        if alpha > 0 and beta > 0 and np.isfinite(alpha + beta):
            out[str(arm)] = (alpha, beta)
    return out


def select_offline(
    ws: Workspace,
    context: str,
    *,
    k: int | None = None,
    seed: int | None = None,
    session_id: str | None = None,
    draws: int = 4000,
    category: str | None = None,
) -> Selection:
    """Thompson top-k among the lessons matching `context` that are for the session's kind of work
    (`category`, else the one config.toml's [categories] finds in the context), from the last known
    posteriors."""
    k = select_mod.check_k(ws.config.k if k is None else k)
    if category is None and ws.config.categories:
        category = select_mod.category_of(context, ws.config.categories)
    if seed is None:
        seed = secrets.randbelow(2**31)
    if session_id is None:
        session_id = f"{ws.clock().strftime('%Y%m%dT%H%M%S')}-{secrets.token_hex(3)}"
    known = last_known_posteriors(ws)
    a0, b0 = ws.settings.prior_alpha, ws.settings.prior_beta
    notes: list[str] = []
    candidates, left_out = select_mod.split_candidates(ws.library().lessons, context, category, notes)
    ws.warnings.extend(notes)
    alpha = np.array([known.get(c.id, (a0, b0))[0] for c in candidates])
    beta = np.array([known.get(c.id, (a0, b0))[1] for c in candidates])
    rng = np.random.default_rng(seed)
    sample = beta_mod.thompson_draw(alpha, beta, rng) if candidates else np.zeros(0)
    picked = beta_mod.top_k(sample, k, rng)
    chosen = topk.chosen_of(picked, len(candidates))
    propensity = beta_mod.p_top_k(alpha, beta, k, np.random.default_rng([seed, 1]), draws, chosen)
    selection = Selection(
        session_id=session_id,
        candidates=tuple(c.id for c in candidates),
        selected=tuple(candidates[i].id for i in picked),
        propensity={c.id: float(p) for c, p in zip(candidates, propensity, strict=True)},
        draws={c.id: float(d) for c, d in zip(candidates, sample, strict=True)},
        k=k,
        seed=seed,
        policy=ws.settings.strategy,  # the state file's Beta posteriors, whatever the policy in force
        category=category,
        left_out=tuple(lesson.id for lesson in left_out),
    )
    # no trial of its own, but a trial the session's first select logged keeps its coins: what it withheld
    # (counted withheld by loo's randomized estimate) is not injected
    if decided := attribution.session_coins(ws.root, ws.library(), session_id):
        selection = dropout.apply_dropout(selection, 0.0, np.random.default_rng([seed, 2]), decided)
    return selection
