"""Another tool's update of the workspace's `bandit-state.json` (gptme's bandit loads the file, adds a
session's update, saves it): what it added over the numbers of the file of ours it grew from, sealed
in a copy under the file's `created` (`.cache/bandit-state-copies/`), and over those the log's earlier
increments events saw there (`seen`), logged as an increments event (docs/format.md §5.5). A file
`export-gptme` wrote elsewhere: its numbers logged (an export event, §5.8), the base of its import."""

from __future__ import annotations

import datetime as dt
import math
import re
from collections.abc import Callable, Iterable
from typing import Any

import msgspec
from msgspec import Struct

from lesson_credit.core.bandit.interop import (
    MAX_COUNT,
    RECORDS_KEY,
    ArmGone,
    InteropError,
    arm_number,
    file_sessions,
    shown_number,
)
from lesson_credit.core.base.sealed import seal, unseal
from lesson_credit.core.log.events import EXPORT, FileNumbers

WRITTEN_MAGIC = b"lesson-credit state-written 2\n"  # a copy of the numbers of a file we wrote
OLD_WRITTEN_MAGIC = b"lesson-credit state-written 1\n"  # its arms only (no total_sessions)
GPTME_BANDIT = "gptme-bandit"  # the source of the increments logged from gptme's update of the file
Counts = tuple[float, float, int, int]  # alpha, beta, total_selections, total_rewards
Counts3 = tuple[float, float, int]  # alpha, beta, total_selections


class Written(Struct, frozen=True):
    """The numbers of a state file as we wrote it: per key, and its total_sessions (None: a copy kept
    before copies held it)."""

    arms: dict[str, Counts]
    sessions: int | None
    created: str | None = None  # the file's `created` (gptme keeps it): another file in its place has its own
    records: Any = None  # what the file named as its rewards' records (interop.RECORDS_KEY): gptme's save drops it
    # per key, its `last_updated` as written (None: a copy kept before copies held them): an arm gptme's bandit made
    # again after its prune bears another (`increments`)
    stamps: dict[str, str] | None = None
    # the copy of ours a copy of gptme's save replaced (`written_copy`): the file every process that loaded it grew
    # from, the base of a save from that load beside the one logged (docs/format.md §7 *Two saves of one load*)
    origin: Written | None = None


def written_copy(payload: dict[str, Any], origin: Written | None = None) -> bytes:
    """The sealed copy of the numbers of a state file we write (the base of increments); `origin`, with gptme's save
    of a file of ours kept in place of its copy: that copy's numbers (`Written.origin`)."""
    arms = payload.get("arms") or {}
    numbers = {
        key: [arm["alpha"], arm["beta"], arm["total_selections"], arm["total_rewards"]] for key, arm in arms.items()
    }
    created = payload.get("created")
    stamps = {key: arm["last_updated"] for key, arm in arms.items() if isinstance(arm.get("last_updated"), str)}
    copy = {"arms": numbers, "total_sessions": file_sessions(payload), "created": created, "stamps": stamps}
    if not isinstance(created, str):
        copy["created"] = None
    if (records := payload.get(RECORDS_KEY)) is not None:
        copy["records"] = records
    if origin is not None and origin.sessions is not None:
        was = {key: list(counts) for key, counts in origin.arms.items()}
        copy["origin"] = {"arms": was, "total_sessions": origin.sessions, "stamps": origin.stamps or {}}
    return seal(WRITTEN_MAGIC, msgspec.json.encode(copy))


def read_written_copy(data: bytes) -> Written:
    """The numbers `written_copy` sealed (or an older copy's, of arms only); ValueError when it is
    damaged or not one."""
    try:
        created = records = stamps = origin = None
        if data.startswith(OLD_WRITTEN_MAGIC):
            numbers, sessions = msgspec.json.decode(unseal(OLD_WRITTEN_MAGIC, data)), None
        else:
            copy = msgspec.json.decode(unseal(WRITTEN_MAGIC, data))
            numbers, sessions, created = copy["arms"], int(copy["total_sessions"]), copy.get("created")
            records, stamps = copy.get("records"), copy.get("stamps")
            if isinstance(was := copy.get("origin"), dict):
                origin = Written(_arms(was["arms"]), int(was["total_sessions"]), stamps=_stamps(was["stamps"]))
        told = _stamps(stamps) if isinstance(stamps, dict) else None
        return Written(_arms(numbers), sessions, created if isinstance(created, str) else None, records, told, origin)
    except (msgspec.DecodeError, TypeError, ValueError, AttributeError, KeyError) as exc:
        raise ValueError(f"not a copy of a state file ({exc})") from None


def _arms(numbers: dict[str, Any]) -> dict[str, Counts]:
    return {str(key): (float(a), float(b), int(n), int(r)) for key, (a, b, n, r) in numbers.items()}


def _stamps(stamps: dict[str, Any]) -> dict[str, str]:
    return {str(key): str(stamp) for key, stamp in stamps.items()}


def sessions_added(state: dict[str, Any], written: Written) -> int:
    """The sessions another tool counted in the state file since we wrote `written` (0 when the copy
    does not say, or the count did not go up)."""
    if written.sessions is None:
        return 0
    return max(0, file_sessions(state) - written.sessions)


GPTME_NEW_ARM: Counts = (1.0, 1.0, 0, 0)  # an arm gptme's bandit creates starts at Beta(1, 1)


def increments(
    state: dict[str, Any],
    written: dict[str, Counts],
    pruned: bool = False,
    made_again: MadeAgain | None = None,
) -> dict[str, Counts]:
    """Per key, what another tool added to the state file since we wrote `written` (arms it did not
    change left out; an arm it created counts from Beta(1, 1)). InteropError (why, one line) when the
    file is not `written` plus increments: an arm gone, a number that went down, a count not whole, alpha or beta
    moved with no selection (each update of gptme's adds one). `pruned`: an arm gone is no refusal (the workspace's
    own file, whose arms gptme's `prune` drops: one never selected, or not updated in 90 days, holds no update of
    gptme's, and the log holds ours). `made_again`: an arm gptme's bandit pruned, then made again (`MadeAgain`),
    counts from Beta(1, 1)."""
    arms = state.get("arms")
    if not isinstance(arms, dict):
        raise InteropError("it has no 'arms' object")
    gone = sorted(set(written) - set(arms))
    if gone and not pruned:
        alpha, beta, n, rewards = written[gone[0]]
        raise ArmGone(
            f"it lacks {gone[0]}, which lesson-credit wrote as alpha {shown_number(alpha)}, beta "
            f"{shown_number(beta)}, {n} selections, {rewards} rewards"
        )
    added: dict[str, Counts] = {}
    for key, entry in arms.items():
        if not isinstance(entry, dict):
            raise InteropError(f"arm {key} is not an object")
        was = written.get(key, GPTME_NEW_ARM)
        now = tuple(
            arm_number(entry.get(name, default), name, key)
            for name, default in zip(_COUNT_KEYS, GPTME_NEW_ARM, strict=True)
        )
        if made_again is not None and key in written and made_again.of(key, entry, was, now):
            was = GPTME_NEW_ARM
        delta: list[float] = []
        for name, before, number in zip(_COUNT_KEYS, was, now, strict=True):
            step = 0.0 if math.isclose(number, before, rel_tol=1e-12, abs_tol=1e-12) else number - before
            if step < 0 or (name.startswith("total_") and (step != int(step) or step >= MAX_COUNT)):
                raise InteropError(
                    f"{key} {name} went from {shown_number(before)} to {shown_number(number)}: not an update on top "
                    "of what lesson-credit wrote"
                )
            delta.append(step)
        if (delta[0] or delta[1]) and not delta[2]:  # (no update of gptme's bandit: each adds a selection)
            raise InteropError(
                f"{key} alpha went from {shown_number(was[0])} to {shown_number(now[0])} and beta from "
                f"{shown_number(was[1])} to {shown_number(now[1])} with no selection added: not an update of gptme's "
                "bandit on top of what lesson-credit wrote"
            )
        if any(delta):
            added[key] = (delta[0], delta[1], int(delta[2]), int(delta[3]))
    return added


class MadeAgain(Struct, frozen=True):
    """Which arms of the workspace's own state file gptme's bandit pruned, then made again (docs/format.md §7
    *Made again*): its `prune` drops an arm (not updated in `max_age_days`, or with at most `min_selections`
    selections: both its options, so any arm), and a session of its own drawing that lesson then makes it at
    Beta(1, 1) (`get_or_create_arm`) and updates it, so the arm holds gptme's sessions alone. Told so (`told`)
    against what we wrote (the copy's numbers, or with no copy every reading of the log as of our write): gptme
    stamped it after our write (its clock's form, later than the file's `created`, `created`: gptme keeps it), its
    numbers are no reading of what we wrote plus whole updates (each adds r to alpha, 1 - r to beta and one
    selection), and they are an arm gptme's bandit made: alpha + beta is 2 + total_selections (its arms start at 1
    and 1, and each update adds 1 in all, decay aside), with no more selections than the sessions gptme counted
    since (`sessions`: each session selects an arm once)."""

    stamps: dict[str, str]
    sessions: int
    created: str | None = None
    # with no copy left: per key, the stamps of gptme's the log's increments events saw (`seen`), and the keys one saw
    # without a stamp (a version before): an arm stamped otherwise in gptme's form was stamped since our write
    logged: tuple[frozenset[tuple[str, str]], frozenset[str]] | None = None

    def of(self, key: str, entry: dict[str, Any], was: tuple[float, ...], now: tuple[float, ...]) -> bool:
        """An arm of the file with a copy of ours left: `was` as the copy holds it (its stamp `stamps[key]`; a key
        without one, a copy of before: only an arm that changed). A stamp of gptme's form other than the copy's is
        gptme's, put there after our write (the copy is of that very file: its `created`), whatever its time says:
        gptme's bandit on a machine whose clock is behind ours stamps an earlier time."""
        if (ours := self.stamps.get(key)) is not None and entry.get("last_updated") == ours:
            return False
        if ours is None and _same_numbers(was, now):
            return False
        restamped = ours is not None and GPTME_STAMP.fullmatch(str(entry.get("last_updated"))) is not None
        return self.told(entry, lambda: [was], now, restamped)

    def told(
        self,
        entry: dict[str, Any],
        written: Callable[[], Iterable[tuple[float, ...]] | None],
        now: tuple[float, ...],
        restamped: bool = False,
    ) -> bool:
        """Whether the arm `entry`, its numbers `now`, is one gptme's bandit made again, `written()` each reading of
        what we wrote for it (None: not known; a reading at Beta(1, 1) with no selection gives the same increments
        either way, and does not count against it). Read only for an arm gptme stamped since that it could make
        (`restamped`: known so from the copy's stamp; else by its time, `_stamped_since`)."""
        since = restamped or self._stamped_since(entry)
        if not since or not gptme_made(now, self.sessions) or (readings := written()) is None:
            return False
        return not any(
            whole_updates(was[: len(now)], now[: len(was)])
            for was in readings
            if not _same_numbers(was[:3], GPTME_NEW_ARM[:3])
        )

    def unchanged(
        self, entry: dict[str, Any], written: Callable[[], Iterable[tuple[float, ...]] | None], now: tuple[float, ...]
    ) -> bool:
        """Whether the arm `entry`, its numbers `now`, is as we wrote it: stamped in gptme's form before our write
        (its stamp of an update logged before, which our write kept: gptme restamps an arm it updates since) and
        at a reading of what we wrote (`written()`). Not known so when no increments event saw that stamp (`fresh`):
        gptme's arm made again on a clock behind ours, at numbers we wrote, reads so too (said: `_unchanged_said`)."""
        stamp = entry.get("last_updated")
        if not isinstance(stamp, str) or not GPTME_STAMP.fullmatch(stamp) or self._stamped_since(entry):
            return False
        if self._written_at() is None or (readings := written()) is None:
            return False
        return any(_same_numbers(was[:3], now[:3]) for was in readings)

    def fresh(self, key: str, entry: dict[str, Any]) -> bool:
        """Whether the arm `entry` of `key`, in a file whose `created` is a write of ours (to the microsecond), bears a
        stamp of gptme's form that no increments event of the log saw for that key (`logged`; a key one saw without
        a stamp, logged by a version before stamps: not known so). A write of ours keeps a stamp of gptme's only from
        an update it logged, which saw it; so such a stamp is gptme's since our write whatever its clock says, or the
        time of a session of another log (a file copied from another workspace): the two are not told apart."""
        stamp = entry.get("last_updated")
        if self.logged is None or not isinstance(stamp, str) or not GPTME_STAMP.fullmatch(stamp):
            return False
        if not isinstance(self.created, str) or not OUR_CREATED.fullmatch(self.created):
            return False
        seen, unstamped = self.logged
        return key not in unstamped and (key, stamp) not in seen

    def _written_at(self) -> dt.datetime | None:
        """The file's `created` (the time of our write) as an aware time; None when it is none."""
        if not isinstance(self.created, str):
            return None
        try:
            written = dt.datetime.fromisoformat(self.created)
        except (TypeError, ValueError):
            return None
        return written if written.tzinfo else written.replace(tzinfo=dt.UTC)

    def _stamped_since(self, entry: dict[str, Any]) -> bool:
        """Whether gptme's bandit stamped the arm after our write: its clock's form (`GPTME_STAMP`), a time later than
        the file's `created` (a file copied from another workspace bears that one's stamps, from before its write)."""
        stamp = entry.get("last_updated")
        if not isinstance(stamp, str) or not GPTME_STAMP.fullmatch(stamp) or (written := self._written_at()) is None:
            return False
        try:
            return dt.datetime.fromisoformat(stamp) > written
        except ValueError:
            return False


def whole_updates(was: tuple[float, ...], now: tuple[float, ...]) -> bool:
    """Whether the numbers `now` are `was` plus one or more updates of gptme's bandit (each: alpha + r, beta + 1 - r,
    one selection, a reward when r > 0.5; the rewards compared when both give them)."""
    d_alpha, d_beta, d_n, *d_r = (after - before for before, after in zip(was, now, strict=True))
    tol = 1e-9 * max(1.0, abs(now[0]) + abs(now[1]))
    moved = d_n >= 1 and d_alpha >= -tol and d_beta >= -tol and abs(d_alpha + d_beta - d_n) <= tol
    return moved and all(0 <= step <= d_n for step in d_r)


def grows_from(state: dict[str, Any], written: Written, keys: Iterable[str] | None = None) -> bool:
    """Whether the state file `state` may be `written` (numbers and gptme's stamps, per key) plus updates of gptme's
    bandit: each arm at its numbers (under its stamp when `written` holds one of gptme's there: gptme never restamps
    without an update) or past them by whole updates (`whole_updates`); an arm gone (gptme's prune) says nothing.
    True too for what `increments` refuses (a number not one): not for this to tell. `keys`: those alone (what an
    increments event saw, `seen`: the keys that save changed)."""
    arms, stamps = state.get("arms"), written.stamps or {}
    if not isinstance(arms, dict):
        return True
    for key in arms if keys is None else keys:
        if (entry := arms.get(key)) is None:
            continue
        if not isinstance(entry, dict):
            return True
        try:
            now = tuple(
                arm_number(entry.get(name, default), name, key)
                for name, default in zip(_COUNT_KEYS, GPTME_NEW_ARM, strict=True)
            )
        except InteropError:
            return True
        was = written.arms.get(key, GPTME_NEW_ARM)
        if _same_numbers(was, now):
            told = stamps.get(key)
            if told is not None and GPTME_STAMP.fullmatch(told) and entry.get("last_updated") != told:
                return False  # (another session's update: the file holds that one, not this)
        elif not whole_updates(was, now):
            return False
    return True


def gptme_made(now: tuple[float, ...], sessions: int) -> bool:
    """Whether the numbers `now` are an arm gptme's bandit made at Beta(1, 1) and updated at most `sessions` times."""
    alpha, beta, n, rewards = now
    tol = 1e-9 * max(1.0, abs(alpha) + abs(beta))
    return (
        1 <= n <= sessions
        and alpha >= 1 - tol
        and beta >= 1 - tol
        and abs(alpha + beta - 2 - n) <= tol
        and (0 <= rewards <= n)
    )


def _same_numbers(was: tuple[float, ...], now: tuple[float, ...]) -> bool:
    return all(math.isclose(a, b, rel_tol=1e-12, abs_tol=1e-12) for a, b in zip(was, now, strict=True))


_COUNT_KEYS = ("alpha", "beta", "total_selections", "total_rewards")


def _counts(arms: dict[str, Counts]) -> dict[str, dict[str, float | int]]:
    return {arm: {"alpha": a, "beta": b, "n": n, "rewards": r} for arm, (a, b, n, r) in arms.items()}


def increments_event(
    arms: dict[str, Counts],
    timestamp: str,
    sessions: int = 0,
    source: str = GPTME_BANDIT,
    seen: FileNumbers | None = None,
) -> dict[str, Any]:
    """The log's record of another tool's increments (docs/format.md §5.5): a prior event that adds;
    `sessions`, the sessions it counted meanwhile (written when not 0); `seen`, from a file `export-gptme`
    wrote: the numbers of its keys that changed, as the file has them now (the base of its next import)."""
    event = {"type": "prior", "increments": True, "source": source, "timestamp": timestamp, "arms": _counts(arms)}
    if sessions:
        event["sessions"] = sessions
    if seen is not None:
        event["seen"] = _plain(seen)
    return event


def exported_numbers(payload: dict[str, Any], path: str) -> FileNumbers:
    """The numbers of the state file `payload` that `export-gptme` writes at `path`, per key as written,
    its `created` (gptme keeps it: how the file is known again) and total_sessions."""
    arms = payload.get("arms") or {}
    numbers = {
        key: (arm["alpha"], arm["beta"], arm["total_selections"], arm["total_rewards"]) for key, arm in arms.items()
    }
    return FileNumbers(path, payload["created"], numbers, file_sessions(payload))


def export_event(numbers: FileNumbers, timestamp: str) -> dict[str, Any]:
    """The log's record of what `export-gptme` wrote to a file other than the workspace's own
    (docs/format.md §5.8): no evidence, the base of a later import of that file."""
    return {"type": EXPORT, "timestamp": timestamp, **_plain(numbers)}


def _plain(n: FileNumbers) -> dict[str, Any]:
    arms: dict[str, dict[str, Any]] = dict(_counts(n.arms))
    for key, stamp in n.stamps.items():  # (a `seen`'s: gptme's stamp of each arm, docs/format.md §5.5)
        if key in arms:
            arms[key] = {**arms[key], "stamp": stamp}
    return {"path": n.path, "created": n.created, "arms": arms, "sessions": n.sessions}


# gptme's bandit stamps an arm it updates with its clock's isoformat, aware, to the microsecond (`+00:00`)
GPTME_STAMP = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}\+00:00")
OUR_CREATED = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z")  # a `created` we write


def file_stamps(state: dict[str, Any], keys: Iterable[str]) -> dict[str, str]:
    """Per key of `keys` in the state file `state` whose arm bears a stamp of gptme's bandit's clock (`GPTME_STAMP`):
    that stamp (an update of gptme's, that one: another session's would bear another microsecond)."""
    arms = state["arms"]
    found: dict[str, str] = {}
    for key in keys:
        stamp = arms[key].get("last_updated") if isinstance(arms.get(key), dict) else None
        if isinstance(stamp, str) and GPTME_STAMP.fullmatch(stamp):
            found[key] = stamp
    return found


def file_counts(state: dict[str, Any], keys: Iterable[str]) -> dict[str, Counts]:
    """The numbers of `keys` in the state file `state`, as `increments` read them (a field it lacks at
    gptme's default for a new arm)."""
    arms = state["arms"]
    found: dict[str, Counts] = {}
    for key in keys:
        a, b, n, r = (arms[key].get(name, default) for name, default in zip(_COUNT_KEYS, GPTME_NEW_ARM, strict=True))
        found[key] = (float(a), float(b), int(n), int(r))
    return found


def written_of(numbers: FileNumbers) -> Written:
    """What an exported file holds as far as the log knows, as the base of its increments."""
    return Written(numbers.arms, numbers.sessions, numbers.created)
