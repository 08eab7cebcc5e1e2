"""Dashboard start-up against a bare Textual app, each in a process of its own (headless `run_test`).

    python -m bench.tui_start {ours|bare|health} WORKSPACE T0

Prints one line `TUI-START {json}` with `seconds`: from the parent's `T0` (time.perf_counter is
CLOCK_MONOTONIC, shared by processes, so interpreter start and imports count) until
* ours: the Lessons table of the dashboard on WORKSPACE has its first rows;
* bare: a Textual app with one DataTable (one row per lesson file of WORKSPACE, names only,
  nothing read) has its rows: the floor any Textual dashboard pays;
* health: `h` pressed on the dashboard (right after its first paint, while the work that
  follows it runs: the intervals, the effects fit, P(top-k)) until the Health screen shows its
  findings (measured from the key, not from T0);
* health_idle: the same, `h` pressed once that start-up work has finished (a person reading the
  table first).
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


async def _until(pilot: Any, done: Any) -> None:
    deadline = time.perf_counter() + DEADLINE_S
    while not done():
        if time.perf_counter() > deadline:
            raise TimeoutError("the screen never filled")
        await asyncio.sleep(0.002)
        await pilot.pause()


async def bare(root: Path, t0: float) -> dict[str, float]:
    from textual.app import App, ComposeResult
    from textual.widgets import DataTable

    names = sorted(p.relative_to(root / "lessons").as_posix() for p in (root / "lessons").rglob("*.md"))

    class Bare(App[None]):
        def compose(self) -> ComposeResult:
            yield DataTable()

        def on_mount(self) -> None:
            table = self.query_one(DataTable)
            table.add_columns("lesson", "n", "mean")
            table.add_rows([(name, "0", "0.500") for name in names])

    app = Bare()
    async with app.run_test(size=SIZE) as pilot:
        table = app.query_one(DataTable)
        await _until(pilot, lambda: table.row_count > 0)
        seconds = time.perf_counter() - t0
    return {"seconds": seconds, "rows": float(len(names))}


def _started(app: Any) -> bool:
    """The Lessons screen's start-up work is done: intervals, effects and P(top-k) in, no worker running."""
    view = getattr(app.screen, "view", None)
    if view is None or view.effects is None or view.p_top_k is None or view.intervals_missing:
        return False
    return not any(worker.is_running for worker in app.workers)


async def ours(root: Path, t0: float, health: bool, idle: bool = False) -> dict[str, float]:
    from core.workspace import Workspace
    from tui.app import LessonCreditApp
    from tui.screens.lessons import LessonsScreen

    app = LessonCreditApp(Workspace(root), poll_seconds=0)
    async with app.run_test(size=SIZE) as pilot:

        def painted() -> bool:
            screen = app.screen
            return isinstance(screen, LessonsScreen) and screen.query_one("#lessons-table").row_count > 0  # type: ignore[attr-defined]

        await _until(pilot, painted)
        first_paint = time.perf_counter() - t0
        if not health:
            return {"seconds": first_paint}
        if idle:
            await _until(pilot, lambda: _started(app))
        from tui.screens.health import HealthScreen

        start = time.perf_counter()
        await pilot.press("h")
        await _until(pilot, lambda: isinstance(app.screen, HealthScreen) and app.screen.view is not None)
        return {"seconds": time.perf_counter() - start, "first_paint": first_paint}


def main(argv: list[str]) -> int:
    kind, root, t0 = argv[0], Path(argv[1]).resolve(), float(argv[2])
    if kind == "bare":
        result = asyncio.run(bare(root, t0))
    else:
        result = asyncio.run(ours(root, t0, health=kind.startswith("health"), idle=kind == "health_idle"))
    print("TUI-START " + json.dumps(result), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
