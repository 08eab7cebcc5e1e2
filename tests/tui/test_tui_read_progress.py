"""A long read says how far it has come: the title bar shows the first read of a big log (15-25 s at a
million sessions, with nothing but a loading indicator before) and stops once it is done."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from typing import Any

import pytest

from lesson_credit.core.log.index import LogIndex
from lesson_credit.core.reader import ReadProgress, size_text
from lesson_credit.core.workspace import Workspace
from lesson_credit.tui import app as tui_app
from lesson_credit.tui.app import LessonCreditApp
from lesson_credit.tui.widgets.title_bar import TitleBar
from tests.tui.tui_fixture import LOG_REL, settle


def describe(progress: ReadProgress) -> str:
    return progress.describe()


def test_progress_reads_as_a_share_of_the_log_or_a_count_of_events() -> None:
    # 1,536,000,000 bytes = 1.43 GiB; 583,680,000 of them = 38.0% (floored: never 100% before the end)
    assert describe(ReadProgress("reading", 583_680_000, 1_536_000_000, True, 0.0)) == "reading the log: 38% of 1.4 GB"
    assert describe(ReadProgress("reading", 1_535_999_999, 1_536_000_000, True, 0.0)) == (
        "reading the log: 99% of 1.4 GB"
    )
    # a database: 380,000 of 1,000,000 positions (a rolled-back transaction uses positions: no counts)
    assert describe(ReadProgress("reading", 380_000, 1_000_000, False, 0.0)) == "reading the database: 38%"
    assert describe(ReadProgress("reading", 0, 0, True, 0.0)) == "reading the log: 100% of 0 bytes"
    assert describe(ReadProgress("caching", 0, 0, True, 0.0)) == "saving the parsed-log cache"
    # 340 MiB = 356,515,840 bytes; 12 KiB = 12,288; 9.5 MiB = 9,961,472; 10,480,000 bytes = 9.994 MiB
    assert [size_text(n) for n in (356_515_840, 12_288, 9_961_472, 10_480_000, 900)] == [
        "340 MB",
        "12 KB",
        "9.5 MB",
        "10 MB",
        "900 bytes",
    ]


async def test_the_title_bar_says_how_far_a_first_read_has_come(ws_root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The first read is held after its first chunk (as a slow read of a big log would be): the title
    bar says "reading the log", with the share read; released, it shows the workspace's name again."""
    monkeypatch.setattr(tui_app, "PROGRESS_AFTER_S", 0.0)
    monkeypatch.setattr(tui_app, "PROGRESS_EVERY_S", 0.05)
    release, held = threading.Event(), threading.Event()
    add_many = LogIndex.add_many

    def slow(index: LogIndex, *args: Any) -> Any:
        held.set()
        assert release.wait(30)
        return add_many(index, *args)

    monkeypatch.setattr(LogIndex, "add_many", slow)
    app = LessonCreditApp(Workspace(ws_root), seed=0, poll_seconds=0)

    async def title(pilot: Any, wanted: str, *, gone: str = "") -> str:
        """The heading once it says `wanted` (and no longer `gone`), else the last one seen after ~30 s."""
        for _ in range(3000):
            heading = str(pilot.app.screen.query_one(TitleBar).heading())
            if wanted in heading and not (gone and gone in heading):
                return heading
            await asyncio.sleep(0.01)
        return heading

    try:
        async with app.run_test(size=(80, 24)) as pilot:
            assert held.wait(30)
            heading = await title(pilot, "reading the log")
            size = size_text((ws_root / LOG_REL).stat().st_size)  # (size_text: checked by hand above)
            assert heading.endswith(f"ws · reading the log: 0% of {size}"), heading  # held in its one chunk
            release.set()
            await settle(pilot)
            heading = await title(pilot, "Lessons", gone="reading")  # the names frame says Lessons too
            assert "reading" not in heading and heading.endswith("ws"), heading
    finally:
        release.set()


async def test_the_progress_shows_on_a_screen_with_a_sub_title_of_its_own(
    ws_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Sessions (and Agreement) set a sub-title of their own, which the title bar prefers to the
    app's: a long read started there (a log replaced, a damaged cache block) said nothing."""
    from tests.tui.tui_fixture import open_sessions

    app = LessonCreditApp(Workspace(ws_root), seed=0, poll_seconds=0)
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(pilot)
        await open_sessions(pilot)
        reading = ReadProgress("reading", 1 << 29, 1 << 30, True, since=-1e9)  # 512 MB of 1 GB, long under way
        monkeypatch.setattr(app.source, "read_progress", lambda: reading)
        app.show_progress()
        await pilot.pause()
        heading = str(app.screen.query_one(TitleBar).heading())
        assert heading.startswith("Sessions") and heading.endswith("reading the log: 50% of 1.0 GB"), heading
        monkeypatch.setattr(app.source, "read_progress", lambda: None)
        app.show_progress()
        await pilot.pause()
        assert "reading" not in str(app.screen.query_one(TitleBar).heading())
