"""A commit by another process, until the open dashboard shows it (headless, in a process of its own).

    python -m bench.tui_live --workspace WS [--commits 5] [--store URL]

Opens the dashboard on WS (Textual's `App.run_test`), waits until its start-up work is done, then,
`--commits` times: runs `lesson-credit record` in a child process (another agent) recording a
session with lesson L, and times from the moment the log grew (polled every millisecond) until the
Lessons table shows L's new session count. The collector is set up as `lesson-credit tui` sets it
(lesson_credit.tui.gc_settings). Prints one line `TUI-LIVE {json}` with the latencies, the
open times and this process's peak RSS when opened (VmHWM: the joint fit of a big log runs in a
process of its own and is not counted here, or anywhere in the dashboard).

With `--store URL` (a PostgreSQL database holding WS's events, e.g. after `lesson-credit store
push`), the dashboard and the child both use that database (`--store URL`, agents bench-dashboard
and bench-live), and the commit is the moment the database's last position grows, polled every
millisecond on a connection of the probe's own, from a thread of its own.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import threading
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


class _LastPosition:
    """The database's last committed position, asked on a connection of the probe's own, from a
    thread of the probe's own (not one of the threads Textual's workers share): the moment it
    grows is taken while the dashboard's event loop is busy too (a stalled loop would see the
    commit late and the latency short: once, 0 ms)."""

    QUERY = "SELECT coalesce(max(position), 0) FROM lesson_credit.events"

    def __init__(self, url: str) -> None:
        import psycopg

        self.conn = psycopg.connect(url, autocommit=True)

    def now(self) -> int:
        row = self.conn.execute(self.QUERY).fetchone()
        return int(row[0]) if row else 0

    def _watch(self, position: int, timeout: float, seen: list[float]) -> None:
        deadline = time.perf_counter() + timeout
        while self.now() <= position and time.perf_counter() < deadline:
            time.sleep(0.001)
        seen.append(time.perf_counter())

    async def grew(self, position: int, timeout: float) -> float:
        """The perf_counter time at which the last position was first seen past `position`."""
        seen: list[float] = []
        thread = threading.Thread(target=self._watch, args=(position, timeout, seen), daemon=True)
        thread.start()
        await until(lambda: bool(seen), "the commit", timeout=timeout + 5)
        thread.join()
        if self.now() <= position:
            raise TimeoutError(f"the commit: not after {timeout:.0f} s")
        return seen[0]


def _open_workspace(root: Path, store_url: str | None) -> Any:
    from lesson_credit.core.log.stores import open_store
    from lesson_credit.core.workspace import STATE_DIR, Workspace

    if store_url is None:
        return Workspace(root)
    return Workspace(root, store=open_store(store_url, root / STATE_DIR / "sessions.jsonl", "bench-dashboard"))


async def live(
    root: Path, commits: int, lesson: str, command: list[str], store_url: str | None = None
) -> dict[str, Any]:
    from lesson_credit.tui import gc_settings
    from lesson_credit.tui.app import LessonCreditApp
    from lesson_credit.tui.screens.lessons import LessonsScreen

    gc_settings.freeze()  # as `lesson_credit.tui.app.run` does (`start` ran first, as in the CLI: see main)
    out: dict[str, Any] = {"workspace": str(root), "store": "database" if store_url else "file"}
    log = root / "state" / "lesson-thompson" / "sessions.jsonl"
    journal = root / "journals" / "bench-live.md"
    journal.parent.mkdir(parents=True, exist_ok=True)
    journal.write_text(JOURNAL)
    stalls = StallMonitor()
    where = ["--store", store_url, "--agent", "bench-live"] if store_url else []
    position = _LastPosition(store_url) if store_url else None
    t0 = time.perf_counter()
    app = LessonCreditApp(_open_workspace(root, store_url))
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
            size = log.stat().st_size if position is None else position.now()
            session = f"live-{time.time_ns()}-{i}"
            record = [*command, "record", "--workspace", str(root), *where, "--session-id", session]
            record += ["--journal", str(journal), "--lessons", lesson, "--reward", "0.6"]
            child = await asyncio.create_subprocess_exec(
                *record, stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.PIPE
            )
            if position is None:
                t_commit = await until(partial(_grew, log, size), "the commit", timeout=60)
            else:
                t_commit = await position.grew(size, timeout=60)
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
    if position is not None:
        position.conn.close()
    out["peak_rss_mb"] = peak_rss_mb()
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.tui_live", description=__doc__.splitlines()[0])
    parser.add_argument("--workspace", required=True, type=Path)
    parser.add_argument("--commits", type=int, default=5)
    parser.add_argument("--lesson", default=None, help="the lesson the commits record (default: the first one)")
    parser.add_argument("--store", default=None, metavar="URL", help="a PostgreSQL database holding WS's events")
    args = parser.parse_args(argv)
    from lesson_credit.tui import gc_settings

    gc_settings.start()  # the dashboard's collector settings, set as `lesson-credit tui` sets them
    from bench.harness import lesson_credit_cmd
    from lesson_credit.core.library.lessons import load_library

    root = args.workspace.resolve()
    lesson = args.lesson or sorted(x.id for x in load_library(root).lessons)[0]
    result = asyncio.run(live(root, args.commits, lesson, lesson_credit_cmd(), args.store))
    sys.stdout.write(MARKER + json.dumps(result) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
