"""Where a test's threads and the app's tasks are waiting: said by a dashboard test that gives up waiting
(tests/tui/tui_fixture.py `settle`), so that a wait seen once (a lock, an import, a queue no one drains)
is named by the run that saw it, not guessed at afterwards."""

from __future__ import annotations

import asyncio
import sys
import threading
import traceback
from pathlib import Path
from types import FrameType

REPO = Path(__file__).resolve().parents[2]
POOL_WORKER = ("concurrent/futures/thread.py", "_worker")  # a pool's thread: between jobs when innermost
FRAMES = 4  # the innermost frames said for each thread or task


def _ours(filename: str) -> bool:
    path = Path(filename)
    return path.is_relative_to(REPO) and not path.is_relative_to(REPO / "tests") and ".venv" not in path.parts


def _where(frames: list[traceback.FrameSummary]) -> str:
    return " < ".join(f"{Path(f.filename).name}:{f.lineno} {f.name}" for f in reversed(frames[-FRAMES:]))


def thread_waits() -> list[str]:
    """Each thread but the calling one, by name, with its innermost frames (innermost first); a pool's
    thread waiting for its next job (in the queue's get, no Python frame: `_worker` innermost) is only counted."""
    names = {t.ident: t.name for t in threading.enumerate()}
    said, idle = [], 0
    for ident, frame in sys._current_frames().items():
        if ident == threading.get_ident():
            continue
        frames = traceback.extract_stack(frame)
        if frames and frames[-1].filename.endswith(POOL_WORKER[0]) and frames[-1].name == POOL_WORKER[1]:
            idle += 1
            continue
        said.append(f"thread {names.get(ident, ident)}: {_where(frames)}")
    return said + ([f"{idle} pool threads idle"] if idle else [])


def task_waits() -> list[str]:
    """Each task of the running loop (but the calling one) suspended in this project's code, with the
    innermost frames of its coroutine chain: a handler awaiting what never comes."""
    current = asyncio.current_task()
    said = []
    for task in asyncio.all_tasks():
        if task is current or task.done():
            continue
        frames = _coroutine_frames(task)
        if any(_ours(f.filename) for f in frames):
            said.append(f"task {task.get_name()}: {_where(frames)}")
    return said


def _coroutine_frames(task: asyncio.Task[object]) -> list[traceback.FrameSummary]:
    """The frames of a suspended task, outermost first, following the coroutines it awaits."""
    frames: list[FrameType] = []
    coro: object = task.get_coro()
    while coro is not None:
        frame = getattr(coro, "cr_frame", None) or getattr(coro, "gi_frame", None)
        if frame is None:
            break
        frames.append(frame)
        coro = getattr(coro, "cr_await", None) or getattr(coro, "gi_yieldfrom", None)
    return [
        traceback.FrameSummary(f.f_code.co_filename, f.f_lineno, f.f_code.co_name, lookup_line=False) for f in frames
    ]
