"""What a workspace pushed to each database store: `store push` refuses to add lines to a log
whose pushed lines changed since.

A database store keeps every event it was given, and `store push` knows a stored line only by its
bytes (and which copy of them it is): a line edited after it was pushed (a grade's reward changed
by hand) is a line the database does not hold, and a push would add it at the database's end, the
old event staying there, before it. Whether a line the database does not hold is an edit or a new
line cannot be told from the database; the workspace's memory tells it.

`.cache/pushed-<store id>` (beside the log) holds each valid event of the log as a push to that
store read them (the last whose memory was taken: see below), in log order: its digest (the first 8 bytes of the
`digest` column's SHA-256) and what the database did with it: added by this workspace's push
(`OWN`), held already (`STORED`: another agent's, or another workspace's), or refused (`REFUSED`: a
second session event for an id, which the database does not hold); sealed with a checksum
(core/base/sealed.py). The events the database holds (own and stored) are the ones remembered:
only they are compared. A push compares the log's held events with them:

- the log's held events start with those remembered (pushed again, grown at its end, a refused
  line taken out or put in anywhere): the push goes on as always, whatever it adds;
- the log still holds every event remembered, with events put in between them (a log replaced by
  a `store pull` of the database that other agents write to), the ones this workspace's pushes
  added in the order they were pushed, and every event the push adds comes after the last of them:
  the push goes on as always;
- otherwise, and the push would add an event: refused (`EditedLog`), naming the lines that differ
  from those remembered at their places, and its transaction rolled back: nothing is added. That
  is a remembered event edited or taken out (a log cut and then grown: its new lines cannot be told
  from edits of the lines cut), a new event put in before remembered ones, or the events this
  workspace's pushes added in another order (the database keeps them in the order they were
  pushed: a grade moved after another of its session would count in the file, not in the
  database; the lines another agent stored first may sit anywhere the next check allows, as a pull puts them);
- otherwise the push adds nothing, and a warning says the log changed (cut, reordered, replaced).

Whatever the memory says, a push that adds events asks the database where it holds each of the log's events
(pgpush.Disagreement), and is refused (`EditedLog`) when the database's order, with the events added at its end,
differs from the log's on what decides a number: two session events, two grades of a session, a session's selections
and its record, two events naming no session; whoever stored them (another agent's lines moved, or stored first).
So is a session's first session event that the database does not hold (it holds another: the log's later line, or
one the log does not have), wherever it is: a memory written before that was checked may remember one in the part
of the log that matches it, which the tail's check (`_shadowing`) does not see. The database is not asked when the
pass is the memory grown at its end by events all added and the memory says its log was checked (`MAGIC`): what it
adds goes after every event it holds, in the log's order. A memory written by a push that added nothing (not
checked) or by an earlier version says it was not (`MAGIC_2`): the next push that adds asks.

The memory is written only after the push's transaction committed (a push that failed or was
refused leaves it as it was), and only when the log holds every event remembered in an order
allowed: it then describes the log the push read. A log cut, edited or reordered whose push adds
nothing leaves the memory as it was, so the database's events stay remembered (an edited version
of a line cut, pushed later, is refused) until the lines are back (`store pull` writes what the
database holds). A memory that is missing, or of another store (the name holds the store's
identity: a database created afresh has another) is none: the push behaves as it did without one,
adding the lines the database does not hold, and leaves a memory of the log it pushed. Removing the
file is how a log replaced on purpose is pushed. A memory there that cannot be read (damaged: its
checksum or format does not hold; not a regular file: a symbolic link is never followed) may hide an
edit: a push that would add events is refused, naming it (remove it to push), and one that adds
nothing goes on with a warning. One of the previous format (digests alone) is read as every event
held, in no order that must be kept. A caches' folder that leads out of the workspace is never used
(each push warns). Each workspace keeps its own memory, so a second workspace pushing to the same
database is judged by its own log alone; lines another agent stored count as stored, as before (and keep the
database's order where it decides a number).

The client holds the memory read (9 bytes per event remembered) and the digests and line numbers
of the events that follow the part of the log that matches it, and 16 bytes per session event among them
(its place, and a hash of its session id), with sorted copies of the digests while a log that differs is
compared with it. The database is asked what it did with those events only (one
probe of its unique index each, when some were not added): never its other events.
"""

from __future__ import annotations

import hashlib
import os
import re
from array import array
from collections.abc import Callable
from pathlib import Path

import numpy as np
import numpy.typing as npt

from lesson_credit.core.base.errors import UserError
from lesson_credit.core.base.files import read_cache, write_cache
from lesson_credit.core.base.numbers import counted, listed
from lesson_credit.core.base.safe_read import UnsafeFile
from lesson_credit.core.base.sealed import seal, unseal
from lesson_credit.core.log.pgpush import Disagreement, PushReport, Unadded

MAGIC = b"lesson-credit pushed 3\n"  # 3: as 2, and the database's order of the log's events checked (see `end`)
MAGIC_2 = b"lesson-credit pushed 2\n"  # what the database did with each event: the order not checked (an older
# version's, or a pass whose push added nothing)
MAGIC_1 = b"lesson-credit pushed 1\n"  # the digests alone: read as every event held (by whom, unknown)
DIGEST_BYTES = 8  # of each event's SHA-256, the `digest` column's
MEMORY_MAX_BYTES = 1 << 30  # 119 million events remembered: past that, no memory is read
NAMED_LINES = 3  # lines named in a message, then a count of the rest
OWN, STORED, REFUSED = 0, 1, 2  # what the database did with an event: added by this workspace, held already, refused
_STORE_ID = re.compile(r"[0-9A-Za-z-]{1,64}")

Digests = npt.NDArray[np.uint64]
Flags = npt.NDArray[np.uint8]


class EditedLog(UserError):
    """A push that would add events to a log whose pushed lines changed since: nothing was pushed."""


class PushMemory:
    """The `PushWatch` (core/log/pgpush.py) of `store push`: the memory of the log's last push to
    one store, checked against each pass over the log, and written by `save` once the push committed."""

    def __init__(self, cache_dir: Path, store_id: str, log_name: str, store_name: str) -> None:
        """`cache_dir`: the workspace's `.cache` folder (beside the log); `store_id`: the store's
        identity (PgStore.store_id); the names are those messages use."""
        self.log_name, self.store_name = log_name, store_name
        self.shown = cache_dir / f"pushed-{store_id}"  # (what messages name)
        self._outside = not _inside(cache_dir)  # a link out of the workspace: never read nor written, `end` warns
        self.path: Path | None = self.shown if _STORE_ID.fullmatch(store_id) and not self._outside else None
        self._payload_head = f"{store_id}\n".encode()
        self.unread: str | None = None  # why a memory there could not be read (None: read, or none there)
        self._old_checked = False  # whether the database held the memory's events in its log's order (MAGIC)
        self._old = self._read()
        self._old_raw = b"" if self._old is None else self._old[0].tobytes()  # (compared line by line)
        self.warning: str | None = None  # the log changed, but the push added nothing: one line
        self._new: bytes | None = None  # the memory of the pass whose transaction the push commits
        self._checked = False  # whether the database holds that pass's events in its order (`_check_order`)
        self.start()

    def _read(self) -> tuple[Digests, Flags] | None:
        """The remembered digests and what the database did with each, or None: no memory there, or
        one that cannot be read (`unread` says why: see the module docstring)."""
        if self.path is None:
            return None
        try:
            data = read_cache(self.path, MEMORY_MAX_BYTES)
        except (OSError, UnsafeFile):
            data = None
        if data is None:
            if os.path.lexists(self.path):  # (a symbolic link, a folder, unreadable: set aside, not followed)
                self.unread = "is not a regular file that can be read (a symbolic link? larger than 1 GiB?): not read"
            return None
        memory = _unsealed(data, self._payload_head)
        if memory is None:
            self.unread = "is damaged (its checksum or its format does not hold)"
            return None
        digests, flags, self._old_checked = memory
        return digests, flags

    # ------------------------------------------------------------ PushWatch

    def start(self) -> None:
        self._kept = 0  # the first events read that are the ones remembered, in order
        self._tail = bytearray()  # the digests of the events read after those
        self._numbers = array("q")  # and their line numbers
        self._session_at = array("q")  # the places among those of its session events
        self._session_key = array("q")  # and their session ids' keys (8 bytes of a hash each)

    def row(self, number: int, digest: bytes, session: str | None = None) -> None:
        short = digest[:DIGEST_BYTES]
        at = self._kept * DIGEST_BYTES
        if not self._tail and self._old_raw[at : at + DIGEST_BYTES] == short:
            self._kept += 1
        else:
            if session is not None:
                self._session_at.append(len(self._numbers))
                self._session_key.append(_key(session))
            self._tail += short
            self._numbers.append(number)

    def end(
        self,
        report: PushReport,
        first_added: Callable[[], int | None],
        unadded: Callable[[int], Unadded],
        disagreeing: Callable[[], Disagreement | None] | None = None,
    ) -> None:
        self.warning, self._new = None, None
        if self.unread is not None and report.added:
            raise EditedLog(
                f"{self.shown}: what this workspace pushed to {self.store_name} {self.unread}, so whether lines "
                f"pushed before were edited since cannot be told, and this push would add "
                f"{counted(report.added, 'event')}; nothing pushed. Remove that file to push without that check"
            )
        if self._outside:
            self.warning = (
                f"{self.shown.parent}: leads out of the workspace: what this workspace pushed to {self.store_name} "
                "is not remembered there, so a pushed line edited since cannot be told from a new one"
            )
        if self.unread is not None:
            self.warning = (
                f"{self.shown}: what this workspace pushed to {self.store_name} {self.unread}; nothing added (every "
                "event of the log is in the database already)"
            )
        kept = self._kept
        old_digests, old_flags = self._old if self._old is not None else (_digests(b""), _flags(0))
        tail = _digests(bytes(self._tail))
        flags = _flags(len(tail))  # what the database did with each: OWN unless it says otherwise
        if report.added != len(tail):  # (the events remembered are held: every other one added, nothing to ask)
            stored, refused = unadded(kept)
            flags[np.frombuffer(stored, dtype=np.int64) - kept] = STORED
            flags[np.frombuffer(refused, dtype=np.int64) - kept] = REFUSED
        shadow = self._shadowing(flags)
        if shadow is not None and report.added:
            raise EditedLog(
                f"{self.log_name}: {shadow}, and this push would add {counted(report.added, 'event')}; nothing "
                "pushed. Take that line out (a session's first session event is its record: correct a score with "
                "`lesson-credit grade` or `undo`)"
            )
        self._judge(report, first_added, tail, flags)
        self._check_order(report, len(tail), disagreeing)
        if shadow is not None:  # (not remembered: the memory's events are compared, not what the database refused)
            self._new = None
            said = (
                f"{self.log_name}: {shadow}; nothing added, and a push that adds events is refused until that line "
                "is taken out"
            )
            beside = self.unread is not None or self._outside  # (what those warnings say is kept)
            self.warning = f"{self.warning}; and {said}" if beside and self.warning else said

    def _shadowing(self, flags: Flags) -> str | None:
        """A session event the database refused that the file counts: the first of its id in the pass, before the
        session event of that id the database holds (the file counts its first; the database holds one only)."""
        if not np.any(flags == REFUSED):
            return None
        refused: dict[int, int] = {}  # each session id's first refused session event (its place in the pass)
        for at, key in zip(self._session_at, self._session_key, strict=True):
            if flags[at] == REFUSED:
                refused.setdefault(key, at)
            elif key in refused:
                line, held = self._numbers[refused[key]], self._numbers[at]
                return (
                    f"line {line} is a session event before the one {self.store_name} holds for its session (line "
                    f"{held}): the file counts line {line}'s, the database line {held}'s"
                )
        return None

    def _judge(self, report: PushReport, first_added: Callable[[], int | None], tail: Digests, flags: Flags) -> None:
        """Compare the pass's events after those matching the memory (`tail`, with what the database did with
        each) with the memory: remember them, warn, or refuse (see the module docstring)."""
        kept = self._kept
        old_digests, old_flags = self._old if self._old is not None else (_digests(b""), _flags(0))
        wanted = old_flags[kept:] != REFUSED
        rest, rest_flags = old_digests[kept:][wanted], old_flags[kept:][wanted]  # the events remembered, held
        held_at = np.flatnonzero(flags != REFUSED)  # the tail's events the database holds (places in the tail)
        held = tail[held_at]
        if len(held) >= len(rest) and np.array_equal(held[: len(rest)], rest):  # grown at its end (or the same)
            flags[held_at[: len(rest)]] = rest_flags
            self._remember(tail, flags)
            return
        places = _places(rest, held)  # where each event remembered is among `held`, None when one is gone
        moved = reordered = False
        if places is not None:
            flags[held_at[places]] = rest_flags
            reordered = bool(np.any(np.diff(places[rest_flags == OWN]) < 0))  # this workspace's own, out of order
            last = kept + int(held_at[places.max()])  # the last event remembered, in the pass
            first = first_added() if report.added and not reordered else None
            moved = not reordered and (not report.added or (first is not None and first > last))
        differ = np.flatnonzero(held[: len(rest)] != rest[: len(held)])  # the places that differ (held events)
        if report.added and not moved:
            raise EditedLog(self._refusal(self._lines(held_at, differ), len(differ), reordered, report.added))
        if moved:  # (the log replaced by a pull, say): it adds its new events, if any, after every one remembered
            self._remember(tail, flags)
        self.warning = None if report.added else self._changed(self._lines(held_at, differ), len(differ), reordered)
        if not len(differ):  # the log's held events are the first of those remembered: cut
            self.warning = (
                f"{self.log_name}: holds {counted(len(rest) - len(held), 'fewer event')} than were pushed to "
                f"{self.store_name} (cut since); the database keeps them: a push that adds events is refused until "
                "they are back (`store pull` writes every event the database holds)"
            )

    def _check_order(
        self, report: PushReport, tail: int, disagreeing: Callable[[], Disagreement | None] | None
    ) -> None:
        """Refuse a push that adds events when the database's order of the log's events, those added at its end,
        differs from the log's on what decides a number (pgpush.Disagreement); `_checked`: whether the memory
        written describes a log whose order was checked so. Nothing to ask when the pass is a memory so checked
        grown at its end by events all added (the database adds them after every event it holds, in the log's
        order; its events keep their places), the common push; nothing asked of a push that adds nothing (it
        changes nothing: its memory is written unchecked)."""
        old = self._old
        grown = self._old_checked and old is not None and self._kept == len(old[0]) and report.added == tail
        if disagreeing is None or grown:  # (None: a push into an empty store, which adds every event in order)
            self._checked = True
            return
        self._checked = False
        if report.added:
            found = disagreeing()
            if found is not None:
                raise EditedLog(self._disagreement(found, report.added))
            self._checked = True

    def _disagreement(self, found: Disagreement, added: int) -> str:
        """The one line of a push refused because the database's order of the log's events would differ from the
        log's on what decides a number (the whole log's: lines remembered too, and lines stored by others)."""
        store, line, other = self.store_name, found.line, found.other
        adds = f"this push would add {counted(added, 'event')}; nothing pushed"
        if found.kind == "first":
            held = f"line {other}'s" if other is not None else "one this log does not have (another agent's?)"
            return (
                f"{self.log_name}: line {line} is a session event for a session {store} holds another session event "
                f"of: the file counts line {line}'s, the database {held}, and {adds}. Take that line out (a "
                "session's first session event is its record: correct a score with `lesson-credit grade` or `undo`)"
            )
        what, why = _ORDER_DECIDES[found.kind]
        return (
            f"{self.log_name}: lines {other} and {line} hold {what} that {store} holds in the other order (it keeps "
            f"events in the order they were stored: another agent's may come first), and {why}: the file and the "
            f"database would differ; {adds}. Put those lines in the database's order (`store pull` writes it)"
        )

    def _lines(self, held_at: npt.NDArray[np.intp], differ: npt.NDArray[np.intp]) -> str:
        """`line 2`, `lines 2 and 5`, `lines 2, 5, 7 and 40 more`: the first lines of the places that differ."""
        names = [str(self._numbers[held_at[at]]) for at in differ[:NAMED_LINES]]
        if len(differ) == 1:
            return f"line {names[0]}"
        if len(differ) > len(names):
            return f"lines {listed(names, NAMED_LINES, total=len(differ))}"
        return f"lines {', '.join(names[:-1])} and {names[-1]}" if names else "no line"

    def _changed(self, lines: str, count: int, reordered: bool) -> str:
        """The warning of a push that added nothing to a log that differs from the memory."""
        if reordered:
            return (
                f"{self.log_name}: {lines} {_hold(count)} events pushed to {self.store_name} in another order; "
                "nothing added, and the database keeps the order they were pushed in: a push that adds events is "
                "refused until they are back in it"
            )
        if self._new is not None:  # every event remembered still there (a log replaced by a pull): taken
            return (
                f"{self.log_name}: {lines} {_are(count)} not what the last push to {self.store_name} read there; "
                "every event of the log is in the database already: nothing added (the database keeps what it was "
                "given)"
            )
        return (
            f"{self.log_name}: {lines} {_are(count)} not what was pushed there to {self.store_name}; every event "
            "of the log is in the database already: nothing added, and a push that adds events is refused until "
            "they are back as pushed"
        )

    def _refusal(self, lines: str, count: int, reordered: bool, added: int) -> str:
        """The one line of a push refused."""
        adds = f"this push would add {counted(added, 'event')} at the end of the database"
        if reordered:
            return (
                f"{self.log_name}: {lines} {_hold(count)} events pushed to {self.store_name} in another order: the "
                f"database keeps them in the order they were pushed, and {adds}; nothing pushed. Put the pushed "
                "lines back in their order, and correct a score with `lesson-credit grade` or `undo`, which append "
                "an event"
            )
        return (
            f"{self.log_name}: {lines} {_are(count)} not what was pushed there to {self.store_name} (edited since?): "
            f"{adds}, which keeps the events pushed before; nothing pushed. Put the pushed lines back as they were, "
            "and correct a score with `lesson-credit grade` or `undo`, which append an event"
        )

    def _remember(self, tail: Digests, flags: Flags) -> None:
        """What `save` writes: the pass's events, and what the database did with each."""
        kept = self._kept
        old_digests, old_flags = self._old if self._old is not None else (_digests(b""), _flags(0))
        digests = old_digests[:kept].tobytes() + tail.tobytes()
        self._new = digests + old_flags[:kept].tobytes() + flags.tobytes()

    # ------------------------------------------------------------ after the commit

    def save(self) -> None:
        """Remember the log the committed push read (called once its transaction committed), when
        `end` took it (see the module docstring). A memory that cannot be written is set aside
        (core/base/files.py): the command warns."""
        if self.path is not None and self._new is not None:
            write_cache(self.path, seal(MAGIC if self._checked else MAGIC_2, self._payload_head + self._new))


_ORDER_DECIDES = {  # Disagreement.kind -> (the two events, why their order decides a number)
    "sessions": ("two session events", "sessions fold in that order"),
    "grades": ("two grades of one session", "the later grade is the one in force"),
    "selections": ("a session's selections or its record", "its last selection before its record counts"),
    "unnamed": ("two events naming no session (priors, exports)", "a later prior or export replaces an earlier one"),
}


def _unsealed(data: bytes, head: bytes) -> tuple[Digests, Flags, bool] | None:
    """The digests and flags a memory's bytes hold (a memory of the first format: every event held,
    and in no order that must be kept), and whether their order was checked; None when they do not hold
    (damaged)."""
    for magic, width in ((MAGIC, DIGEST_BYTES + 1), (MAGIC_2, DIGEST_BYTES + 1), (MAGIC_1, DIGEST_BYTES)):
        try:
            payload = bytes(unseal(magic, data))
        except ValueError:
            continue
        if not payload.startswith(head):
            return None
        body = payload[len(head) :]
        count, odd = divmod(len(body), width)
        if width == DIGEST_BYTES:
            flags = np.full(count, STORED, dtype=np.uint8)
        else:
            flags = np.frombuffer(body, dtype=np.uint8, offset=count * DIGEST_BYTES)
        if odd or np.any(flags > REFUSED):
            return None
        return np.frombuffer(body, dtype=np.uint64, count=count), flags, magic == MAGIC
    return None


def _digests(data: bytes) -> Digests:
    return np.frombuffer(data, dtype=np.uint64).copy()


def _flags(count: int) -> Flags:
    return np.full(count, OWN, dtype=np.uint8)


def _copies(digests: Digests) -> npt.NDArray[np.int64]:
    """Which copy of its digest each one is (0, 1, ...), in order."""
    order = np.argsort(digests, kind="stable")
    ordered = digests[order]
    copy = np.empty(len(digests), dtype=np.int64)
    copy[order] = np.arange(len(digests)) - np.searchsorted(ordered, ordered)
    return copy


def _places(rest: Digests, held: Digests) -> npt.NDArray[np.int64] | None:
    """Where each of `rest` is among `held`: the k-th copy of a digest in `rest` at the k-th copy of it in
    `held`; None when `held` has fewer copies of one than `rest` (an event remembered is gone)."""
    ids = np.unique(np.concatenate([rest, held]), return_inverse=True)[1].astype(np.int64)
    span = max(len(rest), len(held)) + 1  # more than any copy's number: (digest, copy) as one integer
    rest_keys = ids[: len(rest)] * span + _copies(rest)
    held_keys = ids[len(rest) :] * span + _copies(held)
    order = np.argsort(held_keys, kind="stable")
    at = np.minimum(np.searchsorted(held_keys[order], rest_keys), max(len(held) - 1, 0))
    if not len(held) or not np.array_equal(held_keys[order][at], rest_keys):
        return None
    places: npt.NDArray[np.int64] = order[at]
    return places


def _are(count: int) -> str:
    return "is" if count == 1 else "are"


def _hold(count: int) -> str:
    return "holds" if count == 1 else "hold"


def _key(session: str) -> int:
    """A session id as 8 bytes (the events compared are few: a collision of two ids is not a concern)."""
    return int.from_bytes(
        hashlib.blake2b(session.encode("utf-8", "surrogatepass"), digest_size=8).digest(), "little", signed=True
    )


def _inside(cache_dir: Path) -> bool:
    """Whether the caches' folder is the log's own (not a link out of the workspace's state folder)."""
    return Path(os.path.realpath(cache_dir)).is_relative_to(os.path.realpath(cache_dir.parent))
