"""How the log's lesson entries spell their ids: those spelled otherwise than the library id they are
read as (a `lessons/` prefix, gptme's absolute paths in any of their spellings, backslashes, surrounding
spaces), and absolute paths that name no `lessons` folder, each read as an arm of its own
(core/base/ids.py). The reader merges spellings as it reads, so only a scan of the raw lines sees them."""

from __future__ import annotations

import json
import re
from collections.abc import Collection, Iterable
from dataclasses import dataclass

from lesson_credit.core.base.ids import absolute_unmapped, normalize_id
from lesson_credit.core.log.eventstore import EventStore
from lesson_credit.core.log.store import StoreError
from lesson_credit.core.log.stores import raw_lines

# a line that may hold such an entry: a `lessons` path segment, a backslash, an entry (an object's path or
# arm_id, a list's bare string) starting with a space, `.`, `/` or a drive, or whitespace that str.strip()
# (normalize_id) removes around an id: a space before a closing quote, an escape (`\t`, `\u00a0`) after an
# opening or before a closing one, a non-ASCII space written raw anywhere. Others are not parsed. Searched
# one by one, each led by a literal to skip ahead by: one alternation of them all is three times slower
_STRIPPED = rb"(?:[tnrf]|u(?:000[9a-dA-D]|001[c-fC-F]|0085|00[aA]0|1680|200[0-9aA]|202[89fF]|205[fF]|3000))"
_CANDIDATES = tuple(
    re.compile(pattern)
    for pattern in (
        rb"lessons(?:/|\\\\)",
        rb"\\\\",
        rb'"(?:path|arm_id)"\s*:\s*"(?:\s|\.|/|[A-Za-z]:)',
        rb'"lessons"\s*:\s*\[[^\]]*?"(?:\s|\.|/|[A-Za-z]:)',
        rb' "\s*[,\]}]',  # (a key's closing quote is followed by `:`, an opening one by its text)
        rb'"\\' + _STRIPPED,
        rb"\\" + _STRIPPED + rb'"',
        rb"\xc2[\x85\xa0]",  # U+0085, U+00A0 as UTF-8
        rb"\xe1\x9a\x80",  # U+1680
        rb"\xe2(?:\x80[\x80-\x8a\xa8\xa9\xaf]|\x81\x9f)",  # U+2000-U+200A, U+2028, U+2029, U+202F, U+205F
        rb"\xe3\x80\x80",  # U+3000
    )
)


@dataclass(frozen=True)
class Spellings:
    other: int = 0  # entries spelled otherwise than the library id they are read as
    unmapped: int = 0  # absolute paths with no `lessons` folder: arms of their own

    def said(self) -> str:
        """What lint says of them ("" when there are none)."""
        said = []
        if self.other:
            entries = (
                f"{self.other} lesson entries in the log use" if self.other > 1 else "1 lesson entry in the log uses"
            )
            said.append(f"{entries} a 'lessons/' prefix, an absolute path or another spelling of a library id")
        if self.unmapped:
            more = " more" if self.other else " lesson entries" if self.unmapped > 1 else " lesson entry"
            one = self.unmapped == 1
            names = "names a lesson by an absolute path" if one else "name lessons by absolute paths"
            arms = "an arm of its own" if one else "arms of their own"
            said.append(f"{self.unmapped}{more} {names} with no `lessons` folder, read as {arms}")
        return "; ".join(said)


def prefixed_id_count(log: EventStore, skipped: Collection[int] = ()) -> Spellings:
    """How the raw log's lesson entries spell their ids, but those of the lines `skipped` (numbered from 1: the
    lines the reader did not use); none counted when the log cannot be read."""
    try:
        return entry_spellings(raw_lines(log), skipped)
    except (OSError, StoreError):
        return Spellings()


def entry_spellings(raw_lines: Iterable[bytes], skipped: Collection[int] = ()) -> Spellings:
    """Count the lesson entries of `raw_lines` (the log's lines as on disk) by how they are spelled; a line
    whose number (from 1) is in `skipped` is not read: its entries are not the log's."""
    data = b"".join(raw_lines)
    starts = {data.rfind(b"\n", 0, found.start()) + 1 for pattern in _CANDIDATES for found in pattern.finditer(data)}
    if skipped:  # each start's line number, counted on from the one before it (in order: one pass)
        kept, line, at = set(), 1, 0
        for start in sorted(starts):
            line, at = line + data.count(b"\n", at, start), start
            if line not in skipped:
                kept.add(start)
        starts = kept
    other = unmapped = 0
    for start in starts:
        end = data.find(b"\n", start)
        for raw in _entry_ids(data[start : len(data) if end < 0 else end]):
            if absolute_unmapped(raw):
                unmapped += 1
            elif normalize_id(raw) != raw:
                other += 1
    return Spellings(other, unmapped)


def _entry_ids(line: bytes) -> list[str]:
    try:
        event = json.loads(line)
    except (ValueError, RecursionError):
        return []  # a bad line: reported as such
    lessons = event.get("lessons") if isinstance(event, dict) else None
    if not isinstance(lessons, list):
        return []
    ids = []
    for entry in lessons:
        if isinstance(entry, dict):
            entry = entry.get("path") if entry.get("path") is not None else entry.get("arm_id")
        if isinstance(entry, str):
            ids.append(entry)
    return ids
