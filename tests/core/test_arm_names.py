"""One arm per lesson whatever Unicode form the log spelled its id in, shown as the library spells it."""

from __future__ import annotations

from pathlib import Path

import pytest

from lesson_credit.core.base.ids import library_spellings
from lesson_credit.core.log.arm_names import ArmNames
from lesson_credit.core.log.index import LogIndex
from lesson_credit.core.workspace import Workspace
from tests.support.engine_helpers import make_workspace, session

NFC = "tools/caf\u00e9.md"  # é as one code point
NFD = "tools/cafe\u0301.md"  # e and a combining accent


def test_both_forms_are_one_arm_shown_as_first_logged_until_the_library_spells_it() -> None:
    index = LogIndex()
    assert [index.arm(NFD), index.arm("tools/git.md"), index.arm(NFC)] == [0, 1, 0]
    assert (index.arm_ids, index.unicode_arms) == ([NFD, "tools/git.md"], True)
    assert index.find_arm(NFC) == index.find_arm(NFD) == 0 and index.find_arm("tools/other.md") is None
    assert index.use_spellings(library_spellings([NFC, "tools/git.md"])) is True
    assert index.arm_ids == [NFC, "tools/git.md"] and index.logged_ids() == [NFD, "tools/git.md"]
    assert index.shown(NFD) == NFC and index.shown("gone/x.md") == "gone/x.md"
    assert index.use_spellings({}) is True  # the library no longer has it: as the log first spelled it
    assert index.arm_ids == index.logged_ids() == [NFD, "tools/git.md"]


def test_an_arm_first_logged_after_the_spellings_are_set_is_shown_as_the_library_spells_it() -> None:
    index = LogIndex()
    index.arm("tools/git.md")
    assert index.use_spellings(library_spellings([NFD])) is False  # no arm of it yet (and all ASCII)
    assert index.arm(NFC) == 1 and index.arm_ids == ["tools/git.md", NFD]
    assert index.logged_ids() == ["tools/git.md", NFC]


def test_a_library_holding_both_forms_spells_neither() -> None:
    # two files whose names differ only in form: the log's one arm keeps the log's spelling
    assert library_spellings([NFC, NFD, "tools/git.md"]) == {}
    assert library_spellings([NFD]) == {NFC: NFD}


def test_arms_loaded_from_the_cache_are_refused_when_two_are_one_lesson() -> None:
    """What the parsed-log cache lists is one arm per lesson: the same id twice, or one lesson in both forms,
    is a damaged cache (ValueError: rebuilt from the log); ASCII ids and other ones load as listed."""
    for listed in (["a.md", "b.md", "a.md"], [NFC, "b.md", NFD]):
        with pytest.raises(ValueError):
            ArmNames().load_arms(listed)
    for listed in (["a.md", "b.md"], ["a.md", NFD]):
        names = ArmNames()
        names.load_arms(listed)
        assert names.arm_ids == listed and [names.find_arm(i) for i in listed] == [0, 1]
        assert names.find_arm("c.md") is None and names.arm("c.md") == 2


def test_a_line_skipped_as_invalid_makes_no_arm_and_spells_none(tmp_path: Path) -> None:
    """Line 1 is skipped (an `included` that is neither before nor during) and names the lesson in NFD and
    tools/ghost.md; line 2 names it in NFC. The arms are line 2's alone, the lesson spelled as line 2 spells it:
    the batch read made line 1's arms before its check refused the line (NFD shown, and a ghost arm)."""
    bad = session("s1", 0.5, {NFD: 1.0, "tools/ghost.md": 1.0})
    bad["lessons"][0]["included"] = "sometimes"
    root = make_workspace(tmp_path, {}, events=[bad, session("s2", 0.5, {NFC: 1.0, "tools/git.md": 0.5})])
    ws = Workspace(root)
    assert [str(problem) for problem in ws.log_problems()] == [
        "line 1: lesson 'included' must be 'before' or 'during', not 'sometimes'"
    ]
    assert list(ws.data().arm_ids) == [NFC, "tools/git.md"]
