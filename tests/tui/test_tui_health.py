"""Pilot tests for the Health screen: the CLI's words, and a first state that is never a wrong "no problems"."""

from __future__ import annotations

import datetime as dt
import io
import json
import threading
from contextlib import redirect_stdout
from pathlib import Path
from typing import Any

import pytest
from textual.widgets import DataTable

from lesson_credit.cli.main import main as cli_main
from lesson_credit.core.workspace import Workspace
from lesson_credit.tui import app as tui_app
from lesson_credit.tui.app import LessonCreditApp
from lesson_credit.tui.screens.health import FindingCard, HealthScreen
from lesson_credit.tui.screens.lessons import LessonsScreen
from lesson_credit.tui.source import WorkspaceSource
from lesson_credit.tui.source_views import LessonsView
from tests.tui.tui_fixture import FIXED_NOW, burst, open_health, settle, wait_until

SIZE = (120, 40)
LATER = FIXED_NOW + dt.timedelta(days=10)  # s4 has been pending for 11 days: a warning


def lint_summary(root: Path) -> str:
    """The last line `lesson-credit lint` prints: `1 error, 2 warnings; failed (--fail-on error)`."""
    out = io.StringIO()
    with redirect_stdout(out):
        cli_main(["lint", "--workspace", str(root)], clock=lambda: LATER)
    return out.getvalue().strip().splitlines()[-1]


async def test_health_title_counts_errors_and_warnings_in_the_clis_words(ws_root: Path) -> None:
    # the fixture: a ghost arm (tools/old-lesson.md) and a session never graded, both warnings
    assert lint_summary(ws_root).startswith("0 errors, 2 warnings")
    (ws_root / "lessons" / "tools" / "broken.md").write_text("---\nmatch: [unclosed\n---\n# Broken\n")
    assert lint_summary(ws_root).startswith("1 error, 2 warnings")
    app = LessonCreditApp(Workspace(ws_root, clock=lambda: LATER), poll_seconds=0)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_health(pilot)
        assert screen.title == "Health · 1 error, 2 warnings"
        cards = list(screen.query(FindingCard))
        assert [c.finding.severity for c in cards] == ["error", "warning", "warning"]
        assert cards[0].has_class("-error") and not cards[1].has_class("-error")
        headings = [str(w.render()) for w in screen.query(".health-heading")]
        assert headings == ["Errors (1)", "Warnings (2)"]
        assert "problem" not in screen.title.lower()


async def test_health_says_nothing_about_problems_until_the_checks_have_run(ws_root: Path) -> None:
    import threading

    from lesson_credit.tui.source import WorkspaceSource
    from lesson_credit.tui.source_views import HealthView

    gate = threading.Event()
    real = WorkspaceSource.health

    def slow_health(self: WorkspaceSource, **kwargs: bool) -> HealthView:
        gate.wait(30)
        return real(self, **kwargs)

    app = LessonCreditApp(Workspace(ws_root, clock=lambda: LATER), poll_seconds=0)
    WorkspaceSource.health = slow_health  # type: ignore[method-assign]  # every source's health waits (restored below)
    try:
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot)
            await app.run_action("show_health")
            await pilot.pause()
            screen = app.screen
            assert isinstance(screen, HealthScreen) and screen.view is None
            assert not screen.query("#health-empty") and not screen.query(FindingCard)
            assert screen.title == "Health" and screen.query_one("#findings").loading  # checking, not "no problems"
            gate.set()  # the checks finish only after the screen has been looked at (a timer raced a loaded machine)
            await settle(pilot)
            assert screen.view is not None and screen.title == "Health · 0 errors, 2 warnings"
    finally:
        gate.set()  # a failed assertion must not leave the worker waiting
        WorkspaceSource.health = real  # type: ignore[method-assign]  # restores the method


class GatedLessons:
    """Every Lessons view waits at a gate the test opens (as the first read of a big log keeps the start-up work
    from starting): `entered` once a view was asked for, `built` how many were computed. `reading`, open unless the
    test closes it, gates the reads a screen asks for through `WorkspaceSource.call` (the Lessons screen's first)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.gate, self.entered, self.built, self.reading = threading.Event(), threading.Event(), 0, threading.Event()
        self.reading.set()
        real, real_call = WorkspaceSource.lessons_view, WorkspaceSource.call

        def gated_call(source: WorkspaceSource, read: Any) -> Any:
            self.reading.wait(60)
            return real_call(source, read)

        def gated(source: WorkspaceSource) -> LessonsView:
            self.entered.set()
            self.gate.wait(60)
            self.built += 1
            return real(source)

        monkeypatch.setattr(WorkspaceSource, "lessons_view", gated)
        monkeypatch.setattr(WorkspaceSource, "call", gated_call)


async def test_health_typed_before_the_lessons_view_shows_its_findings_without_waiting_for_it(
    ws_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    lessons = GatedLessons(monkeypatch)
    monkeypatch.setattr(tui_app, "FIRST_SNAPSHOT_LATEST_S", 3600.0)  # only a first view starts the first snapshot
    app = LessonCreditApp(Workspace(ws_root, clock=lambda: LATER), poll_seconds=0)
    # the log's first read ends once Health is on screen (as on a big log): closed before the app starts, so the
    # Lessons screen's first read cannot pass before it (on a busy machine it did, and its view was asked for)
    lessons.reading.clear()
    try:
        async with app.run_test(size=SIZE) as pilot:
            burst(pilot, "h")  # at the first frame: the Lessons view (and what follows it) not computed yet
            await wait_until(pilot, lambda: isinstance(app.screen, HealthScreen))
            lessons.reading.set()
            await wait_until(pilot, lambda: isinstance(app.screen, HealthScreen) and app.screen.view is not None)
            screen = app.screen
            assert isinstance(screen, HealthScreen) and screen.title == "Health · 0 errors, 2 warnings"
            assert len(screen.query(FindingCard)) == 2
            # shown while the Lessons view still waits, and not even asked for: its screen is not shown
            assert lessons.built == 0 and not lessons.entered.is_set()
            # Health's findings start what the app starts after the first view: the session ids a finding opens
            await wait_until(pilot, lambda: app.snapshot is not None)
            assert app.snapshot is not None and "s4" in app.snapshot.session_ids
            lessons.gate.set()
            burst(pilot, "l")  # back: the Lessons screen loads now, once
            await settle(pilot)
            back = app.screen
            assert isinstance(back, LessonsScreen) and back.view is not None and lessons.built == 1
            # the fixture's six lessons (build_workspace): five files, and tools/old-lesson.md deleted after s2 used it
            assert back.query_one("#lessons-table", DataTable).row_count == len(back.view.rows) == 6
    finally:
        lessons.gate.set()  # a failed assertion must not leave the worker waiting
        lessons.reading.set()


async def test_a_key_for_the_lessons_screen_typed_before_health_still_waits_for_its_view(
    ws_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    lessons = GatedLessons(monkeypatch)
    app = LessonCreditApp(Workspace(ws_root, clock=lambda: LATER), poll_seconds=0)
    try:
        async with app.run_test(size=SIZE) as pilot:
            first = app.screen
            assert isinstance(first, LessonsScreen) and first.sort_column == "mean"
            burst(pilot, "o", "h")  # `o` sorts the Lessons table: it waits for the view, and `h` behind it
            await wait_until(pilot, lessons.entered.is_set)
            for _ in range(5):
                await pilot.pause()
            assert app.screen is first and app.keys.waiting == 2
            lessons.gate.set()
            await settle(pilot)
            assert isinstance(app.screen, HealthScreen)
            assert first.sort_column != "mean"  # `o` reached the Lessons screen first, as it would have later
    finally:
        lessons.gate.set()


async def test_down_goes_from_card_to_card_with_no_stop_between(tmp_path: Path) -> None:
    """The demo's Health at 80x24 lists three warnings. On the old code down from the last card focused the
    list around the cards (nothing in view changed: a key lost), and only the next down the first card."""
    from tests.tui.test_tui_whole_headers import demo_app

    app = demo_app(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        screen = await open_health(pilot)
        cards = list(screen.query(FindingCard))
        assert len(cards) == 3 and screen.focused is cards[0]
        visited = []
        for _ in range(len(cards)):
            await pilot.press("down")
            await settle(pilot)
            visited.append(screen.focused)
        assert visited == [*cards[1:], cards[0]]  # every down lands on a card, the last wrapping to the first
        await pilot.press("up")
        await settle(pilot)
        assert screen.focused is cards[-1]


async def test_enter_on_a_finding_that_names_lessons_opens_the_first_lessons_over_time(ws_root: Path) -> None:
    """The fixture's ghost-arms finding names tools/old-lesson.md (logged, its file deleted), no session: enter
    on it said "This finding names no session."; it opens that lesson's over-time screen (Lessons' `d`),
    and escape comes back to Health."""
    from lesson_credit.tui.screens.lesson_over_time import LessonOverTimeScreen

    app = LessonCreditApp(Workspace(ws_root, clock=lambda: LATER), poll_seconds=0)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_health(pilot)
        card = next(c for c in screen.query(FindingCard) if c.finding.code == "ghost-arms")
        assert card.finding.items == ("tools/old-lesson.md",)
        card.focus()
        await pilot.press("enter")
        await settle(pilot)
        over_time = app.screen
        assert isinstance(over_time, LessonOverTimeScreen) and over_time.lesson_id == "tools/old-lesson.md"
        await pilot.press("escape")
        await settle(pilot)
        assert app.screen is screen


async def test_enter_on_selections_never_recorded_says_there_is_nothing_to_open_until_recorded(
    ws_root: Path,
) -> None:
    """A selection logged for `lost` with no record, then s5 recorded: `selected-never-recorded` names `lost`, a
    session id the log has no session for. Enter said "This finding names no session." (it names one, with no
    record); it says why there is nothing to open and how to record it, and stays on Health."""
    from tests.support.textual_private import notification_texts
    from tests.tui.tui_fixture import LOG_REL, NEW_SESSION, record

    selection: dict[str, Any] = {"type": "selection", "session_id": "lost", "candidates": ["tools/git-worktree.md"]}
    selection |= {"selected": ["tools/git-worktree.md"], "propensity": {"tools/git-worktree.md": 1.0}}
    with (ws_root / LOG_REL).open("a", encoding="utf-8") as log:
        log.write(json.dumps(selection) + "\n")
    record(Workspace(ws_root, clock=lambda: LATER), ws_root, NEW_SESSION)
    app = LessonCreditApp(Workspace(ws_root, clock=lambda: LATER), poll_seconds=0)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_health(pilot)
        card = next(c for c in screen.query(FindingCard) if c.finding.code == "selected-never-recorded")
        assert card.finding.items == ("lost",)
        card.focus()
        await pilot.press("enter")
        await settle(pilot)
        assert app.screen is screen
        said = " ".join(message for _, message in notification_texts(app))
        assert "names no session" not in said
        assert "never recorded" in said and "lesson-credit record --session-id lost" in said


async def test_health_opens_at_the_top_of_its_list_its_heading_in_view(tmp_path: Path) -> None:
    """The demo's Health at 100x24: three warnings, the first card focused. On the old code the focus scrolled the
    list (to centre the first card, before the cards were laid out) two lines down: it opened on the first card's
    top border, "Warnings (3)" and the line above it cut off, nothing saying so."""
    from tests.support.textual_private import screen_lines
    from tests.tui.test_tui_whole_headers import demo_app

    app = demo_app(tmp_path)
    async with app.run_test(size=(100, 24)) as pilot:
        burst(pilot, "h")  # at start-up, as the Lessons screen loads
        await settle(pilot)
        await pilot.wait_for_scheduled_animations()  # (the old code's scroll glides)
        screen = app.screen
        assert isinstance(screen, HealthScreen)
        cards = list(screen.query(FindingCard))
        assert len(cards) == 3 and screen.focused is cards[0]
        assert screen.query_one("#findings").scroll_y == 0
        assert screen_lines(app)[2].text.strip() == "Warnings (3)"  # under the title bar and the list's blank line
        for _ in range(3):  # checked again: the cards built anew, the focus back on the first (the old code's
            burst(pilot, "ctrl+r")  # scroll depended on how far their layout had come: each time a fresh chance)
            await settle(pilot)
            await pilot.wait_for_scheduled_animations()
            assert screen.focused is screen.query(FindingCard).first()
            assert screen.query_one("#findings").scroll_y == 0


async def test_downs_typed_at_once_on_health_end_with_the_focused_card_in_view(tmp_path: Path) -> None:
    """`down down down` in one burst at 100x24 goes round the three cards to the first. On the old code the list
    glided to the third card (six lines down) while the last down focused the first, which it found in view and
    did not scroll to: the list stopped six lines down, the focused card above it, out of sight. Typed slowly
    the list ends at its top."""
    from tests.tui.test_tui_whole_headers import demo_app

    app = demo_app(tmp_path)
    async with app.run_test(size=(100, 24)) as pilot:
        await settle(pilot)
        burst(pilot, "h")
        await settle(pilot)
        await pilot.wait_for_scheduled_animations()
        screen = app.screen
        assert isinstance(screen, HealthScreen)
        cards = list(screen.query(FindingCard))
        findings = screen.query_one("#findings")
        burst(pilot, "down", "down")
        await settle(pilot)
        await pilot.wait_for_scheduled_animations()
        assert screen.focused is cards[2] and findings.scroll_y > 0  # the third card is below the first view
        burst(pilot, "up", "up")
        await settle(pilot)
        await pilot.wait_for_scheduled_animations()
        assert screen.focused is cards[0] and findings.scroll_y == 0
        burst(pilot, "down", "down", "down")
        await settle(pilot)
        await pilot.wait_for_scheduled_animations()
        assert screen.focused is cards[0] and findings.scroll_y == 0


def card_in_view(screen: HealthScreen, card: FindingCard) -> bool:
    """The card's top line is in the list's view (its heading, which says which finding enter opens)."""
    findings = screen.query_one("#findings")
    top = card.virtual_region.y
    return findings.scroll_y <= top < findings.scroll_y + findings.scrollable_content_region.height


@pytest.mark.parametrize(
    "keys, card",
    [
        (("down", "down", "home"), 0),  # the first card
        (("end",), 2),  # the last
        (("pagedown", "pagedown", "pagedown"), 2),  # a page at a time, to the last
        (("end", "pageup", "pageup", "pageup"), 0),
    ],
    ids=["home", "end", "pagedown", "pageup"],
)
async def test_health_page_keys_move_the_finding_enter_opens(tmp_path: Path, keys: tuple[str, ...], card: int) -> None:
    """The demo's Health at 80x24: three warnings taller than the screen. `home`, `end`, `pgup` and `pgdn`
    scrolled the list and left the focus where it was: `down down home` showed the first finding, its card
    unmarked, and `enter` opened the third's session, out of view. They move the focus (the finding enter opens)
    and the view goes with it: home the first, end the last, pgdn / pgup a page, ending on the last / first."""
    from tests.tui.test_tui_whole_headers import demo_app

    app = demo_app(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        burst(pilot, "h")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, HealthScreen)
        cards = list(screen.query(FindingCard))
        assert len(cards) == 3
        burst(pilot, *keys)
        await settle(pilot)
        await pilot.wait_for_scheduled_animations()
        assert screen.focused is cards[card], (screen.focused, keys)
        assert card_in_view(screen, cards[card])


async def test_ctrl_r_says_what_its_check_found_once_it_has_run(ws_root: Path) -> None:
    """ctrl+r re-reads the lesson files and checks again; with the same findings the screen came back as it was,
    nothing to tell the key from no key. Once checked it says so in a toast, in lint's words: a lesson file broken
    in the meantime is counted (`1 error, 2 warnings`, as `lesson-credit lint` says on the same workspace)."""
    from tests.support.textual_private import notification_texts

    app = LessonCreditApp(Workspace(ws_root, clock=lambda: LATER), poll_seconds=0)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_health(pilot)
        assert screen.title == "Health · 0 errors, 2 warnings"
        (ws_root / "lessons" / "tools" / "broken.md").write_text("---\nmatch: [unclosed\n---\n# Broken\n")
        said = lint_summary(ws_root).split(";")[0]
        assert said == "1 error, 2 warnings"
        burst(pilot, "ctrl+r", "down")  # a down typed with it: no second toast
        expected = ("", f"Checked again: {said}.")
        await wait_until(pilot, lambda: expected in notification_texts(app))
        await settle(pilot)
        assert screen.title == f"Health · {said}" and notification_texts(app).count(expected) == 1
