"""Fixtures for the dashboard tests: a fresh deterministic workspace and an app on it.

`async def` tests run on a fresh event loop each (no pytest-asyncio needed: see pytest_pyfunc_call).
"""

from __future__ import annotations

import asyncio
import inspect
from pathlib import Path

import pytest

from lesson_credit.core.workspace import Workspace  # noqa: E402
from lesson_credit.tui.app import LessonCreditApp  # noqa: E402
from tests.tui.tui_fixture import build_analysis_workspace, build_workspace, fixed_clock  # noqa: E402


@pytest.fixture
def ws_root(tmp_path: Path) -> Path:
    # the folder name is rendered (sub-title), so it is fixed; the tmp parent never is
    return build_workspace(tmp_path / "ws")


@pytest.fixture
def workspace(ws_root: Path) -> Workspace:
    return Workspace(ws_root, clock=fixed_clock)


@pytest.fixture
def app(workspace: Workspace) -> LessonCreditApp:
    return LessonCreditApp(workspace, seed=0, poll_seconds=0)


@pytest.fixture
def analysis_root(tmp_path: Path) -> Path:
    return build_analysis_workspace(tmp_path / "ws")


@pytest.fixture
def analysis_workspace(analysis_root: Path) -> Workspace:
    """Forty graded sessions: lessons with enough data for leave-one-out, and flagged ones."""
    return Workspace(analysis_root, clock=fixed_clock)


@pytest.hookimpl(tryfirst=True)
def pytest_pyfunc_call(pyfuncitem: pytest.Function) -> bool | None:
    """Run coroutine tests with asyncio.run: Textual's run_test needs nothing more."""
    if not inspect.iscoroutinefunction(pyfuncitem.obj):
        return None
    names = pyfuncitem._fixtureinfo.argnames
    asyncio.run(pyfuncitem.obj(**{name: pyfuncitem.funcargs[name] for name in names}))
    return True
