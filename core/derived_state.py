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

import msgspec

from lesson_credit.core.bandit.interop import SOURCE_KEY, StateKept, disagreement, kept_message, written_by_us
from lesson_credit.core.base.safe_read import STATE_MAX_BYTES, UnsafeFile, read_regular
from lesson_credit.core.log.store import StoreError

if TYPE_CHECKING:
    from lesson_credit.core.workspace import Workspace


@dataclass(frozen=True)
class StateCheck:
    why: str  # how the file disagrees with the log
    foreign: bool  # changed by another tool since we wrote it: it is kept, not rewritten
    missing: bool = False  # the log is gone (Workspace.log_missing): kept, an empty fold would wipe it


def check_state(ws: Workspace) -> StateCheck | None:
    """How `bandit-state.json` disagrees with a fold of the log under the current settings, or
    None when it agrees or does not exist (a log written by hand or by another tool may come
    without one; the next write creates it). With the log file gone, that is what it says."""
    path = ws.state_path
    missing = ws.log_missing()
    if missing is not None:
        return StateCheck(missing, False, missing=True)
    try:
        raw = read_regular(path, STATE_MAX_BYTES)
    except FileNotFoundError:
        return None
    except (OSError, UnsafeFile) as exc:
        return StateCheck(f"{path.name} cannot be read ({exc})", False)
    try:
        state = msgspec.json.decode(raw)
    except msgspec.DecodeError:
        return StateCheck(f"{path.name} is not valid JSON", False)
    except RecursionError:
        return StateCheck(f"{path.name} is not valid JSON (nested too deeply)", False)
    if isinstance(state, dict) and written_by_us(state) and state.get(SOURCE_KEY) != ws.state_source():
        return None  # folded from the workspace's other store by its last write: that one's to repair
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
    one-line account of it, or None when it agreed with the log. A missing log is said, and the file
    left as it is (see `check_state`)."""
    check = check_state(ws)
    if check is None:
        return None
    if check.foreign or check.missing:
        return check.why
    try:
        ws.write_state()
    except StateKept as exc:  # changed by another tool between the check and the rewrite
        return str(exc)
    except (StoreError, OSError) as exc:
        return f"{check.why}; could not rewrite it: {exc}"
    return f"{check.why}; rewritten from the log"
