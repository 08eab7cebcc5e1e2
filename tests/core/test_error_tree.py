"""One error root (core/base/errors.py): every exception class the project defines for a caller is a
UserError or a TemporaryFailure, none a builtin ValueError or RuntimeError (which the CLI would once
report as bad input whatever raised it)."""

from __future__ import annotations

import importlib
import inspect
import pkgutil

from lesson_credit.core.base.errors import LessonCreditError, TemporaryFailure, UserError

# Signals caught where they are raised, never shown to anyone: escaping, each would be a bug
SIGNALS = {
    "lesson_credit.core.log.pgpush._Refused",  # stops a COPY at a duplicate session
    "lesson_credit.tui.screens.simulation.SimulationCancelled",  # stops a simulation the operator cancelled
}


def _project_exceptions() -> dict[str, type[BaseException]]:
    found: dict[str, type[BaseException]] = {}
    for package in ("core", "cli", "tui"):
        module = importlib.import_module(f"lesson_credit.{package}")
        for info in pkgutil.walk_packages(module.__path__, f"lesson_credit.{package}."):
            loaded = importlib.import_module(info.name)
            for _, value in inspect.getmembers(loaded, inspect.isclass):
                if issubclass(value, BaseException) and value.__module__ == info.name:
                    found[f"{value.__module__}.{value.__qualname__}"] = value
    return found


def test_every_project_error_is_on_one_branch_of_the_root() -> None:
    found = _project_exceptions()
    # the classes the issue named, and a few more, are found (the walk sees the whole package)
    assert {
        "lesson_credit.core.base.errors.WorkspaceError",
        "lesson_credit.core.base.files.StoreError",
        "lesson_credit.core.base.files.StoreUnavailable",
        "lesson_credit.cli.common.CliError",
        "lesson_credit.core.log.events.InvalidEvent",
    } <= set(found)
    assert SIGNALS <= set(found)
    for name, cls in found.items():
        if name in SIGNALS or cls in (LessonCreditError, UserError, TemporaryFailure):
            continue
        assert issubclass(cls, UserError | TemporaryFailure), name
        assert not issubclass(cls, ValueError | RuntimeError), name  # a library's error is never one of ours
