"""Lesson ids: one spelling for an arm, however a tool wrote it."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable

from lesson_credit.core.base.errors import WorkspaceError
from lesson_credit.core.base.numbers import listed

_ABSOLUTE = re.compile(r"(?:[A-Za-z]:)?/")  # `/home/...`, or a Windows drive's `C:/...` once `\\` became `/`


def normalize_id(raw: str) -> str:
    """Map an arm id written by any tool to a library id.

    Old gptme logs prefix ids with ``lessons/``; both spellings name the same arm. gptme names a lesson
    by its file's absolute path (``/home/agent/lessons/tools/x.md``): an absolute path is the part after
    its last ``lessons`` folder (no library id is absolute; one without such a folder stays as it is).
    Depends on the text alone, so the fold stays a function of the log.
    """
    lesson_id = raw.replace("\\", "/").strip()
    if _ABSOLUTE.match(lesson_id):
        parts = lesson_id.split("/")
        if "lessons" in parts[:-1]:
            last = len(parts) - 1 - parts[::-1].index("lessons")
            return "/".join(part for part in parts[last + 1 :] if part not in ("", "."))
        return lesson_id
    while lesson_id.startswith("./"):
        lesson_id = lesson_id[2:]
    if lesson_id.startswith("lessons/"):
        lesson_id = lesson_id[len("lessons/") :]
    return lesson_id


def read_as(lesson_id: str) -> str | None:
    """The id `record` and the log's reader read the library's id `lesson_id` as (`normalize_id`) when that is
    another (a space at its start or end, a backslash, a `lessons/` start), else None. A hook cannot pass such an
    id from `select` back to `record`: its record is refused, or credits the other lesson."""
    read = normalize_id(lesson_id)
    return None if read == lesson_id else read


def absolute_unmapped(raw: str) -> bool:
    """Whether `raw` is an absolute path with no `lessons` folder: `normalize_id` leaves it an arm of its own."""
    lesson_id = raw.replace("\\", "/").strip()
    return bool(_ABSOLUTE.match(lesson_id)) and normalize_id(raw) == lesson_id


def lesson_named(text: str, known: Iterable[str], shown: int = 5) -> str:
    """The id a lesson argument names among `known` ids: itself once normalised, else the one known
    id that ends in `/` + it (a basename, `test-doubles.md`, or a path's tail); `.md` may be left
    out. WorkspaceError (one line listing the candidates) when several match; the normalised text
    when none does (the caller says what it is not). A name typed in another Unicode form than the id's
    (`café` with é as one code point, or as `e` and a combining accent: they look the same) names it."""
    wanted = normalize_id(text)
    ids = set(known)
    forms = unicode_forms(wanted)  # as typed first: a library may hold a file name in each form
    for name in (name for form in forms for name in (form, form + ".md")):
        if name in ids:
            return name
    tails = tuple(f"/{form}{end}" for form in forms for end in ("", ".md"))
    matches = sorted(known_id for known_id in ids if wanted and known_id.endswith(tails))
    if len(matches) > 1:
        raise WorkspaceError(f"lesson {text!r} is ambiguous: {len(matches)} lessons match ({listed(matches, shown)})")
    return matches[0] if matches else wanted


def one_form(text: str) -> str:
    """`text` in Unicode's composed form (NFC): `café` typed with `e` and a combining accent is `café` with é
    as one code point. Names people type that look the same are then one name (ASCII as it is)."""
    return text if text.isascii() else unicodedata.normalize("NFC", text)


def library_spellings(library_ids: Iterable[str]) -> dict[str, str]:
    """NFC form -> the library's id, for each id that is not ASCII (the others need no mapping). A name the
    library holds in two forms (two files: a file system that keeps names as given) is left out: the log's
    spelling of it is shown."""
    found: dict[str, str] = {}
    twice: set[str] = set()
    for lesson_id in library_ids:
        if not lesson_id.isascii():
            key = one_form(lesson_id)
            if key in found:
                twice.add(key)
            found[key] = lesson_id
    for key in twice:
        del found[key]
    return found


def unicode_forms(text: str) -> list[str]:
    """`text` as typed, then its NFC and NFD forms where they differ (none for ASCII)."""
    if text.isascii():
        return [text]
    forms = [text]
    for form in ("NFC", "NFD"):
        other = unicodedata.normalize(form, text)
        if other not in forms:
            forms.append(other)
    return forms


def unicode_form_name(text: str) -> str:
    """Which Unicode form `text` is in, to say how two names that look the same differ: "NFC" (é as one
    code point), "NFD" (`e` and a combining accent), or "mixed"."""
    for form in ("NFC", "NFD"):
        if unicodedata.normalize(form, text) == text:
            return form
    return "mixed"


def quoted(lesson_id: str) -> str:
    """`lesson_id` in quotes for a message, as `select` prints it: a backslash as itself (repr's two sent a user
    looking for a file named with two), what does not print (a control code, a no-break space) escaped as repr
    escapes it, so the spaces at its ends and every other character show."""
    shown = "".join(ch if ch.isprintable() else repr(ch)[1:-1] for ch in lesson_id)
    return f"'{shown}'"
