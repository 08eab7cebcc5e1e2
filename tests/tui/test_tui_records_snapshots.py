"""Snapshots of the views docs/records.md added, at 80x24 and 160x45: the Session detail with its record panel,
the transcript, agreement and the grading queue (workspaces in a tmp folder always named `ws`)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot

from lesson_credit.core.workspace import Workspace
from tests.support.records_helpers import agreement_workspace
from tests.tui.records_fixture import build_records_workspace
from tests.tui.test_tui_snapshots import SnapCompare, make_app, sizes, steps
from tests.tui.tui_fixture import fixed_clock, settle

Size = tuple[int, int]


@pytest.fixture
def rws(tmp_path: Path) -> Workspace:
    return Workspace(build_records_workspace(tmp_path / "ws"), clock=fixed_clock)


@sizes
def test_snapshot_session_detail_with_record(size: Size, snap_compare: SnapCompare, rws: Workspace) -> None:
    assert snap_compare(make_app(rws), terminal_size=size, run_before=steps(session="s1"))


@sizes
def test_snapshot_transcript(size: Size, snap_compare: SnapCompare, rws: Workspace) -> None:
    assert snap_compare(make_app(rws), terminal_size=size, run_before=steps("V", session="s1"))


@sizes
def test_snapshot_transcript_search(size: Size, snap_compare: SnapCompare, rws: Workspace) -> None:
    async def run_before(pilot: Pilot[Any]) -> None:
        # the transcript holds the keys until its text is read, and settle() waits for that (on the old code a
        # loop of 2,000 10 ms sleeps did: under load the read, queued behind other work on the source's lock,
        # took longer, and the search was typed into nothing)
        await steps("V", "slash", *"pytest", "enter", "enter", session="s1")(pilot)

    assert snap_compare(make_app(rws), terminal_size=size, run_before=run_before)


@sizes
def test_snapshot_agreement(size: Size, snap_compare: SnapCompare, tmp_path: Path) -> None:
    workspace = Workspace(agreement_workspace(tmp_path), clock=fixed_clock)
    assert snap_compare(make_app(workspace), terminal_size=size, run_before=steps("A"))


def queue_steps(*keys: str) -> Callable[[Pilot[Any]], Any]:
    async def run_before(pilot: Pilot[Any]) -> None:
        await settle(pilot)
        for key in keys:
            await pilot.press(key)
            await settle(pilot)

    return run_before


@sizes
def test_snapshot_grading_queue_informative(size: Size, snap_compare: SnapCompare, rws: Workspace) -> None:
    assert snap_compare(make_app(rws), terminal_size=size, run_before=queue_steps("I", "o"))
