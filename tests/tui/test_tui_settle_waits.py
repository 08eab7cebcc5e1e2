"""A dashboard test that gives up waiting names where each thread and each task of ours waits
(tests/support/waits.py, said by `settle` when the app does not settle)."""

from __future__ import annotations

import asyncio
import re
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from lesson_credit.tui.app import LessonCreditApp
from lesson_credit.tui.background import at_ui_priority
from tests.support.waits import task_waits, thread_waits
from tests.tui import tui_fixture
from tests.tui.tui_fixture import settle


def held_up(gate: threading.Event, waiting: threading.Event) -> None:
    waiting.set()
    gate.wait(120)  # bounded: a test that fails before its finally cannot leave this thread waiting


def test_a_thread_waiting_is_named_with_the_wait_and_a_pool_thread_between_jobs_is_only_counted() -> None:
    gate, waiting, ran = threading.Event(), threading.Event(), threading.Event()
    thread = threading.Thread(target=held_up, args=(gate, waiting), name="held-up")
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="between-jobs") as pool:
        pool.submit(ran.set).result()  # its thread now waits for its next job
        thread.start()
        try:
            assert waiting.wait(30)
            for _ in range(3000):  # until both are in their waits (each is a moment from it once `waiting` is set)
                said = thread_waits()
                if any(line.startswith("thread held-up: threading.py:") for line in said) and not any(
                    "between-jobs" in line for line in said
                ):
                    break
                time.sleep(0.01)
        finally:
            gate.set()
            thread.join()
    # innermost first: Condition.wait, Event.wait, then the function that waits
    held = [line for line in said if line.startswith("thread held-up: ")]
    assert len(held) == 1, said
    assert held[0].startswith("thread held-up: threading.py:") and " < test_tui_settle_waits.py:" in held[0]
    assert held[0].split(" < ")[2].endswith(" held_up")
    # the pool's thread is not named: it is counted with the others between jobs (earlier tests' pools too)
    assert not any("between-jobs" in line for line in said), said
    assert re.fullmatch(r"[1-9][0-9]* pool threads idle", said[-1]), said


async def test_a_task_suspended_in_the_dashboards_code_is_named_where() -> None:
    gate, waiting = threading.Event(), threading.Event()

    def job() -> None:
        waiting.set()
        gate.wait(120)  # bounded, as above

    task = asyncio.create_task(at_ui_priority(job), name="first-paint-job")
    try:
        while not waiting.is_set():  # the job's thread has it (the task is suspended in at_ui_priority)
            await asyncio.sleep(0.01)
        said = [line for line in task_waits() if "first-paint-job" in line]
    finally:
        gate.set()
        await task
    assert len(said) == 1, said
    assert said[0].startswith("task first-paint-job: ") and "background.py:" in said[0] and "at_ui_priority" in said[0]


async def test_an_app_that_does_not_settle_says_where_its_worker_waits(
    app: LessonCreditApp, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the source's lock held here (a stand-in for any wait): the Analysis screen's load waits for it in its thread
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        with app.source._lock:
            await pilot.press("a")
            for _ in range(6000):  # until its thread waits for the lock (a loaded machine starts it late)
                if any("source.py:" in line and " analysis" in line for line in thread_waits()):
                    break
                await asyncio.sleep(0.01)
            monkeypatch.setattr(tui_fixture, "SETTLE_LIMIT_S", 0.2)  # what it says, not how long it waits
            with pytest.raises(AssertionError) as raised:
                await settle(pilot)
        monkeypatch.undo()
        await settle(pilot)  # the lock let go: the load lands
    said = str(raised.value).splitlines()
    assert said[0].startswith("the app did not settle within 0.2 s (worker '_load' RUNNING, loading"), said[0]
    assert said[0].endswith("; on AnalysisScreen)"), said[0]
    # the worker's thread, by name, waiting in the source's `analysis` (innermost first) for the screen's load
    waiting = [line for line in said[1:] if line.startswith("thread dashboard-worker")]
    assert len(waiting) == 1, said
    assert waiting[0].split(": ", 1)[1].startswith("source.py:"), waiting[0]
    assert " analysis < " in waiting[0] and "analysis.py:" in waiting[0], waiting[0]
