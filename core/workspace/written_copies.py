"""The copies of the `bandit-state.json` files we wrote, kept in the workspace's cache by their `created`: the base
over which another tool's update of the file is known as increments (core/workspace/state_file.py logs them), and
what `created` a file about to be written takes."""

from __future__ import annotations

import contextlib
import datetime as dt
import hashlib
import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import msgspec
from msgspec import Struct

from lesson_credit.core.bandit import increments as foreign
from lesson_credit.core.bandit import interop, saving
from lesson_credit.core.bandit.saving import StateToReplace
from lesson_credit.core.base.clock import iso_micro
from lesson_credit.core.base.files import atomic_write, set_aside
from lesson_credit.core.base.safe_read import STATE_MAX_BYTES, UnsafeFile, open_regular, read_opened, read_regular
from lesson_credit.core.base.sealed import seal, unseal
from lesson_credit.core.log.events import FileNumbers
from lesson_credit.core.log.exports import Untold, counted_since
from lesson_credit.core.log.store import StoreError
from lesson_credit.core.workspace.analysis import Analysis

COPIES_KEPT = 32  # copies of the files we wrote, the newest (gptme may save a file it loaded rewrites ago)
MICROSECOND = dt.timedelta(microseconds=1)
COPY_NAME = re.compile(r"\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d\.\d{6}Z")  # a copy named by the `created` we wrote
HELD_MAGIC = b"lesson-credit state-held 1\n"  # the own file kept as a save of one load that cannot be told


class WrittenCopies(Analysis):
    """The copies of the state files we wrote (a cache: best effort, none with the caches off)."""

    # each arm of a file gptme's bandit updated is looked at once a command (a check, again under the lock, then the
    # write: before, five times over, 100,000 new arms 26 s): the last own file's update compared (state_file.py
    # `foreign_increments`: the file, where the log was, what it added and each key changed with its lesson), its
    # keys (`state_keys`) and the update's lessons within the cap (`within_cap`); a copy kept forgets them
    _update_memo: tuple[dict[str, Any], tuple[int, int], tuple[dict[str, foreign.Counts], int], dict[str, str]] | None
    _update_memo = None
    _keys_memo: tuple[dict[str, Any], tuple[int, int], tuple[str, ...]] | None = None
    _cap_memo: tuple[dict[str, Any], tuple[int, int], tuple[dict[str, Any], list[str]]] | None = None

    def _copies(self) -> Path:
        """Where the copies of the files we wrote are kept, one per `created` (`_copy_path`)."""
        return self.state_dir / ".cache" / "bandit-state-copies"

    def _copies_linked(self) -> bool:
        """Whether the copies' folder is a symbolic link: nothing is read, written or deleted through it
        (it may lead out of the workspace), as through no cache's."""
        return self._copies().is_symlink()

    def _copy_path(self, created: str) -> Path:
        """The copy of the file of `created`: named by it, a `created` we write (`new_created`) with its
        colons as dashes, so that the names sort as the files were written; another (no file of ours,
        looked up in vain), by its hash, as the copies of the version before were."""
        if COPY_NAME.fullmatch(name := created.replace(":", "-")):
            return self._copies() / name
        return self._hashed_copy_path(created)

    def _hashed_copy_path(self, created: str) -> Path:
        digest = hashlib.sha256(created.encode("utf-8", "surrogateescape")).hexdigest()[:32]
        return self._copies() / digest

    def _legacy_written_path(self) -> Path:
        """Where versions before the copies by `created` kept the one copy of what they last wrote."""
        return self.state_dir / ".cache" / "bandit-state-written"

    def _keep_written(self, payload: dict[str, Any]) -> None:
        """Keep a copy of the numbers of the state file about to be written, under its `created` (before
        the file, so that a crash between the two never leaves the file without its copy), best effort:
        without it, another tool's update of the file is kept as it is, not logged. The newest
        COPIES_KEPT are kept: gptme's save of a file it loaded that many of our rewrites ago is known."""
        self._update_memo = self._keys_memo = self._cap_memo = None  # (what the file grew from changes)
        created = payload.get("created")
        if not isinstance(created, str) or self._copies_linked():  # (not a file of ours: nothing looks it up)
            return
        if interop.RECORDS_KEY not in payload and (records := self._records_of_copy(payload)) is not None:
            payload = {**payload, interop.RECORDS_KEY: records}  # (gptme's save of it: the records are still its)
        self._keeper(self._copy_path(created))(payload, self._origin_of(payload))
        with contextlib.suppress(OSError):
            self._legacy_written_path().unlink()
        with contextlib.suppress(OSError):
            self._prune_copies()

    def _origin_of(self, payload: dict[str, Any]) -> foreign.Written | None:
        """Of gptme's save of a file of ours (no stamp of ours) about to be kept in place of that file's copy, the
        file of ours every process that loaded it grew from: the copy's own origin, else the copy (None: ours, or no
        copy). A second gptme process saving from that load is told over it (`_two_loads`)."""
        created = payload.get("created")
        if interop.STAMP_KEY in payload or not isinstance(created, str) or self._copies_linked():
            return None
        copy = self._copy(self._copy_path(created))
        if copy is None or copy.created != created:
            return None
        return copy.origin or foreign.Written(copy.arms, copy.sessions, created, None, copy.stamps)

    def _copy_names(self) -> list[tuple[int, int, str]]:
        """The copies kept, oldest first: those the version before named by a hash (by their time of
        writing), then those named by their `created` (in its order: a clock set back leaves it)."""
        copies: list[tuple[int, int, str]] = []
        if self._copies_linked():
            return copies
        with os.scandir(self._copies()) as entries:
            for entry in entries:
                if not entry.is_file(follow_symlinks=False):
                    continue
                if COPY_NAME.fullmatch(entry.name):
                    copies.append((1, 0, entry.name))
                elif len(entry.name) == 32:
                    copies.append((0, entry.stat(follow_symlinks=False).st_mtime_ns, entry.name))
        return sorted(copies)

    def _prune_copies(self) -> None:
        """Delete all but the newest COPIES_KEPT copies (`_copy_names`)."""
        for _, _, name in self._copy_names()[:-COPIES_KEPT]:
            (self._copies() / name).unlink()

    def new_created(self, existing: dict[str, Any]) -> str:
        """The `created` of a file we are about to write in place of `existing`: the clock's time to the
        microsecond, later than the file's own and than every kept copy's (so the copies' names sort as
        the files were written, the clock set back or not), and named by no log's record of a save of
        the file (gptme's bandit keeps it when it saves: it names which of our files its update grew
        from)."""
        moment = self.clock().astimezone(dt.UTC)
        with contextlib.suppress(OSError, ValueError, OverflowError):  # (no copies; the last microsecond there is)
            if self._reader.caches and (named := [name for kind, _, name in self._copy_names() if kind == 1]):
                moment = max(moment, _copy_time(named[-1]) + MICROSECOND)
        was = existing.get("created")
        with contextlib.suppress(TypeError, ValueError, OverflowError):  # (naive, not a time, year 9999)
            moment = max(moment, dt.datetime.fromisoformat(was) + MICROSECOND) if isinstance(was, str) else moment
        saves = self._reader.index.exports.saves
        for _ in range(len(saves) + 1):
            created = iso_micro(moment)
            if (created, str(self.state_path)) not in saves:
                break
            moment += MICROSECOND
        return created

    def _keeper(self, where: Path) -> Callable[[dict[str, Any], foreign.Written | None], None]:
        """What keeps a copy of a state file's numbers at `where` (`_keep_written`, best effort; none
        with the caches off), with its origin (`_origin_of`)."""

        def keep(payload: dict[str, Any], origin: foreign.Written | None = None) -> None:
            if not self._reader.caches:
                return
            try:  # (no guard: a symbolic link in its place is refused, never written through, as no cache is)
                atomic_write(where, foreign.written_copy(payload, origin))
            except (StoreError, OSError) as exc:
                why = "an update another tool makes to bandit-state.json before the next write is kept, not logged"
                set_aside(where, f"{exc}; the copy of the numbers written is not kept ({why})")
                with contextlib.suppress(OSError):
                    if not where.is_symlink():  # (a stale copy goes; a link is left as it is)
                        where.unlink()
                with contextlib.suppress(OSError):  # (a folder made for it, left empty: a disk refusing writes)
                    where.parent.rmdir()

        return keep

    def keep_written_copy(self, state: dict[str, Any]) -> None:
        """Keep the copy of a state file verified as ours (its stamp matches) when the copy is missing or
        says otherwise (a workspace written before copies were kept), best effort: under the writers'
        lock (not waited for) and only while the file still holds `state`."""
        if not self._reader.caches or self._kept(state) == foreign.read_written_copy(foreign.written_copy(state)):
            return
        try:
            with self.log.locked(timeout=0):
                if interop.read_state(self.state_path) == state:
                    self._keep_written(state)
        except StoreError:  # a writer holds the lock: its rewrite keeps the copy of its own file
            pass

    def _written(self, state: dict[str, Any]) -> foreign.Written | None:
        """The numbers the state file `state` had as far as the log knows, the base of what another tool
        added since: those of the file we wrote that it grew from (`_kept`: its copy), else, with no copy
        left (caches off or deleted), those the log tells arm by arm as ours (`_rebuilt`: an earlier copy's
        check), with those the increments events logged from a file of that `created` saw (`_saved`).
        None: neither (an arm that cannot be told apart; a file without a `created`)."""
        written = self._written_or_why(state)
        return None if isinstance(written, str) else written

    def _written_or_why(self, state: dict[str, Any]) -> foreign.Written | str:
        """`_written`, or why not: which arm cannot be told apart ("" when nothing says more than "no copy"). A save of
        one load that cannot be told (TwoLoads) is kept (`_hold`): gptme's saves onto it since are over it (`_held`)."""
        if (held := self._held(state)) is not None:
            return held
        if (written := self._kept(state)) is not None:
            found = self._two_loads(state, self._copies_told(state, written))
            if isinstance(found, TwoLoads):
                self._hold(state, str(found))
            return found
        created = state.get("created")
        if not isinstance(created, str):
            return ""
        rebuilt = self._rebuilt(state)
        return rebuilt if isinstance(rebuilt, str) else self._saved(rebuilt, created)

    def _copies_told(self, state: dict[str, Any], written: foreign.Written) -> foreign.Written:
        """`written` (the copy of the file of ours the own file `state` grew from) told arm by arm against what the
        imports of copies of that file elsewhere saw, as an import of such a copy is (docs/format.md §5.8,
        `Exports.per_arm`): an arm exactly as one of them saw it (its numbers and gptme's stamp) is that update,
        logged already; the sessions counted are those no import logged. Only before any save of the own file of
        that `created` is logged: the copy is then the file they all grew from (logging one keeps the file as
        gptme saved it in its place). An arm that may or may not hold an update such an import logged keeps our
        copy's numbers (its update logged against them, as before this check: that one update may count twice;
        keeping the file as it is instead lost every later session gptme saved to it, for good); the others are
        told."""
        created, own, exports = state.get("created"), str(self.state_path), self._reader.index.exports
        if not isinstance(created, str) or written.created != created or written.sessions is None:
            return written
        if exports.saved(created, own) is not None:
            return written
        if not any(n.created == created and n.path != own for _, n, _ in exports.history):
            return written
        numbers = _file_numbers(state, own, created)
        if numbers is None:
            return written  # (the increments refuse it)
        base = FileNumbers(own, created, written.arms, written.sessions)
        found = exports.per_arm(base, frozenset(), numbers, written.sessions, untold_as_base=True)
        assert not isinstance(found, Untold)  # (untold_as_base: an untold arm keeps our copy's numbers)
        return foreign.Written(found[0].arms, found[0].sessions, created, written.records)

    def _two_loads(self, state: dict[str, Any], written: foreign.Written) -> foreign.Written | str:
        """`written` (our copy with what gptme's saves of the own file logged since: the latest), unless the own file
        `state` did not grow from it and one of its load's did (docs/format.md §7 *Two saves of one load*): two gptme
        processes loaded the file of ours, one's save was logged, and the other saved from what it loaded. Then its
        base is the file of ours they loaded (`origin`), told arm by arm against every state a save of it logged that
        the file may have grown from (`Exports.per_arm`): an arm as one saw it is that update, logged; the sessions
        counted are those none logged. An arm that may hold such an update or not (a save of its own plus one more,
        or two of the other's): TwoLoads, why (its update is not guessed)."""
        created, origin = state.get("created"), written.origin
        if origin is None or origin.sessions is None or not isinstance(created, str) or written.created != created:
            return written
        own, exports = str(self.state_path), self._reader.index.exports
        if exports.saved(created, own) is None or foreign.grows_from(state, written):
            return written
        numbers = _file_numbers(state, own, created)
        if numbers is None:
            return written  # (the increments refuse it)

        def apart(seen: FileNumbers) -> bool:  # (a save the file did not grow from: its updates are not the file's)
            return not foreign.grows_from(state, foreign.Written(seen.arms, None, stamps=seen.stamps), seen.arms)

        base = FileNumbers(own, created, origin.arms, origin.sessions)
        found = exports.per_arm(base, frozenset(), numbers, origin.sessions, apart=apart)
        if isinstance(found, Untold):
            return TwoLoads(
                f"{found.key} may hold the update of a save of that file logged before, or not (two gptme processes "
                f"saved it from one load, {created}: one session or two, the numbers cannot tell)"
            )
        told = foreign.Written(
            found[0].arms, found[0].sessions, created, written.records, {**(origin.stamps or {}), **found[0].stamps}
        )
        return told if foreign.grows_from(state, told) else written

    # ---- a save of one load kept as it is (TwoLoads): the base of gptme's later saves there

    def late_save(self, put_back: bool = True) -> tuple[str, ...]:
        """A save of gptme's that landed after we replaced the own file as one that crashed half-way (it was only
        paused past saving.SAVE_WINDOW_S: `saving.landed_aside`), said: `put_back` at the file's name while the file
        there is as we wrote it (the rewrite that follows logs it, as any save of the file it loaded), else kept aside
        with what to do, and forgotten once an import logged it from there. (): none."""
        if (text := saving.landed_aside(self.state_path)) is None:
            return ()
        aside = saving.aside_path(self.state_path)
        created = interop.read_state(aside, text).get("created")
        if isinstance(created, str) and self._reader.index.exports.saved(created, str(aside.resolve())) is not None:
            with contextlib.suppress(OSError):  # (imported: its sessions are in the log)
                aside.unlink()
            return ()
        what = (
            f"gptme's bandit finished a save of {self.state_path.name} after lesson-credit had taken it for one that "
            f"crashed half-way (paused over {saving.SAVE_WINDOW_S:g} s) and replaced the file"
        )
        with contextlib.suppress(OSError):
            mine, state = os.stat(self.state_path), interop.read_state(self.state_path)
            if put_back and state and interop.written_by_us(state) and saving.put_back(self.state_path, text, mine):
                aside.unlink()
                return (f"{what}: that save is put back at the file's name",)
        return (
            f"{what}: it is kept at {aside}, in neither the file nor the log (`lesson-credit import-gptme {aside}` "
            "logs its sessions)",
        )

    def _held_path(self) -> Path:
        """Where the own file found to be a save of one load that cannot be told (TwoLoads) is kept, as the base of
        gptme's later saves of it (`_held`)."""
        return self.state_dir / ".cache" / "bandit-state-held"

    def _held(self, state: dict[str, Any]) -> HeldBase | TwoLoads | None:
        """Of the own file `state`, what is kept of it as a save of one load that cannot be told (`_hold`): the base
        gptme's sessions saved onto it since are logged over (HeldBase: the file grew from it by gptme's updates, as a
        copy of ours is grown from: `grows_from`, an arm made again counted from Beta(1, 1)), or, when it is that
        file still (nothing added since), why it is kept (TwoLoads). None: none kept for it (caches off, another
        `created` or path; a save of that `created` logged after it was kept, by an import of a copy or by a `.cache`
        of later: what it logged may be in the file; the file not grown from it): told as before, and held again
        from there when it is still a save that cannot be told."""
        created, own = state.get("created"), str(self.state_path)
        if not isinstance(created, str) or not self._reader.caches:
            return None
        held = self._read_held()
        if held is None or (held.created, held.path) != (created, own):
            return None
        if any(n.created == created and line > held.line for line, n, _ in self._reader.index.exports.history):
            return None
        numbers = _file_numbers(state, own, created)
        if numbers is None or numbers.sessions < held.sessions:
            return None
        made = foreign.MadeAgain(held.stamps, numbers.sessions - held.sessions, created)
        again = {
            key for key, counts in numbers.arms.items()
            if key in held.arms and made.of(key, state["arms"][key], held.arms[key], counts)
        }  # fmt: skip
        arms = {key: foreign.GPTME_NEW_ARM if key in again else counts for key, counts in held.arms.items()}
        base = HeldBase(arms, held.sessions, created, self._records_of_copy(state), held.stamps, why=held.why)
        grown = FileNumbers(own, created, arms, held.sessions)
        if not foreign.grows_from(state, base) or not counted_since(numbers, grown):
            return None
        try:
            added = foreign.increments(state, held.arms, True, made)
        except interop.InteropError:
            return None
        return base if added or numbers.sessions > held.sessions else TwoLoads(held.why)

    def _hold(self, state: dict[str, Any], why: str) -> None:
        """Keep the own file `state`, a save of one load that cannot be told (`why`), as the base of gptme's later
        saves of it (`_held`), best effort (a cache): under the writers' lock (not waited for: the next command
        keeps it) and only while the file is still `state`, with where the log read so far ends (a save of that
        `created` logged after it makes it stale). None with the caches off: those saves go unlogged then."""
        created, own = state.get("created"), str(self.state_path)
        if not isinstance(created, str) or not self._reader.caches:
            return
        numbers = _file_numbers(state, own, created)
        if numbers is None:
            return
        arms = state["arms"]  # (every stamp, ours too: an arm restamped since is an update, `MadeAgain.of`)
        stamps = {key: arm["last_updated"] for key, arm in arms.items() if isinstance(arm.get("last_updated"), str)}
        held = Held(own, created, numbers.arms, numbers.sessions, stamps, why, self._reader.index.lines)
        with contextlib.suppress(StoreError, OSError):
            with self.log.locked(timeout=0):
                if interop.read_state(self.state_path) == state:
                    atomic_write(self._held_path(), seal(HELD_MAGIC, msgspec.json.encode(held)))

    def _held_logged(self, state: dict[str, Any], held: HeldBase | TwoLoads | None, said: tuple[str, ...]) -> None:
        """After gptme's saves onto a save of one load kept as it is (`held`, HeldBase) are logged (`said`), under the
        writers' lock: the file as it is now (`state`) is the base of the next ones, and it is still left as it is,
        StateToReplace saying both (only replacing it puts the log's posteriors back in it)."""
        if not isinstance(held, HeldBase):
            return
        self._hold(state, held.why)
        kept = interop.kept_message(self.state_path, held.why, TWO_LOADS_THEN)
        exc = StateToReplace(" ".join((*said, kept)))
        exc.logged = said
        raise exc

    def _read_held(self) -> Held | None:
        """The file `_hold` kept (None: none, or a damaged one)."""
        where = self._held_path()
        try:
            data = read_opened(open_regular(where, os.O_RDONLY | os.O_NOFOLLOW), where, STATE_MAX_BYTES)
            return msgspec.json.decode(unseal(HELD_MAGIC, data), type=Held)
        except (OSError, UnsafeFile, ValueError, msgspec.DecodeError):
            return None

    def _rebuilt(self, state: dict[str, Any]) -> foreign.Written | str:
        """The numbers of the workspace's own state file `state` that are ours, told arm by arm from the log
        when no copy of what we wrote is left (gptme_files: as an earlier copy's are), or which arm cannot be
        ("" here)."""
        return ""

    def _kept(self, state: dict[str, Any]) -> foreign.Written | None:
        """`_written` from a copy of ours: of the file we wrote that `state` grew from, the copy kept under its
        `created` (or the one copy a version before kept, when it names no other `created`), with those the
        increments events logged from a file of that `created` saw (`_saved`: gptme's bandit saves again from
        what it holds). None: no such copy (caches off or deleted, a copy of another file: never taken for it)."""
        created = state.get("created")
        if isinstance(created, str) and not self._copies_linked():
            copy = self._copy(self._copy_path(created)) or self._copy(self._hashed_copy_path(created))
            if copy is not None and copy.created == created:
                return self._saved(copy, created)
        legacy = self._copy(self._legacy_written_path())
        if legacy is None or legacy.created not in (None, created):
            return None
        return self._saved(legacy, created) if isinstance(created, str) else legacy

    def _saved(self, copy: foreign.Written, created: str) -> foreign.Written:
        """The copy of the file of `created` we wrote, with what the log holds of gptme's saves of it
        since (the numbers an increments event logged from it saw, absolute: a `.cache` restored from
        before that event, or a copy not kept after it, never counts its increments twice)."""
        saved = self._reader.index.exports.saved(created, str(self.state_path))
        if saved is None:
            return copy
        stamps = None
        if copy.stamps is not None:  # (a key that event saw: gptme's stamp there, when it logged one)
            stamps = {key: stamp for key, stamp in copy.stamps.items() if key not in saved.arms} | saved.stamps
        return foreign.Written({**copy.arms, **saved.arms}, saved.sessions, created, copy.records, stamps, copy.origin)

    def _records_of_copy(self, state: dict[str, Any]) -> Any:
        """The records the copy of the file of ours that `state` grew from names (interop.RECORDS_KEY; None: no
        copy, or it names none)."""
        created = state.get("created")
        if not isinstance(created, str) or self._copies_linked():
            return None
        copy = self._copy(self._copy_path(created))
        return copy.records if copy is not None and copy.created == created else None

    def _seen(self, state: dict[str, Any], changed: list[str]) -> FileNumbers | None:
        """What an increments event logged from the state file `state` says it saw there (`_saved` reads
        it back): the numbers of the keys another tool changed that it logs (`changed`), its `created` and
        total_sessions. None: a file without a `created` (nothing to know it again by)."""
        created = state.get("created")
        if not isinstance(created, str):
            return None
        counts, stamps = foreign.file_counts(state, changed), foreign.file_stamps(state, changed)
        return FileNumbers(str(self.state_path), created, counts, interop.file_sessions(state), stamps)

    def _copy(self, where: Path, cached: bool = True) -> foreign.Written | None:
        """The numbers a copy at `where` holds (None: no copy, or a damaged one, or a cache's with the
        caches off; `cached` False: a copy an earlier version kept of an export, in `exports/`)."""
        if cached and not self._reader.caches:
            return None
        try:
            if cached:  # a cache is never read through a symbolic link (we make none)
                data = read_opened(open_regular(where, os.O_RDONLY | os.O_NOFOLLOW), where, STATE_MAX_BYTES)
            else:
                data = read_regular(where, STATE_MAX_BYTES)
            return foreign.read_written_copy(data)
        except (OSError, UnsafeFile, ValueError):
            return None


class Held(Struct, frozen=True):
    """The own state file as `_hold` kept it: a save of one load that cannot be told (`why`), the base of gptme's later
    saves of it; `line`, where the log read then ended (a save of that `created` logged after it: not that base)."""

    path: str
    created: str
    arms: dict[str, foreign.Counts]
    sessions: int
    stamps: dict[str, str]
    why: str
    line: int


class HeldBase(foreign.Written, frozen=True):
    """The base of gptme's saves onto a save of one load kept as it is (`_held`): the file as kept, and why it is."""

    why: str = ""


class TwoLoads(str):
    """Why the own file's update is not logged: it may hold a logged save's update or not (`_two_loads`)."""

    __slots__ = ()


class TwoLoadsError(interop.InteropError):
    """`foreign_increments`' refusal of a file that may hold a logged save's update or not (TwoLoads, its why)."""


# what becomes of such a file, and what the user can do: nothing in it tells one session from two (the file is the
# load plus the same updates either way: its numbers, stamps and total_sessions alike), so it is kept until replaced;
# gptme's sessions saved onto it meanwhile are logged over it (`_held`; a file of ours kept so has its copy: the caches
# are on)
TWO_LOADS_THEN = (
    "no rule can take it without counting a session twice or losing one, and gptme's sessions saved to it from now on "
    "are logged over it as it is, but the log's own no longer reach it: replace it with the log's posteriors "
    "(`lesson-credit export-gptme` onto it, or delete it for the next write to write it), the sooner the better: the "
    "sessions it holds that the log lacks are lost then, none counted twice"
)


def _copy_time(name: str) -> dt.datetime:
    """The `created` a copy is named by (COPY_NAME), as a time (`strptime` would import its module: 12 ms)."""
    return dt.datetime.fromisoformat(f"{name[:13]}:{name[14:16]}:{name[17:]}")


def _file_numbers(state: dict[str, Any], own: str, created: str) -> FileNumbers | None:
    """The own file `state`'s numbers as a save of `created` (None: a malformed file, which the increments refuse)."""
    try:
        arms = state["arms"]
        counts, stamps = foreign.file_counts(state, arms), foreign.file_stamps(state, arms)
        return FileNumbers(own, created, counts, interop.file_sessions(state), stamps)
    except (TypeError, ValueError, AttributeError, KeyError, OverflowError, interop.InteropError):
        return None
