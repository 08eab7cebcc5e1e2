"""What a workspace pushed to each database store: `store push` refuses to add lines to a log
whose pushed lines changed since.

A database store keeps every event it was given, and `store push` knows a stored line only by its
bytes (and which copy of them it is): a line edited after it was pushed (a grade's reward changed
by hand) is a line the database does not hold, and a push would add it at the database's end, the
old event staying there, before it. Whether a line the database does not hold is an edit or a new
line cannot be told from the database; the workspace's memory tells it.

`.cache/pushed-<store id>` (beside the log) holds the digest of each valid event of the log as the
last push to that store read them, in log order (8 bytes each: the first 8 of the `digest`
column's SHA-256), sealed with a checksum (core/base/sealed.py). A push compares the log's valid
events with it, line by line:

- the log starts with the events remembered (pushed again, grown at its end): the push goes on as
  always, whatever it adds;
- an event differs from the one remembered at its place, but the log still holds every event
  remembered (only events put in between them, or moved), and every event the push adds comes
  after the last of them (those put in are stored already: a log replaced by a `store pull` of
  the database that other agents write to, then grown): the push goes on as always;
- otherwise an event differs from the one remembered at its place (edited, taken out, or a new
  one put in before events pushed), and the push would add an event: refused (`EditedLog`),
  naming the lines that differ, and its transaction rolled back: nothing is added. A log cut and
  then grown is such a log: its new lines cannot be told from edits of the lines cut;
- it differs (or holds fewer events: cut), but every event it holds is stored already (a log
  replaced by a `store pull`, a cut): the push adds nothing, and a warning says the log changed.

The memory is written only after the push's transaction committed, and describes the log the
push read (a push that failed or was refused leaves the memory as it was). A memory that is
missing, unreadable, set aside, or of another store (the name holds the store's identity: a
database created afresh has another) is none: the push behaves as it did without one, adding the
lines the database does not hold, and leaves a memory of the log it pushed. Removing the file is
how a log replaced on purpose is pushed. Each workspace keeps its own memory, so a second
workspace pushing to the same database is judged by its own log alone; lines another agent
stored count as stored, as before.

The client holds the memory read (8 bytes per event remembered) and the digests of the events
that follow the part of the log that matches it (sorted copies of both while a log that differs is
compared with it).
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from pathlib import Path

import numpy as np

from lesson_credit.core.base.errors import UserError
from lesson_credit.core.base.files import read_cache, write_cache
from lesson_credit.core.base.numbers import counted, listed
from lesson_credit.core.base.safe_read import UnsafeFile
from lesson_credit.core.base.sealed import seal, unseal
from lesson_credit.core.log.pgpush import PushReport

MAGIC = b"lesson-credit pushed 1\n"
DIGEST_BYTES = 8  # of each event's SHA-256, the `digest` column's
MEMORY_MAX_BYTES = 1 << 30  # 134 million events remembered: past that, no memory is read
NAMED_LINES = 3  # lines named in a message, then a count of the rest
_STORE_ID = re.compile(r"[0-9A-Za-z-]{1,64}")


class EditedLog(UserError):
    """A push that would add events to a log whose pushed lines changed since: nothing was pushed."""


class PushMemory:
    """The `PushWatch` (core/log/pgpush.py) of `store push`: the memory of the log's last push to
    one store, checked against each pass over the log, and written by `save` once the push committed."""

    def __init__(self, cache_dir: Path, store_id: str, log_name: str, store_name: str) -> None:
        """`cache_dir`: the workspace's `.cache` folder (beside the log); `store_id`: the store's
        identity (PgStore.store_id); the names are those messages use."""
        self.log_name, self.store_name = log_name, store_name
        self.path: Path | None = None
        if _STORE_ID.fullmatch(store_id) and _inside(cache_dir):
            self.path = cache_dir / f"pushed-{store_id}"
        self._payload_head = f"{store_id}\n".encode()
        self._old = self._read()
        self.warning: str | None = None  # the log changed, but the push added nothing: one line
        self._new: bytes | None = None  # the memory of the pass whose transaction the push commits
        self.start()

    def _read(self) -> bytes | None:
        """The remembered digests, or None (no memory, or one that does not hold: see the module docstring)."""
        if self.path is None:
            return None
        try:
            data = read_cache(self.path, MEMORY_MAX_BYTES)
            payload = bytes(unseal(MAGIC, data)) if data is not None else None
        except (OSError, UnsafeFile, ValueError):
            return None
        if payload is None or not payload.startswith(self._payload_head):
            return None
        digests = payload[len(self._payload_head) :]
        return digests if len(digests) % DIGEST_BYTES == 0 else None

    # ------------------------------------------------------------ PushWatch

    def start(self) -> None:
        self._count = 0  # valid events read in this pass
        self._kept = 0  # the first events read that are the ones remembered, in order
        self._tail = bytearray()  # the digests of the events read after those
        self._differ: list[int] = []  # the first NAMED_LINES line numbers whose event is not the one remembered
        self._differ_count = 0

    def row(self, number: int, digest: bytes) -> None:
        short = digest[:DIGEST_BYTES]
        at = self._count * DIGEST_BYTES
        self._count += 1
        old = self._old
        same = old is not None and old[at : at + DIGEST_BYTES] == short
        if old is not None and at < len(old) and not same:
            self._differ_count += 1
            if len(self._differ) < NAMED_LINES:
                self._differ.append(number)
        if same and not self._tail:
            self._kept += 1
        else:
            self._tail += short

    def end(self, report: PushReport, first_added: Callable[[], int | None]) -> None:
        old = self._old
        remembered = 0 if old is None else len(old) // DIGEST_BYTES
        self.warning = None
        # lines stored already put in between those pushed (a log replaced by a `store pull`), the new ones after
        # every one of them: pushed as always
        moved = bool(self._differ_count and report.added) and self._moved_after(first_added)
        if self._differ_count and report.added and not moved:
            raise EditedLog(
                f"{self.log_name}: {self._lines()} not what was pushed there to {self.store_name} (edited since?): "
                f"this push would add {counted(report.added, 'event')} at the end of the database, which keeps the "
                "events pushed before; nothing pushed. Put the pushed lines back as they were, and correct "
                "a score with `lesson-credit grade` or `undo`, which append an event"
            )
        if self._differ_count and not moved:
            self.warning = (
                f"{self.log_name}: {self._lines()} not what the last push to {self.store_name} read there; every "
                "event of the log is in the database already: nothing added (the database keeps what it was given)"
            )
        elif self._count < remembered:
            self.warning = (
                f"{self.log_name}: holds {remembered - self._count} fewer events than were pushed to "
                f"{self.store_name} by the last push (cut since); the database keeps them"
            )
        self._remember()

    def _remember(self) -> None:
        """What `save` writes: the digests of the pass's events."""
        kept = b"" if self._old is None else self._old[: self._kept * DIGEST_BYTES]
        self._new = kept + bytes(self._tail)

    def _moved_after(self, first_added: Callable[[], int | None]) -> bool:
        """Whether the log still holds every event remembered past the part that matches (none edited or
        taken out: only events put in between them, or moved), and every event the push adds comes after
        the last of them (those put in before it are stored already: a log replaced by a `store pull`)."""
        assert self._old is not None  # (events differ from those remembered)
        rest = np.frombuffer(self._old, dtype=np.uint64, offset=self._kept * DIGEST_BYTES)
        tail = np.frombuffer(bytes(self._tail), dtype=np.uint64)
        wanted, times = np.unique(rest, return_counts=True)
        held, held_times = np.unique(tail, return_counts=True)
        at = np.minimum(np.searchsorted(held, wanted), max(len(held) - 1, 0))
        if len(held) == 0 or not np.all((held[at] == wanted) & (held_times[at] >= times)):
            return False  # a remembered event is gone from the log: edited, or taken out
        # the remembered events' places: the first copies of each (as many as remembered; a later copy, the same
        # line appended again, is a new event), and the last of those
        order = np.argsort(tail, kind="stable")
        sorted_tail = tail[order]
        starts = np.searchsorted(sorted_tail, sorted_tail)  # where each one's run of copies begins
        copy = np.empty(len(tail), dtype=np.int64)
        copy[order] = np.arange(len(tail)) - starts  # which copy of its bytes each event is, in log order
        allowed = np.zeros(len(tail), dtype=np.int64)
        present = np.isin(tail, wanted)
        allowed[present] = times[np.searchsorted(wanted, tail[present])]
        last = self._kept + int(np.flatnonzero(copy < allowed)[-1])
        first = first_added()
        return first is not None and first > last

    def _lines(self) -> str:
        """`line 2 is`, `lines 2 and 5 are`, `lines 2, 5, 7 and 40 more are`."""
        named = [str(number) for number in self._differ]
        if self._differ_count == 1:
            return f"line {named[0]} is"
        if self._differ_count > len(named):
            return f"lines {listed(named, NAMED_LINES, total=self._differ_count)} are"
        return f"lines {', '.join(named[:-1])} and {named[-1]} are"

    # ------------------------------------------------------------ after the commit

    def save(self) -> None:
        """Remember the log the committed push read (called once its transaction committed). A
        memory that cannot be written is set aside (core/base/files.py): the command warns."""
        if self.path is not None and self._new is not None:
            write_cache(self.path, seal(MAGIC, self._payload_head + self._new))


def _inside(cache_dir: Path) -> bool:
    """Whether the caches' folder is the log's own (not a link out of the workspace's state folder)."""
    return Path(os.path.realpath(cache_dir)).is_relative_to(os.path.realpath(cache_dir.parent))
