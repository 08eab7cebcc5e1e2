"""Bench case `transcript`: a session's 10 MB trajectory opened in the dashboard's transcript view.

Ours: from pushing the TranscriptScreen (headless, Textual's run_test) until the view holds the
transcript laid out at its width (every message, long outputs collapsed, every lesson's keyword
hits found), best of N; and, once the screen is shown, the longest the event loop went without
running a 5 ms sleep until then (a key typed meanwhile would wait that long). Baseline, in the
same process: the plain way to read such a file, `json.loads` per line and the messages' text
joined, without laying anything out.

Target: under 0.5 s, and no stall of the event loop over 100 ms (the reading, the keyword
search and the soft-wrapping all run in workers).
"""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Any

import numpy as np

from bench.harness import DATA, Result, Target, best_of, finish, reuse
from bench.tui_probe import StallMonitor, until

TRAJECTORY_BYTES = 10 * 1024 * 1024
MAX_STALL_S = 0.100
SESSION = "2026-03-01-bench"


def transcript_workspace(size: int) -> Path:
    """A workspace with one session, its gptme-sessions record and a gptme conversation of `size` bytes."""
    params = {"bytes": size, "version": 1}
    root = DATA / f"transcript-{size}"
    if reuse(root, params):
        return root
    rng = np.random.default_rng(20261027)
    (root / "lessons" / "tools").mkdir(parents=True, exist_ok=True)
    (root / "lessons" / "tools" / "git.md").write_text(
        '---\nmatch:\n  keywords: ["git worktree", "stale branch", "pytest"]\n---\n# Git\n', encoding="utf-8"
    )
    log = root / "state" / "lesson-thompson" / "sessions.jsonl"
    log.parent.mkdir(parents=True, exist_ok=True)
    event = {
        "type": "session",
        "session_id": SESSION,
        "timestamp": "2026-03-01T10:00:00Z",
        "base_reward": None,
        "lessons": [{"path": "tools/git.md", "salience": 0.5}],
    }
    log.write_text(json.dumps(event) + "\n", encoding="utf-8")
    folder = root / "state" / "sessions"
    conversation = folder / "logs" / f"{SESSION}" / "conversation.jsonl"
    conversation.parent.mkdir(parents=True, exist_ok=True)
    rows, total, n = [], 0, 0
    while total < size:
        n += 1
        if n % 3 == 0:
            lines = "\n".join(
                f"tests/test_{i}.py::test_case PASSED (git worktree ok)" for i in range(rng.integers(20, 400))
            )
            row = {"role": "system", "content": "Ran command: `pytest -q`\n" + lines}
        else:
            words = " ".join("word" for _ in range(rng.integers(10, 200)))
            row = {
                "role": "assistant",
                "content": f"Checking the stale branch.\n```shell\ngit worktree list\n```\n{words}",
            }
        row["timestamp"] = "2026-03-01T10:00:00"
        line = json.dumps(row) + "\n"
        rows.append(line)
        total += len(line)
    conversation.write_text("".join(rows), encoding="utf-8")
    record = {"session_id": SESSION, "trajectory_path": conversation.relative_to(root).as_posix()}
    (folder / "session-records.jsonl").write_text(json.dumps(record) + "\n", encoding="utf-8")
    finish(root, params)
    return root


def _as_the_dashboard() -> None:
    """The dashboard process's collector settings (lesson_credit.tui.gc_settings), as `lesson-credit tui` has them."""
    from lesson_credit.tui import gc_settings

    gc_settings.start()
    import lesson_credit.tui.app  # noqa: F401

    gc_settings.freeze()


async def _open(root: Path) -> tuple[float, float, int]:
    """(seconds until the transcript is laid out, longest event-loop stall meanwhile, lines laid out)."""
    from lesson_credit.core.workspace import Workspace
    from lesson_credit.tui.app import LessonCreditApp
    from lesson_credit.tui.screens.transcript import TranscriptScreen
    from lesson_credit.tui.widgets.transcript_view import TranscriptView

    app = LessonCreditApp(Workspace(root), poll_seconds=0)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause(0.2)
        monitor = StallMonitor()
        screen = TranscriptScreen(app.source, SESSION)
        start = time.perf_counter()
        await app.push_screen(screen)  # a screen's first show (styles, compose) is not the trajectory's cost
        monitor.start()

        def laid_out() -> bool:
            view = screen.query_one("#transcript", TranscriptView)
            wrapped = view.virtual_size.width == view.scrollable_content_region.width
            return screen.data is not None and view.virtual_size.height > 10 and wrapped

        end = await until(laid_out, "transcript laid out", timeout=60)
        stall = monitor.take()
        monitor.stop()
        lines = screen.query_one("#transcript", TranscriptView).virtual_size.height
    return end - start, stall, lines


def _baseline(path: Path) -> int:
    texts = []
    with open(path, encoding="utf-8") as handle:
        for line in handle:
            texts.append(json.loads(line)["content"])
    return len("\n".join(texts))


def case_transcript(sizes: dict[str, Any]) -> list[Result]:
    runs = sizes["runs"].get("transcript", (5, 5))
    root = transcript_workspace(sizes.get("transcript", {}).get("bytes", TRAJECTORY_BYTES))
    path = root / "state" / "sessions" / "logs" / SESSION / "conversation.jsonl"
    stalls: list[float] = []
    lines = 0
    _as_the_dashboard()
    ours_times: list[float] = []
    for _ in range(runs[0]):  # the time from the screen's push, not the app's start-up around it
        seconds, stall, lines = asyncio.run(_open(root))
        ours_times.append(seconds)
        stalls.append(stall)
    base_times, _ = best_of(lambda _: _baseline(path), runs[1])
    worst = max(stalls)
    failed = [f"event loop stalled {worst * 1e3:.0f} ms"] if worst > MAX_STALL_S else []
    detail = (
        f"{path.stat().st_size / 1e6:.1f} MB gptme conversation.jsonl; from the screen's push to the transcript "
        f"laid out at the view's width ({lines:,} screen lines at 120 columns); longest event-loop stall "
        f"{worst * 1e3:.0f} ms (target < {MAX_STALL_S * 1e3:.0f} ms)"
    )
    return [
        Result(
            "transcript_open",
            ours_times,
            base_times,
            "json.loads per line, contents joined (no layout)",
            Target(0.5, check=f"no stall over {MAX_STALL_S * 1e3:.0f} ms"),
            detail,
            extra={"stalls_s": stalls},
            failed=failed,
        )
    ]
