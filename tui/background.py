"""The threads the dashboard's workers run in: below the UI thread's CPU priority.

Textual runs a thread worker in its event loop's default executor. At start-up on a big log, five
workers run at once beside the UI thread (the first snapshot, the intervals, the top-k estimate, the
joint effects, the imports for the first grade); on a 2-core machine shared with other work, each of
them took CPU the UI thread needed to paint and answer keys. Here they run niced, as the joint fit's
child process is (tui/effects_job.py): the UI thread comes first, the results come as soon as it idles.

What the first paint waits for (the first Lessons view), and the Health findings (a key typed at the
first frame waits for them), is not background work: `at_ui_priority` runs it in a thread of the UI
thread's priority. Niced, it was starved by the machine's other work (load 7 on 2
cores: its read and cells took 3-4x as long) while the screen showed nothing but the loading state.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

T = TypeVar("T")

NICENESS = 5  # gentler than the joint fit's 10: the first snapshot and the Lessons view wait for these


def lower_priority() -> None:
    """Lower the calling thread's CPU priority (on Linux, niceness belongs to the thread); where that
    is not possible the thread runs as it was."""
    try:
        os.setpriority(os.PRIO_PROCESS, 0, os.getpriority(os.PRIO_PROCESS, 0) + NICENESS)
    except (AttributeError, OSError):
        pass


def use_background_threads(loop: asyncio.AbstractEventLoop) -> ThreadPoolExecutor:
    """Run the loop's executor jobs (Textual's thread workers) in threads of lower priority."""
    executor = ThreadPoolExecutor(thread_name_prefix="dashboard-worker", initializer=lower_priority)
    loop.set_default_executor(executor)
    return executor


_first_paint: ThreadPoolExecutor | None = None


async def at_ui_priority(work: Callable[[], T]) -> T:
    """`work()` in a thread of the UI thread's priority. Awaited on the event loop, so the thread is
    started by the UI thread (a new thread inherits the niceness of the one that starts it)."""
    global _first_paint
    if _first_paint is None:
        _first_paint = ThreadPoolExecutor(max_workers=1, thread_name_prefix="dashboard-first-paint")
    return await asyncio.get_running_loop().run_in_executor(_first_paint, work)
