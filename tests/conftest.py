"""Fixtures for the engine and CLI tests (helpers live in support/engine_helpers.py so test modules can import them)."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from lesson_credit.cli.process import limit_blas_threads

# gptme-sessions' records folder (docs/records.md) is read when set: the tests (and the processes
# they start) never read the developer's own
os.environ.pop("GPTME_SESSIONS_DIR", None)
# a COLUMNS exported in the developer's shell fits every table to it (cli/render.py): the tests set it themselves
os.environ.pop("COLUMNS", None)

# before numpy is first imported (engine_helpers imports the engine): the test processes and the CLI and
# Python processes they start (they inherit the environment) run BLAS on one thread, as the CLI does
limit_blas_threads()

from lesson_credit.tui import gc_settings  # noqa: E402
from tests.support.engine_helpers import BASIC_JOURNAL, BASIC_LESSONS, make_workspace  # noqa: E402

# The suite runs with the dashboard's garbage-collector settings (tui/gc_settings.py): rarer young
# collections, and the modules every test uses imported once and frozen out of later collections.
# About 10% less CPU for the dashboard tests; no test depends on when a collection runs (those that
# need one call gc.collect).
gc_settings.start()
import lesson_credit.core.workspace  # noqa: E402, F401
import lesson_credit.tui.app  # noqa: E402, F401

gc_settings.freeze()


def quicker_pilot_idle_checks(step_s: float = 0.005) -> None:
    """Textual's Pilot waits for the app to go idle after every key, click and pause: it sleeps
    `SLEEP_GRANULARITY` (20 ms) at a time until a sleep in which the process used under `SLEEP_IDLE`
    (a twentieth of it) of CPU, so every key costs at least two 20 ms sleeps. The same check in 5 ms
    steps, with the same one-twentieth threshold, ends as soon as the app is idle: tests/tui run
    serially took 180 s of wall time against 117 s, for the same CPU. No test depends on the wait's
    length: what has to finish (workers, table fills) is awaited by condition (tui_fixture.settle).
    textual._wait is private (textual 8.2.8 is pinned): if it loses these names, this fails loudly."""
    import textual._wait as pilot_wait

    for name in ("SLEEP_GRANULARITY", "SLEEP_IDLE"):
        if not isinstance(getattr(pilot_wait, name, None), float):
            raise RuntimeError(f"textual._wait.{name} is gone: revisit quicker_pilot_idle_checks in tests/conftest.py")
    pilot_wait.SLEEP_GRANULARITY = step_s
    pilot_wait.SLEEP_IDLE = step_s / 20


quicker_pilot_idle_checks()


@pytest.fixture(name="make_workspace")
def make_workspace_fixture() -> Callable[..., Path]:
    """The helper itself: make_workspace(tmp_path, lessons=..., events=..., journals=...)."""
    return make_workspace


@pytest.fixture
def basic_ws(tmp_path: Path) -> Path:
    """A workspace with BASIC_LESSONS, one journal (j.txt) and no log yet."""
    return make_workspace(tmp_path, lessons=BASIC_LESSONS, journals={"j.txt": BASIC_JOURNAL})


@pytest.fixture
def whole_lessons(monkeypatch: pytest.MonkeyPatch) -> None:
    """No lesson's first sessions set apart in the claims fit (core.analysis.early): for tests of the fit's
    mechanics against references over every session of a lesson (the split itself: tests/core/test_claims_early.py,
    which checks it is the fit of the log with those sessions renamed to a lesson of their own)."""
    from lesson_credit.core.analysis import early

    monkeypatch.setattr(early, "MIN_SESSIONS", 10**9)


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
