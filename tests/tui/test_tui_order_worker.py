"""The Sessions list's order, which `n` goes down, is built in a worker when the list is read (for its filter and
sort), not on the app's thread at the first `n`: at a million sessions that first key stalled the dashboard 1.4 s.
Keys typed while it is built wait for it and then apply in the order typed (`n n 7 c`).

The fixture's sessions plus s5 and s6 pending (test_tui_next_in_list's `three_pending`); oldest first (`r`) the
list reads s1 .. s6, pending s4, s5, s6."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from lesson_credit.core.workspace import Workspace
from lesson_credit.tui.app import LessonCreditApp
from lesson_credit.tui.next_pending import ListOrder
from lesson_credit.tui.screens.sessions import SessionsScreen
from tests.tui.test_tui_grading import every_toast, toasts
from tests.tui.test_tui_next_in_list import grades, stack
from tests.tui.tui_fixture import NEW_SESSION, burst, fixed_clock, open_sessions, record, settle, wait_until

pytestmark = pytest.mark.usefixtures(every_toast.__name__)


@pytest.fixture
def three_pending(ws_root: Path) -> LessonCreditApp:
    """test_tui_next_in_list's: s5 and s6 logged pending after s4."""
    workspace = Workspace(ws_root, clock=fixed_clock)
    record(workspace, ws_root, (*NEW_SESSION[:3], None, *NEW_SESSION[4:]))  # s5, 2026-03-05
    record(workspace, ws_root, ("s6", *NEW_SESSION[1:3], None, "code", "2026-03-06T14:00:00Z"))
    return LessonCreditApp(workspace, poll_seconds=0)


GATE_S = 20.0  # how long a gated build waits at most (the old code waited so long on the app's thread)


class GatedBuilds:
    """`ListOrder.of` that notes its thread and, once `close` is called, waits for `open` (or GATE_S)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.threads: list[str] = []
        self.gate = threading.Event()
        self.gate.set()
        self.started = threading.Event()
        build = ListOrder.of.__func__  # type: ignore[attr-defined]

        def gated(cls: type[ListOrder], *args: Any) -> ListOrder:
            self.threads.append(threading.current_thread().name)
            self.started.set()
            self.gate.wait(GATE_S)
            return build(cls, *args)  # type: ignore[no-any-return]

        monkeypatch.setattr(ListOrder, "of", classmethod(gated))

    def close(self) -> None:
        self.gate.clear()
        self.started.clear()

    def open(self) -> None:
        self.gate.set()


# typed after `r home` (oldest first, the cursor at the top: pending s4, s5, s6 down the list), with what is then
# open and the grades written, by hand: `n` opens the first pending session from the top, `n` on it the next
BURSTS = (
    (("n", "n", "7", "c"), "detail:s5", [("s5", 0.7)]),
    (("n", "7", "c", "n", "6", "c", "n"), "detail:s6", [("s4", 0.7), ("s5", 0.6)]),
    (("n", "7", "c", "n", "n", "5", "c"), "detail:s6", [("s4", 0.7), ("s6", 0.5)]),
)


@pytest.mark.parametrize(("keys", "open_at_end", "written"), BURSTS, ids=[" ".join(b[0]) for b in BURSTS])
async def test_keys_typed_while_the_order_is_built_apply_in_order(
    three_pending: LessonCreditApp,
    ws_root: Path,
    monkeypatch: pytest.MonkeyPatch,
    keys: tuple[str, ...],
    open_at_end: str,
    written: list[tuple[str, float]],
) -> None:
    """`r home` starts a build, held at a gate; the keys typed at once wait, the app's loop going on meanwhile
    (nothing opened, nothing written); the gate opened, they apply in the order typed. On the old code the first
    `n` built the order on the app's thread (held there at the gate: the app stood still)."""
    builds = GatedBuilds(monkeypatch)
    app = three_pending
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        screen = await open_sessions(pilot)
        builds.close()
        builds.threads.clear()
        burst(pilot, "r", "home", *keys)
        await wait_until(pilot, lambda: builds.started.is_set() and app.keys.held)
        for _ in range(3):
            await pilot.pause()  # the app's loop goes on meanwhile: the keys wait, nothing is opened
        assert app.screen is screen and grades(ws_root) == []
        builds.open()
        await settle(pilot)
        assert stack(app)[-2:] == ["SessionsScreen", open_at_end]
    assert builds.threads and threading.main_thread().name not in builds.threads
    assert grades(ws_root) == written


async def test_a_filter_typed_while_an_order_is_built_gets_its_own_before_n(
    three_pending: LessonCreditApp, ws_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A build under way (the sort's) when the filter s5 is applied: `n` waits for the filter's order, built after
    it, and opens s5 (the sort's order would have opened s6, the first pending one from the top)."""
    builds = GatedBuilds(monkeypatch)
    app = three_pending
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await open_sessions(pilot)
        builds.close()
        burst(pilot, "r", "r")  # newest first again: a build of its own
        await wait_until(pilot, lambda: builds.started.is_set())
        burst(pilot, "slash", "s", "5", "enter", "n", "3", "c")
        await wait_until(pilot, lambda: app.keys.held)
        builds.open()
        await settle(pilot)
        assert stack(app)[-1] == "detail:s5"
        assert len(builds.threads) >= 2  # the sort's, then the filter's
    assert grades(ws_root) == [("s5", 0.3)]


async def test_a_build_that_fails_says_so_and_n_follows_the_queue(
    three_pending: LessonCreditApp, ws_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The build raising: the error is shown, and `n` (typed before it failed) goes on in the grading queue's
    order (oldest pending first, s4), the keys after it not held for ever."""
    app = three_pending
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await open_sessions(pilot)

        def failing(cls: type[ListOrder], *args: Any) -> ListOrder:
            raise RuntimeError("no order")

        monkeypatch.setattr(ListOrder, "of", classmethod(failing))
        burst(pilot, "r", "n", "4", "c")
        await settle(pilot)
        assert stack(app)[-1] == "detail:s4"
        assert any("RuntimeError: no order" in toast for toast in toasts(app))
        assert not app.keys.held
    assert grades(ws_root) == [("s4", 0.4)]


async def test_the_order_is_ready_when_the_list_has_been_read(three_pending: LessonCreditApp) -> None:
    """Read and settled, the list's order is there for the filter and sort shown, before any `n`: the newest
    first list's rows s6 .. s1 (rows 5 .. 0 of the log)."""
    app = three_pending
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        screen = await open_sessions(pilot)
        assert isinstance(screen, SessionsScreen) and not screen.order_building
        listed = screen.list_order()
        assert listed is not None
        order, _ = listed
        assert order.rows.tolist() == [5, 4, 3, 2, 1, 0]
        assert np.array_equal(order.pending, [0, 1, 2])  # s6, s5, s4 at the top
