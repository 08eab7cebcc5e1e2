"""The pieces `n` stands on, against plain reference walks: a Sessions list's order read once (`ListOrder`,
`next_in_list`), the queue's next pending session in log order (`SourceSnapshot.next_pending`), and a session
id's row found without scanning every id (`IdRows`, behind `FirstItems.index` and `in`)."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lesson_credit.tui.next_pending import ListOrder, next_in_list, start_position
from lesson_credit.tui.session_ids import FirstItems, GrowingIds, IdRows
from lesson_credit.tui.source_views import Problems, SourceSnapshot


def walk_reference(
    listed: Sequence[int], pending: set[int], touched: set[int], start: int, after_row: int | None, now: set[int]
) -> int | None:
    """The list's positions from `start` round to just before it; the first whose row was pending when read or
    touched since, is not `after_row` and is pending now (`now`)."""
    size = len(listed)
    for step in range(size):
        row = listed[(start + step) % size]
        if (row in pending or row in touched) and row != after_row and row in now:
            return row
    return None


@st.composite
def lists(draw: st.DrawFn) -> tuple[int, list[int], set[int], set[int], set[int], int | None, bool]:
    n_rows = draw(st.integers(1, 40))
    listed = draw(st.permutations(range(n_rows)))[: draw(st.integers(0, n_rows))]
    rows = st.sets(st.integers(0, n_rows - 1))
    reference = draw(st.none() | st.integers(0, n_rows - 1))
    return n_rows, listed, draw(rows), draw(rows), draw(rows), reference, draw(st.booleans())


@given(lists())
@settings(max_examples=300, deadline=None)
def test_next_in_list_is_the_first_pending_round_the_list(
    case: tuple[int, list[int], set[int], set[int], set[int], int | None, bool],
) -> None:
    n_rows, listed, pending, touched, now, reference, after = case
    order = ListOrder.of(np.asarray(listed, dtype=np.int64), np.asarray(sorted(pending), dtype=np.int64), n_rows)
    start = start_position(order, reference, after)
    # where the walk starts, by hand: the reference's position (+1 past the open session), the top if not listed
    expected_start = listed.index(reference) + int(after) if reference in listed else 0
    assert start == expected_start
    after_row = reference if after else None
    found = next_in_list(order, start, after_row, now.__contains__, sorted(touched))
    if listed:
        assert found == walk_reference(listed, pending, touched, start % len(listed), after_row, now)
    else:
        assert found is None


def test_next_in_list_worked_example() -> None:
    """Rows listed 5 3 0 4 1 (row 2 filtered out); pending when read 0, 2, 4; row 1 graded here and undone
    (touched, pending now), row 4 graded elsewhere since (not pending now). From just after row 3 (position 2):
    position 2 is row 0: pending, the answer; after row 0 (position 3): row 4 is no longer pending, row 1 is."""
    order = ListOrder.of(np.array([5, 3, 0, 4, 1]), np.array([0, 2, 4]), 6)
    assert order.pending.tolist() == [2, 3]  # rows 0 and 4; row 2 is not listed
    now = {0, 1, 2}
    assert next_in_list(order, 2, 3, now.__contains__, [1]) == 0
    assert next_in_list(order, 3, 0, now.__contains__, [1]) == 1
    assert next_in_list(order, 3, 0, now.__contains__, []) is None  # 4 graded, 0 is the open one
    assert next_in_list(ListOrder.of(np.array([], dtype=np.int64), np.array([0]), 3), 0, None, now.__contains__) is None


@given(
    st.lists(st.sampled_from(["a", "b", "c", "d", "e", "f"]), max_size=6, unique=True),
    st.sets(st.integers(0, 11)),
    st.none() | st.sampled_from(["a", "b", "c", "zz"]),
    st.dictionaries(st.sampled_from(["a", "b", "c", "d"]), st.none() | st.just(0.5)),
)
@settings(max_examples=300, deadline=None)
def test_the_queues_next_pending_in_log_order(
    ids: list[str], graded: set[int], after: str | None, queued: dict[str, float | None]
) -> None:
    """Against a walk of the log from just after `after`'s first row, round to it: the grade a session will
    have (a queued write's for the sessions in `queued`, else the snapshot's) None means pending."""
    base = np.array([0.5 if row in graded else math.nan for row in range(len(ids))], dtype=np.float64)
    snapshot = SourceSnapshot(version=1, log_version=1, session_ids=ids, base=base, problems=Problems((), ()))

    def expected(session_id: str, value: float | None) -> float | None:
        return queued[session_id] if session_id in queued else value

    start = ids.index(after) + 1 if after in ids else 0
    walk = [ids[(start + step) % len(ids)] for step in range(len(ids))]
    pending = [sid for sid in walk if expected(sid, snapshot.grade_of(sid)) is None and sid != after]
    assert snapshot.next_pending(after, expected, set(queued)) == (pending[0] if pending else None)


class Colliding(str):
    """An id whose hash is everyone's: the lookup must compare the ids, not trust the hash."""

    def __hash__(self) -> int:
        return 7


@given(st.lists(st.lists(st.text("abc", max_size=3), max_size=700), max_size=6), st.text("abcd", max_size=3))
@settings(max_examples=60, deadline=None)
def test_id_rows_find_what_list_index_finds(growths: list[list[str]], probe: str) -> None:
    """Ids appended in growths (small ones go to the tail dict, big ones re-sort: up to 4,200 ids, past the
    1,024 below which everything stays in the tail): each lookup answers as `list.index` does (the first row),
    within the first `n` a FirstItems shows."""
    items: list[str] = []
    rows = IdRows(items)
    for growth in growths:
        items.extend(growth)
        view = FirstItems(items, len(items), rows)
        for value in {*growth[:20], probe}:
            want = items.index(value) if value in items else None
            assert rows.row_of(value) == want
            assert (value in view) == (want is not None)
        if items:
            shorter = FirstItems(items, len(items) // 2, rows)
            first = items[-1]
            in_shorter = first in items[: len(items) // 2]
            assert (first in shorter) == in_shorter
            if in_shorter:
                assert shorter.index(first) == items.index(first)
            else:
                with pytest.raises(ValueError):
                    shorter.index(first)


def test_id_rows_compare_ids_when_hashes_collide() -> None:
    items: list[str] = [*(Colliding(f"s{i}") for i in range(3000)), Colliding("s5")]
    rows = IdRows(items)
    assert rows.row_of(Colliding("s2999")) == 2999
    assert rows.row_of(Colliding("s5")) == 5  # the first of two rows
    assert rows.row_of(Colliding("nope")) is None


def test_growing_ids_start_again_when_the_log_is_read_anew() -> None:
    """A new generation's rows are other sessions: a lookup must not answer with the old list's rows."""
    ids = GrowingIds()
    first = ids.first(3, 1, lambda lo, hi: ["a", "b", "c"][lo:hi])
    assert first.index("c") == 2
    again = ids.first(2, 2, lambda lo, hi: ["c", "a"][lo:hi])
    assert again.index("c") == 0 and "b" not in again
    assert first.index("c") == 2  # a snapshot taken before keeps its own ids
