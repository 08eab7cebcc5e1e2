"""Whether `bandit-state.json` still says what the log says, and putting it right.

The file is derived: rewritten after every append. A process killed between the append and
the rewrite (or a disk that filled) leaves it stale, and gptme reads it. `status` and `lint`
compare it with a fold of the log; the next write (or `status`) rewrites it. When another tool
(gptme's own bandit) updated it since we wrote it, that rewrite first logs the update's increments
(an increments event, Workspace.write_state), so the file follows the log again; when they cannot
be known (no copy of what we wrote), the update is kept, never overwritten (`StateKept`), and `lint`
says how to take the file back.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeGuard

from lesson_credit.core.bandit import saving
from lesson_credit.core.bandit.interop import (
    SOURCE_KEY,
    StateKept,
    disagreement,
    read_state,
    written_by_us,
)
from lesson_credit.core.base.files import StoreUnavailable
from lesson_credit.core.base.numbers import counted
from lesson_credit.core.base.safe_json import JsonError, decode_json
from lesson_credit.core.base.safe_read import STATE_MAX_BYTES, UnsafeFile, read_regular
from lesson_credit.core.log.arm_names import past_cap_said
from lesson_credit.core.log.store import StoreError

if TYPE_CHECKING:
    from lesson_credit.core.bandit.fold import Posterior
    from lesson_credit.core.workspace import Workspace

SAVING_THEN = "left to that writer, and the next write or `status` rewrites it"


@dataclass(frozen=True)
class StateCheck:
    why: str  # how the file disagrees with the log
    foreign: bool  # changed by another tool since we wrote it: it is kept, not rewritten
    missing: bool = False  # the log is gone (Workspace.log_missing): kept, an empty fold would wipe it
    records: bool = False  # (with `missing`) the records its rewards came from are (Workspace.records_missing)
    replace: bool = False  # (with `foreign`) kept, and replacing it is the way on (saving.StateToReplace)
    # as we wrote it, from a database other agents write too, and only behind the log (`_only_behind`), as a
    # workspace's file is between its own writes in a fleet: rewritten without a word, and no finding of lint's
    behind: bool = False


def check_state(ws: Workspace) -> StateCheck | None:
    """How `bandit-state.json` disagrees with a fold of the log under the current settings, or
    None when it agrees or does not exist (a log written by hand or by another tool may come
    without one; the next write creates it). With the log file gone, that is what it says."""
    path = ws.state_path
    missing = ws.log_missing()
    if missing is not None:
        return StateCheck(missing, False, missing=True)
    try:
        ws.refuse_arms_file()  # (before the file is read: for the records it names, then as the state file)
    except StateKept as exc:
        return StateCheck(str(exc), True)
    if (gone := ws.records_missing()) is not None:
        return StateCheck(gone, False, missing=True, records=True)
    try:
        ws.guard.replaceable(path)  # a link to the log or config.toml: neither read as one nor replaced
    except StoreError as exc:
        return StateCheck(str(exc), True)
    if late := ws.late_save(put_back=False):  # (a save of gptme's landed aside: the rewrite puts it back)
        return StateCheck(late[0], False)
    try:
        raw = read_regular(path, STATE_MAX_BYTES)
    except FileNotFoundError:
        return None
    except (OSError, UnsafeFile) as exc:
        return StateCheck(f"{path.name} cannot be read ({exc})", False)
    try:  # (the bytes another read of this command decoded: not again, `read_state`; else the error to say)
        state = read_state(path, raw) or decode_json(raw, path.name)
    except JsonError as exc:
        if saving.saving_now(seen := saving.settled(path)):  # (not damaged: gptme's bandit saving it, half-way)
            return StateCheck(saving.saving_said(Path(path.name), seen, SAVING_THEN), False)
        return StateCheck(str(exc), False)
    if not isinstance(state, dict):
        return StateCheck(f"{path.name} has no 'arms' object", False)
    try:
        ws.refuse_too_many(state)  # (before any work on its arms, the hash of the whole file first)
    except StateKept as exc:
        return StateCheck(str(exc), True)
    ours = bool(state) and written_by_us(state)
    if ours and state.get(SOURCE_KEY) != ws.state_source():
        return None  # folded from the workspace's other store by its last write: that one's to repair
    if ours:  # as we wrote it: the base of a later update's increments
        ws.keep_written_copy(state)
    if not ours:
        try:
            update = ws.foreign_update(state)
        except StateKept as exc:
            return StateCheck(str(exc), True, replace=isinstance(exc, saving.StateToReplace))
        if update is not None and update != ({}, 0):
            return StateCheck(_foreign_said(ws, state, *update), False)
    post, keys = ws.posterior(), ws.state_keys(state)
    why = disagreement(state, post, path.name, keys)
    if why is None:
        return None
    return StateCheck(why, False, behind=ours and ws.state_source() is not None and _only_behind(state, post, keys))


def _only_behind(state: dict[str, Any], post: Posterior, keys: Sequence[str]) -> bool:
    """Whether a state file may be an earlier fold of this log that other agents' sessions then added to: it counts
    fewer sessions than the log, and no arm the log lacks or selected more often than the log says. Not a file
    ahead of the log (sessions deleted from the database, an older backup restored), nor one that counts as many
    sessions (the settings changed: config.toml edited)."""
    arms, stored = state.get("arms"), state.get("total_sessions")
    if not isinstance(arms, dict) or not _number(stored) or stored >= post.total_sessions:
        return False
    logged = dict(zip(keys, post.n.tolist(), strict=True))
    for key, entry in arms.items():
        n = entry.get("total_selections") if isinstance(entry, dict) else None
        if key not in logged or not _number(n) or n > logged[key]:
            return False
    return True


def _number(value: Any) -> TypeGuard[int | float]:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _foreign_said(ws: Workspace, state: dict[str, Any], added: dict[str, Any], sessions: int) -> str:
    """What `check_state` says of another tool's update of the file that the next write logs (and leaves out: the
    lessons past the distinct lessons a log may name)."""
    why = disagreement(state, ws.posterior(), ws.state_path.name, ws.state_keys(state))
    added, past = ws.within_cap(added)
    counted_sessions = counted(sessions, "session")
    what = f"its increments to {counted(len(added), 'arm')}" if added else f"the {counted_sessions} it counted"
    logs = f"logs {what}{'' if added else ', moving no arm,'} as an increments event" if added or sessions else ""
    leaves = f"leaves out of the file {past_cap_said(past)}" if past else ""
    return (
        f"{ws.state_path.name} was updated by another tool since lesson-credit wrote it"
        f"{'' if why is None else f' ({why})'}: the next write or `status` {' and '.join(filter(None, (logs, leaves)))}"
    )


def repair_state(ws: Workspace) -> str | None:
    """Rewrite a stale `bandit-state.json` (best effort) unless another tool's update is in it; a
    one-line account of it, or None when it agreed with the log or was only behind other agents' sessions
    (`StateCheck.behind`). A missing log is said, and the file left as it is (see `check_state`). The
    rewrite holds the writers' lock from a second check to the file's replacement, so it never replaces a
    file a write made meanwhile from a later log; when a writer holds the lock, that write rewrites the file
    itself (each does, from the log under it)."""
    check = check_state(ws)
    if check is not None and check.records:  # left as it is: gptme's updates meanwhile logged (none lost)
        return " ".join((check.why, *ws.log_other_update()))
    if check is None or check.foreign or check.missing:
        return None if check is None else check.why
    why, behind = check.why, check.behind
    try:
        with ws.log.locked(timeout=0):
            ws.refresh()
            check = check_state(ws)  # again, under the lock: a write may have rewritten the file meanwhile
            if check is None or check.foreign or check.missing:
                return None if check is None else check.why
            logged = ws.write_state(locked=True)
    except StoreUnavailable:  # the lock is held: its holder's write rewrites the file, from a later log
        if behind:  # (another agent's, in a workspace of its own: this file waits for the next status)
            return None
        return f"{why}; another writer holds the log's lock, and its write rewrites the file"
    except StateKept as exc:  # changed by another tool between the check and the rewrite, or no log
        return str(exc)
    except (StoreError, OSError) as exc:
        return f"{why}; could not rewrite it: {exc}"
    if logged:  # another tool's increments were logged: that line says so
        return " ".join(logged)
    return None if check.behind else f"{check.why}; rewritten from the log"
