"""Session journals on disk: reading one a session names (under the workspace's path policy),
and reading one to record a session from."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Any

from lesson_credit.core.base.errors import WorkspaceError
from lesson_credit.core.base.safe_read import JOURNAL_MAX_BYTES, UnsafeFile, read_regular, read_text, resolve_path

JOURNAL_READ_LIMIT = JOURNAL_MAX_BYTES


def outside_library_allowed(asked: bool | None, outside_journals: bool) -> bool:
    """Whether library folders outside the workspace (gptme.toml dirs) are read: only on request,
    like journals (`asked`; when None: as for journals, or LESSON_CREDIT_ALLOW_OUTSIDE=1)."""
    if asked is not None:
        return asked
    return outside_journals or os.environ.get("LESSON_CREDIT_ALLOW_OUTSIDE") == "1"


def read_journal(root: Path, journal_path: str | None, allow_outside: bool) -> tuple[str | None, str | None]:
    """(text, problem): the journal a session points to, if it can and may be read. A relative
    path is relative to the workspace `root`; one outside it is read only with `allow_outside`."""
    if not journal_path:
        return None, "the session names no journal"
    raw, problem = _journal_bytes(root, journal_path, allow_outside)
    if raw is None:
        return None, problem
    problem = None
    if len(raw) > JOURNAL_READ_LIMIT:
        raw = raw[:JOURNAL_READ_LIMIT]
        problem = f"journal {journal_path} is larger than {JOURNAL_READ_LIMIT >> 20} MB; only its start is shown"
    return raw.decode("utf-8", errors="replace"), problem


def journal_changed(root: Path, record: dict[str, Any], allow_outside: bool = False) -> tuple[bool | None, str]:
    """(changed, why): True when the journal's sha256 differs from the recorded one, False when
    it matches, None when it cannot be told (no hash recorded, journal unreadable)."""
    recorded = record.get("journal_sha256")
    journal = record.get("journal_path")
    if not isinstance(recorded, str) or not isinstance(journal, str) or not journal:
        return None, "the record has no journal hash"
    raw, problem = _journal_bytes(root, journal, allow_outside, longer=False)
    if raw is None:
        return None, problem or ""
    if hashlib.sha256(raw).hexdigest() != recorded.lower():
        return True, f"journal {journal} changed since the session was recorded (sha256 differs)"
    return False, "journal unchanged since recording"


def _journal_bytes(
    root: Path, journal_path: str, allow_outside: bool, longer: bool = True
) -> tuple[bytes | None, str | None]:
    """(up to JOURNAL_READ_LIMIT + 1 bytes, None) of the journal a session's path names, relative to the workspace
    `root` (resolved) when not absolute; (None, why) when it cannot be read, is no regular file, or lies outside
    `root` without `allow_outside`. Without `longer`, a journal over the limit is (None, why), told by its size
    before anything is read."""
    path = Path(journal_path)
    if not path.is_absolute():
        path = root / path
    try:
        resolved = resolve_path(path)
        if not allow_outside and not resolved.is_relative_to(root):
            return None, f"journal {journal_path} is outside the workspace (not read without --allow-outside)"
        return read_regular(resolved, JOURNAL_READ_LIMIT, longer=longer), None
    except FileNotFoundError:
        return None, f"journal {journal_path} not found"
    except UnsafeFile as exc:
        return None, f"journal {exc}"
    except OSError as exc:
        return None, f"journal {journal_path}: {exc.strerror}"


def journal_candidates(journal: Path, root: Path) -> list[Path]:
    """Where a journal named on the command line may be: an absolute path is itself; a relative one
    is looked for in the workspace `root` first (the paths `show` prints are relative to it), then
    in the current folder."""
    if journal.is_absolute():
        return [journal]
    candidates = [root / journal, Path.cwd() / journal]
    return candidates if candidates[0] != candidates[1] else candidates[:1]


def read_for_record(journal: Path, root: Path, allow_outside: bool = False) -> tuple[bytes, str, str]:
    """(bytes, text, path to store) of the journal a session is recorded from (the first of
    `journal_candidates` that exists), the stored path relative to `root` when it is inside it.
    One outside `root` is refused (not read at all) unless `allow_outside`; so is anything but a
    regular file of UTF-8 text up to JOURNAL_READ_LIMIT. Errors name the paths tried."""
    candidates = journal_candidates(journal, root)
    journal_file = next((c for c in candidates if os.path.lexists(c)), None)
    if journal_file is None:
        tried = " and ".join(str(c) for c in candidates)
        raise WorkspaceError(f"journal not found: {journal} (tried {tried})")
    try:
        resolved = resolve_path(journal_file)
    except UnsafeFile as exc:
        raise WorkspaceError(f"journal {exc}") from None
    if not allow_outside and not resolved.is_relative_to(root):
        shown = f"{journal}" if str(resolved) == str(journal) else f"{journal} ({resolved})"  # where it leads
        raise WorkspaceError(f"journal {shown} is outside the workspace {root}; pass --allow-outside to read it")
    try:
        raw, text = read_text(journal_file, JOURNAL_READ_LIMIT)
    except FileNotFoundError:
        raise WorkspaceError(f"journal not found: {journal} ({journal_file}: a broken link?)") from None
    except IsADirectoryError:
        raise WorkspaceError(f"journal is a directory: {journal}") from None
    except UnsafeFile as exc:
        raise WorkspaceError(f"journal {exc}") from None
    except OSError as exc:
        raise WorkspaceError(f"cannot read journal {journal}: {exc.strerror}") from None
    stored_path = resolved.relative_to(root).as_posix() if resolved.is_relative_to(root) else str(resolved)
    return raw, text, stored_path
