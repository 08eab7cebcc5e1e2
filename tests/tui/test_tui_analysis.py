"""Pilot tests of the Analysis, Lesson rewards, Simulation and Health screens."""

from __future__ import annotations

import datetime as dt
import json
import threading
from pathlib import Path
from typing import Any

import pytest
from rich.text import Text
from textual.coordinate import Coordinate
from textual.pilot import Pilot
from textual.widgets import Input, ProgressBar, Select, Static

from lesson_credit.core.analysis.effects import loo_payload
from lesson_credit.core.analysis.estimates import AGAINST_AVERAGE, AGAINST_AVERAGE_MARK, AGAINST_AVERAGE_SOME
from lesson_credit.core.sim.simulate import ESTIMATORS
from lesson_credit.core.workspace import Workspace
from lesson_credit.tui.app import LessonCreditApp
from lesson_credit.tui.screens.analysis import AnalysisScreen
from lesson_credit.tui.screens.health import FindingCard
from lesson_credit.tui.screens.lesson_rewards import LessonRewardsScreen
from lesson_credit.tui.screens.lessons import LessonsScreen
from lesson_credit.tui.screens.simulation import BEST_MARK, SimulationScreen
from lesson_credit.tui.widgets.reward_histogram import RewardHistogramPlot
from lesson_credit.tui.widgets.themed_table import ThemedTable
from tests.support.cli_run import run_cli
from tests.support.engine_helpers import fixed_clock
from tests.support.headline_logs import (
    NOTHING,
    X,
    documented_order,
    draw_workspace,
    fixed_k_workspace,
    noise_workspace,
    shown,
    two_by_two_workspace,
)
from tests.support.textual_private import notification_texts, screen_lines
from tests.tui.tui_fixture import (
    FIXED_NOW,
    analysis_session,
    lessons_with_effects,
    open_health,
    settle,
    table_keys,
    wait_until,
)

SIZE = (120, 40)
LOO_FILE = Path("state") / "lesson-thompson" / "loo-results.json"


def styles(cell: Text) -> set[str]:
    return {str(cell.style)} | {str(span.style) for span in cell.spans}


# ---------------------------------------------------------------------------- Analysis


@pytest.mark.smoke
async def test_analysis_table_sorts_dims_and_opens_distributions(
    analysis_workspace: Workspace, analysis_root: Path
) -> None:
    app = LessonCreditApp(analysis_workspace, poll_seconds=0)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("s", "a")  # from anywhere
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, AnalysisScreen) and screen.view is not None
        table = screen.query_one("#loo-table", ThemedTable)
        # by effect (the joint estimate), best first; rebase (3 sessions: unidentified, no LOO lift) dimmed, last
        assert table_keys(table) == [
            "tools/retry-budget.md",
            "workflow/commit-often.md",
            "docs/readme-first.md",
            "tools/retired.md",
            "tools/force-push.md",
            "workflow/rebase.md",
        ]
        muted = str(table.tone("muted"))
        assert muted in styles(table.get_row("workflow/rebase.md")[0])
        assert muted not in styles(table.get_row("workflow/commit-often.md")[0])
        rebase = [str(c).strip() for c in table.get_row("workflow/rebase.md")]
        assert rebase[1].startswith("(") and rebase[2] == "—" and rebase[3] == "—"  # an estimate, no claim
        cells = [str(c).strip() for c in table.get_row("workflow/commit-often.md")]
        assert cells[4:6] == ["24", "16"] and cells[6] == "—"  # no naive lift without enough data
        assert "insufficient data" in cells[9] and "keyword 'commit' matches 100%" in cells[9]
        retry = screen.view.result("tools/retry-budget.md")
        assert retry is not None and retry.effect is not None and retry.delta is not None
        row = [str(c).strip() for c in table.get_row("tools/retry-budget.md")]
        assert row[1] == f"{retry.effect.estimate:+.3f}" and row[6] == f"{retry.delta:+.3f}"
        # the fixture's true effects: retry-budget +0.2, force-push -0.25 (the naive lifts say +0.30, -0.30)
        assert retry.effect.ci_low is not None and retry.effect.ci_high is not None
        assert retry.effect.ci_low < 0.2 < retry.effect.ci_high
        # the panel gives the highlighted lesson's reasons in full
        table.move_cursor(row=table_keys(table).index("workflow/commit-often.md"))
        await pilot.pause()
        panel = str(screen.query_one("#loo-detail", Static).render())
        assert "keyword 'commit' matches 100% of journals: too broad" in panel
        assert "needs 5 sessions with and 20 without; has 24 and 16" in panel
        assert "effect (joint)" in panel
        # sort: reverse, next column, a header click
        await pilot.press("r")
        assert table_keys(table)[:3] == ["tools/force-push.md", "tools/retired.md", "docs/readme-first.md"]
        await pilot.press("o")
        assert (screen.sort_column, screen.sort_reverse) == ("ci", True)
        x = sum(col.get_render_width(table) for key, col in table.columns.items() if key.value in SORT_BEFORE_P)
        await pilot.click("#loo-table", offset=(x + 2, 0))
        await settle(pilot)
        assert (screen.sort_column, screen.sort_reverse) == ("p_bh", False)  # smallest p first
        assert set(table_keys(table)[:2]) == {"tools/retry-budget.md", "tools/force-push.md"}
        assert not (analysis_root / LOO_FILE).exists()  # computing for display writes nothing
        # enter: the lesson's reward distributions, with and without it
        table.move_cursor(row=table_keys(table).index("tools/retry-budget.md"))
        await pilot.press("enter")
        await settle(pilot)
        rewards = app.screen
        assert isinstance(rewards, LessonRewardsScreen) and rewards.rewards is not None
        assert rewards.lesson_id == "tools/retry-budget.md"
        with_plot = rewards.query_one("#with-plot", RewardHistogramPlot).histogram
        without_plot = rewards.query_one("#without-plot", RewardHistogramPlot).histogram
        assert with_plot is not None and without_plot is not None
        assert (with_plot.n, without_plot.n) == (8, 32) and sum(with_plot.counts) == 8
        expected = [analysis_session(i)[3] for i in range(40) if i % 5 == 0]
        assert with_plot.mean == pytest.approx(sum(expected) / len(expected))
        assert with_plot.mean == pytest.approx(retry.mean_with)
        assert without_plot.mean == pytest.approx(retry.mean_without)
        assert "mean reward with" in str(rewards.query_one("#rewards-info", Static).render())
        await pilot.press("escape")
        await settle(pilot)
        assert app.screen is screen
        assert not (analysis_root / LOO_FILE).exists()
        # the write key, and only it, writes loo-results.json
        await pilot.press("ctrl+s")
        await settle(pilot)
        written = json.loads((analysis_root / LOO_FILE).read_text())
        assert len(written["results"]) == 6 and written["meta"]["min_with"] == 5
        assert any("loo-results.json" in message for _, message in notification_texts(app))
        # a new session in the log: the table follows
        context, text, lessons, reward, category = analysis_session(0)
        journal = analysis_root / "state" / "journals" / "new.md"
        journal.write_text(text)
        Workspace(analysis_root).record("new", journal, lessons, reward=reward, category=category)
        app._check_source()  # the poll (off in this test)
        await settle(pilot)
        assert isinstance(screen, AnalysisScreen) and screen.view is not None
        updated = screen.view.result("tools/retry-budget.md")
        assert updated is not None and updated.n_with == 9


SORT_BEFORE_P = ("lesson", "effect", "ci")


# ---------------------------------------------------------------------------- Simulation


async def test_simulation_runs_shows_every_estimator_and_cancels(app: LessonCreditApp, ws_root: Path) -> None:
    log_before = (ws_root / "state" / "lesson-thompson" / "sessions.jsonl").read_bytes()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("m")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, SimulationScreen) and screen.report is None
        assert not screen.check_action("cancel", ())  # nothing to cancel: hidden from the footer
        screen.query_one("#scenario", Select).value = "few-sessions"
        seeds = screen.query_one("#seeds", Input)
        seeds.value = "0"
        await pilot.press("ctrl+r")  # refused: no seeds
        await settle(pilot)
        assert screen.report is None and screen.running is None
        seeds.value = "2"
        await pilot.press("ctrl+r")
        await settle(pilot)
        await wait_until(pilot, lambda: screen.report is not None)
        report = screen.report
        assert report is not None and report.scenario.name == "few-sessions" and report.seeds == (0, 1)
        table = screen.query_one("#sim-table", ThemedTable)
        assert table_keys(table) == list(ESTIMATORS)
        bar = screen.query_one("#sim-progress", ProgressBar)
        assert (bar.progress, bar.total) == (2, 2)
        # the best estimator of each metric is marked, among every estimator but the references (the joint
        # policy's row too: the legend said "among the credit strategies and LOO lifts", which it is neither)
        assert "★ best per metric among the estimators" in painted(app)
        for column in range(1, 5):
            marked = [
                table_keys(table)[r]
                for r in range(table.row_count)
                if BEST_MARK in str(table.get_cell_at(Coordinate(r, column)))
            ]
            assert marked and not set(marked) & {"random", "oracle"}
        cell = str(table.get_row("seed")[1])
        spearman = report.estimator("seed").spearman
        assert spearman is not None and f"{spearman.mean:.3f} ±{spearman.std:.3f}" in cell
        assert str(table.get_row("random")[1]).strip() == "—"  # a reference has no ranking
        # a long run: the table shows the seeds done so far as they come; cancelled, it keeps those (it said
        # "no report" and kept the last run's, throwing the cancelled run's seeds away)
        seeds.value = "40"
        await pilot.press("ctrl+r")
        await wait_until(pilot, lambda: bar.progress >= 1)
        await wait_until(pilot, lambda: screen.report is not report)
        assert screen.report is not None and screen.report.seeds[0] == 0 and len(screen.report.seeds) < 40
        assert screen.check_action("cancel", ())
        await pilot.press("escape")
        await wait_until(pilot, lambda: screen.running is None)
        status = str(screen.query_one("#sim-status", Static).render())
        done = screen.report.seeds
        assert status == f"cancelled after {len(done)} of 40 seeds"  # (the title names the seeds the table has)
        assert done == tuple(range(len(done))) and bar.progress == len(done) < 40
        assert str(screen.query_one("#report-title", Static).render()).startswith("scenario few-sessions · seed")
        assert table_keys(table) == list(ESTIMATORS)
    assert (ws_root / "state" / "lesson-thompson" / "sessions.jsonl").read_bytes() == log_before


async def test_simulation_hint_names_the_key_that_runs(app: LessonCreditApp) -> None:
    """Before the first run the table's title says which key to press; pressing that key runs."""
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("m")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, SimulationScreen) and screen.report is None
        hint = str(screen.query_one("#report-title", Static).render())
        assert "then press " in hint
        key = hint.split("then press ", 1)[1].rstrip(".")
        screen.query_one("#scenario", Select).value = "few-sessions"
        screen.query_one("#seeds", Input).value = "1"
        await pilot.press(key)
        await settle(pilot)
        await wait_until(pilot, lambda: screen.report is not None)


async def simulation_held(
    pilot: Pilot[None], monkeypatch: pytest.MonkeyPatch
) -> tuple[SimulationScreen, Static, threading.Event]:
    """Simulation open on few-sessions x 40 seeds, its runs held back until the returned event is set: the
    screen, its table's title and the event."""
    await settle(pilot)
    await pilot.press("m")
    await settle(pilot)
    screen = pilot.app.screen
    assert isinstance(screen, SimulationScreen)
    screen.query_one("#scenario", Select).value = "few-sessions"
    screen.query_one("#seeds", Input).value = "40"
    gate = threading.Event()
    simulate = screen.source.simulate

    def held(*args: Any, **kwargs: Any) -> Any:
        gate.wait(60)
        return simulate(*args, **kwargs)

    monkeypatch.setattr(screen.source, "simulate", held)
    return screen, screen.query_one("#report-title", Static), gate


async def test_simulation_title_says_a_first_run_is_going(
    app: LessonCreditApp, monkeypatch: pytest.MonkeyPatch
) -> None:
    """During the first run the table's title said 'No run yet: ... then press ctrl+r' under a moving bar.
    Until its first seed is done it says the run is going (the run held back here, not raced); then the
    table is the seeds done so far, and a cancel keeps them."""
    async with app.run_test(size=SIZE) as pilot:
        screen, title, gate = await simulation_held(pilot, monkeypatch)
        try:
            await held_run(pilot, screen, title, gate)
        finally:
            gate.set()  # (a failed check must not leave the run waiting)


async def held_run(pilot: Pilot[None], screen: SimulationScreen, title: Static, gate: threading.Event) -> None:
    """The first run, held back until `gate` is set: its title says it is going, then shows the seeds done."""
    await pilot.press("ctrl+r")  # (not `settle`: it waits for the run's worker, held here)
    await wait_until(pilot, lambda: screen.running is not None)
    await wait_until(pilot, lambda: str(title.render()).startswith("No results yet"))
    assert screen.report is None
    assert str(title.render()) == "No results yet: the first run is going (escape cancels it)."
    gate.set()
    bar = screen.query_one("#sim-progress", ProgressBar)
    await wait_until(pilot, lambda: bar.progress >= 1 and screen.report is not None)
    assert str(title.render()).startswith("scenario few-sessions · seed")
    await pilot.press("escape")
    await wait_until(pilot, lambda: screen.running is None)
    assert screen.report is not None and 0 < len(screen.report.seeds) < 40
    assert str(title.render()).startswith("scenario few-sessions · seed")  # the seeds it ran, kept


async def test_simulation_title_says_a_first_run_cancelled_stops_after_its_seed(
    app: LessonCreditApp, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Escape before the first seed is done: the status said 'cancelling: stops after the seed being simulated'
    while the table's title still said the run was going and escape would cancel it. The title says it stops."""
    async with app.run_test(size=SIZE) as pilot:
        screen, title, gate = await simulation_held(pilot, monkeypatch)
        try:
            await pilot.press("ctrl+r")
            await wait_until(pilot, lambda: str(title.render()).startswith("No results yet"))
            await pilot.press("escape")
            await wait_until(pilot, lambda: screen.cancelling)
            await pilot.pause()
            assert str(title.render()) == "No results yet: the first run stops after the seed being simulated."
        finally:
            gate.set()
        await wait_until(pilot, lambda: screen.running is None)
        assert screen.report is not None and len(screen.report.seeds) == 1  # the seed it was simulating, kept


# ---------------------------------------------------------------------------- Health


async def test_health_lists_findings_problems_first_and_rechecks(ws_root: Path) -> None:
    later = FIXED_NOW + dt.timedelta(days=10)  # s4 has been pending for 11 days
    app = LessonCreditApp(Workspace(ws_root, clock=lambda: later), poll_seconds=0)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_health(pilot)
        assert screen.view is not None
        cards = list(screen.query(FindingCard))
        assert [(c.finding.code, c.finding.severity) for c in cards] == [  # pending sessions warn
            ("ghost-arms", "warning"),
            ("sessions-never-graded", "warning"),
        ]
        assert not cards[0].has_class("-error") and not cards[1].has_class("-error")
        assert cards[1].finding.items == ("s4",) and "tools/old-lesson.md" in cards[0].finding.items
        assert screen.title == "Health · 0 errors, 2 warnings"
        assert "→ Grade them" in str(cards[1].render())
        # a lesson file breaks: ctrl+r re-reads the lessons, and the Lessons screen shows the broken file too
        (ws_root / "lessons" / "tools" / "broken.md").write_text("---\nmatch: [unclosed\n---\n# Broken\n")
        await pilot.press("ctrl+r")
        await settle(pilot)
        codes = [c.finding.code for c in screen.query(FindingCard)]
        assert codes[:2] == ["broken-lessons", "ghost-arms"] and screen.title.startswith("Health · 1 error, ")
        broken = next(c for c in screen.query(FindingCard) if c.finding.code == "broken-lessons")
        assert broken.finding.items == ("lessons/tools/broken.md",)  # relative to the workspace
        await pilot.press("l")
        await settle(pilot)
        lessons = app.screen
        assert isinstance(lessons, LessonsScreen) and lessons.view is not None
        row = lessons.view.row("tools/broken.md")
        assert row is not None and row.status == "broken"


# ---------------------------------------------------------------------------- Lessons: the effect column


async def test_health_down_and_up_move_between_findings(ws_root: Path) -> None:
    """The help lists down / up as next / previous finding: they move the focus from card to card (the
    scrolling list around the cards took them first and scrolled one line, the focus staying put)."""
    later = FIXED_NOW + dt.timedelta(days=10)  # two findings: ghost-arms, sessions-never-graded
    app = LessonCreditApp(Workspace(ws_root, clock=lambda: later), poll_seconds=0)
    async with app.run_test(size=(80, 14)) as pilot:  # the cards do not fit: the list scrolls
        screen = await open_health(pilot)
        cards = list(screen.query(FindingCard))
        assert len(cards) == 2 and screen.focused is cards[0]
        findings = screen.query_one("#findings")
        await wait_until(pilot, lambda: findings.max_scroll_y > 0)  # laid out after the cards mount
        await pilot.press("down")
        assert screen.focused is cards[1]
        await pilot.press("up")
        assert screen.focused is cards[0]


async def test_lessons_effect_column_sorts_the_helpful_lesson_first(analysis_workspace: Workspace) -> None:
    app = LessonCreditApp(analysis_workspace, poll_seconds=0)
    async with app.run_test(size=SIZE) as pilot:
        screen = await lessons_with_effects(pilot)
        assert screen.view is not None and screen.view.effects is not None
        table = screen.query_one("#lessons-table", ThemedTable)
        effects = analysis_workspace.effects()
        assert screen.view.effects == effects
        # the fixture's truth: retry-budget +0.2, force-push -0.25, the rest nothing
        assert effects["tools/retry-budget.md"] == pytest.approx(0.2, abs=0.05)
        assert effects["tools/force-push.md"] == pytest.approx(-0.25, abs=0.05)
        column = [str(key.value) for key in table.columns].index("effect")
        cell = str(table.get_row("tools/retry-budget.md")[column]).strip()
        assert cell == f"{effects['tools/retry-budget.md']:+.3f}"
        while screen.sort_column != "effect":
            await pilot.press("o")
        assert screen.sort_reverse  # largest first
        keys = table_keys(table)
        assert keys[0] == "tools/retry-budget.md" and keys[len(effects) - 1] == "tools/force-push.md"


# ---------------------------------------------------------------------------- one headline


async def analysis_screen(pilot: Pilot[None], app: LessonCreditApp) -> AnalysisScreen:
    await settle(pilot)
    await pilot.press("s", "a")
    await settle(pilot)
    screen = app.screen
    assert isinstance(screen, AnalysisScreen) and screen.view is not None
    return screen


async def test_analysis_shows_the_loo_headline(tmp_path: Path) -> None:
    # the same numbers, order and method as `loo --json` (tests/cli/test_loo_headline.py checks the table)
    root = two_by_two_workspace(tmp_path)
    payload = loo_payload(Workspace(root, clock=fixed_clock).loo(write=False), "now", 5, 20)
    app = LessonCreditApp(Workspace(root, clock=fixed_clock), poll_seconds=0)
    async with app.run_test(size=SIZE) as pilot:
        screen = await analysis_screen(pilot, app)
        table = screen.query_one("#loo-table", ThemedTable)
        assert table_keys(table) == documented_order(payload["results"])
        for result in payload["results"]:
            cell = str(table.get_row(result["lesson"])[1]).strip()
            assert cell.rstrip("ʳˡ") == shown(result["effect"])
        assert screen.view is not None
        x = screen.view.result(X)
        assert x is not None and x.effect is not None and x.effect.method == "joint"
        assert NOTHING not in painted(app)  # retry-budget's effect is: `loo` prints no such line either
        _, out, _ = run_cli("loo", "--workspace", str(root), "--no-write", clock=fixed_clock)
        assert NOTHING not in out


def painted(app: LessonCreditApp) -> str:
    """The screen as drawn, its rows joined, runs of spaces made one (a line wrapped reads whole)."""
    return " ".join(" ".join(strip.text.split()) for strip in screen_lines(app))


@pytest.mark.parametrize("size", [(80, 24), (160, 45)], ids=["80x24", "160x45"])
async def test_analysis_says_when_nothing_is_distinguishable(tmp_path: Path, size: tuple[int, int]) -> None:
    """`loo` prints a line above its table when no lesson's effect is distinguishable from zero. Analysis
    had it as the third line of a summary two rows high: never on screen. It shows whole, in loo's words."""
    root = noise_workspace(tmp_path)
    code, out, _ = run_cli("loo", "--workspace", str(root), "--no-write", clock=fixed_clock)
    caveat = [line for line in out.splitlines() if line.startswith(NOTHING)]
    assert code == 0 and len(caveat) == 1
    app = LessonCreditApp(Workspace(root, clock=fixed_clock), poll_seconds=0)
    async with app.run_test(size=size) as pilot:
        await analysis_screen(pilot, app)
        assert painted(app).count(caveat[0]) == 1


@pytest.mark.parametrize("size", [(80, 24), (160, 45)], ids=["80x24", "160x45"])
async def test_analysis_says_when_effects_are_against_the_average_lesson(tmp_path: Path, size: tuple[int, int]) -> None:
    """Every session injects 2 of 6 lessons: `loo` says each effect is against the average lesson's, and so does
    the screen, whole, beside the nothing-distinguishable line; a log of 1-4 lessons a session says neither."""
    for fixed in (True, False):
        root = fixed_k_workspace(tmp_path, fixed)
        app = LessonCreditApp(Workspace(root, clock=fixed_clock), poll_seconds=0)
        async with app.run_test(size=size) as pilot:
            await analysis_screen(pilot, app)
            assert painted(app).count(AGAINST_AVERAGE) == (1 if fixed else 0)


async def test_analysis_marks_the_rows_against_the_average_beside_a_randomized_headline(tmp_path: Path) -> None:
    """x.md's randomized headline is its own effect, listed among the drawn lessons' differences: the caveat says
    which rows it speaks of (loo's words, whole), and those rows' flags start with the mark; x.md's do not."""
    root = draw_workspace(tmp_path)
    app = LessonCreditApp(Workspace(root, clock=fixed_clock), poll_seconds=0)
    async with app.run_test(size=(160, 45)) as pilot:
        screen = await analysis_screen(pilot, app)
        assert painted(app).count(" ".join(AGAINST_AVERAGE_SOME.split())) == 1
        table = screen.query_one("#loo-table", ThemedTable)
        for lesson in ("auto/x.md", *(f"tools/l{j}.md" for j in range(6))):
            flags = str(table.get_row(lesson)[-1]).strip()
            assert flags.startswith(AGAINST_AVERAGE_MARK) is (lesson != "auto/x.md"), (lesson, flags)


async def test_lessons_ranking_and_analysis_effect_are_named_for_what_they_are(
    analysis_workspace: Workspace, analysis_root: Path
) -> None:
    """Lessons showed the shrunk joint estimate (`loo --json`'s `ranking`) and Analysis the headline (its
    `effect`, the number `loo` prints), both headed "effect", though their signs can differ (three lessons
    of the demo). The Lessons column is `ranking`; Analysis keeps `effect`, as `loo` names it. The numbers
    come from `loo --json`."""
    _, out, _ = run_cli("loo", "--workspace", str(analysis_root), "--no-write", "--json", clock=fixed_clock)
    retry = next(r for r in json.loads(out)["results"] if r["lesson"] == "tools/retry-budget.md")
    ranking, effect = f"{retry['joint']['ranking']:+.3f}", f"{retry['effect']['estimate']:+.3f}"
    assert ranking != effect  # +0.208 and +0.218: the test tells the two apart
    app = LessonCreditApp(analysis_workspace, poll_seconds=0)
    async with app.run_test(size=SIZE) as pilot:
        screen = await lessons_with_effects(pilot)
        table = screen.query_one("#lessons-table", ThemedTable)
        headers = [str(column.label).strip() for column in table.columns.values()]
        assert "ranking" in headers and "effect" not in headers
        assert str(table.get_row("tools/retry-budget.md")[headers.index("ranking")]).strip() == ranking
        await pilot.press("a")
        await settle(pilot)
        loo = app.screen.query_one("#loo-table", ThemedTable)
        headers = [str(column.label).strip() for column in loo.columns.values()]
        assert headers[1] == "effect ▼"  # sorted by it
        assert str(loo.get_row("tools/retry-budget.md")[1]).strip() == effect


async def test_the_analysis_legend_is_whole_at_160_columns(analysis_workspace: Workspace) -> None:
    """The summary is two rows: its first line, then the legend of the marks. At 160 columns the legend ran
    to a third row, cut after "ctrl+s writes" (the footer names ctrl+s already)."""
    app = LessonCreditApp(analysis_workspace, seed=0, poll_seconds=0)
    async with app.run_test(size=(160, 45)) as pilot:
        await settle(pilot)
        await pilot.press("a")
        await settle(pilot)
        rows = ["".join(segment.text for segment in strip).strip() for strip in screen_lines(app)]
        (legend,) = [row for row in rows if row.startswith("effect: joint estimate")]
        assert legend.endswith("· by cat · IPW")
        assert not any("ctrl+s writes" in row for row in rows)
