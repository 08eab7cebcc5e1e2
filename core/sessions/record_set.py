"""The records file and the rotated files beside it, read as gptme-sessions reads them (docs/records.md).

gptme-sessions rotates its active `session-records.jsonl`: older sessions move to
`session-records-archive-*.jsonl`, or the whole file to `session-records.jsonl.bak-*`, and its own readers
(blame.py's `consolidated_records_sources`) read every `session-records*.jsonl*` file beside the active one:
the active file first, then the others sorted by name, a session's record from the first file that has one.
Within one file a later line replaces an earlier one (gptme-sessions upserts), as before.

Only beside a records file named `session-records.jsonl` (another name is a file of its own, whose rotation
we cannot know); not gptme-sessions' lock file (`.lock`) nor a rewrite's temporary copy (`.tmp.`). Hostile
input stays bounded: at most ROTATED_MAX_FILES rotated files (the rest, by name, are one problem), the
line cap (record_file.RECORDS_MAX_LINES) over all the files together, RECORDS_TOTAL_MAX_BYTES over all of
them (a rotated file that does not fit in what is left is not read), and a rotated file that is a symbolic
link is followed only into the workspace or the records' own folder (anywhere with --allow-outside).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

import xxhash

from lesson_credit.core.base.numbers import listed
from lesson_credit.core.base.safe_read import UnsafeFile, resolve_path
from lesson_credit.core.sessions import record_file, records_path
from lesson_credit.core.sessions.record_file import MAX_PROBLEMS, RecordFile, RecordProblem, read_records

RECORDS_TOTAL_MAX_BYTES = 2 * record_file.RECORDS_MAX_BYTES  # the records file and its rotated files together
CAP_WORDS = " (of all the records files)"


def _refused_link(path: Path, root: Path, allow_outside: bool) -> str | None:
    """Why a rotated file that is a symbolic link is not read (None: it is not one, or it may be followed)."""
    if allow_outside or not os.path.islink(path):
        return None
    try:
        target = resolve_path(path)
    except UnsafeFile as exc:
        return str(exc)
    inside = (resolve_path(root), resolve_path(path.parent))
    if any(target.is_relative_to(folder) for folder in inside):
        return None
    return "a symbolic link to outside the workspace; not read (--allow-outside reads it)"


def read_record_set(
    primary: Path,
    names: Sequence[str],
    names_problem: str | None,
    root: Path,
    allow_outside: bool,
    known: dict[str, RecordFile],
) -> tuple[RecordFile, dict[str, RecordFile]]:
    """(the records of `primary` and its rotated files `names` as one RecordFile, each file as read). `known`:
    each file as read before (by name), not parsed again when its bytes are the same. Without rotated files,
    the file's own RecordFile as before."""
    if not names and names_problem is None:
        first = read_records(primary, known.get(""))
        return first, {"": first}
    cap = record_file.RECORDS_MAX_LINES
    first = read_records(primary, known.get(""), cap_words=CAP_WORDS)
    parts, read = [first], {"": first}
    problems: list[RecordProblem] = [RecordProblem(0, names_problem)] if names_problem else []
    lines, size = first.lines_read, first.size
    most = records_path.ROTATED_MAX_FILES
    if len(names) > most:
        left = names[most:]
        problems.append(
            RecordProblem(
                0,
                f"{primary.parent}: {len(names)} rotated records files beside {primary.name}; only the first "
                f"{most} (by name) {'is' if most == 1 else 'are'} read: "
                f"{listed(left, 3)} {'is' if len(left) == 1 else 'are'} not",
            )
        )
    for name in names[:most]:
        path = primary.parent / name
        refused = _refused_link(path, root, allow_outside)
        if refused is not None:
            problems.append(RecordProblem(0, refused, name))
            continue
        if lines >= cap or first.capped:
            problems.append(RecordProblem(0, f"past the first {cap:,} records' lines{CAP_WORDS}: not read", name))
            continue
        if size + _length(path) > RECORDS_TOTAL_MAX_BYTES:
            total = RECORDS_TOTAL_MAX_BYTES >> 20
            problems.append(
                RecordProblem(0, f"past the {total} MB all the records files may hold together: not read", name)
            )
            continue
        follow = os.path.islink(path)  # (one allowed above; any other is opened without following one)
        room = min(record_file.RECORDS_MAX_BYTES, RECORDS_TOTAL_MAX_BYTES - size)  # (one that grew since its stat)
        part = read_records(
            path, known.get(name), max_lines=cap - lines, max_bytes=room, file=name, follow=follow, cap_words=CAP_WORDS
        )
        parts.append(part)
        read[name] = part
        lines, size = lines + part.lines_read, size + part.size
    names_read = [primary.name, *list(read)[1:]]  # (read: "" first, then each rotated file read, in order)
    return _merged(primary, names_read, parts, problems), read


def _length(path: Path) -> int:
    """The bytes of a rotated file that would be read, by its stat (0: read_records says why it cannot be)."""
    try:
        return min(os.stat(path).st_size, record_file.RECORDS_MAX_BYTES)
    except OSError:
        return 0


def _merged(primary: Path, names: list[str], parts: list[RecordFile], extra: list[RecordProblem]) -> RecordFile:
    """One RecordFile of the files read in order: a session's record from the first file that has one."""
    seen: set[str] = set()
    records = []
    for part in parts:
        for record in part.records:
            if record.session_id not in seen:
                seen.add(record.session_id)
                records.append(record)
    problems = [p for part in parts for p in part.problems]
    count = sum(part.problem_count for part in parts)
    for problem in extra:  # the set's own problems after the file's, in the order found
        problems.append(problem)
        count += 1
    present = [part for part in parts if part.present]
    digest = ""
    if present or extra:
        text = "\n".join(f"{name}\0{part.digest}\0{part.lines_read}" for name, part in zip(names, parts, strict=True))
        digest = xxhash.xxh3_64_hexdigest(text.encode("utf-8", "surrogateescape"))
    first = parts[0]
    return RecordFile(
        primary,
        tuple(records),
        tuple(_ordered(problems)[:MAX_PROBLEMS]),
        count,
        note=None if present else first.note,
        digest=digest,
        lines_read=sum(part.lines_read for part in parts),
        size=sum(part.size for part in parts),
        rotated=tuple(names[1:]),
    )


def _ordered(problems: list[RecordProblem]) -> list[RecordProblem]:
    """The problems of the records file first, then each rotated file's, by name (a file's in line order)."""
    return sorted(problems, key=lambda p: (p.file != "", p.file))
