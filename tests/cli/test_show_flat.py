"""`show` costs its own session, not the log: it finds the session's row by id, without the table of
every session (at a million sessions that table took 2.6 s of a 3 s `show`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from lesson_credit.core.workspace import Workspace
from tests.cli.cli_fixtures import make_ws, run_json
from tests.support.engine_helpers import session
from tests.support.records_helpers import agreement_workspace


def _no_table(self: Workspace) -> None:
    raise AssertionError("show listed every session")


def test_show_without_records_lists_no_sessions(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    sessions = [session(f"s{i}", i / 4, {"a.md": 1.0}) for i in range(4)]
    root = make_ws(tmp_path, {"a.md": ["alpha"]}, sessions)
    monkeypatch.setattr(Workspace, "session_table", _no_table)
    out = run_json(capsys, "show", "s2", "-w", str(root))
    assert out["session_id"] == "s2" and out["base_reward"] == 0.5  # the third session's reward: 2 / 4
    assert out["record"] is None


def test_show_with_a_record_joins_it_without_listing_the_sessions(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    root = agreement_workspace(tmp_path)  # s2's gptme-sessions record has the judge's 0.6; manual graded it 0.2
    monkeypatch.setattr(Workspace, "session_table", _no_table)
    out = run_json(capsys, "show", "s2", "-w", str(root))
    assert out["session_id"] == "s2" and out["base_reward"] == 0.2
    assert out["record"]["llm_judge_score"] == 0.6
