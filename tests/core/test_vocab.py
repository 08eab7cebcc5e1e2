"""Decoding with the strings already seen (core/log/vocab.py): the same values as the plain decoder, one
object per repeated value, the plain decoder for whatever is new, and the same index and cache."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import msgspec
import pytest

from lesson_credit.core.log import halves, vocab
from lesson_credit.core.log.events import decode_raw_lines
from lesson_credit.core.model.settings import CreditSettings
from lesson_credit.core.reader import LogReader
from tests.core.test_halves import state, varied_log
from tests.support import derived_cache
from tests.support.derived_cache import DB_NAME
from tests.support.engine_helpers import grade, session


@pytest.fixture(autouse=True)
def learn_from_any_body(monkeypatch: pytest.MonkeyPatch) -> None:
    """These bodies are a few lines: each teaches, as a big log's chunks do (tests/core/test_vocab_learning.py)."""
    monkeypatch.setattr(vocab, "LEARN_MIN_BYTES", 0)


def body(*events: dict[str, Any] | str) -> bytes:
    return b"".join((event if isinstance(event, str) else json.dumps(event)).encode() + b"\n" for event in events)


def plain(decoded: list[Any] | None) -> Any:
    """Decoded events as builtins: the vocabulary's structs are of other (narrower) classes."""
    return None if decoded is None else msgspec.to_builtins(decoded)


FIRST = body(
    session("s1", 0.5, {"t/a.md": 0.25, "t/b.md": None}, category="docs", strategy="seed"),
    grade("s1", 0.75, grader="judge"),
    {"type": "selection", "session_id": "s1", "candidates": ["t/a.md"], "selected": ["t/a.md"]},
)


def test_a_body_of_known_values_decodes_as_the_plain_decoder_does() -> None:
    words = vocab.Vocabulary()
    assert plain(words.decode_lines(FIRST)) == plain(decode_raw_lines(FIRST))  # nothing known yet: the plain one
    assert words.fields() == {"path": 2, "type": 3, "category": 1, "strategy": 1, "grader": 1}
    second = body(
        session("s2", None, {"t/b.md": 0.5, "t/a.md": 1.0}, category="docs", strategy="seed"),
        # escapes decode to the known strings: "t\/a.md" is t/a.md, "sel\u0065ction" is selection
        '{"type": "sel\\u0065ction", "session_id": "s2", "candidates": ["t\\/a.md"], "selected": []}',
        # an entry without a path, one that is a plain string, a record without lessons
        '{"type": "session", "session_id": "s3", "lessons": [{"arm_id": "x.md"}, "t/c.md"], "category": null}',
        '{"type": "session", "session_id": "s4", "base_reward": 0.5}',
    )
    decoded = words.decode_lines(second)
    assert words.misses == 0 and decoded is not None
    assert plain(decoded) == plain(decode_raw_lines(second))
    assert decoded[1].type == "selection" and decoded[1].candidates == ["t/a.md"]
    assert [entry.path for entry in decoded[0].lessons] == ["t/b.md", "t/a.md"]  # type: ignore[union-attr]
    assert decoded[2].lessons == [msgspec.convert({"arm_id": "x.md"}, type(decoded[0].lessons[0])), "t/c.md"]  # type: ignore[index]
    # one object per value: the same string object in both records and every event
    again = words.decode_lines(second)
    assert again is not None
    assert again[0].lessons[1].path is decoded[0].lessons[1].path  # type: ignore[index,union-attr]
    assert again[0].category is decoded[0].category and decoded[0].type is decoded[2].type


def test_a_new_value_is_decoded_plainly_then_known() -> None:
    words = vocab.Vocabulary()
    words.decode_lines(FIRST)
    new = body(session("s2", 0.5, {"t/new.md": 0.5}, category="ops", strategy="seed"), grade("s2", 0.5))
    assert plain(words.decode_lines(new)) == plain(decode_raw_lines(new))
    assert words.misses == 1  # a path and a category not seen: the narrow decoder refused the body
    assert words.fields() == {"path": 3, "type": 3, "category": 2, "strategy": 1, "grader": 2}
    assert plain(words.decode_lines(new)) == plain(decode_raw_lines(new)) and words.misses == 1


@pytest.mark.parametrize(
    "bad",
    [
        "not json",
        '{"type": 5, "session_id": "s9"}',  # not the struct's shape
        '{"type": "session", "session_id": "s9", "lessons": [{"path": 3}]}',
        '{"type": "session"} {"type": "session"}',  # two values on one line: counted by the caller
    ],
)
def test_a_body_the_plain_decoder_refuses_is_refused(bad: str) -> None:
    words = vocab.Vocabulary()
    words.decode_lines(FIRST)
    text = FIRST + bad.encode() + b"\n"
    assert plain(words.decode_lines(text)) == plain(decode_raw_lines(text))


def test_a_field_of_too_many_values_is_decoded_plainly(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(vocab, "MAX_VALUES", 2)
    words = vocab.Vocabulary()
    many = body(*(session(f"s{i}", 0.5, {"t/a.md": 0.5}, category=f"c{i}") for i in range(3)))
    assert plain(words.decode_lines(many)) == plain(decode_raw_lines(many))
    assert words.fields() == {"path": 1, "type": 1}  # three categories: the field is no longer narrowed
    more = body(session("s9", 0.5, {"t/a.md": 0.5}, category="c7"))
    assert plain(words.decode_lines(more)) == plain(decode_raw_lines(more)) and words.misses == 0


def test_after_enough_misses_the_plain_decoder_takes_over(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(vocab, "MISSES_ALLOWED", 2)
    words = vocab.Vocabulary()
    words.decode_lines(FIRST)
    for i in range(3):
        new = body(session(f"n{i}", 0.5, {f"t/new{i}.md": 0.5}))
        assert plain(words.decode_lines(new)) == plain(decode_raw_lines(new))
    assert words.misses == 2 and not words.open and words.fields() == {}  # the third: plain, nothing learnt


def read_log(log: Path, cache: Path, words: vocab.Vocabulary, monkeypatch: pytest.MonkeyPatch) -> LogReader:
    """A reader of `log` after one refresh (on two cores) that writes the parsed-log cache in `cache`,
    decoding with `words`."""
    monkeypatch.setattr(vocab, "VOCABULARY", words)
    monkeypatch.setattr(halves, "PARALLEL_MIN_BYTES", 0)
    monkeypatch.setattr(threading, "active_count", lambda: 1)
    monkeypatch.setattr(halves, "idle_core", lambda: True)
    reader = LogReader(open_store_of(log), cache_dir=cache, cache_threshold=0)
    reader.refresh(CreditSettings())
    return reader


def open_store_of(log: Path) -> Any:
    from lesson_credit.core.log.stores import open_store

    return open_store(None, log)


class PlainOnly(vocab.Vocabulary):
    """Decodes as before the vocabulary (never narrows)."""

    def decode_lines(self, body: bytes | memoryview) -> list[Any] | None:
        return decode_raw_lines(body)


def test_the_index_and_the_cache_are_those_of_the_plain_decoder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("lesson_credit.core.log.snapshot.BLOCK_ROWS", 8)  # 40 sessions: 5 blocks
    log = tmp_path / "sessions.jsonl"
    varied_log(log)
    before = read_log(log, tmp_path / "plain", PlainOnly(), monkeypatch)
    taught = vocab.Vocabulary()
    taught.decode_lines(log.read_bytes())  # every value of the log known: the narrow decoder reads all of it
    after = read_log(log, tmp_path / "taught", taught, monkeypatch)
    assert taught.misses == 0 and taught.fields()["path"] == 10  # t/l0-l6, t/bare.md, and t/late.md under two spellings
    assert state(after) == state(before)
    written = [
        (derived_cache.parts(d / DB_NAME), derived_cache.meta(d / DB_NAME))
        for d in (tmp_path / "plain", tmp_path / "taught")
    ]
    assert len(written[0][0]) == 5 and written[1] == written[0]
    # and read back: the cache either decoder wrote gives the same index
    again = LogReader(open_store_of(log), cache_dir=tmp_path / "taught", cache_threshold=0)
    again.refresh(CreditSettings())
    assert again.index.parts and state(again)["sessions"] == state(before)["sessions"]
