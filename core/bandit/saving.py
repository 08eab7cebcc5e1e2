"""gptme's bandit saving a state file while lesson-credit replaces or reads it.

gptme-sessions' bandit saves `bandit-state.json` with `Path.write_text`, without a lock of ours: the file is
emptied when opened, then written. A file replaced in between takes gptme's text with it (written to a file
no longer there: its session in neither the file nor the log); read in between, it is not what gptme saves.

- A file found empty or beginning a JSON object it does not end (`half_written`) is read again a moment later
  (SAVE_SETTLE_S): a save done by then reads as a change, which the caller starts over from.
- Still so, and changed within SAVE_WINDOW_S (or at a time ahead of this clock), it is a save in progress
  (`StateSaving`): never replaced, never imported. Older, it is a save that crashed half-way: replaced.
  An export or an import first waits for such a save to land (`wait_out`, no lock held), at most that long.
- The rename (`guarded_rename`) holds the file it replaces open from its last look at it to after the
  rename: a save that opened it in between writes its text there, which is put back at the file's name
  (`StateChanged`: the caller starts over from it, logging that save). A file made at a name that had none
  is never replaced: the new file is linked there only while the name is free.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Callable
from pathlib import Path

from lesson_credit.core.base.errors import TemporaryFailure
from lesson_credit.core.base.files import StoreError, atomic_write_with
from lesson_credit.core.base.safe_read import STATE_MAX_BYTES, UnsafeFile, open_regular

SAVE_SETTLE_S = 0.02  # how long a save caught half-way (the file emptied, not yet written) is given to land
# How recently a file found emptied or half-written must have changed to be a save in progress rather than one
# that crashed. gptme's gap between emptying and writing is one `open` to one `write` inside `write_text`, its
# text made before: microseconds, unless the process is stopped there. Descheduled on a busy machine (tens of
# ms), paged back in under memory pressure (a second or so), a disk that keeps times to 1 s or 2 s (ext3, FAT:
# a fresh change looks up to 2 s old): 5 s covers them with room, and a save that did crash half-way holds our
# rewrite back only that long. A time ahead of this clock (skew on a shared disk) is recent.
SAVE_WINDOW_S = 5.0
ASIDE_NAME = "bandit-state-half-saved"  # in the state folder's .cache: the name a file replaced as crashed keeps
clock = time.time  # the time a file's age is measured at (a file's mtime is the same wall clock)

Seen = tuple[bytes | None, int]  # a look at a file: its bytes (None: missing, unreadable, too big), its mtime (ns)
Identity = tuple[int, int, int, int]  # a file as a stat sees it: device, inode, size, mtime (ns)


class StateKept(StoreError):
    """bandit-state.json was changed by another tool since we wrote it, and was left as it is."""

    logged: tuple[str, ...] = ()  # what was logged of it all the same (said in the message too)


class StateToReplace(StateKept):
    """bandit-state.json was left as it is, and only replacing it brings it back: a save that cannot be logged
    without counting a session twice or losing one, which every later save of gptme's there holds too."""


class StateChanged(StateKept):
    """bandit-state.json changed between our read of it and our replacement of it (gptme's bandit
    saves it without a lock of ours): nothing was written, and the rewrite may start over."""


class StateSaving(StateKept, TemporaryFailure):
    """Another tool is saving the state file (found emptied or half-written, recently): left to it. After a
    write that succeeded, a warning (the next command brings the file up to date); an export or an import
    refused, exit 75: retry in a moment."""

    exit_code = TemporaryFailure.exit_code


def half_written(data: bytes | None) -> bool:
    """Whether a state file's bytes are empty or begin a JSON object they do not end (None, no file: not)."""
    if data is None:
        return False
    text = data.strip()
    return not text or (text.startswith(b"{") and not text.endswith(b"}"))


def saving_now(seen: Seen) -> bool:
    """Whether a file seen so is a save in progress: half-written and changed within SAVE_WINDOW_S, or at a
    time ahead of this clock."""
    return half_written(seen[0]) and clock() - seen[1] / 1e9 < SAVE_WINDOW_S


def saving_said(path: Path, seen: Seen, then: str) -> str:
    """The line for a file being saved (`saving_now`), and `then`: what is done about it."""
    what = "emptied" if not (seen[0] or b"").strip() else "half-written"
    age = clock() - seen[1] / 1e9
    # a time ahead of the clock stays "recent" until the clock reaches it: said, with how to end it sooner
    when = (
        f"{age:.1f} s ago"
        if age >= 0
        else f"at a time {-age:,.0f} s ahead of this clock (left so until then: delete it to end that)"
    )
    return f"{path}: {what} {when}, not finished since: another tool (gptme's bandit) may be saving it; {then}"


def _wait_for_save() -> None:
    time.sleep(SAVE_SETTLE_S)


def _read_fd(fd: int) -> Seen:
    """What the file open at `fd` holds now, from its start, and its mtime after the read."""
    parts: list[bytes] = []
    total = 0
    while piece := os.pread(fd, 1 << 20, total):
        parts.append(piece)
        total += len(piece)
        if total > STATE_MAX_BYTES:
            return None, os.fstat(fd).st_mtime_ns
    return b"".join(parts), os.fstat(fd).st_mtime_ns


def look(path: Path) -> Seen:
    """A state file's bytes and mtime, read through one descriptor ((None, 0): missing or unreadable)."""
    try:
        fd = open_regular(path)
    except (OSError, UnsafeFile):
        return None, 0
    try:
        return _read_fd(fd)
    except OSError:
        return None, 0
    finally:
        os.close(fd)


def settled(path: Path) -> Seen:
    """`look`, again a moment later when the file is half-written (a save caught half-way lands meanwhile)."""
    seen = look(path)
    if half_written(seen[0]):
        _wait_for_save()
        seen = look(path)
    return seen


def file_bytes(path: Path) -> bytes | None:
    """The state file's bytes as they are (None: missing or unreadable), to see whether it changed."""
    return look(path)[0]


def unsaved_bytes(path: Path, then: str) -> bytes | None:
    """A state file's bytes (None: missing or unreadable) before we replace or import it (`settled`);
    StateSaving (`saving_said` and `then`) while another tool is saving the file."""
    seen = settled(path)
    if saving_now(seen):
        raise StateSaving(saving_said(path, seen, then))
    return seen[0]


def wait_out(path: Path) -> float:
    """Before an export onto or an import of the file at `path`, with no lock held: while it is a save in progress
    (`saving_now`), wait until its text lands or its time is SAVE_WINDOW_S old (an empty file `mktemp` has just
    made: then written over as a crashed save's). Bounded: a time ahead of the clock stays recent, and the
    caller's look then refuses it (StateSaving, exit 75). Returns the seconds waited (0.0: no save was seen)."""
    started = time.monotonic()
    deadline, waited = started + SAVE_WINDOW_S + SAVE_SETTLE_S, 0.0
    while saving_now(look(path)) and time.monotonic() < deadline:
        _wait_for_save()
        waited = time.monotonic() - started
    return waited


def waited_said(path: Path, waited: float, then: str) -> list[str]:
    """The warning after `wait_out` waited (none when it did not): why the command paused."""
    if not waited:
        return []
    return [f"{path}: empty or half-written and new, as a file another tool is saving; waited {waited:.1f} s, {then}"]


def check_unchanged(path: Path, before: bytes, changed: Callable[[], StateKept], then: str) -> None:
    """`changed()` raised when the file at `path` is not `before` any more (b"": none), StateSaving while
    another tool is saving it (`then`: what is done about it)."""
    seen = settled(path)
    if (seen[0] or b"") != before:
        raise changed()
    if saving_now(seen):
        raise StateSaving(saving_said(path, seen, then))


def guarded_rename(
    before: bytes, changed: Callable[[], StateKept], then: str, aside: Path | None = None
) -> Callable[[str, Path], None]:
    """The rename of a new state file (`tmp`) over `path` (its real path), for `atomic_write_with`: only
    while the file there is `before` (b"": none) and nobody is saving it (`check_unchanged`'s errors), and
    keeping a save that opened it after that last look (`_keep_late_save`); a file replaced as a save that crashed
    half-way keeps the name `aside` (`_set_aside`: a save only paused there lands in it)."""

    def rename(tmp: str, path: Path) -> None:
        try:
            fd = open_regular(path)
        except FileNotFoundError:
            if before:
                raise changed() from None
            return _make(tmp, path, changed)
        except (OSError, UnsafeFile):  # (unreadable: as it was read before, b"")
            check_unchanged(path, before, changed, then)
            os.replace(tmp, path)
            return None
        try:
            seen = _read_fd(fd)
            if half_written(seen[0]):
                _wait_for_save()
                seen = _read_fd(fd)
            if (seen[0] or b"") != before or not _same_file(fd, path):
                raise changed()
            if saving_now(seen):
                raise StateSaving(saving_said(path, seen, then))
            if aside is not None and half_written(seen[0]):
                _set_aside(fd, path, aside)
            mine = _identity(os.stat(tmp))
            os.replace(tmp, path)
            _keep_late_save(fd, path, seen, mine, changed)
        finally:
            os.close(fd)
        return None

    return rename


def aside_path(path: Path) -> Path:
    """Where the workspace's own state file at `path`, replaced as a save that crashed half-way, keeps another name
    (`_set_aside`): a save only paused past SAVE_WINDOW_S lands there."""
    return path.parent / ".cache" / ASIDE_NAME


def _set_aside(fd: int, path: Path, aside: Path) -> None:
    """Give the file open at `fd` (at `path`, about to be replaced as a save that crashed half-way) the name `aside`,
    best effort (a disk without links: none): a save only paused there longer than SAVE_WINDOW_S (a process suspended
    between emptying the file and writing it, a machine put to sleep) writes its text to that file, where the next
    command finds it (`landed_aside`), instead of to a file no name reaches."""
    tmp = aside.with_name(f"{aside.name}.{os.getpid()}")
    with contextlib.suppress(OSError):
        aside.parent.mkdir(exist_ok=True)
        if aside.parent.is_symlink():  # (a .cache linking out of the workspace: caches are off, no link made there)
            return
        os.link(path, tmp)
        if os.path.samestat(os.stat(tmp), os.fstat(fd)):
            os.replace(tmp, aside)
    with contextlib.suppress(OSError):
        os.unlink(tmp)


def landed_aside(path: Path) -> bytes | None:
    """The text a save paused past SAVE_WINDOW_S wrote to the own state file at `path` after we replaced it as a
    crashed one (`_set_aside`), once it has landed (a JSON object begun and ended); None: none."""
    text = look(aside_path(path))[0]
    return None if text is None or half_written(text) or not text.strip().startswith(b"{") else text


def put_back(path: Path, text: bytes, mine: os.stat_result) -> bool:
    """`text` at `path` in place of our file (`mine`, as a stat saw it), atomically, unless that file was replaced or
    written since; True: done."""
    _put_back(path, text, _identity(mine))
    return look(path)[0] == text


def _make(tmp: str, path: Path, changed: Callable[[], StateKept]) -> None:
    """The new file at a name that had none, linked there only while it is free (gptme's first save may make
    the file meanwhile: a rename would replace it); renamed where links are not made (some disks)."""
    try:
        os.link(tmp, path)
    except FileExistsError:
        raise changed() from None
    except OSError:
        os.replace(tmp, path)
        return
    with contextlib.suppress(OSError):  # (else left for the stale temp files' sweep)
        os.unlink(tmp)


def _identity(st: os.stat_result) -> Identity:
    return st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns


def _same_file(fd: int, path: Path) -> bool:
    """Whether `path` is still the file open at `fd` (no other file renamed there)."""
    try:
        return _identity(os.stat(path))[:2] == _identity(os.fstat(fd))[:2]
    except OSError:
        return False


def _keep_late_save(fd: int, path: Path, seen: Seen, mine: Identity, changed: Callable[[], StateKept]) -> None:
    """After our file (`mine`) replaced the one open at `fd`, seen so at the last look: a save that opened that
    one meanwhile (gptme's `write_text` had emptied it) writes its text to it, no longer at `path`. Its text,
    once written (waited for as a save in progress is), is put back at `path` and `changed()` raised: the
    caller starts over from it. A file seen half-written (a crashed save) is looked at again a moment later:
    a save that opened it meanwhile has written by then."""
    now = _read_fd(fd)
    if now == seen and half_written(seen[0]):
        _wait_for_save()
        now = _read_fd(fd)
    if now == seen:
        return
    for _ in range(int(SAVE_WINDOW_S / SAVE_SETTLE_S)):  # (bounded: a time ahead of the clock stays recent)
        if not saving_now(now):
            break
        _wait_for_save()
        now = _read_fd(fd)
    text = now[0]
    if text is None or half_written(text):  # nothing written within the window: no text to keep
        return
    _put_back(path, text, mine)
    raise changed()


def _put_back(path: Path, text: bytes, mine: Identity) -> None:
    """Another tool's `text` at `path` in place of our file (`mine`), atomically, unless our file was replaced
    or written there since (another save: that one is the file's now)."""

    def rename(tmp: str, where: Path) -> None:
        with contextlib.suppress(OSError):
            if _identity(os.stat(where)) == mine:
                os.replace(tmp, where)
                return
        with contextlib.suppress(OSError):
            os.unlink(tmp)

    atomic_write_with(path, lambda handle: handle.write(text), rename=rename)
