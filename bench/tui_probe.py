"""Time the dashboard headless (Textual's `App.run_test`), in a process of its own.

    python -m bench.tui_probe --workspace WS [--t0 PERF_COUNTER] [--digits 3 7 5]

Prints one line `TUI-PROBE {json}` with, in seconds:

* open_from_launch / open_from_app: until the Lessons table has its (first) rows with their
  numbers (`#lessons-table` filled by `LessonsScreen._loaded`, not the names shown before the log
  is read), from the parent's `--t0` (time.perf_counter is CLOCK_MONOTONIC, shared by processes:
  this includes interpreter start and imports) and from
  just before `Workspace(root)`; open_idle_from_app: until the process next goes idle
  (Textual's `wait_for_idle`: the startup workers, e.g. the problems check, have finished).
* sessions_open: `s` pressed until `#sessions-table` has rows.
* detail_open: `SessionDetailScreen` pushed for the newest pending session until `#credits`
  has rows.
* keypress: per digit, from just before `pilot.press(digit)` until the screen shows the
  draft (`shown.base_reward == digit / 10`, the reward cell of the table updated) and until
  the Beta plot's `render()` ran with the draft's curves.
* stalls: the longest the event loop did not run a 5 ms sleep during each phase (a blocked
  UI thread: keys would wait that long).

The probe reads the screens' state (`view`, `base`, `shown`, `draft`) and wraps the plot
widget's `render` on the instance to timestamp it; it changes nothing in tui/.
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import json
import resource
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from textual.screen import Screen

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

TIMEOUT_S = 120.0
MARKER = "TUI-PROBE "


class StallMonitor:
    """The longest gap between two 5 ms sleeps of the event loop since the last `take()`."""

    def __init__(self, tick: float = 0.005) -> None:
        self.tick = tick
        self.worst = 0.0
        self._task: asyncio.Task[None] | None = None

    async def _run(self) -> None:
        while True:
            start = time.perf_counter()
            await asyncio.sleep(self.tick)
            self.worst = max(self.worst, time.perf_counter() - start - self.tick)

    def start(self) -> None:
        self._task = asyncio.get_running_loop().create_task(self._run())

    def take(self) -> float:
        worst, self.worst = self.worst, 0.0
        return worst

    def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()


async def until(condition: Callable[[], bool], what: str, timeout: float = TIMEOUT_S) -> float:
    """Poll every millisecond; the perf_counter time at which `condition()` first held."""
    deadline = time.perf_counter() + timeout
    while True:
        try:
            if condition():
                return time.perf_counter()
        except Exception:  # a widget not mounted yet: keep polling
            pass
        if time.perf_counter() > deadline:
            raise TimeoutError(f"{what}: not after {timeout:.0f} s")
        await asyncio.sleep(0.001)


def rows_ready(app: Any, screen_type: type[Screen[Any]], table_id: str) -> bool:
    from textual.widgets import DataTable  # imported by the app already: no cost in the timing

    screen = app.screen
    if not isinstance(screen, screen_type) or getattr(screen, "view", True) is None:
        return False  # (a screen's view not read yet: the Lessons table lists the names before it)
    table = screen.query_one(table_id, DataTable)
    return bool(table.row_count > 0 and not table.loading)


def draft_shown(detail: Any, table: Any, value: float, fmt: Callable[..., str]) -> bool:
    """The detail screen shows the preview of draft `value`, its credits table included."""
    shown = detail.shown
    if shown is None or detail.draft != value or shown.base_reward != value or not shown.lessons:
        return False
    return bool(str(table.get_row_at(0)[3]).strip() == fmt(shown.lessons[0].reward, 3))


def plotted_at(renders: list[tuple[float, tuple[Any, ...]]], target: tuple[float, float]) -> float | None:
    """When the plot first rendered with `target` as its after-curve (alpha, beta)."""
    for when, curves in renders:
        if len(curves) == 2 and (round(curves[1].alpha, 12), round(curves[1].beta, 12)) == target:
            return when
    return None


def plot_reached(renders: list[tuple[float, tuple[Any, ...]]], target: tuple[float, float]) -> bool:
    return plotted_at(renders, target) is not None


async def probe(
    root: Path, t_launch: float | None, digits: list[int], size: tuple[int, int], store_url: str | None = None
) -> dict[str, Any]:
    from textual.widgets import DataTable

    from lesson_credit.core.workspace import Workspace
    from lesson_credit.tui.app import LessonCreditApp
    from lesson_credit.tui.screens.lessons import LessonsScreen
    from lesson_credit.tui.screens.session_detail import SessionDetailScreen
    from lesson_credit.tui.screens.sessions import SessionsScreen
    from lesson_credit.tui.text import fmt
    from lesson_credit.tui.widgets.beta_plot import BetaPlot  # all three imported by the app's own modules

    out: dict[str, Any] = {"workspace": str(root), "size": list(size)}
    t_imported = time.perf_counter()
    if t_launch is not None:
        out["imports_from_launch"] = t_imported - t_launch
    stalls = StallMonitor()
    t0 = time.perf_counter()
    store = None
    if store_url is not None:  # the workspace's events in PostgreSQL instead of its sessions.jsonl
        from lesson_credit.core.log.pgstore import PgStore

        store = PgStore(store_url, agent="bench-probe")
    app = LessonCreditApp(Workspace(root, store=store))
    async with app.run_test(size=size) as pilot:
        stalls.start()
        out["app_started"] = time.perf_counter() - t0
        t_rows = await until(lambda: rows_ready(app, LessonsScreen, "#lessons-table"), "lessons table")
        out["open_from_app"] = t_rows - t0
        if t_launch is not None:
            out["open_from_launch"] = t_rows - t_launch
        await pilot.pause()  # Textual's wait_for_idle: until the process stops using CPU (startup workers done)
        out["open_idle_from_app"] = time.perf_counter() - t0
        table = app.screen.query_one("#lessons-table", DataTable)
        # a big table fills in batches after its first rows are shown: count it once complete
        t_filled = await until(lambda: not getattr(table, "filling", False), "lessons table filled")
        out["filled_from_app"] = t_filled - t0
        out["lessons_rows"] = table.row_count
        out["open_stall"] = stalls.take()

        start = time.perf_counter()
        await pilot.press("s")
        t_sessions = await until(lambda: rows_ready(app, SessionsScreen, "#sessions-table"), "sessions table")
        out["sessions_open"] = t_sessions - start
        out["sessions_stall"] = stalls.take()
        sessions_screen = app.screen
        assert isinstance(sessions_screen, SessionsScreen) and sessions_screen.view is not None
        view = sessions_screen.view
        out["sessions_in_view"] = len(view.sessions)
        pending = next((s.session_id for s in reversed(view.sessions) if s.pending), None)
        if pending is None:
            out["keypress_skipped"] = "no pending session in the log"
            return out

        start = time.perf_counter()
        detail = SessionDetailScreen(app.source, pending)
        app.push_screen(detail)
        await until(lambda: detail.base is not None and rows_ready(app, SessionDetailScreen, "#credits"), "detail")
        out["detail_open"] = time.perf_counter() - start
        out["detail_session"] = pending
        out["detail_stall"] = stalls.take()
        await pilot.pause()

        plot = detail.query_one("#credit-plot", BetaPlot)
        renders: list[tuple[float, tuple[Any, ...]]] = []
        original_render = plot.render

        def timed_render() -> Any:
            renders.append((time.perf_counter(), tuple(plot.curves)))
            return original_render()

        plot.render = timed_render  # type: ignore[method-assign]  # instance attribute: instrumentation only
        table = detail.query_one("#credits", DataTable)
        presses = []
        for digit in digits:
            renders.clear()
            start = time.perf_counter()
            press = asyncio.ensure_future(pilot.press(str(digit)))
            shown = functools.partial(draft_shown, detail, table, digit / 10, fmt)
            t_credits = await until(shown, f"credits for {digit}")
            focused = next(c for c in detail.credits() if c.path == detail.focused_lesson)
            target = (round(focused.alpha_after, 12), round(focused.beta_after, 12))
            await until(functools.partial(plot_reached, renders, target), f"plot for {digit}")
            t_plot = plotted_at(renders, target)
            assert t_plot is not None
            await press
            presses.append({"digit": digit, "credits": t_credits - start, "plot": t_plot - start})
            await pilot.pause()
        out["keypress"] = presses
        out["keypress_stall"] = stalls.take()
        stalls.stop()
    out["peak_rss_mb_self"] = peak_rss_mb()
    return out


def peak_rss_mb() -> float:
    """VmHWM: this process's own peak RSS (ru_maxrss would include the RSS of the process that spawned it)."""
    try:
        with open("/proc/self/status") as handle:
            for line in handle:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.tui_probe", description=__doc__.splitlines()[0])
    parser.add_argument("--workspace", required=True, type=Path)
    parser.add_argument("--t0", type=float, default=None, help="the parent's time.perf_counter() at launch")
    parser.add_argument("--digits", type=int, nargs="*", default=[3, 7, 5, 2, 8])
    parser.add_argument("--size", type=int, nargs=2, default=[200, 60], metavar=("COLUMNS", "LINES"))
    parser.add_argument("--store", default=None, help="a PostgreSQL URL holding the workspace's events")
    args = parser.parse_args(argv)
    size = (args.size[0], args.size[1])
    result = asyncio.run(probe(args.workspace.resolve(), args.t0, args.digits, size, args.store))
    sys.stdout.write(MARKER + json.dumps(result) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
