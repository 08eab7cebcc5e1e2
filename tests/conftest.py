"""Fixtures for the engine and CLI tests (helpers live in support/engine_helpers.py so test modules can import them)."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from cli.process import limit_blas_threads

# before numpy is first imported (engine_helpers imports the engine): the test processes and the CLI and
# Python processes they start (they inherit the environment) run BLAS on one thread, as the CLI does
limit_blas_threads()

from engine_helpers import BASIC_JOURNAL, BASIC_LESSONS, make_workspace  # noqa: E402

from tui import gc_settings  # noqa: E402

# The suite runs with the dashboard's garbage-collector settings (tui/gc_settings.py): rarer young
# collections, and the modules every test uses imported once and frozen out of later collections.
# About 10% less CPU for the dashboard tests; no test depends on when a collection runs (those that
# need one call gc.collect).
gc_settings.start()
import core.workspace  # noqa: E402, F401
import tui.app  # noqa: E402, F401

gc_settings.freeze()


@pytest.fixture(name="make_workspace")
def make_workspace_fixture() -> Callable[..., Path]:
    """The helper itself: make_workspace(tmp_path, lessons=..., events=..., journals=...)."""
    return make_workspace


@pytest.fixture
def basic_ws(tmp_path: Path) -> Path:
    """A workspace with BASIC_LESSONS, one journal (j.txt) and no log yet."""
    return make_workspace(tmp_path, lessons=BASIC_LESSONS, journals={"j.txt": BASIC_JOURNAL})


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Tests marked `long` first (otherwise in collection order): a parallel run then starts them at
    once instead of ending with one worker busy on a long test while the others are done."""
    items.sort(key=lambda item: item.get_closest_marker("long") is None)


@pytest.hookimpl(tryfirst=True)
def pytest_xdist_auto_num_workers(config: pytest.Config) -> int | None:
    """Workers for `-n logical` (the default run): one and a half per CPU. A dashboard test waits about a
    third of its time (Textual's Pilot sleeps until the app is idle after each key and pause), so one
    worker per CPU left the CPUs a third idle; on 2 CPUs, 3 workers ran the dashboard tests in 42 s
    against 50 s for 2. PYTEST_XDIST_AUTO_NUM_WORKERS still decides when set."""
    if os.environ.get("PYTEST_XDIST_AUTO_NUM_WORKERS"):
        return None
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    return cpus + (cpus + 1) // 2
