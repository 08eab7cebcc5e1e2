"""Lesson ids: one spelling for an arm, however a tool wrote it."""

from __future__ import annotations


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
