"""Whether `bandit-state.json` still says what the log says, and putting it right.

The file is derived: rewritten after every append. A process killed between the append and
the rewrite (or a disk that filled) leaves it stale, and gptme reads it. `status` and `lint`
compare it with a fold of the log; the next write (or `status`) rewrites it, unless another tool
(gptme's own bandit) changed it since we wrote it: that update is kept, never overwritten by a
read (see lesson_credit.core.bandit.interop, `StateKept`), and `lint` says how to take the file back.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from lesson_credit.core.bandit.interop import StateKept, disagreement, kept_message, written_by_us
from lesson_credit.core.base.safe_json import JsonError, decode_json
from lesson_credit.core.base.safe_read import STATE_MAX_BYTES, UnsafeFile, read_regular
from lesson_credit.core.log.store import StoreError

if TYPE_CHECKING:
    from lesson_credit.core.workspace import Workspace


@dataclass(frozen=True)
class StateCheck:
    why: str  # how the file disagrees with the log
    foreign: bool  # changed by another tool since we wrote it: it is kept, not rewritten


def check_state(ws: Workspace) -> StateCheck | None:
    """How `bandit-state.json` disagrees with a fold of the log under the current settings, or
    None when it agrees or does not exist (a log written by hand or by another tool may come
    without one; the next write creates it)."""
    path = ws.state_path
    try:
        raw = read_regular(path, STATE_MAX_BYTES)
    except FileNotFoundError:
        return None
    except (OSError, UnsafeFile) as exc:
        return StateCheck(f"{path.name} cannot be read ({exc})", False)
    try:
        state = decode_json(raw, path.name)
    except JsonError as exc:
        return StateCheck(str(exc), False)
    why = disagreement(state, ws.posterior(), path.name)
    if why is None:
        return None
    foreign = isinstance(state, dict) and bool(state) and not written_by_us(state)
    return StateCheck(kept_message(path, why) if foreign else why, foreign)


def state_disagreement(ws: Workspace) -> str | None:
    """`check_state`'s reason, or None."""
    check = check_state(ws)
    return None if check is None else check.why


def repair_state(ws: Workspace) -> str | None:
    """Rewrite a stale `bandit-state.json` (best effort) unless another tool's update is in it; a
    one-line account of it, or None when it agreed with the log."""
    check = check_state(ws)
    if check is None:
        return None
    if check.foreign:
        return check.why
    try:
        ws.write_state()
    except StateKept as exc:  # changed by another tool between the check and the rewrite
        return str(exc)
    except (StoreError, OSError) as exc:
        return f"{check.why}; could not rewrite it: {exc}"
    return f"{check.why}; rewritten from the log"
