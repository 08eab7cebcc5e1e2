"""A relative `record --journal` is looked for in the workspace first, then in the current folder:
`show` prints journal paths relative to the workspace, and an agent driver
running from elsewhere passed them back that way. Errors name every path tried."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.cli_run import run_cli
from tests.support.engine_helpers import BASIC_JOURNAL, BASIC_LESSONS, LOG_REL, make_workspace

GIT = "tools/git.md"


@pytest.fixture
def elsewhere(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The current folder: outside the workspace (tmp_path/ws)."""
    cwd = tmp_path / "driver"
    cwd.mkdir()
    monkeypatch.chdir(cwd)
    return cwd


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    return make_workspace(tmp_path, BASIC_LESSONS, journals={"journals/j.md": BASIC_JOURNAL})


def record(ws: Path, journal: str, *extra: str) -> tuple[int, str, str]:
    return run_cli("record", "-w", str(ws), "--session-id", "s1", "--journal", journal, "--lessons", GIT, *extra)


def last_event(ws: Path) -> dict[str, object]:
    event: dict[str, object] = json.loads((ws / LOG_REL).read_text().splitlines()[-1])
    return event


def test_a_workspace_relative_journal_is_found_from_anywhere(ws: Path, elsewhere: Path) -> None:
    code, _, err = record(ws, "journals/j.md")
    assert code == 0, err
    assert last_event(ws)["journal_path"] == "journals/j.md"


def test_the_workspaces_file_wins_over_the_current_folders(ws: Path, elsewhere: Path) -> None:
    (elsewhere / "journals").mkdir()
    (elsewhere / "journals" / "j.md").write_text("something else entirely")
    code, _, err = record(ws, "journals/j.md", "--allow-outside")
    assert code == 0, err
    assert last_event(ws)["journal_path"] == "journals/j.md"


def test_then_the_current_folder_as_before(ws: Path, elsewhere: Path) -> None:
    (elsewhere / "notes.md").write_text(BASIC_JOURNAL)
    code, _, err = record(ws, "notes.md")
    assert code == 1
    (line,) = err.strip().splitlines()
    assert str(elsewhere / "notes.md") in line and "--allow-outside" in line
    code, _, err = record(ws, "notes.md", "--allow-outside")
    assert code == 0, err
    assert last_event(ws)["journal_path"] == str(elsewhere / "notes.md")


def test_not_found_names_every_path_tried(ws: Path, elsewhere: Path) -> None:
    for extra in ((), ("--allow-outside",)):
        code, _, err = record(ws, "journals/missing.md", *extra)
        assert code == 1
        (line,) = err.strip().splitlines()
        assert str(ws / "journals" / "missing.md") in line and str(elsewhere / "journals" / "missing.md") in line
        assert "--allow-outside" not in line  # the flag would not help
    assert not (ws / LOG_REL).exists()


def test_a_journal_outside_is_named_once_unless_it_leads_elsewhere(ws: Path, elsewhere: Path) -> None:
    """The refusal said `journal /x/notes.md (/x/notes.md) is outside ...`: the path twice over."""
    (elsewhere / "notes.md").write_text(BASIC_JOURNAL)
    code, _, err = record(ws, str(elsewhere / "notes.md"))
    assert (code, err) == (
        1,
        f"lesson-credit: journal {elsewhere / 'notes.md'} is outside the workspace {ws}; "
        "pass --allow-outside to read it\n",
    )
    (ws / "journals" / "link.md").symlink_to(elsewhere / "notes.md")  # a path inside leading out: both said
    code, _, err = record(ws, "journals/link.md")
    assert code == 1 and f"journal journals/link.md ({elsewhere / 'notes.md'}) is outside" in err, err
    assert not (ws / LOG_REL).exists()
