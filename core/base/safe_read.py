"""Reading files that anyone can put in a workspace: regular files only, and never past a cap.

A FIFO blocks a plain `open()` forever, `/dev/zero` or `/dev/urandom` (or a symlink to them)
never ends, and a huge file exhausts memory. `read_regular` opens without blocking, checks
the open file (not the path, which could be swapped), and reads at most `limit` bytes.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from lesson_credit.core.base.errors import UserError

LESSON_MAX_BYTES = 1 << 20  # a lesson file is a page of text; 1 MB is far past any real one
JOURNAL_MAX_BYTES = 64 * 1024 * 1024  # the journal cap `explain` already used
SETTINGS_MAX_BYTES = 1 << 20  # gptme.toml, config.toml
STATE_MAX_BYTES = 256 * 1024 * 1024  # bandit-state.json of a very large library


class UnsafeFile(UserError):
    """Not a regular file, or larger than allowed; the message names the file and says which."""


def describe_kind(mode: int) -> str:
    """What a file of this `st_mode` is, for a message: "a FIFO", "a device", ..."""
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISLNK(mode):
        return "a symbolic link"
    return "not a regular file"


def resolve_path(path: Path) -> Path:
    """`path.resolve()`, a symbolic link loop on the way an UnsafeFile naming the path (pathlib
    raises RuntimeError for one, which no caller expects)."""
    try:
        return path.resolve()
    except RuntimeError:
        raise UnsafeFile(f"{path}: a symbolic link loop; not read") from None


def open_regular(path: Path | str, flags: int = os.O_RDONLY, mode: int = 0o644) -> int:
    """A descriptor for `path` if it is a regular file (following symlinks); UnsafeFile if not.
    Opening never blocks (a FIFO would, until a writer came); OSError as `os.open` raises it."""
    fd = os.open(path, flags | os.O_NONBLOCK | os.O_CLOEXEC, mode)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise UnsafeFile(f"{path}: {describe_kind(st.st_mode)}, not a regular file; not read")
        os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return fd


def read_regular(path: Path | str, limit: int, longer: bool = False) -> bytes:
    """The whole of a regular file of at most `limit` bytes. UnsafeFile (naming the file) for
    anything else; OSError (FileNotFoundError, PermissionError, ...) as reading raises it.
    With `longer`, a bigger file is not refused: its first `limit + 1` bytes are returned."""
    return read_opened(open_regular(path), path, limit, longer)


def read_opened(fd: int, path: Path | str, limit: int, longer: bool = False) -> bytes:
    """`read_regular` of a file `open_regular` opened (`fd`, closed here); `path` names it in messages."""
    with os.fdopen(fd, "rb") as handle:
        size = os.fstat(fd).st_size
        if size > limit and not longer:
            raise UnsafeFile(f"{path}: larger than {_size(limit)}; not read")
        parts: list[bytes] = []
        total, want = 0, min(limit, size) + 1  # one read for a file that keeps its size
        while piece := handle.read(want):
            parts.append(piece)
            total += len(piece)
            if total > limit:
                break
            want = min(limit + 1 - total, 1 << 20)
        data = b"".join(parts)
    if len(data) > limit and not longer:  # grew while we read
        raise UnsafeFile(f"{path}: larger than {_size(limit)}; not read")
    return data


def read_capped(path: Path | str, limit: int) -> bytes:
    """A file a user names on the command line, which may be a pipe (`<(...)`): opened without
    blocking, read to its end but never past `limit` bytes (UnsafeFile then: `/dev/zero` is
    refused, not read forever). A regular file goes through `read_regular`."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    with os.fdopen(fd, "rb") as handle:
        if stat.S_ISREG(os.fstat(fd).st_mode):
            return read_regular(path, limit)
        if stat.S_ISDIR(os.fstat(fd).st_mode):
            raise IsADirectoryError(f"{path} is a directory")
        os.set_blocking(fd, True)
        parts: list[bytes] = []
        total = 0
        while total <= limit and (piece := handle.read(min(limit + 1 - total, 1 << 20))):
            parts.append(piece)
            total += len(piece)
    if total > limit:
        raise UnsafeFile(f"{path}: larger than {_size(limit)}; not read")
    return b"".join(parts)


def read_text(path: Path | str, limit: int) -> tuple[bytes, str]:
    """(bytes, text) of a regular file that is UTF-8 text: UnsafeFile for binary content
    (NUL bytes, or bytes that are not UTF-8), besides `read_regular`'s refusals."""
    raw = read_regular(path, limit)
    if b"\x00" in raw:
        raise UnsafeFile(f"{path}: binary (NUL bytes), not text; not read")
    try:
        return raw, raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise UnsafeFile(f"{path}: not UTF-8 text (bad byte at offset {exc.start}); not read") from None


def _size(limit: int) -> str:
    return f"{limit >> 20} MB" if limit >= 1 << 20 else f"{limit} bytes"
