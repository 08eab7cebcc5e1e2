"""A 5,000-character filter typed key by key into Sessions, against a bare Textual app's text box.

    python -m bench.run --only filter_typing

A terminal without bracketed paste delivers a paste as keys. Each run opens the dashboard on the
demo workspace headless (`App.run_test`), shows Sessions, focuses its filter and queues `/`,
5,000 characters and enter at the driver at once; it is timed from queueing the keys until every
key has been handed on (`app.keys.waiting == 0`), the filter has been applied and the table shows
what it found. Before the key router and the debounced filter this took 9.4 s on the demo in a
terminal (tmux, 80x24): the filter re-ran on every character.

The baseline is the floor for the same keys in Textual: an app with one Input (the same
256-character cap as the filter box) and nothing else, timed until the Input holds the text and
has handled enter. Runs are interleaved (ours, bare, ours, ...).
"""

from __future__ import annotations

import asyncio
import math
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.harness import Result, Target  # noqa: E402

CHARACTERS = 5000
SIZE = (80, 24)
DEADLINE_S = 300.0  # only catches a hang


def _queue(app: Any, keys: list[tuple[str, str | None]]) -> None:
    from textual import events

    for key, char in keys:
        event = events.Key(key, char)
        event.set_sender(app)
        app._driver.send_message(event)


async def _until(done: Any) -> None:
    deadline = time.monotonic() + DEADLINE_S
    while not done():
        if time.monotonic() > deadline:
            raise TimeoutError("the keys were not handled")
        await asyncio.sleep(0.002)


async def ours(workspace: Path, characters: int) -> float:
    from textual.widgets import DataTable

    from lesson_credit.core.workspace import Workspace
    from lesson_credit.tui.app import LessonCreditApp
    from lesson_credit.tui.screens.sessions import SessionsScreen

    app = LessonCreditApp(Workspace(workspace), poll_seconds=0)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("s")
        await _until(lambda: isinstance(app.screen, SessionsScreen) and app.screen.view is not None)
        screen = app.screen
        assert isinstance(screen, SessionsScreen)
        start = time.perf_counter()
        _queue(app, [("slash", "/"), *[("x", "x")] * characters, ("enter", "\r")])
        await _until(lambda: not app.keys.waiting and not screen.filter_pending and screen.filter_text)
        seconds = time.perf_counter() - start
        assert screen.query_one("#sessions-table", DataTable).row_count == 0  # nothing has "xxx…" in it
    return seconds


async def bare(characters: int) -> float:
    from textual.app import App, ComposeResult
    from textual.widgets import Input

    from lesson_credit.tui.widgets.filter_box import MAX_FILTER

    class Bare(App[None]):
        submitted = False

        def compose(self) -> ComposeResult:
            yield Input(id="box", max_length=MAX_FILTER)

        def on_input_submitted(self) -> None:
            self.submitted = True

    app = Bare()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        box = app.query_one("#box", Input)
        start = time.perf_counter()
        _queue(app, [*[("x", "x")] * characters, ("enter", "\r")])
        await _until(lambda: app.submitted)
        seconds = time.perf_counter() - start
        assert len(box.value) == min(characters, MAX_FILTER)
    return seconds


def case_filter_typing(sizes: dict[str, Any]) -> list[Result]:
    runs = sizes["runs"]["filter_typing"][0]
    characters = sizes.get("filter_characters", CHARACTERS)
    mine: list[float] = []
    floor: list[float] = []
    for _ in range(runs):
        mine.append(asyncio.run(ours(ROOT, characters)))
        floor.append(asyncio.run(bare(characters)))
    return [
        Result(
            "filter_typing",
            mine,
            floor,
            "bare Textual app, one Input (same cap), the same keys",
            Target(math.inf, min_speedup=0.33),
            f"/, {characters:,} characters and enter queued at once on the demo's Sessions screen, until all are "
            "handled and the filter applied (9.4 s before the key router and the debounce); target: within 3x "
            "Textual's floor",
        )
    ]
