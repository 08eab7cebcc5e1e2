"""A state file's top-level keys counted from its bytes (arm_count.count_members), and the file read with the keys
lesson-credit does not read kept as their bytes (state_reading.decode_state). The counts are by hand."""

from __future__ import annotations

import json

import msgspec
import pytest

from lesson_credit.core.bandit import arm_count, state_reading
from lesson_credit.core.base.safe_json import JsonError


def pieces(raw: bytes, size: int) -> list[bytes]:
    return [raw[at : at + size] for at in range(0, len(raw), size)]


# colons, braces and quotes inside strings and nested values are not top-level keys
TRICKY = b'{"a": {"b": 1, "c": [1, {"d": 2}]}, "e:{\\"": "x:}{", "f\\\\": [":", "{"], "g": null}'


@pytest.mark.parametrize("size", [1, 2, 3, 7, 1 << 22])
def test_the_top_level_keys_are_counted_whatever_the_pieces(size: int) -> None:
    assert len(json.loads(TRICKY)) == 4  # a, e:{", f\, g
    assert arm_count.count_members(pieces(TRICKY, size), 10) == 4
    assert arm_count.count_members(pieces(TRICKY, size), 3) > 3  # (past the limit: counted no further)
    assert arm_count.count_members(pieces(b'[{"a": 1}, {"b": 2}]', size), 10) == 0  # (no object)


def test_a_key_given_twice_counts_twice_and_bytes_not_json_tell_nothing() -> None:
    assert arm_count.count_members([b'{"a": 1, "a": 2, "b": 3}'], 10) == 3
    assert arm_count.count_members([b'{"a": 1 "b": 2, "c": 3, "d": 4}'], 2) == -1  # (not JSON from "b" on)
    assert arm_count.count_members([b'{"a": 1}}, "b": 2}'], 10) == -1  # (closes more than it opened)


def test_the_keys_not_read_are_kept_as_their_bytes() -> None:
    raw = (
        b'{"arms": {"x": {"alpha": 2.0}}, "contextual_arms": {"x": {"[\\"a\\", \\"b\\"]": [1.50, "\\u00e9"]}},\n"n": 1}'
    )
    state = state_reading.decode_state(raw, "f")
    assert state is not None
    assert state["arms"] == {"x": {"alpha": 2.0}}  # decoded
    assert state["contextual_arms"] == msgspec.Raw(b'{"x": {"[\\"a\\", \\"b\\"]": [1.50, "\\u00e9"]}}')  # as it was
    assert state["n"] == msgspec.Raw(b"1")
    assert list(state) == ["arms", "contextual_arms", "n"]
    assert state_reading.decode_state(b'[{"arms": {}}]', "f") is None


def test_a_value_read_that_is_not_usable_is_said_of_the_file_where() -> None:
    raw = b'{"contextual_arms": {},\n"arms": {"x": ' + b"[" * 150 + b"]" * 150 + b"}}"
    with pytest.raises(JsonError, match=r"^f, line 2: JSON nested too deeply"):
        state_reading.decode_state(raw, "f")
    with pytest.raises(JsonError, match=r"^f, line 2: not valid JSON"):
        state_reading.decode_state(b'{"contextual_arms": {},\n"arms": {"x": 1,}}', "f")


def test_the_stamp_hashes_a_key_not_read_by_its_text_without_spaces() -> None:
    """Written (msgspec: reindented) and read back, a key kept as bytes hashes the same; one decoded hashes as its
    compact encoding, which is what reading it back as bytes gives."""
    kept = state_reading.decode_state(b'{"arms": {}, "k": {"b": [1.50, "\\u00e9"], "a": 1}}', "f")
    assert kept is not None
    written = msgspec.json.format(msgspec.json.encode(kept), indent=2)
    again = state_reading.decode_state(written, "f")
    assert again is not None and state_reading.state_stamp(again) == state_reading.state_stamp(kept)
    decoded = {"arms": {}, "k": {"b": [1.5, "é"], "a": 1}}
    back = state_reading.decode_state(msgspec.json.format(msgspec.json.encode(decoded), indent=2), "f")
    assert back is not None and state_reading.state_stamp(back) == state_reading.state_stamp(decoded)
    assert state_reading.state_stamp(kept) != state_reading.state_stamp(decoded)  # (1.50 and \u00e9 as written)
