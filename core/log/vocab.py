"""Decoding log lines with the strings already seen: one object per value a log repeats.

A big log names the same few thousand lesson paths millions of times, and the same few kinds,
categories, strategies and graders in every record. Decoded as plain strings, each is a new object
for every record (and entry), hashed again where the log index groups them (the arm of a path in
core/log/index.py `_add_sessions_fast`, the shared values of core/log/columns.py `Shared`) and
freed with its record. Here those fields are decoded against the values seen so far (a `Literal` of
them: msgspec hands out the one object it holds for each), and only a body naming a value not seen
yet costs more: it is then decoded as before (`decode_raw_lines`), and the values it names are
learnt for the next body.

What is decoded is equal, field for field, to what `decode_raw_lines` gives: the types differ only in
that those fields must hold one of the known strings (or null), so a body the narrower types refuse
is decoded by the plain ones (which keep every refusal and the line-by-line fall-back). A field is
decoded plainly again once it has held more than `MAX_VALUES` values (ids would gain nothing), and
the whole vocabulary gives up, in this process, after `MISSES_ALLOWED` bodies it could not decode.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from typing import Any, Literal

import msgspec

from lesson_credit.core.log.events import LessonEntry, RawEvent, decode_raw_lines

ENTRY_FIELDS = ("path",)  # a lesson entry's
EVENT_FIELDS = ("type", "category", "strategy", "grader")  # an event's
MAX_VALUES = 4096  # per field; a Literal of n strings takes O(n^2) to build (typing's deduplication): 12 ms at 4,096
MISSES_ALLOWED = 8  # bodies with a value not seen yet (or not decodable) before plain decoding takes over
# a body smaller than this teaches nothing: a tail or a line appended is decoded once, plainly (a narrowed
# decoder costs ~1 ms to build, and pays back only over bodies of many records: a read of a big log's chunks)
LEARN_MIN_BYTES = 1 << 20


def _narrowed(values: dict[str, set[str]], names: tuple[str, ...]) -> list[tuple[str, Any, None]]:
    return [(name, Literal[tuple(sorted(values[name]))] | None, None) for name in names if values.get(name)]


def decoder_for(values: dict[str, set[str]]) -> msgspec.json.Decoder[Any]:
    """A decoder of `RawEvent` lines whose fields named in `values` hold one of its strings or null
    (a field with no values stays as it is)."""
    entry = msgspec.defstruct(LessonEntry.__name__, _narrowed(values, ENTRY_FIELDS), bases=(LessonEntry,))
    lessons = ("lessons", list[entry | str] | None, None)  # type: ignore[valid-type]
    raw = msgspec.defstruct(RawEvent.__name__, [lessons, *_narrowed(values, EVENT_FIELDS)], bases=(RawEvent,))
    return msgspec.json.Decoder(raw)


def values_named(decoded: Iterable[RawEvent]) -> dict[str, set[str]]:
    """The strings the events hold in the vocabulary's fields (`ENTRY_FIELDS` of the entries that are
    objects, `EVENT_FIELDS`)."""
    events = list(decoded)
    entries = [e for raw in events if type(raw.lessons) is list for e in raw.lessons if isinstance(e, LessonEntry)]
    found = {name: {getattr(raw, name) for raw in events} for name in EVENT_FIELDS}
    found.update({name: {getattr(entry, name) for entry in entries} for name in ENTRY_FIELDS})
    return {name: {value for value in values if type(value) is str} for name, values in found.items()}


class Vocabulary:
    """The values seen so far and a decoder that knows them (see the module's docstring)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()  # a reading thread and another may learn at once
        self._values: dict[str, set[str]] = {name: set() for name in (*ENTRY_FIELDS, *EVENT_FIELDS)}
        self._decoder: msgspec.json.Decoder[Any] | None = None
        self.misses = 0
        self.open = True  # False: given up, plain decoding only

    def decode_lines(self, body: bytes | memoryview) -> list[RawEvent] | None:
        """As `decode_raw_lines`: every line's value, or None when any line fails."""
        decoder = self._decoder
        if decoder is not None:
            try:
                decoded: list[RawEvent] = decoder.decode_lines(body)
                return decoded
            except (msgspec.DecodeError, RecursionError):
                self._missed()
        plain = decode_raw_lines(body)
        if plain is not None and self.open and len(body) >= LEARN_MIN_BYTES:
            self._learn(values_named(plain))
        return plain

    def fields(self) -> dict[str, int]:
        """How many values each narrowed field knows (the others: plain)."""
        return {name: len(values) for name, values in self._values.items() if values}

    def _missed(self) -> None:
        with self._lock:
            self.misses += 1
            if self.misses >= MISSES_ALLOWED:
                self.open, self._decoder, self._values = False, None, {}

    def _learn(self, found: dict[str, set[str]]) -> None:
        with self._lock:
            known = self._values
            new = {name: values - known[name] for name, values in found.items() if name in known}
            if not self.open or not any(new.values()):
                return
            for name, values in new.items():
                known[name] |= values
                if len(known[name]) > MAX_VALUES:
                    del known[name]  # plain from now on: neither narrowed nor learnt
            self._decoder = decoder_for(known) if any(known.values()) else None


VOCABULARY = Vocabulary()  # the process's: a forked child starts with what its parent had learnt


def decode_lines(body: bytes | memoryview) -> list[RawEvent] | None:
    """`decode_raw_lines` with the process's vocabulary (`Vocabulary`)."""
    return VOCABULARY.decode_lines(body)
