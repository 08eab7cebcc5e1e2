"""Writing files whole: an atomic rewrite, where a workspace may write, and one-line messages for
what the disk (or that policy) refused.

Every file we write is a regular file inside the workspace. Reading follows symlinks freely
(workspaces link shared lesson libraries); writing follows a symlink only while it leads to
somewhere inside the workspace, unless the user opts in (`WRITE_OUTSIDE_ENV`), and never
replaces or appends to anything but a regular file: not a FIFO, a device, or a symlink itself.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, BinaryIO

import msgspec
from msgspec import Struct
from msgspec.structs import replace

from lesson_credit.core.base.errors import TemporaryFailure, UserError
from lesson_credit.core.base.safe_read import UnsafeFile, describe_kind, open_regular, read_opened

WRITE_OUTSIDE_ENV = "LESSON_CREDIT_WRITE_OUTSIDE"  # =1: writes may follow symlinks out of the workspace


class StoreError(UserError):
    """A problem with files on disk (permissions, a full disk, a held lock); the message says which."""


class StoreUnavailable(TemporaryFailure, StoreError):
    """A failure of the event store that may pass (a database down, shutting down or read-only, a
    statement timeout, another writer holding the log's lock too long): the CLI exits 75
    (EX_TEMPFAIL), retry later. A write that failed so did not happen, except when the connection
    was lost mid-commit (the message says so): a retry then finds the event stored. Also a StoreError:
    a caller that copes with any failure of the store (select --offline-ok) catches both."""


class LockHeld(StoreUnavailable):
    """Another writer held the log's lock longer than the wait: nothing was written by the block. `lock`: the lock
    file (None: a database's lock), `waited`: the seconds waited, for a caller that words it its own way."""

    def __init__(self, message: str, lock: Path | None = None, waited: float | None = None) -> None:
        super().__init__(message)
        self.lock, self.waited = lock, waited


class StoredUnread(StoreUnavailable):
    """The event was stored (committed), but reading the log back then failed (a database gone
    right after the commit): the command cannot show what it did. A write command that raises it
    has succeeded all the same: the command line says so in a warning, exit 0 (cli/main.py), and the
    dashboard saves the write once (tui/writes.py); never retried, which would store it twice."""

    @classmethod
    def after(cls, failure: BaseException) -> StoredUnread:
        if isinstance(failure, MemoryError):
            return cls("the event was stored, but there is not enough memory to read it back now")
        return cls(f"the event was stored, but cannot be read back now: {failure}")


@contextlib.contextmanager
def reading_back() -> Iterator[None]:
    """Around what follows an event stored (reading the log back, showing it): no memory for it is
    StoredUnread, as a store that cannot be read back, never a failure that says nothing of the event."""
    try:
        yield
    except MemoryError as exc:
        raise StoredUnread.after(exc) from None


def describe_os_error(exc: OSError, path: Path, *, reading: bool = False) -> str:
    """One line for a failed write (or a failed read, with `reading`) of `path`."""
    if exc.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
        return f"{path}: not {'readable' if reading else 'writable'} ({exc.strerror})"
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


def write_outside_allowed(asked: bool | None = None) -> bool:
    """Whether writes may leave the workspace through a symlink: `asked` when given, else
    the environment's WRITE_OUTSIDE_ENV=1."""
    return asked if asked is not None else os.environ.get(WRITE_OUTSIDE_ENV) == "1"


class WriteGuard(Struct, frozen=True):
    """Where one workspace's files may be written: anywhere under `root` (a resolved path),
    through symlinks that stay under it; elsewhere only with `allow_outside`. The `kept` files (the
    event log, config.toml: `keeping`) are never replaced from another file's name, through a link."""

    root: Path
    allow_outside: bool = False
    kept: tuple[tuple[Path, Path], ...] = ()  # (a kept file's own path, where it really is)

    def keeping(self, *paths: Path) -> WriteGuard:
        """This guard, keeping `paths` (`replaceable`)."""
        kept = tuple((Path(os.path.abspath(path)), Path(os.path.realpath(path))) for path in paths)
        return replace(self, kept=self.kept + kept)

    def replaceable(self, path: Path, real: Path | None = None) -> None:
        """StoreError, naming `path`, when a rewrite of or an append to it would land on a kept file
        (`real`: where it leads, default found): a loo-results.json linked to the event log would
        replace every session."""
        real = Path(os.path.realpath(path)) if real is None else real
        for own, kept in self.kept:
            if real == kept and Path(os.path.abspath(path)) != own:
                raise StoreError(
                    f"{path}: a link to {own.name}; not written through (that would write over {own.name})"
                )

    def separate(self, path: Path, opened: os.stat_result) -> None:
        """StoreError, naming `path`, when the file opened for it (`opened`, its fstat) is a kept file
        under another name: a hard link, which `replaceable`'s comparison of paths cannot see."""
        for own, kept in self.kept:
            if Path(os.path.abspath(path)) == own:
                continue
            try:
                st = os.stat(kept)
            except OSError:
                continue
            if (st.st_dev, st.st_ino) == (opened.st_dev, opened.st_ino):
                raise StoreError(f"{path}: the same file as {own.name} (a hard link); not written")

    @classmethod
    def of(cls, root: Path | str, allow_outside: bool | None = None) -> WriteGuard:
        return cls(Path(os.path.realpath(root)), write_outside_allowed(allow_outside))

    def folder(self, path: Path) -> Path:
        """The real path of a folder files are written in; StoreError, naming `path`, when it is
        outside the root (without the opt-in)."""
        real = Path(os.path.realpath(path))
        if not self.allow_outside and not real.is_relative_to(self.root):
            raise StoreError(
                f"{path}: leads outside the workspace (to {real}); not written "
                f"(set {WRITE_OUTSIDE_ENV}=1 to write there)"
            )
        return real

    def target(self, path: Path) -> Path:
        """The real path a write of `path` lands on (every symlink on the way followed); StoreError,
        naming `path`, when that is outside the root (without the opt-in) or not a regular file."""
        real = self.folder(path)
        refuse_unreplaceable(real, "written", shown=path)
        return real


def refuse_unreplaceable(path: Path, verb: str = "replaced", shown: Path | None = None) -> None:
    """StoreError, naming `shown` (default `path`), when something is at `path` that a write must
    not replace or append to: a symlink (a rename would put a file in its place) or anything but
    a regular file."""
    name = path if shown is None else shown
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return
    except OSError as exc:
        raise StoreError(describe_os_error(exc, name)) from None
    if stat.S_ISLNK(st.st_mode):  # after realpath, only a loop is left as a link
        raise StoreError(f"{name}: a symbolic link; not {verb} (name the file it points to)")
    if not stat.S_ISREG(st.st_mode):
        raise StoreError(f"{name}: {describe_kind(st.st_mode)}, not a regular file; not {verb}")


def atomic_write(path: Path, data: bytes, guard: WriteGuard | None = None, *, sync: bool = True) -> None:
    """Replace a file all at once: readers see the old or the new file, never half. The file
    gets the mode a plain `open()` would give it (0666 less the umask). With `guard`, `path`
    may be a symlink within the guard's root (the file it points to is replaced); without, a
    symlink is refused like a FIFO or a device: only a regular file (or nothing) is replaced.
    `sync=False` skips the fsync: for a file a crash may lose (its readers check it and do without)."""
    atomic_write_with(path, lambda handle: handle.write(data), guard, sync=sync)


def atomic_write_with(
    path: Path,
    write: Callable[[BinaryIO], object],
    guard: WriteGuard | None = None,
    *,
    sync: bool = True,
    rename: Callable[[str, Path], object] | None = None,
) -> None:
    """`atomic_write` of what `write` writes into the new file's handle (it may seek back): for a
    file too big to hold in memory twice. `rename` puts the new file (its temporary name) in place
    at the real path, once written (default `os.replace`; an exception from it before it renames
    leaves the old file as it is)."""
    shown = path
    if guard is not None:
        path = guard.target(path)
        guard.replaceable(shown, path)
    refuse_unreplaceable(path, shown=shown)
    tmp = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        _remove_stale_temps(path)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
        with os.fdopen(fd, "wb") as handle:
            os.fchmod(handle.fileno(), 0o666 & ~_UMASK)  # mkstemp makes 0600
            write(handle)
            handle.flush()
            if sync:
                os.fsync(handle.fileno())
        if rename is None:
            os.replace(tmp, path)
        else:
            rename(tmp, path)
    except OSError as exc:
        if tmp is not None:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
        raise StoreError(describe_os_error(exc, path)) from None
    except BaseException:
        if tmp is not None:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
        raise


_SET_ASIDE_LOCK = threading.Lock()
_set_aside: dict[str, tuple[int, str]] = {}  # path -> (order, notice): one notice per path for the process
_said: set[str] = set()  # the paths whose notice was taken


def set_aside(path: Path, reason: str) -> None:
    """A cache or derived file that cannot be read, written or replaced (a read-only or full disk; a
    directory, FIFO or symlink in its place): the command works without it. `reason` says why (it
    names the path); one notice per path for the whole process, taken by `set_aside_notices`."""
    with _SET_ASIDE_LOCK:
        notice = f"{reason}; set aside (a cache: the command works without it)"
        _set_aside.setdefault(str(path), (len(_set_aside), notice))


def set_aside_mark() -> int:
    """How many files were set aside so far (for `set_aside_notices(since=...)`)."""
    with _SET_ASIDE_LOCK:
        return len(_set_aside)


def set_aside_notices(under: Path | None = None, since: int = 0) -> list[str]:
    """The notices not taken yet of the files set aside (under the folder `under`; after the
    `set_aside_mark` `since`); taken now."""
    with _SET_ASIDE_LOCK:
        keys = [
            key
            for key, (order, _) in _set_aside.items()
            if order >= since and key not in _said and (under is None or Path(key).is_relative_to(under))
        ]
        _said.update(keys)
        return [_set_aside[key][1] for key in keys]


def open_cache(path: Path) -> int | None:
    """A descriptor for a cache file (`open_regular`), never through a symlink (we make none); None
    when there is none, or when it is set aside: a directory, FIFO or symlink in its place, or
    unreadable (`set_aside` says so, once)."""
    try:
        return open_regular(path, os.O_RDONLY | os.O_NOFOLLOW)
    except FileNotFoundError:
        return None
    except UnsafeFile as exc:
        set_aside(path, str(exc))
    except OSError as exc:
        why = "a symbolic link; not read" if exc.errno == errno.ELOOP else f"not readable ({exc.strerror or exc})"
        set_aside(path, f"{path}: {why}")
    return None


def read_cache(path: Path, limit: int, longer: bool = False) -> bytes | None:
    """A cache file's bytes (`read_regular`'s limits and refusals) opened as `open_cache` opens it;
    None when there is none or it is set aside."""
    fd = open_cache(path)
    return None if fd is None else read_opened(fd, path, limit, longer)


def write_cache(path: Path, data: bytes, *, sync: bool = False) -> bool:
    """`atomic_write` of a cache (derived, verified when read, rebuilt when missing); when it cannot
    be written the file is set aside (`set_aside`) and False returned, never an error."""
    try:
        atomic_write(path, data, sync=sync)
    except StoreError as exc:  # (atomic_write turns every OSError into one)
        set_aside(path, str(exc))
        return False
    return True


def write_json(
    path: Path,
    payload: Any,
    indent: int = 2,
    guard: WriteGuard | None = None,
    rename: Callable[[str, Path], object] | None = None,
) -> None:
    """Write `payload` as indented JSON and a newline, atomically (see `atomic_write_with`). The newline is written
    apart: joined, a state file of 84 MB (gptme's contextual arms) was held a third time."""
    data = msgspec.json.format(msgspec.json.encode(payload), indent=indent)
    atomic_write_with(path, lambda handle: (handle.write(data), handle.write(b"\n")), guard, rename=rename)


def open_append(path: Path, guard: WriteGuard, flags: int = os.O_WRONLY) -> int:
    """A descriptor appending to `path` (created if absent) where `guard` lets it be written: the
    real file, opened without following a symlink swapped in meanwhile, checked regular once open;
    never a kept file reached from another name (`WriteGuard.replaceable`: a dropout log linked to the
    event log)."""
    real = guard.target(path)
    guard.replaceable(path, real)
    try:
        fd = open_regular(real, flags | os.O_CREAT | os.O_APPEND | os.O_NOFOLLOW, 0o666)
    except UnsafeFile as exc:
        raise StoreError(str(exc)) from None
    except OSError as exc:
        raise StoreError(describe_os_error(exc, path)) from None
    try:
        guard.separate(path, os.fstat(fd))
    except BaseException:
        os.close(fd)
        raise
    return fd


LOCK_POLL_S = 0.05  # how often a waiting writer tries the lock again (filelock's default)


class LockTimeout(TemporaryFailure):
    """Another holder kept the lock past the timeout (a retry may succeed)."""


@contextlib.contextmanager
def exclusive_lock(path: Path, timeout: float) -> Iterator[None]:
    """Hold an exclusive lock on `path` (created if absent, kept after), tried every LOCK_POLL_S until
    `timeout` seconds have passed (then LockTimeout; 0: one try); OSError when it cannot be opened.
    On POSIX a flock, the one filelock's FileLock takes (the two exclude each other); where there is
    no flock (no fcntl, as on Windows, or a file system that answers ENOSYS) filelock's own lock,
    whose import (~50 ms) a write pays only there."""
    fd = _flock(path, timeout)
    if fd is None:
        with _filelock(path, timeout):
            yield
        return
    try:
        yield
    finally:
        import fcntl

        with contextlib.suppress(OSError):
            fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)


def _flock(path: Path, timeout: float) -> int | None:
    """A descriptor of `path` holding its flock, or None when there is no flock here."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - Windows
        return None
    fd, created = _open_lock_file(path)
    deadline = time.monotonic() + timeout
    try:
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                return fd
            except OSError as exc:
                if exc.errno == errno.ENOSYS:  # filelock's lock there is the file's existence: ours goes
                    if created:
                        with contextlib.suppress(OSError):
                            os.unlink(path)
                    os.close(fd)
                    return None
                if exc.errno not in (errno.EACCES, errno.EAGAIN, errno.EWOULDBLOCK):
                    raise
            if time.monotonic() >= deadline:
                raise LockTimeout(str(path))
            time.sleep(min(LOCK_POLL_S, max(0.0, deadline - time.monotonic())))
    except BaseException:
        with contextlib.suppress(OSError):
            os.close(fd)
        raise


def _open_lock_file(path: Path) -> tuple[int, bool]:
    """(a descriptor of the lock file, whether this call created it)."""
    flags = os.O_RDWR | getattr(os, "O_NOFOLLOW", 0)
    for _ in range(3):  # a file removed between the two opens is tried again
        try:
            return os.open(path, flags | os.O_CREAT | os.O_EXCL, 0o666), True
        except FileExistsError:
            pass
        with contextlib.suppress(FileNotFoundError):
            return os.open(path, flags), False
    return os.open(path, flags | os.O_CREAT, 0o666), False


@contextlib.contextmanager
def _filelock(path: Path, timeout: float) -> Iterator[None]:
    import filelock

    lock = filelock.FileLock(str(path), timeout=timeout)
    try:
        lock.acquire()
    except filelock.Timeout:
        raise LockTimeout(str(path)) from None
    try:
        yield
    finally:
        with contextlib.suppress(OSError):
            lock.release()
