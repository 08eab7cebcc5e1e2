"""Reading a `bandit-state.json` (`read_state`), never decoding one with more arms than any is read with.

A state file with more arms beyond the log's than a log names lessons is refused (StateFile.refuse_too_many), so one
with more than twice that (`never_read`: the log's are at most that many) is refused whatever the log: it is never
decoded, and its arms are counted from its bytes only as far as the number asked about (`arms_past`, core/bandit/
arm_count.py). Decoding 1,500,000 arms cost every command 10 s of CPU and 1.4 GB.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from lesson_credit.core.bandit.arm_count import bytes_have_more_arms, count_arms, fewest_bytes, file_pieces
from lesson_credit.core.base.safe_json import JsonError, decode_json
from lesson_credit.core.base.safe_read import STATE_MAX_BYTES, UnsafeFile, open_regular, read_regular
from lesson_credit.core.log import arm_names


def never_read() -> int:
    """The arms past which a state file is never decoded: more than the log's (at most MAX_LOG_LESSONS) and
    MAX_LOG_LESSONS more, so refused whatever the log (StateFile.refuse_too_many)."""
    return 2 * arm_names.MAX_LOG_LESSONS


class _Told:
    """What `arms_past` counted of the file it last read (by device, inode, size and mtime): `arms`, all of them when
    `whole` (-1: none can be told), else at least that many. A command asks more than once, of two numbers."""

    of: tuple[int, int, int, int] | None = None
    arms = -1
    whole = False


def arms_past(path: Path | str, limit: int) -> bool:
    """Whether the regular file at `path` has more than `limit` arms, counted from its bytes (arm_count.count_arms) as
    far as `limit` (the piece read then: a number a little above it is answered without reading again) and no
    further; False when it cannot be read (whoever reads it next says why) or told, or it is smaller than such a file
    can be (`fewest_bytes`)."""
    try:
        fd = open_regular(path)
    except (OSError, UnsafeFile):
        return False
    with os.fdopen(fd, "rb") as handle:
        try:
            seen = os.fstat(fd)
            if seen.st_size < fewest_bytes(limit + 1):
                return False
            of = (seen.st_dev, seen.st_ino, seen.st_size, seen.st_mtime_ns)
            if _Told.of != of or (_Told.arms <= limit and not _Told.whole):
                _Told.of, _Told.arms = of, count_arms(file_pieces(handle), limit)
                _Told.whole = _Told.arms <= limit
        except OSError:
            return False
    return _Told.arms > limit


class LastRead:
    """The last state file `read_state` decoded: its path, bytes and object, and whether its stamp is
    ours (`written_by_us`, asked once). A write reads the file twice (is it another tool's update? then
    the rewrite); the second read of the same bytes decodes and hashes nothing."""

    path: Path | None = None
    raw: bytes = b""
    state: dict[str, Any] = {}  # noqa: RUF012 (replaced, never changed)
    ours: bool | None = None


def read_state(path: Path, raw: bytes | None = None) -> dict[str, Any]:
    """A state file as it is (`raw`: its bytes as read already): its JSON object, or {} when it is missing,
    unreadable, not a regular file, too big, with more arms than `never_read` (refused by the commands that read it
    to log or rewrite it, before they read it) or not an object. The object may be the one an earlier call
    returned for the same bytes: callers do not change it."""
    try:
        if raw is None and arms_past(path, never_read()):
            return {}
        raw = read_regular(path, STATE_MAX_BYTES) if raw is None else raw
        if LastRead.path == path and LastRead.raw == raw:
            return LastRead.state
        if bytes_have_more_arms(raw, never_read()):
            return {}
        loaded = decode_json(raw, path)
    except (OSError, UnsafeFile, JsonError):
        return {}
    if not isinstance(loaded, dict):
        return {}
    LastRead.path, LastRead.raw, LastRead.state, LastRead.ours = path, raw, loaded, None
    return loaded
