"""A kind of work typed in two Unicode forms: `café` with a composed é (NFC, U+00E9) and with an e and a
combining accent (NFD, U+0065 U+0301) look alike on every screen, so every place that groups kinds of work
reads them as one kind, as it reads `Code` and `code`."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from lesson_credit.core.bandit.select import category_of
from lesson_credit.core.reward_report import agreement_report
from lesson_credit.core.workspace import Workspace
from tests.support.cli_run import run_cli
from tests.support.engine_helpers import grade, make_workspace, session

NFC = "caf\u00e9"
NFD = "cafe\u0301"
LESSONS = {"a.md": (["deploy"], "active"), "b.md": (["deploy"], "active")}


def cafe_log(tmp_path: Path) -> Path:
    """Eight graded sessions of one kind of work, five logged NFD and three NFC, and two of another (`tea`);
    a lesson for the kind of work (its match.session_categories in the NFD form)."""
    events: list[dict[str, Any]] = []
    for i in range(10):
        category = NFD if i < 5 else NFC if i < 8 else "tea"
        events.append(session(f"s{i}", None, {"a.md" if i % 2 else "b.md": 0.5}, category=category))
        events.append(grade(f"s{i}", 0.1 * (i + 1)))
        events.append(grade(f"s{i}", 0.1 * (i + 1) - 0.05, "judge"))
    root = make_workspace(tmp_path, LESSONS, events)
    (root / "lessons" / "for-cafe.md").write_text(
        f"---\nmatch:\n  keywords: [deploy]\n  session_categories: ['{NFD}']\n---\n# For the café\n", encoding="utf-8"
    )
    (root / "task.md").write_text("fix the deploy\n", encoding="utf-8")
    return root


def sessions_matching(root: Path) -> str:
    code, out, err = run_cli("sessions", "-w", str(root), "--category", NFC)
    assert code == 0, err
    return out.splitlines()[-1]


def select_says(root: Path) -> tuple[bool, list[str]]:
    """Whether `select --category` (typed NFC) says no session is of the kind, and the lessons it may draw."""
    argv = ["select", "-w", str(root), "--context", str(root / "task.md"), "--seed", "1", "--category", NFC]
    code, out, err = run_cli(*argv, "--session-id", "q1", "--json")
    assert code == 0, err
    return "no session in the log is of kind" in err, sorted(json.loads(out)["candidates"])


def agreement_kinds(root: Path) -> list[str]:
    return [name for name, _ in agreement_report(Workspace(root), source="judge").by_category]


def fitted_kinds(root: Path) -> list[str]:
    return list(Workspace(root).joint_posterior().categories)


def record_warns(root: Path) -> bool:
    """A session selected for the NFD kind, recorded as the NFC one: a warning that the kinds differ?"""
    (root / "j.md").write_text("deployed\n", encoding="utf-8")
    argv = ["select", "-w", str(root), "--context", str(root / "task.md"), "--category", NFD, "--session-id", "r1"]
    assert run_cli(*argv)[0] == 0
    record = ["record", "-w", str(root), "--session-id", "r1", "--journal", str(root / "j.md"), "--lessons", "a.md"]
    code, _, err = run_cli(*record, "--category", NFC)
    assert code == 0, err
    return "warning" in err


FACES: list[tuple[str, Callable[[Path], Any], Any]] = [
    # 8 of the 10 sessions are of the kind (5 + 3), the 2 `tea` ones not
    ("sessions --category", sessions_matching, "8 of 10 sessions match"),
    # the kind is in the log, and the lesson for it (written NFD) may be drawn with a.md and b.md
    ("select --category", select_says, (False, ["a.md", "b.md", "for-cafe.md"])),
    # one kind named by the spelling most of its sessions use (NFD: 5 of 8), printed in the composed form
    # people type (NFC: a `grep café` typed on a keyboard finds it), and tea
    ("agreement by_category", agreement_kinds, [NFC, "tea"]),
    ("fit's kinds of work", fitted_kinds, [NFC, "tea"]),
    ("record against its selection", record_warns, False),
]


@pytest.mark.parametrize(("face", "read", "expected"), FACES, ids=[face for face, _, _ in FACES])
def test_every_face_reads_the_two_forms_as_one_kind(
    tmp_path: Path, face: str, read: Callable[[Path], Any], expected: Any
) -> None:
    assert read(cafe_log(tmp_path)) == expected, face


def test_the_config_categories_in_two_forms_are_one_category() -> None:
    # [categories] with the kind listed twice, once per form: one category, named as it is first in the table,
    # its keywords pooled: `beans` (NFD's) and `latte` (NFC's) are 2 hits against tea's 1 (`leaf`); read as
    # three categories, each has 1 hit and the tie goes to tea, first in the table
    table = {"tea": ("leaf", "pot"), NFD: ("beans",), NFC: ("latte",)}
    assert category_of("latte beans leaf", table) == NFD
