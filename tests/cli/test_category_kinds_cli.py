"""Kinds of work at the command line: `sessions --category` groups categories as the estimates and
`select` do (stripped, lower-cased), and `select --category` names a kind no logged session has."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest

from tests.cli.cli_fixtures import make_ws, run, run_json, session

CI = "tools/ci.md"


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    events = [
        session("s1", 0.5, {CI: 1.0}, category="CI-Repair"),
        session("s2", 0.6, {}, category="ci-repair"),
        session("s3", 0.4, {CI: 1.0}, category="code"),
        session("s4", 0.7, {CI: 1.0}, category=" ci-repair "),
        session("s5", 0.3, {}),
    ]
    ws = make_ws(tmp_path, lessons={CI: ["ci"]}, events=events)
    (ws / "task.md").write_text("the ci is red\n")
    return ws


def test_sessions_category_lists_every_spelling_of_the_kind(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for spelling in ("ci-repair", "CI-Repair", " Ci-Repair"):
        payload = run_json(capsys, "sessions", "-w", str(ws), "--category", spelling)
        # by hand: s1, s2 and s4 spell ci-repair three ways; s3 is code, s5 has none
        assert [s["session_id"] for s in payload["sessions"]] == ["s1", "s2", "s4"]
    payload = run_json(capsys, "sessions", "-w", str(ws), "--category", "code")
    assert [s["session_id"] for s in payload["sessions"]] == ["s3"]


def test_select_names_a_kind_no_session_has_and_still_selects(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv = ("select", "-w", str(ws), "--context", str(ws / "task.md"), "--seed", "1", "--dry-run")
    code, out, err = run(capsys, *argv, "--category", "ci-repiar")
    assert code == 0, err
    assert out.splitlines() == [CI]
    # the kinds logged, as the estimates group them: s1, s2, s4 are one kind
    assert "no session in the log is of kind ci-repiar (a new kind of work, or a typo? logged: ci-repair, code)" in err
    for known in ("CI-REPAIR", "code"):
        code, out, err = run(capsys, *argv, "--category", known)
        assert code == 0 and out.splitlines() == [CI], err
        assert "no session in the log" not in err


def test_select_json_carries_the_new_kind_note_in_its_warnings(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A hook reading `select --json` learns of the kind no session has too (the `#` summary said it alone)."""
    argv = ("select", "-w", str(ws), "--context", str(ws / "task.md"), "--seed", "1", "--dry-run")
    payload = run_json(capsys, *argv, "--category", "ci-repiar")
    assert payload["selected"] == [CI]
    assert (
        "no session in the log is of kind ci-repiar (a new kind of work, or a typo? logged: ci-repair, code)"
        in (payload["warnings"])
    )
    assert not any("no session in the log" in w for w in run_json(capsys, *argv, "--category", "Code")["warnings"])


def test_a_store_failing_after_the_selection_is_logged_still_reports_it(
    ws: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The new-kind note reads the log's categories after the selection is written; a store failing then
    ended the command with an error (exit 1) while the selection was in the log."""
    from lesson_credit.core.base.files import StoreError
    from lesson_credit.core.workspace import Workspace

    log = ws / "state" / "lesson-thompson" / "sessions.jsonl"
    categories = Workspace.session_categories

    def failing(self: Workspace) -> Sequence[str | None]:  # (the joint policy reads them before the write)
        if '"n1"' in log.read_text():
            raise StoreError("the store went away (a test)")
        return categories(self)

    monkeypatch.setattr(Workspace, "session_categories", failing)
    before = log.read_text().count('"type":"selection"') + log.read_text().count('"type": "selection"')
    argv = ("select", "-w", str(ws), "--context", str(ws / "task.md"), "--seed", "1", "--session-id", "n1")
    code, out, err = run(capsys, *argv, "--category", "ci-repiar")
    assert (code, out.splitlines()) == (0, [CI]), err
    after = log.read_text().count('"type":"selection"') + log.read_text().count('"type": "selection"')
    assert after == before + 1
