"""gptme-sessions records: one `SessionRecord` JSON object per line of a JSONL file, read tolerantly.

An agent workspace keeps them in `state/sessions/session-records.jsonl` (gptme-sessions writes
`$GPTME_SESSIONS_DIR/session-records.jsonl` by default). We read the fields we show and score
with, keep every other key as it was written, and never fail on a line: a line that is not a JSON
object with a session id, or a field of the wrong type, is reported with its line number and
skipped (the field alone, where the rest of the line is usable). Regular files only, never past a
size cap. Scores (`llm_judge_score`, `trajectory_grade`, the per-dimension `grades`) must be numbers
in [0, 1].
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple, Protocol

import xxhash

from lesson_credit.core.base.numbers import fixed, listed
from lesson_credit.core.base.safe_json import JsonError, decode_json
from lesson_credit.core.base.safe_read import UnsafeFile, open_regular, read_opened, read_regular
from lesson_credit.core.model.sources import HUMAN, JUDGE
from lesson_credit.core.sessions.records_path import RECORDS_FILE

WEIGHTS_FILE = Path("state") / "grading-weights.json"
RECORDS_MAX_BYTES = 64 * 1024 * 1024  # only a bigger file's start is read
# Lines read: gptme-sessions writes every field of a record (1.3 KB at the least), so 64 MB of its records are
# ~50,000; 2.3 million one-key lines took 2 GB and 40 s to read in every command.
RECORDS_MAX_LINES = 100_000
LINE_MAX_BYTES = 1024 * 1024  # one record; a longer line is reported, not parsed
WEIGHTS_MAX_BYTES = 64 * 1024
DEFAULT_WEIGHTS: dict[str, float] = {"productivity": 0.40, "alignment": 0.35, "harm": 0.25}  # gptme-sessions'
MAX_PROBLEMS = 1000  # problems kept per file (the count goes on)

# the keys we read; the rest of a record is kept as written (`Record.extra`)
_STRINGS = (
    "timestamp",
    "start_time",
    "end_time",
    "harness",
    "model",
    "category",
    "outcome",
    "llm_judge_reason",
    "llm_judge_model",
    "trajectory_path",
    "journal_path",
    "session_name",
)
_UNIT_SCORES = ("llm_judge_score", "trajectory_grade")
_COUNTS = ("exit_code", "token_count", "input_tokens", "output_tokens")
KNOWN_KEYS = frozenset(
    {"session_id", *_STRINGS, *_UNIT_SCORES, *_COUNTS, "duration_seconds", "deliverables", "grades", "grade_reasons"}
)


@dataclass(frozen=True)
class RecordProblem:
    line: int  # 0: the file as a whole
    reason: str
    file: str = ""  # a rotated file's name (core/sessions/record_set.py); "" for the records file itself

    def __str__(self) -> str:
        where = " ".join(part for part in (self.file, f"line {self.line}" if self.line else "") if part)
        return f"{where}: {self.reason}" if where else self.reason


@dataclass(frozen=True)
class Record:
    """One gptme-sessions record: the fields lesson-credit uses, and every other key as written."""

    session_id: str
    line: int
    timestamp: str | None = None
    start_time: str | None = None
    end_time: str | None = None
    harness: str | None = None
    model: str | None = None
    category: str | None = None
    outcome: str | None = None
    exit_code: int | None = None
    duration_seconds: float | None = None
    token_count: int | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    deliverables: tuple[str, ...] = ()
    grades: Mapping[str, float] = field(default_factory=dict)  # per dimension, in [0, 1]
    grade_reasons: Mapping[str, str] = field(default_factory=dict)
    trajectory_grade: float | None = None
    llm_judge_score: float | None = None
    llm_judge_reason: str | None = None
    llm_judge_model: str | None = None
    trajectory_path: str | None = None
    journal_path: str | None = None
    session_name: str | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)  # keys we do not read, kept as written
    file: str = ""  # the rotated file the record is in (core/sessions/record_set.py); "" for the records file

    @property
    def where(self) -> str:
        """`line 3`, or `session-records-archive-2026-11.jsonl line 3` for a record in a rotated file."""
        return f"{self.file} line {self.line}" if self.file else f"line {self.line}"

    def weighted_grade(self, weights: Mapping[str, float]) -> float | None:
        """gptme's trajectory grade from the per-dimension grades: the weighted mean over the
        dimensions present in both the grades and the weights (None when none are)."""
        shared = [(value, weights[name]) for name, value in self.grades.items() if name in weights]
        total = sum(weight for _, weight in shared)
        if not shared or total <= 0:
            return None
        return sum(value * weight for value, weight in shared) / total

    def heuristic_score(self, weights: Mapping[str, float]) -> float | None:
        """The record's trajectory (heuristic) grade: `trajectory_grade`, else the weighted grades."""
        return self.trajectory_grade if self.trajectory_grade is not None else self.weighted_grade(weights)

    def as_json(self, weights: Mapping[str, float]) -> dict[str, Any]:
        """Every field as written (unknown keys too), with the weights used and the weighted grade."""
        out: dict[str, Any] = dict(self.extra)
        out.update(
            {
                "session_id": self.session_id,
                "line": self.line,
                **{name: getattr(self, name) for name in (*_STRINGS, *_UNIT_SCORES, *_COUNTS)},
                "duration_seconds": self.duration_seconds,
                "deliverables": list(self.deliverables),
                "grades": dict(self.grades),
                "grade_reasons": dict(self.grade_reasons),
                "grade_weights": {name: weights[name] for name in self.grades if name in weights},
                "weighted_grade": self.weighted_grade(weights),
            }
        )
        if self.file:  # the line is in a rotated file, not the records file
            out["records_file"] = self.file
        return out


@dataclass(frozen=True)
class RecordFile:
    """A records file as read: its records (one per session id: a later line replaces an earlier
    one, as gptme-sessions' upsert does) and what could not be used."""

    path: Path | None
    records: tuple[Record, ...] = ()
    problems: tuple[RecordProblem, ...] = ()
    problem_count: int = 0  # problems found (more than kept when past MAX_PROBLEMS)
    note: str | None = None  # why nothing was read (missing file), one line; None when read
    digest: str = ""  # xxh3-64 of the bytes read ("" when nothing was read)
    lines_read: int = 0  # lines with a record read (towards the line cap)
    capped: bool = False  # lines were left unread at the line cap `limit`
    limit: int = 0  # the line cap it was read with
    size: int = 0  # bytes read
    rotated: tuple[str, ...] = ()  # the rotated files beside it that were read (core/sessions/record_set.py)

    @property
    def present(self) -> bool:
        """Whether there is a file to speak of: read, or there but unusable (a FIFO, too big)."""
        return bool(self.digest or self.problems)


def read_records(
    path: Path,
    known: RecordFile | None = None,
    *,
    max_lines: int | None = None,
    max_bytes: int | None = None,
    file: str = "",
    follow: bool = True,
    cap_words: str = "",
) -> RecordFile:
    """The records of a file; a missing file is no records (with a note), never an error. `known`: the
    records read from it before, returned as they are when the bytes are the same (not parsed again).
    `max_lines` (default RECORDS_MAX_LINES): lines with a record read at most; `max_bytes` (default
    RECORDS_MAX_BYTES): bytes read at most; `file`: a rotated file's name, said in its problems and records;
    `follow`: False opens it without following a symbolic link."""
    limit = RECORDS_MAX_LINES if max_lines is None else max_lines
    cap = RECORDS_MAX_BYTES if max_bytes is None else max_bytes
    try:
        if follow:
            raw = read_regular(path, cap, longer=True)
        else:
            raw = read_opened(open_regular(path, os.O_RDONLY | os.O_NOFOLLOW), path, cap, longer=True)
    except FileNotFoundError:
        return RecordFile(path, note=f"no session records at {path}")
    except (UnsafeFile, IsADirectoryError) as exc:
        return RecordFile(path, problems=(RecordProblem(0, str(exc)),), problem_count=1, note=str(exc))
    except OSError as exc:
        reason = f"{path}: {exc.strerror or exc}"
        return RecordFile(path, problems=(RecordProblem(0, reason),), problem_count=1, note=reason)
    digest = xxhash.xxh3_64_hexdigest(raw[:cap])
    if known is not None and known.path == path and known.digest == digest and len(raw) <= cap:
        if known.limit == limit or (not known.capped and known.lines_read <= limit):  # the same lines read
            return known
    parsed = _parse(raw[:cap], limit, file, cap_words)
    records, problems, count = parsed.records, parsed.problems, parsed.count
    if len(raw) > cap:
        count += 1
        room = f"{cap >> 20} MB" if cap % (1 << 20) == 0 else f"{cap:,} bytes"
        more = "" if cap == RECORDS_MAX_BYTES else " (what was left of what all the records files may hold together)"
        problems.append(RecordProblem(0, f"{path} is larger than {room}{more}: only its start is read"))
    size = min(len(raw), cap)
    return RecordFile(
        path, tuple(records), tuple(problems), count, None, digest, parsed.read, parsed.capped, limit, size
    )


def _one_array(data: bytes) -> bool:
    """Whether the whole file is one JSON array (a records file saved with json.dump): only a file
    that starts with `[` is parsed whole; a JSON-lines file whose first line is bad is not one."""
    body = data.removeprefix(b"\xef\xbb\xbf")
    if not body.lstrip().startswith(b"["):
        return False
    try:
        return isinstance(decode_json(body, "records"), list)
    except JsonError:
        return False


@dataclass
class _Parsed:
    records: list[Record]
    problems: list[RecordProblem]
    count: int = 0  # problems found
    read: int = 0  # lines with a record read (towards the cap)
    capped: bool = False  # lines left unread at the cap


def parse_records(data: bytes) -> tuple[list[Record], list[RecordProblem], int]:
    """(records, problems kept, problems found) of a file's bytes. An unfinished last line (a
    writer mid-append, or the size cap) is reported and skipped."""
    parsed = _parse(data, RECORDS_MAX_LINES)
    return parsed.records, parsed.problems, parsed.count


def _parse(data: bytes, limit: int, file: str = "", cap_words: str = "") -> _Parsed:
    """`parse_records` reading at most `limit` lines with a record; `file` names a rotated file in problems and
    records; `cap_words` says what the cap is over (every file read)."""
    by_id: dict[str, Record] = {}
    out = _Parsed([], [])

    def problem(line: int, reason: str) -> None:
        out.count += 1
        if len(out.problems) < MAX_PROBLEMS:
            out.problems.append(RecordProblem(line, reason, file))

    if _one_array(data):  # json.dump(list): one line, or many
        problem(0, "a JSON array, not JSON Lines (one record object per line): no record read")
        return out
    lines = data.split(b"\n")
    unfinished = lines[-1] != b""
    for number, text in enumerate(lines, start=1):
        if not text.strip():
            continue
        if out.read >= limit:
            out.capped = True
            problem(
                number,
                f"past the first {RECORDS_MAX_LINES:,} records' lines{cap_words}: this one and the rest are not read",
            )
            break
        out.read += 1
        if number == len(lines) and unfinished:
            problem(number, "unfinished last line (no newline); skipped")
            continue
        if len(text) > LINE_MAX_BYTES:
            problem(number, f"longer than {LINE_MAX_BYTES >> 20} MB; skipped")
            continue
        if number == 1 and text.startswith(b"\xef\xbb\xbf"):  # (gptme-sessions' reader cannot read it either)
            problem(number, "starts with a UTF-8 byte order mark (save the file without one); skipped")
            continue
        record = _record(number, text, problem, file)
        if record is None:
            continue
        earlier = by_id.pop(record.session_id, None)
        if earlier is not None:
            problem(number, f"a second record for {record.session_id!r} (line {earlier.line}); the later one is used")
        by_id[record.session_id] = record
    out.records = sorted(by_id.values(), key=lambda r: r.line)
    return out


def _record(number: int, text: bytes, problem: Any, file: str = "") -> Record | None:
    try:
        obj = decode_json(text, RECORDS_FILE, number)
    except JsonError as exc:
        problem(number, f"{exc.reason}; skipped")
        return None
    if not isinstance(obj, dict):
        problem(number, "not a JSON object; skipped")
        return None
    session_id = obj.get("session_id")
    if isinstance(session_id, int) and not isinstance(session_id, bool):
        session_id = str(session_id)
    if not isinstance(session_id, str) or not session_id.strip():
        problem(number, "no session_id; skipped")
        return None
    fields: dict[str, Any] = {}
    bad: list[str] = []
    for name in _STRINGS:
        value = obj.get(name)
        if value is not None and not isinstance(value, str):
            bad.append(name)
        elif value:
            fields[name] = value
    for name in _UNIT_SCORES:
        value = _unit(obj.get(name))
        if value is _BAD:
            bad.append(name)
        elif value is not None:
            fields[name] = value
    for name in _COUNTS:
        value = obj.get(name)
        if value is not None and (isinstance(value, bool) or not isinstance(value, int)):
            bad.append(name)
        elif value is not None:
            fields[name] = value
    duration = obj.get("duration_seconds")
    if duration is not None:
        ok = isinstance(duration, int | float) and not isinstance(duration, bool) and math.isfinite(duration)
        if ok and duration >= 0:
            fields["duration_seconds"] = float(duration)
        else:
            bad.append("duration_seconds")
    fields.update(_lists(obj, bad))
    if bad:
        problem(number, f"{', '.join(bad)} of {session_id!r} not usable (wrong type or outside [0, 1]); ignored")
    extra = {key: value for key, value in obj.items() if key not in KNOWN_KEYS}
    return Record(session_id=session_id, line=number, extra=extra, file=file, **fields)


_BAD = object()


def _unit(value: Any) -> Any:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0.0 <= value <= 1.0:
        return _BAD  # NaN fails the range check too
    return float(value)


def _lists(obj: dict[str, Any], bad: list[str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    deliverables = obj.get("deliverables")
    if deliverables is not None:
        if isinstance(deliverables, list) and all(isinstance(d, str) for d in deliverables):
            out["deliverables"] = tuple(deliverables)
        else:
            bad.append("deliverables")
    grades = obj.get("grades")
    if grades is not None:
        if isinstance(grades, dict) and all(_unit(v) not in (_BAD, None) for v in grades.values()):
            out["grades"] = {str(name): float(value) for name, value in grades.items()}
        else:
            bad.append("grades")
    reasons = obj.get("grade_reasons")
    if reasons is not None:
        if isinstance(reasons, dict) and all(isinstance(v, str) for v in reasons.values()):
            out["grade_reasons"] = {str(name): value for name, value in reasons.items()}
        else:
            bad.append("grade_reasons")
    return out


def read_weights(root: Path) -> tuple[dict[str, float], str | None]:
    """(the grading weights, a problem): the workspace's state/grading-weights.json, else
    gptme-sessions' defaults (0.40 / 0.35 / 0.25). A file that is not a JSON object of
    non-negative numbers is reported and the defaults are used."""
    path = root / WEIGHTS_FILE
    try:
        obj = decode_json(read_regular(path, WEIGHTS_MAX_BYTES), WEIGHTS_FILE)
    except FileNotFoundError:
        return dict(DEFAULT_WEIGHTS), None
    except (OSError, UnsafeFile, JsonError) as exc:
        reason = f"{WEIGHTS_FILE}: {exc.strerror or exc}" if isinstance(exc, OSError) else str(exc)
        return dict(DEFAULT_WEIGHTS), f"{reason}; the default weights are used"
    ok = (
        isinstance(obj, dict)
        and obj
        and all(isinstance(v, int | float) and not isinstance(v, bool) and v >= 0 for v in obj.values())
        and math.isfinite(sum(float(v) for v in obj.values()))  # 1e308 twice adds up to inf: every grade NaN
    )
    if not ok:
        return dict(DEFAULT_WEIGHTS), (
            f"{WEIGHTS_FILE}: not an object of non-negative weights with a finite sum; the defaults are used"
        )
    return {str(k): float(v) for k, v in obj.items()}, None


def _outcome_spelled(record: Record, outcomes: Mapping[str, float]) -> str:
    """`outcome productive (reward 1.000)`, `outcome unknown (maps to no reward)`: the record's outcome word
    and the reward it maps to (gptme-sessions' defaults, then `[outcomes]` in config.toml)."""
    if not record.outcome:
        return "no outcome"
    reward = outcomes.get(record.outcome)
    return f"outcome {record.outcome} " + ("(maps to no reward)" if reward is None else f"(reward {fixed(reward)})")


def duration_text(seconds: float | None) -> str:
    """`45s`, `14m 05s`, `2h 03m`."""
    if seconds is None:
        return "—"
    whole = int(round(seconds))
    if whole < 60:
        return f"{whole}s"
    if whole < 3600:
        return f"{whole // 60}m {whole % 60:02d}s"
    return f"{whole // 3600}h {whole % 3600 // 60:02d}m"


# how a record was joined to the session (core.sessions.join), in words for a newcomer
JOINED_BY = {
    "id": "by id",
    "prefix": "by id (one id starts the other)",
    "time": "by time (the ids differ)",  # (within the [records] window: docs/records.md)
}


def record_summary(record: Record, outcomes: Mapping[str, float], joined_by: str | None = None) -> str:
    """The record in one line, the same words for `show` and the dashboard's record panel (at 80x24 it is
    two lines of it): harness, model, duration, the outcome word with the reward it maps to (`unknown`
    maps to none), the exit code, and which record was joined to the session, and how."""
    head = [record.harness or "harness ?", record.model or "model ?", duration_text(record.duration_seconds)]
    head.append(_outcome_spelled(record, outcomes))
    if record.exit_code is not None:
        head.append(f"exit code {record.exit_code}")
    if joined_by:
        where = f" ({record.where})" if record.file else ""  # the line of a rotated file: said which
        head.append(f"record {record.session_id}{where}, joined {JOINED_BY.get(joined_by, f'by {joined_by}')}")
    return " · ".join(head)


class LoggedJudge(NamedTuple):
    """The judge's score in the log, which replaces a record's judge score (`judge_text`)."""

    score: float
    line: int
    instead: str | None = None  # what is in force where the judge's score is not (None: it is), in words


def judge_text(record: Record, logged: LoggedJudge | None = None) -> str | None:
    """The record's judge: score, model and reason (None: it has no judge score). `logged`: the judge's
    score in the log, which replaces the record's (the log's score of a source counts, the record's only
    where the log has none): said before the reason, so a narrow panel shows it, with whether it is the score
    in force. It said "which counts instead" while a person's grade was in force, which neither judge score is."""
    if record.llm_judge_score is None:
        return None
    judge = f"judge {record.llm_judge_score:.2f}"
    if record.llm_judge_model:
        judge += f" ({record.llm_judge_model})"
    if logged is not None:
        judge += f", replaced by the judge's {fixed(logged.score, 2)} logged on line {logged.line}"
        judge += ", the score in force" if logged.instead is None else f"; neither counts: {logged.instead}"
        # the reason is the record's judge's, for its own score: said as such, not read as the logged score's
        return judge + (f"; the record's reason: {record.llm_judge_reason}" if record.llm_judge_reason else "")
    return judge + (f": {record.llm_judge_reason}" if record.llm_judge_reason else "")


class Scored(Protocol):
    """A reward source's score of a session (core.views.SourceScore)."""

    @property
    def source(self) -> str: ...
    @property
    def score(self) -> float | None: ...
    @property
    def line(self) -> int | None: ...
    @property
    def grader(self) -> str: ...
    @property
    def in_force(self) -> bool: ...


def logged_judge(sources: Iterable[Scored]) -> LoggedJudge | None:
    """The judge's score and its line where the log gives the judge one (not withdrawn), which replaces a
    record's judge score (`judge_text` says so), and what is in force where that score is not (a person's
    grade, by the default priority); None where the judge's score is the record's (a retraction in the log
    lets it count again) or there is none."""
    scored = list(sources)
    logged = next((s for s in scored if s.source == JUDGE and s.line and s.score is not None), None)
    if logged is None or logged.score is None or logged.line is None:
        return None
    if logged.in_force:
        return LoggedJudge(logged.score, logged.line)
    forcing = next((s for s in scored if s.in_force and s.score is not None), None)
    if forcing is None or forcing.score is None:  # a priority that names no source scoring the session
        return LoggedJudge(logged.score, logged.line, "the session is pending under [rewards] priority")
    score = fixed(forcing.score, 2)
    if forcing.source == HUMAN:
        return LoggedJudge(logged.score, logged.line, f"a person's grade, {score} ({forcing.grader}), is in force")
    return LoggedJudge(logged.score, logged.line, f"the {forcing.source}'s {score} ({forcing.grader}) is in force")


def record_lines(
    record: Record,
    weights: Mapping[str, float],
    joined_by: str | None = None,
    *,
    outcomes: Mapping[str, float],
    logged_judge: LoggedJudge | None = None,
) -> list[str]:
    """A record as a few lines of plain text, the same for the CLI's `show` and the dashboard's session
    detail: `record_summary`; deliverables; per-dimension grades with their weights and the weighted grade;
    the trajectory grade; the judge (`judge_text`, replaced by `logged_judge` when the log has one)."""
    lines = [record_summary(record, outcomes, joined_by)]
    if record.deliverables:
        lines.append(f"deliverables: {listed(record.deliverables, 6)}")
    else:
        lines.append("deliverables: none")
    if record.grades:
        parts = []
        for name, value in record.grades.items():
            weight = weights.get(name)
            parts.append(f"{name} {value:.2f}" + (f" ×{weight:.2f}" if weight is not None else " (no weight)"))
        weighted = record.weighted_grade(weights)
        lines.append("grades: " + ", ".join(parts) + (f" → {weighted:.2f}" if weighted is not None else ""))
    if record.trajectory_grade is not None:
        lines.append(f"trajectory grade: {record.trajectory_grade:.2f}")
    judge = judge_text(record, logged_judge)
    if judge is not None:
        lines.append(judge)
    return lines
