"""The Sessions screen's column filter and the reward series, checked against the per-object code they replace."""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tui_fixture import build_many_sessions_workspace, fixed_clock

from core.views import SessionSummary, SessionTable
from core.workspace import Workspace
from tui.series import RewardSeries, grouped, integer_ticks, reward_series, rolling_mean
from tui.session_search import FIELD_SEP, ROW_SEP, SessionSearch
from tui.source import WorkspaceSource

# ---------------------------------------------------------------------------- the reference implementations


def old_session_matches(session: SessionSummary, needle: str, pending_only: bool) -> bool:
    """tui.screens.sessions.session_matches as it was when the screen filtered SessionSummary objects."""
    if pending_only and not session.pending:
        return False
    if not needle:
        return True
    needle = needle.lower()
    fields = (session.session_id, session.category or "", session.grader or "", session.timestamp or "")
    return any(needle in field.lower() for field in fields)


def old_reward_series(rewards: Sequence[float | None]) -> RewardSeries:
    """tui.series.reward_series as it was: a Python loop over one reward per session (None while pending)."""
    graded = [(i + 1, r) for i, r in enumerate(rewards) if r is not None]
    xs, ys, size = old_grouped([x for x, _ in graded], [y for _, y in graded])
    ticks = integer_ticks(graded[-1][0]) if graded else []
    return RewardSeries(tuple(xs), tuple(ys), tuple(old_rolling_mean(ys)), size, tuple(ticks))


def old_grouped(xs: list[int], ys: list[float], most: int = 600) -> tuple[list[float], list[float], int]:
    size = max(1, -(-len(xs) // most))
    if size == 1:
        return [float(x) for x in xs], ys, 1
    n = len(xs) // size * size
    gx = np.asarray(xs[:n], dtype=np.float64).reshape(-1, size).mean(axis=1).tolist()
    gy = np.asarray(ys[:n], dtype=np.float64).reshape(-1, size).mean(axis=1).tolist()
    if n < len(xs):
        gx.append(float(np.mean(xs[n:])))
        gy.append(float(np.mean(ys[n:])))
    return gx, gy, size


def old_rolling_mean(values: list[float], window: int = 10) -> list[float]:
    if not values:
        return []
    sums = np.cumsum(np.asarray(values, dtype=np.float64))
    lagged = np.concatenate([np.zeros(window), sums[:-window]]) if len(sums) > window else np.zeros(len(sums))
    counts = np.minimum(np.arange(1, len(sums) + 1), window)
    means: list[float] = ((sums - lagged[: len(sums)]) / counts).tolist()
    return means


# ---------------------------------------------------------------------------- reward series


def same_series(new: RewardSeries, old: RewardSeries) -> None:
    assert new.group == old.group and new.ticks == old.ticks
    for name in ("xs", "ys", "smooth"):
        got, want = getattr(new, name), getattr(old, name)
        assert len(got) == len(want), name
        assert all(type(v) is float for v in got), name
        assert got == want, name  # exactly: the same numpy reductions on the same numbers


@pytest.mark.parametrize("seed", range(12))
def test_reward_series_from_the_base_array_is_the_old_series(seed: int) -> None:
    rng = np.random.default_rng(seed)
    # lengths around the grouping thresholds (600 graded points: one group each up to there)
    for n in (0, 1, 2, 9, 10, 11, 599, 600, 601, 1199, 1200, 1201, int(rng.integers(0, 5000)), 20_011):
        share = rng.choice([0.0, 0.05, 0.5, 0.95, 1.0])
        rewards = rng.random(n).round(int(rng.integers(1, 6)))
        pending = rng.random(n) < share
        with_none: list[float | None] = [None if p else float(r) for r, p in zip(rewards, pending, strict=True)]
        # pending as NaN (a SessionTable's base), as None, and both mixed in one list
        base = np.where(pending, np.nan, rewards)
        mixed: list[float | None] = [
            (math.nan if i % 2 else None) if p else float(r)
            for i, (r, p) in enumerate(zip(rewards, pending, strict=True))
        ]
        want = old_reward_series(with_none)
        same_series(reward_series(base), want)
        same_series(reward_series(with_none), want)
        same_series(reward_series(mixed), want)


def test_grouped_and_rolling_mean_take_arrays_and_lists_alike() -> None:
    xs = list(range(1, 1302))
    ys = [((i * 7) % 13) / 13 for i in range(1301)]
    assert grouped(np.asarray(xs), np.asarray(ys)) == old_grouped(xs, ys)
    assert grouped(xs, ys) == old_grouped(xs, ys)
    assert rolling_mean(np.asarray(ys)) == old_rolling_mean(ys)
    assert grouped([1, 2], [0.25, 0.5]) == ([1.0, 2.0], [0.25, 0.5], 1)


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
    assert view.rewards == old_reward_series([s.base_reward for s in summaries])
