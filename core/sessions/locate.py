"""Where a session's trajectory is, and whether we may read it (docs/records.md).

A record's `trajectory_path` names it (relative to the workspace, or absolute); without one, the
folders of config.toml's `[records] trajectory_dirs` are searched for a file or folder whose name
holds the session id (gptme's `<date>-<name>/conversation.jsonl`, Claude Code's `<uuid>.jsonl`,
Codex's `rollout-<time>-<uuid>.jsonl`). A trajectory is read only inside the workspace or one of
those folders (or anywhere with --allow-outside / LESSON_CREDIT_ALLOW_OUTSIDE=1), as lesson folders
outside the workspace are. The search is bounded: a few levels deep and a fixed number of entries.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from lesson_credit.core.base.safe_read import UnsafeFile, resolve_path

SEARCH_DEPTH = 4  # <dir>/<project>/<uuid>.jsonl, <dir>/YYYY/MM/DD/rollout-...jsonl
SEARCH_ENTRIES = 50_000  # directory entries looked at per search
MIN_ID = 4  # a shorter id would name too many files


@dataclass(frozen=True)
class Located:
    path: Path | None  # None: nothing to read (see `problem`)
    shown: str  # the path as the record wrote it, or as found
    problem: str | None = None


def folders(root: Path, configured: Sequence[str]) -> list[Path]:
    """The configured trajectory folders, resolved (relative ones are relative to the workspace);
    UnsafeFile for one that is a symbolic link loop."""
    out = []
    for name in configured:
        path = Path(name).expanduser()
        out.append(resolve_path(path if path.is_absolute() else root / path))
    return out


def allowed(path: Path, root: Path, dirs: Sequence[Path], allow_outside: bool) -> bool:
    """Whether the file `path` leads to (symlinks followed) may be read; UnsafeFile for a loop."""
    resolved = resolve_path(path)
    return allow_outside or resolved.is_relative_to(root) or any(resolved.is_relative_to(d) for d in dirs)


OUTSIDE = (
    "is outside the workspace and [records] trajectory_dirs; not read "
    "(add its folder to trajectory_dirs in config.toml, or pass --allow-outside)"
)


def locate(
    root: Path, trajectory_path: str | None, session_id: str, configured: Sequence[str], allow_outside: bool
) -> Located:
    """The trajectory of a session: the record's path, else a search of the configured folders.
    Either way the file read (a gptme folder's conversation.jsonl, a symlink's target) must be
    inside the workspace or those folders, unless `allow_outside`."""
    try:
        dirs = folders(root, configured)
    except UnsafeFile as exc:
        return Located(None, trajectory_path or "", f"[records] trajectory_dirs: {exc}")
    if trajectory_path:
        path = Path(trajectory_path).expanduser()
        return _checked(path if path.is_absolute() else root / path, trajectory_path, root, dirs, allow_outside)
    if not dirs:
        why = "no trajectory: the record names none and config.toml has no [records] trajectory_dirs"
        return Located(None, "", why)
    if len(session_id) < MIN_ID:
        return Located(None, "", f"no trajectory: the id {session_id!r} is too short to search for")
    found = search(dirs, session_id)
    if len(found) == 1:
        return _checked(found[0], str(found[0]), root, dirs, allow_outside)
    if not found:
        return Located(None, "", f"no trajectory named after {session_id!r} in the trajectory_dirs")
    names = ", ".join(str(p) for p in found[:3])
    return Located(None, "", f"{len(found)} trajectories are named after {session_id!r} ({names}); none is chosen")


def _checked(path: Path, shown: str, root: Path, dirs: Sequence[Path], allow_outside: bool) -> Located:
    """`path` (its conversation.jsonl when it is a gptme log folder) if it may be read."""
    if path.is_dir():
        path = path / "conversation.jsonl"
    try:
        if not allowed(path, root, dirs, allow_outside):
            return Located(None, shown, f"trajectory {shown} {OUTSIDE}")
    except UnsafeFile as exc:
        return Located(None, shown, f"trajectory {exc}")
    return Located(path, shown)


def search(dirs: Sequence[Path], session_id: str) -> list[Path]:
    """Trajectory files whose name (or whose gptme log folder's name) holds the session id."""
    found: list[Path] = []
    budget = [SEARCH_ENTRIES]
    for folder in dirs:
        _walk(folder, session_id, SEARCH_DEPTH, found, budget)
    return sorted(set(found))


def _walk(folder: Path, session_id: str, depth: int, found: list[Path], budget: list[int]) -> None:
    try:
        entries = os.scandir(folder)
    except OSError:
        return
    with entries:
        for entry in entries:
            budget[0] -= 1
            if budget[0] < 0:
                return
            try:
                is_dir = entry.is_dir(follow_symlinks=False)
                is_file = entry.is_file()
            except OSError:
                continue
            named = session_id in entry.name
            if is_file and named and entry.name.endswith(".jsonl"):
                found.append(Path(entry.path))
            elif is_dir and named and os.path.isfile(os.path.join(entry.path, "conversation.jsonl")):
                found.append(Path(entry.path) / "conversation.jsonl")
            elif is_dir and depth > 1:
                _walk(Path(entry.path), session_id, depth - 1, found, budget)
