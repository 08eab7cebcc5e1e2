"""The vocabulary (core/log/vocab.py) learns from bodies of at least LEARN_MIN_BYTES only: a tail or a
line appended is decoded once, plainly, with no narrowed decoder built for the bodies after it."""

from __future__ import annotations

import json

import msgspec

from lesson_credit.core.log import vocab
from lesson_credit.core.log.events import decode_raw_lines
from tests.support.engine_helpers import session


def _body(n: int) -> bytes:
    lines = [json.dumps(session(f"s{i}", 0.5, {f"t/l{i % 7}.md": 0.25}, category="docs")) for i in range(n)]
    return "".join(line + "\n" for line in lines).encode()


def test_a_small_body_is_decoded_plainly_and_teaches_nothing() -> None:
    words = vocab.Vocabulary()
    small = _body(50)  # a record's tail: a few KB
    assert len(small) < vocab.LEARN_MIN_BYTES
    assert msgspec.to_builtins(words.decode_lines(small)) == msgspec.to_builtins(decode_raw_lines(small))
    assert words.fields() == {}  # the old code learnt its 7 paths and built a decoder for them


def test_a_big_body_teaches_its_values() -> None:
    words = vocab.Vocabulary()
    big = _body(vocab.LEARN_MIN_BYTES // len(_body(1)) + 1)  # a chunk of a big log's read
    assert len(big) >= vocab.LEARN_MIN_BYTES
    assert msgspec.to_builtins(words.decode_lines(big)) == msgspec.to_builtins(decode_raw_lines(big))
    assert words.fields() == {"path": 7, "type": 1, "category": 1}  # (no strategy, no grader)
