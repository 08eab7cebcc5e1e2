"""The dispatcher's exit statuses (docs/cli.md): a project error is one line and its branch's code
(1 bad input, 75 retry later); anything else escaping a command is a bug, exit 70 with its traceback,
never reported as bad input."""

from __future__ import annotations

from pathlib import Path

import pytest

from lesson_credit.core import derived_state
from lesson_credit.core.bandit.config import ConfigError
from lesson_credit.core.base.errors import LessonCreditError, TemporaryFailure, UserError, WorkspaceError
from lesson_credit.core.base.files import StoreError, StoreUnavailable
from lesson_credit.core.base.safe_json import JsonError
from lesson_credit.core.base.safe_read import UnsafeFile
from lesson_credit.core.log.events import InvalidEvent
from lesson_credit.core.log.eventstore import DuplicateSession
from lesson_credit.core.query import QueryError
from tests.support.cli_run import run
from tests.support.engine_helpers import LOG_REL


def _raising(exc: BaseException) -> object:
    def fail(*args: object, **kwargs: object) -> None:
        raise exc

    return fail


@pytest.mark.parametrize("exc", [ValueError("could not convert"), KeyError("alpha"), RuntimeError("numpy said no")])
def test_a_builtin_error_inside_a_command_is_an_internal_error_not_bad_input(
    basic_ws: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, exc: Exception
) -> None:
    """A library's ValueError inside `status` was "lesson-credit: could not convert", exit 1: the user
    was told their input was wrong. Now exit 70 (EX_SOFTWARE), the traceback, and a line saying it is a bug."""
    monkeypatch.setattr(derived_state, "repair_state", _raising(exc))
    code, _, err = run(capsys, "status", "-w", str(basic_ws))
    assert code == 70
    assert "Traceback (most recent call last)" in err and type(exc).__name__ in err
    assert err.rstrip("\n").splitlines()[-1] == (
        "lesson-credit: internal error in status (a bug: please report it with the traceback above)"
    )
    assert not (basic_ws / LOG_REL).exists()


@pytest.mark.parametrize(
    ("exc", "code"),
    [
        (UserError("bad"), 1),
        (WorkspaceError("bad"), 1),
        (QueryError("bad"), 1),
        (ConfigError("bad"), 1),
        (InvalidEvent("bad"), 1),
        (JsonError("f.json", 3, "bad"), 1),
        (UnsafeFile("bad"), 1),
        (StoreError("bad"), 1),
        (DuplicateSession("s1"), 1),
        (StoreUnavailable("bad"), 75),
        (TemporaryFailure("bad"), 75),
    ],
)
def test_a_project_error_is_one_line_with_its_branchs_exit_code(
    basic_ws: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, exc: Exception, code: int
) -> None:
    monkeypatch.setattr(derived_state, "repair_state", _raising(exc))
    assert run(capsys, "status", "-w", str(basic_ws)) == (code, "", f"lesson-credit: {exc}\n")


def test_each_branch_carries_its_exit_code() -> None:
    # StoreUnavailable is a StoreError too (callers falling back on any store failure catch it), yet
    # it exits 75: the temporary branch comes first in its bases
    assert (UserError.exit_code, TemporaryFailure.exit_code, StoreUnavailable.exit_code) == (1, 75, 75)
    assert issubclass(StoreUnavailable, StoreError) and issubclass(StoreError, UserError)
    assert not issubclass(UserError, TemporaryFailure) and issubclass(TemporaryFailure, LessonCreditError)


def test_a_missing_module_inside_a_command_is_an_internal_error(
    basic_ws: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """An ImportError that is not a library failing to map under a memory limit escaped `main` (a bare
    traceback and exit 1, the bad-input status); it is an installation or code fault: exit 70."""
    monkeypatch.setattr(derived_state, "repair_state", _raising(ImportError("No module named 'xxhash'")))
    code, _, err = run(capsys, "status", "-w", str(basic_ws))
    assert code == 70 and "No module named 'xxhash'" in err
    assert err.rstrip("\n").splitlines()[-1].startswith("lesson-credit: internal error in status")


@pytest.mark.parametrize(("exc", "code"), [(KeyboardInterrupt(), 130), (BrokenPipeError(), 0)])
def test_the_process_boundary_ends_an_interrupted_or_unread_command_quietly(
    basic_ws: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, exc: BaseException, code: int
) -> None:
    monkeypatch.setattr(derived_state, "repair_state", _raising(exc))
    assert run(capsys, "status", "-w", str(basic_ws)) == (code, "", "")


def test_the_dispatcher_catches_only_the_projects_errors() -> None:
    """`_dispatch` maps LessonCreditError and nothing else; the builtins (Ctrl-C, a closed pipe, no memory, a
    bug) are the process boundary's (cli/process.py), so no builtin error can come out as "bad input"."""
    import ast
    import inspect

    from lesson_credit.cli import main

    caught = [
        ast.unparse(handler.type) if handler.type is not None else "bare"
        for function in (main.main, main._dispatch)
        for handler in ast.walk(ast.parse(inspect.getsource(function)))
        if isinstance(handler, ast.ExceptHandler)
    ]
    assert caught == ["LessonCreditError"]
