"""A grader's name typed in two Unicode forms: `Zoë` with ë as one code point (NFC, U+00EB) and with an e and
a combining diaeresis (NFD, U+0065 U+0308) look alike on every screen, so they are one person wherever
graders are told apart: agreement, `sessions --grader`, `undo --grader`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from lesson_credit.core.reward_report import agreement_report
from lesson_credit.core.workspace import Workspace
from tests.support.cli_run import run_cli
from tests.support.engine_helpers import LOG_REL, grade, make_workspace, session

NFC = "Zo\u00eb"
NFD = "Zoe\u0308"
LESSONS = {"a.md": (["deploy"], "active")}


def graded_log(tmp_path: Path) -> Path:
    """Three sessions: manual grades each (0.2, 0.4, 0.6), then Zoë each (0.3, 0.5, 0.9), typed NFC on s0 and
    NFD on s1 and s2 (two hooks, or two keyboards)."""
    events: list[dict[str, Any]] = []
    for i, (mine, hers, form) in enumerate([(0.2, 0.3, NFC), (0.4, 0.5, NFD), (0.6, 0.9, NFD)]):
        events += [session(f"s{i}", None, {"a.md": 0.5}), grade(f"s{i}", mine), grade(f"s{i}", hers, form)]
    return make_workspace(tmp_path, LESSONS, events)


def test_agreement_counts_the_two_forms_as_one_person(tmp_path: Path) -> None:
    ws = Workspace(graded_log(tmp_path))
    assert sorted(ws.person_scores()) == [NFC, "manual"]  # (upper case sorts first)
    (pair,) = [p for p in agreement_report(ws).pairs if "manual" in (p.source_a, p.source_b)]
    # by hand: manual 0.2 0.4 0.6 against Zoë 0.3 0.5 0.9 on all three sessions: |diff| 0.1 0.1 0.3, mean 0.5/3
    assert (pair.source_a, pair.n) == (NFC, 3)
    assert pair.mae is not None and abs(pair.mae - 0.5 / 3) < 1e-12
    # the source named in the other form is the same person
    named = agreement_report(ws, source=NFD).pairs
    assert [(p.source_a, p.n) for p in named if p.source_b == "manual"] == [(NFC, 3)]


def test_sessions_grader_matches_either_form(tmp_path: Path) -> None:
    root = graded_log(tmp_path)
    for typed in (NFC, NFD):
        code, out, err = run_cli("sessions", "-w", str(root), "--grader", typed, "--json")
        assert code == 0, err
        # Zoë's grade is the latest on every session: all three are hers
        assert [row["session_id"] for row in json.loads(out)["sessions"]] == ["s0", "s1", "s2"]


def test_undo_grader_takes_back_a_grade_given_in_the_other_form(tmp_path: Path) -> None:
    root = graded_log(tmp_path)
    before = (root / LOG_REL).read_bytes()
    code, _, err = run_cli("undo", "s1", "-w", str(root), "--grader", NFC)
    assert code == 0, err
    added = (root / LOG_REL).read_bytes()[len(before) :].decode("utf-8").splitlines()
    (event,) = [json.loads(line) for line in added]
    # the undo puts back what Zoë's 0.5 replaced (manual's 0.4 is another person's: her own score had none)
    assert (event["session_id"], event["grader"]) == ("s1", NFC)
    code, out, err = run_cli("sessions", "-w", str(root), "--grader", NFD, "--json")
    assert code == 0, err
    assert [row["session_id"] for row in json.loads(out)["sessions"]] == ["s0", "s2"]
