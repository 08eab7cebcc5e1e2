"""The verdict on the workspace's own bandit-state.json when an arm of it cannot be told apart from the log's
evidence (no copy of what we wrote: earlier_copies `_rebuilt`), kept in `.cache/bandit-state-kept`: the file is
then kept at every write, and telling its arms apart reads the whole log. The verdict holds for the file's exact
bytes and the log it was made on (the bytes read then, vouched for as every cache of the log is), and for what the
log gained since as long as none of it could change that arm's telling: no session naming the arm, no grade of a
session naming it, no prior, increments or export event; the settings, outcomes, reward priority, library and the
file's path as they were. Anything else, or a cache that cannot be read, and the check runs again."""

from __future__ import annotations

import hashlib

import msgspec
import numpy as np
from msgspec import Struct

from lesson_credit.core.base.ids import one_form
from lesson_credit.core.base.sealed import seal, unseal
from lesson_credit.core.log.index import LogIndex
from lesson_credit.core.log.snapshot import FoldData

# 7: a session the log gave a result counts, whatever the settings; 8: an arm gptme's bandit made again after its
# prune is told (docs/format.md §7 *Made again*), where a verdict before kept the file; 9: a stamp later than the
# file's `created` no longer dates our write (earlier_copies `_written_after`), so more readings of an arm as we
# wrote it are compared; 10: with no copy, an arm stamped in gptme's form that no increments event saw is stamped since
# our write whatever its time (increments `MadeAgain.fresh`), and a stamp naming a session scored after a grade dated
# later than `created` dates no write (`_unscored_then`)
VERDICT_MAGIC = b"lesson-credit kept-verdict 10\n"


class Untold(str):
    """Why an arm of a file cannot be told apart from the log's evidence (a str, as the check says it), with the
    lesson (one Unicode form) that arm is told against; None: the arm names no lesson of the log."""

    arm: str | None

    def __new__(cls, why: str, arm: str | None) -> Untold:
        told = super().__new__(cls, why)
        told.arm = arm
        return told


class Verdict(Struct, frozen=True):
    """A kept verdict: of the file (its bytes' sha256), what the check said and of which lesson's arm, what else
    it read (`inputs`: a digest), and the log it was made on: its first `end` bytes (`vouch` identifies them),
    `lines` lines, `sessions` sessions, and `events`, the counts of the events that could change any arm."""

    file: str
    why: str
    arm: str | None
    inputs: str
    end: int
    vouch: str
    lines: int
    sessions: int
    events: tuple[int, ...]


def file_digest(raw: bytes) -> str:
    return hashlib.sha256(raw).hexdigest()


def inputs_digest(*parts: object) -> str:
    """A digest of what the check reads besides the log and the file (their reprs: settings, outcomes, ...)."""
    return hashlib.sha256("\x00".join(repr(part) for part in parts).encode("utf-8", "surrogatepass")).hexdigest()


def event_counts(index: LogIndex) -> tuple[int, ...]:
    """What grows with any prior, increments or export event: no arm's numbers move otherwise but by sessions."""
    saves = index.exports.saves
    return (
        len(index.increment_steps),
        len(index.prior_steps),
        int(index.added_sessions),
        len(index.exports.files),
        len(saves),
        sum(line for line, _ in saves.values()),
    )


def encode(verdict: Verdict) -> bytes:
    return seal(VERDICT_MAGIC, msgspec.msgpack.encode(verdict))


def decode(data: bytes) -> Verdict:
    """The verdict a cache file holds; ValueError when it is damaged or not one."""
    try:
        return msgspec.msgpack.decode(unseal(VERDICT_MAGIC, data), type=Verdict)
    except (msgspec.DecodeError, msgspec.ValidationError) as exc:
        raise ValueError(f"not a kept verdict ({exc})") from None


def still_holds(verdict: Verdict, data: FoldData, index: LogIndex) -> bool:
    """Whether what the log gained since `verdict` was made (its prefix known intact by the caller) leaves the
    verdict's arm as it was: no event but sessions and grades, none naming the arm (None: none at all). A session
    logged since whose time is exactly another arm's stamp changes nothing either: the file (its bytes the same) was
    written before it, so it is no stamp of that file's. (Checked again, a stamp later than the file's `created`, as
    gptme's are, is not taken for one: earlier_copies `_written_after`; one at or before it still may be.)"""
    if index.lines < verdict.lines or data.n_sessions < verdict.sessions or event_counts(index) != verdict.events:
        return False
    arm = _arm_index(data, verdict.arm)
    lines = np.array([line for line, _ in index.grades], dtype=np.int64)
    later = np.flatnonzero(lines > verdict.lines).tolist()  # (lines count from 1)
    if verdict.arm is None:
        return data.n_sessions == verdict.sessions and not later
    if arm is None:
        return True  # (no session names it, then or since: nothing of it to tell)
    rows = []
    for at in later:
        row = index.grade_rows[at]
        if row < 0:  # (a grade read before its session)
            found = index.row_of(index.grades[at][1].session_id)
            row = -1 if found is None else found
        rows.append(row)
    mine = data.entry_arm == arm
    touched = (data.entry_session >= verdict.sessions) | np.isin(data.entry_session, rows)
    return not bool(np.any(mine & touched))


def _arm_index(data: FoldData, arm: str | None) -> int | None:
    if arm is None:
        return None
    for i, arm_id in enumerate(data.arm_ids):
        if one_form(arm_id) == arm:
            return i
    return None
