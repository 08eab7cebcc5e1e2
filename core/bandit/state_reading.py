"""Reading a `bandit-state.json` (`read_state`), never decoding one with more arms than any is read with.

A state file with more arms beyond the log's than a log names lessons is refused (StateFile.refuse_too_many), so one
with more than twice that (`never_read`: the log's are at most that many) is refused whatever the log: it is never
decoded, and its arms are counted from its bytes only as far as the number asked about (`arms_past`, core/bandit/
arm_count.py). Decoding 1,500,000 arms cost every command 10 s of CPU and 1.4 GB.

Of a state file's object only the keys lesson-credit reads (READ_KEYS) are decoded: any other (gptme's
`contextual_arms`, keys we do not know) is kept as its bytes (msgspec.Raw), never made into objects, and written back
as it is (`decode_state`). A busy agent's contextual arms (1,000 lessons under 300 contexts, 84 MB) cost a read of
their bytes and a skip over them, 0.05 s, where decoding them took 0.23 s and 280 MB; what a
planted file costs is what it holds in the keys read, bounded by the log's arms (StateFile.refuse_arms_file), and its
top-level keys, at most MAX_TOP_KEYS (each kept costs 150 bytes: 2,000,000 in 25 MB took 1.2 s and 310 MB). The stamp
that tells a file as lesson-credit wrote it (`state_stamp`, `written_by_us`) hashes the keys kept as their text.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Any

import msgspec

from lesson_credit.core.bandit.arm_count import (
    bytes_have_more_arms,
    bytes_have_more_members,
    count_arms,
    fewest_bytes,
    file_pieces,
)
from lesson_credit.core.base.canonical import canonical_json
from lesson_credit.core.base.safe_json import JsonError, decode_json, decode_members
from lesson_credit.core.base.safe_read import STATE_MAX_BYTES, UnsafeFile, open_regular, read_regular
from lesson_credit.core.log import arm_names

# the top-level keys of a state file lesson-credit reads (interop: gptme's four, STAMP_KEY, SOURCE_KEY, HOLDS_KEY and
# RECORDS_KEY), decoded; every other is kept as its bytes
READ_KEYS = frozenset(
    ("arms", "total_sessions", "created", "last_updated")
    + ("lesson_credit_written", "lesson_credit_store", "lesson_credit_holds", "lesson_credit_records")
)
STAMP_KEY = "lesson_credit_written"  # the hash of the rest of a state file as lesson-credit wrote it (`state_stamp`)
MAX_TOP_KEYS = 10_000  # top-level keys of a state file read (gptme's bandit writes 5, we add up to 4)
SPLIT_FREE_BYTES = 4 << 20  # a file this small is split into its keys unscanned (its keys at most 700,000: 100 MB)


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
            if seen.st_size < fewest_bytes(limit + 1) or seen.st_size > STATE_MAX_BYTES:
                return False  # (too big: the read refuses it unread)
            of = (seen.st_dev, seen.st_ino, seen.st_size, seen.st_mtime_ns)
            if _Told.of != of or (_Told.arms <= limit and not _Told.whole):
                _Told.of, _Told.arms = of, count_arms(file_pieces(handle), limit)
                _Told.whole = _Told.arms <= limit
        except OSError:
            return False
    return _Told.arms > limit


class _Layout:
    """What `layout` found of the file it last read (by device, inode, size and mtime)."""

    of: tuple[int, int, int, int] | None = None
    found: tuple[int, int] | None = None


def layout(path: Path | str) -> tuple[int, int] | None:
    """Of the state file at `path`: its top-level keys (counted as far as MAX_TOP_KEYS and one more, a key given twice
    counted twice) and the bytes of the values of those lesson-credit reads (READ_KEYS, each key's last: what a read
    decodes). None when it cannot be read or is no JSON object (a decode says what it is)."""
    try:
        seen = os.stat(path)
        of = (seen.st_dev, seen.st_ino, seen.st_size, seen.st_mtime_ns)
        if _Layout.of == of:
            return _Layout.found
        raw = read_regular(path, STATE_MAX_BYTES)
    except (OSError, UnsafeFile):
        return None
    found: tuple[int, int] | None = (MAX_TOP_KEYS + 1, 0)
    if not more_members(raw):
        try:
            members = decode_members(raw, path)
        except JsonError:
            members = None
        read = 0 if members is None else sum(len(value) for key, value in members.items() if key in READ_KEYS)
        found = None if members is None else (len(members), read)
    _Layout.of, _Layout.found = of, found
    return found


class _Scanned:
    """The bytes `more_members` last scanned, and what it found (`layout`, then the read: scanned once)."""

    raw: bytes = b""
    more = False


def more_members(raw: bytes) -> bool:
    """Whether the state file `raw` has more than MAX_TOP_KEYS top-level keys (not scanned: one of SPLIT_FREE_BYTES or
    fewer, whose keys cost little)."""
    if len(raw) <= SPLIT_FREE_BYTES or raw[:4096].lstrip()[:1] not in (b"{", b""):  # (no object: no keys to keep)
        return False
    if _Scanned.raw is not raw and _Scanned.raw != raw:
        _Scanned.more = bytes_have_more_members(raw, MAX_TOP_KEYS)
    _Scanned.raw = raw  # (the bytes read last: those read before, the same, are not held twice)
    return _Scanned.more


def decode_state(raw: bytes, where: Path | str) -> dict[str, Any] | None:
    """A state file's object as lesson-credit reads it: the keys it reads (READ_KEYS) decoded (`decode_json`, its
    checks), every other kept as its bytes (msgspec.Raw), in the file's order; None when the document is no object.
    JsonError when it is not JSON, said as `decode_json` says it of the whole file (where)."""
    members = decode_members(raw, where)
    if members is None:
        return None
    try:
        return {key: decode_json(bytes(value), where) if key in READ_KEYS else value for key, value in members.items()}
    except JsonError:  # (said of the value alone, its line counted from its start: said again of the file)
        decode_json(raw, where)
        raise


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
    unreadable, not a regular file, too big, with more arms than `never_read` or more top-level keys than
    MAX_TOP_KEYS (refused by the commands that read it to log or rewrite it, before they read it) or not an object.
    Keys it does not read are kept as their bytes (`decode_state`). The object may be the one an earlier call
    returned for the same bytes: callers do not change it."""
    try:
        if raw is None and arms_past(path, never_read()):
            return {}
        raw = read_regular(path, STATE_MAX_BYTES) if raw is None else raw
        if LastRead.path == path and LastRead.raw == raw:
            return LastRead.state
        if bytes_have_more_arms(raw, never_read()) or more_members(raw):
            return {}
        loaded = decode_state(raw, path)
    except (OSError, UnsafeFile, JsonError):
        return {}
    if not isinstance(loaded, dict):
        return {}
    LastRead.path, LastRead.raw, LastRead.state, LastRead.ours = path, raw, loaded, None
    return loaded


def state_stamp(state: dict[str, Any]) -> str:
    """The hash of a state file's content besides its stamp: the keys lesson-credit reads in canonical JSON (key order
    and spacing do not count), then each other key in order with its value as the file has it, spacing aside (kept as
    its bytes, `read_state`, never decoded: gptme's `contextual_arms`). A file with no other key is hashed as before."""
    body = {key: value for key, value in state.items() if key != STAMP_KEY and key in READ_KEYS}
    digest = hashlib.sha256(canonical_json(body))
    for key in sorted(key for key in state if key not in READ_KEYS):
        value = state[key]
        text = msgspec.json.format(value, indent=-1) if isinstance(value, msgspec.Raw) else msgspec.json.encode(value)
        digest.update(b"\n" + canonical_json(key) + b":" + text)
    return digest.hexdigest()


def written_by_us(state: dict[str, Any]) -> bool:
    """Whether a state file is exactly as lesson-credit last wrote it (its stamp still matches)."""
    if state is LastRead.state and LastRead.ours is not None:
        return LastRead.ours
    ours = state.get(STAMP_KEY) == state_stamp(state)
    if state is LastRead.state:
        LastRead.ours = ours
    return ours
