"""Writing files whole: an atomic rewrite, and one-line messages for what the disk refused."""

from __future__ import annotations

import contextlib
import errno
import os
import tempfile
from pathlib import Path
from typing import Any

import msgspec


class StoreError(RuntimeError):
    """A problem with files on disk (permissions, a full disk, a held lock); the message says which."""


def describe_os_error(exc: OSError, path: Path) -> str:
    if exc.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
        return f"{path}: not writable ({exc.strerror})"
    if exc.errno == errno.ENOSPC:
        return f"{path}: no space left on device"
    return f"{path}: {exc.strerror or exc}"


def atomic_write(path: Path, data: bytes) -> None:
    """Replace a derived file all at once: readers see the old or the new file, never half."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except OSError as exc:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise StoreError(describe_os_error(exc, path)) from None


def write_json(path: Path, payload: Any, indent: int = 2) -> None:
    """Write `payload` as indented JSON and a newline, atomically."""
    atomic_write(path, msgspec.json.format(msgspec.json.encode(payload), indent=indent) + b"\n")
