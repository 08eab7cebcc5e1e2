"""Bench case dashboard_memory: the dashboard's peak memory with its joint fit's child.

    python -m bench.tui_memory --workspace WS

Opens the dashboard on WS headless (Textual's `App.run_test`, in a process of its own) with the
saved joint fits deleted (`.cache/effects.msgpack` and `joint-posterior.msgpack`, as after any new
record or grade), so that the Lessons screen fits them again, and waits until the Lessons table
shows the effects and P(top-k) of the log as read. The fit runs in a child
process (`tui/effects_job.py`) as it does from 100,000 sessions or 500 lessons; the probe lowers
that threshold to 0 (in this process only), so a small workspace measures the same path.

Prints one line `TUI-MEMORY {json}`: `dashboard_mb`, this process's peak RSS (VmHWM) once the
effects are shown (`open_mb` once the table has rows); `children_mb`, each child's peak RSS, from GNU
time (`-f %M`) put in front of the child's command (the probe wraps `subprocess.Popen` in the
effects_job module: nothing in tui/ changes), and `child_mb` the largest (they run one at a time);
without /usr/bin/time, this process's rusage of its children (an upper bound: Linux carries the
spawning process's high-water mark into a vfork'ed child's); `sum_mb`; the times (`open_s` until the
table has rows, `effects_s` until it shows the effects and P(top-k)) and the load.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
import types
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.harness import Result, Target  # noqa: E402
from bench.tui_probe import peak_rss_mb, rows_ready, until  # noqa: E402

MARKER = "TUI-MEMORY "
TIME = Path("/usr/bin/time")
SAVED_FITS = ("effects.msgpack", "joint-posterior.msgpack")  # what a new record makes stale
TARGET_MB = 1024.0  # the dashboard and its fit's child together under 1 GB
# and the effects shown within 10 s (7.32 s at 1M x 1,000 before the joint fit's switch check read every time block
# once per set of injections, 131.8 s after: with no time target that showed as yes)
TARGET_S = 10.0
TIMEOUT_S = 600.0  # the fit of a million sessions takes ~30 s on a quiet machine; only catches a hang


def _timed_popen(folder: str) -> Any:
    """A stand-in for the `subprocess` module in tui/effects_job.py whose Popen runs each child under
    GNU time (its peak RSS into a file of its own in `folder`)."""
    started = []

    def popen(cmd: list[str], **kwargs: Any) -> subprocess.Popen[bytes]:
        started.append(cmd)
        rss = os.path.join(folder, f"child-{len(started)}")
        return subprocess.Popen([str(TIME), "-f", "%M", "-o", rss, *cmd], **kwargs)

    return types.SimpleNamespace(Popen=popen, PIPE=subprocess.PIPE)


def _children_mb(folder: str) -> list[float]:
    """The peak RSS of each child GNU time measured, in the order they started."""
    out = []
    for path in sorted(Path(folder).iterdir(), key=lambda p: int(p.name.split("-")[1])):
        text = path.read_text().split()
        if text and text[-1].isdigit():
            out.append(int(text[-1]) / 1024)
    return out


def _fitted(app: Any) -> bool:
    """The Lessons table shows the joint effects of the log as read, and P(top-k)."""
    view = getattr(app.screen, "view", None)
    return view is not None and view.effects_of == view.version and view.p_top_k is not None


async def measure(root: Path) -> dict[str, Any]:
    from lesson_credit.core.workspace import Workspace
    from lesson_credit.tui import effects_job, gc_settings
    from lesson_credit.tui.app import LessonCreditApp
    from lesson_credit.tui.screens.lessons import LessonsScreen

    for name in SAVED_FITS:
        (root / "state" / "lesson-thompson" / ".cache" / name).unlink(missing_ok=True)
    gc_settings.freeze()  # as `lesson_credit.tui.app.run` does (`start` ran first, as in the CLI: see main)
    effects_job.ELSEWHERE_FROM = 0  # the fit in a child whatever the log's size (this process only)
    out: dict[str, Any] = {"workspace": str(root), "load_before": [round(x, 2) for x in os.getloadavg()]}
    with tempfile.TemporaryDirectory(prefix="child-rss-") as folder:
        if TIME.exists():
            effects_job.subprocess = _timed_popen(folder)  # type: ignore[attr-defined]  # probe, this process only
        t0 = time.perf_counter()
        ws = Workspace(root)
        app = LessonCreditApp(ws, poll_seconds=0)
        async with app.run_test(size=(160, 45)):
            out["open_s"] = await until(lambda: rows_ready(app, LessonsScreen, "#lessons-table"), "rows") - t0
            out["open_mb"] = peak_rss_mb()
            out["effects_s"] = await until(lambda: _fitted(app), "effects", timeout=TIMEOUT_S) - t0
            out["dashboard_mb"] = peak_rss_mb()
            out["sessions"], out["lessons"] = ws.data().n_sessions, ws.data().n_arms
        children = _children_mb(folder) if TIME.exists() else []
    if children:  # one child at a time (tui/effects_job.py): the peak of the children is the largest
        out["children_mb"], out["child_mb"], out["child_rss_from"] = children, max(children), "GNU time"
    else:
        out["child_mb"] = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
        out["child_rss_from"] = "rusage of the children (an upper bound)"
    out["sum_mb"] = out["dashboard_mb"] + out["child_mb"]
    out["load_after"] = [round(x, 2) for x in os.getloadavg()]
    return out


def case_dashboard_memory(sizes: dict[str, Any]) -> list[Result]:
    """dashboard_memory: the probe above on bench/scale.py's log of `sizes["dashboard_memory"]` (1M
    sessions x 1,000 lessons at full size), its parsed-log cache written first (as `status` leaves it);
    the baseline is the same probe's time until the Lessons table has rows (report-only)."""
    from bench.scale import SCALE, ensure_cache, scale_workspace_data

    root = scale_workspace_data({**SCALE["workspace"], **sizes["dashboard_memory"]})
    ensure_cache(root)
    proc = subprocess.run(
        [sys.executable, "-m", "bench.tui_memory", "--workspace", str(root)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    if proc.returncode != 0:
        raise RuntimeError(f"bench.tui_memory failed: {proc.stderr[-2000:]}")
    m = json.loads(next(x for x in proc.stdout.splitlines() if x.startswith(MARKER)).removeprefix(MARKER))
    over = f" ABOVE the target {TARGET_MB:,.0f} MB" if m["sum_mb"] >= TARGET_MB else ""
    return [
        Result(
            "dashboard_memory",
            [m["effects_s"]],
            [m["open_s"]],
            "the same open until the Lessons table has rows",
            Target(TARGET_S, max_rss_mb=TARGET_MB),
            f"the dashboard on {m['sessions']:,} sessions x {m['lessons']:,} lessons until its joint effects and "
            f"P(top-k) are shown, fits refitted: peak RSS of the dashboard {m['dashboard_mb']:,.0f} MB (at the "
            f"first rows {m['open_mb']:,.0f} MB) + its fits' largest child {m['child_mb']:,.0f} MB (each: "
            f"{', '.join(f'{x:,.0f}' for x in m.get('children_mb', [m['child_mb']]))} MB, {m['child_rss_from']}) "
            f"= {m['sum_mb']:,.0f} MB{over}; load {m['load_before'][0]:.1f} -> {m['load_after'][0]:.1f}",
            extra=m,
            rss_mb=m["sum_mb"],
        )
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.tui_memory", description=__doc__.splitlines()[0])
    parser.add_argument("--workspace", required=True, type=Path)
    args = parser.parse_args(argv)
    from lesson_credit.cli.process import limit_blas_threads
    from lesson_credit.tui import gc_settings

    limit_blas_threads()  # as `lesson-credit` does before it imports the engine (the child inherits it)
    gc_settings.start()  # the dashboard's collector settings, set as the CLI sets them
    result = asyncio.run(measure(args.workspace.resolve()))
    sys.stdout.write(MARKER + json.dumps(result) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
