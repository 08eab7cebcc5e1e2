"""Session journals on disk: reading one a session names (under the workspace's path policy),
and reading one to record a session from."""

from __future__ import annotations

from pathlib import Path

from core.errors import WorkspaceError

JOURNAL_READ_LIMIT = 64 * 1024 * 1024


def read_journal(root: Path, journal_path: str | None, allow_outside: bool) -> tuple[str | None, str | None]:
    """(text, problem): the journal a session points to, if it can and may be read. A relative
    path is relative to the workspace `root`; one outside it is read only with `allow_outside`."""
    if not journal_path:
        return None, "the session names no journal"
    path = Path(journal_path)
    if not path.is_absolute():
        path = root / path
    resolved = path.resolve()
    if not allow_outside and not resolved.is_relative_to(root):
        return (
            None,
            f"journal {journal_path} is outside the workspace (not read without --allow-outside)",
        )
    try:
        with open(resolved, "rb") as handle:
            raw = handle.read(JOURNAL_READ_LIMIT + 1)
    except FileNotFoundError:
        return None, f"journal {journal_path} not found"
    except OSError as exc:
        return None, f"journal {journal_path}: {exc.strerror}"
    problem = None
    if len(raw) > JOURNAL_READ_LIMIT:
        raw = raw[:JOURNAL_READ_LIMIT]
        problem = f"journal {journal_path} is larger than {JOURNAL_READ_LIMIT >> 20} MB; only its start is shown"
    return raw.decode("utf-8", errors="replace"), problem


def read_for_record(journal: Path, root: Path) -> tuple[bytes, str]:
    """(bytes, path to store) of the journal a session is recorded from; a relative path is
    relative to the current folder, the stored one relative to `root` when it is inside it."""
    journal_file = journal if journal.is_absolute() else Path.cwd() / journal
    try:
        raw = journal_file.read_bytes()
    except FileNotFoundError:
        raise WorkspaceError(f"journal not found: {journal}") from None
    except IsADirectoryError:
        raise WorkspaceError(f"journal is a directory: {journal}") from None
    except OSError as exc:
        raise WorkspaceError(f"cannot read journal {journal}: {exc.strerror}") from None
    resolved = journal_file.resolve()
    stored_path = resolved.relative_to(root).as_posix() if resolved.is_relative_to(root) else str(resolved)
    return raw, stored_path
