"""The event types of the log (docs/format.md §5) and their JSON form.

Lines are decoded with msgspec into one permissive struct (typed decoding is ~4x faster
than ``json.loads`` on a big log), then checked by kind. Lines written by other tools in
the published session-record shape are session events.
"""

from __future__ import annotations

import math
from typing import Any, cast

import msgspec
from msgspec import Struct, field

from lesson_credit.core.base.errors import UserError
from lesson_credit.core.base.ids import normalize_id, one_form

SESSION, GRADE, SELECTION, PRIOR, RETIRE = "session", "grade", "selection", "prior", "retire"
EXPORT = "export"  # what `export-gptme` wrote to another file: no evidence (docs/format.md §5.8)
# The most lessons one session event may name. gptme injects about ten; the joint fit's X'X holds the square of a
# session's count (a million entries here), so one event naming 20,000 lessons would take gigabytes on every select.
MAX_SESSION_LESSONS = 1_000


class InvalidEvent(UserError):
    """A line that is JSON but not a usable event; the message says why."""


class LessonEntry(msgspec.Struct, omit_defaults=True, gc=False):
    """The fields of a lesson entry the fold reads. The record's `reward`, `hits` and
    `keywords` are kept in the log for people but skipped by the decoder (about a third
    faster on a big log than building them)."""

    path: str | None = None
    arm_id: str | None = None
    salience: float | None = None
    propensity: float | None = None
    included: str | None = None  # "before" (chosen before the session), "during" (pulled in mid-session)


class ArmPrior(msgspec.Struct, gc=False):
    alpha: float
    beta: float
    n: int = 0
    rewards: int = 0


class RawEvent(msgspec.Struct, gc=False):
    type: str | None = None
    session_id: str | int | None = None
    timestamp: str | None = None
    outcome: Any = None
    base_reward: float | None | msgspec.UnsetType = msgspec.UNSET
    lessons: list[LessonEntry | str] | None = None
    journal_path: str | None = None
    category: str | None = None
    strategy: str | None = None
    floor: float | None = None
    grader: str | None = None
    note: str | None = None
    candidates: list[str] | None = None
    selected: list[str] | None = None
    propensity: dict[str, float] | None = None
    k: int | None = None
    seed: int | None = None
    arms: dict[str, ArmPrior] | None = None
    retired: list[str] | None = None
    increments: Any = None  # a prior event of increments (docs/format.md §5.5); Any: another tool's key is not refused
    source: Any = None
    sessions: Any = None  # a prior event's: the sessions the other tool counted (its total_sessions)
    path: Any = None  # an export event's: the file it wrote
    created: Any = None  # an export event's, a prior event's: the `created` of the file written, imported
    seen: Any = None  # an increments event's from an exported file: that file's numbers as the import read them


_decoder = msgspec.json.Decoder(RawEvent)


class SessionEvent(Struct, frozen=True):
    """One session. Lessons are parallel tuples (a per-lesson object costs too much on big logs)."""

    session_id: str
    timestamp: str | None
    base_reward: float | None  # None: pending
    lesson_ids: tuple[str, ...]
    saliences: tuple[float, ...]  # full precision; 0.5 where the record had none
    missing_salience: tuple[int, ...] = ()  # positions of lessons that had no stored salience
    propensities: tuple[float | None, ...] | None = None
    journal_path: str | None = None
    category: str | None = None
    grader: str | None = None
    strategy: str | None = None
    floor: float | None = None
    published_shape: bool = False  # no "type": written by another tool in the published shape
    during: tuple[int, ...] = ()  # positions of lessons included during the session ("included": "during")


class GradeEvent(Struct, frozen=True):
    session_id: str
    base_reward: float | None  # None: a retraction, the session is pending again (docs/format.md §5.3)
    grader: str
    timestamp: str | None
    note: str | None = None


class SelectionEvent(Struct, frozen=True):
    session_id: str | None
    timestamp: str | None
    candidates: tuple[str, ...]
    selected: tuple[str, ...]
    propensity: dict[str, float]
    k: int | None
    seed: int | None
    category: str | None = None  # the session's kind of work the draw was made for (a record without one takes it)

    def passed_over(self) -> frozenset[str]:
        """The lessons this selection had as candidates (its `candidates`, or a key of its `propensity`) and did not
        choose, each as the log keys its arm (`one_form`: an id in either Unicode form is one arm); none when it chose
        nothing (no draw: another tool's without `selected`, a k of 0, a dropout that withheld every lesson chosen).
        docs/format.md §5.2 "Passed over": the one rule both `record`'s warning (core/commands.py) and the log's
        reading for every estimate and `lint` (core/log/unchosen.py) apply."""
        if not self.selected:
            return frozenset()
        return frozenset(_arm_keys({*self.candidates, *self.propensity}).difference(_arm_keys(set(self.selected))))


def _arm_keys(lesson_ids: set[str]) -> set[str]:
    """`lesson_ids` as the log keys their arms (`one_form`; an ASCII id is its own form, checked for all at once)."""
    return lesson_ids if all(map(str.isascii, lesson_ids)) else {one_form(lesson_id) for lesson_id in lesson_ids}


FileCounts = tuple[float, float, int, int]  # alpha, beta, total_selections, total_rewards of one key of a file


class FileNumbers(Struct, frozen=True):
    """The numbers of a gptme state file `export-gptme` wrote (an export event), or of the keys an
    import of it found changed (an increments event's `seen`), per key as the file names it."""

    path: str
    created: str
    arms: dict[str, FileCounts]
    sessions: int  # its total_sessions
    # per key of `arms` (a `seen`'s; none in an export's or a `seen` of before): the arm's `last_updated` as the file
    # had it when gptme's bandit stamped it (its clock's isoformat to the microsecond: that very update)
    stamps: dict[str, str] = field(default_factory=dict)


class ExportEvent(Struct, frozen=True):
    """What `export-gptme` wrote to a file other than the workspace's own: no evidence (the fold
    skips it), the base an import of that file takes gptme's increments from."""

    timestamp: str | None
    numbers: FileNumbers


class PriorEvent(Struct, frozen=True):
    timestamp: str | None
    arms: dict[str, tuple[float, float, int]]  # (alpha, beta, n) to start from; with `increments`, to add
    rewards: dict[str, int] = field(default_factory=dict)  # gptme's total_rewards carried over
    increments: bool = False  # another tool's update of bandit-state.json: added after the fold, never replaced
    source: str | None = None  # who made the increments (`gptme-bandit`)
    sessions: int = 0  # the sessions the other tool counted: a file's total_sessions, or what an update added
    seen: FileNumbers | None = None  # increments from an exported file: its numbers that changed, as read
    created: str | None = None  # an imported file's `created`: another import of that file is known by it


class RetireEvent(Struct, frozen=True):
    """Arms whose lesson files are gone, retired by `prune`: hidden from status while their
    file stays gone. Their evidence stays in the log."""

    timestamp: str | None
    arms: tuple[str, ...]


Event = SessionEvent | GradeEvent | SelectionEvent | PriorEvent | RetireEvent | ExportEvent


def _unit(value: float | None, what: str) -> float | None:
    if value is None:
        return None
    if not (0.0 <= value <= 1.0):
        raise InvalidEvent(f"{what} {value!r} is outside [0, 1]")
    return float(value)


def _sid(raw: RawEvent) -> str:
    if raw.session_id is None or raw.session_id == "":
        raise InvalidEvent("missing session_id")
    return str(raw.session_id)


_id_cache: dict[str, str] = {}


def _lesson_id(raw: str) -> str:
    cached = _id_cache.get(raw)
    if cached is None:
        if len(_id_cache) > 100_000:
            _id_cache.clear()
        cached = _id_cache[raw] = normalize_id(raw)
    return cached


class SessionColumns(Struct, frozen=True):
    """A validated session record, in the shape the log index stores it."""

    session_id: str
    base_reward: float | None
    lesson_ids: list[str]
    saliences: list[float]
    missing_salience: tuple[int, ...]
    propensities: tuple[float | None, ...] | None
    during: tuple[int, ...] = ()  # positions of lessons included during the session


INCLUDED = ("before", "during")  # a lesson entry's "included": chosen before the session, or pulled in during it


def during_positions(included: list[str | None]) -> tuple[int, ...]:
    """The positions whose "included" is "during"; InvalidEvent for a value other than the two (or none)."""
    if included.count(None) == len(included):
        return ()
    bad = [value for value in included if value is not None and value not in INCLUDED]
    if bad:
        raise InvalidEvent(f"lesson 'included' must be 'before' or 'during', not {bad[0]!r}")
    return tuple(i for i, value in enumerate(included) if value == "during")


def _base_of(raw: RawEvent) -> float | None:
    if raw.base_reward is msgspec.UNSET:
        outcome = raw.outcome
        numeric = isinstance(outcome, int | float) and not isinstance(outcome, bool)
        return _unit(float(outcome), "outcome") if numeric else None
    return _unit(raw.base_reward, "base_reward")


def outcome_label(raw: RawEvent) -> str | None:
    """A string outcome (gptme-sessions' `productive`, `noop`, ...) of a record without
    base_reward: the record stays pending in the index and the workspace's outcome mapping
    turns the label into a reward when it folds (so a changed mapping needs no re-parse)."""
    if raw.base_reward is msgspec.UNSET and isinstance(raw.outcome, str) and raw.outcome:
        return raw.outcome
    return None


def session_columns(raw: RawEvent) -> SessionColumns:
    """Validate a session record. The common shape (every lesson an object with a path and
    a salience) takes a comprehension-only fast path: this runs once per line of a big log."""
    session_id = _sid(raw)
    lessons = raw.lessons
    if lessons is None:
        raise InvalidEvent("session event without 'lessons'")
    if len(lessons) > MAX_SESSION_LESSONS:
        raise InvalidEvent(f"session event naming {len(lessons):,} lessons (at most {MAX_SESSION_LESSONS:,})")
    base = _base_of(raw)
    try:
        maybe_paths = [entry.path for entry in lessons]  # type: ignore[union-attr]
        maybe_saliences = [entry.salience for entry in lessons]  # type: ignore[union-attr]
        fast = None not in maybe_paths and None not in maybe_saliences and "" not in maybe_paths
    except AttributeError:  # a plain string entry
        fast = False
    if fast:
        paths = cast(list[str], maybe_paths)
        saliences = cast(list[float], maybe_saliences)
        if saliences and not (min(saliences) >= 0.0 and max(saliences) <= 1.0):
            bad = next(i for i, v in enumerate(saliences) if not 0.0 <= v <= 1.0)
            raise InvalidEvent(f"salience {saliences[bad]!r} of {paths[bad]!r} is outside [0, 1]")
        get = _id_cache.get
        ids = [get(path) or _lesson_id(path) for path in paths]
        if "" in ids:
            raise InvalidEvent("a lesson path is empty once 'lessons/' is stripped")
        props = [entry.propensity for entry in lessons]  # type: ignore[union-attr]
        has_props = any(p is not None for p in props)
        during = during_positions([entry.included for entry in lessons])  # type: ignore[union-attr]
        return SessionColumns(session_id, base, ids, saliences, (), tuple(props) if has_props else None, during)
    ids = []
    values: list[float] = []
    missing: list[int] = []
    propensities: list[float | None] = []
    included: list[str | None] = []
    for index, entry in enumerate(lessons):
        if isinstance(entry, str):
            entry = LessonEntry(path=entry)
        name = entry.path if entry.path is not None else entry.arm_id
        if not name:
            raise InvalidEvent(f"lesson #{index + 1} has no path")
        ids.append(_lesson_id(name))
        sal = entry.salience
        if sal is None:
            missing.append(index)
            values.append(0.5)
        elif 0.0 <= sal <= 1.0:
            values.append(sal)
        else:
            raise InvalidEvent(f"salience {sal!r} of {name!r} is outside [0, 1]")
        propensities.append(entry.propensity)
        included.append(entry.included)
    if "" in ids:
        raise InvalidEvent("a lesson path is empty once 'lessons/' is stripped")
    has_props = any(p is not None for p in propensities)
    as_tuple = tuple(propensities) if has_props else None
    return SessionColumns(session_id, base, ids, values, tuple(missing), as_tuple, during_positions(included))


def grader_name(raw: str | None) -> str | None:
    """A grader's name as the log is read: in one Unicode form (`one_form`), one person however it is typed."""
    return None if raw is None else one_form(raw)


def normalize_ids(paths: list[str]) -> list[str]:
    """Library ids for many raw lesson paths (cached: a log repeats the same few thousand)."""
    get = _id_cache.get
    return [get(path) or _lesson_id(path) for path in paths]


def decode_raw_lines(body: bytes | memoryview) -> list[RawEvent] | None:
    """Decode newline-delimited lines in one call; None when any fails (decode them one by one then)."""
    try:
        return _decoder.decode_lines(body)
    except (msgspec.DecodeError, RecursionError):
        return None


def _session(raw: RawEvent) -> SessionEvent:
    columns = session_columns(raw)
    return SessionEvent(
        session_id=columns.session_id,
        timestamp=raw.timestamp,
        base_reward=columns.base_reward,
        lesson_ids=tuple(columns.lesson_ids),
        saliences=tuple(columns.saliences),
        missing_salience=columns.missing_salience,
        propensities=columns.propensities,
        during=columns.during,
        journal_path=raw.journal_path,
        category=raw.category,
        grader=grader_name(raw.grader),
        strategy=raw.strategy,
        floor=raw.floor,
        published_shape=raw.type is None,
    )


def decode_raw(line: bytes | str) -> RawEvent:
    """Decode one line into the permissive struct; InvalidEvent (a reason) when it is not JSON of that shape."""
    try:
        return _decoder.decode(line)
    except msgspec.ValidationError as exc:
        raise InvalidEvent(f"not a valid event: {exc}") from None
    except msgspec.DecodeError as exc:
        raise InvalidEvent(f"not valid JSON: {exc}") from None
    except RecursionError:
        raise InvalidEvent("JSON nested too deeply") from None


def is_session(raw: RawEvent) -> bool:
    return raw.type is None or raw.type == SESSION


def decode_event(line: bytes | str) -> Event:
    """One log line to an event. Raises InvalidEvent (a reason) for JSON that is not one."""
    return to_event(decode_raw(line))


def validate(raw: RawEvent) -> None:
    """Validate a decoded line as `to_event` does (InvalidEvent, a reason, when it is not an event),
    without building the event: a session's columns are all it checks (what the log index reads)."""
    if raw.type is None or raw.type == SESSION:
        session_columns(raw)
    else:
        to_event(raw)


def to_event(raw: RawEvent) -> Event:
    """Validate a decoded line by kind."""
    kind = raw.type
    if kind is None or kind == SESSION:
        return _session(raw)
    if kind == GRADE:
        if raw.base_reward is not None and not isinstance(raw.base_reward, float | int):
            raise InvalidEvent("grade event without a numeric (or null) base_reward")
        base = _unit(raw.base_reward, "base_reward")
        return GradeEvent(_sid(raw), base, one_form(raw.grader or "unknown"), raw.timestamp, raw.note)
    if kind == SELECTION:
        return SelectionEvent(
            session_id=None if raw.session_id is None else str(raw.session_id),
            timestamp=raw.timestamp,
            candidates=tuple(normalize_id(c) for c in raw.candidates or ()),
            selected=tuple(normalize_id(c) for c in raw.selected or ()),
            propensity={normalize_id(k): v for k, v in (raw.propensity or {}).items()},
            k=raw.k,
            seed=raw.seed,
            category=raw.category,
        )
    if kind == PRIOR:
        if raw.increments not in (None, True, False) or not isinstance(raw.source, str | None):
            raise InvalidEvent("prior event with a non-boolean 'increments' or a non-string 'source'")
        added = raw.increments is True
        sessions_alone = added and raw.arms == {} and isinstance(raw.sessions, int) and raw.sessions != 0
        if not raw.arms and not sessions_alone:  # (another tool's sessions that moved no arm name none)
            raise InvalidEvent("prior event without 'arms'")
        arms = {}
        rewards = {}
        for arm, prior in (raw.arms or {}).items():
            if added and not (prior.alpha >= 0 and prior.beta >= 0 and math.isfinite(prior.alpha + prior.beta)):
                raise InvalidEvent(f"increments for {arm!r} need finite alpha and beta >= 0")
            if not added and not (prior.alpha > 0 and prior.beta > 0 and math.isfinite(prior.alpha + prior.beta)):
                raise InvalidEvent(f"prior for {arm!r} needs positive finite alpha and beta")
            if not (0 <= prior.n < 2**53 and 0 <= prior.rewards < 2**53):
                raise InvalidEvent(f"prior for {arm!r} needs counts in [0, 2**53)")
            arms[normalize_id(arm)] = (float(prior.alpha), float(prior.beta), int(prior.n))
            if prior.rewards:
                rewards[normalize_id(arm)] = int(prior.rewards)
        sessions = _count(raw.sessions if raw.sessions is not None else 0, "prior event with 'sessions'")
        seen = None
        if raw.seen is not None:
            if not added or not isinstance(raw.seen, dict):
                raise InvalidEvent("'seen' is an increments event's object")
            seen = _file_numbers(raw.seen, "'seen'")
        if raw.created is not None and (added or not isinstance(raw.created, str) or not raw.created):
            raise InvalidEvent("'created' of a prior event is a non-empty string (not of increments)")
        return PriorEvent(raw.timestamp, arms, rewards, added, raw.source, sessions, seen, raw.created)
    if kind == RETIRE:
        if not raw.retired or not all(isinstance(arm, str) and normalize_id(arm) for arm in raw.retired):
            raise InvalidEvent("retire event without 'retired' lesson ids")
        return RetireEvent(raw.timestamp, tuple(normalize_id(arm) for arm in raw.retired))
    if kind == EXPORT:
        fields = {"path": raw.path, "created": raw.created, "sessions": 0 if raw.sessions is None else raw.sessions}
        arms_of = {
            key: {"alpha": a.alpha, "beta": a.beta, "n": a.n, "rewards": a.rewards}
            for key, a in (raw.arms or {}).items()
        }
        return ExportEvent(raw.timestamp, _file_numbers({**fields, "arms": arms_of}, "export event"))
    raise InvalidEvent(f"unknown event type {kind!r}")


def _count(value: Any, what: str) -> int:
    """A whole number in [0, 2**53) (InvalidEvent naming `what` otherwise)."""
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < 2**53:
        raise InvalidEvent(f"{what} not a whole number in [0, 2**53)")
    return value


def _file_numbers(data: dict[str, Any], what: str) -> FileNumbers:
    """An export event's numbers, or an increments event's `seen`: `path` and `created` strings, `arms`
    an object of {alpha, beta (finite, >= 0), n, rewards (counts)} per key, `sessions` a count."""
    path, created, arms = data.get("path"), data.get("created"), data.get("arms")
    if not isinstance(path, str) or not path or not isinstance(created, str) or not isinstance(arms, dict):
        raise InvalidEvent(f"{what} needs 'path' and 'created' strings and an 'arms' object")
    counts: dict[str, FileCounts] = {}
    stamps: dict[str, str] = {}
    for key, arm in arms.items():
        numbers: list[Any] = [
            arm.get(name) if isinstance(arm, dict) else None for name in ("alpha", "beta", "n", "rewards")
        ]
        if not all(isinstance(x, int | float) and not isinstance(x, bool) and math.isfinite(x) for x in numbers):
            raise InvalidEvent(f"{what}: {key!r} needs numbers alpha, beta, n and rewards")
        a, b, n, r = numbers
        if not (a >= 0 and b >= 0 and math.isfinite(a + b)) or n != int(n) or r != int(r):
            raise InvalidEvent(f"{what}: {key!r} needs finite alpha and beta >= 0 and whole counts")
        counts[key] = (
            float(a),
            float(b),
            _count(int(n), f"{what}: {key!r} n"),
            _count(int(r), f"{what}: {key!r} rewards"),
        )
        if isinstance(arm, dict) and "stamp" in arm:  # (optional: what gptme's bandit stamped the arm with)
            if not isinstance(stamp := arm["stamp"], str) or not stamp:
                raise InvalidEvent(f"{what}: {key!r} stamp must be a non-empty string")
            stamps[key] = stamp
    return FileNumbers(path, created, counts, _count(data.get("sessions", 0), f"{what}: 'sessions'"), stamps)


def encode(record: dict[str, Any]) -> bytes:
    """One event as a log line (with its newline). Floats keep full precision."""
    for key, value in record.items():
        if isinstance(value, float) and not math.isfinite(value):
            raise ValueError(f"{key} must be finite, got {value!r}")
    line: bytes = msgspec.json.encode(record)
    return line + b"\n"
