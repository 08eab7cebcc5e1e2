"""The Sessions screen's column filter (checked against a plain per-session filter) and the reward series
(checked by hand)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import Literal

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lesson_credit.core.views import SessionSummary, SessionTable
from lesson_credit.core.workspace import Workspace
from lesson_credit.tui.series import RewardSeries, grouped, reward_series, rolling_mean
from lesson_credit.tui.session_search import FIELD_SEP, ROW_SEP, SessionSearch
from lesson_credit.tui.source import WorkspaceSource
from tests.tui.tui_fixture import build_many_sessions_workspace, fixed_clock

# ---------------------------------------------------------------------------- the reference filter


def old_session_matches(session: SessionSummary, needle: str, pending_only: bool) -> bool:
    """lesson_credit.tui.screens.sessions.session_matches as it was when the screen filtered SessionSummary objects."""
    if pending_only and not session.pending:
        return False
    if not needle:
        return True
    needle = needle.lower()
    fields = (session.session_id, session.category or "", session.grader or "", session.timestamp or "")
    return any(needle in field.lower() for field in fields)


# ---------------------------------------------------------------------------- reward series


def close(got: Sequence[float], want: Sequence[float]) -> None:
    assert len(got) == len(want)
    assert all(type(v) is float for v in got)
    assert list(got) == pytest.approx(list(want), abs=1e-12)


def test_rolling_mean_by_hand() -> None:
    # window 2: 0.5; (0.5 + 0.25) / 2 = 0.375; (0.25 + 1) / 2 = 0.625; (1 + 0) / 2 = 0.5; (0 + 0.75) / 2 = 0.375
    close(rolling_mean([0.5, 0.25, 1.0, 0.0, 0.75], window=2), [0.5, 0.375, 0.625, 0.5, 0.375])
    # window 3 over 1..5: 1/1, 3/2, 6/3, (2+3+4)/3, (3+4+5)/3
    close(rolling_mean(np.array([1.0, 2.0, 3.0, 4.0, 5.0]), window=3), [1.0, 1.5, 2.0, 3.0, 4.0])
    # the default window of 10: ten ones, then zeros: 9/10, 8/10
    close(rolling_mean([1.0] * 10 + [0.0, 0.0]), [1.0] * 10 + [0.9, 0.8])
    # fewer values than the window: the mean of all so far, (0.2 + 0.4) / 2 = 0.3
    close(rolling_mean([0.2, 0.4]), [0.2, 0.3])
    assert rolling_mean([]) == [] and rolling_mean(np.array([])) == []


def test_grouped_by_hand() -> None:
    xs, ys = [1, 2, 3, 4, 5], [0.1, 0.2, 0.3, 0.4, 0.5]
    # at most 5 points: as they are, x as floats, groups of 1
    assert grouped(xs, ys, most=5) == ([1.0, 2.0, 3.0, 4.0, 5.0], ys, 1)
    # at most 2: groups of ceil(5 / 2) = 3: x (1+2+3)/3 = 2, y (0.1+0.2+0.3)/3 = 0.2; the last group is
    # shorter: x (4+5)/2 = 4.5, y (0.4+0.5)/2 = 0.45
    gx, gy, size = grouped(np.array(xs), np.array(ys), most=2)
    assert size == 3
    close(gx, [2.0, 4.5])
    close(gy, [0.2, 0.45])
    # six points, at most 3: pairs, x 1.5 3.5 5.5, y (0+1)/2 (0.5+0.5)/2 (1+0)/2
    gx, gy, size = grouped([1, 2, 3, 4, 5, 6], [0.0, 1.0, 0.5, 0.5, 1.0, 0.0], most=3)
    assert size == 2
    close(gx, [1.5, 3.5, 5.5])
    close(gy, [0.5, 0.5, 0.5])
    assert grouped([], [], most=3) == ([], [], 1)


def test_reward_series_by_hand() -> None:
    # sessions 1..5, 2 and 4 pending (None or NaN): points at 1, 3, 5; smooth 0.5, (0.5+1)/2, (0.5+1+0)/3;
    # ticks: 5 sessions, at most 6 labels -> every session
    for rewards in ([0.5, None, 1.0, None, 0.0], np.array([0.5, math.nan, 1.0, math.nan, 0.0])):
        series = reward_series(rewards)
        close(series.xs, [1.0, 3.0, 5.0])
        close(series.ys, [0.5, 1.0, 0.0])
        close(series.smooth, [0.5, 0.75, 0.5])
        assert (series.group, series.ticks) == (1, (1, 2, 3, 4, 5))
    # a last pending session does not count for the ticks: the last graded one is session 2
    assert reward_series([0.5, 0.5, None]).ticks == (1, 2)
    assert reward_series([]) == reward_series([None, None]) == RewardSeries((), (), (), 1, ())


def test_reward_series_groups_past_six_hundred_points_by_hand() -> None:
    # 1201 graded sessions rewarded 0, 1, 0, 1, ...: groups of ceil(1201 / 600) = 3, so 400 full groups and
    # session 1201 alone. Group j holds sessions 3j+1..3j+3: x = 3j+2; rewards 0,1,0 (j even) -> 1/3 or
    # 1,0,1 (j odd) -> 2/3; the last point is session 1201 (reward 0).
    series = reward_series([float(i % 2) for i in range(1201)])
    assert series.group == 3 and len(series.xs) == 401
    close(series.xs, [3.0 * j + 2 for j in range(400)] + [1201.0])
    close(series.ys, [(1 + j % 2) / 3 for j in range(400)] + [0.0])
    # smooth: 1/3; (1/3 + 2/3)/2 = 1/2; (1/3 + 2/3 + 1/3)/3 = 4/9; once ten points are in, five of each
    # -> 1/2; the last: points 391..399 (five of 2/3 at odd j, four of 1/3) and 0 -> (10/3 + 4/3) / 10 = 7/15
    assert series.smooth[:3] == pytest.approx([1 / 3, 1 / 2, 4 / 9], abs=1e-12)
    assert series.smooth[9:400] == pytest.approx([0.5] * 391, abs=1e-12)
    assert series.smooth[400] == pytest.approx(7 / 15, abs=1e-12)
    # ticks: 1201 sessions, at most 6 labels: a step of ceil(1200 / 5) = 240
    assert series.ticks == (1, 241, 481, 721, 961, 1201)


def windowed_means(values: list[float], window: int) -> list[float]:
    """The rolling mean by its definition: each value and up to window-1 before it, summed and divided."""
    return [sum(values[max(0, i - window + 1) : i + 1]) / (i + 1 - max(0, i - window + 1)) for i in range(len(values))]


@pytest.mark.parametrize("seed", range(4))
def test_reward_series_reads_pending_as_none_or_nan_and_smooths_by_the_definition(seed: int) -> None:
    rng = np.random.default_rng(seed)
    # lengths around the grouping threshold (600 graded points: one per session up to there)
    for n in (0, 1, 9, 10, 11, 599, 600, 601, int(rng.integers(0, 2000))):
        share = rng.choice([0.0, 0.05, 0.5, 1.0])
        rewards = rng.random(n).round(int(rng.integers(1, 6)))
        pending = rng.random(n) < share
        with_none: list[float | None] = [None if p else float(r) for r, p in zip(rewards, pending, strict=True)]
        # pending as NaN (a SessionTable's base), as None, and both mixed in one list
        base = np.where(pending, np.nan, rewards)
        mixed: list[float | None] = [
            (math.nan if i % 2 else None) if p else float(r)
            for i, (r, p) in enumerate(zip(rewards, pending, strict=True))
        ]
        series = reward_series(base)
        assert reward_series(with_none) == series == reward_series(mixed)
        graded = [(i + 1, r) for i, r in enumerate(with_none) if r is not None]
        if len(graded) <= 600:
            assert series.group == 1
            assert series.xs == tuple(float(x) for x, _ in graded) and series.ys == tuple(r for _, r in graded)
        close(series.smooth, windowed_means(list(series.ys), 10))


# ---------------------------------------------------------------------------- the column filter


def make_table(rows: list[tuple[str, str | None, str | None, str | None, float | None]]) -> SessionTable:
    """(id, category, grader, timestamp, base or None for pending) per session, in log order."""
    n = len(rows)
    return SessionTable(
        session_ids=[r[0] for r in rows],
        timestamps=[r[3] for r in rows],
        categories=[r[1] for r in rows],
        base=np.array([math.nan if r[4] is None else r[4] for r in rows], dtype=np.float64),
        graders=[r[2] for r in rows],
        n_lessons=np.ones(n, dtype=np.int64),
        mean_salience=np.zeros(n, dtype=np.float64),
        journal_paths=[None] * n,
        lines=np.arange(1, n + 1, dtype=np.int64),
        recorded_categories=[r[1] for r in rows],
    )


def reference(table: SessionTable, needle: str, pending_only: bool, limit: int) -> tuple[list[int], int]:
    """What the screen showed before: filter every SessionSummary newest first, keep the first `limit`."""
    summaries = [table.summary(row) for row in range(len(table))]
    matching = [row for row in reversed(range(len(table))) if old_session_matches(summaries[row], needle, pending_only)]
    return matching[:limit], len(matching)


def check(search: SessionSearch, table: SessionTable, needle: str, limit: int) -> None:
    for pending_only in (False, True):
        found = search.find(needle, pending_only, limit)
        rows, count = reference(table, needle, pending_only, limit)
        assert (found.rows.tolist(), found.count) == (rows, count), (needle, pending_only, limit)


# letters whose lower case is special (final sigma, dotted I, sharp s), the separators, controls
ALPHABET = list("aAbBsS-:0 σΣςİiIẞß\u0307\t\n") + [FIELD_SEP, ROW_SEP]
field_text = st.text(alphabet=st.sampled_from(ALPHABET), max_size=6)
session_row = st.tuples(
    field_text,
    st.none() | field_text,
    st.none() | field_text,
    st.none() | field_text,
    st.none() | st.floats(0, 1),
)


@settings(max_examples=300, deadline=None)
@given(
    rows=st.lists(session_row, max_size=25),
    needles=st.lists(field_text, min_size=1, max_size=4),
    limit=st.integers(0, 6),
    chunk=st.integers(1, 8),
)
def test_column_filter_finds_what_the_per_session_filter_found(
    rows: list[tuple[str, str | None, str | None, str | None, float | None]],
    needles: list[str],
    limit: int,
    chunk: int,
) -> None:
    table = make_table(rows)
    search = SessionSearch.build(table, chunk=chunk)  # a small chunk: the text is joined from several
    # needles typed, and pieces of the fields themselves (substrings, other case)
    pieces = [field[1:4] for row in rows for field in row[:4] if isinstance(field, str)]
    for needle in [*needles, *pieces[:6], *(p.upper() for p in pieces[:3]), ""]:
        check(search, table, needle, limit)


def test_column_filter_on_a_plain_log_uses_the_text_and_stops_at_the_limit() -> None:
    rows: list[tuple[str, str | None, str | None, str | None, float | None]] = [
        (f"S{i:04d}", ("code", "ops", None)[i % 3], None if i % 4 == 1 else "heuristic", f"2025-01-{i % 28 + 1:02d}",
         None if i % 4 == 1 else 0.5)
        for i in range(2000)
    ]  # fmt: skip
    table = make_table(rows)
    search = SessionSearch.build(table, chunk=300)
    assert search.every is not None and search.pending is not None  # no separators in the fields
    assert search.pending_rows.tolist() == [i for i in range(2000) if i % 4 == 1]
    for needle in ("", "s00", "S0007", "OPS", "heuristic", "2025-01-0", "none", "s1999", "s0000"):
        for limit in (0, 1, 10, 1000, 5000):
            check(search, table, needle, limit)


def test_a_field_holding_the_row_separator_is_searched_row_by_row() -> None:
    table = make_table([("a\x01b", None, None, None, None), ("ab", "x", None, None, 0.5)])
    search = SessionSearch.build(table)
    assert search.every is None
    check(search, table, "b", 5)
    check(search, table, "\x01", 5)


def test_an_empty_log() -> None:
    table = make_table([])
    search = SessionSearch.build(table)
    for needle in ("", "x"):
        for pending_only in (False, True):
            found = search.find(needle, pending_only, 10)
            assert found.rows.tolist() == [] and found.count == 0


# ---------------------------------------------------------------------------- the view


def test_sessions_view_holds_the_columns_and_reads_like_the_summaries(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    expected = build_many_sessions_workspace(root, n=1300)
    workspace = Workspace(root, clock=fixed_clock)
    view = WorkspaceSource(workspace).sessions_view()
    assert len(view.table) == 1300
    assert view.table.session_ids[-1] == expected[-1].session_id
    assert view.pending == sum(1 for e in expected if e.base is None)
    # `sessions`: SessionSummary objects built on demand, equal to the engine's own list
    summaries = Workspace(root, clock=fixed_clock).sessions()
    assert len(view.sessions) == 1300
    assert view.sessions[0] == summaries[0] and view.sessions[-1] == summaries[-1]
    assert list(view.sessions[5:9]) == summaries[5:9]
    assert list(reversed(view.sessions))[:3] == summaries[::-1][:3]
    with pytest.raises(IndexError):
        view.sessions[1300]
    assert view.rewards == reward_series([s.base_reward for s in summaries])  # the base column's series: the same


@pytest.mark.parametrize("library_form", ["NFC", "NFD"])
def test_the_lesson_filter_finds_a_lesson_typed_in_either_unicode_form(
    tmp_path: Path, library_form: Literal["NFC", "NFD"]
) -> None:
    """`lesson:café` typed on a keyboard (é one code point) finds the sessions of `tools/café.md` whose library
    spells it with `e` and a combining accent (a Mac's checkout), and the other way round: the arm is shown in
    the library's spelling, and a plain substring test matched neither way."""
    import unicodedata

    from tests.support.engine_helpers import make_workspace

    cafe = unicodedata.normalize(library_form, "tools/café.md")

    def session(sid: str, lesson: str) -> dict[str, object]:
        return {"type": "session", "session_id": sid, "base_reward": 0.5, "lessons": [{"path": lesson, "salience": 1}]}

    events = [session("s1", cafe), session("s2", "tools/git.md"), session("s3", cafe)]
    root = make_workspace(tmp_path, {cafe: (["coffee"], "active"), "tools/git.md": (["git"], "active")}, events)
    view = WorkspaceSource(Workspace(root)).sessions_view()
    forms: tuple[Literal["NFC", "NFD"], ...] = ("NFC", "NFD")
    for typed_form in forms:
        for needle in ("café", "CAFÉ.md"):
            found = view.with_lesson(unicodedata.normalize(typed_form, needle), False, 10)
            rows = [view.table.session_ids[int(row)] for row in found.rows]
            assert rows == ["s3", "s1"], (typed_form, needle)  # newest first
