"""The dashboard's side of docs/records.md: the record panel and reward sources, the transcript view, taking the
judge's score as the grade, agreement, the grading queue and `n` in its order, the reward priority what-if."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from textual.widgets import DataTable, Static

from lesson_credit.core.bandit.config import load_config
from lesson_credit.core.workspace import Workspace
from lesson_credit.tui.app import LessonCreditApp
from lesson_credit.tui.screens.agreement import AgreementScreen
from lesson_credit.tui.screens.grading_queue import GradingQueueScreen
from lesson_credit.tui.screens.session_detail import SessionDetailScreen
from lesson_credit.tui.screens.transcript import TranscriptScreen
from lesson_credit.tui.screens.what_if import WhatIfScreen
from lesson_credit.tui.widgets.agreement_plot import AgreementPlot
from lesson_credit.tui.widgets.grade_bar import GradeBar
from lesson_credit.tui.widgets.record_panel import RecordPanel
from lesson_credit.tui.widgets.transcript_view import TranscriptView
from tests.support.records_helpers import HAND, agreement_workspace
from tests.support.textual_private import screen_lines
from tests.tui.records_fixture import build_records_workspace
from tests.tui.tui_fixture import fixed_clock, log_lines, open_session, settle

SIZE = (120, 40)


@pytest.fixture
def records_root(tmp_path: Path) -> Path:
    return build_records_workspace(tmp_path / "ws")


def make_app(root: Path) -> LessonCreditApp:
    return LessonCreditApp(Workspace(root, clock=fixed_clock), seed=0, poll_seconds=0)


def grades(root: Path) -> list[tuple[str, float | None, str]]:
    return [(e["session_id"], e["base_reward"], e["grader"]) for e in log_lines(root) if e.get("type") == "grade"]


def panel_text(detail: SessionDetailScreen) -> str:
    return str(detail.query_one("#record-text", Static).render())


async def test_the_detail_shows_the_record_and_every_source(records_root: Path) -> None:
    async with make_app(records_root).run_test(size=SIZE) as pilot:
        detail = await open_session(pilot, "s1")
        panel = detail.query_one("#record-panel", RecordPanel)
        assert panel.display
        text = panel_text(detail)
        assert "human 0.7 (manual) in force" in text and "judge 0.3 (record:judge)" in text
        assert "heuristic 0.8 (heuristic)" in text and "outcome 1.0 (record:outcome)" in text
        assert "judge 0.30 (claude-haiku-4-5): Fixed the worktree but skipped the flaky test." in text
        assert "gptme · anthropic/claude-sonnet-4-6 · 19m 00s · outcome productive (reward 1.000) · exit code 0" in text
        assert "grades: productivity 0.80 ×0.40, alignment 0.30 ×0.35, harm 1.00 ×0.25" in text
        assert "trajectory state/sessions/logs/2026-03-01-s1/conversation.jsonl · V shows it" in text
        bar = detail.query_one("#grade-bar", GradeBar)
        assert bar.others == (("judge", 0.3), ("heuristic", 0.8), ("outcome", 1.0))


def screen_text(app: LessonCreditApp) -> list[str]:
    return ["".join(segment.text for segment in strip).rstrip() for strip in screen_lines(app)]


async def test_at_80x24_the_detail_answers_on_the_first_screen(records_root: Path) -> None:
    """The judge's score and reason, the record, and why the focused lesson got its credit, all on the
    24 rows; the session's line whole. On the old code the record showed only the sources (two lines),
    the session's line stopped at "the selected", and "why this credit" showed its top border only."""
    app = make_app(records_root)
    async with app.run_test(size=(80, 24)) as pilot:
        await open_session(pilot, "s1")
        lines = screen_text(app)
        assert len(lines) == 24
        # (the strategy and the floor are the credit panel's, below: with a 14-character id the floor was cut off)
        assert lines[1] == " s1 · 3 lessons · 2026-03-01 10:00 · code"
        assert " judge 0.30 (claude-haiku-4-5): Fixed the worktree but skipped the flaky test." in lines
        assert any(line.startswith(" record gptme · anthropic/claude-sonnet-4-6 · 19m 00s") for line in lines)
        text = "\n".join(lines)
        # tools/git-worktree (focused, first): 1 of its 2 keywords hit; weight 0.3 + 0.7 x 0.5 = 0.65;
        # the person's 0.7 in force: credited 0.7 x 0.65 = 0.455
        assert "why this credit: tools/git-worktree.md" in text
        assert "salience 1/2 keywords = 0.500 · weight 0.3 + 0.7×0.500 = 0.650" in text
        assert "credited 0.7×0.65 = 0.455 (seed)" in text
        assert "hit: git worktree ×2 · missed: stale branch" in text
        assert " grade 0.7 (manual) · judge 0.3 · heuristic 0.8 · outcome 1.0" in lines


async def test_without_records_the_panel_stays_hidden(app: LessonCreditApp) -> None:
    async with app.run_test(size=SIZE) as pilot:
        detail = await open_session(pilot, "s1")
        assert not detail.query_one("#record-panel", RecordPanel).display


def question(app: LessonCreditApp) -> str:
    from lesson_credit.tui.screens.confirm import ConfirmCommit

    assert isinstance(app.screen, ConfirmCommit)
    return " ".join(str(app.screen.query_one(f"#confirm-{part}").render()) for part in ("question", "detail"))


async def test_J_previews_the_judges_score_c_commits_it_and_u_undoes_it(records_root: Path) -> None:
    """J is a draft like any other (on the old code it wrote at once); c writes it without a question: under
    [rewards] priority (human first by default) it goes over the judge's score, which stays in the log."""
    app = make_app(records_root)
    async with app.run_test(size=SIZE) as pilot:
        detail = await open_session(pilot, "s4")  # pending in the log; the record's judge 0.7 is in force
        assert detail.base is not None and detail.base.session.grader == "record:judge"
        before = grades(records_root)
        await pilot.press("J")
        await settle(pilot)
        assert detail.draft == 0.7 and grades(records_root) == before
        await pilot.press("c")
        await settle(pilot)
        assert app.screen is detail  # no question
        assert grades(records_root)[-1] == ("s4", 0.7, "manual")
        assert log_lines(records_root)[-1]["note"] == "the judge's score, taken as the grade"
        assert detail.base is not None and detail.base.session.grader == "manual"
        await pilot.press("u")
        await settle(pilot)
        # the person's grade withdrawn: the judge's score is in force again, nothing else changed
        assert grades(records_root)[-1] == ("s4", None, "manual")
        assert detail.base is not None and (detail.base.session.base_reward, detail.base.session.grader) == (
            0.7,
            "record:judge",
        )


@pytest.mark.parametrize("burst", [False, True])
async def test_a_grade_after_undoing_ones_own_over_the_judge_asks_nothing(records_root: Path, burst: bool) -> None:
    """s4: the judge's 0.7 in force, no person's grade. `3 c u` puts it back as it was (the person's grade
    withdrawn), so `4 c` replaces no person's grade: no question, as the first `c` asked none. On the old
    code the undo's expected grade (the judge's 0.7, in force) was taken for a person's, and `4 c` asked
    "Replace the grade 0.7 of s4 with 0.4? A person's grade is in force", whether typed at once or after
    the undo was read back."""
    app = make_app(records_root)
    async with app.run_test(size=SIZE) as pilot:
        detail = await open_session(pilot, "s4")
        keys = ["3", "c", "u", "4", "c"]
        if burst:
            await pilot.press(*keys)
        else:
            await pilot.press(*keys[:3])
            await settle(pilot)
            assert detail.base is not None and detail.base.session.grader == "record:judge"
            await pilot.press(*keys[3:])
        await settle(pilot)
        assert app.screen is detail  # no question
        assert [g for g in grades(records_root) if g[0] == "s4"][-3:] == [
            ("s4", 0.3, "manual"),
            ("s4", None, "manual"),
            ("s4", 0.4, "manual"),
        ]


def test_a_commit_read_against_a_view_from_before_the_undo_asks_nothing() -> None:
    """The burst above on a loaded machine (1 run in 6 under two busy cores): the record panel's view was
    read after `3 c` was written and before the undo was, so it shows the person's 0.3 in force; the queue
    knows the person's grade is withdrawn (no person's score), and the judge's 0.7 is in force as typed.
    The question was chosen from the view's source in force (a person's) and asked "Replace the grade 0.7
    of s4 with 0.4?"; the source in force is the first of the priority with a score other than the
    person's withdrawn one: the judge's, ranked below a person, so nothing is replaced."""
    from lesson_credit.core.views import SourceScore
    from lesson_credit.tui.records_views import SessionOutside
    from lesson_credit.tui.screens.confirm import commit_question

    sources = (
        SourceScore("human", 0.3, "manual", 3, None, in_force=True),
        SourceScore("judge", 0.7, "record:judge", None, None),
    )
    priority = ("human", "judge", "heuristic", "outcome")
    view = SessionOutside("s4", True, (), None, sources, None, None, priority=priority, read_at=3)
    assert commit_question("s4", 0.4, None, 0.7, None, view) is None
    # the person's grade still queued (not undone): it is replaced, and the question says so
    asked = commit_question("s4", 0.4, None, 0.3, 0.3, view)
    assert asked is not None and asked[0] == "Replace the grade 0.3 of s4 with 0.4?"
    # the judge ranked first: its score stays in force, as the question says
    judge_first = SessionOutside("s4", True, (), None, sources, None, None, priority=("judge", "human"), read_at=3)
    asked = commit_question("s4", 0.4, None, 0.7, None, judge_first)
    assert asked is not None and asked[0] == "Log 0.4 for s4? The judge's 0.7 stays in force."


def test_a_commit_after_an_undo_over_another_persons_grade_still_asks() -> None:
    """As above, but the person's 0.3 in force in the view is erik's, logged over the operator's 0.4 (over the
    judge's 0.7) before the operator typed `u 6 c`: the undo withdraws the operator's own grade only (it is
    refused: erik graded over it), so the 0.6 replaces erik's 0.3 and asks, naming it. Taking every person's
    score in force for withdrawn asked nothing, and the 0.6 went over erik's grade without a word."""
    from lesson_credit.core.views import SourceScore
    from lesson_credit.tui.records_views import SessionOutside
    from lesson_credit.tui.screens.confirm import commit_question

    sources = (
        SourceScore("human", 0.3, "erik", 4, None, in_force=True),
        SourceScore("judge", 0.7, "record:judge", None, None),
    )
    priority = ("human", "judge", "heuristic", "outcome")
    view = SessionOutside("s4", True, (), None, sources, None, None, priority=priority, read_at=4)
    asked = commit_question("s4", 0.6, None, 0.7, None, view)
    assert asked is not None and asked[0] == "Replace the grade 0.3 of s4 with 0.6?"


async def test_a_grade_after_undoing_ones_own_over_a_persons_still_asks(records_root: Path) -> None:
    """s1: a person's 0.7 in force. `3 c` asks (replaced with `c`), `u` puts the 0.7 back, so `4 c` asks
    again, naming the 0.7 the undo restored (not the 0.3 undone, nor nothing)."""
    app = make_app(records_root)
    async with app.run_test(size=SIZE) as pilot:
        detail = await open_session(pilot, "s1")
        await pilot.press("3", "c")
        await settle(pilot)
        assert "Replace the grade 0.7 of s1 with 0.3?" in question(app)
        await pilot.press("c", "u")
        await settle(pilot)
        await pilot.press("4", "c")
        await settle(pilot)
        assert "Replace the grade 0.7 of s1 with 0.4?" in question(app)
        await pilot.press("escape")
        await settle(pilot)
        assert app.screen is detail and [g for g in grades(records_root) if g[0] == "s1"][-2:] == [
            ("s1", 0.3, "manual"),
            ("s1", 0.7, "manual"),
        ]


async def test_the_persons_own_grade_again_asks_nothing(records_root: Path) -> None:
    """s1: a person's 0.7 in force. `3 c` asks and `c` replaces it; `u` puts the 0.7 back; `7 c` then commits
    the grade in force again: nothing is replaced, so nothing is asked (it asked "Replace the grade 0.7 of s1
    with 0.7?"). The grade is logged all the same."""
    app = make_app(records_root)
    async with app.run_test(size=SIZE) as pilot:
        detail = await open_session(pilot, "s1")
        await pilot.press("3", "c")
        await settle(pilot)
        assert "Replace the grade 0.7 of s1 with 0.3?" in question(app)
        await pilot.press("c", "u", "7", "c")
        await settle(pilot)
        assert app.screen is detail
        assert [g for g in grades(records_root) if g[0] == "s1"][-3:] == [
            ("s1", 0.3, "manual"),
            ("s1", 0.7, "manual"),
            ("s1", 0.7, "manual"),
        ]


async def test_help_and_the_palette_say_J_drafts_the_judges_score(records_root: Path) -> None:
    """J became a draft that c commits (above), but Help still said it "takes the judge's score as your
    grade" and its key "Judge's score as grade": a person pressing J and leaving thought it was saved."""
    from lesson_credit.tui.screens.help import HelpScreen

    app = make_app(records_root)
    async with app.run_test(size=SIZE) as pilot:
        detail = await open_session(pilot, "s4")
        (j,) = [b for b in detail.BINDINGS if getattr(b, "key", None) == "J"]
        assert getattr(j, "description", "") == "Judge's score as draft"
        await pilot.press("question_mark")
        await settle(pilot)
        assert isinstance(app.screen, HelpScreen)
        text = " ".join(str(app.screen.query_one("#help-text", Static).render()).split())
        assert "J drafts the judge's score as your grade (c commits it" in text
        assert "J takes the judge's score" not in text


async def test_J_over_a_persons_grade_asks_and_escape_discards_the_draft(records_root: Path) -> None:
    app = make_app(records_root)
    async with app.run_test(size=SIZE) as pilot:
        detail = await open_session(pilot, "s1")
        before = grades(records_root)
        await pilot.press("J")
        await settle(pilot)
        await pilot.press("escape")  # the draft discarded: nothing written
        await settle(pilot)
        assert grades(records_root) == before and detail.draft is None
        await pilot.press("J", "c")
        await settle(pilot)
        assert "Replace the grade 0.7 of s1 with 0.3?" in question(app)
        assert "the latest person's grade counts" in question(app)
        await pilot.press("y")
        await settle(pilot)
        assert grades(records_root)[-1] == ("s1", 0.3, "manual")


async def test_a_grade_under_a_priority_that_puts_the_judge_first_says_it_will_not_count(
    records_root: Path,
) -> None:
    """On the old code: "Replace grade 0.7 ...? the latest counts", though the judge's score stays in force."""
    config = Workspace(records_root, clock=fixed_clock).config_path
    before = config.read_text(encoding="utf-8") if config.exists() else ""
    config.write_text(before + '\n[rewards]\npriority = ["judge", "human", "heuristic", "outcome"]\n', encoding="utf-8")
    app = make_app(records_root)
    async with app.run_test(size=SIZE) as pilot:
        await open_session(pilot, "s4")
        await pilot.press("3", "c")
        await settle(pilot)
        asked = question(app)
        assert "Log 0.3 for s4? The judge's 0.7 stays in force." in asked
        assert "is logged but does not count" in asked


async def test_g_takes_gptme_grading_words(records_root: Path) -> None:
    """`g productive enter c` grades with the word, as `grade S productive` does: the reward [outcomes]
    gives it (gptme-sessions' default: productive 1) and the word kept beside it. On the old code the box
    said "Not a number"."""
    app = make_app(records_root)
    async with app.run_test(size=SIZE) as pilot:
        detail = await open_session(pilot, "s2")
        await pilot.press("g", *"productive", "enter")  # the box opens with the grade selected: typing replaces it
        await settle(pilot)
        assert (detail.draft, detail.draft_word) == (1.0, "productive")
        await pilot.press("c")
        await settle(pilot)
        if not isinstance(app.screen, SessionDetailScreen):
            await pilot.press("y")  # s2 has a score in force: the dialog asks
            await settle(pilot)
        await pilot.press("g", *"great", "enter")
        await settle(pilot)
        from textual.widgets import Static

        error = str(app.screen.query_one("#grade-error", Static).render())
        assert "Not a grade: 'great'." in error and "productive" in error and "noop" in error
    last = log_lines(records_root)[-1]
    assert (last["session_id"], last["base_reward"], last["outcome"]) == ("s2", 1.0, "productive")


async def test_J_without_a_judges_score_writes_nothing(app: LessonCreditApp, ws_root: Path) -> None:
    async with app.run_test(size=SIZE) as pilot:
        await open_session(pilot, "s1")
        await pilot.press("J")
        await settle(pilot)
        assert grades(ws_root) == []


async def open_transcript(pilot: Any, session_id: str) -> TranscriptScreen:
    await open_session(pilot, session_id)
    await pilot.press("V")
    await settle(pilot)
    screen = pilot.app.screen
    assert isinstance(screen, TranscriptScreen) and screen.data is not None  # settle waits for the read
    return screen


async def test_a_search_typed_before_the_transcript_is_read_waits_for_it(
    records_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`V / pytest enter enter` in one burst while the read is slow (queued behind other work on the source's
    lock): the keys wait for the text, so the two enters reach the second match. On the old code they
    searched nothing and the text, when it came, showed the first match (the snapshot test's flake)."""
    import threading

    from lesson_credit.tui import records_views
    from lesson_credit.tui.screens import transcript as transcript_module
    from tests.support.textual_private import type_bytes

    app = make_app(records_root)
    read = records_views.transcript_data
    typed = threading.Event()

    def slow_read(*args: Any) -> Any:
        typed.wait(120)  # the read lands once the burst is all taken (or held); bounded if the test fails first
        return read(*args)

    monkeypatch.setattr(transcript_module, "transcript_data", slow_read)
    async with app.run_test(size=SIZE) as pilot:
        await open_session(pilot, "s1")
        type_bytes(app, "V/pytest\r\r")
        # until the router has handed on every key, or holds them for the transcript (not a time)
        while app.keys.waiting and not getattr(app.screen, "keys_held", False):
            await pilot.pause()
        typed.set()
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, TranscriptScreen) and screen.match_at == 1
        assert "match 2 of" in str(screen.query_one("#transcript-info").render())


async def test_the_transcript_shows_messages_in_order_with_hits_and_search(records_root: Path) -> None:
    async with make_app(records_root).run_test(size=SIZE) as pilot:
        screen = await open_transcript(pilot, "s1")
        data = screen.data
        assert data is not None and data.text is not None
        assert "gptme · 7 messages · 2 tool calls" in data.heading
        order = [line for line in data.text.splitlines() if line.startswith("── ")]
        assert [line.split(". ")[1].split("  ")[0] for line in order] == [
            "system", "user", "assistant (1 tool call)", "system", "assistant (1 tool call)", "system", "assistant",
        ]  # fmt: skip
        assert data.collapsed == 1 and "more lines]" in data.text  # the 40-line pytest output
        # every hit of tools/git-worktree.md's keyword "git worktree" is highlighted, as in the journal view
        hits = [data.text[s:e] for s, e in data.hits]
        assert hits.count("git worktree") == data.text.count("git worktree") == 4
        view = screen.query_one("#transcript", TranscriptView)
        assert len(view._hits) == len(data.hits)
        await pilot.press("slash", *"pytest", "enter")
        await settle(pilot)
        assert len(screen.matches) == data.text.lower().count("pytest") and screen.match_at == 0
        await pilot.press("enter")
        assert screen.match_at == 1
        assert "match 2 of" in str(screen.query_one("#transcript-info").render())
        await pilot.press("escape", "x")  # out of the search box, then expand
        await settle(pilot)
        assert screen.data is not None and screen.data.expanded and screen.data.text is not None
        assert screen.data.text.count("PASSED") == 40
        await pilot.press("escape")
        await settle(pilot)
        assert isinstance(pilot.app.screen, SessionDetailScreen)


async def test_a_search_that_misses_says_the_collapsed_output_was_not_searched(records_root: Path) -> None:
    """'no match' while output is collapsed must not read as 'not in the transcript': the search covers the
    text shown, so it says so and points at x, which expands and finds it."""
    async with make_app(records_root).run_test(size=SIZE) as pilot:
        screen = await open_transcript(pilot, "s1")
        data = screen.data
        assert data is not None and data.text is not None
        assert data.collapsed == 1 and "test_39.py" not in data.text  # the 40th line of the collapsed output
        await pilot.press("slash", *"test_39", "enter")
        await settle(pilot)
        assert screen.matches == []
        info = str(screen.query_one("#transcript-info").render())
        assert "no match for “test_39” in the text shown: collapsed output is not searched (x expands it)" in info
        await pilot.press("escape", "x")
        await settle(pilot)
        for _ in range(2000):  # laid out again in a worker
            if screen.data is not None and screen.data.expanded:
                break
            await asyncio.sleep(0.01)
        await settle(pilot)
        assert len(screen.matches) == 1
        assert "match 1 of 1 for “test_39”" in str(screen.query_one("#transcript-info").render())


async def test_a_claude_code_transcript(records_root: Path) -> None:
    async with make_app(records_root).run_test(size=SIZE) as pilot:
        screen = await open_transcript(pilot, "s2")
        assert screen.data is not None and screen.data.text is not None
        assert "tool call Bash" in screen.data.text and "tool result (error)" in screen.data.text


@pytest.mark.parametrize(
    ("session_id", "said"),
    [("s3", "the record names none"), ("s4", "the record names none")],
)
async def test_no_transcript_is_one_line(records_root: Path, session_id: str, said: str) -> None:
    async with make_app(records_root).run_test(size=SIZE) as pilot:
        screen = await open_transcript(pilot, session_id)
        view = screen.query_one("#transcript", TranscriptView)
        assert view.message is not None and said in view.message and "\n" not in view.message


async def test_no_transcript_says_why_once(records_root: Path) -> None:
    """The heading line repeated the reason the box gives ("no trajectory: the record names none ..." twice on one
    screen): the heading now says there is none, the box why."""
    app = make_app(records_root)
    async with app.run_test(size=(80, 24)) as pilot:
        await open_transcript(pilot, "s3")
        text = "\n".join(screen_text(app))
        assert text.count("the record names none") == 1, text
        assert "No transcript" in text


async def test_a_transcript_outside_the_allowed_folders_is_refused(records_root: Path) -> None:
    records = records_root / "state/sessions/session-records.jsonl"
    records.write_text(records.read_text().replace("state/sessions/cc-s2.jsonl", "/etc/hostname"))
    async with make_app(records_root).run_test(size=SIZE) as pilot:
        screen = await open_transcript(pilot, "s2")
        view = screen.query_one("#transcript", TranscriptView)
        assert view.message is not None and "outside the workspace" in view.message


@pytest.mark.parametrize("size", [(80, 24), (160, 45)], ids=["80x24", "160x45"])
async def test_the_agreement_plot_names_its_pair_and_draws_points_not_lines(
    tmp_path: Path, size: tuple[int, int]
) -> None:
    """Sessions are points; the diagonal and the threshold dotted (the old code drew them as braille lines,
    which read as lines joining the points); the pair is named, two people as such (bob vs manual)."""
    app = make_app(agreement_workspace(tmp_path))
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        await pilot.press("A")
        await settle(pilot)
        table = app.screen.query_one("#agreement-table", DataTable)
        table.move_cursor(row=[key.value for key in table.rows].index("all|bob|manual"))
        await settle(pilot)
        plot = app.screen.query_one(AgreementPlot)
        assert str(plot.border_title) == "bob (x) vs manual (y) · 2 sessions: two people"
        drawn = "\n".join(screen_text(app)[plot.region.y : plot.region.bottom])
        points = drawn.count("●") - drawn.count("● a session")  # the plot's title (where it fits) shows one
        assert points == 2 and not any("\u2800" <= ch <= "\u28ff" for ch in drawn)
        assert "bob (x) vs manual (y) · 2 sessions: two people" in "\n".join(screen_text(app))
        table.move_cursor(row=[key.value for key in table.rows].index("all|human|judge"))
        await settle(pilot)
        assert str(plot.border_title) == "human (x) vs judge (y) · 5 sessions"
        # the table says it too: the person-vs-person row's second source is marked (the summary says how)
        assert "* two people" in "\n".join(screen_text(app))
        cells = {key.value: [str(c).strip() for c in table.get_row(key)] for key in table.rows}  # (80: spaced)
        assert cells["all|bob|manual"][2] == "manual*" and cells["all|human|judge"][2] == "judge"


async def test_the_agreement_plot_s_title_keeps_the_count_at_80_columns(tmp_path: Path) -> None:
    """The demo's human against heuristic: on the old code the title read "human (x) vs heuristic (y): a
    person against the heuristic source · 32 sessio…", the count cut; then the counts and the kind came last and
    were cut. Now the title is the pair and its count, whole."""
    from tests.tui.test_tui_whole_headers import demo_app

    app = demo_app(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press("A")
        await settle(pilot)
        table = app.screen.query_one("#agreement-table", DataTable)
        table.move_cursor(row=[key.value for key in table.rows].index("all|human|heuristic"))
        await settle(pilot)
        n = str(table.get_row("all|human|heuristic")[3]).strip()  # the table's n column
        plot = app.screen.query_one(AgreementPlot)
        drawn = screen_text(app)[plot.region.y]
        assert f"─human (x) vs heuristic (y) · {n} sessions─" in drawn, drawn


@pytest.mark.parametrize("width", [80, 100])
async def test_the_agreement_plot_says_what_its_dotted_lines_are_at_80_columns(tmp_path: Path, width: int) -> None:
    """The plot's title named the pair and said "dotted: x = y and the threshold" in 82 cells: plotext drew
    no title wider than its canvas (74 cells at 80 columns, 94 at 100), so the dotted lines went unexplained
    below 88 columns. Where the pair does not fit, the key alone (the border names the pair)."""
    app = make_app(agreement_workspace(tmp_path))
    async with app.run_test(size=(width, 24)) as pilot:
        await settle(pilot)
        await pilot.press("A")
        await settle(pilot)
        plot = app.screen.query_one(AgreementPlot)
        drawn = screen_text(app)[plot.region.y : plot.region.bottom]
        assert sum("● a session · dotted: x = y and the threshold" in line for line in drawn) == 1, drawn[:2]
        assert str(plot.border_title).startswith("human (x) vs judge (y) · 5 sessions")


async def test_the_agreement_screen_shows_the_hand_computed_numbers(tmp_path: Path) -> None:
    app = make_app(agreement_workspace(tmp_path))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("A")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, AgreementScreen)
        table = screen.query_one("#agreement-table", DataTable)
        for (a, b), (n, mae, r, rho, k, (tp, fp, fn, tn)) in HAND.items():
            row = table.get_row(f"all|{a}|{b}")
            cells = [str(cell) for cell in row]
            assert cells == [
                "all",
                a,
                b if b in ("judge", "heuristic", "outcome") else f"{b}*",  # two people: marked
                str(n),
                f"{mae:.3f}",
                "—" if r is None else f"{r:.3f}",
                "—" if rho is None else f"{rho:.3f}",
                f"{k:.3f}",
                f"{tp}/{fp}/{fn}/{tn}",
            ]
        # the first pair is plotted: the person's scores against the judge's, session by session
        plot = screen.query_one("#agreement-plot", AgreementPlot)
        assert plot.pair is not None and plot.pair[0] == ("human", "judge")
        assert plot.pair[1] == ((0.9, 0.2, 0.7, 0.4, 1.0), (0.8, 0.6, 0.4, 0.3, 0.9))
        await pilot.press("plus")  # threshold 0.55: no score lies in [0.5, 0.55), so the same counts
        await settle(pilot)
        row = [str(c) for c in table.get_row("all|human|judge")]
        assert row[-1] == "2/1/1/1" and screen.threshold == 0.55


async def test_at_80x24_the_queue_says_why_each_session_is_next(records_root: Path) -> None:
    """One "why next" column: expected±sd, the sources' spread, the shift, on screen whole. On the
    old code nine columns ran off the right edge, the reason cut at "spre". The shift is the CLI's (`sessions
    --order informative`): the root of the information, where the column said `info 4.5e-3`."""
    app = make_app(records_root)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press("I")
        await settle(pilot)
        await pilot.press("o")  # informative
        await settle(pilot)
        queue = app.screen
        assert isinstance(queue, GradingQueueScreen) and queue.queue is not None
        info, row = queue.queue.informative, queue.queue.rows[0]
        assert info is not None and queue.queue.session_ids[0] == "s4"
        table = queue.query_one("#queue-table", DataTable)
        assert [c.value for c in table.columns] == ["#", "session", "in force", "why next"]
        assert table.max_scroll_x == 0
        why = (
            f"{info.expected[row]:.2f}±{info.spread[row]:.2f}, spread {info.disagreement[row]:.2f}, "
            f"shift {info.score[row] ** 0.5:.3f}"
        )
        line = next(line for line in screen_text(app) if " s4 " in line)
        assert line.split() == ["1", "s4", "0.700", "record:judge", *why.split()]
        assert 0 < info.score[row] and 0 <= info.disagreement[row] <= 1


async def test_n_follows_the_informative_order(tmp_path: Path) -> None:
    from tests.support.engine_helpers import grade, make_workspace, session

    events = [
        session("s1", None, {"a.md": 1.0}),
        grade("s1", 1.0),
        session("s2", None, {"a.md": 1.0}),
        session("s3", None, {"a.md": 0.0}),
        grade("s3", 0.2, "judge"),
    ]
    root = make_workspace(tmp_path, {"a.md": (["alpha"], "active")}, events)
    app = make_app(root)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("I")
        await settle(pilot)
        queue = app.screen
        assert isinstance(queue, GradingQueueScreen) and queue.queue is not None
        oldest_first = queue.queue.session_ids
        assert oldest_first == ("s2",)  # oldest first: the pending sessions
        await pilot.press("o")
        await settle(pilot)
        assert queue.queue.session_ids == ("s2", "s3") and app.grading_order == "informative"
        await pilot.press("n")
        await settle(pilot)
        assert isinstance(app.screen, SessionDetailScreen) and app.screen.session_id == "s2"
        await pilot.press("5", "c")  # pending: committed at once
        await pilot.press("n")
        await settle(pilot)
        # s3 is not pending (the judge scored it) but no person has: next in the informative order
        assert isinstance(app.screen, SessionDetailScreen) and app.screen.session_id == "s3"
        await pilot.press("n")  # s2 has the operator's grade now: nothing left
        await settle(pilot)
        assert isinstance(app.screen, SessionDetailScreen) and app.screen.session_id == "s3"


async def test_the_what_if_of_another_reward_priority_and_saving_it(records_root: Path) -> None:
    async with make_app(records_root).run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("w")
        await settle(pilot)
        screen = pilot.app.screen
        assert isinstance(screen, WhatIfScreen)
        await pilot.press("b")  # the judge first
        await settle(pilot)
        assert screen.view is not None and screen.view.proposed_priority[0] == "judge"
        expected = Workspace(records_root).replay(priority=screen.view.proposed_priority)
        shown = {row.path: row.mean_then for row in screen.view.rows}
        assert shown == {row.path: row.mean for row in expected.rows if row.path in shown}
        await pilot.press("ctrl+s")
        await settle(pilot)
        await pilot.press("y")
        await settle(pilot)
    config = load_config(records_root / "state/lesson-thompson/config.toml")
    assert config.reward_priority[0] == "judge"
    assert Workspace(records_root).session("s1").base_reward == 0.3  # the judge's, in force now


def test_a_missing_records_file_is_named_relative_to_the_workspace(tmp_path: Path) -> None:
    """The demo without its records file: the record panel (shown for a session with a trajectory or more
    than one reward source) said "no session records at /tmp/…/state/sessions/session-records.jsonl",
    three lines at 80 columns."""
    from lesson_credit.tui.records_views import outside_view
    from lesson_credit.tui.source import WorkspaceSource
    from tests.tui.test_tui_trust import demo_copy

    root = demo_copy(tmp_path / "demo")
    (root / "state" / "sessions" / "session-records.jsonl").unlink()
    outside = outside_view(WorkspaceSource(Workspace(root, clock=fixed_clock)), "2026-09-01-000")
    assert outside.record_note == "no session records at state/sessions/session-records.jsonl"


@pytest.mark.parametrize("session_id", ["s3", "s4"])
async def test_the_panels_trajectory_line_says_none_once(records_root: Path, session_id: str) -> None:
    """A session whose trajectory is not found: its line read "trajectory no trajectory: the record names none
    ..." (the row's name, then the reason's own "no trajectory")."""
    async with make_app(records_root).run_test(size=SIZE) as pilot:
        detail = await open_session(pilot, session_id)
        line = next(line for line in panel_text(detail).splitlines() if line.startswith("trajectory"))
        assert line.startswith("trajectory none: the record names none"), line
