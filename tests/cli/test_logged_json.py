"""A --json write command whose event is stored but cannot be shown (the log not read back, no memory for
what it prints) still prints a JSON object on stdout: the event is logged, its effect is not known."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lesson_credit.core.workspace import Workspace
from tests.support.cli_run import run_cli
from tests.support.engine_helpers import BASIC_JOURNAL, BASIC_LESSONS, LOG_REL, make_workspace, session

GRADE = ("grade", "s", "0.9")  # "s": a unique prefix of s1
RECORD = ("record", "--session-id", "n1", "--journal", "j.txt", "--lessons", "tools/git.md", "--reward", "0.5")
UNMAPPED = "libscipy_openblas.so: failed to map segment from shared object"


def _ws(tmp_path: Path) -> Path:
    events = [session("s1", 0.5, {"tools/git.md": 0.5})]
    root = make_workspace(tmp_path, BASIC_LESSONS, events=events, journals={"j.txt": BASIC_JOURNAL})
    (root / "ctx.txt").write_text("git quote")
    return root


@pytest.mark.parametrize(
    ("argv", "step", "failure", "session_id"),
    [
        (GRADE, "explain", MemoryError(), "s1"),  # as the store gone: a warning (StoredUnread)
        (GRADE, "explain", ImportError(UNMAPPED), "s1"),  # escapes the command: the process boundary's
        (("undo", "s1"), "explain", MemoryError(), "s1"),
        (RECORD, "explain", MemoryError(), "n1"),
        (RECORD, "explain", ImportError(UNMAPPED), "n1"),
        (("import-gptme", "{state}"), "refresh", MemoryError(), None),
    ],
    ids=["grade", "grade-unmapped", "undo", "record", "record-unmapped", "import-gptme"],
)
def test_a_logged_event_not_read_back_still_prints_json(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    argv: tuple[str, ...],
    step: str,
    failure: BaseException,
    session_id: str | None,
) -> None:
    """It exited 0 with nothing on stdout (the warning on stderr only): a script parsing stdout got no JSON."""
    root = _ws(tmp_path)
    state = tmp_path / "gptme-state.json"
    state.write_text(json.dumps({"arms": {"tools/git.md": {"alpha": 2.0, "beta": 1.0}}}))
    if argv[0] == "undo":
        assert run_cli(*GRADE, "--workspace", str(root))[0] == 0  # a grade to undo
    log = root / LOG_REL
    before = log.read_bytes()
    original = getattr(Workspace, step)

    def fails_once_logged(self: Workspace, *args: object, **kwargs: object) -> object:
        if log.read_bytes() != before:
            raise failure
        return original(self, *args, **kwargs)

    monkeypatch.setattr(Workspace, step, fails_once_logged)
    argv = tuple(a.format(state=state) for a in argv)
    code, out, err = run_cli(*argv, "--json", "--workspace", str(root))
    assert log.read_bytes()[len(before) :].count(b"\n") == 1  # the event is logged, once
    assert code == 0 and err.count("\n") == 1, err
    [warning] = [line.removeprefix("warning: ") for line in err.splitlines()]
    assert json.loads(out) == {
        "command": argv[0],
        "session_id": session_id,
        "logged": True,
        "read_back": False,
        "warnings": [warning],
    }


def test_a_selection_logged_then_not_printed_names_its_generated_id(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No --session-id: the id select generated and logged is the one a record must use, so it is in the
    object printed when what select prints ran out of memory."""
    root = _ws(tmp_path)
    log = root / LOG_REL
    before = log.read_bytes()

    def exhausted(*args: object, **kwargs: object) -> None:
        raise MemoryError

    monkeypatch.setattr("lesson_credit.cli.commands.selection.print_json", exhausted)
    code, out, err = run_cli("select", "--context", str(root / "ctx.txt"), "--json", "--workspace", str(root))
    [logged] = [json.loads(line) for line in log.read_bytes()[len(before) :].splitlines()]
    assert code == 0, err
    shown = json.loads(out)
    assert (shown["command"], shown["session_id"], shown["logged"]) == ("select", logged["session_id"], True)


@pytest.mark.parametrize(
    ("step", "failure"),
    [("log_draw", MemoryError()), ("refresh", ImportError(UNMAPPED))],
    ids=["out-of-memory-after-the-write", "unmapped-library-reading-back"],
)
def test_a_selection_that_fails_before_select_returns_names_its_generated_id(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, step: str, failure: BaseException
) -> None:
    """No --session-id, and the failure between logging the selection and `select` returning (no memory once
    the event is appended, a library that cannot be mapped to read the log back): the event is logged under
    an id generated before the write, and the object printed said `"session_id": null`, so a record could
    not link to the selection it had just logged."""
    from lesson_credit.core import selection_draw

    root = _ws(tmp_path)
    log = root / LOG_REL
    before = log.read_bytes()
    owner = selection_draw if step == "log_draw" else Workspace
    original = getattr(owner, step)

    def fails_once_logged(*args: object, **kwargs: object) -> object:
        result = original(*args, **kwargs)
        if log.read_bytes() != before:
            raise failure
        return result

    monkeypatch.setattr(owner, step, fails_once_logged)
    code, out, err = run_cli("select", "--context", str(root / "ctx.txt"), "--json", "--workspace", str(root))
    [logged] = [json.loads(line) for line in log.read_bytes()[len(before) :].splitlines()]
    assert code == 0, err
    shown = json.loads(out)
    assert (shown["command"], shown["logged"], shown["read_back"]) == ("select", True, False)
    assert shown["session_id"] == logged["session_id"] and logged["type"] == "selection"


def test_without_json_stdout_stays_empty(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # the table form says nothing on stdout of what it could not read back: the warning is on stderr
    root = _ws(tmp_path)

    def exhausted(*args: object, **kwargs: object) -> None:
        raise MemoryError

    monkeypatch.setattr(Workspace, "explain", exhausted)
    code, out, err = run_cli(*GRADE, "--workspace", str(root))
    assert (code, out) == (0, ""), err
    assert err.endswith("(the command succeeded: its event is logged)\n"), err


def test_the_dashboard_failing_after_a_grade_is_a_failure_not_a_logged_command(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The dashboard opens its workspace as a writer; a grade there stored an event, and out of memory later
    (or the database gone, exit 75) the process said "not enough memory to finish the dashboard (the command
    succeeded: its event is logged)" and exited 0: the rule for a command that logs one event, not for a
    session of many writes, each reported by the dashboard's write queue."""
    from lesson_credit.cli.commands import dashboard
    from lesson_credit.core.base.logged import note_logged
    from lesson_credit.tui import app as tui_app

    root = _ws(tmp_path)

    def run(opening: object) -> None:
        opening.open()  # type: ignore[attr-defined]  # as the dashboard does once its first frame is drawn
        note_logged()  # a grade saved from the dashboard
        raise MemoryError

    monkeypatch.setattr(dashboard, "on_a_terminal", lambda: True)
    monkeypatch.setattr(tui_app, "run", run)
    code, out, err = run_cli("tui", "--workspace", str(root))
    assert (code, out) == (75, "")
    assert err == "lesson-credit: not enough memory for tui\n"


def test_an_export_that_fails_after_logging_a_foreign_update_is_a_failure(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`export-gptme` onto the workspace's own state file first logs what gptme's bandit added to it; the
    export failing after that (the database gone: exit 75) said "the command succeeded: its event is
    logged" and exited 0, though the file it was asked to write was not written."""
    from lesson_credit.core.base.errors import TemporaryFailure
    from lesson_credit.core.base.logged import note_logged

    root = _ws(tmp_path)

    def logs_then_fails(self: Workspace, *args: object, **kwargs: object) -> object:
        note_logged()  # the foreign update, logged
        raise TemporaryFailure("the event store went away")

    monkeypatch.setattr(Workspace, "export_gptme", logs_then_fails)
    code, out, err = run_cli("export-gptme", str(tmp_path / "out.json"), "--workspace", str(root))
    assert (code, out) == (75, "")
    assert err == "lesson-credit: the event store went away\n"
