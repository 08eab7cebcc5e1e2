"""One session's record as it was written, and whether its journal changed since.

The log index keeps only what the fold needs; `show` and `explain` also want the fields it
drops (the journal's sha256, the lessons' stored rewards and hits). The record is found by a
linear-time search of the log for the session id, so even a big log costs one pass at most.
"""

from __future__ import annotations

import hashlib
import json
import mmap
import re
from pathlib import Path
from typing import Any

JOURNAL_HASH_LIMIT = 64 * 1024 * 1024  # a bigger file is reported as unchecked rather than hashed


def session_record(log_path: Path, session_id: str) -> dict[str, Any] | None:
    """The first session event logged for `session_id` (the one that counts), as a dict."""
    spellings = {json.dumps(session_id, ensure_ascii=ascii)[1:-1].encode("utf-8") for ascii in (True, False)}
    alternatives = b"|".join(re.escape(spelling) for spelling in sorted(spellings))
    pattern = re.compile(rb'"session_id"\s*:\s*"(?:' + alternatives + rb')"')
    try:
        with open(log_path, "rb") as handle:
            if not handle.seek(0, 2):
                return None
            with mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as data:
                for match in pattern.finditer(data):
                    start = data.rfind(b"\n", 0, match.start()) + 1
                    end = data.find(b"\n", match.end())
                    line = data[start : len(data) if end < 0 else end]
                    try:
                        record = json.loads(line)
                    except (ValueError, RecursionError):
                        continue
                    if isinstance(record, dict) and record.get("type") in (None, "session"):
                        if record.get("session_id") == session_id:
                            return record
    except OSError:
        return None
    return None


def journal_changed(root: Path, record: dict[str, Any], allow_outside: bool = False) -> tuple[bool | None, str]:
    """(changed, why): True when the journal's sha256 differs from the recorded one, False when
    it matches, None when it cannot be told (no hash recorded, journal unreadable)."""
    recorded = record.get("journal_sha256")
    journal = record.get("journal_path")
    if not isinstance(recorded, str) or not isinstance(journal, str) or not journal:
        return None, "the record has no journal hash"
    path = Path(journal)
    if not path.is_absolute():
        path = root / path
    resolved = path.resolve()
    if not allow_outside and not resolved.is_relative_to(root.resolve()):
        return None, "the journal is outside the workspace (not read without --allow-outside)"
    try:
        if not resolved.is_file():
            return None, f"journal {journal} not found"
        if resolved.stat().st_size > JOURNAL_HASH_LIMIT:
            return None, f"journal {journal} is larger than {JOURNAL_HASH_LIMIT >> 20} MB: not checked"
        digest = hashlib.sha256(resolved.read_bytes()).hexdigest()
    except OSError as exc:
        return None, f"journal {journal}: {exc.strerror}"
    if digest != recorded.lower():
        return True, f"journal {journal} changed since the session was recorded (sha256 differs)"
    return False, "journal unchanged since recording"
