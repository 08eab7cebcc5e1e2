"""One passed-over rule (docs/format.md §5.2 "Passed over"), read alike by `record`'s warning and by the log's reader
(what every effect estimate reads, and `lint`): the same hand-written cases go through both, and each path must name
the lessons worked out by hand for each case.

Before, the reader took a selection that chose as many lessons as it offered to have passed nothing over, while
`record` compared the lessons themselves: a selection that chose a lesson that was no candidate (another tool's base
lesson) or one lesson in two spellings had `record` warn of the candidate it passed over, and the estimates read that
candidate as chosen before, `lint` saying nothing."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, NamedTuple

import pytest

from lesson_credit.core.workspace import Workspace
from tests.support.engine_helpers import LOG_REL, event_line, fixed_clock, make_workspace

A, B, C = "tools/a.md", "tools/b.md", "tools/c.md"
CAFE = "tools/caf\u00e9.md"  # the library's file name: é as one code point (NFC)
CAFE_NFD = "tools/cafe\u0301.md"  # the same name as a Mac spells it: `e` and a combining accent
LESSONS = {A: (["alpha"], "active"), B: (["beta"], "active"), C: (["gamma"], "active"), CAFE: (["cafe"], "active")}


def chose(candidates: list[str], selected: list[str], propensity: dict[str, float] | None = None) -> dict[str, Any]:
    """A selection event (its session id set by the case)."""
    given = {lesson: 0.5 for lesson in candidates} if propensity is None else propensity
    return {"type": "selection", "candidates": candidates, "selected": selected, "propensity": given}


class Case(NamedTuple):
    session_id: str
    selections: list[dict[str, Any]]  # logged before the record, in order
    lessons: list[str]  # record --lessons
    during: list[str]  # record --during
    later: list[dict[str, Any]]  # logged after the record
    passed: set[str]  # worked out by hand: the lessons the record names that its latest selection passed over


CASES = [
    Case("plain", [chose([A, B, C], [A])], [A, B], [], [], {B}),  # C: passed over, not named
    # several selections: the latest before the record counts; A chosen by the first and passed over by the
    # second, B the other way round
    Case("latest", [chose([A, B, C], [A]), chose([A, B, C], [B])], [A, B], [], [], {A}),
    Case("chose-nothing", [chose([A, B], [A]), chose([A, B], [])], [A, B], [], [], set()),  # no draw to go by
    Case("after-record", [chose([A, B], [A, B])], [A, B], [], [chose([A, B], [A])], set()),  # decided nothing
    # other spellings: `lessons/tools/a.md` is A, CAFE_NFD is CAFE
    Case("spellings", [chose([f"lessons/{A}", CAFE_NFD, B], [f"lessons/{A}", B])], [A, CAFE], [], [], {CAFE}),
    Case("chosen-twice", [chose([CAFE, B], [CAFE, CAFE_NFD])], [CAFE, B], [], [], {B}),  # one lesson, two spellings
    Case("chose-no-candidate", [chose([A, B], [A, C])], [A, B, C], [], [], {B}),  # C: a base lesson, no candidate
    Case("propensity-only", [chose([A], [A], {A: 0.5, B: 0.5})], [A, B], [], [], {B}),  # B: a key of propensity
    Case("during", [chose([A, B, C], [A])], [A, B], [C], [], {B}),  # C given with --during: marked, not warned of
    Case("no-selection", [], [A, B], [], [], set()),
]


def _warned(warnings: list[str]) -> set[str]:
    """The lessons `record`'s passed-over warning names (none without one)."""
    said = [w for w in warnings if "its selection passed over" in w]
    assert len(said) <= 1
    return set(re.findall(r"'([^']*)'", said[0].split("passed over ", 1)[1].split(";")[0])) if said else set()


def _append(root: Path, session_id: str, events: list[dict[str, Any]]) -> None:
    with (root / LOG_REL).open("ab") as log:
        log.write(b"".join(event_line({**event, "session_id": session_id}) for event in events))


@pytest.mark.parametrize("use_cache", [True, False])
def test_record_warns_of_the_lessons_lint_lists_and_the_estimates_read_as_included_during(
    tmp_path: Path, use_cache: bool
) -> None:
    root = make_workspace(tmp_path, lessons=LESSONS, events=[], journals={"j.md": "alpha beta gamma cafe"})
    warned: dict[str, set[str]] = {}
    for case in CASES:
        _append(root, case.session_id, case.selections)
        ws = Workspace(root, clock=fixed_clock)
        ws.record(case.session_id, root / "j.md", case.lessons, reward=0.5, during=case.during)
        warned[case.session_id] = _warned(ws.warnings)
        _append(root, case.session_id, case.later)
    ws = Workspace(root, clock=fixed_clock, use_cache=use_cache)
    linted = {session_id: set(lessons) for session_id, lessons in ws.passed_over()}
    data = ws.analysis_data()
    ids = ws.session_ids_between(0, data.n_sessions)
    read: dict[str, set[str]] = {}  # the lessons the estimates read as included during each session
    for entry in data.during.tolist():
        read.setdefault(ids[int(data.entry_session[entry])], set()).add(data.arm_ids[int(data.entry_arm[entry])])
    got = {sid: (warned[sid], linted.get(sid, set()), read.get(sid, set())) for sid in warned}
    assert got == {case.session_id: (case.passed, case.passed, case.passed | set(case.during)) for case in CASES}
