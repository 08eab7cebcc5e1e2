"""Where a workspace's gptme-sessions records file is: known without reading it (or importing its reader,
core/sessions/record_file.py), so that a command in a workspace without one never loads the reader."""

from __future__ import annotations

import fnmatch
import os
from collections.abc import Mapping
from pathlib import Path

RECORDS_FILE = "session-records.jsonl"
WORKSPACE_RECORDS = Path("state") / "sessions" / RECORDS_FILE


def records_path(root: Path, configured: str | None, environ: Mapping[str, str] | None = None) -> Path:
    """The records file: config.toml's `[records] path` (relative to the workspace), else
    $GPTME_SESSIONS_DIR/session-records.jsonl (relative to the working folder), else the workspace's
    state/sessions/ one."""
    env = os.environ if environ is None else environ
    if configured:
        path = Path(configured).expanduser()
        return path if path.is_absolute() else root / path
    sessions_dir = env.get("GPTME_SESSIONS_DIR")
    if sessions_dir:  # (relative: to the working folder, as for gptme-sessions; named so, never by its text alone)
        return Path(sessions_dir).expanduser().absolute() / RECORDS_FILE
    return root / WORKSPACE_RECORDS


ROTATED_PATTERN = "session-records*.jsonl*"  # gptme-sessions' (blame.py)
ROTATED_MAX_FILES = 64  # five years of monthly archives
SCAN_MAX_ENTRIES = 10_000  # entries of the records' folder looked at


def rotated_names(primary: Path) -> tuple[list[str], str | None]:
    """The names of the rotated files beside `primary`, sorted, and a problem (a folder too big to look
    through); none beside a file of another name than gptme-sessions'."""
    if primary.name != RECORDS_FILE:
        return [], None
    names: list[str] = []
    problem = None
    try:
        with os.scandir(primary.parent) as entries:
            for seen, entry in enumerate(entries):
                if seen >= SCAN_MAX_ENTRIES:
                    problem = (
                        f"{primary.parent}: more than {SCAN_MAX_ENTRIES:,} entries; only the rotated records files "
                        f"among the first {SCAN_MAX_ENTRIES:,} listed are read"
                    )
                    break
                name = entry.name
                if name == primary.name or not fnmatch.fnmatchcase(name, ROTATED_PATTERN):
                    continue
                if name.endswith(".lock") or ".jsonl.tmp." in name:  # gptme-sessions' lock, a rewrite's copy
                    continue
                try:
                    if entry.is_dir():  # (gptme-sessions reads files only)
                        continue
                except OSError:
                    pass
                names.append(name)
    except OSError:  # no folder (yet), or not one to list: nothing beside the file
        return [], None
    return sorted(names), problem
