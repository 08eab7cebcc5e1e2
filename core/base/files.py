"""Writing files whole: an atomic rewrite, and one-line messages for what the disk refused."""

from __future__ import annotations

import contextlib
import errno
import os
import tempfile
import time
from pathlib import Path
from typing import Any

import msgspec


class StoreError(RuntimeError):
    """A problem with files on disk (permissions, a full disk, a held lock); the message says which."""


class StoreUnavailable(StoreError):
    """A failure of the event store that may pass (a database down, shutting down or read-only, a
    statement timeout): the CLI exits 75 (EX_TEMPFAIL), retry later. A write that failed so did not
    happen, except when the connection was lost mid-commit (the message says so): a retry then
    finds the event stored."""


def describe_os_error(exc: OSError, path: Path) -> str:
    if exc.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
        return f"{path}: not writable ({exc.strerror})"
    if exc.errno == errno.ENOSPC:
        return f"{path}: no space left on device"
    return f"{path}: {exc.strerror or exc}"


STALE_TEMP_S = 600.0  # a temp file of ours this old was left by an interrupted write


def _umask() -> int:
    """The process umask, read without changing it (os.umask would, for every thread)."""
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    old = os.umask(0o022)
    os.umask(old)
    return old


_UMASK = _umask()


def _remove_stale_temps(path: Path) -> None:
    """Delete temp files an interrupted `atomic_write` of `path` left behind (our own naming,
    `.<name>.<random>.tmp`, older than STALE_TEMP_S so a concurrent writer's is left alone)."""
    now = time.time()
    with contextlib.suppress(OSError):
        for entry in os.scandir(path.parent):
            name = entry.name
            if name.startswith(f".{path.name}.") and name.endswith(".tmp") and entry.is_file(follow_symlinks=False):
                with contextlib.suppress(OSError):
                    if now - entry.stat(follow_symlinks=False).st_mtime > STALE_TEMP_S:
                        os.unlink(entry.path)


def atomic_write(path: Path, data: bytes, *, sync: bool = True) -> None:
    """Replace a derived file all at once: readers see the old or the new file, never half.
    The file gets the mode a plain `open()` would give it (0666 less the umask). `sync=False`
    skips the fsync: for a file a crash may lose (its readers check it and do without)."""
    tmp = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        _remove_stale_temps(path)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
        with os.fdopen(fd, "wb") as handle:
            os.fchmod(handle.fileno(), 0o666 & ~_UMASK)  # mkstemp makes 0600
            handle.write(data)
            handle.flush()
            if sync:
                os.fsync(handle.fileno())
        os.replace(tmp, path)
    except OSError as exc:
        if tmp is not None:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
        raise StoreError(describe_os_error(exc, path)) from None


def write_json(path: Path, payload: Any, indent: int = 2) -> None:
    """Write `payload` as indented JSON and a newline, atomically."""
    atomic_write(path, msgspec.json.format(msgspec.json.encode(payload), indent=indent) + b"\n")
