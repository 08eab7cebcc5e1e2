"""Dashboard start-up against a bare Textual app, each in a process of its own (headless `run_test`).

    python -m bench.tui_start {ours|bare|health|health_idle} WORKSPACE T0

Prints one line `TUI-START {json}` with `seconds` (and `cpu_seconds`, the
process's CPU time then, for the first-frame cases): from the parent's `T0` (time.perf_counter is
CLOCK_MONOTONIC, shared by processes, so interpreter start and imports count) until
* ours: the frame in which the Lessons table of the dashboard on WORKSPACE first draws rows;
* bare: the frame in which a Textual app with one DataTable (one row per lesson file of
  WORKSPACE, names only, nothing read) first draws rows: the floor any Textual dashboard pays;
* health: `h` sent to the dashboard right after that first frame (while the work that follows
  it runs: the intervals, the effects fit, P(top-k)) until the frame in which the Health
  screen first draws its findings (measured from the key, not from T0);
* health_idle: the same, `h` sent once that start-up work has finished (a person reading the
  table first).

A frame is timed when the app hands it to its driver (`App._display`, which the headless driver
does not print), so each time is when the screen would show it, whatever the probe's polling. The
probe does not use Pilot's `pause` or `press`: both wait until the process is idle (up to 1 s
each), which timed the work that follows the first frame rather than the frame.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

SIZE = (120, 40)
DEADLINE_S = 120.0  # only catches a hang
HEALTH_SHOWN = ("FindingCard", "health-empty")  # a finding's card, or the "no problems found" line


class Frames:
    """When frames were drawn, from wrappers on `DataTable.render_lines` and `App._display` (class
    attributes, patched in this probe process only; nothing in tui/ changes).

    `rows_at`: the end of the first frame in which a DataTable drew rows. `wanted`, once set, is
    checked against each later frame's screen; `wanted_at` is the end of the first that passes."""

    def __init__(self) -> None:
        from textual.app import App
        from textual.widgets import DataTable

        self.rows_drawn = False
        self.rows_at: float | None = None
        self.rows_cpu = 0.0  # the process's CPU time (all threads) at rows_at
        self.wanted: Any = None
        self.wanted_at: float | None = None
        render_lines, display = DataTable.render_lines, App._display
        frames = self

        def rows_render_lines(table: Any, crop: Any) -> Any:
            lines = render_lines(table, crop)
            if table.row_count > 0:
                frames.rows_drawn = True
            return lines

        def timed_display(app: Any, screen: Any, renderable: Any) -> None:
            display(app, screen, renderable)
            if renderable is None or app._batch_count:
                return  # no frame (Textual skips these too)
            now = time.perf_counter()
            if frames.rows_drawn and frames.rows_at is None:
                frames.rows_at, frames.rows_cpu = now, time.process_time()
            if frames.wanted is not None and frames.wanted_at is None and frames.wanted(screen):
                frames.wanted_at = now

        DataTable.render_lines = rows_render_lines  # type: ignore[method-assign, assignment]  # timing probe, this process only
        App._display = timed_display  # type: ignore[method-assign, assignment]  # timing probe, this process only


async def _until(done: Any) -> None:
    """Poll without Pilot's idle waits (the timing is the frames', not this loop's)."""
    deadline = time.perf_counter() + DEADLINE_S
    while not done():
        if time.perf_counter() > deadline:
            raise TimeoutError("the screen never filled")
        await asyncio.sleep(0.002)


async def bare(root: Path, t0: float) -> dict[str, float]:
    from textual.app import App, ComposeResult
    from textual.widgets import DataTable

    frames = Frames()
    names = sorted(p.relative_to(root / "lessons").as_posix() for p in (root / "lessons").rglob("*.md"))

    class Bare(App[None]):
        def compose(self) -> ComposeResult:
            yield DataTable()

        def on_mount(self) -> None:
            table = self.query_one(DataTable)
            table.add_columns("lesson", "n", "mean")
            table.add_rows([(name, "0", "0.500") for name in names])

    app = Bare()
    async with app.run_test(size=SIZE):
        await _until(lambda: frames.rows_at is not None)
        assert frames.rows_at is not None
    return {"seconds": frames.rows_at - t0, "cpu_seconds": frames.rows_cpu, "rows": float(len(names))}


def _started(app: Any) -> bool:
    """The Lessons screen's start-up work is done: intervals, effects and P(top-k) in, no worker running."""
    view = getattr(app.screen, "view", None)
    if view is None or view.effects is None or view.p_top_k is None or view.intervals_missing:
        return False
    return not any(worker.is_running for worker in app.workers)


def _health_shown(screen: Any) -> bool:
    """The Health screen with its findings laid out (so drawn in this frame). By class name: the
    probe does not import the Health screen, the key does."""
    if type(screen).__name__ != "HealthScreen" or getattr(screen, "view", None) is None:
        return False
    return any(type(w).__name__ in HEALTH_SHOWN or w.id in HEALTH_SHOWN for w in screen._compositor.visible_widgets)


async def ours(root: Path, t0: float, health: bool, idle: bool = False) -> dict[str, float]:
    from textual import events

    frames = Frames()
    from lesson_credit.tui import gc_settings
    from lesson_credit.tui.app import LessonCreditApp
    from lesson_credit.tui.source import Opening

    def open_workspace() -> Any:
        from lesson_credit.core.workspace import Workspace

        return Workspace(root)

    gc_settings.freeze()  # as `lesson_credit.tui.app.run` does (and `start` ran first, as in the CLI: see main)
    # as `lesson-credit` on a terminal: the workspace is opened by the dashboard, after its first frame
    app = LessonCreditApp(Opening(root, open_workspace), poll_seconds=0)
    async with app.run_test(size=SIZE):
        await _until(lambda: frames.rows_at is not None)
        assert frames.rows_at is not None
        first_paint = frames.rows_at - t0
        if not health:
            return {"seconds": first_paint, "cpu_seconds": frames.rows_cpu}
        if idle:
            await _until(lambda: _started(app))
        frames.wanted = _health_shown
        key = events.Key("h", "h")
        key.set_sender(app)
        start = time.perf_counter()
        app.post_message(key)  # as the driver delivers a key (Pilot.press would then wait for idle)
        await _until(lambda: frames.wanted_at is not None)
        assert frames.wanted_at is not None
        return {"seconds": frames.wanted_at - start, "first_paint": first_paint}


def main(argv: list[str]) -> int:
    kind, root, t0 = argv[0], Path(argv[1]).resolve(), float(argv[2])
    if kind == "bare":
        result = asyncio.run(bare(root, t0))
    else:
        from lesson_credit.cli.process import limit_blas_threads
        from lesson_credit.tui import gc_settings

        limit_blas_threads()  # as `lesson-credit` does before it imports the engine
        gc_settings.start()  # the dashboard's collector settings, set as the CLI sets them
        result = asyncio.run(ours(root, t0, health=kind.startswith("health"), idle=kind == "health_idle"))
    print("TUI-START " + json.dumps(result), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
