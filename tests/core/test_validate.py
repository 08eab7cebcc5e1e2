"""A writer validates an event as the reader does: `validate` refuses exactly what `to_event`
refuses, with the same reason, for every kind of event (it only skips building the event)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lesson_credit.core.log.events import InvalidEvent, decode_raw, to_event, validate

NUMBERS = st.one_of(st.none(), st.floats(allow_nan=False), st.integers(-3, 3), st.sampled_from([0.0, 0.5, 1.0, 1.5]))
IDS = st.one_of(st.none(), st.just(""), st.sampled_from(["s1", "lessons/", "lessons/tools/a.md"]), st.integers(0, 9))
PATHS = st.one_of(st.none(), st.just(""), st.sampled_from(["tools/a.md", "lessons/", "lessons/b.md", "x"]))
ENTRY = st.one_of(
    PATHS.filter(lambda p: p is not None),
    st.fixed_dictionaries({}, optional={"path": PATHS, "arm_id": PATHS, "salience": NUMBERS, "propensity": NUMBERS}),
)
PRIOR = st.fixed_dictionaries(
    {"alpha": NUMBERS, "beta": NUMBERS}, optional={"n": st.integers(-1, 3), "rewards": st.integers(-1, 3)}
)
EVENT = st.fixed_dictionaries(
    {},
    optional={
        "type": st.sampled_from(["session", "grade", "selection", "prior", "retire", "other"]),
        "session_id": IDS,
        "base_reward": NUMBERS,
        "lessons": st.one_of(st.none(), st.lists(ENTRY, max_size=4)),
        "arms": st.dictionaries(st.sampled_from(["a", "lessons/b.md", ""]), PRIOR, max_size=3),
        "retired": st.lists(st.one_of(PATHS, st.integers(0, 2)), max_size=3),
        "candidates": st.lists(st.sampled_from(["a", "b"]), max_size=2),
        "selected": st.lists(st.sampled_from(["a", "b"]), max_size=2),
        "outcome": st.one_of(st.none(), st.sampled_from(["productive", ""]), st.floats(0, 1)),
    },
)


def verdict(check: Any, event: dict[str, Any]) -> str | None:
    """None when `check` accepts the decoded event, else its reason."""
    try:
        check(decode_raw(json.dumps(event)))
    except InvalidEvent as exc:
        return str(exc)
    return None


@settings(max_examples=400, deadline=None)
@given(EVENT)
def test_validate_refuses_what_the_reader_refuses(event: dict[str, Any]) -> None:
    try:
        decode_raw(json.dumps(event))
    except InvalidEvent:
        return  # not even the permissive shape: both refuse it at decoding
    assert verdict(validate, event) == verdict(to_event, event)


@pytest.mark.parametrize(
    ("event", "reason"),
    [
        ({"type": "session", "session_id": "s1", "lessons": [{"path": "a.md", "salience": 1.5}]}, r"outside \[0, 1\]"),
        ({"session_id": "s1"}, "without 'lessons'"),
        ({"session_id": "s1", "lessons": ["a.md"] * 1001}, "naming 1,001 lessons"),  # bare ids: the slow path too
        (
            {"type": "session", "session_id": "s1", "lessons": [{"path": "a.md", "salience": 1}] * 1001},
            r"at most 1,000",
        ),
        ({"type": "grade", "session_id": "s1", "base_reward": 2.0}, "base_reward"),
        ({"type": "prior", "arms": {"a": {"alpha": 0, "beta": 1}}}, "positive finite"),
        ({"type": "retire", "retired": []}, "without 'retired'"),
        ({"type": "later", "session_id": "s1"}, "unknown event type"),
    ],
)
def test_validate_refuses_each_kind_of_bad_event(event: dict[str, Any], reason: str) -> None:
    with pytest.raises(InvalidEvent, match=reason):
        validate(decode_raw(json.dumps(event)))


def test_validate_accepts_a_session_in_the_published_shape() -> None:
    validate(decode_raw(json.dumps({"session_id": "s1", "lessons": ["tools/a.md", {"path": "b.md", "salience": 0.5}]})))
