"""At 80x24 What-if and Simulation show what they are for without scrolling: every column of their
tables, every estimator, the legend and the highlighted row's detail; What-if's summary wraps between
its phrases, never a count away from its words. At 160x48 the long labels come back."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from textual.widgets import Input, Select, Static

from lesson_credit.tui.screens.simulation import SimulationScreen
from lesson_credit.tui.screens.what_if import WhatIfScreen, summary
from lesson_credit.tui.widgets.themed_table import ThemedTable
from tests.tui.test_tui_whole_headers import demo_app, row_text, table_header
from tests.tui.tui_fixture import burst, open_session, settle

SIZE = (80, 24)
BIG = (160, 48)


def shown(app: Any, widget_id: str) -> list[str]:
    """The rows of the screen a widget covers, as drawn, stripped."""
    region = app.screen.query_one(f"#{widget_id}").region
    return [row_text(app, y)[region.x : region.right].strip() for y in range(region.y, region.bottom)]


async def test_what_if_shows_every_column_at_80x24(tmp_path: Path) -> None:
    """On the old code `rank now`, `n` and `status` were past the table's right edge."""
    app = demo_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        burst(pilot, "w")
        await settle(pilot)
        assert isinstance(app.screen, WhatIfScreen)
        table = app.screen.query_one("#what-if-table", ThemedTable)
        assert table.max_scroll_x == 0, table_header(app, "what-if-table")
        header = table_header(app, "what-if-table")
        assert header == ["rank", "rank", "mean", "mean", "Δ"], header  # two lines below 100 columns: the first
        first = row_text(app, table.region.y + table.header_height)[table.region.x : table.region.right].split()
        # the demo's best lesson: rank 1 from 1, unmoved, 0.486 either way, 17 sessions, its file name
        assert first == ["1", "1", "·", "0.486", "0.486", "0.000", "17", "active", "read-before-edit"], first


@pytest.mark.parametrize("keys", [(), ("t", "right_square_bracket", "T", "b")], ids=["saved", "all-changed"])
async def test_what_if_summary_breaks_between_its_phrases_at_80x24(tmp_path: Path, keys: tuple[str, ...]) -> None:
    """On the old code the summary wrapped as "· 0" at a line's end and "lessons up in rank, 0 down" on the
    next. Every phrase is now whole on a line (each is shorter than the line)."""
    app = demo_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        burst(pilot, "w")
        await settle(pilot)
        for key in keys:
            await pilot.press(key)
            await settle(pilot)
        screen = app.screen
        assert isinstance(screen, WhatIfScreen) and screen.view is not None
        lines = shown(app, "what-if-summary")
        phrases = summary(screen.view, screen.policy).plain.replace("\n", " · ").split(" · ")
        assert len(phrases) >= 5, phrases
        for phrase in phrases:
            assert any(phrase in line for line in lines), (phrase, lines)


async def test_what_if_summary_takes_four_lines_when_every_setting_changes_at_80x24(tmp_path: Path) -> None:
    """Strategy, floor, policy and reward priority all changed: on the old code the summary took six of the
    24 rows (the proposed settings, then "vs saved ..." and "saved rewards by ..." apart from them). Each
    setting now says its saved value and the proposed one together. The demo saves seed, 0.3, joint and
    human>judge>heuristic>outcome; t, ], T and b propose evidence, 0.35, seed and judge first."""
    app = demo_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        burst(pilot, "w")
        await settle(pilot)
        for key in ("t", "right_square_bracket", "T", "b"):
            await pilot.press(key)
            await settle(pilot)
        lines = shown(app, "what-if-summary")
        assert len(lines) <= 4, lines
        text = " ".join(lines)
        for change in (
            "strategy seed → evidence",
            "floor 0.3 → 0.35",
            "policy joint → seed",
            "rewards by human>judge>heuristic>outcome → judge>human>heuristic>outcome (b)",
            "nothing is written until ctrl+s",
        ):
            assert change in text, (change, lines)


async def test_what_if_at_160x48_names_its_columns_in_full(tmp_path: Path) -> None:
    app = demo_app(tmp_path)
    async with app.run_test(size=BIG) as pilot:
        await settle(pilot)
        burst(pilot, "w")
        await settle(pilot)
        header = " ".join(table_header(app, "what-if-table"))
        assert header == "rank rank now move mean what-if mean now Δ mean n status lesson", header
        table = app.screen.query_one("#what-if-table", ThemedTable)
        first = row_text(app, table.region.y + 1)
        assert " patterns/read-before-edit.md " in first, first  # the whole id
        await pilot.resize_terminal(*SIZE)
        await settle(pilot)
        header = " ".join(table_header(app, "what-if-table"))
        assert header == "rank rank mean mean Δ", header  # two lines below 100 columns: the first


async def run_simulation(pilot: Any, seeds: int = 2) -> SimulationScreen:
    await settle(pilot)
    burst(pilot, "m")
    await settle(pilot)
    screen = pilot.app.screen
    assert isinstance(screen, SimulationScreen)
    screen.query_one("#scenario", Select).value = "few-sessions"
    screen.query_one("#seeds", Input).value = str(seeds)
    await pilot.press("ctrl+r")
    for _ in range(600):
        if screen.report is not None:
            break
        await asyncio.sleep(0.05)
        await pilot.pause()
    await settle(pilot)
    assert screen.report is not None
    return screen


async def test_simulation_shows_every_metric_estimator_legend_and_detail_at_80x24(tmp_path: Path) -> None:
    """On the old code the table showed two of the four metrics (the others past its right edge), and the
    legend's last line and the highlighted estimator's detail were below the screen."""
    app = demo_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        screen = await run_simulation(pilot)
        table = screen.query_one("#sim-table", ThemedTable)
        assert table.max_scroll_x == 0 and table.max_scroll_y == 0, (table.max_scroll_x, table.max_scroll_y)
        header = table_header(app, "sim-table")
        assert header[:2] == ["estimator", "spearman"] and header[-1] == "regret", header
        footer = app.screen.query_one("KeyFooter").region.y
        for widget_id in ("sim-legend", "estimator-info"):
            region = screen.query_one(f"#{widget_id}", Static).region
            assert region.height and region.bottom <= footer, (widget_id, region, footer)
        detail = " ".join(shown(app, "estimator-info"))
        assert detail.startswith("seed (posterior mean):"), detail  # the highlighted row's, in view
        legend = " ".join(shown(app, "sim-legend"))
        assert legend.endswith("regret: lower is better"), legend


@pytest.mark.parametrize("size", [(80, 24), (200, 50)], ids=["80x24", "200x50"])
async def test_a_simulation_of_one_seed_has_a_legend_that_says_so(tmp_path: Path, size: tuple[int, int]) -> None:
    """A run of one seed shows each metric's value alone (no spread: unknown, as `simulate --json`'s null says),
    but the legend under the table still read "mean ±sd across seeds" ("mean ±sd [p10, p90] across seeds" at 200
    columns). It says the values are the one seed's."""
    app = demo_app(tmp_path)
    async with app.run_test(size=size) as pilot:
        screen = await run_simulation(pilot, seeds=1)
        assert screen.report is not None and len(screen.report.seeds) == 1
        seed = row_text(app, screen.query_one("#sim-table", ThemedTable).region.y + 1).split()
        assert seed[0] == "seed" and "±" not in seed and len(seed) == 5, seed  # a value per metric
        legend = " ".join(shown(app, "sim-legend"))
        assert legend.startswith("one seed's values (no spread)"), legend
        assert "±" not in legend and "across seeds" not in legend, legend


async def test_simulation_shows_regret_at_100_columns(tmp_path: Path) -> None:
    """From 100 columns the cells had their [p10, p90] and the last metric (cumulative regret) was past the
    edge at 100x30, out of view until scrolled to. Where the full cells do not fit, the short ones (mean ±sd)
    and headers are shown, as below 100 columns, every metric in view; at 200x50 the full ones fit."""
    app = demo_app(tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await run_simulation(pilot)
        table = screen.query_one("#sim-table", ThemedTable)
        assert table.max_scroll_x == 0
        header = table_header(app, "sim-table")
        assert header[0] == "estimator" and header[-1] == "regret", header
        legend = " ".join(shown(app, "sim-legend"))
        assert legend.startswith("mean ±sd across seeds") and "[p10, p90]" not in legend, legend
        await pilot.resize_terminal(200, 50)
        await settle(pilot)
        assert table.max_scroll_x == 0
        header = table_header(app, "sim-table")
        assert header[-2:] == ["cumulative", "regret"], header
        seed = row_text(app, table.region.y + 1)
        assert seed.split()[0] == "seed" and seed.count("[") == 4, seed  # each metric's [p10, p90]


async def test_transcript_heading_breaks_between_its_phrases_at_80x24(tmp_path: Path) -> None:
    """The demo's 2026-09-03-005 at 80 columns: on the old code its heading wrapped as "... · claude-code ·
    40" and "messages · 13 tool calls"."""
    app = demo_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await open_session(pilot, "2026-09-03-005")
        await pilot.press("V")
        await settle(pilot)
        lines = shown(app, "transcript-info")
        for phrase in ("40 messages", "13 tool calls", "keyword hits highlighted", "/ search"):
            assert any(phrase in line for line in lines), (phrase, lines)


async def test_simulation_detail_breaks_between_words_never_inside_a_formula_at_80x24(tmp_path: Path) -> None:
    """The seed estimator's detail at 80 columns ended a line with "beta += 1 -" and began the next with
    "base*w)": a formula cut at a space. It breaks before a formula or after it, never inside one. (Seed's
    detail now fits a line; evidence's, 82 cells, wraps between its two formulas.)"""
    app = demo_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        screen = await run_simulation(pilot)
        lines = [line for line in shown(app, "estimator-info") if line]
        assert " ".join(lines).startswith("seed (posterior mean): seed credit"), lines
        assert "(alpha += base*w, beta += 1 - base*w)" in " ".join(lines), lines
        table = screen.query_one("#sim-table", ThemedTable)
        table.move_cursor(row=[str(key.value) for key in table.rows].index("evidence"), animate=False)
        await settle(pilot)
        lines = [line for line in shown(app, "estimator-info") if line]
        assert lines == ["evidence (posterior mean): evidence credit (alpha += w*base,", "beta += w*(1 - base))"]
        for line in lines:
            assert not line.endswith(("+=", " -", " +")), lines
            assert not line.startswith(("+=", "- ", "base*w")), lines


async def test_simulation_shows_the_full_cells_from_the_width_they_fit(tmp_path: Path) -> None:
    """The full table (each cell with its [p10, p90]) is 116 cells wide on the demo's run (118 while every
    unmarked cell carried two spaces for the best mark); the estimate of its width added a scrollbar and a
    padding the table does not have, so the short cells showed up to 121 columns. At 116 the full ones show,
    every metric in view; at 115 the short ones."""
    app = demo_app(tmp_path)
    async with app.run_test(size=(200, 50)) as pilot:
        screen = await run_simulation(pilot)
        table = screen.query_one("#sim-table", ThemedTable)
        assert table.virtual_size.width == 116
        for width, brackets in ((116, 4), (115, 0)):
            await pilot.resize_terminal(width, 50)
            await settle(pilot)
            seed = row_text(app, table.region.y + 1)
            assert seed.split()[0] == "seed" and seed.count("[") == brackets, (width, seed)
            assert table.max_scroll_x == 0 and table.max_scroll_y == 0, width
