"""A session selected under one Unicode form of its id and recorded under another (`café` with é as one code
point from one hook, with `e` and a combining accent from another, as macOS file names spell it): the two
look the same everywhere, and `grade`, `show` and `undo` take either, so the record joins its selection."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from lesson_credit.core.base.errors import WorkspaceError
from lesson_credit.core.workspace import Workspace
from tests.support.engine_helpers import LOG_REL, fixed_clock, make_workspace

NFC, NFD = "caf\u00e9", "cafe\u0301"
LESSONS = {"a.md": (["git"], "active"), "b.md": (["git"], "active")}


def logged(root: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (root / LOG_REL).read_text(encoding="utf-8").splitlines()]


def test_a_record_under_another_unicode_form_joins_its_selection(tmp_path: Path) -> None:
    root = make_workspace(tmp_path, LESSONS, [], journals={"j.md": "git\n"})
    ws = Workspace(root, clock=fixed_clock)
    chosen = ws.select("git", k=1, seed=3, session_id=NFC, category="code")
    ws.record(NFD, root / "j.md", list(chosen.selected), reward=0.5)
    selection, recorded = logged(root)
    # one session, under the id its selection was logged with, of the kind of work it was selected for, with
    # the propensity the selection logged for its lesson
    assert (selection["type"], recorded["session_id"], recorded["category"]) == ("selection", NFC, "code")
    (entry,) = recorded["lessons"]
    assert entry["propensity"] == selection["propensity"][entry["path"]]
    assert entry["included"] == "before"
    assert Workspace(root, clock=fixed_clock).selected_never_recorded() == []
    # the two ids print alike: the warning names which form each is
    assert any(f"{NFD!r} (NFD) was selected as {NFC!r} (NFC)" in w for w in ws.warnings)


def test_each_form_keeps_its_own_selection_when_both_are_selected(tmp_path: Path) -> None:
    root = make_workspace(tmp_path, LESSONS, [], journals={"j.md": "git\n"})
    ws = Workspace(root, clock=fixed_clock)
    ws.select("git", k=1, seed=3, session_id=NFC, category="code")
    ws.select("git", k=1, seed=3, session_id=NFD, category="research")
    ws.record(NFD, root / "j.md", ["a.md"], reward=0.5)
    assert (logged(root)[-1]["session_id"], logged(root)[-1]["category"]) == (NFD, "research")


def test_a_record_under_another_form_of_a_recorded_id_is_refused(tmp_path: Path) -> None:
    # no selection to join: a second session under an id that prints as the first's could not be told from it
    root = make_workspace(tmp_path, LESSONS, [], journals={"j.md": "git\n"})
    ws = Workspace(root, clock=fixed_clock)
    ws.record(NFC, root / "j.md", ["a.md"], reward=0.5)
    before = (root / LOG_REL).read_bytes()
    with pytest.raises(WorkspaceError, match=r"already recorded as 'café' \(NFC\), another Unicode form"):
        ws.record(NFD, root / "j.md", ["b.md"], reward=0.9)
    with pytest.raises(WorkspaceError, match="already recorded as"):  # nor selected under it
        ws.select("git", k=1, seed=3, session_id=NFD)
    assert (root / LOG_REL).read_bytes() == before
