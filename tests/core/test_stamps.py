"""gptme_time, same_time and spellings (core/bandit/stamps.py): each stamp worked out by hand."""

from __future__ import annotations

from typing import Any

import pytest

from lesson_credit.core.bandit.interop import state_payload
from lesson_credit.core.bandit.stamps import gptme_time, same_time, spellings
from lesson_credit.core.workspace import Workspace
from tests.support.engine_helpers import make_workspace, session
from tests.support.two_arms import LESSONS, A


@pytest.mark.parametrize(
    ("logged", "written"),
    [
        ("2026-11-01T10:00:00Z", "2026-11-01T10:00:00+00:00"),
        ("2026-11-01T10:00:00", "2026-11-01T10:00:00+00:00"),
        ("2026-11-01T10:00:00-00:00", "2026-11-01T10:00:00+00:00"),
        ("2026-11-01 10:00:00.05Z", "2026-11-01T10:00:00.050000+00:00"),
        ("2026-11-01T12:00:00+02:00", "2026-11-01T12:00:00+02:00"),
        ("2026-11-01T10:00:00.000Z", "2026-11-01T10:00:00+00:00"),  # (isoformat writes no fraction of 0)
        ("2026-11-01", None),  # a date alone
        ("20261101T100000Z", None),  # the basic form
        ("2026-02-30T10:00:00Z", None),  # no such day
        ("2026-11-01T10:00:00.1234567Z", None),  # 7 digits
        ("session one", None),
        (["2026-11-01T10:00:00Z"], None),  # a file's value may be anything
        ({"at": 1}, None),
        (None, None),
    ],
)
def test_gptme_time(logged: Any, written: str | None) -> None:
    assert gptme_time(logged) == written


def test_same_time_takes_a_stamp_as_written_now_or_as_logged() -> None:
    assert same_time("2026-11-01T10:00:00+00:00", "2026-11-01T10:00:00Z")  # written now
    assert same_time("2026-11-01T10:00:00Z", "2026-11-01T10:00:00Z")  # as logged (versions before)
    assert same_time("session one", "session one")  # as logged, though no time
    assert not same_time("2026-11-01T12:00:00+02:00", "2026-11-01T10:00:00Z")  # the same instant, not as written
    assert not same_time("2026-11-01T10:00:00.000001+00:00", "2026-11-01T10:00:00Z")
    assert not same_time(None, "2026-11-01T10:00:00Z") and not same_time("2026-11-01T10:00:00+00:00", None)


def test_spellings_are_every_form_of_the_time_written() -> None:
    # offset 0, a fraction .5: T or space (2) x .5, .50, ..., .500000 (6) x +00:00, -00:00, Z, none (4) = 48
    found = spellings(["2026-11-01T10:00:00.500000+00:00"])
    assert len(found) == 48
    assert {"2026-11-01 10:00:00.5", "2026-11-01T10:00:00.500Z", "2026-11-01T10:00:00.500000-00:00"} <= found
    # an offset of its own, no fraction: 2 x (none, .0, ..., .000000: 7) x 1 = 14
    found = spellings(["2026-11-01T12:00:00+02:00"])
    assert len(found) == 14 and "2026-11-01 12:00:00.000+02:00" in found and "2026-11-01T10:00:00Z" not in found
    assert spellings(["session one"]) == {"session one"}


def test_a_stamp_that_is_not_a_string_is_written_anew(tmp_path: Any) -> None:
    """An arm no session with a time credits keeps the file's stamp, as gptme writes a time; a stamp that is not a
    string (a hand-edited file) is replaced by the time of the write, not a crash."""
    root = make_workspace(tmp_path, LESSONS, events=[session("s1", 1.0, {A: 1.0})])  # s1: no time
    post = Workspace(root).posterior()
    existing: dict[str, Any] = {"arms": {A: {"last_updated": ["x"]}}}
    arm = state_payload(post, [None] * len(post.arm_ids), "2026-12-06T10:00:00Z", existing)["arms"][A]
    assert arm["last_updated"] == "2026-12-06T10:00:00+00:00"
    existing = {"arms": {A: {"last_updated": "2026-09-01T00:00:00Z"}}}
    arm = state_payload(post, [None] * len(post.arm_ids), "2026-12-06T10:00:00Z", existing)["arms"][A]
    assert arm["last_updated"] == "2026-09-01T00:00:00+00:00"
