"""One session's record as it was written (whether its journal changed since: core/library/journals.py).

The log index keeps only what the fold needs; `show` and `explain` also want the fields it
drops (the journal's sha256, the lessons' stored rewards and hits). The record is found by a
linear-time search of the log for the session id, so even a big log costs one pass at most.
"""

from __future__ import annotations

import json
import mmap
import re
from pathlib import Path
from typing import Any


def session_record(log_path: Path, session_id: str, *, unique: bool = False) -> dict[str, Any] | None:
    """The first session event logged for `session_id` (the one that counts), as a dict.

    `unique`: the caller knows the id was logged once (the reader reported no duplicate), so
    the search may start from the end, where a hook's just-recorded session is."""
    spellings = sorted({json.dumps(session_id, ensure_ascii=ascii)[1:-1].encode("utf-8") for ascii in (True, False)})
    alternatives = b"|".join(re.escape(spelling) for spelling in spellings)
    pattern = re.compile(rb'"session_id"\s*:\s*"(?:' + alternatives + rb')"')
    try:
        with open(log_path, "rb") as handle:
            if not handle.seek(0, 2):
                return None
            with mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as data:
                if unique:  # the usual spellings, searched backwards
                    for spelling in spellings:
                        for needle in (b'"session_id":"' + spelling + b'"', b'"session_id": "' + spelling + b'"'):
                            end = len(data)
                            while (found := data.rfind(needle, 0, end)) >= 0:
                                record = _session_at(data, found, found + len(needle), session_id)
                                if record is not None:
                                    return record
                                end = found
                for match in pattern.finditer(data):
                    record = _session_at(data, match.start(), match.end(), session_id)
                    if record is not None:
                        return record
    except OSError:
        return None
    return None


def _session_at(data: mmap.mmap, start: int, end: int, session_id: str) -> dict[str, Any] | None:
    """The session event on the line holding data[start:end], if that line is one for the id."""
    line_start = data.rfind(b"\n", 0, start) + 1
    line_end = data.find(b"\n", end)
    return _record_of(data[line_start : len(data) if line_end < 0 else line_end], session_id)


def _record_of(line: bytes, session_id: str) -> dict[str, Any] | None:
    """The line's session event, if it is one for the id."""
    try:
        record = json.loads(line)
    except (ValueError, RecursionError):
        return None
    if isinstance(record, dict) and record.get("type") in (None, "session") and record.get("session_id") == session_id:
        return record
    return None


RECORD_MAX_BYTES = 64 * 1024 * 1024  # a session record's line is never near this long


def record_at(log_path: Path, offset: int, session_id: str) -> dict[str, Any] | None:
    """The session event whose line starts at byte `offset` of the log, if it is one for the id
    (None otherwise: the caller then searches). One line read, however big the log."""
    try:
        with open(log_path, "rb") as handle:
            handle.seek(offset)
            line = handle.readline(RECORD_MAX_BYTES)
    except OSError:
        return None
    return _record_of(line, session_id)
