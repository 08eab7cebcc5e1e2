"""`select --category` in a hook: the lessons its kind of work leaves out are counted where the hook's
author reads (stderr, --json), and an empty --category (a hook's unset variable) is no kind at all."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli.cli_fixtures import LOG_REL, run

CONTEXT = "fix the flaky deploy\n"
LESSONS = {
    "any.md": "---\nmatch:\n  keywords: [deploy]\n---\n# Any\n",
    "code.md": "---\nmatch:\n  keywords: [deploy]\n  session_categories: [code]\n---\n# Code\n",
    "research.md": "---\nmatch:\n  keywords: [flaky]\n  session_categories: [research]\n---\n# Research\n",
}


def workspace(tmp_path: Path) -> Path:
    for name, text in LESSONS.items():
        path = tmp_path / "lessons" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    (tmp_path / "task.md").write_text(CONTEXT)
    return tmp_path


def select(capsys: pytest.CaptureFixture[str], ws: Path, *extra: str) -> tuple[int, str, str]:
    return run(capsys, "select", "-w", str(ws), "--context", str(ws / "task.md"), "--seed", "1", *extra)


def test_the_summary_counts_the_matching_lessons_left_out_by_their_kinds_of_work(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ws = workspace(tmp_path)
    code, out, err = select(capsys, ws, "--session-id", "s1", "--category", "triage")
    assert code == 0, err
    assert out.splitlines() == ["any.md"]  # code.md and research.md match the task but are for other kinds
    assert "1 of 1 matching lesson" in err
    assert "2 more left out: their match.session_categories do not name triage (code.md, research.md)" in err
    code, out, err = select(capsys, ws, "--session-id", "s2", "--category", "research", "--json")
    assert code == 0, err
    assert (json.loads(out)["left_out"], sorted(json.loads(out)["candidates"])) == (
        ["code.md"],
        ["any.md", "research.md"],
    )


def test_nothing_left_out_says_nothing_more(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = select(capsys, workspace(tmp_path), "--session-id", "s1")
    assert code == 0, err
    assert "3 of 3 matching lessons" in err
    assert "left out" not in err


def test_an_empty_category_is_no_kind_of_work(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ws = workspace(tmp_path)
    code, out, err = select(capsys, ws, "--session-id", "s1", "--category", "")
    assert code == 0, err
    # as without --category: every matching lesson may be drawn (k 10 > 3 candidates: all chosen)
    assert sorted(out.splitlines()) == ["any.md", "code.md", "research.md"]
    (event,) = [json.loads(line) for line in (ws / LOG_REL).read_text().splitlines()]
    assert "category" not in event


def test_a_record_of_another_kind_than_its_selection_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ws = workspace(tmp_path)
    (ws / "j.md").write_text("deployed\n")
    code, out, err = select(capsys, ws, "--session-id", "s1", "--category", "code")
    assert (code, sorted(out.splitlines())) == (0, ["any.md", "code.md"]), err
    record = ["record", "-w", str(ws), "--session-id", "s1", "--journal", str(ws / "j.md"), "--lessons", "code.md"]
    code, _, err = run(capsys, *record, "--category", "research")
    assert code == 0, err
    assert (
        "warning: session 's1' was selected for category 'code' and is recorded as 'research' (--category): "
        "its lessons were chosen for code" in err
    ), err
    events = [json.loads(line) for line in (ws / LOG_REL).read_text().splitlines()]
    assert [e.get("category") for e in events] == ["code", "research"]  # the record's own word is logged
    # the same category, another spelling of it (the estimates read `Code` as `code`), or none given (the
    # selection's is taken): nothing to say
    for sid, extra in (("s2", ["--category", "code"]), ("s3", []), ("s4", ["--category", " Code "])):
        assert select(capsys, ws, "--session-id", sid, "--category", "code")[0] == 0
        code, _, err = run(capsys, *record[:4], sid, *record[5:], *extra)
        assert (code, "warning" in err) == (0, False), err


def test_a_session_selected_but_never_recorded_says_what_is_missing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A session-end hook that never ran: `show` and `grade` said only "unknown session"."""
    ws = workspace(tmp_path)
    assert select(capsys, ws, "--session-id", "s1", "--category", "code")[0] == 0
    for argv in (["show", "s1"], ["grade", "s1", "0.5"]):
        code, out, err = run(capsys, *argv, "-w", str(ws))
        assert (code, out) == (1, ""), err
        assert err == (
            "lesson-credit: session 's1' has a selection but no record: `lesson-credit record --session-id s1 "
            "--journal FILE --lessons-file FILE` logs it (the session-end hook)\n"
        )
    code, _, err = run(capsys, "show", "s9", "-w", str(ws))  # neither: as before
    assert (code, err) == (1, "lesson-credit: unknown session 's9'\n")
    assert len((ws / LOG_REL).read_text().splitlines()) == 1  # nothing written


def test_an_empty_record_category_takes_the_selections(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A hook passing `--category "$CATEGORY"` to both calls with the variable unset: the record logged the
    category "" over the selection's (and, with the warning, said it differed)."""
    ws = workspace(tmp_path)
    (ws / "j.md").write_text("deployed\n")
    assert select(capsys, ws, "--session-id", "s1", "--category", "code")[0] == 0
    record = ["record", "-w", str(ws), "--session-id", "s1", "--journal", str(ws / "j.md"), "--lessons", "code.md"]
    code, _, err = run(capsys, *record, "--category", "")
    assert (code, "warning" in err) == (0, False), err
    events = [json.loads(line) for line in (ws / LOG_REL).read_text().splitlines()]
    assert events[1]["category"] == "code"


def test_the_summary_fits_80_columns_and_says_a_dry_run_logged_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # on the old code one line of 106 columns (a session id, the counts, seed, policy, category and the
    # lessons left out), and a dry run's summary looked like a logged session's
    ws = workspace(tmp_path)
    monkeypatch.setenv("COLUMNS", "80")
    code, out, err = select(capsys, ws, "--category", "triage", "--dry-run")
    assert code == 0 and out.splitlines() == ["any.md"], err
    assert max(len(line) for line in err.splitlines()) <= 80, err
    assert all(line.startswith("#") for line in err.splitlines()), err  # every wrapped line a comment
    said = " ".join(line.removeprefix("#").strip() for line in err.splitlines())
    assert said.endswith("(code.md, research.md); --dry-run: nothing logged"), err
    assert not (ws / LOG_REL).exists()


def test_a_dry_run_names_no_session_nothing_logged(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # a dry run's summary named a generated id ("# session 2026...: 1 of 3 ...") that nothing logged, and
    # --json gave it as session_id with nothing saying no selection is under it for a record to link to
    ws = workspace(tmp_path)
    code, out, err = select(capsys, ws, "--dry-run")
    assert code == 0, err
    assert err.startswith("# 3 of 3 matching lessons (seed 1"), err  # no category: all 3 match
    code, out, err = select(capsys, ws, "--dry-run", "--json")
    assert code == 0 and json.loads(out)["logged"] is False, err
    code, out, err = select(capsys, ws, "--dry-run", "--session-id", "mine")  # the id given stays named
    assert code == 0 and err.startswith("# session mine: 3 of 3 matching lessons"), err
    assert not (ws / LOG_REL).exists()


def test_a_logged_selection_says_so_in_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ws = workspace(tmp_path)
    code, out, err = select(capsys, ws, "--json")
    shown = json.loads(out)
    [logged] = [json.loads(line) for line in (ws / LOG_REL).read_text().splitlines()]
    assert code == 0 and (shown["logged"], shown["session_id"]) == (True, logged["session_id"]), err
