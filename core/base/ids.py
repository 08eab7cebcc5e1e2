"""Lesson ids: one spelling for an arm, however a tool wrote it."""

from __future__ import annotations

from collections.abc import Iterable

from lesson_credit.core.base.errors import WorkspaceError


def normalize_id(raw: str) -> str:
    """Map an arm id written by any tool to a library id.

    Old gptme logs prefix ids with ``lessons/``; both spellings name the same arm.
    """
    lesson_id = raw.replace("\\", "/").strip()
    while lesson_id.startswith("./"):
        lesson_id = lesson_id[2:]
    if lesson_id.startswith("lessons/"):
        lesson_id = lesson_id[len("lessons/") :]
    return lesson_id


def lesson_named(text: str, known: Iterable[str], shown: int = 5) -> str:
    """The id a lesson argument names among `known` ids: itself once normalised, else the one known
    id that ends in `/` + it (a basename, `test-doubles.md`, or a path's tail); `.md` may be left
    out. WorkspaceError (one line listing the candidates) when several match; the normalised text
    when none does (the caller says what it is not)."""
    wanted = normalize_id(text)
    ids = set(known)
    for name in (wanted, wanted + ".md"):
        if name in ids:
            return name
    tails = ("/" + wanted, "/" + wanted + ".md")
    matches = sorted(known_id for known_id in ids if wanted and known_id.endswith(tails))
    if len(matches) > 1:
        more = f" and {len(matches) - shown} more" if len(matches) > shown else ""
        raise WorkspaceError(
            f"lesson {text!r} is ambiguous: {len(matches)} lessons match ({', '.join(matches[:shown])}{more})"
        )
    return matches[0] if matches else wanted
