"""The dashboard's pure helpers: literal display text, wrapping, formats, grade parsing, ranks, undo."""

from __future__ import annotations

import math
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from lesson_credit.core.analysis.effects import LooResult
from lesson_credit.core.analysis.estimates import Effect
from lesson_credit.core.health import Finding
from lesson_credit.core.sim.report import MetricSummary
from lesson_credit.core.sim.simulate import run_simulation, scenario
from lesson_credit.core.workspace import Workspace
from lesson_credit.tui.lesson_sorts import matches
from lesson_credit.tui.loo_text import describe, short_flags
from lesson_credit.tui.screens.analysis import sorted_results
from lesson_credit.tui.screens.grade_value import parse_grade
from lesson_credit.tui.screens.health import finding_text
from lesson_credit.tui.screens.lessons import lesson_name
from lesson_credit.tui.screens.session_detail import step_grade
from lesson_credit.tui.screens.simulation import best_estimators, metric_cell
from lesson_credit.tui.series import grouped, integer_ticks, reward_histogram, reward_series, rolling_mean
from lesson_credit.tui.source import WorkspaceSource
from lesson_credit.tui.text import (
    expand_tabs,
    fmt,
    fmt_signed,
    fmt_time,
    one_line,
    rank_arrow,
    visible_text,
    wrap_lines,
)
from lesson_credit.tui.what_if_view import ranks
from lesson_credit.tui.writes import WriteQueue
from tests.support.engine_helpers import row_of
from tests.tui.tui_fixture import fixed_clock, log_lines


def test_control_characters_become_visible_and_keep_offsets() -> None:
    raw = "a\x1b[31mb\x00c\x7f\x9bd\u202ee\r\n\tf"
    shown = visible_text(raw)
    assert len(shown) == len(raw)
    assert shown == "a␛[31mb␀c␡\ufffdd\ufffde \n\tf"
    assert one_line("x\ny\tz\x1b") == "x␊y z␛"
    assert one_line(None, "—") == "—"


def test_markup_is_left_alone() -> None:
    assert visible_text("[red]boom[/]") == "[red]boom[/]"
    assert one_line("[bold]x[/bold]") == "[bold]x[/bold]"


def test_expand_tabs_maps_offsets() -> None:
    text = "ab\tc\n\td"
    shown, mapping = expand_tabs(text, 4)
    assert shown == "ab  c\n    d"
    assert mapping is not None
    assert shown[mapping[3] : mapping[4]] == "c"
    assert shown[mapping[6] : mapping[7]] == "d"
    assert expand_tabs("no tabs", 4) == ("no tabs", None)


@given(st.text(alphabet=st.sampled_from(list("ab \n界é")), max_size=200), st.integers(1, 30))
def test_wrap_lines_covers_every_character_once_and_fits(text: str, width: int) -> None:
    from rich.cells import cell_len

    lines = wrap_lines(text, width)
    covered = "".join(text[s:e] for s, e in lines)
    assert covered == text.replace("\n", "")
    for s, e in lines:
        piece = text[s:e]
        assert "\n" not in piece
        # a line may overflow only by a trailing space (it is cropped) or a single wide character
        assert cell_len(piece.rstrip(" ")) <= max(width, 2)
    assert len(lines) == text.count("\n") + 1 or len(lines) > text.count("\n")


def test_wrap_prefers_spaces() -> None:
    text = "one two three"
    assert [text[s:e] for s, e in wrap_lines(text, 8)] == ["one two ", "three"]


def test_formats() -> None:
    assert fmt(0.5775) == "0.58" and fmt(None) == "—" and fmt(float("nan")) == "—"
    assert fmt(0.5774999999999999, 3) == fmt(0.5775000000000001, 3)
    assert fmt_signed(-0.0000001) == "0.000" and fmt_signed(0.25) == "+0.250"  # a zero has no sign
    assert fmt_time("2026-03-05T16:30:00Z") == "2026-03-05 16:30"
    assert fmt_time("yesterday\x1b") == "yesterday␛" and fmt_time(None) == "—"
    assert [rank_arrow(c) for c in (3, -2, 0)] == ["▲3", "▼2", "·"]


@pytest.mark.parametrize(
    ("typed", "value"),
    [
        ("0.7", 0.7),
        (" 1 ", 1.0),
        ("0", 0.0),
        ("0,25", 0.25),
        ("1.5", None),
        ("-0.1", None),
        ("nan", None),
        ("inf", None),
        ("", None),
        ("x", None),
        ("0_1", None),  # float() reads 1.0: an underscore is a digit separator to Python, a typo here
        ("\u0660.\u0665", None),  # Arabic-Indic digits: float() reads 0.5
        ("-0", 0.0),
    ],
)
def test_parse_grade(typed: str, value: float | None) -> None:
    parsed, problem = parse_grade(typed)
    assert parsed == value
    assert (problem is None) == (value is not None)
    assert parsed is None or math.copysign(1.0, parsed) == 1.0  # never a -0.0 logged as the grade


def test_step_grade_clamps_and_does_not_drift() -> None:
    value = 0.0
    for _ in range(7):
        value = step_grade(value, 0.05)
    assert value == 0.35
    assert step_grade(0.98, 0.05) == 1.0 and step_grade(0.02, -0.05) == 0.0
    assert step_grade(None, 0.05) == 0.55


def test_rolling_mean_and_grouping() -> None:
    assert rolling_mean([1, 2, 3, 4], 2) == [1.0, 1.5, 2.5, 3.5]
    assert rolling_mean([], 3) == []
    xs, ys, size = grouped(list(range(1, 11)), [float(i) for i in range(10)], most=4)
    assert size == 3 and ys == [1.0, 4.0, 7.0, 9.0] and xs == [2.0, 5.0, 8.0, 10.0]
    assert grouped([1, 2], [0.1, 0.2])[2] == 1
    assert integer_ticks(1) == [1] and integer_ticks(4) == [1, 2, 3, 4]
    series = reward_series([0.5, None, 1.0])
    assert series.xs == (1.0, 3.0) and series.smooth == (0.5, 0.75) and series.ticks == (1, 2, 3)
    assert reward_series([None]).xs == () and reward_series([]).ticks == ()
    ticks = integer_ticks(168)
    assert ticks[0] == 1 and ticks[-1] == 168 and len(ticks) <= 7


def test_lesson_name_and_filter(workspace: Workspace) -> None:
    rows = {row.path: row for row in workspace.lesson_table().rows}
    assert lesson_name(rows["tools/git-worktree.md"]) == "git-worktree"
    assert matches(rows["tools/git-worktree.md"], "WORKTREE")
    assert matches(rows["tools/old-lesson.md"], "missing")
    assert not matches(rows["tools/old-lesson.md"], "active")


def test_ranks_are_stable_for_ties(workspace: Workspace) -> None:
    table = workspace.lesson_table()
    order = ranks(table.rows)
    assert sorted(order.values()) == list(range(1, len(table.rows) + 1))
    best = min(order, key=order.__getitem__)
    assert row_of(table, best).mean == max(r.mean for r in table.rows)


def test_what_if_view_is_a_pure_refold(workspace: Workspace, ws_root: Path) -> None:
    source = WorkspaceSource(workspace)
    view = source.what_if(workspace.settings.with_(strategy="uniform"))
    expected = {r.path: r.mean for r in Workspace(ws_root).replay("uniform").rows}
    assert {r.path: r.mean_then for r in view.rows} == pytest.approx(expected)
    assert [r.rank_then for r in view.rows] == list(range(1, len(view.rows) + 1))
    assert all(r.rank_change == r.rank_now - r.rank_then for r in view.rows)


def test_what_if_ranks_never_used_lessons_last(workspace: Workspace) -> None:
    """As Lessons, status and replay order them: a lesson never used (n 0) has only the prior's mean,
    so it neither outranks a lesson with evidence nor 'moves' when the settings change."""
    view = WorkspaceSource(workspace).what_if(workspace.settings.with_(strategy="uniform"))
    # the fixture's means, seed: run-tests .507, git-worktree .477, small-commits .395, shell-quoting .387,
    # old-lesson .373; uniform: run-tests .600 = git-worktree .600 (tie: by id), shell-quoting .550,
    # small-commits .500, old-lesson .467; communication/ask-first is never used: 0.5 under both, last in both
    assert [(r.path, r.rank_now, r.rank_then) for r in view.rows] == [
        ("testing/run-tests.md", 1, 1),
        ("tools/git-worktree.md", 2, 2),
        ("tools/shell-quoting.md", 4, 3),
        ("workflow/small-commits.md", 3, 4),
        ("tools/old-lesson.md", 5, 5),
        ("communication/ask-first.md", 6, 6),
    ]


def test_a_grade_the_priority_outranks_says_what_stays_in_force(workspace: Workspace, ws_root: Path) -> None:
    """A grade typed in the dashboard on a session whose judge's score the `[rewards]` priority puts first:
    the message said "Saved grade 0.6 for s4 (was 0.9)", as if the 0.6 counted; the CLI's `grade` says
    the judge's score stays in force. Left out of the priority, the session stays pending."""
    source = WorkspaceSource(workspace)
    queue = WriteQueue()
    Workspace(ws_root, clock=fixed_clock).grade("s4", 0.9, grader="judge")
    (ws_root / "state" / "lesson-thompson" / "config.toml").write_text('[rewards]\npriority = ["judge", "human"]\n')

    def typed(value: float) -> str:
        queue.commit("s4", value, None, shown=None)
        assert queue.start_draining()
        write = queue.take()
        assert write is not None
        message = queue.apply(source, write).message
        assert queue.take() is None
        return message

    assert typed(0.6) == "Saved grade 0.6 for s4, but 0.9 (judge) stays in force: the [rewards] priority puts it first."
    (ws_root / "state" / "lesson-thompson" / "config.toml").write_text('[rewards]\npriority = ["heuristic"]\n')
    assert typed(0.7) == (
        "Saved grade 0.7 for s4, but the session stays pending: the [rewards] priority leaves its source out."
    )
    (ws_root / "state" / "lesson-thompson" / "config.toml").write_text('[rewards]\npriority = ["human", "judge"]\n')
    assert typed(0.8) == "Saved grade 0.8 for s4 (was 0.7)."  # human first: the 0.7 typed was in force before it


def test_write_queue_applies_in_order_and_undo_is_a_stack(workspace: Workspace, ws_root: Path) -> None:
    source = WorkspaceSource(workspace)
    queue = WriteQueue()

    def drain() -> list[str]:
        messages = []
        assert queue.start_draining()
        while (write := queue.take()) is not None:
            messages.append(queue.apply(source, write).message)
        return messages

    assert queue.undo("s1").reverts is None  # nothing this queue wrote: the operator's latest in the log
    queue.commit("s4", 0.6, None, shown=None)
    queue.commit("s4", 0.9, "second look", shown=None)
    queue.undo("s4")
    queue.undo("s4")
    assert queue.undo("s4").reverts is None  # the log's: refused once applied (both grades undone)
    assert queue.expected("s4", 0.123) is None  # back to pending once applied
    messages = drain()
    grades = [e for e in log_lines(ws_root) if e.get("type") == "grade"]
    # 0.6, 0.9, then 0.9 undone back to 0.6, then 0.6 undone back to pending (a retraction)
    assert [(g["base_reward"], g["grader"]) for g in grades] == [
        (0.6, "manual"),
        (0.9, "manual"),
        (0.6, "manual"),
        (None, "manual"),
    ]
    assert grades[1]["note"] == "second look"
    assert grades[2]["note"] == "undid manual's grade on line 6: 0.9 back to 0.6"  # the fixture logs five lines first
    assert Workspace(ws_root, clock=fixed_clock).session("s4").pending
    assert messages[0] == "Nothing to undo on s1: session 's1' is scored only by its record (no grade)."
    assert messages[1] == "Saved grade 0.6 for s4 (was pending)."
    assert messages[4] == "Undid your grade on s4 (line 5): 0.6 back to pending."
    assert messages[5] == "Nothing to undo on s4: your grades on session 's4' are undone already or changed nothing."
    # another person grades s1 over this queue's grade: the undo is refused and writes nothing
    queue.commit("s1", 0.3, None, shown=0.8)
    drain()
    Workspace(ws_root, clock=fixed_clock).grade("s1", 0.5, grader="alice")
    queue.undo("s1")
    (refused,) = drain()
    assert refused.startswith("Not undone on s1: alice's grade on line "), refused  # the engine's words, as the CLI's
    assert [e["base_reward"] for e in log_lines(ws_root) if e.get("type") == "grade"][-1] == 0.5


def test_a_grade_stored_but_not_read_back_is_written_once(workspace: Workspace, ws_root: Path) -> None:
    from lesson_credit.core.base.files import StoredUnread

    class GoneAfterCommit(WorkspaceSource):  # the database gone right after the grade's commit
        def append_grade(self, *args: Any, **kwargs: Any) -> Any:
            super().append_grade(*args, **kwargs)
            raise StoredUnread("the event was stored, but cannot be read back now: db: connection lost")

    queue = WriteQueue()
    commit = queue.commit("s4", 0.6, None, shown=None)
    assert queue.start_draining() and queue.take() is commit
    # Before, apply raised: the app tried the write again (a second 0.6 grade once the database answered)
    outcome = queue.apply(GoneAfterCommit(workspace), commit)
    assert outcome.written and outcome.message.startswith("Saved grade 0.6 for s4; not read back yet"), outcome
    assert queue.take() is None
    assert [e["base_reward"] for e in log_lines(ws_root) if e.get("type") == "grade"] == [0.6]
    undo = queue.undo("s4")  # its line is not known: refused, nothing written
    assert undo is not None and queue.start_draining() and queue.take() is undo
    refused = queue.apply(WorkspaceSource(workspace), undo)
    assert not refused.written and refused.message == "Not undone: the grade on s4 was saved but not read back."
    assert [e["base_reward"] for e in log_lines(ws_root) if e.get("type") == "grade"] == [0.6]


def test_a_refused_undo_keeps_the_expectation_of_a_write_queued_after_it(workspace: Workspace) -> None:
    from lesson_credit.core.base.files import StoredUnread

    class GoneAfterCommit(WorkspaceSource):  # the first grade is stored but not read back
        def append_grade(self, *args: Any, **kwargs: Any) -> Any:
            appended = super().append_grade(*args, **kwargs)
            if kwargs.get("note") is None:
                raise StoredUnread("the event was stored, but cannot be read back now: db: connection lost")
            return appended

    source = GoneAfterCommit(workspace)
    queue = WriteQueue()
    queue.commit("s4", 0.6, None, shown=None)
    undo = queue.undo("s4")  # refused below: the 0.6's line is not known
    queue.commit("s4", 0.9, "again", shown=None)  # queued after the undo
    assert undo is not None and queue.start_draining()
    outcomes = [queue.apply(source, write) for write in iter(queue.take, None)]
    assert [o.written for o in outcomes] == [True, False, True]
    queue.refused(undo)  # its message reaches the UI thread after the 0.9 was written
    assert queue.expected("s4", None) == 0.9  # the later grade's, not the 0.6 the undo found


def test_write_queue_refuses_a_no_op_undo(workspace: Workspace, ws_root: Path) -> None:
    source = WorkspaceSource(workspace)
    queue = WriteQueue()
    queue.commit("s1", 0.8, None, shown=0.8)  # the operator's 0.8 over the heuristic's 0.8
    queue.commit("s1", 0.8, None, shown=0.8)  # and 0.8 again over the operator's own 0.8
    queue.undo("s1")
    assert queue.start_draining()
    outcomes = []
    while (write := queue.take()) is not None:
        outcomes.append(queue.apply(source, write))
    assert [o.written for o in outcomes] == [True, True, False]
    assert outcomes[2].message == "Nothing to undo on s1: the grade is already 0.8."
    assert [e["base_reward"] for e in log_lines(ws_root) if e.get("type") == "grade"] == [0.8, 0.8]


def test_broken_lesson_files_become_rows_that_say_why(workspace: Workspace, ws_root: Path) -> None:
    (ws_root / "lessons" / "tools" / "broken.md").write_text("---\nstatus: [\n---\n")
    view = WorkspaceSource(Workspace(ws_root)).lessons_view()
    row = view.row("tools/broken.md")
    assert row is not None and row.status == "broken" and row.n == 0
    assert "YAML" in view.problems["tools/broken.md"] or view.problems["tools/broken.md"]
    assert math.isclose(row.mean, 0.5)


# ---------------------------------------------------------------------------- analysis, simulation, health


def loo(path: str, delta: float | None, p: float | None, sufficient: bool = True, **changes: object) -> LooResult:
    fields: dict[str, Any] = {
        "path": path,
        "n_with": 6,
        "n_without": 30,
        "mean_with": 0.6,
        "mean_without": 0.5,
        "delta": delta,
        "ci_low": None if p is None else (delta or 0.0) - 0.1,
        "ci_high": None if p is None else (delta or 0.0) + 0.1,
        "p_value": p,
        "p_adjusted": p,
        "delta_category": delta,
        "p_category": p,
        "delta_ipw": None,
        "n_ipw": 0,
        "ipw_gap": None,
        "sufficient": sufficient,
        "insufficient_reason": None if sufficient else "needs 5 sessions with and 20 without; has 2 and 30",
        "confounded": False,
    }
    fields.update(changes)
    return LooResult(**fields)


def test_loo_sort_keeps_enough_data_first_and_missing_values_last() -> None:
    results = (
        loo("a.md", 0.1, 0.2),
        loo("b.md", 0.3, None),
        loo("c.md", -0.2, 0.01),
        loo("d.md", 0.5, None, sufficient=False),
        loo("e.md", None, None, sufficient=False),
    )
    assert [r.path for r in sorted_results(results, "delta", True)] == ["b.md", "a.md", "c.md", "d.md", "e.md"]
    assert [r.path for r in sorted_results(results, "delta", False)] == ["c.md", "a.md", "b.md", "d.md", "e.md"]
    # the effect: rows with one first (e.md has one, though too few sessions for LOO); none goes last
    effect = {"a.md": 0.2, "c.md": -0.1, "e.md": 0.05}
    with_effect = tuple(
        replace(r, effect=Effect(effect[r.path], -1.0, 1.0, "joint")) if r.path in effect else r for r in results
    )
    assert [r.path for r in sorted_results(with_effect, "effect", True)] == ["a.md", "e.md", "c.md", "b.md", "d.md"]
    assert [r.path for r in sorted_results(with_effect, "effect", False)][:3] == ["c.md", "e.md", "a.md"]


def test_loo_sort_lists_equal_values_in_id_order_either_way() -> None:
    """Equal effects (or lifts) in lesson id order in both directions, as `loo` lists them (its one order breaks
    ties by id): sorted largest first, a tie came in reverse id order."""
    tied = {"c.md": 0.2, "a.md": 0.2, "b.md": -0.1, "d.md": 0.2}
    results = tuple(
        replace(loo(path, value, 0.01), effect=Effect(value, -1.0, 1.0, "joint")) for path, value in tied.items()
    )
    assert [r.path for r in sorted_results(results, "effect", True)] == ["a.md", "c.md", "d.md", "b.md"]
    assert [r.path for r in sorted_results(results, "effect", False)] == ["b.md", "a.md", "c.md", "d.md"]
    assert [r.path for r in sorted_results(results, "delta", True)] == ["a.md", "c.md", "d.md", "b.md"]


def test_analysis_and_health_text_is_literal() -> None:
    result = loo("[red]x[/].md", 0.1, 0.2, confounded=True, confound_reasons=("[bold]why[/bold]: \x1b[31mred",))
    text = describe(result)
    assert "[red]x[/].md" in text.plain and "⚠ [bold]why[/bold]: ␛[31mred" in text.plain
    assert short_flags(result) == ["[bold]why[/bold]"]
    assert short_flags(loo("y.md", 0.0, None, sufficient=False)) == ["insufficient data"]
    finding = Finding("code", "problem", "[red]boom[/]", "fix [b]it[/b]", ("[i]item[/i]",))
    shown = finding_text(finding).plain
    assert "[red]boom[/]" in shown and "→ fix [b]it[/b]" in shown and "items (1): [i]item[/i]" in shown


def test_health_items_past_the_limit_are_counted_as_the_other_lists_count_them() -> None:
    # 42 items, 40 shown: the 40th, then ", … and 2 more" as the Sessions screen and the jump dialog say it;
    # it read "i39 … and 2 more", without the list's separator
    items = tuple(f"i{n}" for n in range(42))
    shown = finding_text(Finding("code", "warning", "message", "advice", items)).plain
    assert shown.endswith("items (42): i0, i1, " + ", ".join(f"i{n}" for n in range(2, 40)) + ", … and 2 more")


def test_reward_histogram_shares_and_shared_axis() -> None:
    hist = reward_histogram([0.0, 0.05, 0.5, 1.0, 1.0])
    assert hist.n == 5 and hist.counts[0] == 2 and hist.counts[5] == 1 and hist.counts[9] == 2  # 1.0: last bin
    assert sum(hist.shares) == pytest.approx(1.0) and hist.mean == pytest.approx(0.51)
    assert hist.centres[0] == pytest.approx(0.05)
    empty = reward_histogram([])
    assert empty.n == 0 and empty.mean is None and set(empty.shares) == {0.0}


def test_best_estimator_excludes_references_and_lower_regret_wins() -> None:
    report = run_simulation(scenario("few-sessions", n_lessons=20, n_sessions=40), 2)
    best = best_estimators(report)
    for metric in ("spearman", "precision_at_10", "harmful_detection", "regret"):
        assert best[metric] and not best[metric] & {"random", "oracle"}
    regrets = {s.name: s.regret.mean for s in report.estimators if s.regret is not None and s.kind != "reference"}
    assert best["regret"] == {name for name, v in regrets.items() if v == min(regrets.values())}
    assert metric_cell(report.estimator("oracle").spearman, 3) == "—"
    summary = report.estimator("seed").spearman
    assert summary is not None and metric_cell(summary, 3).startswith(f"{summary.mean:.3f} ±")


def test_a_metric_of_one_seed_shows_no_spread() -> None:
    """A run of one seed (or one cancelled after its first) read `0.252 ±0.000 [0.25, 0.25]` on Simulation, a spread
    of zero where one seed has none to show: the mean alone. Two seeds, 0.2 and 0.4: sd 0.141 (sample, by hand:
    sqrt(2 * 0.1^2 / 1)), p10 0.22 and p90 0.38 (linear between the two)."""
    one = MetricSummary.of([0.252])
    assert metric_cell(one, 3) == "0.252" and metric_cell(one, 3, spread=False) == "0.252"
    two = MetricSummary.of([0.2, 0.4])
    assert metric_cell(two, 3) == "0.300 ±0.141 [0.22, 0.38]"
    assert metric_cell(two, 3, spread=False) == "0.300 ±0.141"


def test_help_status_column_names_every_lesson_status() -> None:
    """The demo's library has `automated` lessons; the help's status column named only three statuses."""
    from lesson_credit.core.library.lessons import STATUSES
    from lesson_credit.tui.screens.help import COLUMNS

    described = dict(dict(COLUMNS)["Lessons columns"])["status"].split(";")[0]
    assert [status for status in STATUSES if status not in described] == []


def test_the_what_if_floor_box_reads_plain_decimals_only() -> None:
    """The box's Number validator took float()'s syntax: "0_1" was a valid floor of 1."""
    from lesson_credit.tui.screens.what_if import floor_of

    assert [floor_of(text) for text in ("0.25", " .5 ", "1", "0_1", "1.5", "nan", "")] == [0.25, 0.5, 1.0] + [None] * 4


def test_the_compact_history_starts_with_the_grade_in_force() -> None:
    """At 80 columns the history is one line, cut at the edge: oldest first, a judge's long note pushed
    the grade in force (the person's 0.4, the latest) past the edge."""
    from lesson_credit.core.api import GradeRecord
    from lesson_credit.tui.widgets.grade_bar import grade_history

    note = "LLM judge re-scored the session after the revert was reviewed by a person"
    grades = (
        GradeRecord(0.62, "heuristic", "2026-10-23T05:04:00Z", None, 3),
        GradeRecord(0.58, "judge", "2026-10-23T23:45:00Z", note, 9),
        GradeRecord(0.4, "manual", "2026-10-24T08:00:00Z", None, 12),
    )
    compact = grade_history(grades, compact=True).plain
    assert compact.startswith("history (H) 0.4 manual 2026-10-24 "), compact
    assert compact.index("0.58 judge") < compact.index(note) and compact.endswith("” (+1 earlier)")
    wide = grade_history(grades).plain  # two lines of room: the same order, newest first, every entry shown
    assert wide.index("0.4 manual") < wide.index("0.58 judge") < wide.index("0.62 heuristic")


def test_a_retraction_in_the_history_does_not_call_the_session_pending() -> None:
    """A person's grade retracted while the judge's 0.58 stays in force (the grade bar's first line says
    "grade 0.58 (judge)"): the history read "retracted (pending) manual ...", as if the session were
    pending again. Only the person's score was withdrawn."""
    from lesson_credit.core.api import GradeRecord
    from lesson_credit.tui.widgets.grade_bar import grade_history

    grades = (
        GradeRecord(0.58, "judge", "2026-10-23T23:45:00Z", None, 9),
        GradeRecord(0.3, "manual", "2026-10-24T08:00:00Z", None, 12),
        GradeRecord(None, "manual", "2026-10-24T08:01:00Z", "undo of line 12: 0.3 back to 0.58", 13),
    )
    for compact in (True, False):
        text = grade_history(grades, compact=compact).plain
        assert "retracted manual 2026-10-24 08:01" in text and "pending" not in text, text


def test_a_records_judge_score_superseded_by_a_logged_one_says_so() -> None:
    """The session screen showed the record's "judge 0.32 (...)" while the judge's 0.58, logged since,
    was the judge's score (the one `J` drafts); then "superseded by the judge's 0.58 · judge 0.32", which did
    not say what superseded means: now the line (`show`'s too) says the logged one replaces it and is the score
    in force (test_tui_record_panel_judge.py: where a person's grade is, it says neither counts)."""
    from lesson_credit.core.api import SourceScore
    from lesson_credit.core.sessions.record_file import LoggedJudge, Record, record_lines
    from lesson_credit.tui.records_views import SessionOutside
    from lesson_credit.tui.widgets.record_panel import outside_text

    record = Record("s1", 1, llm_judge_score=0.32, llm_judge_model="haiku", llm_judge_reason="reverted")
    record_judge = SourceScore("judge", 0.32, "record:judge", None, None, True)
    logged_judge = SourceScore("judge", 0.58, "judge", 9, "2026-10-23T23:45:00Z", True)
    cases = [
        (record_judge, None, "judge 0.32 (haiku): reverted"),
        (
            logged_judge,
            LoggedJudge(0.58, 9),
            "judge 0.32 (haiku), replaced by the judge's 0.58 logged on line 9, the score in force; "
            "the record's reason: reverted",
        ),
    ]
    for judge, logged, first in cases:
        lines = tuple(record_lines(record, {}, outcomes={}, logged_judge=logged))
        outside = SessionOutside("s1", True, lines, None, (judge,), None, None)
        assert outside_text(outside, compact=True).plain.splitlines()[0] == first


def test_an_interval_with_an_end_that_rounds_to_zero_reads_alike_on_both_faces() -> None:
    """Analysis showed prefer-existing-utilities' interval as [+0.00, +0.22] where `loo` printed
    [-0.00, +0.22] (its low end is -0.00255). Both print 0.00: at two places the end is neither above nor
    below zero, and a sign on it read as a direction (the operator review of 2026-12-07)."""
    from lesson_credit.cli.commands.analysis import _span as cli_span
    from lesson_credit.tui.loo_text import span

    assert span(-0.00255, 0.22) == "[0.00, +0.22]"
    for low, high in ((-0.00255, 0.22), (0.0, 0.004), (-0.5, -0.1), (0.12345, 0.6789)):
        assert span(low, high) == cli_span(low, high)


def test_the_sessions_without_a_logged_propensity_are_counted_in_words_that_agree() -> None:
    """The demo's git-worktree-hygiene: "1 sessions with it have no logged propensity" on the old code."""
    assert "1 session with it has no logged propensity" in describe(loo("a.md", 0.1, 0.2, n_ipw_missing=1)).plain
    assert "2 sessions with it have no logged propensity" in describe(loo("a.md", 0.1, 0.2, n_ipw_missing=2)).plain


def test_a_grade_queued_behind_an_undo_stays_unread_until_its_own_snapshot(workspace: Workspace) -> None:
    """`u 7 c` typed at once on a session graded here: the undo is written and read in at version 2 while
    the 0.7 still waits. A list read at version 2 holds the undo (the session pending) and not the 0.7, so
    the session is graded here and unread for it; the writer's read-in of the undo marked the session read
    from version 2 on, and the pending list and the grading queue listed it again (`escape enter` typed ahead
    then opened it). Once the 0.7 is read in at version 3, a list read at 3 says for itself."""
    source = WorkspaceSource(workspace)
    queue = WriteQueue()

    def apply_next(read_at: int) -> None:
        write = queue.take()
        assert write is not None and queue.apply(source, write).written
        queue.read_in(write.session_id, read_at)  # as the app's writer does after each write

    queue.commit("s4", 0.5, None, shown=None)
    assert queue.start_draining()
    apply_next(1)
    assert not queue.graded_unread("s4", 1) and queue.graded_unread("s4", 0)
    queue.undo("s4")
    queue.commit("s4", 0.7, None, shown=None)
    apply_next(2)  # the undo; the 0.7 waits
    assert queue.graded_unread("s4", 2)
    apply_next(3)
    assert queue.take() is None
    assert not queue.graded_unread("s4", 3) and queue.graded_unread("s4", 2)


def test_check_after_a_change_and_snapshot_make_the_same_snapshot(workspace: Workspace, ws_root: Path) -> None:
    """`check` (the log changed: the version moves on) and `snapshot` (no move) build one snapshot of the log
    as read: another process's judge score of 0.7 for s4, pending before, is in both alike."""
    source = WorkspaceSource(workspace)
    first = source.snapshot()
    assert source.check() is None  # nothing changed since
    Workspace(ws_root, clock=fixed_clock).grade("s4", 0.7, grader="judge")
    changed = source.check()
    assert changed is not None and changed.version == first.version + 1
    again = source.snapshot()
    assert (again.version, again.log_version) == (changed.version, changed.log_version)
    assert list(again.session_ids) == list(changed.session_ids) == ["s1", "s2", "s3", "s4"]
    assert first.grade_of("s4") is None and changed.grade_of("s4") == again.grade_of("s4") == 0.7
    assert again.problems == changed.problems


def test_a_lesson_identified_only_by_time_shows_no_difference_of_means() -> None:
    """Its sessions with and without it are those after and before one moment: the panel said "mean reward with
    0.600 (n 6) · without 0.500 (n 30)", the very difference `loo` withholds; it counts them only."""
    timed = loo("a.md", None, None, sufficient=False, timed=True, insufficient_reason="identified only by time")
    text = describe(timed).plain
    assert "graded sessions with it 6, without 30: no leave-one-out comparison" in text
    assert "0.600" not in text and "0.500" not in text and "mean reward" not in text
    assert "identified only by time" in text  # the reason, below
