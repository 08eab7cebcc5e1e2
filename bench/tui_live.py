"""A commit by another process, until the open dashboard shows it (headless, in a process of its own).

    python -m bench.tui_live --workspace WS [--commits 5]

Opens the dashboard on WS (Textual's `App.run_test`), waits until its start-up work is done, then,
`--commits` times: runs `lesson-credit record` in a child process (another agent) recording a
session with lesson L, and times from the moment the log grew (polled every millisecond) until the
Lessons table shows L's new session count. The collector is set up as `lesson-credit tui` sets it
(lesson_credit.tui.gc_settings). Prints one line `TUI-LIVE {json}` with the latencies, the
open times and this process's peak RSS when opened (VmHWM: the joint fit of a big log runs in a
process of its own and is not counted here, or anywhere in the dashboard).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from functools import partial
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.tui_probe import StallMonitor, peak_rss_mb, rows_ready, until  # noqa: E402

MARKER = "TUI-LIVE "
JOURNAL = "Ran pytest and git rebase in a worktree; checked CI before saying done.\n" * 20


def _row_n(app: Any, lesson: str) -> int | None:
    view = getattr(app.screen, "view", None)
    row = view.row(lesson) if view is not None else None
    return None if row is None else row.n


def _grew(log: Path, size: int) -> bool:
    return log.stat().st_size > size


def _shown(app: Any, lesson: str, before: int) -> bool:
    return (_row_n(app, lesson) or 0) > before


async def live(root: Path, commits: int, lesson: str, command: list[str]) -> dict[str, Any]:
    from lesson_credit.core.workspace import Workspace
    from lesson_credit.tui import gc_settings
    from lesson_credit.tui.app import LessonCreditApp
    from lesson_credit.tui.screens.lessons import LessonsScreen

    gc_settings.freeze()  # as `lesson_credit.tui.app.run` does (`start` ran first, as in the CLI: see main)
    out: dict[str, Any] = {"workspace": str(root)}
    log = root / "state" / "lesson-thompson" / "sessions.jsonl"
    journal = root / "journals" / "bench-live.md"
    journal.parent.mkdir(parents=True, exist_ok=True)
    journal.write_text(JOURNAL)
    stalls = StallMonitor()
    t0 = time.perf_counter()
    app = LessonCreditApp(Workspace(root))
    async with app.run_test(size=(160, 45)) as pilot:
        stalls.start()
        t_rows = await until(lambda: rows_ready(app, LessonsScreen, "#lessons-table"), "lessons table")
        out["open_s"] = t_rows - t0
        await pilot.pause()
        await until(lambda: app.snapshot is not None, "first snapshot")
        out["open_idle_s"] = time.perf_counter() - t0
        out["open_peak_rss_mb"] = peak_rss_mb()
        out["open_stall_s"] = stalls.take()
        latencies, stall = [], []
        for i in range(commits):
            before = _row_n(app, lesson) or 0
            size = log.stat().st_size
            session = f"live-{time.time_ns()}-{i}"
            child = await asyncio.create_subprocess_exec(
                *command, "record", "--workspace", str(root), "--session-id", session,
                "--journal", str(journal), "--lessons", lesson, "--reward", "0.6",
                stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.PIPE,
            )  # fmt: skip
            t_commit = await until(partial(_grew, log, size), "the commit", timeout=60)
            t_seen = await until(partial(_shown, app, lesson, before), "the commit shown", timeout=60)
            _, err = await child.communicate()
            if child.returncode != 0:
                raise RuntimeError(f"record failed: {err.decode(errors='replace')[-500:]}")
            latencies.append(t_seen - t_commit)
            stall.append(stalls.take())
            await pilot.pause()
        out["latency_s"] = latencies
        out["stall_s"] = stall
        stalls.stop()
    out["peak_rss_mb"] = peak_rss_mb()
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.tui_live", description=__doc__.splitlines()[0])
    parser.add_argument("--workspace", required=True, type=Path)
    parser.add_argument("--commits", type=int, default=5)
    parser.add_argument("--lesson", default=None, help="the lesson the commits record (default: the first one)")
    args = parser.parse_args(argv)
    from lesson_credit.tui import gc_settings

    gc_settings.start()  # the dashboard's collector settings, set as `lesson-credit tui` sets them
    from bench.harness import lesson_credit_cmd
    from lesson_credit.core.library.lessons import load_library

    root = args.workspace.resolve()
    lesson = args.lesson or sorted(x.id for x in load_library(root).lessons)[0]
    result = asyncio.run(live(root, args.commits, lesson, lesson_credit_cmd()))
    sys.stdout.write(MARKER + json.dumps(result) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
