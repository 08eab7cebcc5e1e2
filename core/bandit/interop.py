"""gptme-sessions interop: import a `bandit-state.json` as a prior event, export posteriors in its shape.

gptme-sessions' loader builds each arm from exactly `arm_id, alpha, beta, total_selections,
total_rewards, last_updated` and treats any other key as a corrupt file (it starts over and
overwrites it), so the export writes exactly those keys per arm.

The workspace's own `bandit-state.json` is shared: gptme's bandit may update it too. Each file we
write carries STAMP_KEY at the top level (gptme's loader ignores top-level keys it does not know,
and its save drops them), a hash of everything else in it. A file whose stamp no longer matches,
or that has none, was changed by someone else since; when it also disagrees with the log, it holds
another tool's learning and is left as it is (`StateKept`, a warning) instead of being overwritten.
"""

from __future__ import annotations

import math
import os
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from msgspec import Struct
from msgspec.structs import replace

from lesson_credit.core.bandit.arm_count import ARM_KEYS, bytes_have_more_arms
from lesson_credit.core.bandit.fold import Posterior
from lesson_credit.core.bandit.saving import StateChanged as StateChanged
from lesson_credit.core.bandit.saving import StateKept as StateKept
from lesson_credit.core.bandit.saving import StateSaving as StateSaving
from lesson_credit.core.bandit.saving import (
    aside_path,
    check_unchanged,
    file_bytes,
    guarded_rename,
    unsaved_bytes,
    wait_out,
)
from lesson_credit.core.bandit.stamps import gptme_time
from lesson_credit.core.bandit.state_reading import MAX_TOP_KEYS as MAX_TOP_KEYS
from lesson_credit.core.bandit.state_reading import STAMP_KEY as STAMP_KEY
from lesson_credit.core.bandit.state_reading import arms_past as arms_past
from lesson_credit.core.bandit.state_reading import decode_state, more_members
from lesson_credit.core.bandit.state_reading import layout as layout
from lesson_credit.core.bandit.state_reading import never_read as never_read
from lesson_credit.core.bandit.state_reading import read_state as read_state
from lesson_credit.core.bandit.state_reading import state_stamp as state_stamp
from lesson_credit.core.bandit.state_reading import written_by_us as written_by_us
from lesson_credit.core.base.canonical import canonical_json as canonical_json
from lesson_credit.core.base.errors import UserError
from lesson_credit.core.base.files import StoreError, WriteGuard, write_json
from lesson_credit.core.base.ids import library_spellings, normalize_id, one_form
from lesson_credit.core.base.safe_json import JsonError, decode_json
from lesson_credit.core.base.safe_read import STATE_MAX_BYTES, UnsafeFile, read_capped, read_regular
from lesson_credit.core.library.lessons import Library

MAX_COUNT = 2**53  # counts beyond this are not whole numbers as floats, and overflow the fold's int64
# arms of a file to import: a library is hundreds of lessons (the bench's largest, 10,000). A million arms (a 150 MB
# file) took 80 s and 2.6 GB to import, and every command after it ran out of 3 GB; 100,000 take about 9 s, once
MAX_IMPORT_ARMS = 100_000

EXPORT_ARM_KEYS = ("arm_id", "alpha", "beta", "total_selections", "total_rewards", "last_updated")


class InteropError(UserError):
    pass


class ArmGone(InteropError):
    """An arm lesson-credit wrote is gone from a file another tool saved (gptme's `prune` drops arms never
    selected or not updated in 90 days): its updates, if any, are not there to read."""


class ImportedArm(Struct, frozen=True):
    source_id: str  # as written in the file
    lesson_id: str  # as logged
    alpha: float
    beta: float
    n: int
    rewards: int
    matched: bool  # the id names a lesson of the library


class ImportReport(Struct, frozen=True):
    path: str
    arms: tuple[ImportedArm, ...]
    skipped: str | None = None  # why nothing was imported (its evidence is in the log already)
    sessions: int = 0  # the file's total_sessions: the sessions its bandit counted

    @property
    def unmatched(self) -> list[ImportedArm]:
        return [arm for arm in self.arms if not arm.matched]

    def prior(self) -> tuple[dict[str, tuple[float, float, int]], dict[str, int]]:
        """(alpha, beta, n) per lesson id, and the reward counts that are not 0: a prior event's content."""
        arms = {arm.lesson_id: (arm.alpha, arm.beta, arm.n) for arm in self.arms}
        return arms, {arm.lesson_id: arm.rewards for arm in self.arms if arm.rewards}


class ArmMapper:
    """gptme arm ids to library ids (`map`), for one library: its ids and, per path suffix that
    starts after a `/`, the ids ending in it, so a suffix match costs a few lookups, not a pass over
    the library (an import of 40,000 arms made one per arm)."""

    def __init__(self, library_ids: Iterable[str], roots: tuple[str, ...]) -> None:
        self.ids = set(library_ids)
        self.roots = roots
        self._forms = library_spellings(self.ids)  # an id in another Unicode form than the library's: its lesson
        self._ending: dict[str, list[str]] = {}
        for known in self.ids:
            parts = one_form(known).split("/")
            for j in range(1, len(parts)):
                self._ending.setdefault("/".join(parts[j:]), []).append(known)

    def _known(self, lesson_id: str) -> str | None:
        """The library's id `lesson_id` names, as it is or in another Unicode form (none for ASCII); None: none."""
        return lesson_id if lesson_id in self.ids else self._forms.get(one_form(lesson_id))

    def map(self, raw: str, taken: set[str] | frozenset[str] = frozenset()) -> tuple[str, bool]:
        """A gptme arm id to a library id: an absolute path relative to a root, else `normalize_id`'s,
        and as a last resort match by path suffix, unless another arm names that lesson exactly
        (`taken`): a moved lesson keeps its old evidence under its old id. Returns (id, matched)."""
        text = raw.replace("\\", "/")
        if text.startswith("/"):
            for root in self.roots:
                prefix = root.rstrip("/") + "/"
                if text.startswith(prefix):
                    candidate = text[len(prefix) :]
                    known = self._known(candidate)
                    return (candidate, False) if known is None else (known, True)
        lesson_id = normalize_id(text)  # (an absolute path: the part after its last `lessons` folder)
        if (known := self._known(lesson_id)) is not None:
            return known, True
        # known ids that end in "/" + lesson_id, and lesson_id's own suffixes that are known ids
        pieces = lesson_id.split("/")
        ending = [self._known("/".join(pieces[j:])) for j in range(1, len(pieces))]
        suffix_matches = {known for known in self._ending.get(one_form(lesson_id), ()) if known not in taken}
        suffix_matches |= {known for known in ending if known is not None and known not in taken}
        if len(suffix_matches) == 1:
            return suffix_matches.pop(), True
        return lesson_id, False


def map_arm_id(
    raw: str, library_ids: set[str], roots: tuple[str, ...], taken: set[str] | frozenset[str] = frozenset()
) -> tuple[str, bool]:
    """`ArmMapper.map` for one id (a mapper per call: for many ids, make one ArmMapper)."""
    return ArmMapper(library_ids, roots).map(raw, taken)


def arm_number(value: Any, what: str, arm: str) -> float:
    """An arm's number as a float; InteropError (one line naming the arm) when it is not a finite number."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise InteropError(f"arm {arm!r}: {what} must be a finite number, got {value!r}")
    return float(value)


def read_bandit_state(path: Path, ids: set[str], roots: tuple[str, ...], raw: bytes | None = None) -> ImportReport:
    """Parse a gptme `bandit-state.json` (`raw`: its bytes, read already); extra keys tolerated, bad values refused."""
    try:
        raw = read_capped(path, STATE_MAX_BYTES) if raw is None else raw
    except FileNotFoundError:
        raise InteropError(f"not found: {path}") from None
    except UnsafeFile as exc:
        raise InteropError(str(exc)) from None
    except OSError as exc:
        raise InteropError(f"cannot read {path}: {exc.strerror}") from None
    if not raw.strip():  # (a pipe no one writes to reads as nothing: not "truncated JSON")
        raise InteropError(f"{path}: empty; expected a gptme bandit-state.json")
    check_arm_count(path, raw)
    if more_members(raw):  # (each kept apart: 2,000,000 took 1.2 s and 310 MB)
        raise InteropError(f"{path}: more than {MAX_TOP_KEYS:,} top-level keys; gptme's bandit writes 5")
    try:  # (its keys lesson-credit does not read kept as bytes: gptme's contextual arms, never decoded)
        data = decode_state(raw, path)
        data = decode_json(raw, path) if data is None else data  # (no object: what it is, said)
    except JsonError as exc:
        raise InteropError(str(exc)) from None
    if not isinstance(data, dict) or not isinstance(data.get("arms"), dict):
        raise InteropError(f"{path}: expected an object with an 'arms' object (gptme bandit-state.json)")
    check_arm_count(path, b"", data)
    arms = []
    mapper = ArmMapper(ids, roots)
    for key, entry in data["arms"].items():
        if not isinstance(entry, dict):
            raise InteropError(f"{path}: arm {key!r} is not an object")
        source = entry.get("arm_id") or entry.get("lesson_path") or key
        if not isinstance(source, str):
            raise InteropError(f"{path}: arm {key!r} has a non-string id")
        alpha = arm_number(entry.get("alpha", 1.0), "alpha", source)
        beta = arm_number(entry.get("beta", 1.0), "beta", source)
        if not (alpha > 0 and beta > 0 and math.isfinite(alpha + beta)):
            raise InteropError(f"{path}: arm {source!r}: alpha and beta must be positive, with a finite sum")
        n = arm_number(entry.get("total_selections", 0), "total_selections", source)
        rewards = arm_number(entry.get("total_rewards", 0), "total_rewards", source)
        if not (0 <= n < MAX_COUNT and 0 <= rewards < MAX_COUNT):
            raise InteropError(f"{path}: arm {source!r}: counts must be in [0, 2**53)")
        lesson_id, matched = mapper.map(source, mapper.ids)  # exact only
        if not lesson_id:
            raise InteropError(f"{path}: arm {source!r} names no lesson once 'lessons/' is stripped")
        arms.append(ImportedArm(source, lesson_id, alpha, beta, int(n), int(rewards), matched))
    # Then the suffix fallback, never onto a lesson another arm of the file names exactly
    # (a moved lesson keeps its old evidence under the old id).
    taken = {arm.lesson_id for arm in arms if arm.matched}
    for i, arm in enumerate(arms):
        if not arm.matched:
            lesson_id, matched = mapper.map(arm.source_id, taken)
            if matched:
                taken.add(lesson_id)
                arms[i] = replace(arm, lesson_id=lesson_id, matched=True)
    clashes = sorted(i for i, n in Counter(arm.lesson_id for arm in arms).items() if n > 1)
    if clashes:
        raise InteropError(f"{path}: several arms map to the same lesson: {', '.join(clashes)}")
    return ImportReport(str(path), tuple(arms), sessions=_session_count(data, path))


def check_arm_count(path: Path, raw: bytes, state: dict[str, Any] | None = None) -> None:
    """InteropError when a state file to import (its bytes `raw`; `state` decoded) has more than MAX_IMPORT_ARMS arms:
    told from its bytes before they are decoded, counted that far (arm_count.count_arms), else by the decoded file's."""
    if bytes_have_more_arms(raw, MAX_IMPORT_ARMS):
        raise InteropError(
            f"{path}: more than {MAX_IMPORT_ARMS:,} arms ({ARM_KEYS}); at most {MAX_IMPORT_ARMS:,} are imported"
        )
    if state is not None and isinstance(arms := state.get("arms"), dict) and len(arms) > MAX_IMPORT_ARMS:
        raise InteropError(f"{path}: {len(arms):,} arms; at most {MAX_IMPORT_ARMS:,} are imported")


def _whole_count(value: Any) -> int | None:
    """A count as a state file holds it: a whole number in [0, 2**53), else None."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value < MAX_COUNT:
        return None
    return int(value) if value == int(value) else None


def _session_count(data: dict[str, Any], path: Path) -> int:
    """A state file's `total_sessions` (0 when absent); InteropError when it is not a count."""
    count = _whole_count(data.get("total_sessions", 0))
    if count is None:
        raise InteropError(
            f"{path}: total_sessions must be a whole number in [0, 2**53), got {data['total_sessions']!r}"
        )
    return count


def file_sessions(state: dict[str, Any]) -> int:
    """The `total_sessions` a state file says (0: none, or not a count): gptme's bandit counts on from
    it, so a rewrite never writes less."""
    return _whole_count(state.get("total_sessions")) or 0


def read_import(path: Path, library: Library, raw: bytes | None = None) -> ImportReport:
    """A gptme `bandit-state.json` (`raw`: its bytes, read already) read for import; refuses one with no arms."""
    report = read_bandit_state(path, {lesson.id for lesson in library.lessons}, library.roots, raw)
    if not report.arms:
        raise InteropError(f"{path}: no arms to import")
    return report


def state_payload(
    post: Posterior,
    stamps: Sequence[str | None],
    now: str,
    existing: dict[str, Any] | None = None,
    keys: Sequence[str] | None = None,
) -> dict[str, Any]:
    """The posteriors in gptme's `bandit-state.json` shape: per arm exactly EXPORT_ARM_KEYS, with
    `last_updated` the time of the arm's latest credited session (`stamps`, None if none) or else `now`,
    each as gptme-sessions reads a time (`stamps.gptme_time`). `keys`: each arm's key (and `arm_id`) in the
    file (`state_keys`; default its id).

    `existing` is the file as it is: its other keys (top-level and per arm), its `created` and an
    arm's own `last_updated` (when no session of ours with a time credited the arm) are kept, that one as
    gptme-sessions reads a time (`now` when it is none)."""
    existing = existing or {}
    old_arms = existing.get("arms") if isinstance(existing.get("arms"), dict) else {}
    assert isinstance(old_arms, dict)
    arms: dict[str, Any] = {}
    columns = zip(post.alpha.tolist(), post.beta.tolist(), post.n.tolist(), post.rewarded.tolist(), strict=True)
    named = post.arm_ids if keys is None else keys
    written_now = gptme_time(now) or now
    for arm, stamp, (alpha, beta, n, rewarded) in zip(named, stamps, columns, strict=True):
        entry = dict(old_arms.get(arm, {})) if isinstance(old_arms.get(arm), dict) else {}
        entry.update(
            arm_id=arm,
            alpha=alpha,
            beta=beta,
            total_selections=n,
            total_rewards=rewarded,
            last_updated=gptme_time(stamp) or gptme_time(entry.get("last_updated")) or written_now,
        )
        arms[arm] = entry
    state = dict(existing)
    state.update(
        arms=arms,
        total_sessions=max(post.total_sessions, file_sessions(existing)),
        created=existing.get("created") or now,
        last_updated=written_now,
    )
    return state


def last_credited(post: Posterior, session_times: Callable[[], Sequence[str | None]]) -> list[str | None]:
    """Per arm: the timestamp of the latest graded session it was credited in (None if none);
    `session_times` gives the log's session timestamps, asked for only when some arm has one."""
    rows = post.last_session.tolist()
    times = session_times() if max(rows, default=-1) >= 0 else []
    # each session looked up once: a session credits all its lessons (10 a record), so arms share their latest
    # (412 sessions for 1,000 arms at a million sessions; a lookup in the cached columns decodes its item)
    found = {row: times[row] for row in set(rows) if row >= 0}
    return [found.get(row) for row in rows]


# the database store the workspace's file was folded from ("database <store id>"; none: the
# workspace's sessions.jsonl). A workspace used with both stores: a write rewrites the file from its
# store, a read (`status`) repairs only a file folded from its own (no rewriting back and forth)
SOURCE_KEY = "lesson_credit_store"
# the `created` of each file whose evidence the posteriors hold as an imported prior: a workspace that wrote one of
# them (an export) refuses to import this file back, its own sessions inside (gptme's bandit drops the key on save)
HOLDS_KEY = "lesson_credit_holds"
# where the rewards of the sessions scored from outside the log came from: {"path": the gptme-sessions records
# file, "sessions": how many took their reward in force from it} (none: no session did). Those rewards are not in
# the log: while none is found there now, the file is left as it is (Workspace.records_missing)
RECORDS_KEY = "lesson_credit_records"


def shown_number(value: Any) -> str:
    """A number for a message: 6 significant digits (3.5199999999999996 is 3.52), anything else as repr."""
    if isinstance(value, float):
        return f"{value:.6g}"
    return repr(value)


def _same(stored: Any, value: float) -> bool:
    if isinstance(stored, bool) or not isinstance(stored, int | float):
        return False
    return math.isclose(float(stored), value, rel_tol=1e-9, abs_tol=1e-12)


def disagreement(
    state: Any, post: Posterior, name: str = "bandit-state.json", keys: Sequence[str] | None = None
) -> str | None:
    """Why a parsed state file disagrees with the posteriors `post` (None when it agrees); `keys`:
    each arm's key in the file (`state_keys`; default its id)."""
    arms = state.get("arms") if isinstance(state, dict) else None
    if not isinstance(arms, dict):
        return f"{name} has no 'arms' object"
    named = post.arm_ids if keys is None else tuple(keys)
    logged = set(named)
    if set(arms) != logged:
        extra, missing = sorted(set(arms) - logged), sorted(logged - set(arms))
        which = f"lacks {missing[0]}" if missing else _extra_key(arms, extra, post.arm_ids, named)
        return f"{name} disagrees with the log: it {which}"
    if _numbers_agree(arms, named, post):
        columns: Iterable[tuple[str, float, float, int]] = ()  # nothing to say about any arm
    else:
        columns = zip(named, post.alpha.tolist(), post.beta.tolist(), post.n.tolist(), strict=True)
    for arm, alpha, beta, n in columns:
        entry = arms[arm]
        if not isinstance(entry, dict):
            return f"{name} disagrees with the log: arm {arm} is not an object"
        for key, value in (("alpha", alpha), ("beta", beta), ("total_selections", n)):
            if not _same(entry.get(key), value):
                shown = f"{shown_number(entry.get(key))} in the file, {shown_number(value)} from the log"
                return f"{name} disagrees with the log: {arm} {key} {shown}"
    stored = state.get("total_sessions")  # more is gptme's count, kept by our rewrites: less is stale
    if isinstance(stored, bool) or not isinstance(stored, int | float) or stored < post.total_sessions:
        shown = f"total_sessions {shown_number(stored)}, {post.total_sessions} counted in the log"
        return f"{name} disagrees with the log: {shown}"
    return None


def _extra_key(arms: dict[str, Any], extra: list[str], arm_ids: Sequence[str], named: Sequence[str]) -> str:
    """What a state file's keys beyond the log's (`extra`, sorted) are: the first naming no lesson of the log, or
    else the log's id of a lesson the file also names by gptme's key (`named`: the key each arm of `arm_ids` is
    written under, gptme's when its bandit made its own), which alone is kept."""
    beside = {arm: key for arm, key in zip(arm_ids, named, strict=True) if arm != key and key in arms}
    strange = next((key for key in extra if key not in beside), None)
    if strange is not None:
        return f"has {strange}, which the log does not"
    key = beside[extra[0]]
    return f"has {extra[0]} beside the key gptme looks that lesson up by, {key}, the one the log's numbers go under"


def _numbers_agree(arms: dict[str, Any], named: Sequence[str], post: Posterior) -> bool:
    """Whether every arm's alpha, beta and total_selections are numbers (not booleans) as `_same` finds
    them equal to the log's, all arms at once; False sends `disagreement` arm by arm, to say which."""
    rows = []
    for arm in named:
        entry = arms[arm]
        if not isinstance(entry, dict):
            return False
        row = (entry.get("alpha"), entry.get("beta"), entry.get("total_selections"))
        if not all(type(value) in (int, float) for value in row):  # (bool is not int here)
            return False
        rows.append(row)
    stored = np.array(rows, dtype=np.float64).reshape(-1, 3)
    logged = np.column_stack([post.alpha, post.beta, post.n]).astype(np.float64)
    # math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12): |a - b| <= max(1e-9 * max(|a|, |b|), 1e-12)
    tolerance = np.maximum(1e-9 * np.maximum(np.abs(stored), np.abs(logged)), 1e-12)
    return bool(np.all(np.abs(stored - logged) <= tolerance))


SAVED_AGAIN = "the next write or `status` takes it up"
KEPT_FOR_GOOD = (
    "the log cannot take it as an update of its own numbers, and replacing the file with the log's posteriors "
    "would lose it"
)


def kept_message(path: Path, why: str, then: str = KEPT_FOR_GOOD) -> str:
    """The warning when another tool's update of the state file is left as it is (`then`: what becomes of it). It
    advises nothing that loses that update (an export onto the file replaces it, gptme's sessions there gone)."""
    return (
        f"{path} was changed by another tool since lesson-credit wrote it ({why}); left as it is, keeping that "
        f"update ({then})"
    )


def state_not_written(exc: StoreError | OSError | MemoryError, path: Path, done: str = "the event is logged") -> str:
    """The warning when `bandit-state.json` could not be rewritten after a write that succeeded
    (a full disk, a read-only folder, a directory in its place, not enough memory to fold the log):
    the next write or `status` does it. `done`: what the write did (an event logged, settings saved)."""
    if isinstance(exc, MemoryError):
        return f"{path}: not rewritten, not enough memory; {done}, and the next write or `status` rewrites it"
    reason = str(exc) if isinstance(exc, StoreError) else f"{path}: {exc.strerror or exc}"
    return f"{reason}; {done}, and the next write or `status` rewrites {path.name}"


def export_target(path: Path | str) -> Path:
    """Where `export-gptme PATH` writes: PATH, or bandit-state.json in it when it is a folder
    (given with a trailing `/`, or existing); a folder that does not exist is refused, not
    written as a file of its name."""
    text = str(path)
    path = Path(path)
    if text.endswith(("/", os.sep)) and not path.is_dir():
        raise InteropError(f"folder not found: {text}")
    target = path / "bandit-state.json" if path.is_dir() else path
    if not target.parent.is_dir():
        raise InteropError(f"folder not found: {target.parent}")
    return target


def refuse_non_state(target: Path, ours: Mapping[Path, str]) -> float:
    """InteropError when `target` is what `export-gptme` must not replace: one of `ours` (the event log,
    its lock file: what each is), there yet or not, or any file but an empty one or a gptme state file
    (a JSON object with an `arms` object, or `{}`), so that a slip in PATH (a lesson, a journal,
    config.toml) never destroys a file. Symbolic links, FIFOs and devices are `refuse_unreplaceable`'s. A save in
    progress there is waited out first (`saving.wait_out`: an empty file mktemp has just made, written when old):
    the seconds waited are returned. A file with more arms than any state file is read with (`never_read`) is
    refused before it is read: whether it holds evidence the log has not cannot be told without decoding it."""
    why = next((what for path, what in ours.items() if target.resolve() == path.resolve()), None)
    if why is None and arms_past(target, most := never_read()):  # (never decoded: whether it holds evidence unlogged)
        raise InteropError(
            f"{target} has more than {most:,} arms ({ARM_KEYS}), more than lesson-credit reads in a state file; not "
            "replaced by export-gptme, nothing exported: name a new file or a folder"
        )
    if why is None:
        waited = wait_out(target)
        try:
            raw = read_regular(target, STATE_MAX_BYTES)
        except FileNotFoundError:
            return waited
        except (OSError, UnsafeFile) as exc:
            raise InteropError(f"{exc}; not replaced by export-gptme") from None
        if not raw.strip():
            return waited
        why = _not_state(raw, target)
        if why is None:
            return waited
    raise InteropError(
        f"{target} is not a gptme bandit-state.json ({why}); not replaced by export-gptme: name a new file or a folder"
    )


def _not_state(raw: bytes, target: Path) -> str | None:
    """Why the bytes `raw` of the file at `target` are not a gptme state file (`refuse_non_state`); None: they are.
    Its keys but "arms" are kept as bytes, never decoded; a document that is no object is decoded (what it is)."""
    if more_members(raw):
        return f"more than {MAX_TOP_KEYS:,} top-level keys"
    try:
        loaded = decode_state(raw, target)
        loaded = decode_json(raw, target) if loaded is None else loaded
    except JsonError:
        unsaved_bytes(target, EXPORT_REFUSED)  # (a save caught half-way: refused for now, not as "not JSON")
        return "not JSON"
    if isinstance(loaded, dict) and (not loaded or isinstance(loaded.get("arms"), dict)):
        return None
    return "a JSON object without an 'arms' object" if isinstance(loaded, dict) else "not a JSON object"


def gptme_state(
    post: Posterior,
    session_times: Callable[[], Sequence[str | None]],
    now: str,
    existing: dict[str, Any] | None = None,
    keys: Sequence[str] | None = None,
) -> dict[str, Any]:
    """`state_payload` with each arm's `last_updated` from the log's session times (`last_credited`)."""
    return state_payload(post, last_credited(post, session_times), now, existing, keys)


def absolute_keys(state: dict[str, Any]) -> bool:
    """Whether a state file names its arms by absolute paths (gptme's Claude Code hook writes them so,
    and looks arms up so): then we write absolute keys too."""
    arms = state.get("arms")
    return isinstance(arms, dict) and any(isinstance(key, str) and key.startswith("/") for key in arms)


def state_keys(arm_ids: Sequence[str], paths: dict[str, str], absolute: bool) -> tuple[str, ...]:
    """Each arm's key in the state file: its id, or with `absolute` its lesson file's absolute path
    (`paths`, by id; an arm without a file in the library keeps its id)."""
    if not absolute:
        return tuple(arm_ids)
    return tuple(paths.get(arm) or arm for arm in arm_ids)


def rewrite_state(
    path: Path,
    payload_of: Callable[[dict[str, Any]], dict[str, Any]],
    guard: WriteGuard | None = None,
    posterior: Callable[[], Posterior] | None = None,
    keys_of: Callable[[dict[str, Any]], Sequence[str]] | None = None,
    before_write: Callable[[dict[str, Any]], None] | None = None,
    was: bytes | None = None,
) -> None:
    """Rewrite the state file at `path` atomically from what it holds now (`read_state`), stamped.
    With `posterior`: StateKept, and the file left as it is, when another tool changed it since we
    wrote it (no matching stamp) and it disagrees with those posteriors (its arms named by `keys_of`).
    `before_write` is given the payload before the file is replaced (to keep a copy of it). `was`: the
    bytes the caller decided on (`state_bytes`, before logging another tool's increments from them):
    StateChanged when the file is not those bytes any more (default: the file as this call reads it);
    StateSaving, nothing replaced, while another tool is saving it (core/bandit/saving.py)."""
    before = (file_bytes(path) or b"") if was is None else was
    existing = read_state(path)
    if existing and posterior is not None and not written_by_us(existing):
        why = disagreement(existing, posterior(), path.name, None if keys_of is None else keys_of(existing))
        if why is not None:
            raise StateKept(kept_message(path, why))
    payload = payload_of(existing)
    payload[STAMP_KEY] = state_stamp(payload)

    def changed() -> StateChanged:  # saved by another tool meanwhile: replacing it would drop its update
        return StateChanged(kept_message(path, "saved again while lesson-credit rewrote it", SAVED_AGAIN))

    then = f"left to that writer, and the next command brings {path.name} up to date"  # (StateSaving)
    check_unchanged(path, before, changed, then)
    if before_write is not None:
        before_write(payload)
    write_json(path, payload, guard=guard, rename=guarded_rename(before, changed, then, aside_path(path)))


EXPORT_REFUSED = "not replaced, nothing exported (run export-gptme again in a few seconds)"  # a file being saved there


def state_bytes(path: Path | str, exporting: bool = False) -> bytes:
    """The bytes of the state file `export-gptme PATH` writes, as they are now (b"" when there is none or
    it cannot be read), for `export_state`'s `was`; `exporting`: StateSaving (EXPORT_REFUSED, nothing
    done yet) while another tool is saving it (`saving.unsaved_bytes`)."""
    target = export_target(path)
    return (unsaved_bytes(target, EXPORT_REFUSED) if exporting else file_bytes(target)) or b""


def export_state(
    path: Path | str,
    payload_of: Callable[[], dict[str, Any]],
    before_write: Callable[[dict[str, Any]], None] | None = None,
    was: bytes | None = None,
) -> Path:
    """Write a fresh state file where `export-gptme PATH` writes (`export_target`), stamped as ours
    (exported onto the workspace's own file, it is then ours again: `before_write` keeps its copy);
    returns that path. StateChanged (nothing replaced) when another tool saved the file there since the
    caller read it (`was`: its bytes then, `state_bytes`; default: as this call reads them) and before
    the new file would replace it: that update would be lost; StateSaving (EXPORT_REFUSED) while another
    tool is saving it there (core/bandit/saving.py)."""
    target = export_target(path)
    before = (file_bytes(target) or b"") if was is None else was

    def changed() -> StateChanged:
        return StateChanged(
            f"{target}: saved by another tool (gptme's bandit) while export-gptme wrote it; not replaced "
            "(run export-gptme again: that tool's update is logged first, or the export is refused)"
        )

    payload = payload_of()
    payload[STAMP_KEY] = state_stamp(payload)
    if before_write is not None:
        before_write(payload)
    write_json(target, payload, rename=guarded_rename(before, changed, EXPORT_REFUSED))
    return target
