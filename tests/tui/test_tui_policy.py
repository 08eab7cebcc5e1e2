"""The selection policy in the dashboard: the Lessons title shows the one in force, What-if switches it
and ctrl+s saves it with the other settings."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from textual.pilot import Pilot
from textual.widgets import Input, Static

from lesson_credit.core.bandit.config import load_config
from lesson_credit.core.model.settings import CreditSettings
from lesson_credit.tui.app import LessonCreditApp
from lesson_credit.tui.screens.confirm import ConfirmScreen
from lesson_credit.tui.screens.lessons import LessonsScreen
from lesson_credit.tui.screens.what_if import WhatIfScreen
from lesson_credit.tui.what_if_view import WhatIfView
from tests.support.textual_private import notification_texts, screen_lines
from tests.tui.store_down import keep_toasts, toasts
from tests.tui.tui_fixture import CONFIG_REL, LOG_REL, settle, until_asked, wait_until

SIZE = (120, 40)


async def test_what_if_switches_and_saves_the_policy(app: LessonCreditApp, ws_root: Path) -> None:
    log_before = (ws_root / LOG_REL).read_bytes()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        # no [select] policy and no imported prior: joint selects
        assert isinstance(app.screen, LessonsScreen)
        assert app.screen.title == "Lessons · policy joint · 1 never used, listed last"
        await pilot.press("w")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, WhatIfScreen) and screen.policy == "joint"
        await pilot.press("T")  # joint -> seed (the cycle: seed, evidence, uniform, joint)
        await settle(pilot)
        assert screen.policy == "seed" and str(screen.query_one("#policy").value) == "seed"
        summary = str(screen.query_one("#what-if-summary").render())
        assert "policy joint → seed" in summary and "nothing is written until ctrl+s" in summary
        assert not (ws_root / CONFIG_REL).exists()  # nothing written before ctrl+s
        await pilot.press("ctrl+s")
        await until_asked(pilot)
        await pilot.press("escape")  # declined: still nothing
        await settle(pilot)
        assert not (ws_root / CONFIG_REL).exists()
        await pilot.press("ctrl+s")
        await until_asked(pilot)
        await pilot.press("y")
        await settle(pilot)
        config = load_config(ws_root / CONFIG_REL)
        assert config.policy == "seed" and config.credit.strategy == "seed"  # the strategy is left as it was
        assert screen.view is not None and screen.view.policy == "seed"
        await pilot.press("escape")
        await settle(pilot)
        assert isinstance(app.screen, LessonsScreen)
        assert app.screen.title == "Lessons · policy seed · 1 never used, listed last"
    assert (ws_root / LOG_REL).read_bytes() == log_before


async def test_a_strategy_saved_alone_leaves_the_policy_as_it_was(app: LessonCreditApp, ws_root: Path) -> None:
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("w")
        await settle(pilot)
        await pilot.press("t")  # evidence; the policy is not touched
        await settle(pilot)
        await pilot.press("ctrl+s")
        await until_asked(pilot)
        await pilot.press("y")
        await settle(pilot)
        config = load_config(ws_root / CONFIG_REL)
        assert config.credit.strategy == "evidence" and config.policy is None
        assert "[select]" not in (ws_root / CONFIG_REL).read_text()
        screen = app.screen
        assert isinstance(screen, WhatIfScreen) and screen.policy == "joint"  # the default, whatever the strategy
        await pilot.press("escape")
        await settle(pilot)
        assert app.screen.title == "Lessons · policy joint · 1 never used, listed last"


async def test_what_if_summary_is_shown_whole_at_80_columns(app: LessonCreditApp) -> None:
    """The summary says what ctrl+s would do; at 80 columns it wraps to more than two lines, and
    every line of it is on screen (it was clipped to two: 'nothing is written until ctrl+s' was cut)."""
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press("w", "t")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, WhatIfScreen)
        widget = screen.query_one("#what-if-summary", Static)
        assert "nothing is written until ctrl+s" in str(widget.render())
        needed = widget.get_content_height(screen.size, app.size, widget.content_size.width)  # wrapped lines
        assert needed > 2
        assert widget.content_size.height >= needed
        assert screen.query_one("#what-if-table").size.height >= 8  # the table keeps room for its rows


async def test_what_if_shows_what_it_changes_at_80_columns(app: LessonCreditApp) -> None:
    """At 80x24 the table showed rank, move, lesson, status, n and mean now: its own columns (the mean
    under the what-if, its change) were past the edge. The summary's counts are of rank moves, and say so."""
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press("w", "t")
        await settle(pilot)
        lines = [strip.text for strip in screen_lines(app)]
        at = next(i for i, line in enumerate(lines) if line.split()[:2] == ["rank", "rank"])  # a two-line header
        assert lines[at].split() == ["rank", "rank", "mean", "mean", "Δ"], lines[at]
        assert lines[at + 1].split() == ["what-if", "now", "move", "what-if", "now", "mean", "n", "status", "lesson"]
        screen = app.screen
        assert isinstance(screen, WhatIfScreen)
        assert " lessons up in rank, " in str(screen.query_one("#what-if-summary", Static).render())


async def test_ctrl_s_with_an_invalid_floor_typed_saves_nothing(app: LessonCreditApp, ws_root: Path) -> None:
    """Typing 1.5 re-folds at each valid prefix (1, then 1.) and stops at the invalid 1.5: the table shows
    floor 1 while the box says 1.5. ctrl+s then offered to save floor 1; it refuses until the box is fixed."""
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("w")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, WhatIfScreen)
        floor = screen.query_one("#floor", Input)
        floor.focus()
        floor.value = ""
        await pilot.press("1", "full_stop", "5")
        await settle(pilot)
        assert floor.value == "1.5" and not floor.is_valid
        await pilot.press("ctrl+s")
        await settle(pilot)
        assert app.screen is screen  # no "Save ... floor 1?" dialog
        assert any("1.5" in message and "nothing was written" in message for _, message in notification_texts(app))
        assert not (ws_root / CONFIG_REL).exists()
        await pilot.press("escape", "right_square_bracket")  # to the table; ] steps the floor 1 -> 1 (the top)
        await settle(pilot)
        assert floor.value == "1" and floor.is_valid  # the box says what the table shows again
        await pilot.press("ctrl+s")
        await settle(pilot)
        assert isinstance(app.screen, ConfirmScreen)


async def test_an_invalid_floor_is_said_in_view_at_80_columns(app: LessonCreditApp) -> None:
    """At 80x24 the line beside the controls has about three columns: the refusal reads "the"; the box's
    own border says it."""
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press("w")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, WhatIfScreen)
        floor = screen.query_one("#floor", Input)
        floor.focus()
        floor.value = ""
        await pilot.press("1", "full_stop", "5")
        await settle(pilot)
        shown = "\n".join(strip.text for strip in screen_lines(app))
        assert "0 to 1" in shown, shown
        floor.value = "0.5"
        await settle(pilot)
        assert "0 to 1" not in "\n".join(strip.text for strip in screen_lines(app))


class HeldSaves:
    """The app's settings saves, the first held before it begins (as a busy machine's thread may hold
    it) until `released` is set; `written`: the strategies saved, in the order written."""

    def __init__(self, app: LessonCreditApp) -> None:
        import threading

        self.written: list[str] = []
        self.released = threading.Event()
        self._first = threading.Event()
        self._save_settings = app.source.save_settings
        app.source.save_settings = self._save  # type: ignore[method-assign]

    def _save(
        self, settings: CreditSettings, policy: str | None = None, priority: tuple[str, ...] | None = None
    ) -> tuple[str, ...]:
        if not self._first.is_set():
            self._first.set()
            self.released.wait(timeout=60)  # (a bound: a test that never releases fails, not hangs)
        warnings = self._save_settings(settings, policy, priority)
        self.written.append(settings.strategy)
        return warnings


async def _until(pilot: Pilot[None], condition: Callable[[], bool]) -> None:
    """Wait for `condition` (a generous bound, never a speed assertion; past it the test fails here, not at
    an assertion after it that reads what has not happened yet)."""
    await wait_until(pilot, condition)


async def _save_confirmed(pilot: Pilot[None]) -> None:
    """ctrl+s, then y to its question."""
    await pilot.press("ctrl+s")
    await until_asked(pilot)
    await pilot.press("y")
    await pilot.pause()


async def _what_if_at_uniform(pilot: Pilot[None]) -> None:
    """From the first screen: What-if, its strategy moved to uniform (seed -> evidence -> uniform)."""
    await settle(pilot)
    await pilot.press("w")
    await settle(pilot)
    await pilot.press("t", "t")
    await settle(pilot)


async def _second_save(
    pilot: Pilot[None], app: LessonCreditApp, saves: HeldSaves, keys: tuple[str, ...], strategy: str
) -> None:
    """While the first save is held: `keys` move What-if to `strategy` (folded meanwhile), and ctrl+s y
    confirms a second save; then the first is released, and until both saves are written."""
    await pilot.press(*keys)
    screen = app.screen
    assert isinstance(screen, WhatIfScreen)
    await _until(pilot, lambda: screen.settings is not None and screen.settings.strategy == strategy)
    assert not saves.written  # the first save is held
    await pilot.press("ctrl+s")
    await until_asked(pilot)
    assert isinstance(app.screen, ConfirmScreen)
    await pilot.press("y")
    await pilot.pause(0.2)  # (the old code's second worker wrote now, before the first)
    saves.released.set()
    await _until(pilot, lambda: len(saves.written) == 2)
    await settle(pilot)


async def test_two_saves_confirmed_in_a_row_are_written_in_that_order(app: LessonCreditApp, ws_root: Path) -> None:
    """ctrl+s y, another strategy, ctrl+s y, the second confirmed while the first save waits to begin
    (held here until then, as a busy machine's thread may hold it): the file ends with the second. Each
    save ran in its own worker thread, and the second was written first, then replaced by the first."""
    saves = HeldSaves(app)
    async with app.run_test(size=SIZE) as pilot:
        await _what_if_at_uniform(pilot)
        await _save_confirmed(pilot)
        await _second_save(pilot, app, saves, ("t", "t"), "evidence")  # uniform -> seed -> evidence
    assert saves.written == ["uniform", "evidence"]
    assert load_config(ws_root / CONFIG_REL).credit.strategy == "evidence"


async def test_a_save_confirmed_as_the_screen_closes_is_written(app: LessonCreditApp, ws_root: Path) -> None:
    """`y escape` in one burst once the save's question shows: the save confirmed is written though What-if
    closes at once, and its toast shows on the screen beneath (the queued save must not depend on the screen
    staying)."""
    async with app.run_test(size=SIZE) as pilot:
        await _what_if_at_uniform(pilot)
        await pilot.press("ctrl+s")
        await settle(pilot)  # the question shows: only keys typed then answer it
        await pilot.press("y", "escape")
        await settle(pilot)
        assert isinstance(app.screen, LessonsScreen)
        assert load_config(ws_root / CONFIG_REL).credit.strategy == "uniform"
        assert any("Saved strategy uniform" in text for _, text in notification_texts(app))


async def test_the_saved_settings_saved_again_while_a_save_is_pending_are_written(
    app: LessonCreditApp, ws_root: Path
) -> None:
    """ctrl+s y for uniform, then back to seed (the settings saved when What-if opened) and ctrl+s while
    the uniform save has not been written: it said "These are already the saved settings." and wrote
    nothing, and the file then held uniform. The second save is asked for and written after the first."""
    saves = HeldSaves(app)
    async with app.run_test(size=SIZE) as pilot:
        await _what_if_at_uniform(pilot)
        await _save_confirmed(pilot)
        await _second_save(pilot, app, saves, ("t",), "seed")  # uniform -> seed, saved as the screen opened
    assert saves.written == ["uniform", "seed"]
    assert load_config(ws_root / CONFIG_REL).credit.strategy == "seed"


async def test_a_settings_save_whose_state_file_is_not_written_says_so(app: LessonCreditApp, ws_root: Path) -> None:
    """The save's toast said "bandit-state.json rewritten." whatever became of that file; a folder in
    its place (it cannot be replaced) is now said in a warning of its own, and the toast does not claim it."""
    state = ws_root / "state" / "lesson-thompson" / "bandit-state.json"
    state.unlink(missing_ok=True)
    (state / "held").mkdir(parents=True)
    async with app.run_test(size=SIZE) as pilot:
        await _what_if_at_uniform(pilot)
        await _save_confirmed(pilot)
        await _until(pilot, lambda: any("to config.toml" in text for _, text in notification_texts(app)))
        shown = notification_texts(app)
    assert load_config(ws_root / CONFIG_REL).credit.strategy == "uniform"
    assert ("", "Saved strategy uniform, floor 0.3 to config.toml.") in shown, shown
    assert any(title == "Saved, with a warning" and "bandit-state.json" in text for title, text in shown), shown


class FailingSaves:
    """The app's settings saves raise while `down` is set (a full disk), from the start; `failed`
    counts the attempts that raised, `written` the strategies saved. The app retries after 0.01 s."""

    def __init__(self, app: LessonCreditApp) -> None:
        import threading

        app.retry_seconds = 0.01
        self.down = threading.Event()
        self.down.set()
        self.failed = 0
        self.written: list[str] = []
        real = app.source.save_settings

        def save(
            settings: CreditSettings, policy: str | None = None, priority: tuple[str, ...] | None = None
        ) -> tuple[str, ...]:
            if self.down.is_set():
                self.failed += 1
                raise OSError(28, "No space left on device")
            warnings = real(settings, policy, priority)
            self.written.append(settings.strategy)
            return warnings

        app.source.save_settings = save  # type: ignore[method-assign]

    async def first_waiting(self, pilot: Pilot[None], app: LessonCreditApp) -> None:
        """From the first screen: What-if moved to uniform, saved and confirmed, until that save has
        failed twice and the title bar says it waits."""
        await _what_if_at_uniform(pilot)
        await _save_confirmed(pilot)
        await _until(pilot, lambda: self.failed >= 2 and "save 1 write" in app.saving)


async def test_a_settings_save_that_fails_waits_and_is_written_by_a_retry(
    app: LessonCreditApp, ws_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A confirmed save that failed was reported ("Could not finish") and dropped: the operator had to
    notice and save again, and a save confirmed after it was written alone. It now waits in the write
    queue like a grade: the title bar says so, later saves wait behind it, and both are written in order;
    once written, the warning that it waited goes."""
    keep_toasts(monkeypatch)
    saves = FailingSaves(app)
    async with app.run_test(size=SIZE) as pilot:
        await saves.first_waiting(pilot, app)
        await pilot.press("t", "t")  # uniform -> seed -> evidence
        screen = app.screen
        assert isinstance(screen, WhatIfScreen)
        await _until(pilot, lambda: screen.settings is not None and screen.settings.strategy == "evidence")
        await _save_confirmed(pilot)
        await _until(pilot, lambda: "save 2 write" in app.saving)
        assert saves.written == [] and not (ws_root / CONFIG_REL).exists()
        said = toasts(app)  # ("title: message", each raised)
        assert not [t for t in said if t.startswith("Could not finish")], said
        assert [t for t in said if t.startswith("Waiting to save: config.toml: ") and "No space left" in t], said
        saves.down.clear()
        await _until(pilot, lambda: len(saves.written) == 2)
        await settle(pilot)
        assert app.saving == "" and app.writes.pending == 0
        titles = [title for title, _ in notification_texts(app)]  # saved: its warning went
        assert "Could not finish" not in titles and "Waiting to save: config.toml" not in titles, titles
    assert saves.written == ["uniform", "evidence"]
    assert load_config(ws_root / CONFIG_REL).credit.strategy == "evidence"


async def test_quitting_while_a_settings_save_waits_asks_before_discarding_it(
    app: LessonCreditApp, ws_root: Path
) -> None:
    """q while a failed save waits: the app asks, as for a grade; y discards it (nothing is written)."""
    saves = FailingSaves(app)
    async with app.run_test(size=SIZE) as pilot:
        await saves.first_waiting(pilot, app)
        await pilot.press("escape", "q")
        await until_asked(pilot)
        assert app.screen.question == "Discard 1 write not saved yet and quit?"  # type: ignore[attr-defined]
        await pilot.press("y")
        await _until(pilot, lambda: not app.is_running)
    assert saves.written == [] and not (ws_root / CONFIG_REL).exists()


async def test_a_save_confirmed_just_before_quitting_is_written_first(app: LessonCreditApp, ws_root: Path) -> None:
    """`y escape q` in one burst once the save's question shows, while the save is slow to begin (held
    0.3 s): the app closed at once and the save was written after it, if at all (its thread outlived the
    app). q now waits for it."""
    import threading

    saves = HeldSaves(app)
    async with app.run_test(size=SIZE) as pilot:
        await _what_if_at_uniform(pilot)
        threading.Timer(0.3, saves.released.set).start()
        await pilot.press("ctrl+s")
        await settle(pilot)  # the question shows: only keys typed then answer it
        await pilot.press("y", "escape", "q")
        await _until(pilot, lambda: not app.is_running)
        assert saves.written == ["uniform"]  # as the app closes
    assert load_config(ws_root / CONFIG_REL).credit.strategy == "uniform"


async def test_a_reward_priority_saved_before_its_fold_lands_is_the_one_saved(
    app: LessonCreditApp, ws_root: Path
) -> None:
    """`b ctrl+s y` in one burst while the fold of the new priority is still running (held here, as a
    busy machine holds it): the priority `b` chose (the judge first, PRIORITIES' second) is asked for and
    saved. The save took the priority of the last fold shown: here the saved one, so ctrl+s said "These are
    already the saved settings." and nothing was written (after a second b it saved the first b's)."""
    import threading

    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("w")
        await settle(pilot)
        released = threading.Event()
        fold = app.source.what_if

        def held(settings: CreditSettings, priority: tuple[str, ...] | None = None) -> WhatIfView:
            released.wait(timeout=60)  # (a bound: a test that never releases fails, not hangs)
            return fold(settings, priority)

        app.source.what_if = held  # type: ignore[method-assign]
        await pilot.press("b", "ctrl+s")
        await until_asked(pilot)  # (not settle: the fold it would wait for is held)
        assert isinstance(app.screen, ConfirmScreen), notification_texts(app)
        assert "rewards by judge>human>heuristic>outcome" in app.screen.question
        await pilot.press("y")
        released.set()
        await settle(pilot)
    assert load_config(ws_root / CONFIG_REL).reward_priority == ("judge", "human", "heuristic", "outcome")
