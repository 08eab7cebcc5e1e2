"""Whether `bandit-state.json` still says what the log says, and putting it right.

The file is derived: rewritten after every append. A process killed between the append and
the rewrite (or a disk that filled, or a hand edit) leaves it stale, and gptme reads it.
`status` and `lint` compare it with a fold of the log; the next write (or `status`) rewrites it.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import msgspec

from lesson_credit.core.base.safe_read import STATE_MAX_BYTES, UnsafeFile, read_regular
from lesson_credit.core.log.store import StoreError

if TYPE_CHECKING:
    from lesson_credit.core.workspace import Workspace


def _same(stored: Any, value: float) -> bool:
    if isinstance(stored, bool) or not isinstance(stored, int | float):
        return False
    return math.isclose(float(stored), value, rel_tol=1e-9, abs_tol=1e-12)


def state_disagreement(ws: Workspace) -> str | None:
    """Why `bandit-state.json` disagrees with a fold of the log under the current settings, or
    None when it agrees or does not exist (a log written by hand or by another tool may come
    without one; the next write creates it)."""
    path = ws.state_path
    try:
        raw = read_regular(path, STATE_MAX_BYTES)
    except FileNotFoundError:
        return None
    except (OSError, UnsafeFile) as exc:
        return f"{path.name} cannot be read ({exc})"
    try:
        state = msgspec.json.decode(raw)
    except msgspec.DecodeError:
        return f"{path.name} is not valid JSON"
    arms = state.get("arms") if isinstance(state, dict) else None
    if not isinstance(arms, dict):
        return f"{path.name} has no 'arms' object"
    post = ws.posterior()
    logged = set(post.arm_ids)
    if set(arms) != logged:
        extra, missing = sorted(set(arms) - logged), sorted(logged - set(arms))
        which = f"lacks {missing[0]}" if missing else f"has {extra[0]}, which the log does not"
        return f"{path.name} disagrees with the log: it {which}"
    columns = zip(post.arm_ids, post.alpha.tolist(), post.beta.tolist(), post.n.tolist(), strict=True)
    for arm, alpha, beta, n in columns:
        entry = arms[arm]
        if not isinstance(entry, dict):
            return f"{path.name} disagrees with the log: arm {arm} is not an object"
        for key, value in (("alpha", alpha), ("beta", beta), ("total_selections", n)):
            if not _same(entry.get(key), value):
                stored = entry.get(key)
                return f"{path.name} disagrees with the log: {arm} {key} {stored!r} in the file, {value!r} from the log"
    if not _same(state.get("total_sessions"), post.graded_sessions):
        stored = state.get("total_sessions")
        return (
            f"{path.name} disagrees with the log: total_sessions {stored!r}, {post.graded_sessions} graded in the log"
        )
    return None


def repair_state(ws: Workspace) -> str | None:
    """Rewrite a stale `bandit-state.json` (best effort); a one-line account of it, or None
    when it agreed with the log."""
    why = state_disagreement(ws)
    if why is None:
        return None
    try:
        ws.write_state()
    except (StoreError, OSError) as exc:
        return f"{why}; could not rewrite it: {exc}"
    return f"{why}; rewritten from the log"
